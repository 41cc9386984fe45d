/* Tests of the server's batcher (src/serve/batcher.c): lines of concurrent jobs decoded together get
 * what the engine gives each line alone, batches really are shared, a long job does not hold a short
 * one behind it, a bad line fails only its own job, a cancelled job's lines leave the queue at once, a
 * full queue (in lines or in bytes of text) refuses, and jobs with a glossary or a stream, decoded in
 * batches of their own, get what nmt_engine_translate_with gives them while the others' stay as alone. */
#include "serve/batcher.h"

#include "compute/gemm.h"
#include "base/util.h"
#include "compute/packed.h"
#include "tiny_model.h"
#include "testing.h"

#include <math.h>
#include <pthread.h>
#include <unistd.h>

static const char *const words[] = {"the", "cat", "dog", "sees", "a", "big", "red", "house", "tree", "runs"};

/* Line i of the test: 1 to 8 words chosen by i. */
static void make_line(int i, char *out) {
    out[0] = '\0';
    for (int w = 0, n = 1 + (i * 7) % 8; w < n; w++) {
        if (w) strcat(out, " ");
        strcat(out, words[(i * 3 + w * 5) % 10]);
    }
}

static nmt_engine *open_engine(int max_input_length) {
    nmt_engine_options o = nmt_engine_options_default();
    o.threads = 1;
    o.n_best = 2;
    o.alignment = 1;
    o.max_batch = 8;
    o.max_input_length = max_input_length;
    nmt_engine *e;
    ck_assert_msg(nmt_engine_open(&e, nmt_test_tmpdir, &o) == 0, "%s", nmt_last_error());
    return e;
}

static nmt_serve_batcher *batcher_with(nmt_serve_batcher_options o, nmt_engine **e) {
    nmt_test_model_dir(nmt_test_tmpdir);
    *e = open_engine(0);
    nmt_serve_batcher *b;
    ck_assert_int_eq(nmt_serve_batcher_create(&b, *e, &o), 0);
    return b;
}

typedef struct client {
    nmt_serve_batcher *b;
    nmt_engine *e;
    int first, count, ok;
    char message[256];
} client;

/* Submits lines first..first+count in jobs of 1-3 lines and compares each with the engine alone. */
static void *client_main(void *arg) {
    client *c = arg;
    c->ok = 1;
    for (int at = c->first; at < c->first + c->count;) {
        char text[3][128];
        const char *lines[3];
        const int n = 1 + at % 3;
        for (int i = 0; i < n; i++) {
            make_line(at + i, text[i]);
            lines[i] = text[i];
        }
        nmt_serve_job *job;
        if (nmt_serve_batcher_submit(c->b, n, lines, 0, &job) < 0 || nmt_serve_job_wait(job, 0) != 0) {
            c->ok = 0;
            snprintf(c->message, sizeof c->message, "%s", nmt_error());
            return NULL;
        }
        nmt_result *alone;
        const double tolerance = nmt_packed_available(NMT_PRECISION_FP32) ? 0 : 1e-5;
        for (int i = 0; i < n; i++) {
            const nmt_serve_text *t = &nmt_serve_job_lines(job)[i];
            if (nmt_engine_translate(c->e, 1, &lines[i], &alone) < 0) c->ok = 0;
            else {
                if (t->count != nmt_result_hypotheses(alone, 0)) c->ok = 0;
                for (int k = 0; c->ok && k < t->count; k++)
                    if (strcmp(t->hyps[k].text, nmt_result_hypothesis(alone, 0, k)) != 0 ||
                        fabs(t->hyps[k].score - nmt_result_score(alone, 0, k)) > tolerance * fabs(t->hyps[k].score)) {
                        c->ok = 0;
                        snprintf(c->message, sizeof c->message, "line '%s' hypothesis %d: '%s' %.17g, alone '%s' %.17g",
                                 lines[i], k, t->hyps[k].text, t->hyps[k].score, nmt_result_hypothesis(alone, 0, k),
                                 nmt_result_score(alone, 0, k));
                    }
                const int *pairs;
                const int p = nmt_result_alignment(alone, 0, 0, &pairs);
                if (t->pair_count != p || (p && memcmp(t->pairs, pairs, 2 * (size_t)p * sizeof(int)) != 0)) c->ok = 0;
                nmt_result_free(alone);
            }
        }
        nmt_serve_job_release(job);
        at += n;
    }
    return NULL;
}

START_TEST(test_concurrent_jobs) {
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_engine *e = open_engine(0);
    nmt_serve_batcher *b;
    /* A wait long enough that, even on a loaded machine, other clients' lines arrive while a batch
     * fills (each client submits its next job only after checking the last one line by line). */
    const nmt_serve_batcher_options o = {.max_batch = 8, .wait_ms = 100};
    ck_assert_int_eq(nmt_serve_batcher_create(&b, e, &o), 0);
    enum { CLIENTS = 8, LINES = 24 };
    client c[CLIENTS];
    pthread_t thread[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        c[i] = (client){.b = b, .e = e, .first = i * LINES, .count = LINES};
        ck_assert_int_eq(pthread_create(&thread[i], NULL, client_main, &c[i]), 0);
    }
    for (int i = 0; i < CLIENTS; i++) {
        pthread_join(thread[i], NULL);
        ck_assert_msg(c[i].ok, "client %d: %s", i, c[i].message);
    }
    nmt_serve_batcher_stats st;
    nmt_serve_batcher_stats_get(b, &st);
    ck_assert_int_eq(st.lines, CLIENTS * LINES);
    ck_assert_int_eq(st.queued, 0);
    /* Lines of different clients shared batches: a job has at most 3 lines, and batches had more. */
    ck_assert_msg(st.largest > 3 && st.batches < CLIENTS * LINES, "%ld batches for %d lines, the largest of %ld",
                  st.batches, CLIENTS * LINES, st.largest);
    nmt_serve_batcher_free(b);
    nmt_engine_close(e);
}
END_TEST

/* A line that waited for the engine is joined by a line that arrives just after the batch before it
 * ends: the wait for company counts from the end of that batch. A first job of max_batch long lines
 * keeps the engine busy for longer than wait_ms; a line submitted meanwhile, and another submitted 5 ms
 * (a client's round trip) after the first job is answered, share one batch. Counted from the arrival
 * alone, the waiting line would go on its own the moment the engine is free. */
START_TEST(test_wait_counts_from_a_free_engine) {
    const nmt_serve_batcher_options o = {.max_batch = 8, .wait_ms = 60};
    nmt_engine *e;
    nmt_serve_batcher *b = batcher_with(o, &e);
    char text[8][6144], one[128];
    const char *lines[8];
    for (int i = 0; i < 8; i++) { /* 120 of the short lines joined: 0.2-0.4 s of decoding here */
        text[i][0] = '\0';
        for (int w = 0; w < 120; w++) {
            make_line(i + w, one);
            if (w) strcat(text[i], " ");
            strcat(text[i], one);
        }
        lines[i] = text[i];
    }
    nmt_serve_job *busy, *waiting, *after;
    const double start = nmt_now();
    ck_assert_int_eq(nmt_serve_batcher_submit(b, 8, lines, 0, &busy), 0);
    nmt_serve_batcher_stats st;
    do nmt_serve_batcher_stats_get(b, &st); /* the first batch taken: the engine is busy */
    while (st.queued > 0);
    make_line(1, one);
    const char *short_line[] = {one};
    ck_assert_int_eq(nmt_serve_batcher_submit(b, 1, short_line, 0, &waiting), 0);
    ck_assert_int_eq(nmt_serve_job_wait(busy, 0), 0);
    const double busy_s = nmt_now() - start;
    usleep(5000); /* the round trip of the client the first job answered */
    ck_assert_int_eq(nmt_serve_batcher_submit(b, 1, short_line, 0, &after), 0);
    ck_assert_int_eq(nmt_serve_job_wait(waiting, 0), 0);
    ck_assert_int_eq(nmt_serve_job_wait(after, 0), 0);
    nmt_serve_batcher_stats_get(b, &st);
    ck_assert_msg(st.batches == 2, "%ld batches (the first took %.0f ms against a wait of %.0f ms)", st.batches,
                  busy_s * 1000, o.wait_ms);
    nmt_serve_job_release(busy);
    nmt_serve_job_release(waiting);
    nmt_serve_job_release(after);
    nmt_serve_batcher_free(b);
    nmt_engine_close(e);
}
END_TEST

/* A long job submitted first does not hold a short one behind all of its lines. */
START_TEST(test_round_robin) {
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_engine *e = open_engine(0);
    nmt_serve_batcher *b;
    const nmt_serve_batcher_options o = {.max_batch = 4, .wait_ms = 50};
    ck_assert_int_eq(nmt_serve_batcher_create(&b, e, &o), 0);
    enum { LONG = 60 };
    char text[LONG][128];
    const char *lines[LONG];
    for (int i = 0; i < LONG; i++) {
        make_line(i, text[i]);
        lines[i] = text[i];
    }
    nmt_serve_job *long_job, *short_job;
    ck_assert_int_eq(nmt_serve_batcher_submit(b, LONG, lines, 0, &long_job), 0);
    ck_assert_int_eq(nmt_serve_batcher_submit(b, 1, lines, 1, &short_job), 0);
    ck_assert_int_eq(nmt_serve_job_wait(short_job, 0), 0);
    ck_assert_int_eq(nmt_serve_job_wait(long_job, 0), 0);
    const double short_ms = nmt_serve_job_queue_ms(short_job) + nmt_serve_job_decode_ms(short_job);
    const double long_ms = nmt_serve_job_queue_ms(long_job) + nmt_serve_job_decode_ms(long_job);
    ck_assert_msg(short_ms < long_ms, "the short job took %.3f ms, the long one %.3f ms", short_ms, long_ms);
    /* The map of the short job's line: an SVG document. */
    ck_assert_ptr_nonnull(nmt_serve_job_map(short_job));
    ck_assert_ptr_nonnull(strstr(nmt_serve_job_map(short_job), "<svg"));
    ck_assert_ptr_null(nmt_serve_job_map(long_job));
    nmt_serve_job_release(short_job);
    nmt_serve_job_release(long_job);
    nmt_serve_batcher_free(b);
    nmt_engine_close(e);
}
END_TEST

/* A job wanting the best translation alone, in batches of its own: one hypothesis a line, the
 * engine's best. Then a plain job, a glossary job and a streamed job queued together: the plain lines
 * as the engine gives them (its n_best of 2), the glossary's as nmt_engine_translate_with with it, the
 * streamed pieces joined as the result. */
START_TEST(test_controls) {
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_engine *e = open_engine(0);
    nmt_serve_batcher *b;
    const nmt_serve_batcher_options o = {.max_batch = 2, .wait_ms = 30};
    ck_assert_int_eq(nmt_serve_batcher_create(&b, e, &o), 0);
    const char *lines[] = {"the cat sees a dog", "big red house", "the tree runs"};
    const char *terms[] = {"cat", "baum"};
    const nmt_serve_controls glossary = {terms, 1, 0, 0}, stream = {NULL, 0, 1, 0}, one = {NULL, 0, 0, 1};
    nmt_serve_job *plain, *glossed, *streamed, *best;
    ck_assert_int_eq(nmt_serve_batcher_submit_with(b, 3, lines, 0, &one, &best), 0);
    ck_assert_int_eq(nmt_serve_job_wait(best, 0), 0);
    ck_assert_int_eq(nmt_serve_batcher_submit(b, 3, lines, 0, &plain), 0);
    ck_assert_int_eq(nmt_serve_batcher_submit_with(b, 3, lines, 0, &glossary, &glossed), 0);
    ck_assert_int_eq(nmt_serve_batcher_submit_with(b, 3, lines, 0, &stream, &streamed), 0);
    for (int i = 0; i < 3; i++) { /* each line's pieces, in order, until complete */
        nmt_strbuf joined = {0};
        size_t have = 0;
        int rc;
        while ((rc = nmt_serve_job_stream_next(streamed, i, &have, nmt_now() + 10, &joined)) == 0) continue;
        ck_assert_int_eq(rc, 1);
        ck_assert_int_eq(nmt_serve_job_wait(streamed, 0), 0);
        ck_assert_str_eq(joined.data ? joined.data : "", nmt_serve_job_lines(streamed)[i].hyps[0].text);
        nmt_strbuf_free(&joined);
    }
    ck_assert_int_eq(nmt_serve_job_wait(plain, 0), 0);
    ck_assert_int_eq(nmt_serve_job_wait(glossed, 0), 0);
    nmt_result *alone, *with;
    nmt_translate_options call = nmt_translate_options_default();
    call.glossary = terms;
    call.glossary_size = 1;
    ck_assert_int_eq(nmt_engine_translate(e, 3, lines, &alone), 0);
    ck_assert_int_eq(nmt_engine_translate_with(e, 3, lines, &call, &with), 0);
    ck_assert_ptr_nonnull(strstr(nmt_result_text(with, 0), "baum"));
    /* nmt's own products are row-invariant, so a line scores bit for bit as alone whatever shares its
     * batch; OpenBLAS's change with the batch's rows (NMT_GEMM=openblas), so only within rounding there. */
    const double tolerance = nmt_gemm_own() ? 0.0 : 1e-4;
    for (int i = 0; i < 3; i++) {
        ck_assert_str_eq(nmt_serve_job_lines(plain)[i].hyps[0].text, nmt_result_text(alone, i));
        ck_assert(fabs(nmt_serve_job_lines(plain)[i].hyps[0].score - nmt_result_score(alone, i, 0)) <= tolerance);
        ck_assert_int_eq(nmt_serve_job_lines(plain)[i].count, nmt_result_hypotheses(alone, i));
        ck_assert_int_eq(nmt_serve_job_lines(best)[i].count, 1);
        ck_assert_str_eq(nmt_serve_job_lines(best)[i].hyps[0].text, nmt_result_text(alone, i));
        ck_assert(fabs(nmt_serve_job_lines(best)[i].hyps[0].score - nmt_result_score(alone, i, 0)) <= tolerance);
        ck_assert_str_eq(nmt_serve_job_lines(glossed)[i].hyps[0].text, nmt_result_text(with, i));
        ck_assert_str_eq(nmt_serve_job_lines(streamed)[i].hyps[0].text, nmt_result_text(alone, i));
    }
    nmt_result_free(alone);
    nmt_result_free(with);
    nmt_serve_job_release(plain);
    nmt_serve_job_release(glossed);
    nmt_serve_job_release(streamed);
    nmt_serve_job_release(best);
    nmt_serve_batcher_free(b);
    nmt_engine_close(e);
}
END_TEST

/* A line the engine refuses (too long here) fails its own job only, with the job's line number. */
START_TEST(test_bad_line) {
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_engine *e = open_engine(8);
    nmt_serve_batcher *b;
    const nmt_serve_batcher_options o = {.max_batch = 8, .wait_ms = 30};
    ck_assert_int_eq(nmt_serve_batcher_create(&b, e, &o), 0);
    const char *bad[] = {"the", "the big red house and the tree and the dog"}, *good[] = {"a", ""};
    nmt_serve_job *j1, *j2, *j3;
    ck_assert_int_eq(nmt_serve_batcher_submit(b, 2, good, 0, &j1), 0);
    ck_assert_int_eq(nmt_serve_batcher_submit(b, 2, bad, 0, &j2), 0);
    ck_assert_int_eq(nmt_serve_batcher_submit(b, 0, good, 0, &j3), 0);
    ck_assert_int_eq(nmt_serve_job_wait(j2, 0), -1);
    ck_assert_msg(strncmp(nmt_error(), "line 2: ", 8) == 0 && strstr(nmt_error(), "more than the limit of 8"), "%s",
                  nmt_error());
    ck_assert_msg(nmt_serve_job_wait(j1, 0) == 0, "%s", nmt_error());
    ck_assert_int_eq(nmt_serve_job_wait(j3, 0), 0);
    ck_assert_str_eq(nmt_serve_job_lines(j1)[1].hyps[0].text, "");
    ck_assert_int_eq(nmt_serve_job_lines(j1)[1].pair_count, 0);
    ck_assert_ptr_nonnull(nmt_serve_job_lines(j1)[1].pairs); /* alignment on: an empty list */
    nmt_serve_job_release(j1);
    nmt_serve_job_release(j2);
    nmt_serve_job_release(j3);
    nmt_serve_batcher_free(b);
    nmt_engine_close(e);
}
END_TEST

/* A batcher over a new engine (the test's model) with options o. */
/* A deadline returns and the job goes on until cancelled; a full queue refuses. */
START_TEST(test_deadline_and_queue) {
    nmt_engine *e;
    nmt_serve_batcher *b = batcher_with((nmt_serve_batcher_options){.max_batch = 100, .wait_ms = 400, .max_queue = 5}, &e);
    const char *lines[] = {"the cat", "a dog", "big house"};
    nmt_serve_job *j1, *j2, *j3;
    ck_assert_int_eq(nmt_serve_batcher_submit(b, 3, lines, 0, &j1), 0);
    ck_assert_int_eq(nmt_serve_batcher_submit(b, 3, lines, 0, &j2), NMT_SERVE_QUEUE_FULL);
    ck_assert_ptr_null(j2);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "the queue is full (3 lines wait, at most 5)"));
    /* The batch waits 400 ms for more lines: a 20 ms deadline passes first, the lines still wait;
     * cancelling takes them out of the queue. */
    ck_assert_int_eq(nmt_serve_job_wait(j1, nmt_now() + 0.02), 1);
    nmt_serve_batcher_stats st;
    nmt_serve_batcher_stats_get(b, &st);
    ck_assert_int_eq(st.queued, 3);
    ck_assert_int_eq(st.queued_bytes, strlen("the cat") + strlen("a dog") + strlen("big house"));
    nmt_serve_job_cancel(j1);
    nmt_serve_batcher_stats_get(b, &st);
    ck_assert_int_eq(st.queued, 0);
    ck_assert_int_eq(st.queued_bytes, 0);
    ck_assert_int_eq(nmt_serve_batcher_submit(b, 6, (const char *[]){"a", "a", "a", "a", "a", "a"}, 0, &j2),
                     NMT_SERVE_JOB_TOO_LARGE);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "6 lines, more than the queue holds (5)"));
    nmt_serve_job_release(j1);
    /* The batcher goes on: the next job is decoded (after its own wait). */
    ck_assert_int_eq(nmt_serve_batcher_submit(b, 2, lines, 0, &j3), 0);
    ck_assert_int_eq(nmt_serve_job_wait(j3, 0), 0);
    ck_assert_int_gt(strlen(nmt_serve_job_lines(j3)[0].hyps[0].text), 0);
    nmt_serve_job_release(j3);
    nmt_serve_batcher_free(b);
    nmt_engine_close(e);
}
END_TEST

/* The queue bounded in bytes of text: a job past the room left waits its turn (503), a job larger than
 * the whole queue is refused for good; cancelled jobs (their clients gone) free their room at once. */
START_TEST(test_queue_bytes) {
    nmt_engine *e;
    nmt_serve_batcher *b =
        batcher_with((nmt_serve_batcher_options){.max_batch = 100, .wait_ms = 60000, .max_queue_bytes = 20}, &e);
    const char *lines[] = {"the cat sees", "a dog"}; /* 12 + 5 bytes */
    nmt_serve_job *j1, *j2, *j3;
    ck_assert_int_eq(nmt_serve_batcher_submit(b, 2, lines, 0, &j1), 0);
    ck_assert_int_eq(nmt_serve_batcher_submit(b, 1, lines, 0, &j2), NMT_SERVE_QUEUE_FULL);
    ck_assert_msg(strstr(nmt_error(), "the queue is full (17 bytes of text wait, at most 20)"), "%s", nmt_error());
    ck_assert_int_eq(nmt_serve_batcher_submit(b, 1, (const char *[]){"the big red house tree"}, 0, &j2),
                     NMT_SERVE_JOB_TOO_LARGE);
    ck_assert_msg(strstr(nmt_error(), "22 bytes of text, more than the queue holds (20)"), "%s", nmt_error());
    /* The client of j1 went away: cancelling makes room for the next request at once (the batch
     * would wait a minute). */
    nmt_serve_job_cancel(j1);
    nmt_serve_job_release(j1);
    ck_assert_int_eq(nmt_serve_batcher_submit(b, 1, lines, 0, &j2), 0);
    ck_assert_int_eq(nmt_serve_batcher_submit(b, 1, lines + 1, 0, &j3), 0);
    nmt_serve_batcher_stats st;
    nmt_serve_batcher_stats_get(b, &st);
    ck_assert_int_eq(st.queued, 2);
    ck_assert_int_eq(st.queued_bytes, 17);
    ck_assert_int_eq(st.lines, 0); /* nothing of j1 was decoded */
    nmt_serve_job_cancel(j2);
    nmt_serve_job_cancel(j3);
    nmt_serve_job_release(j2);
    nmt_serve_job_release(j3);
    nmt_serve_batcher_free(b);
    nmt_engine_close(e);
}
END_TEST

int main(void) {
    Suite *s = suite_create("batcher");
    TCase *tc = tcase_create("batcher");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, test_concurrent_jobs);
    tcase_add_test(tc, test_round_robin);
    tcase_add_test(tc, test_wait_counts_from_a_free_engine);
    tcase_add_test(tc, test_controls);
    tcase_add_test(tc, test_bad_line);
    tcase_add_test(tc, test_deadline_and_queue);
    tcase_add_test(tc, test_queue_bytes);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
