/* Tests of batch: every pair once per epoch, the padded-token bound, row layout (bos/eos/pad),
 * determinism from (seed, epoch), seeking to a saved position, and reshuffling between epochs.
 *
 * The corpus is built in memory: pair i has source length 1 + i % 7 and target length 1 + i % 5 (other
 * lengths in each epoch of a resampled batcher), and its first source piece is 100 + i, so a row tells
 * which pair it holds. */
#include "train/batch.h"
#include "base/util.h"

#include "testing.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

enum { PAIRS = 300 };

/* Lays out pair i with source length 1 + (i + shift) % 7 and target length 1 + (i + 2 shift) % 5. */
static void fill_corpus(nmt_corpus *c, long shift) {
    size_t at = 0;
    for (long i = 0; i < c->num_pairs; i++) {
        c->src_len[i] = 1 + (int32_t)((i + shift) % 7);
        c->tgt_len[i] = 1 + (int32_t)((i + 2 * shift) % 5);
        c->offset[i] = at;
        for (int k = 0; k < c->src_len[i] + c->tgt_len[i]; k++) c->ids[at + (size_t)k] = k == 0 ? 100 + (int32_t)i : 4 + k;
        at += (size_t)(c->src_len[i] + c->tgt_len[i]);
    }
    c->num_ids = at;
}

static void make_corpus(nmt_corpus *c, long pairs) {
    memset(c, 0, sizeof *c);
    c->num_pairs = pairs;
    c->src_len = nmt_malloc((size_t)pairs * sizeof *c->src_len);
    c->tgt_len = nmt_malloc((size_t)pairs * sizeof *c->tgt_len);
    c->offset = nmt_malloc((size_t)pairs * sizeof *c->offset);
    c->ids = nmt_malloc((size_t)pairs * 12 * sizeof *c->ids);
    fill_corpus(c, 0);
}

/* Takes one epoch of batches; checks each batch's bound and layout and returns the pair of every
 * row, in order, in seen[] (which must hold PAIRS). */
static long take_epoch(nmt_batcher *b, const nmt_corpus *c, int bound, long *seen) {
    long rows_seen = 0, k = 0;
    do { /* the first batch may load the epoch, and with it num_batches */
        nmt_batch batch;
        long tokens;
        nmt_batcher_next(b, &batch, &tokens);
        ck_assert_int_le(batch.batch * batch.tgt_len, bound);
        ck_assert_int_le(batch.batch * batch.src_len, bound);
        long want_tokens = 0;
        for (int r = 0; r < batch.batch; r++) {
            long p = batch.src[r * batch.src_len] - 100;
            ck_assert(p >= 0 && p < c->num_pairs);
            int ns = c->src_len[p], nt = c->tgt_len[p];
            ck_assert_int_eq(batch.src[r * batch.src_len + ns], NMT_EOS);
            for (int j = ns + 1; j < batch.src_len; j++) ck_assert_int_eq(batch.src[r * batch.src_len + j], NMT_PAD);
            const int32_t *in = batch.tgt_in + r * batch.tgt_len, *out = batch.tgt_out + r * batch.tgt_len;
            ck_assert_int_eq(in[0], NMT_BOS);
            for (int j = 0; j < nt; j++) {
                ck_assert_int_eq(in[j + 1], c->ids[c->offset[p] + (size_t)ns + (size_t)j]);
                ck_assert_int_eq(out[j], in[j + 1]);
            }
            ck_assert_int_eq(out[nt], NMT_EOS);
            for (int j = nt + 1; j < batch.tgt_len; j++) ck_assert_int_eq(in[j] | out[j], NMT_PAD);
            want_tokens += nt + 1;
            seen[rows_seen++] = p;
        }
        ck_assert_int_eq(tokens, want_tokens);
    } while (++k < b->num_batches);
    return rows_seen;
}

START_TEST(each_pair_once_per_epoch_within_bound) {
    nmt_corpus c;
    make_corpus(&c, PAIRS);
    nmt_batcher b;
    ck_assert_int_eq(nmt_batcher_init(&b, &c, 40, 5, 1), 0);
    long seen[PAIRS];
    for (int epoch = 1; epoch <= 2; epoch++) {
        ck_assert_int_eq(take_epoch(&b, &c, 40, seen), PAIRS);
        ck_assert_int_eq(nmt_batcher_epochs_done(&b), epoch);
        char hit[PAIRS] = {0};
        for (long i = 0; i < PAIRS; i++) {
            ck_assert(!hit[seen[i]]);
            hit[seen[i]] = 1;
        }
    }
    nmt_batcher_free(&b);
    nmt_corpus_free(&c);
}
END_TEST

START_TEST(batches_are_length_buckets) {
    /* Targets of 6 padded tokens (length 5 + eos) fill a 40-token batch with 6 rows; the sort puts
     * equal target lengths together, so most batches hold a single target length. */
    nmt_corpus c;
    make_corpus(&c, PAIRS);
    nmt_batcher b;
    ck_assert_int_eq(nmt_batcher_init(&b, &c, 40, 5, 0), 0);
    long padded = 0, real = 0;
    for (long k = 0; k < b.num_batches; k++) {
        nmt_batch batch;
        long tokens;
        nmt_batcher_next(&b, &batch, &tokens);
        padded += batch.batch * batch.tgt_len;
        real += tokens;
    }
    /* Without shuffling, batches come in length order: padding stays small. */
    ck_assert_int_le(padded - real, real / 10);
    nmt_batcher_free(&b);
    nmt_corpus_free(&c);
}
END_TEST

START_TEST(same_seed_same_batches_and_seek_resumes) {
    nmt_corpus c;
    make_corpus(&c, PAIRS);
    nmt_batcher a, b;
    ck_assert_int_eq(nmt_batcher_init(&a, &c, 40, 11, 1), 0);
    ck_assert_int_eq(nmt_batcher_init(&b, &c, 40, 11, 1), 0);
    long first[PAIRS], second[PAIRS], third[PAIRS];
    take_epoch(&a, &c, 40, first);
    take_epoch(&b, &c, 40, second);
    ck_assert_mem_eq(first, second, sizeof first);
    /* Epoch 2 is ordered differently from epoch 1. */
    take_epoch(&a, &c, 40, second);
    ck_assert(memcmp(first, second, sizeof first) != 0);

    /* Stop a third batcher in the middle of epoch 2, "save" (epoch, cursor), seek a fresh one there:
     * the rest of epoch 2 matches. */
    nmt_batcher d;
    ck_assert_int_eq(nmt_batcher_init(&d, &c, 40, 11, 1), 0);
    ck_assert_int_eq(nmt_batcher_seek(&d, 2, 7), 0);
    nmt_batcher_seek(&b, 2, 0);
    for (int k = 0; k < 7; k++) {
        nmt_batch batch;
        long tokens;
        nmt_batcher_next(&b, &batch, &tokens);
    }
    ck_assert_int_eq(b.cursor, d.cursor);
    for (long k = 7; k < b.num_batches; k++) {
        nmt_batch x, y;
        long tx, ty;
        nmt_batcher_next(&b, &x, &tx);
        nmt_batcher_next(&d, &y, &ty);
        ck_assert_int_eq(x.batch, y.batch);
        ck_assert_int_eq(tx, ty);
        ck_assert_mem_eq(x.src, y.src, (size_t)x.batch * (size_t)x.src_len * sizeof *x.src);
    }
    /* A different seed orders epoch 1 differently. */
    nmt_batcher e;
    ck_assert_int_eq(nmt_batcher_init(&e, &c, 40, 12, 1), 0);
    take_epoch(&e, &c, 40, third);
    ck_assert(memcmp(first, third, sizeof first) != 0);
    ck_assert_int_eq(nmt_batcher_seek(&e, 1, e.num_batches + 1), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "outside the corpus"));
    nmt_batcher_free(&a);
    nmt_batcher_free(&b);
    nmt_batcher_free(&d);
    nmt_batcher_free(&e);
    nmt_corpus_free(&c);
}
END_TEST

/* A stand-in for subword sampling: epoch e lays the pairs out with shift e (other lengths each epoch). */
static long relength_calls, relength_epoch;

static int relength(void *corpus, long epoch) {
    relength_calls++;
    relength_epoch = epoch;
    fill_corpus(corpus, epoch);
    return 0;
}

START_TEST(resampled_epochs_are_planned_from_their_draws) {
    nmt_corpus c;
    make_corpus(&c, PAIRS);
    nmt_batcher a, b;
    relength_calls = 0;
    ck_assert_int_eq(nmt_batcher_init_resampled(&a, &c, 40, 11, 1, relength, &c), 0);
    ck_assert_int_eq(relength_calls, 0); /* nothing drawn before the data position is known */
    /* A resume draws only the epoch it seeks; every row matches that epoch's lengths. */
    ck_assert_int_eq(nmt_batcher_seek(&a, 3, 0), 0);
    ck_assert_int_eq(relength_calls, 1);
    ck_assert_int_eq(relength_epoch, 3);
    long third[PAIRS], again[PAIRS];
    ck_assert_int_eq(take_epoch(&a, &c, 40, third), PAIRS);
    /* A fresh batcher starts at epoch 1 at its first batch and moves on to epoch 2 as an epoch ends. */
    ck_assert_int_eq(nmt_batcher_init_resampled(&b, &c, 40, 11, 1, relength, &c), 0);
    ck_assert_int_eq(take_epoch(&b, &c, 40, again), PAIRS);
    ck_assert_int_eq(relength_epoch, 1);
    ck_assert_int_eq(take_epoch(&b, &c, 40, again), PAIRS);
    ck_assert_int_eq(take_epoch(&b, &c, 40, again), PAIRS);
    ck_assert_int_eq(relength_epoch, 3);
    ck_assert_mem_eq(third, again, sizeof third);
    ck_assert_int_eq(relength_calls, 4);
    nmt_batcher_free(&a);
    nmt_batcher_free(&b);
    nmt_corpus_free(&c);
}
END_TEST

START_TEST(oversized_pair_is_its_own_batch) {
    nmt_corpus c;
    make_corpus(&c, 10);
    nmt_batcher b;
    /* Bound 4: pairs with a source of 4+ pieces (5+ with eos) exceed it alone. */
    ck_assert_int_eq(nmt_batcher_init(&b, &c, 4, 1, 1), 0);
    long rows = 0;
    for (long k = 0; k < b.num_batches; k++) {
        nmt_batch batch;
        long tokens;
        nmt_batcher_next(&b, &batch, &tokens);
        if (batch.batch * batch.src_len > 4 || batch.batch * batch.tgt_len > 4) ck_assert_int_eq(batch.batch, 1);
        rows += batch.batch;
    }
    ck_assert_int_eq(rows, 10);
    nmt_batcher_free(&b);
    nmt_corpus_free(&c);

    nmt_corpus empty = {0};
    ck_assert_int_eq(nmt_batcher_init(&b, &empty, 4, 1, 1), -1);
}
END_TEST

static int init_attempt(void *corpus) {
    nmt_batcher b;
    if (nmt_batcher_init(&b, corpus, 40, 5, 1) < 0) return -1;
    nmt_batcher_free(&b);
    return 0;
}

START_TEST(allocation_failures_are_reported) {
    nmt_corpus c;
    make_corpus(&c, PAIRS);
    ck_assert_int_ge(nmt_test_alloc_sweep(init_attempt, &c), 7);
    nmt_corpus_free(&c);
}
END_TEST

int main(void) {
    Suite *s = suite_create("batch");
    TCase *tc = tcase_create("batch");
    tcase_add_test(tc, each_pair_once_per_epoch_within_bound);
    tcase_add_test(tc, batches_are_length_buckets);
    tcase_add_test(tc, same_seed_same_batches_and_seek_resumes);
    tcase_add_test(tc, resampled_epochs_are_planned_from_their_draws);
    tcase_add_test(tc, oversized_pair_is_its_own_batch);
    tcase_add_test(tc, allocation_failures_are_reported);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
