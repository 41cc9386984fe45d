/* batcher: one queue of lines from every request, decoded in shared batches by one thread; see
 * batcher.h for the policy. */
#include "serve/batcher.h"

#include "base/util.h"
#include "serve/inline_tags.h"
#include "serve/segment.h"
#include "viz/plot.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct nmt_serve_job {
    nmt_serve_batcher *b;
    int count;               /* lines */
    char **lines;            /* [count] copies */
    nmt_serve_text *out;     /* [count] results */
    int want_map;
    int hypotheses;          /* wanted of each line (nmt_serve_controls) */
    char **glossary;         /* [2 * glossary_size] copies, or NULL: the job is decoded alone */
    int glossary_size;
    nmt_strbuf *streamed;    /* [count] each line's pieces decided so far, each ending in a NUL, or NULL */
    char *streamed_final;    /* [count] 1: the line's text is complete */
    char *map;               /* SVG of line 0, or NULL */
    size_t bytes;            /* of the lines' text */
    int next;                /* the next line to put in a batch */
    int done;                /* lines translated (or failed) */
    int refs;                /* the request + each batch holding lines of it */
    int cancelled;
    int failed;
    char error[512];
    double submitted, started, finished; /* nmt_now() */
    pthread_cond_t cond;     /* signalled when done reaches count */
    nmt_serve_job *prev, *next_job; /* in the queue while lines wait */
};

struct nmt_serve_batcher {
    nmt_engine *engine;
    nmt_serve_batcher_options options;
    pthread_mutex_t lock;
    pthread_cond_t work;     /* a job arrived, or stop */
    nmt_serve_job *head, *tail; /* jobs with lines waiting, oldest first */
    long queued;             /* lines waiting */
    size_t queued_bytes;     /* bytes of their text */
    int stopping;
    pthread_t thread;
    /* The batch being assembled and decoded (only the batcher thread touches these). */
    nmt_serve_job **batch_job; /* [max_batch] */
    int *batch_line;           /* [max_batch] */
    const char **batch_text;   /* [max_batch] */
    nmt_serve_job *alone;      /* the job of a batch of its own (a glossary, a stream), or NULL */
    int call_first;            /* the batch slot of the engine call's line 0 (for the stream) */
    int shared_last;           /* the last batch was shared: a job with a glossary goes next */
    double free_since;         /* when the last batch ended (nmt_now) */
    long batches, lines, largest;
};

static void unlink_job(nmt_serve_batcher *b, nmt_serve_job *j) {
    if (j->prev) j->prev->next_job = j->next_job;
    else b->head = j->next_job;
    if (j->next_job) j->next_job->prev = j->prev;
    else b->tail = j->prev;
    j->prev = j->next_job = NULL;
}

static void job_free(nmt_serve_job *j) {
    for (int i = 0; i < j->count; i++) {
        free(j->lines[i]);
        if (j->out) nmt_serve_text_free(&j->out[i]);
    }
    free(j->lines);
    free(j->out);
    free(j->map);
    for (int i = 0; i < 2 * j->glossary_size; i++) free(j->glossary[i]);
    free(j->glossary);
    for (int i = 0; j->streamed && i < j->count; i++) nmt_strbuf_free(&j->streamed[i]);
    free(j->streamed);
    free(j->streamed_final);
    pthread_cond_destroy(&j->cond);
    free(j);
}

/* Drops a reference (the lock held). */
static void unref_locked(nmt_serve_job *j) {
    if (--j->refs == 0) job_free(j);
}

/* Copies line i of result r into the job's line `line`. */
static int copy_line(nmt_serve_job *j, int line, const nmt_result *r, int i) {
    nmt_serve_text *t = &j->out[line];
    const int n = nmt_result_hypotheses(r, i);
    t->hyps = nmt_calloc((size_t)n, sizeof *t->hyps);
    if (!t->hyps) return -1;
    t->count = n;
    for (int k = 0; k < n; k++) {
        t->hyps[k].text = nmt_strdup(nmt_result_hypothesis(r, i, k));
        if (!t->hyps[k].text) return -1;
        t->hyps[k].score = nmt_result_score(r, i, k);
        t->hyps[k].logprob = nmt_result_logprob(r, i, k);
    }
    if (nmt_engine_get_options(j->b->engine)->alignment) { /* an empty list for an empty translation */
        const int *pairs;
        const int p = nmt_result_alignment(r, i, 0, &pairs);
        t->pairs = nmt_malloc((size_t)(2 * p + 1) * sizeof(int));
        if (!t->pairs) return -1;
        if (p) memcpy(t->pairs, pairs, 2 * (size_t)p * sizeof(int));
        t->pair_count = p;
    }
    const char *const *sp = nmt_result_source_pieces(r, i, &t->source_pieces);
    const char *const *tp = nmt_result_target_pieces(r, i, 0, &t->target_pieces);
    if (t->pairs) { /* the words of the pieces, for HTML's inline tags to follow the alignment */
        t->source_word = nmt_malloc(((size_t)t->source_pieces + 1) * sizeof(int));
        t->target_word = nmt_malloc(((size_t)t->target_pieces + 1) * sizeof(int));
        if (!t->source_word || !t->target_word) return -1;
        nmt_serve_inline_piece_words(sp, t->source_pieces, t->source_word);
        nmt_serve_inline_piece_words(tp, t->target_pieces, t->target_word);
    }
    return 0;
}

/* The attention heat map of line i of r, as `nmt translate --alignment-map` draws it. */
static int draw_map(nmt_serve_job *j, const nmt_result *r, int i) {
    const float *attention = nmt_result_attention(r, i, 0);
    int src_n, tgt_n;
    const char *const *src = nmt_result_source_pieces(r, i, &src_n);
    const char *const *tgt = nmt_result_target_pieces(r, i, 0, &tgt_n);
    if (!attention || src_n == 0) return 0;
    static const char eos[] = "</s>";
    const char **s = nmt_malloc(((size_t)src_n + 1) * sizeof *s), **t = nmt_malloc(((size_t)tgt_n + 1) * sizeof *t);
    nmt_strbuf picture = {0}, title = {0};
    int rc = -1;
    if (!s || !t) goto done;
    memcpy(s, src, (size_t)src_n * sizeof *s);
    if (tgt_n) memcpy(t, tgt, (size_t)tgt_n * sizeof *t);
    s[src_n] = t[tgt_n] = eos;
    nmt_strbuf_printf(&title, "%.120s", j->lines[0]);
    if (title.failed) {
        nmt_error_set("out of memory drawing an attention map");
        goto done;
    }
    if (nmt_plot_alignment_svg(&picture, title.data, s, src_n + 1, t, tgt_n + 1, attention) < 0) goto done;
    j->map = picture.data;
    picture.data = NULL;
    rc = 0;
done:
    free(s);
    free(t);
    nmt_strbuf_free(&picture);
    nmt_strbuf_free(&title);
    return rc;
}

/* Marks line `line` of j failed with the current error (the lock held). */
static void fail_line(nmt_serve_job *j, int line) {
    if (j->failed) return;
    j->failed = 1;
    const char *message = nmt_error();
    /* The engine numbers the lines of its call ("line 1: ...", "line:1: ..."): the job's number instead. */
    if (strncmp(message, "line 1: ", 8) == 0 || strncmp(message, "line:1: ", 8) == 0) message += 8;
    snprintf(j->error, sizeof j->error, "line %d: %s", line + 1, message);
}

/* Hands batch slot `slot` its result (line i of r), or counts it done when r is NULL (the line has
 * failed); the lock held. */
static void deliver(nmt_serve_batcher *b, int slot, const nmt_result *r, int i) {
    nmt_serve_job *j = b->batch_job[slot];
    const int line = b->batch_line[slot];
    if (r && !j->cancelled && (copy_line(j, line, r, i) < 0 || (j->want_map && line == 0 && draw_map(j, r, i) < 0)))
        fail_line(j, line);
    if (++j->done == j->count) {
        j->finished = nmt_now();
        pthread_cond_broadcast(&j->cond);
    }
}

/* Puts line j->next of job j in batch slot n (the lock held). */
static void take_line(nmt_serve_batcher *b, nmt_serve_job *j, int n, double now) {
    if (j->next == 0) j->started = now;
    b->batch_job[n] = j;
    b->batch_line[n] = j->next;
    b->batch_text[n] = j->lines[j->next];
    b->queued_bytes -= strlen(j->lines[j->next]);
    j->refs++;
    if (++j->next == j->count) unlink_job(b, j);
}

/* A job decoded in batches of its own: a glossary and a stream apply to a whole engine call. */
static int is_alone(const nmt_serve_job *j) { return j->glossary || j->streamed; }

/* Takes up to max_batch lines (the lock held): round-robin from the waiting jobs decoded together,
 * or, every other batch when both kinds wait, lines of the oldest job decoded alone. */
static int take_batch(nmt_serve_batcher *b, double now) {
    nmt_serve_job *alone = NULL;
    int shared = 0;
    for (nmt_serve_job *j = b->head; j && !(alone && shared); j = j->next_job)
        if (!is_alone(j)) shared = 1;
        else if (!alone) alone = j;
    int n = 0;
    b->alone = alone && (b->shared_last || !shared) ? alone : NULL;
    b->shared_last = !b->alone;
    if (b->alone)
        while (n < b->options.max_batch && alone->next < alone->count) take_line(b, alone, n++, now);
    else
        for (int taken = 1; taken && n < b->options.max_batch;) {
            taken = 0;
            for (nmt_serve_job *j = b->head, *next; j && n < b->options.max_batch; j = next) {
                next = j->next_job;
                if (is_alone(j)) continue;
                take_line(b, j, n++, now);
                taken = 1;
            }
        }
    b->queued -= n;
    return n;
}

/* The engine's stream callback: the text decided for a line of a streamed job, kept for its reader.
 * A line already complete takes nothing more (its lines are retried alone after a failed call, and
 * the same search decides the same text again). */
static void stream_piece(void *user, int line, const char *text, int final) {
    nmt_serve_batcher *b = user;
    const int slot = b->call_first + line;
    nmt_serve_job *j = b->batch_job[slot];
    const int l = b->batch_line[slot];
    pthread_mutex_lock(&b->lock);
    if (!j->streamed_final[l]) {
        if (nmt_strbuf_append(&j->streamed[l], text, strlen(text) + 1) < 0) fail_line(j, l);
        j->streamed_final[l] = (char)final;
        pthread_cond_broadcast(&j->cond);
    }
    pthread_mutex_unlock(&b->lock);
}

/* One engine call on n lines of the batch from `first`: with the glossary or the stream of a batch of
 * its own, and one hypothesis a line where every job of the lines wants no more. */
static int translate(nmt_serve_batcher *b, int first, int n, nmt_result **out) {
    nmt_engine_options one_best = *nmt_engine_get_options(b->engine);
    int several = 0;
    for (int i = first; i < first + n; i++) several |= b->batch_job[i]->hypotheses > 1;
    const int fewer = !several && one_best.n_best > 1;
    if (!b->alone && !fewer) return nmt_engine_translate(b->engine, n, &b->batch_text[first], out);
    nmt_translate_options call = nmt_translate_options_default();
    one_best.n_best = 1;
    if (fewer) call.options = &one_best;
    if (!b->alone) return nmt_engine_translate_with(b->engine, n, &b->batch_text[first], &call, out);
    call.glossary = (const char *const *)b->alone->glossary;
    call.glossary_size = b->alone->glossary_size;
    if (b->alone->streamed) {
        call.stream = stream_piece;
        call.stream_user = b;
        b->call_first = first;
        pthread_mutex_lock(&b->lock); /* a line cut short by a failed call starts again */
        for (int i = first; i < first + n; i++)
            if (!b->alone->streamed_final[b->batch_line[i]]) b->alone->streamed[b->batch_line[i]].len = 0;
        pthread_mutex_unlock(&b->lock);
    }
    return nmt_engine_translate_with(b->engine, n, &b->batch_text[first], &call, out);
}

/* Decodes the batch (lock not held), then delivers every line. */
static void decode_batch(nmt_serve_batcher *b, int n) {
    nmt_result *r = NULL;
    nmt_result **alone = NULL;
    if (translate(b, 0, n, &r) < 0) { /* find the lines at fault: each alone */
        const int ok = (alone = nmt_calloc((size_t)n, sizeof *alone)) != NULL;
        for (int i = 0; i < n; i++)
            if (!ok || translate(b, i, 1, &alone[i]) < 0) {
                pthread_mutex_lock(&b->lock);
                fail_line(b->batch_job[i], b->batch_line[i]);
                pthread_mutex_unlock(&b->lock);
            }
    }
    pthread_mutex_lock(&b->lock);
    for (int i = 0; i < n; i++) deliver(b, i, r ? r : alone ? alone[i] : NULL, r ? i : 0);
    for (int i = 0; i < n; i++) unref_locked(b->batch_job[i]);
    b->batches++;
    b->lines += n;
    if (n > b->largest) b->largest = n;
    pthread_mutex_unlock(&b->lock);
    nmt_result_free(r);
    if (alone)
        for (int i = 0; i < n; i++) nmt_result_free(alone[i]);
    free(alone);
}

static void deadline_to_timespec(double seconds_from_now, struct timespec *ts) {
    clock_gettime(CLOCK_MONOTONIC, ts);
    double s = floor(seconds_from_now);
    ts->tv_sec += (time_t)s;
    ts->tv_nsec += (long)((seconds_from_now - s) * 1e9);
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static void *batcher_main(void *arg) {
    nmt_serve_batcher *b = arg;
    pthread_mutex_lock(&b->lock);
    for (;;) {
        if (!b->head) {
            if (b->stopping) break;
            pthread_cond_wait(&b->work, &b->lock);
            continue;
        }
        /* Lines that waited for the engine wait wait_ms more once it is free: the clients whose lines
         * the last batch answered send their next ones then, and join them rather than making the
         * next batch on their own (clients in step would otherwise split into batches that never
         * merge, each as long as its longest line). */
        const double since = b->head->submitted > b->free_since ? b->head->submitted : b->free_since;
        const double now = nmt_now(), ready = since + b->options.wait_ms / 1000.0;
        if (b->queued < b->options.max_batch && now < ready && !b->stopping) {
            struct timespec ts;
            deadline_to_timespec(ready - now, &ts);
            pthread_cond_timedwait(&b->work, &b->lock, &ts);
            continue;
        }
        const int n = take_batch(b, now);
        pthread_mutex_unlock(&b->lock);
        decode_batch(b, n);
        pthread_mutex_lock(&b->lock);
        b->free_since = nmt_now();
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

/* A condition variable on the monotonic clock (deadlines are nmt_now() seconds). */
static int cond_init(pthread_cond_t *cond) {
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0) return nmt_error_set("cannot create a condition variable");
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    const int rc = pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
    return rc == 0 ? 0 : nmt_error_set("cannot create a condition variable");
}

int nmt_serve_batcher_create(nmt_serve_batcher **out, nmt_engine *engine, const nmt_serve_batcher_options *options) {
    *out = NULL;
    if (options->max_batch < 1) return nmt_error_set("max_batch must be at least 1, got %d", options->max_batch);
    if (!(options->wait_ms >= 0)) return nmt_error_set("batch wait must be >= 0 ms");
    nmt_serve_batcher *b = nmt_calloc(1, sizeof *b);
    if (!b) return -1;
    b->engine = engine;
    b->options = *options;
    const size_t n = (size_t)options->max_batch;
    b->batch_job = nmt_malloc(n * sizeof *b->batch_job);
    b->batch_line = nmt_malloc(n * sizeof *b->batch_line);
    b->batch_text = nmt_malloc(n * sizeof *b->batch_text);
    int mutex = -1, cond = -1;
    if (!b->batch_job || !b->batch_line || !b->batch_text || (mutex = pthread_mutex_init(&b->lock, NULL)) != 0 ||
        (cond = cond_init(&b->work)) != 0 || pthread_create(&b->thread, NULL, batcher_main, b) != 0) {
        if (mutex == 0 && cond == 0) nmt_error_set("cannot start the batching thread");
        else if (mutex > 0) nmt_error_set("cannot create a mutex");
        if (cond == 0) pthread_cond_destroy(&b->work);
        if (mutex == 0) pthread_mutex_destroy(&b->lock);
        free(b->batch_job);
        free(b->batch_line);
        free(b->batch_text);
        free(b);
        return -1;
    }
    *out = b;
    return 0;
}

void nmt_serve_batcher_free(nmt_serve_batcher *b) {
    if (!b) return;
    pthread_mutex_lock(&b->lock);
    b->stopping = 1;
    pthread_cond_signal(&b->work);
    pthread_mutex_unlock(&b->lock);
    pthread_join(b->thread, NULL);
    pthread_cond_destroy(&b->work);
    pthread_mutex_destroy(&b->lock);
    free(b->batch_job);
    free(b->batch_line);
    free(b->batch_text);
    free(b);
}

int nmt_serve_batcher_submit(nmt_serve_batcher *b, int count, const char *const *lines, int want_map,
                             nmt_serve_job **out) {
    return nmt_serve_batcher_submit_with(b, count, lines, want_map, NULL, out);
}

/* Copies the glossary's terms into the job and makes room for its stream. */
static int set_controls(nmt_serve_job *j, const nmt_serve_controls *controls) {
    if (!controls) {
        j->hypotheses = INT_MAX; /* all the engine finds */
        return 0;
    }
    j->hypotheses = controls->hypotheses;
    if (controls->stream && (!(j->streamed = nmt_calloc(j->count ? (size_t)j->count : 1, sizeof *j->streamed)) ||
                             !(j->streamed_final = nmt_calloc(j->count ? (size_t)j->count : 1, 1))))
        return -1;
    const char *const *terms = controls->glossary;
    const int size = controls->glossary_size;
    if (size <= 0) return 0;
    if (!(j->glossary = nmt_calloc(2 * (size_t)size, sizeof *j->glossary))) return -1;
    j->glossary_size = size;
    for (int i = 0; i < 2 * size; i++)
        if (!(j->glossary[i] = nmt_strdup(terms[i]))) return -1;
    return 0;
}

int nmt_serve_batcher_submit_with(nmt_serve_batcher *b, int count, const char *const *lines, int want_map,
                                  const nmt_serve_controls *controls, nmt_serve_job **out) {
    *out = NULL;
    if (count < 0) return nmt_error_set("negative line count %d", count);
    nmt_serve_job *j = nmt_calloc(1, sizeof *j);
    if (!j) return -1;
    j->b = b;
    j->count = count;
    j->want_map = want_map;
    j->refs = 1;
    j->lines = nmt_calloc(count ? (size_t)count : 1, sizeof *j->lines);
    j->out = nmt_calloc(count ? (size_t)count : 1, sizeof *j->out);
    if (!j->lines || !j->out || cond_init(&j->cond) < 0) {
        free(j->lines);
        free(j->out);
        free(j);
        return -1;
    }
    const long max_lines = b->options.max_queue;
    const size_t max_bytes = b->options.max_queue_bytes;
    for (int i = 0; i < count; i++) j->bytes += strlen(lines[i]);
    if ((max_lines > 0 && count > max_lines) || (max_bytes > 0 && j->bytes > max_bytes)) {
        const size_t bytes = j->bytes;
        job_free(j);
        if (max_lines > 0 && count > max_lines)
            nmt_error_set("%d lines, more than the queue holds (%ld)", count, max_lines);
        else nmt_error_set("%zu bytes of text, more than the queue holds (%zu)", bytes, max_bytes);
        return NMT_SERVE_JOB_TOO_LARGE;
    }
    for (int i = 0; i < count; i++)
        if (!(j->lines[i] = nmt_strdup(lines[i]))) {
            job_free(j);
            return -1;
        }
    if (set_controls(j, controls) < 0) {
        job_free(j);
        return -1;
    }
    pthread_mutex_lock(&b->lock);
    const int no_lines = max_lines > 0 && b->queued + count > max_lines;
    if (b->stopping || no_lines || (max_bytes > 0 && b->queued_bytes + j->bytes > max_bytes)) {
        const long queued = b->queued;
        const size_t queued_bytes = b->queued_bytes;
        pthread_mutex_unlock(&b->lock);
        job_free(j);
        if (b->stopping) return nmt_error_set("the server is shutting down");
        if (no_lines) nmt_error_set("the queue is full (%ld lines wait, at most %ld): retry later", queued, max_lines);
        else nmt_error_set("the queue is full (%zu bytes of text wait, at most %zu): retry later", queued_bytes, max_bytes);
        return NMT_SERVE_QUEUE_FULL;
    }
    j->submitted = j->started = j->finished = nmt_now();
    if (count > 0) {
        j->prev = b->tail;
        if (b->tail) b->tail->next_job = j;
        else b->head = j;
        b->tail = j;
        b->queued += count;
        b->queued_bytes += j->bytes;
        pthread_cond_signal(&b->work);
    }
    pthread_mutex_unlock(&b->lock);
    *out = j;
    return 0;
}

int nmt_serve_job_wait(nmt_serve_job *j, double deadline) {
    nmt_serve_batcher *b = j->b;
    int rc = 0;
    pthread_mutex_lock(&b->lock);
    while (j->done < j->count) {
        if (deadline <= 0) {
            pthread_cond_wait(&j->cond, &b->lock);
            continue;
        }
        const double left = deadline - nmt_now();
        struct timespec ts;
        deadline_to_timespec(left > 0 ? left : 0, &ts);
        if (left <= 0 || pthread_cond_timedwait(&j->cond, &b->lock, &ts) == ETIMEDOUT) {
            if (j->done == j->count) break;
            rc = 1;
            break;
        }
    }
    if (rc == 0 && j->failed) rc = nmt_error_set("%s", j->error);
    pthread_mutex_unlock(&b->lock);
    return rc;
}

int nmt_serve_job_stream_next(nmt_serve_job *j, int line, size_t *have, double deadline, nmt_strbuf *out) {
    nmt_serve_batcher *b = j->b;
    const nmt_strbuf *pieces = &j->streamed[line];
    int rc;
    pthread_mutex_lock(&b->lock);
    for (;;) {
        if (j->failed) {
            rc = nmt_error_set("%s", j->error);
            break;
        }
        if (pieces->len > *have) {
            const char *piece = pieces->data + *have;
            const size_t n = strlen(piece);
            *have += n + 1;
            rc = nmt_strbuf_append(out, piece, n) < 0 ? -1 : j->streamed_final[line] && *have == pieces->len;
            break;
        }
        if (j->streamed_final[line]) {
            rc = 1;
            break;
        }
        const double left = deadline - nmt_now();
        if (left <= 0) {
            rc = 2;
            break;
        }
        struct timespec ts;
        deadline_to_timespec(left, &ts);
        pthread_cond_timedwait(&j->cond, &b->lock, &ts);
    }
    pthread_mutex_unlock(&b->lock);
    return rc;
}

void nmt_serve_job_cancel(nmt_serve_job *j) {
    nmt_serve_batcher *b = j->b;
    pthread_mutex_lock(&b->lock);
    j->cancelled = 1;
    if (j->next < j->count) { /* lines still waiting leave the queue */
        b->queued -= j->count - j->next;
        for (int i = j->next; i < j->count; i++) b->queued_bytes -= strlen(j->lines[i]);
        unlink_job(b, j);
        j->next = j->count;
    }
    pthread_mutex_unlock(&b->lock);
}

const nmt_serve_text *nmt_serve_job_lines(const nmt_serve_job *j) { return j->out; }
const char *nmt_serve_job_map(const nmt_serve_job *j) { return j->map; }
double nmt_serve_job_queue_ms(const nmt_serve_job *j) { return 1000.0 * (j->started - j->submitted); }
double nmt_serve_job_decode_ms(const nmt_serve_job *j) { return 1000.0 * (j->finished - j->started); }

void nmt_serve_job_release(nmt_serve_job *j) {
    if (!j) return;
    nmt_serve_batcher *b = j->b;
    pthread_mutex_lock(&b->lock);
    unref_locked(j);
    pthread_mutex_unlock(&b->lock);
}

void nmt_serve_batcher_stats_get(nmt_serve_batcher *b, nmt_serve_batcher_stats *out) {
    pthread_mutex_lock(&b->lock);
    out->queued = b->queued;
    out->queued_bytes = b->queued_bytes;
    out->batches = b->batches;
    out->lines = b->lines;
    out->largest = b->largest;
    pthread_mutex_unlock(&b->lock);
}
