/* batch: length buckets bounded by padded tokens; per-epoch shuffles from (seed, epoch). */
#include "train/batch.h"
#include "base/random.h"
#include "text/vocab.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

static void shuffle_longs(long *a, long n, uint64_t *rng) {
    for (long i = n - 1; i > 0; i--) {
        long j = (long)(nmt_random_next(rng) % (uint64_t)(i + 1));
        long t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

typedef struct sort_key {
    int32_t tgt_len, src_len;
    long pair;
} sort_key;

static int by_lengths(const void *pa, const void *pb) {
    const sort_key *a = pa, *b = pb;
    if (a->tgt_len != b->tgt_len) return a->tgt_len < b->tgt_len ? -1 : 1;
    if (a->src_len != b->src_len) return a->src_len < b->src_len ? -1 : 1;
    return (a->pair > b->pair) - (a->pair < b->pair);
}

/* Pair indices by (target length, source length, index). */
static int sort_pairs(long *sorted, const nmt_corpus *c) {
    sort_key *keys = nmt_malloc((size_t)c->num_pairs * sizeof *keys);
    if (!keys) return -1;
    for (long i = 0; i < c->num_pairs; i++) keys[i] = (sort_key){c->tgt_len[i], c->src_len[i], i};
    qsort(keys, (size_t)c->num_pairs, sizeof *keys, by_lengths);
    for (long i = 0; i < c->num_pairs; i++) sorted[i] = keys[i].pair;
    free(keys);
    return 0;
}

void nmt_batcher_free(nmt_batcher *b) {
    free(b->sorted);
    free(b->order);
    free(b->batch_start);
    free(b->batch_order);
    free(b->src);
    free(b->tgt_in);
    free(b->tgt_out);
    memset(b, 0, sizeof *b);
}

/* Grows the three row buffers to `capacity` ids (they only grow: a resampled epoch may need more). */
static int grow_rows(nmt_batcher *b, long capacity) {
    if (capacity <= b->capacity) return 0;
    int32_t **rows[] = {&b->src, &b->tgt_in, &b->tgt_out};
    for (int i = 0; i < 3; i++) {
        int32_t *grown = nmt_realloc(*rows[i], (size_t)capacity * sizeof **rows[i]);
        if (!grown) return -1;
        *rows[i] = grown;
    }
    b->capacity = capacity;
    return 0;
}

/* The batch plan from the corpus's lengths: sorted pairs, batch boundaries, row buffers. */
static int plan(nmt_batcher *b) {
    const nmt_corpus *corpus = b->corpus;
    const long n = corpus->num_pairs;
    if (sort_pairs(b->sorted, corpus) < 0) return -1;
    /* Greedy batches along the sorted order; T only grows within a batch, S may not. */
    long count = 0, max_s = 0, max_t = 0, capacity = 0;
    b->num_batches = 0;
    for (long i = 0; i < n; i++) {
        long p = b->sorted[i];
        long s = corpus->src_len[p] + 1, t = corpus->tgt_len[p] + 1;
        long new_s = s > max_s ? s : max_s, new_t = t > max_t ? t : max_t;
        if (count > 0 && ((count + 1) * new_t > b->batch_tokens || (count + 1) * new_s > b->batch_tokens)) {
            long used = count * (max_s > max_t ? max_s : max_t);
            if (used > capacity) capacity = used;
            b->batch_start[b->num_batches++] = i - count;
            count = 0;
            new_s = s;
            new_t = t;
        }
        count++;
        max_s = new_s;
        max_t = new_t;
    }
    long used = count * (max_s > max_t ? max_s : max_t);
    if (used > capacity) capacity = used;
    b->batch_start[b->num_batches++] = n - count;
    b->batch_start[b->num_batches] = n;
    return grow_rows(b, capacity);
}

int nmt_batcher_init(nmt_batcher *b, const nmt_corpus *corpus, int batch_tokens, uint64_t seed, int shuffle) {
    return nmt_batcher_init_resampled(b, corpus, batch_tokens, seed, shuffle, NULL, NULL);
}

int nmt_batcher_init_resampled(nmt_batcher *b, const nmt_corpus *corpus, int batch_tokens, uint64_t seed,
                               int shuffle, nmt_batcher_resample_fn resample, void *resample_ctx) {
    memset(b, 0, sizeof *b);
    long n = corpus->num_pairs;
    if (n <= 0) return nmt_error_set("the corpus has no sentence pairs to batch");
    if (batch_tokens <= 0) return nmt_error_set("batch_tokens must be positive, not %d", batch_tokens);
    b->corpus = corpus;
    b->batch_tokens = batch_tokens;
    b->seed = seed;
    b->shuffle = shuffle;
    b->resample = resample;
    b->resample_ctx = resample_ctx;
    b->sorted = nmt_malloc((size_t)n * sizeof *b->sorted);
    b->order = nmt_malloc((size_t)n * sizeof *b->order);
    b->batch_start = nmt_malloc(((size_t)n + 1) * sizeof *b->batch_start);
    b->batch_order = nmt_malloc((size_t)n * sizeof *b->batch_order); /* at most one batch a pair */
    if (!b->sorted || !b->order || !b->batch_start || !b->batch_order ||
        (!resample && (plan(b) < 0 || nmt_batcher_seek(b, 1, 0) < 0))) {
        nmt_batcher_free(b);
        return -1;
    }
    return 0;
}

/* Lays out `epoch`'s order: its segmentations drawn and planned (with resampling), equal-length runs
 * shuffled, then the batch permutation. */
static int load_epoch(nmt_batcher *b, long epoch) {
    if (b->resample && (b->resample(b->resample_ctx, epoch) < 0 || plan(b) < 0)) return -1;
    const nmt_corpus *c = b->corpus;
    long n = c->num_pairs;
    memcpy(b->order, b->sorted, (size_t)n * sizeof *b->order);
    for (long k = 0; k < b->num_batches; k++) b->batch_order[k] = k;
    b->epoch = epoch;
    b->cursor = 0;
    if (!b->shuffle) return 0;
    uint64_t rng = b->seed * 0xD1B54A32D192ED03ull ^ (uint64_t)epoch * 0x8CB92BA72F3D8DD7ull;
    for (long start = 0, end; start < n; start = end) {
        long p = b->order[start];
        for (end = start + 1; end < n && c->tgt_len[b->order[end]] == c->tgt_len[p] &&
                              c->src_len[b->order[end]] == c->src_len[p];
             end++) {
        }
        shuffle_longs(b->order + start, end - start, &rng);
    }
    shuffle_longs(b->batch_order, b->num_batches, &rng);
    return 0;
}

int nmt_batcher_seek(nmt_batcher *b, long epoch, long cursor) {
    if (epoch < 1 || cursor < 0)
        return nmt_error_set("data position epoch %ld, batch %ld is outside the corpus", epoch, cursor);
    if (b->epoch != epoch && load_epoch(b, epoch) < 0) return -1; /* an epoch's layout is a function of it */
    if (cursor > b->num_batches)
        return nmt_error_set("data position epoch %ld, batch %ld is outside the corpus (%ld batches an epoch)", epoch,
                             cursor, b->num_batches);
    b->cursor = cursor;
    return 0;
}

long nmt_batcher_epochs_done(const nmt_batcher *b) { return b->epoch - 1 + (b->cursor == b->num_batches); }

int nmt_batcher_next(nmt_batcher *b, nmt_batch *batch, long *tokens) {
    if (b->cursor == b->num_batches && load_epoch(b, b->epoch + 1) < 0) return -1;
    const nmt_corpus *c = b->corpus;
    long k = b->batch_order[b->cursor++];
    const long *pairs = b->order + b->batch_start[k];
    int rows = (int)(b->batch_start[k + 1] - b->batch_start[k]);
    int S = 0, T = 0;
    for (int r = 0; r < rows; r++) {
        if (c->src_len[pairs[r]] + 1 > S) S = c->src_len[pairs[r]] + 1;
        if (c->tgt_len[pairs[r]] + 1 > T) T = c->tgt_len[pairs[r]] + 1;
    }
    long count = 0;
    for (int r = 0; r < rows; r++) {
        long p = pairs[r];
        int ns = c->src_len[p], nt = c->tgt_len[p];
        const int32_t *src = c->ids + c->offset[p], *tgt = src + ns;
        nmt_vocab_row(NMT_ROW_SOURCE, src, ns, b->src + (size_t)r * S, S);
        nmt_vocab_row(NMT_ROW_DECODER_INPUT, tgt, nt, b->tgt_in + (size_t)r * T, T);
        nmt_vocab_row(NMT_ROW_TARGET, tgt, nt, b->tgt_out + (size_t)r * T, T);
        count += nt + 1;
    }
    batch->batch = rows;
    batch->src_len = S;
    batch->tgt_len = T;
    batch->src = b->src;
    batch->tgt_in = b->tgt_in;
    batch->tgt_out = b->tgt_out;
    *tokens = count;
    return 0;
}
