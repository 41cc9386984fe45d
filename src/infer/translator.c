/* translator: workers, batches and the length order around the search (translator.h).
 *
 * A run sorts its non-empty sentences by length, sizes every worker's buffers once for the run's
 * largest batch, and lets the workers take batches in turn; each batch's results go straight to
 * their input positions.
 */
#include "infer/translator.h"

#include "infer/incremental.h"
#include "infer/order.h"
#include "compute/pool.h"
#include "text/vocab.h"
#include "base/util.h"

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
    uint64_t *keys;       /* [B] their sampling keys: the first key of the run + the input index */
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
    free(w->batch_out);
}

int nmt_translator_create(nmt_translator **out, const nmt_model *model, const nmt_decode_options *options) {
    *out = NULL;
    if (nmt_decode_options_check(options) < 0) return -1;
    nmt_translator *t = nmt_calloc(1, sizeof *t);
    if (!t) return -1;
    t->model = model;
    t->options = *options;
    const int workers = nmt_pool_threads(), B = options->batch_size;
    t->worker = nmt_calloc((size_t)workers, sizeof *t->worker);
    if (!t->worker || nmt_incremental_weights_create(&t->weights, model, options->precision) < 0) goto fail;
    nmt_incremental_weights_set_shortlist(t->weights, options->shortlist);
    t->workers = workers;
    for (int i = 0; i < workers; i++) {
        translate_worker *w = &t->worker[i];
        w->tokens = nmt_malloc((size_t)B * sizeof(int));
        w->pieces = nmt_malloc((size_t)B * sizeof(int));
        w->keys = nmt_malloc((size_t)B * sizeof(uint64_t));
        w->batch_out = nmt_malloc((size_t)B * sizeof *w->batch_out);
        if (!w->tokens || !w->pieces || !w->keys || !w->batch_out || nmt_search_create(&w->search, options) < 0 ||
            nmt_incremental_create_shared(&w->decoder, t->weights) < 0)
            goto fail;
    }
    *out = t;
    return 0;
fail:
    nmt_translator_free(t);
    return -1;
}

void nmt_translator_free(nmt_translator *t) {
    if (!t) return;
    for (int i = 0; i < t->workers; i++) worker_free(&t->worker[i]);
    free(t->worker);
    nmt_incremental_weights_free(t->weights);
    free(t);
}

size_t nmt_translator_release_model(nmt_translator *t, nmt_model *model) {
    return model == t->model ? nmt_incremental_weights_release(t->weights, model) : 0;
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

/* Decoder positions a batch needs whose longest source has `pieces` pieces. */
static int batch_steps(const nmt_translator *t, int pieces) {
    const nmt_model_config *c = &t->model->config;
    int steps = nmt_decode_max_length(&t->options, pieces) + 1;
    return c->positions == NMT_POSITIONS_LEARNED && steps > c->max_positions ? c->max_positions : steps;
}

/* Decodes the sentences order[0 .. n) (sorted by length, all non-empty) as one batch on worker w. */
static int translate_batch(const nmt_translator *t, translate_worker *w, const nmt_order_entry *order, int n,
                           const int32_t *const *src, uint64_t first_key, nmt_translation *out) {
    const int S = order[n - 1].length + 1, K = t->options.greedy ? 1 : t->options.beam_size;
    const int steps = batch_steps(t, order[n - 1].length);
    for (int b = 0; b < n; b++) {
        const int len = order[b].length;
        int32_t *row = w->matrix + (size_t)b * (size_t)S;
        nmt_vocab_row(NMT_ROW_SOURCE, src[order[b].index], len, row, S);
        w->tokens[b] = len + 1;
        w->pieces[b] = len;
        w->keys[b] = first_key + (uint64_t)order[b].index;
    }
    if (nmt_incremental_start(w->decoder, w->matrix, w->tokens, n, S, n * K, steps) < 0) return -1;
    nmt_decode_step step = nmt_incremental_decode_step(w->decoder);
    if (nmt_search_run(w->search, &step, n, w->pieces, w->keys, S, w->batch_out) < 0) return -1;
    for (int b = 0; b < n; b++) out[order[b].index] = w->batch_out[b];
    return 0;
}

/* The batches of one run, taken in turn by the workers. Each batch is decoded on a single thread
 * (the pool's nested calls run inline), so its result does not depend on which worker took it. */
typedef struct translate_run {
    const nmt_translator *t;
    const nmt_order_entry *order;
    int sentences, batches, batch; /* batch: sentences per batch (the last may have fewer) */
    const int32_t *const *src;
    uint64_t first_key;
    nmt_translation *out;
    atomic_int next_batch;
    atomic_int failed;
    char error[1024]; /* the first failure's message, from the worker's thread */
} translate_run;

static void translate_worker_task(void *ctx, long begin, long end) {
    translate_run *run = ctx;
    const int B = run->batch;
    for (long i = begin; i < end; i++) {
        translate_worker *w = &run->t->worker[i];
        for (int b; !atomic_load(&run->failed) && (b = atomic_fetch_add(&run->next_batch, 1)) < run->batches;) {
            const int first = b * B, n = run->sentences - first < B ? run->sentences - first : B;
            if (translate_batch(run->t, w, run->order + first, n, run->src, run->first_key, run->out) < 0 &&
                atomic_exchange(&run->failed, 1) == 0)
                snprintf(run->error, sizeof run->error, "%s", nmt_error());
        }
    }
}

int nmt_translator_run(nmt_translator *t, int count, const int32_t *const *src, const int *src_len,
                       nmt_translation *out) {
    return nmt_translator_run_from(t, 0, count, src, src_len, out);
}

int nmt_translator_run_from(nmt_translator *t, uint64_t first_key, int count, const int32_t *const *src,
                            const int *src_len, nmt_translation *out) {
    memset(out, 0, (size_t)(count > 0 ? count : 0) * sizeof *out);
    if (count <= 0) return 0;
    int B = t->options.batch_size, n = 0, longest = 0, rc = -1;
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
    }
    nmt_order_sort(order, n);
    const int tokens = t->options.batch_tokens;
    if (tokens > 0 && tokens / (longest + 1) < B) B = tokens / (longest + 1) > 1 ? tokens / (longest + 1) : 1;
    translate_run run = {.t = t, .order = order, .sentences = n, .batches = (n + B - 1) / B, .batch = B, .src = src,
                         .first_key = first_key, .out = out};
    /* Several batches: one per thread at a time, each on one core, which keeps every product
     * whole and the search's serial work off the other threads' path. One batch: all threads on it. */
    const int workers = run.batches < t->workers ? run.batches : t->workers;
    /* Every buffer at the size of the run's largest batch at once, not grown batch by batch. */
    const int largest = n < B ? n : B, K = t->options.greedy ? 1 : t->options.beam_size;
    for (int i = 0; i < workers; i++) {
        free(t->worker[i].matrix);
        t->worker[i].matrix = nmt_malloc((size_t)B * ((size_t)longest + 1) * sizeof(int32_t));
        if (!t->worker[i].matrix ||
            nmt_incremental_reserve(t->worker[i].decoder, largest, longest + 1, largest * K, batch_steps(t, longest)) < 0)
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

int nmt_decode_sentences(const nmt_model *model, const nmt_decode_options *options, int count,
                         const int32_t *const *src, const int *src_len, nmt_translation *out) {
    nmt_translator *t;
    if (nmt_translator_create(&t, model, options) < 0) return -1;
    int rc = nmt_translator_run(t, count, src, src_len, out);
    nmt_translator_free(t);
    return rc;
}
