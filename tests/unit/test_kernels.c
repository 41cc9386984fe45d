/* Tests of kernels: the worked numbers of the attention literature, gradient checks of every
 * backward by central differences, masks and dropout.
 *
 * Expected values are computed by hand in the comments (or by the formula named there). Gradient
 * tolerances: the kernels compute in float and the test sums losses in double, so a central
 * difference with h = 1e-2 carries roughly 1e-4 relative error from rounding and truncation;
 * rtol 1e-2 leaves room for that while a wrong term (a missing factor, a transposed product, a
 * dropped mask) changes the gradient by O(1) and fails.
 */
#include "compute/attention.h"
#include "compute/kernels.h"

#include "compute/pool.h"
#include "gradcheck.h"
#include "testing.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const gc_tolerance TOL = {1e-2, 1e-2, 1e-4};

static double dot_double(const float *a, const float *b, long n) {
    double s = 0.0;
    for (long i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

/* ---------------------------------------------------------------------------------------------- */
/* Linear */

typedef struct linear_ctx {
    int M, K, N;
    float *x, *w, *b, *y, *r; /* r: the fixed weights of the scalar loss sum(r * y) */
} linear_ctx;

static double linear_loss(void *ctx) {
    linear_ctx *c = ctx;
    nmt_linear_forward(c->y, c->x, c->w, c->b, c->M, c->K, c->N);
    return dot_double(c->y, c->r, (long)c->M * c->N);
}

START_TEST(linear_forward_and_gradients) {
    nmt_pool_set_threads(2);
    /* y = x w^T + b by hand: x = [[1,2]], w = [[1,0],[0,1],[1,1]], b = [0.5,0,-1] -> [1.5, 2, 2]. */
    float x1[2] = {1, 2}, w1[6] = {1, 0, 0, 1, 1, 1}, b1[3] = {0.5f, 0, -1}, y1[3];
    nmt_linear_forward(y1, x1, w1, b1, 1, 2, 3);
    ck_assert_float_eq(y1[0], 1.5f);
    ck_assert_float_eq(y1[1], 2.0f);
    ck_assert_float_eq(y1[2], 2.0f);

    linear_ctx c = {.M = 37, .K = 19, .N = 23};
    int M = c.M, K = c.K, N = c.N;
    c.x = malloc(sizeof(float) * M * K);
    c.w = malloc(sizeof(float) * N * K);
    c.b = malloc(sizeof(float) * N);
    c.y = malloc(sizeof(float) * M * N);
    c.r = malloc(sizeof(float) * M * N);
    gc_fill(c.x, (long)M * K, 11, 1.0f);
    gc_fill(c.w, (long)N * K, 12, 0.5f);
    gc_fill(c.b, N, 13, 0.5f);
    gc_fill(c.r, (long)M * N, 14, 1.0f);
    float *dx = malloc(sizeof(float) * M * K), *dw = calloc((size_t)N * K, sizeof(float));
    float *db = calloc((size_t)N, sizeof(float));
    nmt_linear_backward(dx, dw, db, c.r, c.x, c.w, M, K, N, 0);
    ck_assert(gc_check("linear.x", c.x, dx, (long)M * K, linear_loss, &c, TOL, 8, 1));
    ck_assert(gc_check("linear.w", c.w, dw, (long)N * K, linear_loss, &c, TOL, 8, 2));
    ck_assert(gc_check("linear.b", c.b, db, N, linear_loss, &c, TOL, 8, 3));

    /* Weight and bias gradients accumulate; dx accumulates only when asked. */
    float *dx2 = malloc(sizeof(float) * M * K);
    memcpy(dx2, dx, sizeof(float) * M * K);
    nmt_linear_backward(dx2, dw, db, c.r, c.x, c.w, M, K, N, 1);
    for (long i = 0; i < (long)M * K; i++) ck_assert_float_eq_tol(dx2[i], 2.0f * dx[i], 1e-5f);
    float *dw_once = calloc((size_t)N * K, sizeof(float)), *db_once = calloc((size_t)N, sizeof(float));
    nmt_linear_backward(NULL, dw_once, db_once, c.r, c.x, c.w, M, K, N, 0);
    for (long i = 0; i < (long)N * K; i++) ck_assert_float_eq_tol(dw[i], 2.0f * dw_once[i], 1e-4f);
    for (int i = 0; i < N; i++) ck_assert_float_eq_tol(db[i], 2.0f * db_once[i], 1e-4f);
    free(c.x);
    free(c.w);
    free(c.b);
    free(c.y);
    free(c.r);
    free(dx);
    free(dx2);
    free(dw);
    free(db);
    free(dw_once);
    free(db_once);
}
END_TEST

/* ---------------------------------------------------------------------------------------------- */
/* LayerNorm */

typedef struct layernorm_ctx {
    int M, D;
    float *x, *w, *b, *y, *mean, *rstd, *r;
} layernorm_ctx;

static double layernorm_loss(void *ctx) {
    layernorm_ctx *c = ctx;
    nmt_layernorm_forward(c->y, c->mean, c->rstd, c->x, c->w, c->b, c->M, c->D, 1e-5f);
    return dot_double(c->y, c->r, (long)c->M * c->D);
}

START_TEST(layernorm_forward_and_gradients) {
    nmt_pool_set_threads(2);
    /* x = (1, 2, 3, 4): mean 2.5, biased variance 1.25, so y = (x - 2.5) / sqrt(1.25 + eps). */
    float x1[4] = {1, 2, 3, 4}, w1[4] = {1, 1, 1, 1}, b1[4] = {0, 0, 0, 0}, y1[4], mu, rs;
    nmt_layernorm_forward(y1, &mu, &rs, x1, w1, b1, 1, 4, 0.0f);
    ck_assert_float_eq_tol(mu, 2.5f, 1e-7f);
    ck_assert_float_eq_tol(rs, 1.0f / sqrtf(1.25f), 1e-6f);
    ck_assert_float_eq_tol(y1[0], -1.3416408f, 1e-6f);
    ck_assert_float_eq_tol(y1[3], 1.3416408f, 1e-6f);

    layernorm_ctx c = {.M = 9, .D = 37}; /* D not a multiple of 16: the vector tail runs too */
    long n = (long)c.M * c.D;
    c.x = malloc(sizeof(float) * n);
    c.y = malloc(sizeof(float) * n);
    c.r = malloc(sizeof(float) * n);
    c.w = malloc(sizeof(float) * c.D);
    c.b = malloc(sizeof(float) * c.D);
    c.mean = malloc(sizeof(float) * c.M);
    c.rstd = malloc(sizeof(float) * c.M);
    gc_fill(c.x, n, 21, 2.0f);
    gc_fill(c.r, n, 22, 1.0f);
    gc_fill(c.w, c.D, 23, 1.0f);
    gc_fill(c.b, c.D, 24, 1.0f);
    layernorm_loss(&c);
    float *dx = malloc(sizeof(float) * n), *dw = calloc((size_t)c.D, sizeof(float));
    float *db = calloc((size_t)c.D, sizeof(float));
    nmt_layernorm_backward(dx, dw, db, c.r, c.x, c.mean, c.rstd, c.w, c.M, c.D, 0);
    ck_assert(gc_check("layernorm.x", c.x, dx, n, layernorm_loss, &c, TOL, 8, 4));
    ck_assert(gc_check("layernorm.w", c.w, dw, c.D, layernorm_loss, &c, TOL, 8, 5));
    ck_assert(gc_check("layernorm.b", c.b, db, c.D, layernorm_loss, &c, TOL, 8, 6));
    /* The input gradient of a LayerNorm sums to zero over each row (shifting x changes nothing). */
    for (int m = 0; m < c.M; m++) {
        double s = 0;
        for (int d = 0; d < c.D; d++) s += dx[m * c.D + d];
        ck_assert_double_eq_tol(s, 0.0, 1e-4);
    }
    float *dx2 = malloc(sizeof(float) * n);
    for (long i = 0; i < n; i++) dx2[i] = 1.0f;
    nmt_layernorm_backward(dx2, dw, db, c.r, c.x, c.mean, c.rstd, c.w, c.M, c.D, 1);
    for (long i = 0; i < n; i++) ck_assert_float_eq_tol(dx2[i], 1.0f + dx[i], 1e-5f);
    free(c.x);
    free(c.y);
    free(c.r);
    free(c.w);
    free(c.b);
    free(c.mean);
    free(c.rstd);
    free(dx);
    free(dx2);
    free(dw);
    free(db);
}
END_TEST

/* ---------------------------------------------------------------------------------------------- */
/* Softmax, positions */

START_TEST(softmax_worked_numbers) {
    /* softmax(0, 0.5, 2) = (1, e^0.5, e^2) / 10.0377 = (0.100, 0.164, 0.736). */
    float x[3] = {0.0f, 0.5f, 2.0f};
    nmt_softmax_rows(x, 1, 3);
    ck_assert_float_eq_tol(x[0], 0.0996f, 5e-4f);
    ck_assert_float_eq_tol(x[1], 0.1643f, 5e-4f);
    ck_assert_float_eq_tol(x[2], 0.7361f, 5e-4f);
    /* softmax(8, 0) = (0.99966, 0.00034): unscaled dot products of 64-d vectors saturate. */
    float y[2] = {8.0f, 0.0f};
    nmt_softmax_rows(y, 1, 2);
    ck_assert_float_eq_tol(y[0], 0.99966f, 1e-5f);
    ck_assert_float_eq_tol(y[1], 0.00034f, 1e-5f);
    /* Large scores do not overflow (the max is subtracted). */
    float z[3] = {1000.0f, 1000.0f, -1000.0f};
    nmt_softmax_rows(z, 1, 3);
    ck_assert_float_eq_tol(z[0], 0.5f, 1e-6f);
    ck_assert_float_eq_tol(z[2], 0.0f, 1e-30f);
    /* Many rows, over threads, each summing to 1. */
    nmt_pool_set_threads(2);
    enum { ROWS = 300, N = 77 };
    static float big[ROWS * N];
    gc_fill(big, ROWS * N, 7, 20.0f);
    nmt_softmax_rows(big, ROWS, N);
    for (int r = 0; r < ROWS; r++) {
        double s = 0;
        for (int j = 0; j < N; j++) s += big[r * N + j];
        ck_assert_double_eq_tol(s, 1.0, 1e-5);
    }
}
END_TEST

/* log(e^0 + e^0.5 + e^2) = 2.2395447, whether seen whole or a chunk at a time and however far from
 * 0 the scores are; nmt_first_above finds the first score over a threshold in or after a vector. */
START_TEST(logsumexp_in_chunks_and_first_above) {
    float x[40];
    for (int shift = 0; shift <= 1000; shift += 1000) {
        for (int i = 0; i < 40; i++) x[i] = (float)shift - 30.0f;
        x[3] = (float)shift, x[17] = (float)shift + 0.5f, x[33] = (float)shift + 2.0f;
        const double want = (double)shift + log(exp(0.0) + exp(0.5) + exp(2.0) + 37 * exp(-30.0));
        for (int chunk = 1; chunk <= 40; chunk++) {
            nmt_logsumexp s = {-INFINITY, 0.0f};
            for (int i = 0; i < 40; i += chunk) nmt_logsumexp_add(&s, x + i, 40 - i < chunk ? 40 - i : chunk);
            ck_assert_double_eq_tol(nmt_logsumexp_value(s), want, 2e-6 * (1 + shift));
        }
    }
    ck_assert_int_eq(nmt_first_above(x, 40, 999.0f), 3);
    ck_assert_int_eq(nmt_first_above(x, 40, 1000.2f), 17);
    ck_assert_int_eq(nmt_first_above(x, 40, 1001.0f), 33);
    ck_assert_int_eq(nmt_first_above(x, 40, 1002.0f), 40);
    ck_assert_int_eq(nmt_first_above(x + 18, 22, 1000.2f), 15);
    x[20] = NAN;
    ck_assert_int_eq(nmt_first_above(x + 18, 10, 1000.2f), 10);
    nmt_logsumexp s = {-INFINITY, 0.0f};
    nmt_logsumexp_add(&s, x, 40);
    ck_assert(isnan(nmt_logsumexp_value(s)));
}
END_TEST

START_TEST(sinusoidal_positions_worked_numbers) {
    float pe[5 * 4];
    nmt_sinusoidal_positions(pe, 5, 4);
    /* d=4: frequencies 1 and 1/100. PE(0) = (0, 1, 0, 1). */
    const float want[4][4] = {{0.0f, 1.0f, 0.0f, 1.0f},
                              {0.8415f, 0.5403f, 0.0100f, 1.0000f},
                              {0.9093f, -0.4161f, 0.0200f, 0.9998f},
                              {0.1411f, -0.9900f, 0.0300f, 0.9996f}};
    for (int p = 0; p < 4; p++)
        for (int i = 0; i < 4; i++) ck_assert_float_eq_tol(pe[p * 4 + i], want[p][i], 1e-4f);
    /* PE(p) . PE(p+1) = cos(1) + cos(0.01) = 1.5403 for every p: it depends only on the offset. */
    for (int p = 0; p < 4; p++) ck_assert_double_eq_tol(dot_double(pe + p * 4, pe + (p + 1) * 4, 4), 1.5403, 1e-4);
}
END_TEST

START_TEST(rope_turns_pairs_and_scores_depend_on_offset_only) {
    /* The standard table: pair i of position p turned by p * 10000^(-2i/head_dim). */
    float table[6 * 2 * 2];
    nmt_rope_table(table, 6, 4);
    ck_assert_float_eq_tol(table[(3 * 2 + 0) * 2 + 0], cosf(3.0f), 1e-6f);
    ck_assert_float_eq_tol(table[(3 * 2 + 0) * 2 + 1], sinf(3.0f), 1e-6f);
    ck_assert_float_eq_tol(table[(3 * 2 + 1) * 2 + 1], sinf(0.03f), 1e-6f);

    /* The worked example: theta = 30 degrees per position, q = k = (1, 0): the score of query
     * position m against key position n is cos((m - n) * 30 deg), so (3,1), (5,3), (2,0) all
     * give cos 60 deg = 0.5. */
    float deg30[6 * 2];
    for (int p = 0; p < 6; p++) {
        deg30[p * 2] = (float)cos(p * M_PI / 6.0);
        deg30[p * 2 + 1] = (float)sin(p * M_PI / 6.0);
    }
    const int pairs[3][2] = {{3, 1}, {5, 3}, {2, 0}};
    for (int i = 0; i < 3; i++) {
        float qk[4] = {1, 0, 1, 0}; /* row 0 the query, row 1 the key */
        int32_t pos[2] = {pairs[i][0], pairs[i][1]};
        nmt_rope_apply(qk, 2, deg30, pos, 2, 1, 2, 0);
        ck_assert_float_eq_tol(qk[0] * qk[2] + qk[1] * qk[3], 0.5f, 1e-6f);
    }

    /* Strided rows with several heads; inverse undoes forward; the rotation keeps norms. */
    nmt_pool_set_threads(2);
    enum { ROWS = 50, HEADS = 3, HD = 6, STRIDE = 25 };
    float big_table[64 * HD];
    nmt_rope_table(big_table, 64, HD);
    float x[ROWS * STRIDE], x0[ROWS * STRIDE];
    int32_t pos[ROWS];
    gc_fill(x, ROWS * STRIDE, 9, 1.0f);
    memcpy(x0, x, sizeof x);
    for (int r = 0; r < ROWS; r++) pos[r] = (r * 7) % 64;
    nmt_rope_apply(x, STRIDE, big_table, pos, ROWS, HEADS, HD, 0);
    ck_assert_float_eq(x[ROWS * STRIDE - 1], x0[ROWS * STRIDE - 1]); /* beyond heads*HD: untouched */
    ck_assert_float_eq_tol((float)dot_double(x + STRIDE, x + STRIDE, HEADS * HD),
                           (float)dot_double(x0 + STRIDE, x0 + STRIDE, HEADS * HD), 1e-5f);
    nmt_rope_apply(x, STRIDE, big_table, pos, ROWS, HEADS, HD, 1);
    for (int i = 0; i < ROWS * STRIDE; i++) ck_assert_float_eq_tol(x[i], x0[i], 1e-6f);
}
END_TEST

/* ---------------------------------------------------------------------------------------------- */
/* Attention */

static nmt_heads heads_of(float *data, int len, int stride) {
    nmt_heads h = {data, (long)len * stride, stride, NULL, NULL, 0};
    return h;
}

START_TEST(attention_worked_example) {
    /* Keys (1,0),(0,1),(1,1), values (2,0),(0,2),(1,1), queries (2,0),(0,2),(1,1), d = 2, scores
     * scaled by 1/sqrt(2): weight rows (0.446,0.108,0.446), (0.108,0.446,0.446),
     * (0.248,0.248,0.503) and outputs (1.337,0.663), (0.663,1.337), (1,1). */
    float q[6] = {2, 0, 0, 2, 1, 1}, k[6] = {1, 0, 0, 1, 1, 1}, v[6] = {2, 0, 0, 2, 1, 1}, out[6], w[9];
    nmt_attention_dims d = {.batch = 1, .heads = 1, .head_dim = 2, .q_len = 3, .k_len = 3, .scale = 1.0f / sqrtf(2.0f)};
    nmt_attention_forward(heads_of(out, 3, 2), w, heads_of(q, 3, 2), heads_of(k, 3, 2), heads_of(v, 3, 2), &d);
    const float want_w[9] = {0.446f, 0.108f, 0.446f, 0.108f, 0.446f, 0.446f, 0.248f, 0.248f, 0.503f};
    const float want_out[6] = {1.337f, 0.663f, 0.663f, 1.337f, 1.0f, 1.0f};
    for (int i = 0; i < 9; i++) ck_assert_float_eq_tol(w[i], want_w[i], 1e-3f);
    for (int i = 0; i < 6; i++) ck_assert_float_eq_tol(out[i], want_out[i], 1e-3f);
}
END_TEST

START_TEST(attention_scaling_by_sqrt_head_dim) {
    /* Two 64-d keys whose dot products with the query are 8 and 0: unscaled the softmax would be
     * (0.99966, 0.00034); divided by sqrt(64) = 8 the scores are (1, 0) and the weights
     * (0.731, 0.269). */
    float q[64], k[128], v[128], out[64], w[2];
    for (int i = 0; i < 64; i++) {
        q[i] = 1.0f;
        k[i] = i < 8 ? 1.0f : 0.0f;         /* q . k0 = 8 */
        k[64 + i] = i % 2 ? 1.0f : -1.0f;   /* q . k1 = 0 */
        v[i] = 1.0f;
        v[64 + i] = 0.0f;
    }
    nmt_attention_dims d = {.batch = 1, .heads = 1, .head_dim = 64, .q_len = 1, .k_len = 2, .scale = 1.0f / 8.0f};
    nmt_attention_forward(heads_of(out, 1, 64), w, heads_of(q, 1, 64), heads_of(k, 2, 64), heads_of(v, 2, 64), &d);
    ck_assert_float_eq_tol(w[0], 0.731f, 1e-3f);
    ck_assert_float_eq_tol(w[1], 0.269f, 1e-3f);
    ck_assert_float_eq_tol(out[5], 0.731f, 1e-3f);
}
END_TEST

START_TEST(attention_is_permutation_equivariant) {
    /* Q = K = V = X, no positions: "dog bites man" and "man bites dog" with dog = (2,0),
     * bites = (1,1), man = (0,2). dog's scores (4, 2, 0)/sqrt(2) give weights
     * (0.768, 0.187, 0.045) and the output (1.723, 0.277) in both sentences. */
    float x[2 * 3 * 2] = {2, 0, 1, 1, 0, 2, /* dog bites man */ 0, 2, 1, 1, 2, 0 /* man bites dog */};
    float out[12], w[18];
    nmt_attention_dims d = {.batch = 2, .heads = 1, .head_dim = 2, .q_len = 3, .k_len = 3, .scale = 1.0f / sqrtf(2.0f)};
    nmt_heads X = heads_of(x, 3, 2);
    nmt_attention_forward(heads_of(out, 3, 2), w, X, X, X, &d);
    ck_assert_float_eq_tol(out[0], 1.723f, 1e-3f);
    ck_assert_float_eq_tol(out[1], 0.277f, 1e-3f);
    /* Every word's output is the same in both orders (dog: row 0 vs row 2 of the second). */
    for (int word = 0; word < 3; word++)
        for (int i = 0; i < 2; i++) ck_assert_float_eq_tol(out[word * 2 + i], out[6 + (2 - word) * 2 + i], 1e-6f);
}
END_TEST

START_TEST(attention_masks_padding_and_future) {
    nmt_pool_set_threads(2);
    enum { B = 2, H = 2, DH = 4, T = 5, D = H * DH };
    float qkv[B * T * 3 * D], out[B * T * D], w[B * H * T * T];
    gc_fill(qkv, B * T * 3 * D, 31, 1.0f);
    int32_t lengths[B] = {3, 5};
    nmt_attention_dims d = {.batch = B, .heads = H, .head_dim = DH, .q_len = T, .k_len = T, .k_lengths = lengths,
                            .causal = 1, .scale = 0.5f};
    nmt_heads q = heads_of(qkv, T, 3 * D), k = heads_of(qkv + D, T, 3 * D), v = heads_of(qkv + 2 * D, T, 3 * D);
    nmt_attention_forward(heads_of(out, T, D), w, q, k, v, &d);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                const float *row = w + ((b * H + h) * T + t) * T;
                double s = 0;
                for (int j = 0; j < T; j++) {
                    if (j > t || j >= lengths[b]) ck_assert_float_eq(row[j], 0.0f);
                    s += row[j];
                }
                ck_assert_double_eq_tol(s, 1.0, 1e-6);
            }
    /* One decoding step: the last query alone with q_offset = T-1 sees all T keys, exactly as the
     * last row of the full causal pass. */
    float out1[B * D], w1[B * H * T];
    nmt_attention_dims step = d;
    step.q_len = 1;
    step.q_offset = T - 1;
    step.k_lengths = NULL;
    nmt_attention_forward(heads_of(out1, 1, D), w1, heads_of(qkv + (T - 1) * 3 * D, T, 3 * D), k, v, &step);
    for (int i = 0; i < D; i++) ck_assert_float_eq_tol(out1[D + i], out[(T + T - 1) * D + i], 1e-6f);
    /* A query with no visible key (length 0) gets zeros, not NaN. */
    lengths[0] = 0;
    nmt_attention_forward(heads_of(out, T, D), w, q, k, v, &d);
    for (int i = 0; i < T * D; i++) ck_assert_float_eq(out[i], 0.0f);
}
END_TEST

typedef struct attention_ctx {
    nmt_attention_dims dims;
    float *qkv, *out, *w, *r;
    long n_out;
    int D;
} attention_ctx;

static void attention_views(attention_ctx *c, nmt_heads *q, nmt_heads *k, nmt_heads *v, float *base) {
    int D = c->D, T = c->dims.q_len;
    *q = heads_of(base, T, 3 * D);
    *k = heads_of(base + D, T, 3 * D);
    *v = heads_of(base + 2 * D, T, 3 * D);
}

static double attention_loss(void *ctx) {
    attention_ctx *c = ctx;
    nmt_heads q, k, v;
    attention_views(c, &q, &k, &v, c->qkv);
    nmt_attention_forward(heads_of(c->out, c->dims.q_len, c->D), c->w, q, k, v, &c->dims);
    return dot_double(c->out, c->r, c->n_out);
}

/* Self-attention on a fused q|k|v buffer, with padding, causality and weight dropout. */
START_TEST(attention_gradients) {
    nmt_pool_set_threads(2);
    enum { B = 3, H = 2, DH = 5, T = 6, D = H * DH };
    int32_t lengths[B] = {6, 4, 1};
    for (int variant = 0; variant < 3; variant++) {
        attention_ctx c = {.D = D, .n_out = B * T * D};
        c.dims = (nmt_attention_dims){.batch = B, .heads = H, .head_dim = DH, .q_len = T, .k_len = T,
                                      .k_lengths = lengths, .causal = variant != 1, .scale = 1.0f / sqrtf(DH)};
        if (variant == 2) c.dims.dropout = (nmt_dropout){.rate = 0.3f, .seed = 77, .stream = 5};
        c.qkv = malloc(sizeof(float) * B * T * 3 * D);
        c.out = malloc(sizeof(float) * B * T * D);
        c.r = malloc(sizeof(float) * B * T * D);
        c.w = malloc(sizeof(float) * B * H * T * T);
        gc_fill(c.qkv, B * T * 3 * D, 40 + variant, 1.5f);
        gc_fill(c.r, B * T * D, 50 + variant, 1.0f);
        attention_loss(&c);
        float *dqkv = malloc(sizeof(float) * B * T * 3 * D), *dw = malloc(sizeof(float) * B * H * T * T);
        for (int i = 0; i < B * T * 3 * D; i++) dqkv[i] = NAN; /* every element must be written */
        nmt_heads q, k, v, dq, dk, dv;
        attention_views(&c, &q, &k, &v, c.qkv);
        attention_views(&c, &dq, &dk, &dv, dqkv);
        nmt_attention_backward(dq, dk, dv, dw, heads_of(c.r, T, D), c.w, q, k, v, &c.dims);
        for (int i = 0; i < B * T * 3 * D; i++) ck_assert(isfinite(dqkv[i]));
        char name[64];
        snprintf(name, sizeof name, "attention(variant %d).qkv", variant);
        ck_assert(gc_check(name, c.qkv, dqkv, B * T * 3 * D, attention_loss, &c, TOL, 12, 60 + variant));
        free(c.qkv);
        free(c.out);
        free(c.r);
        free(c.w);
        free(dqkv);
        free(dw);
    }
}
END_TEST

typedef struct xent_ctx {
    float *logits, *work, *loss, *nll;
    const int32_t *targets;
    int rows, V;
} xent_ctx;

static double xent_loss(void *ctx) {
    xent_ctx *c = ctx;
    memcpy(c->work, c->logits, sizeof(float) * c->rows * c->V);
    nmt_cross_entropy_rows(c->work, c->loss, c->nll, c->targets, c->rows, c->V, 0.1f, 0);
    double s = 0;
    for (int r = 0; r < c->rows; r++) s += c->loss[r];
    return s;
}

START_TEST(cross_entropy_worked_numbers_and_gradient) {
    /* logits (0, 0.5, 2), target 2: log p = (-2.30636, -1.80636, -0.30636); NLL 0.30636; with
     * smoothing 0.1 the loss is 0.9 * 0.30636 + 0.1 * (2.30636 + 1.80636 + 0.30636) / 3 = 0.42303;
     * the gradient is p - q = (0.09962 - 0.03333, 0.16425 - 0.03333, 0.73612 - 0.93333). */
    float z[3] = {0.0f, 0.5f, 2.0f}, loss, nll;
    int32_t target = 2;
    nmt_cross_entropy_rows(z, &loss, &nll, &target, 1, 3, 0.1f, 1);
    ck_assert_float_eq_tol(nll, 0.30636f, 1e-5f);
    ck_assert_float_eq_tol(loss, 0.42303f, 1e-5f);
    ck_assert_float_eq_tol(z[0], 0.06629f, 1e-5f);
    ck_assert_float_eq_tol(z[1], 0.13092f, 1e-5f);
    ck_assert_float_eq_tol(z[2], -0.19721f, 1e-5f);
    /* Many rows, over threads, against central differences. */
    nmt_pool_set_threads(2);
    enum { ROWS = 40, V = 1000 };
    xent_ctx c = {.rows = ROWS, .V = V};
    c.logits = malloc(sizeof(float) * ROWS * V);
    c.work = malloc(sizeof(float) * ROWS * V);
    c.loss = malloc(sizeof(float) * ROWS);
    c.nll = malloc(sizeof(float) * ROWS);
    int32_t targets[ROWS];
    for (int r = 0; r < ROWS; r++) targets[r] = (r * 37) % V;
    c.targets = targets;
    gc_fill(c.logits, ROWS * V, 71, 3.0f);
    float *grad = malloc(sizeof(float) * ROWS * V);
    memcpy(grad, c.logits, sizeof(float) * ROWS * V);
    nmt_cross_entropy_rows(grad, c.loss, c.nll, targets, ROWS, V, 0.1f, 1);
    ck_assert(gc_check("cross_entropy.logits", c.logits, grad, ROWS * V, xent_loss, &c, TOL, 8, 72));
    free(c.logits);
    free(c.work);
    free(c.loss);
    free(c.nll);
    free(grad);
}
END_TEST

typedef struct pairs_ctx {
    xent_ctx x;
    float alpha;
} pairs_ctx;

static double pairs_loss(void *ctx) {
    pairs_ctx *c = ctx;
    memcpy(c->x.work, c->x.logits, sizeof(float) * c->x.rows * c->x.V);
    nmt_cross_entropy_pairs(c->x.work, c->x.loss, c->x.nll, c->x.targets, c->x.rows / 2, c->x.V, 0.1f, c->alpha, 0);
    double s = 0;
    for (int r = 0; r < c->x.rows; r++) s += c->x.loss[r];
    return s;
}

/* A pair's float loss is ~30 here (ulp 2e-6): a step of 5e-2 keeps the central difference's rounding
 * (ulp / 2h) well under the 1e-4 floor. */
static const gc_tolerance PAIRS_TOL = {5e-2, 1e-2, 1e-4};

START_TEST(cross_entropy_pairs_worked_numbers_and_gradient) {
    /* Twins (0, 0.5, 2) and (1, 0, 0), target 2: log p_a = (-2.30636, -1.80636, -0.30636), log p_b =
     * (-0.55144, -1.55144, -1.55144); KL(p_a||p_b) = 0.69984, KL(p_b||p_a) = 0.80117; with alpha 2 each
     * row adds 2/4 * 1.50101 = 0.75051 to its label-smoothed loss (a's 0.42303, b's 1.51811). */
    float z[6] = {0.0f, 0.5f, 2.0f, 1.0f, 0.0f, 0.0f}, loss[2], nll[2];
    int32_t targets[2] = {2, 2};
    nmt_cross_entropy_pairs(z, loss, nll, targets, 1, 3, 0.1f, 2.0f, 0);
    ck_assert_float_eq_tol(nll[0], 0.30636f, 1e-5f);
    ck_assert_float_eq_tol(nll[1], 1.55144f, 1e-5f);
    ck_assert_float_eq_tol(loss[0], 0.42303f + 0.75051f, 1e-4f);
    ck_assert_float_eq_tol(loss[1], 1.51811f + 0.75051f, 1e-4f);
    /* Identical twins: no divergence, so the loss and the gradient are the cross-entropy's. */
    float same[6] = {0.0f, 0.5f, 2.0f, 0.0f, 0.5f, 2.0f};
    nmt_cross_entropy_pairs(same, loss, nll, targets, 1, 3, 0.1f, 5.0f, 1);
    ck_assert_float_eq_tol(loss[1], 0.42303f, 1e-5f);
    for (int k = 0; k < 2; k++) {
        ck_assert_float_eq_tol(same[3 * k], 0.06629f, 1e-5f);
        ck_assert_float_eq_tol(same[3 * k + 2], -0.19721f, 1e-5f);
    }
    /* Many pairs, over threads, against central differences. */
    nmt_pool_set_threads(2);
    enum { ROWS = 40, V = 1000 };
    pairs_ctx c = {{.rows = ROWS, .V = V}, 3.0f};
    c.x.logits = malloc(sizeof(float) * ROWS * V);
    c.x.work = malloc(sizeof(float) * ROWS * V);
    c.x.loss = malloc(sizeof(float) * ROWS);
    c.x.nll = malloc(sizeof(float) * ROWS);
    float *grad = malloc(sizeof(float) * ROWS * V);
    ck_assert(c.x.logits && c.x.work && c.x.loss && c.x.nll && grad);
    int32_t pair_targets[ROWS];
    for (int r = 0; r < ROWS; r++) pair_targets[r] = (r / 2 * 37) % V;
    c.x.targets = pair_targets;
    gc_fill(c.x.logits, ROWS * V, 73, 3.0f);
    memcpy(grad, c.x.logits, sizeof(float) * ROWS * V);
    nmt_cross_entropy_pairs(grad, c.x.loss, c.x.nll, pair_targets, ROWS / 2, V, 0.1f, c.alpha, 1);
    ck_assert(gc_check("cross_entropy_pairs.logits", c.x.logits, grad, ROWS * V, pairs_loss, &c, PAIRS_TOL, 8, 74));
    free(c.x.logits);
    free(c.x.work);
    free(c.x.loss);
    free(c.x.nll);
    free(grad);
}
END_TEST

/* ---------------------------------------------------------------------------------------------- */
/* ReLU and dropout */

START_TEST(relu_forward_and_backward) {
    float x[4] = {-1.0f, 0.0f, 2.0f, -0.5f}, dx[4] = {1, 1, 1, 1};
    nmt_activation_forward(NMT_ACTIVATION_RELU, x, 4);
    ck_assert_float_eq(x[0], 0.0f);
    ck_assert_float_eq(x[2], 2.0f);
    nmt_relu_backward(dx, x, 4);
    ck_assert_float_eq(dx[0], 0.0f);
    ck_assert_float_eq(dx[1], 0.0f);
    ck_assert_float_eq(dx[2], 1.0f);
}
END_TEST

/* An activation over x against the worked numbers want (Python's math, float64), with no overflow far
 * from 0; n <= 8. */
static void check_activation(nmt_activation kind, const float *x, const double *want, int n) {
    float y[8];
    memcpy(y, x, (size_t)n * sizeof *y);
    nmt_activation_forward(kind, y, n);
    for (int i = 0; i < n; i++)
        ck_assert_msg(fabs(y[i] - want[i]) <= 1e-6 * (1 + fabs(want[i])), "activation %d (%g) = %.9g, want %.9g",
                      (int)kind, x[i], y[i], want[i]);
}

START_TEST(activation_worked_numbers) {
    const float x[7] = {0.0f, 1.0f, -1.0f, 2.5f, -3.0f, -100.0f, 100.0f};
    /* swish x sigmoid(x) */
    check_activation(NMT_ACTIVATION_SWISH, x, (const double[]){0.0, 0.7310585786, -0.2689414214, 2.3103545499,
                                                                -0.1422776195, -3.720076e-42, 100.0}, 7);
    /* gelu 0.5 x (1 + erf(x / sqrt 2)) */
    check_activation(NMT_ACTIVATION_GELU, x, (const double[]){0.0, 0.8413447460685429, -0.15865525393145707,
                                                               2.4844758366855597, -0.00404969409489031, 0.0, 100.0}, 7);
    /* gelu_tanh 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
    check_activation(NMT_ACTIVATION_GELU_TANH, x, (const double[]){0.0, 0.8411919906082768, -0.15880800939172324,
                                                                    2.484915733910001, -0.0036373920817729943, 0.0,
                                                                    100.0}, 7);
    /* gelu_sigmoid x sigmoid(1.702 x) */
    check_activation(NMT_ACTIVATION_GELU_SIGMOID, x, (const double[]){0.0, 0.8457957659328212, -0.1542042340671787,
                                                                       2.46501383495143, -0.018071309707785966, 0.0,
                                                                       100.0}, 7);
}
END_TEST

START_TEST(dropout_masks_are_pure_functions_of_seed_and_index) {
    enum { N = 200000 };
    float *ones = malloc(sizeof(float) * N), *a = malloc(sizeof(float) * N), *b = malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) ones[i] = 1.0f;
    nmt_dropout drop = {.rate = 0.1f, .seed = 1234, .stream = 3};
    nmt_pool_set_threads(1);
    nmt_dropout_add(a, NULL, ones, drop, N);
    nmt_pool_set_threads(2);
    nmt_dropout_add(b, NULL, ones, drop, N);
    /* Same masks with 1 and 2 threads, bit for bit. */
    ck_assert_int_eq(memcmp(a, b, sizeof(float) * N), 0);
    long kept = 0;
    for (int i = 0; i < N; i++) {
        ck_assert(a[i] == 0.0f || a[i] == 1.0f / 0.9f);
        ck_assert_int_eq(a[i] != 0.0f, nmt_dropout_keep(drop, (uint64_t)i));
        kept += a[i] != 0.0f;
    }
    /* The kept fraction is 0.9 within 4 standard deviations (sqrt(N p (1-p)) = 134 elements). */
    ck_assert_int_lt(labs(kept - (long)(0.9 * N)), 4 * 134);
    /* Another stream or seed gives another mask (agreement would be 0.82 for independent masks). */
    nmt_dropout other = drop;
    other.stream = 4;
    long same = 0;
    for (int i = 0; i < N; i++) same += nmt_dropout_keep(other, (uint64_t)i) == (a[i] != 0.0f);
    ck_assert_int_lt(labs(same - (long)(0.82 * N)), 4 * 172);
    /* Residual form and backward use the same mask. */
    nmt_dropout_add(b, ones, ones, drop, N);
    for (int i = 0; i < N; i++) ck_assert_float_eq(b[i], 1.0f + a[i]);
    nmt_dropout_backward(b, ones, drop, N, 0);
    ck_assert_int_eq(memcmp(a, b, sizeof(float) * N), 0);
    nmt_dropout_backward(b, ones, drop, N, 1);
    for (int i = 0; i < N; i++) ck_assert_float_eq(b[i], 2.0f * a[i]);
    /* rate 0 is the identity. */
    nmt_dropout none = {0};
    nmt_dropout_add(b, NULL, ones, none, N);
    for (int i = 0; i < N; i++) ck_assert_float_eq(b[i], 1.0f);
    free(ones);
    free(a);
    free(b);
}
END_TEST

static Suite *kernels_suite(void) {
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, linear_forward_and_gradients);
    tcase_add_test(tc, activation_worked_numbers);
    tcase_add_test(tc, layernorm_forward_and_gradients);
    tcase_add_test(tc, softmax_worked_numbers);
    tcase_add_test(tc, logsumexp_in_chunks_and_first_above);
    tcase_add_test(tc, sinusoidal_positions_worked_numbers);
    tcase_add_test(tc, rope_turns_pairs_and_scores_depend_on_offset_only);
    tcase_add_test(tc, attention_worked_example);
    tcase_add_test(tc, attention_scaling_by_sqrt_head_dim);
    tcase_add_test(tc, attention_is_permutation_equivariant);
    tcase_add_test(tc, attention_masks_padding_and_future);
    tcase_add_test(tc, attention_gradients);
    tcase_add_test(tc, cross_entropy_worked_numbers_and_gradient);
    tcase_add_test(tc, cross_entropy_pairs_worked_numbers_and_gradient);
    tcase_add_test(tc, relu_forward_and_backward);
    tcase_add_test(tc, dropout_masks_are_pure_functions_of_seed_and_index);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return nmt_test_run(kernels_suite()); }
