/* Tests of dist: pieces cover every sentence once; a step's pieces are shared out over ranks in
 * contiguous runs; the pre-rounded sum gives the same bits for every grouping and order of the pieces
 * (what different rank counts do), stays within float rounding of the exact sum, and flags inf/nan;
 * nmt_dist_reduce on one process sums held pieces and adds the slots in piece order; the overlapped
 * reduce (buckets started from the model's backward hook) gives the same bits as the plain one, with
 * every bucket started during the backward, and also when the last piece is empty. */
#include "compute/pool.h"
#include "train/dist.h"

#include "testing.h"
#include "tiny_model.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

START_TEST(piece_rows_cover_the_batch) {
    for (int rows = 0; rows <= 9; rows++)
        for (int k = 1; k <= 4; k++) {
            int next = 0;
            for (int j = 0; j < k; j++) {
                int lo, hi;
                nmt_dist_piece_rows(rows, k, j, &lo, &hi);
                ck_assert_int_eq(lo, next);
                ck_assert_int_le(hi - lo, rows / k + 1);
                next = hi;
            }
            ck_assert_int_eq(next, rows);
        }
}
END_TEST

START_TEST(ranks_take_contiguous_pieces) {
    nmt_comm c;
    nmt_comm_local(&c);
    c.size = 4; /* the layout only; no collective is called */
    int next = 0;
    for (c.rank = 0; c.rank < 4; c.rank++) {
        nmt_dist d;
        ck_assert_int_eq(nmt_dist_init(&d, &c, 2, 3, 10), 0);
        ck_assert_int_eq(d.pieces, 6);
        ck_assert_int_eq(d.first, next);
        ck_assert_int_ge(d.count, 1);
        for (int p = 0; p < 6; p++) ck_assert_int_eq(nmt_dist_owns(&d, p), p >= next && p < next + d.count);
        next += d.count;
        nmt_dist_free(&d);
    }
    ck_assert_int_eq(next, 6);
    c.size = 7;
    c.rank = 0;
    nmt_dist d;
    ck_assert_int_eq(nmt_dist_init(&d, &c, 2, 3, 10), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "7 ranks but a step has only 6 pieces"));
}
END_TEST

enum { P = 5, N = 1000 };

/* Piece values over a wide range of magnitudes; block 1 is all zero, block 2 mixes 2^-60 and 2^20. */
static void fill_pieces(float g[P][N]) {
    uint64_t z = 12345;
    for (int p = 0; p < P; p++)
        for (int i = 0; i < N; i++) {
            z = z * 6364136223846793005ull + 1442695040888963407ull;
            double u = (double)(z >> 11) / 9007199254740992.0 - 0.5;
            int e = (int)((z >> 3) % 40) - 30;
            g[p][i] = (float)ldexp(u, e);
            if (i >= NMT_DIST_BLOCK && i < 2 * NMT_DIST_BLOCK) g[p][i] = 0.0f;
            if (i >= 2 * NMT_DIST_BLOCK && i < 3 * NMT_DIST_BLOCK) g[p][i] = (float)ldexp(u, i % 2 ? -60 : 20);
        }
}

/* The sum of the pieces when ranks hold the groups [0, cut1), [cut1, cut2), [cut2, P), each rank
 * adding its own pieces from the last to the first, the rank sums added from the last rank down. */
static void grouped_sum(float g[P][N], int cut1, int cut2, float *out) {
    int32_t exps[(N + NMT_DIST_BLOCK - 1) / NMT_DIST_BLOCK];
    for (size_t b = 0; b < sizeof exps / sizeof *exps; b++) exps[b] = INT32_MIN;
    for (int p = P - 1; p >= 0; p--) nmt_dist_exponents(g[p], N, exps); /* the max all-reduce */
    static int64_t rank_sum[3][N], total[N];
    memset(rank_sum, 0, sizeof rank_sum);
    int cuts[4] = {0, cut1, cut2, P};
    for (int r = 0; r < 3; r++)
        for (int p = cuts[r + 1] - 1; p >= cuts[r]; p--) nmt_dist_accumulate(g[p], N, exps, 3, rank_sum[r]);
    for (int i = 0; i < N; i++) total[i] = rank_sum[2][i] + rank_sum[1][i] + rank_sum[0][i];
    nmt_dist_unpack(total, N, exps, 3, out);
}

START_TEST(exact_sum_ignores_grouping_and_order) {
    static float g[P][N], first[N], other[N];
    fill_pieces(g);
    grouped_sum(g, 5, 5, first); /* one process */
    int cuts[][2] = {{0, 5}, {2, 4}, {1, 2}, {3, 3}, {4, 5}, {0, 0}};
    for (size_t k = 0; k < sizeof cuts / sizeof *cuts; k++) {
        grouped_sum(g, cuts[k][0], cuts[k][1], other);
        ck_assert_mem_eq(first, other, sizeof first);
    }
    /* Within float rounding of the exact sum (double is exact enough here), relative to the block's
     * largest value; zero blocks stay zero. */
    for (int i = 0; i < N; i++) {
        double exact = 0, largest = 0;
        int b = i / NMT_DIST_BLOCK;
        for (int p = 0; p < P; p++) exact += g[p][i];
        for (int j = b * NMT_DIST_BLOCK; j < (b + 1) * NMT_DIST_BLOCK && j < N; j++)
            for (int p = 0; p < P; p++) largest = fmax(largest, fabs(g[p][j]));
        ck_assert_msg(fabs(first[i] - exact) <= fabs(exact) * 0x1p-23 + largest * 0x1p-50, "element %d: %g vs %g", i,
                      first[i], exact);
        if (b == 1) ck_assert(first[i] == 0.0f);
    }
}
END_TEST

START_TEST(nonfinite_blocks_are_flagged) {
    float g[3 * NMT_DIST_BLOCK] = {0};
    g[5] = 1.0f;
    g[NMT_DIST_BLOCK + 7] = INFINITY;
    g[2 * NMT_DIST_BLOCK + 1] = NAN;
    int32_t exps[3] = {INT32_MIN, INT32_MIN, INT32_MIN};
    nmt_dist_exponents(g, 3 * NMT_DIST_BLOCK, exps);
    ck_assert_int_eq(exps[0], 1); /* 1 < 2^1 */
    ck_assert_int_eq(exps[1], NMT_DIST_NONFINITE);
    ck_assert_int_eq(exps[2], NMT_DIST_NONFINITE);
}
END_TEST

START_TEST(reduce_on_one_process) {
    nmt_pool_set_threads(2);
    static float g[P][N], want[N];
    fill_pieces(g);
    grouped_sum(g, 5, 5, want);
    nmt_comm c;
    nmt_comm_local(&c);
    nmt_dist d;
    ck_assert_int_eq(nmt_dist_init(&d, &c, 1, P, N), 0);
    static float grads[N];
    for (int p = 0; p < P; p++) {
        memcpy(grads, g[p], sizeof grads); /* the backward of piece p */
        double slots[NMT_DIST_SLOTS] = {[NMT_DIST_LOSS] = 0.1 * (p + 1), [NMT_DIST_TOKENS] = 10 + p};
        nmt_dist_hold(&d, p, grads, p, slots);
        if (p + 1 < P)
            for (int i = 0; i < N; i++) ck_assert(grads[i] == 0.0f);
    }
    double totals[NMT_DIST_SLOTS];
    int finite;
    ck_assert_int_eq(nmt_dist_reduce(&d, grads, totals, &finite), 0);
    ck_assert_int_eq(finite, 1);
    ck_assert_mem_eq(grads, want, sizeof want);
    ck_assert(totals[NMT_DIST_LOSS] == (((0.1 + 0.2) + 0.1 * 3) + 0.1 * 4) + 0.1 * 5);
    ck_assert(totals[NMT_DIST_TOKENS] == 60);
    /* A nan in any piece: flagged, not summed. */
    for (int p = 0; p < P; p++) {
        memcpy(grads, g[p], sizeof grads);
        if (p == 2) grads[17] = NAN;
        double slots[NMT_DIST_SLOTS] = {0};
        nmt_dist_hold(&d, p, grads, p, slots);
    }
    ck_assert_int_eq(nmt_dist_reduce(&d, grads, totals, &finite), 0);
    ck_assert_int_eq(finite, 0);
    ck_assert_int_eq(nmt_dist_check_same(&c, "the corpus", 42), 0);
    nmt_dist_free(&d);
    nmt_pool_set_threads(1);
}
END_TEST

/* Sentences of 2..6 random tokens (ids 3..12) and their shifted targets: a batch of B rows. */
enum { TB = 6, TL = 7 };
static void random_batch(int32_t src[TB * TL], int32_t tgt_in[TB * TL], int32_t tgt_out[TB * TL], uint64_t seed) {
    memset(src, 0, TB * TL * sizeof *src);
    memset(tgt_in, 0, TB * TL * sizeof *tgt_in);
    memset(tgt_out, 0, TB * TL * sizeof *tgt_out);
    for (int b = 0; b < TB; b++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        int len = 2 + (int)((seed >> 33) % 5);
        tgt_in[b * TL] = 2; /* bos */
        for (int i = 0; i < len; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            src[b * TL + i] = tgt_out[b * TL + i] = 3 + (int32_t)((seed >> 33) % 10);
            if (i + 1 < TL) tgt_in[b * TL + i + 1] = src[b * TL + i];
        }
        src[b * TL + len] = tgt_out[b * TL + len] = 3; /* eos */
    }
}

/* The gradient of the 3 pieces of one batch (rows split as the trainer does, dropout seeded by piece)
 * summed by the plain reduce, or by the overlapped one; `empty_last` leaves the last piece without rows. */
static void pieces_reduce(nmt_model *m, int overlap, int empty_last, float *out) {
    nmt_comm c;
    nmt_comm_local(&c);
    nmt_dist d;
    ck_assert_int_eq(nmt_dist_init(&d, &c, 1, 3, m->num_params), 0);
    if (overlap) {
        ck_assert_int_eq(nmt_dist_plan_overlap(&d, m), 0);
        ck_assert_int_gt(d.num_buckets, 5);
    }
    int32_t src[TB * TL], tgt_in[TB * TL], tgt_out[TB * TL];
    random_batch(src, tgt_in, tgt_out, 77);
    nmt_batch batch = {TB, TL, TL, src, tgt_in, tgt_out};
    for (int step = 0; step < 4; step++) { /* later steps reuse the buckets; step 2 has a nan */
        nmt_model_zero_grads(m);
        for (int p = 0; p < 3; p++) {
            int lo, hi;
            nmt_dist_piece_rows(empty_last ? 4 : TB, 3, p, &lo, &hi);
            if (empty_last && p == 2) lo = hi = 4;
            double slots[NMT_DIST_SLOTS] = {0};
            if (hi > lo) {
                nmt_batch piece = batch;
                piece.batch = hi - lo;
                piece.src += lo * TL;
                piece.tgt_in += lo * TL;
                piece.tgt_out += lo * TL;
                nmt_forward_options fo = {.training = 1, .label_smoothing = 0.1f, .dropout_seed = 100 + (uint64_t)p};
                nmt_loss loss;
                ck_assert_int_eq(nmt_model_forward(m, &piece, &fo, &loss), 0);
                ck_assert_int_eq(nmt_model_backward_hooked(m, 1.0f, nmt_dist_hook(&d, p)), 0);
                ck_assert(overlap && p == 2 ? nmt_dist_hook(&d, p) != NULL : nmt_dist_hook(&d, p) == NULL);
                if (overlap && p == 2) ck_assert_int_eq(d.summing, d.num_buckets); /* all started in backward */
            }
            if (step == 2 && p == 0) m->grads[m->num_params / 2] = NAN;
            nmt_dist_hold(&d, p, m->grads, p, slots);
        }
        double totals[NMT_DIST_SLOTS];
        int finite;
        ck_assert_int_eq(nmt_dist_reduce(&d, m->grads, totals, &finite), 0);
        ck_assert_int_eq(finite, step != 2);
        if (step == 2) continue;
        if (step == 0) memcpy(out, m->grads, m->num_params * sizeof *out);
        else ck_assert_mem_eq(out, m->grads, m->num_params * sizeof *out);
    }
    nmt_dist_free(&d);
}

START_TEST(overlapped_reduce_gives_the_same_bits) {
    nmt_pool_set_threads(2);
    /* d_model 32: sublayers are not whole blocks, buckets take the blocks each range completes */
    nmt_model_config c = nmt_test_tiny_config(13, 32, 48, 2, 2);
    c.dropout = 0.1f;
    for (int v = 0; v < 2; v++) {
        c.norm_position = v ? NMT_NORM_PRE : NMT_NORM_POST;
        c.tie_embeddings = v ? NMT_TIE_NONE : NMT_TIE_ALL;
        c.positions = v ? NMT_POSITIONS_LEARNED : NMT_POSITIONS_SINUSOIDAL;
        c.max_positions = 8;
        nmt_model m;
        ck_assert_int_eq(nmt_model_init(&m, &c), 0);
        nmt_model_init_weights(&m, 3);
        float *plain = malloc(m.num_params * sizeof *plain), *overlapped = malloc(m.num_params * sizeof *overlapped);
        ck_assert(plain && overlapped);
        for (int empty_last = 0; empty_last < 2; empty_last++) {
            pieces_reduce(&m, 0, empty_last, plain);
            pieces_reduce(&m, 1, empty_last, overlapped);
            ck_assert_mem_eq(plain, overlapped, m.num_params * sizeof *plain);
        }
        free(plain);
        free(overlapped);
        nmt_model_free(&m);
    }
    nmt_pool_set_threads(1);
}
END_TEST

int main(void) {
    Suite *s = suite_create("dist");
    TCase *tc = tcase_create("dist");
    tcase_add_test(tc, piece_rows_cover_the_batch);
    tcase_add_test(tc, ranks_take_contiguous_pieces);
    tcase_add_test(tc, exact_sum_ignores_grouping_and_order);
    tcase_add_test(tc, nonfinite_blocks_are_flagged);
    tcase_add_test(tc, reduce_on_one_process);
    tcase_add_test(tc, overlapped_reduce_gives_the_same_bits);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
