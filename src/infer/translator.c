/* translator: workers, batches and the length order around the search (translator.h).
 *
 * A run sorts its non-empty sentences by length, cuts them into batches of nearly equal sizes (as
 * many as the threads or a multiple of them), sizes every worker's buffers once for the run's
 * largest batch, and lets the workers take batches in turn, the longest first; each batch's results
 * go straight to their input positions.
 */
#include "infer/translator.h"

#include "infer/incremental.h"
#include "infer/order.h"
#include "compute/pool.h"
#include "text/vocab.h"
#include "base/util.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one thread needs to decode a batch: its own search and decoder state, and the batch's
 * padded source matrix [B, longest + 1] with its lengths (sized per run). */
typedef struct translate_worker {
    nmt_search *search;
    nmt_incremental *decoder;
    int32_t *matrix;
    int *tokens, *pieces; /* [B] source tokens (pieces + eos) and pieces of each sentence */
    uint64_t *keys;       /* [B] their sampling keys, from the run's (one per input sentence) */
    const nmt_decode_guide **guides; /* [B] their guides, from the run's (NULL: none) */
    nmt_translation *batch_out; /* [B] */
} translate_worker;

struct nmt_translator {
    const nmt_model *model;
    nmt_decode_options options;
    nmt_incremental_weights *weights; /* packed once, shared by the workers' decoders */
    int workers;               /* one per pool thread */
    translate_worker *worker;  /* [workers] */
};

static void worker_free(translate_worker *w) {
    nmt_search_free(w->search);
    nmt_incremental_free(w->decoder);
    free(w->matrix);
    free(w->tokens);
    free(w->pieces);
    free(w->keys);
    free(w->guides);
    free(w->batch_out);
}

/* nmt_translator_create; with release, the model's matrices are given back as they are packed. */
static int create(nmt_translator **out, const nmt_model *model, const nmt_decode_options *options, nmt_model *release,
                  size_t *released) {
    *out = NULL;
    if (nmt_decode_options_check(options) < 0) return -1;
    nmt_translator *t = nmt_calloc(1, sizeof *t);
    if (!t) return -1;
    t->model = model;
    t->options = *options;
    const int workers = nmt_pool_threads(), B = options->batch_size;
    t->worker = nmt_calloc((size_t)workers, sizeof *t->worker);
    if (!t->worker || (release ? nmt_incremental_weights_create_releasing(&t->weights, release, options->precision, released)
                               : nmt_incremental_weights_create(&t->weights, model, options->precision)) < 0)
        goto fail;
    nmt_incremental_weights_set_shortlist(t->weights, options->shortlist);
    t->workers = workers;
    for (int i = 0; i < workers; i++) {
        translate_worker *w = &t->worker[i];
        w->tokens = nmt_malloc((size_t)B * sizeof(int));
        w->pieces = nmt_malloc((size_t)B * sizeof(int));
        w->keys = nmt_malloc((size_t)B * sizeof(uint64_t));
        w->batch_out = nmt_malloc((size_t)B * sizeof *w->batch_out);
        w->guides = nmt_malloc((size_t)B * sizeof *w->guides);
        if (!w->tokens || !w->pieces || !w->keys || !w->batch_out || !w->guides || nmt_search_create(&w->search, options) < 0 ||
            nmt_incremental_create_shared(&w->decoder, t->weights) < 0)
            goto fail;
    }
    *out = t;
    return 0;
fail:
    nmt_translator_free(t);
    return -1;
}

int nmt_translator_create(nmt_translator **out, const nmt_model *model, const nmt_decode_options *options) {
    return create(out, model, options, NULL, NULL);
}

int nmt_translator_create_releasing(nmt_translator **out, nmt_model *model, const nmt_decode_options *options,
                                    size_t *released) {
    *released = 0;
    return create(out, model, options, model, released);
}

void nmt_translator_free(nmt_translator *t) {
    if (!t) return;
    for (int i = 0; i < t->workers; i++) worker_free(&t->worker[i]);
    free(t->worker);
    nmt_incremental_weights_free(t->weights);
    free(t);
}

int nmt_translator_set_search(nmt_translator *t, const nmt_decode_options *options) {
    nmt_decode_options o = *options;
    o.precision = t->options.precision;
    o.shortlist = t->options.shortlist;
    o.batch_size = t->options.batch_size;
    if (nmt_decode_options_check(&o) < 0) return -1;
    nmt_search **fresh = nmt_calloc((size_t)t->workers, sizeof *fresh);
    int made = 0;
    if (!fresh) return -1;
    while (made < t->workers && nmt_search_create(&fresh[made], &o) == 0) made++;
    if (made < t->workers) { /* all or nothing: the translator keeps its searches */
        for (int i = 0; i < made; i++) nmt_search_free(fresh[i]);
        free(fresh);
        return -1;
    }
    for (int i = 0; i < t->workers; i++) {
        nmt_search_free(t->worker[i].search);
        t->worker[i].search = fresh[i];
    }
    free(fresh);
    t->options = o;
    return 0;
}

static int empty_translation(nmt_translation *out) {
    out->hyps = nmt_calloc(1, sizeof(nmt_hypothesis));
    if (!out->hyps) return -1;
    out->hyps[0].tokens = nmt_malloc(sizeof(int32_t));
    if (!out->hyps[0].tokens) {
        free(out->hyps);
        out->hyps = NULL;
        return -1;
    }
    out->count = 1;
    return 0;
}

/* The target pieces a guide forces (its prefix and every phrase): a hypothesis holds at least these. */
static int guide_pieces(const nmt_decode_guide *g) {
    if (!g) return 0;
    long n = g->prefix_length > 0 ? g->prefix_length : 0;
    for (int c = 0; c < g->constraint_count && g->constraints; c++)
        if (g->constraints[c].length > 0) n += g->constraints[c].length;
    return n > INT_MAX - 1 ? INT_MAX - 1 : (int)n;
}

/* Decoder positions a batch needs whose longest source has `pieces` pieces and whose most guided
 * sentence forces `guided` pieces (the search refuses a guide longer than the positions allow). */
static int batch_steps(const nmt_translator *t, int pieces, int guided) {
    const nmt_model_config *c = &t->model->config;
    int steps = nmt_decode_max_length(&t->options, pieces);
    steps = (guided > steps ? guided : steps) + 1;
    return c->positions == NMT_POSITIONS_LEARNED && steps > c->max_positions ? c->max_positions : steps;
}

/* Decodes the sentences order[0 .. n) (sorted by length, all non-empty) as one batch on worker w. */
static int translate_batch(const nmt_translator *t, translate_worker *w, const nmt_order_entry *order, int n,
                           const int32_t *const *src, const uint64_t *keys, const nmt_decode_guide *const *guides,
                           nmt_translation *out) {
    const int S = order[n - 1].length + 1, K = t->options.greedy ? 1 : t->options.beam_size;
    int guided = 0;
    for (int b = 0; b < n; b++) {
        w->guides[b] = guides ? guides[order[b].index] : NULL;
        if (guide_pieces(w->guides[b]) > guided) guided = guide_pieces(w->guides[b]);
    }
    const int steps = batch_steps(t, order[n - 1].length, guided);
    for (int b = 0; b < n; b++) {
        const int len = order[b].length;
        int32_t *row = w->matrix + (size_t)b * (size_t)S;
        const int eos = t->model->config.source_eos;
        nmt_vocab_row(eos ? NMT_ROW_SOURCE : NMT_ROW_PIECES, src[order[b].index], len, row, S);
        w->tokens[b] = len + eos;
        w->pieces[b] = len;
        w->keys[b] = keys[order[b].index];
    }
    if (nmt_incremental_start(w->decoder, w->matrix, w->tokens, n, S, n * K, steps) < 0) return -1;
    nmt_decode_step step = nmt_incremental_decode_step(w->decoder);
    if (nmt_search_run_guided(w->search, &step, n, w->pieces, w->keys, guides ? w->guides : NULL, S, w->batch_out) < 0)
        return -1;
    for (int b = 0; b < n; b++) out[order[b].index] = w->batch_out[b];
    return 0;
}

/* The batches of one run, taken in turn by the workers, the longest sentences first (the batches that
 * take longest are not left to the end, when the other threads would wait). Each batch is decoded on a
 * single thread (the pool's nested calls run inline), so its result does not depend on which worker
 * took it. */
typedef struct translate_run {
    const nmt_translator *t;
    const nmt_order_entry *order;
    int sentences, batches; /* cut into runs of consecutive sentences whose sizes differ by one at most */
    const int32_t *const *src;
    const uint64_t *keys; /* [sentences]: each one's sampling key */
    const nmt_decode_guide *const *guides; /* [sentences] or NULL */
    nmt_translation *out;
    atomic_int next_batch;
    atomic_int failed;
    char error[1024]; /* the first failure's message, from the worker's thread */
} translate_run;

static void translate_worker_task(void *ctx, long begin, long end) {
    translate_run *run = ctx;
    const int q = run->sentences / run->batches, r = run->sentences % run->batches;
    for (long i = begin; i < end; i++) {
        translate_worker *w = &run->t->worker[i];
        for (int taken; !atomic_load(&run->failed) && (taken = atomic_fetch_add(&run->next_batch, 1)) < run->batches;) {
            const int b = run->batches - 1 - taken; /* order is sorted by length: the last batch, the longest */
            const int first = b * q + (b < r ? b : r), n = q + (b < r);
            if (translate_batch(run->t, w, run->order + first, n, run->src, run->keys, run->guides, run->out) < 0 &&
                atomic_exchange(&run->failed, 1) == 0)
                snprintf(run->error, sizeof run->error, "%s", nmt_error());
        }
    }
}

int nmt_translator_run(nmt_translator *t, int count, const int32_t *const *src, const int *src_len,
                       nmt_translation *out) {
    return nmt_translator_run_from(t, 0, count, src, src_len, out);
}

/* nmt_translator_run_from with each sentence's sampling key given. */
static int run_sentences(nmt_translator *t, const uint64_t *keys, int count, const int32_t *const *src,
                         const int *src_len, const nmt_decode_guide *const *guides, nmt_translation *out) {
    memset(out, 0, (size_t)(count > 0 ? count : 0) * sizeof *out);
    if (count <= 0) return 0;
    int B = t->options.batch_size, n = 0, longest = 0, guided = 0, rc = -1;
    nmt_order_entry *order = nmt_malloc((size_t)count * sizeof *order);
    if (!order) return -1;
    for (int i = 0; i < count; i++) {
        if (src_len[i] < 0) {
            nmt_error_set("sentence %d: negative length %d", i, src_len[i]);
            goto done;
        }
        if (src_len[i] == 0) {
            if (empty_translation(&out[i]) < 0) goto done;
            continue;
        }
        order[n++] = (nmt_order_entry){src_len[i], i};
        if (src_len[i] > longest) longest = src_len[i];
        if (guides && guide_pieces(guides[i]) > guided) guided = guide_pieces(guides[i]);
    }
    if (n == 0) { /* every sentence empty */
        rc = 0;
        goto done;
    }
    nmt_order_sort(order, n);
    const int tokens = t->options.batch_tokens;
    if (tokens > 0 && tokens / (longest + 1) < B) B = tokens / (longest + 1) > 1 ? tokens / (longest + 1) : 1;
    /* Several batches: one per thread at a time, each on one core, which keeps every product
     * whole and the search's serial work off the other threads' path. One batch: all threads on it.
     * Several are made as many as the threads or a multiple of them, of nearly equal sizes (100
     * lines in batches of at most 32 on 2 threads: 4 of 25, not 32, 32, 32 and 4, where one thread
     * would finish a batch of 32 alone). A translation does not depend on its batch (except with a
     * shortlist), so only the time changes. */
    int batches = (n + B - 1) / B;
    if (batches > 1) batches = (batches + t->workers - 1) / t->workers * t->workers;
    if (batches > n) batches = n;
    translate_run run = {.t = t, .order = order, .sentences = n, .batches = batches, .src = src, .keys = keys,
                         .guides = guides, .out = out};
    const int workers = run.batches < t->workers ? run.batches : t->workers;
    /* Every buffer at the size of the run's largest batch at once, not grown batch by batch. */
    const int largest = (n + batches - 1) / batches, K = t->options.greedy ? 1 : t->options.beam_size;
    for (int i = 0; i < workers; i++) {
        free(t->worker[i].matrix);
        t->worker[i].matrix = nmt_malloc((size_t)largest * ((size_t)longest + 1) * sizeof(int32_t));
        if (!t->worker[i].matrix ||
            nmt_incremental_reserve(t->worker[i].decoder, largest, longest + 1, largest * K,
                                    batch_steps(t, longest, guided)) < 0)
            goto done;
    }
    if (workers > 1) nmt_pool_for(workers, 1, translate_worker_task, &run);
    else translate_worker_task(&run, 0, 1);
    if (atomic_load(&run.failed)) {
        nmt_error_set("%s", run.error);
        goto done;
    }
    rc = 0;
done:
    if (rc < 0)
        for (int i = 0; i < count; i++) nmt_translation_free(&out[i]);
    free(order);
    return rc;
}

/* Sample j of line n is drawn with key n + j * 2^40: sample 0 is the line's only sample when one is
 * asked for, and lines below 2^40 never share a key. */
#define SAMPLE_KEY(line, j) ((line) + ((uint64_t)(j) << 40))

/* Hypotheses from the best score down (the n-best order); equal ones keep the sample order. */
static void sort_by_score(nmt_hypothesis *h, int n) {
    for (int i = 1; i < n; i++) {
        const nmt_hypothesis x = h[i];
        int j = i;
        for (; j > 0 && h[j - 1].score < x.score; j--) h[j] = h[j - 1];
        h[j] = x;
    }
}

/* S samples of each sentence: each sentence repeated S times, run as sentences of their own, and
 * gathered into one translation of S hypotheses (one for an empty sentence), best score first. */
static int run_samples(nmt_translator *t, uint64_t first_key, int count, const int32_t *const *src,
                       const int *src_len, const nmt_decode_guide *const *guides, int S, nmt_translation *out) {
    memset(out, 0, (size_t)count * sizeof *out);
    if ((size_t)count * (size_t)S > INT_MAX) return nmt_error_set("%d lines of %d samples each: too many at once", count, S);
    const int total = count * S;
    const int32_t **all_src = nmt_malloc((size_t)total * sizeof *all_src);
    int *all_len = nmt_malloc((size_t)total * sizeof *all_len);
    uint64_t *keys = nmt_malloc((size_t)total * sizeof *keys);
    nmt_translation *all = nmt_calloc((size_t)total, sizeof *all);
    const nmt_decode_guide **all_guides = guides ? nmt_malloc((size_t)total * sizeof *all_guides) : NULL;
    int rc = -1;
    if (!all_src || !all_len || !keys || !all || (guides && !all_guides)) goto done;
    for (int i = 0; i < count; i++)
        for (int j = 0; j < S; j++) {
            all_src[(size_t)i * S + j] = src[i];
            all_len[(size_t)i * S + j] = src_len[i];
            keys[(size_t)i * S + j] = SAMPLE_KEY(first_key + (uint64_t)i, j);
            if (guides) all_guides[(size_t)i * S + j] = guides[i];
        }
    if (run_sentences(t, keys, total, all_src, all_len, all_guides, all) < 0) goto done;
    for (int i = 0; i < count; i++) {
        const int n = src_len[i] > 0 ? S : 1;
        if (!(out[i].hyps = nmt_calloc((size_t)n, sizeof *out[i].hyps))) goto done;
        for (int j = 0; j < n; j++) { /* each sample's one hypothesis moves into the line's list */
            nmt_translation *one = &all[(size_t)i * S + j];
            out[i].hyps[out[i].count++] = one->hyps[0];
            one->hyps[0] = (nmt_hypothesis){0};
        }
        sort_by_score(out[i].hyps, n);
    }
    rc = 0;
done:
    for (int i = 0; all && i < total; i++) nmt_translation_free(&all[i]);
    if (rc < 0)
        for (int i = 0; i < count; i++) nmt_translation_free(&out[i]);
    free(all_src);
    free(all_len);
    free(keys);
    free(all);
    free(all_guides);
    return rc;
}

int nmt_translator_run_from(nmt_translator *t, uint64_t first_key, int count, const int32_t *const *src,
                            const int *src_len, nmt_translation *out) {
    return nmt_translator_run_guided(t, first_key, count, src, src_len, NULL, out);
}

int nmt_translator_run_guided(nmt_translator *t, uint64_t first_key, int count, const int32_t *const *src,
                              const int *src_len, const nmt_decode_guide *const *guides, nmt_translation *out) {
    const int samples = t->options.sampling.enabled ? t->options.n_best : 1;
    if (samples > 1) return run_samples(t, first_key, count > 0 ? count : 0, src, src_len, guides, samples, out);
    if (count <= 0) return run_sentences(t, NULL, count, src, src_len, guides, out);
    uint64_t *keys = nmt_malloc((size_t)count * sizeof *keys);
    if (!keys) return -1;
    for (int i = 0; i < count; i++) keys[i] = SAMPLE_KEY(first_key + (uint64_t)i, 0);
    const int rc = run_sentences(t, keys, count, src, src_len, guides, out);
    free(keys);
    return rc;
}

int nmt_decode_sentences(const nmt_model *model, const nmt_decode_options *options, int count,
                         const int32_t *const *src, const int *src_len, nmt_translation *out) {
    nmt_translator *t;
    if (nmt_translator_create(&t, model, options) < 0) return -1;
    int rc = nmt_translator_run(t, count, src, src_len, out);
    nmt_translator_free(t);
    return rc;
}
