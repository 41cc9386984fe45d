/* fuzz_batch: the token batcher over arbitrary corpora, batch sizes and resume positions.
 *
 * A resumed run seeks the batcher to the (epoch, cursor) of a checkpoint and must then see exactly
 * the batches an uninterrupted run sees; a damaged checkpoint may hand it any position at all.
 *
 * Input: byte 0: batch_tokens - 1; byte 1: bit 0 shuffle; bytes 2-3: the batch (cursor) to seek to
 * and the epoch (1-4); then two bytes a pair: source and target length (each mod 32). Pair p's pieces
 * are all 4 + p, so a row tells which pair it is (a pair with both sides empty is counted instead).
 *
 * Properties: init fails exactly when there are no pairs; every epoch hands out every pair exactly
 * once; every batch of more than one row fits batch_tokens on both sides; each row is laid out as
 * batch.h says (source + eos, bos + target, target + eos, padded with 0) and the token count is the
 * sum of target lengths + 1; without shuffling batches come in length order; seeking to (epoch, cursor)
 * gives the same next batch as getting there batch by batch; positions outside the corpus are refused;
 * allocation failures in init are reported.
 */
#include "fuzz.h"
#include "train/batch.h"

enum { MAX_PAIRS = 512, EPOCHS = 4 };

typedef struct fixture {
    nmt_corpus corpus;
    int batch_tokens;
    int shuffle;
} fixture;

static int init_and_free(void *context) {
    fixture *f = context;
    nmt_batcher b;
    int rc = nmt_batcher_init(&b, &f->corpus, f->batch_tokens, 7, f->shuffle);
    if (rc == 0) nmt_batcher_free(&b);
    return rc;
}

/* Checks one batch's layout; marks its pairs in seen[] (empty pairs counted in *empty_seen);
 * returns a hash of its rows to compare batches. */
static uint64_t check_batch(const fixture *f, const nmt_batch *batch, long tokens, int *seen, long *empty_seen) {
    const nmt_corpus *c = &f->corpus;
    int B = batch->batch, S = batch->src_len, T = batch->tgt_len;
    FUZZ_CHECK(B >= 1 && S >= 1 && T >= 1, "batch %d x %d / %d", B, S, T);
    FUZZ_CHECK(B == 1 || ((long)B * S <= f->batch_tokens && (long)B * T <= f->batch_tokens),
               "%d rows of %d / %d tokens exceed batch_tokens %d", B, S, T, f->batch_tokens);
    long count = 0;
    uint64_t hash = 1469598103934665603ull;
    for (int r = 0; r < B; r++) {
        const int32_t *src = batch->src + (size_t)r * S, *in = batch->tgt_in + (size_t)r * T,
                      *out = batch->tgt_out + (size_t)r * T;
        int32_t id = src[0] != NMT_EOS ? src[0] : out[0] != NMT_EOS ? out[0] : -1;
        long p = id - 4;
        int ns = id < 0 ? 0 : c->src_len[p], nt = id < 0 ? 0 : c->tgt_len[p];
        FUZZ_CHECK(id < 0 || (p >= 0 && p < c->num_pairs), "row %d starts with id %d", r, id);
        if (id < 0) ++*empty_seen;
        else FUZZ_CHECK(!seen[p]++, "pair %ld handed out twice in an epoch", p);
        FUZZ_CHECK(ns < S && nt < T, "pair %ld (%d, %d) does not fit rows of %d, %d", p, ns, nt, S, T);
        for (int i = 0; i < S; i++)
            FUZZ_CHECK(src[i] == (i < ns ? id : i == ns ? NMT_EOS : NMT_PAD), "row %d source %d is %d", r, i, src[i]);
        for (int i = 0; i < T; i++) {
            FUZZ_CHECK(in[i] == (i == 0 ? NMT_BOS : i <= nt ? id : NMT_PAD), "row %d input %d is %d", r, i, in[i]);
            FUZZ_CHECK(out[i] == (i < nt ? id : i == nt ? NMT_EOS : NMT_PAD), "row %d target %d is %d", r, i, out[i]);
        }
        count += nt + 1;
        hash = (hash ^ (uint64_t)(id + 1)) * 1099511628211ull;
    }
    FUZZ_CHECK(tokens == count, "%ld tokens reported, %ld in the batch", tokens, count);
    return hash ^ (uint64_t)B << 40;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 4) return 0;
    static int32_t src_len[MAX_PAIRS], tgt_len[MAX_PAIRS], ids[MAX_PAIRS * 62];
    static size_t offset[MAX_PAIRS];
    static int seen[MAX_PAIRS];
    static uint64_t hashes[EPOCHS][MAX_PAIRS];
    fixture f = {.batch_tokens = data[0] + 1, .shuffle = data[1] & 1};
    long seek_cursor = data[2], seek_epoch = 1 + data[3] % EPOCHS, n = 0, empty = 0;
    size_t num_ids = 0;
    for (size_t i = 4; i + 1 < size && n < MAX_PAIRS; i += 2, n++) {
        src_len[n] = data[i] % 32;
        tgt_len[n] = data[i + 1] % 32;
        offset[n] = num_ids;
        for (int k = 0; k < src_len[n] + tgt_len[n]; k++) ids[num_ids++] = 4 + (int32_t)n;
        empty += src_len[n] == 0 && tgt_len[n] == 0;
    }
    f.corpus = (nmt_corpus){.num_pairs = n, .ids = ids, .num_ids = num_ids, .offset = offset, .src_len = src_len,
                            .tgt_len = tgt_len, .lines = n};
    nmt_batcher b;
    if (n == 0) {
        FUZZ_CHECK(nmt_batcher_init(&b, &f.corpus, f.batch_tokens, 7, f.shuffle) == -1, "an empty corpus was batched");
        return 0;
    }
    FUZZ_CHECK(nmt_batcher_init(&b, &f.corpus, f.batch_tokens, 7, f.shuffle) == 0, "%s", nmt_error());
    FUZZ_CHECK(b.num_batches >= 1 && b.num_batches <= n, "%ld batches of %ld pairs", b.num_batches, n);
    for (long epoch = 1; epoch <= EPOCHS; epoch++) {
        memset(seen, 0, sizeof seen);
        long empty_seen = 0, previous_t = 0;
        for (long k = 0; k < b.num_batches; k++) {
            FUZZ_CHECK(nmt_batcher_epochs_done(&b) == epoch - 1, "epoch %ld batch %ld: %ld epochs done", epoch, k,
                       nmt_batcher_epochs_done(&b));
            nmt_batch batch;
            long tokens;
            nmt_batcher_next(&b, &batch, &tokens);
            hashes[epoch - 1][k] = check_batch(&f, &batch, tokens, seen, &empty_seen);
            FUZZ_CHECK(f.shuffle || batch.tgt_len >= previous_t, "unshuffled batches out of length order");
            previous_t = batch.tgt_len;
        }
        for (long p = 0; p < n; p++)
            FUZZ_CHECK(seen[p] || (src_len[p] == 0 && tgt_len[p] == 0), "epoch %ld skipped pair %ld", epoch, p);
        FUZZ_CHECK(empty_seen == empty, "epoch %ld: %ld empty pairs handed out, %ld in the corpus", epoch, empty_seen,
                   empty);
    }
    FUZZ_CHECK(nmt_batcher_epochs_done(&b) == EPOCHS, "%ld epochs done", nmt_batcher_epochs_done(&b));

    /* Resuming at a checkpoint's position: the same batch as the straight run (or a refusal). */
    int rc = nmt_batcher_seek(&b, seek_epoch, seek_cursor);
    FUZZ_CHECK(rc == (seek_cursor <= b.num_batches ? 0 : -1), "seek to epoch %ld batch %ld: rc %d", seek_epoch,
               seek_cursor, rc);
    FUZZ_CHECK(nmt_batcher_seek(&b, 0, 0) == -1 && nmt_batcher_seek(&b, 1, -1) == -1, "a bad position was accepted");
    if (rc == 0) {
        long epoch = seek_epoch, k = seek_cursor;
        if (k == b.num_batches) epoch++, k = 0; /* the end of an epoch: the next batch opens the next one */
        nmt_batch batch;
        long tokens, empty_seen = 0;
        memset(seen, 0, sizeof seen);
        nmt_batcher_next(&b, &batch, &tokens);
        uint64_t hash = check_batch(&f, &batch, tokens, seen, &empty_seen);
        FUZZ_CHECK(epoch > EPOCHS || hash == hashes[epoch - 1][k], "after seeking to epoch %ld batch %ld, another batch",
                   seek_epoch, seek_cursor);
    }
    nmt_batcher_free(&b);
    fuzz_alloc_sweep(init_and_free, &f, 16);
    return 0;
}
