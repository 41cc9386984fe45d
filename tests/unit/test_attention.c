/* Tests of attention: the tiled forward and backward against a naive double-precision reference at
 * shapes that exercise every tile and tail (one query, odd head sizes, fewer keys than a tile,
 * causal masks with a query offset, key lengths including 0, dropout, shared cache slots, keys
 * reached through per-key paths), and
 * the determinism rules: a row's results do not depend on the batch around it or on its padding,
 * nor on the thread count, and a decoding step's query gets the bits it gets among all the queries. Attention on stored (float16, int8) keys and values is
 * attention on their widened floats, bit for bit, and within their rounding of the reference.
 *
 * Tolerance: the kernels sum at most 80 products of values below 2 in float, so outputs carry
 * about 1e-6 relative error; 2e-5 + 2e-5 |reference| passes that and fails any wrong term (a
 * missed mask or a dropped factor moves a value by O(0.01) or more).
 */
#include "compute/attention.h"

#include "compute/kernels.h"
#include "compute/qgemm.h"
#include "compute/pool.h"
#include "testing.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One test problem: q, dout [B, Tq, H*dh] and k, v [B or slots, Tk, H*dh], each in its own buffer
 * with rows `pad` floats wider than H*dh (so strides are not the tight ones). */
typedef struct problem {
    nmt_attention_dims d;
    int32_t lengths[8], slot[8], path[8 * 160];
    int use_slots, pad; /* use_slots 1: keys and values through slot; 2: through path */
    float *q, *k, *v, *dout;
    float *out, *w, *dq, *dk, *dv, *dw;
} problem;

static long row_width(const problem *p) { return (long)p->d.heads * p->d.head_dim + p->pad; }
static long q_size(const problem *p) { return (long)p->d.batch * p->d.q_len * row_width(p); }
static long k_size(const problem *p) { return (long)p->d.batch * p->d.k_len * row_width(p); }
static long w_size(const problem *p) { return (long)p->d.batch * p->d.heads * p->d.q_len * p->d.k_len; }

static nmt_heads view(const problem *p, float *data, int len, int slotted) {
    const int slot = slotted && p->use_slots == 1, path = slotted && p->use_slots == 2;
    nmt_heads h = {data, (long)len * row_width(p), row_width(p), slot ? p->slot : NULL, path ? p->path : NULL,
                   p->d.k_len};
    return h;
}

/* Key or value j of batch row b, head h, in x (p->k or p->v) as the views reach it. */
static const float *key_row(const problem *p, const float *x, int b, int h, int j) {
    const int s = p->use_slots == 2 ? p->path[b * p->d.k_len + j] : p->use_slots ? p->slot[b] : b;
    return x + ((long)s * p->d.k_len + j) * row_width(p) + (long)h * p->d.head_dim;
}

static float *filled(long n, unsigned seed) {
    float *x = malloc(sizeof(float) * (size_t)n);
    ck_assert_ptr_nonnull(x);
    for (long i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)((seed >> 8) / 16777216.0 * 3.0 - 1.5);
    }
    return x;
}

static void problem_init(problem *p, unsigned seed) {
    p->q = filled(q_size(p), seed);
    p->dout = filled(q_size(p), seed + 1);
    p->k = filled(k_size(p), seed + 2);
    p->v = filled(k_size(p), seed + 3);
    p->out = filled(q_size(p), 0);
    p->dq = filled(q_size(p), 0);
    p->dk = filled(k_size(p), 0);
    p->dv = filled(k_size(p), 0);
    p->w = filled(w_size(p), 0);
    p->dw = filled(w_size(p), 0);
    if (p->use_slots) /* rows read their keys and values from other rows' blocks */
        for (int b = 0; b < p->d.batch; b++) {
            p->slot[b] = (b * 5 + 2) % p->d.batch;
            for (int j = 0; j < p->d.k_len; j++) p->path[b * p->d.k_len + j] = (b * 5 + 2 + 3 * j) % p->d.batch;
        }
}

static void problem_free(problem *p) {
    float *all[] = {p->q, p->k, p->v, p->dout, p->out, p->w, p->dq, p->dk, p->dv, p->dw};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
}

static void run(problem *p) {
    const int Tq = p->d.q_len, Tk = p->d.k_len;
    nmt_attention_forward(view(p, p->out, Tq, 0), p->w, view(p, p->q, Tq, 0), view(p, p->k, Tk, 1),
                          view(p, p->v, Tk, 1), &p->d);
    if (p->use_slots) return; /* the backward never reads shared blocks */
    nmt_attention_backward(view(p, p->dq, Tq, 0), view(p, p->dk, Tk, 0), view(p, p->dv, Tk, 0), p->dw,
                           view(p, p->dout, Tq, 0), p->w, view(p, p->q, Tq, 0), view(p, p->k, Tk, 0),
                           view(p, p->v, Tk, 0), &p->d);
}

static double *zeros(long n) {
    double *x = calloc((size_t)n, sizeof(double));
    ck_assert_ptr_nonnull(x);
    return x;
}

static void expect_close(const char *what, const float *got, const double *want, int b, int h, int t, int n) {
    for (int i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= 2e-5 + 2e-5 * fabs(want[i])))
            ck_abort_msg("%s (b %d, h %d, row %d, %d): %.9g, want %.9g", what, b, h, t, i, got[i], want[i]);
}

/* The reference, in double, straight from the definitions; checks every output of run(p). */
static void check_against_reference(const problem *p) {
    const nmt_attention_dims *d = &p->d;
    const int Tq = d->q_len, Tk = d->k_len, dh = d->head_dim;
    const long width = row_width(p);
    double *P = zeros(Tk), *M = zeros((long)Tq * Tk), *W = zeros((long)Tq * Tk), *dS = zeros((long)Tq * Tk);
    double *o = zeros(dh), *dkj = zeros(dh), *dvj = zeros(dh);
    for (int b = 0; b < d->batch; b++)
        for (int h = 0; h < d->heads; h++) {
            const long item = (long)b * d->heads + h;
            const float *q = p->q + (long)b * Tq * width + h * dh, *dout = p->dout + (long)b * Tq * width + h * dh;
            for (int t = 0; t < Tq; t++) {
                int limit = d->k_lengths && d->k_lengths[b] < Tk ? d->k_lengths[b] : Tk;
                if (d->causal && t + d->q_offset + 1 < limit) limit = t + d->q_offset + 1;
                double max = -INFINITY, sum = 0.0;
                for (int j = 0; j < Tk; j++) {
                    double score = 0.0;
                    for (int i = 0; i < dh; i++) score += (double)q[t * width + i] * key_row(p, p->k, b, h, j)[i];
                    P[j] = j < limit ? score * d->scale : -INFINITY;
                    if (P[j] > max) max = P[j];
                }
                for (int j = 0; j < Tk; j++) sum += P[j] = j < limit ? exp(P[j] - max) : 0.0;
                memset(o, 0, sizeof(double) * (size_t)dh);
                for (int j = 0; j < Tk; j++) {
                    const uint64_t index = (uint64_t)((item * Tq + t) * Tk + j);
                    const double keep = nmt_dropout_keep(d->dropout, index) ? 1.0 : 0.0;
                    W[t * Tk + j] = P[j] = limit ? P[j] / sum : 0.0;
                    M[t * Tk + j] = d->dropout.rate > 0.0f ? keep / (1.0 - d->dropout.rate) : 1.0;
                    for (int i = 0; i < dh; i++) o[i] += P[j] * M[t * Tk + j] * key_row(p, p->v, b, h, j)[i];
                }
                float *w = p->w + (item * Tq + t) * Tk;
                expect_close("weights", w, P, b, h, t, Tk);
                expect_close("out", p->out + ((long)b * Tq + t) * width + h * dh, o, b, h, t, dh);
                /* dS = P * (dP - rowsum(P * dP)) * scale with dP = (dO V^T) * M. */
                double rowdot = 0.0;
                for (int j = 0; j < Tk; j++) {
                    double dp = 0.0;
                    for (int i = 0; i < dh; i++) dp += (double)dout[t * width + i] * key_row(p, p->v, b, h, j)[i];
                    dS[t * Tk + j] = dp * M[t * Tk + j];
                    rowdot += W[t * Tk + j] * dS[t * Tk + j];
                }
                for (int j = 0; j < Tk; j++) dS[t * Tk + j] = W[t * Tk + j] * (dS[t * Tk + j] - rowdot) * d->scale;
            }
            if (p->use_slots) continue;
            for (int t = 0; t < Tq; t++) {
                memset(o, 0, sizeof(double) * (size_t)dh);
                for (int j = 0; j < Tk; j++)
                    for (int i = 0; i < dh; i++) o[i] += dS[t * Tk + j] * key_row(p, p->k, b, h, j)[i];
                expect_close("dq", p->dq + ((long)b * Tq + t) * width + h * dh, o, b, h, t, dh);
            }
            for (int j = 0; j < Tk; j++) {
                memset(dkj, 0, sizeof(double) * (size_t)dh);
                memset(dvj, 0, sizeof(double) * (size_t)dh);
                for (int t = 0; t < Tq; t++)
                    for (int i = 0; i < dh; i++) {
                        dkj[i] += dS[t * Tk + j] * q[t * width + i];
                        dvj[i] += W[t * Tk + j] * M[t * Tk + j] * dout[t * width + i];
                    }
                expect_close("dk", p->dk + ((long)b * Tk + j) * width + h * dh, dkj, b, h, j, dh);
                expect_close("dv", p->dv + ((long)b * Tk + j) * width + h * dh, dvj, b, h, j, dh);
            }
        }
    free(P);
    free(M);
    free(W);
    free(dS);
    free(o);
    free(dkj);
    free(dvj);
}

typedef struct shape {
    int batch, heads, head_dim, q_len, k_len, causal, q_offset, lengths, dropout, slots;
} shape;

START_TEST(attention_matches_double_reference) {
    /* lengths: 0 = none (all keys), 1 = per-row lengths below k_len (one of them 0). */
    const shape shapes[] = {
        {3, 2, 64, 1, 21, 0, 0, 1, 0, 0},  /* one query per row (a decoding step), padded keys */
        {2, 2, 64, 1, 9, 1, 8, 0, 0, 1},   /* a decoding step's self-attention through slots */
        {3, 2, 64, 1, 9, 1, 8, 0, 0, 2},   /* ... through paths (each key in another row's block) */
        {2, 3, 24, 7, 5, 0, 0, 1, 0, 0},   /* head size 24 (16 + 8), fewer keys than a tile */
        {2, 2, 40, 6, 6, 1, 0, 0, 0, 0},   /* head size 40 (2 x 16 + 8), causal */
        {2, 2, 5, 5, 3, 0, 0, 0, 0, 0},    /* head size 5 (scalar tails only), 5 queries: a tail */
        {3, 2, 17, 9, 13, 1, 4, 1, 1, 0},  /* causal with an offset, lengths, dropout */
        {2, 1, 80, 3, 70, 0, 0, 1, 1, 0},  /* more keys than a dropout block (64), dropout */
        {2, 2, 64, 18, 18, 1, 0, 0, 1, 0}, /* the decoder's causal self-attention with dropout */
        {2, 4, 64, 13, 11, 0, 0, 1, 0, 1}, /* cross-attention shape through slots */
        {1, 1, 8, 2, 1, 0, 0, 0, 0, 0},    /* one key */
    };
    for (int threads = 1; threads <= 2; threads++) {
        nmt_pool_set_threads(threads);
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            const shape *s = &shapes[i];
            problem p = {.pad = 3, .use_slots = s->slots};
            p.d = (nmt_attention_dims){.batch = s->batch, .heads = s->heads, .head_dim = s->head_dim,
                                       .q_len = s->q_len, .k_len = s->k_len, .causal = s->causal,
                                       .q_offset = s->q_offset, .scale = 1.0f / sqrtf((float)s->head_dim)};
            if (s->dropout) p.d.dropout = (nmt_dropout){.rate = 0.25f, .seed = 9, .stream = (uint32_t)i};
            if (s->lengths) {
                for (int b = 0; b < s->batch; b++) p.lengths[b] = b == 1 ? 0 : s->k_len - 1 - 2 * b;
                p.d.k_lengths = p.lengths;
            }
            problem_init(&p, 100 + (unsigned)i);
            run(&p);
            check_against_reference(&p);
            problem_free(&p);
        }
    }
}
END_TEST

/* Rows [0, len) of `rows` rows of `width`, at `stride` apart in a and b, bit for bit. */
static void expect_same_rows(const char *what, const float *a, long a_stride, const float *b, long b_stride, int len,
                             int width) {
    for (int t = 0; t < len; t++)
        ck_assert_msg(memcmp(a + t * a_stride, b + t * b_stride, sizeof(float) * (size_t)width) == 0,
                      "%s row %d differs", what, t);
}

/* The same sentence alone (its own length, no padding) and as row 1 of a batch padded to T: every
 * output of its real positions is bit-identical (padded query rows carry a zero gradient, as the
 * masked loss gives them). Encoder-style (key lengths) and decoder-style (causal) attention. */
START_TEST(attention_rows_do_not_depend_on_the_batch) {
    enum { H = 2, DH = 40, L = 11, T = 19, B = 3 };
    for (int causal = 0; causal <= 1; causal++) {
        problem alone = {.pad = 0}, batch = {.pad = 0};
        alone.d = (nmt_attention_dims){.batch = 1, .heads = H, .head_dim = DH, .q_len = L, .k_len = L,
                                       .causal = causal, .scale = 0.3f};
        batch.d = alone.d;
        batch.d.batch = B, batch.d.q_len = T, batch.d.k_len = T;
        if (!causal) {
            alone.lengths[0] = L;
            batch.lengths[0] = T, batch.lengths[1] = L, batch.lengths[2] = 5;
            alone.d.k_lengths = alone.lengths;
            batch.d.k_lengths = batch.lengths;
        }
        problem_init(&alone, 7);
        problem_init(&batch, 8);
        const long width = H * DH, row1 = (long)T * width;
        float *in_alone[] = {alone.q, alone.k, alone.v, alone.dout}, *in_batch[] = {batch.q, batch.k, batch.v, batch.dout};
        for (int i = 0; i < 4; i++) {
            memcpy(in_batch[i] + row1, in_alone[i], sizeof(float) * (size_t)(L * width));
            if (i == 3) memset(in_batch[i] + row1 + L * width, 0, sizeof(float) * (size_t)((T - L) * width));
        }
        run(&alone);
        run(&batch);
        expect_same_rows("out", alone.out, width, batch.out + row1, width, L, (int)width);
        expect_same_rows("dq", alone.dq, width, batch.dq + row1, width, L, (int)width);
        expect_same_rows("dk", alone.dk, width, batch.dk + row1, width, L, (int)width);
        expect_same_rows("dv", alone.dv, width, batch.dv + row1, width, L, (int)width);
        for (int h = 0; h < H; h++)
            expect_same_rows("weights", alone.w + (long)h * L * L, L, batch.w + ((long)H + h) * T * T, T, L, L);
        problem_free(&alone);
        problem_free(&batch);
    }
}
END_TEST

/* 1, 2 and 3 threads: every output bit-identical, over a batch big enough for many pool units. */
START_TEST(attention_is_identical_on_any_thread_count) {
    problem p[3];
    for (int n = 0; n < 3; n++) {
        nmt_pool_set_threads(n + 1);
        p[n] = (problem){.pad = 1};
        p[n].d = (nmt_attention_dims){.batch = 8, .heads = 4, .head_dim = 64, .q_len = 17, .k_len = 15,
                                      .scale = 0.125f, .dropout = {.rate = 0.1f, .seed = 3, .stream = 1}};
        for (int b = 0; b < 8; b++) p[n].lengths[b] = 15 - b;
        p[n].d.k_lengths = p[n].lengths;
        problem_init(&p[n], 21);
        run(&p[n]);
    }
    for (int n = 1; n < 3; n++) {
        ck_assert_int_eq(memcmp(p[0].out, p[n].out, sizeof(float) * (size_t)q_size(&p[0])), 0);
        ck_assert_int_eq(memcmp(p[0].w, p[n].w, sizeof(float) * (size_t)w_size(&p[0])), 0);
        ck_assert_int_eq(memcmp(p[0].dq, p[n].dq, sizeof(float) * (size_t)q_size(&p[0])), 0);
        ck_assert_int_eq(memcmp(p[0].dk, p[n].dk, sizeof(float) * (size_t)k_size(&p[0])), 0);
        ck_assert_int_eq(memcmp(p[0].dv, p[n].dv, sizeof(float) * (size_t)k_size(&p[0])), 0);
    }
    for (int n = 0; n < 3; n++) problem_free(&p[n]);
}
END_TEST

/* Stored keys and values (kvstore.h) of problem p in `format`: tight rows [slots, Tk, H*dh], and
 * their widened floats in p's own padded layout (kf, vf). */
typedef struct stored_problem {
    unsigned char *k, *v;
    float *kf, *vf, *k_factor, *v_factor;
} stored_problem;

static stored_problem store(const problem *p, nmt_kv_format format) {
    const nmt_attention_dims *d = &p->d;
    const int W = d->heads * d->head_dim, rows = d->batch * d->k_len;
    stored_problem s = {malloc((size_t)rows * W * 4), malloc((size_t)rows * W * 4), filled(k_size(p), 0),
                        filled(k_size(p), 0), malloc(sizeof(float) * (size_t)rows * d->heads),
                        malloc(sizeof(float) * (size_t)rows * d->heads)};
    ck_assert(s.k && s.v && s.k_factor && s.v_factor);
    nmt_kv_store(format, s.k, s.k_factor, 0, p->k, row_width(p), rows, d->heads, d->head_dim);
    nmt_kv_store(format, s.v, s.v_factor, 0, p->v, row_width(p), rows, d->heads, d->head_dim);
    for (int r = 0; r < rows; r++)
        for (int h = 0; h < d->heads; h++) {
            const size_t at = (size_t)r * W + (size_t)h * d->head_dim;
            float *kf = s.kf + r * row_width(p) + h * d->head_dim, *vf = s.vf + r * row_width(p) + h * d->head_dim;
            nmt_kv_widen(format, kf, d->head_dim, s.k, s.k_factor, at, W, NULL, 0, 1, d->head_dim, d->head_dim);
            nmt_kv_widen(format, vf, d->head_dim, s.v, s.v_factor, at, W, NULL, 0, 1, d->head_dim, d->head_dim);
        }
    return s;
}

static void stored_free(stored_problem *s) {
    void *all[] = {s->k, s->v, s->kf, s->vf, s->k_factor, s->v_factor};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
}

static nmt_kv_heads stored_view(const problem *p, const void *data, const float *factor, nmt_kv_format format) {
    const long W = (long)p->d.heads * p->d.head_dim;
    nmt_kv_heads h = {data,   factor, p->d.k_len * W, W, p->use_slots == 1 ? p->slot : NULL, format,
                      p->use_slots == 2 ? p->path : NULL, p->d.k_len};
    return h;
}

static void run_stored(problem *p, const stored_problem *s, nmt_kv_format format, float *out, float *w) {
    nmt_attention_forward_stored(view(p, out, p->d.q_len, 0), w, view(p, p->q, p->d.q_len, 0),
                                 stored_view(p, s->k, s->k_factor, format), stored_view(p, s->v, s->v_factor, format),
                                 &p->d);
}

/* Every query t of `all` (already run with all its queries) decoded alone as a step (q_len 1,
 * q_offset t) through nmt_attention_forward, or over s's int8 keys and values: each step's output
 * row and weights are the bits of query t's. */
static void expect_steps_equal_all(const problem *all, const stored_problem *s) {
    const int B = all->d.batch, H = all->d.heads, T = all->d.q_len;
    const long width = row_width(all);
    for (int t = 0; t < T; t++) {
        problem step = *all;
        step.d.q_len = 1, step.d.q_offset = t;
        float *q = filled((long)B * width, 0), *out = filled((long)B * width, 0), *w = filled((long)B * H * T, 0);
        for (int b = 0; b < B; b++)
            memcpy(q + b * width, all->q + ((long)b * T + t) * width, sizeof(float) * (size_t)width);
        step.q = q;
        if (s)
            run_stored(&step, s, NMT_KV_I8, out, w);
        else
            nmt_attention_forward(view(&step, out, 1, 0), w, view(&step, q, 1, 0), view(&step, all->k, T, 1),
                                  view(&step, all->v, T, 1), &step.d);
        for (int b = 0; b < B; b++) {
            expect_same_rows("out", out + b * width, width, all->out + ((long)b * T + t) * width, width, 1,
                             H * all->d.head_dim);
            for (int h = 0; h < H; h++)
                expect_same_rows("weights", w + ((long)b * H + h) * T, T, all->w + (((long)b * H + h) * T + t) * T, T,
                                 1, T);
        }
        free(q);
        free(out);
        free(w);
    }
}

/* Each output within what rounding the keys and values allows, against float64 on the unrounded
 * ones. A key value x is off by at most e_k |x| (float16: e = 2^-11, the 11-bit significand's half
 * ulp) or by half its head's factor (int8), so a score by at most es = scale sum_i |q_i| |dk_i|;
 * softmax weights then move by at most (e^(2 es) - 1) of themselves and the output by that times
 * max |v| plus the values' own error. */
static void expect_within_rounding(const problem *p, const float *out, nmt_kv_format format) {
    const nmt_attention_dims *d = &p->d;
    const int Tq = d->q_len, Tk = d->k_len, dh = d->head_dim;
    const long width = row_width(p);
    double scores[256], o[128];
    ck_assert(Tk <= 256 && dh <= 128);
    for (int b = 0; b < d->batch; b++)
        for (int h = 0; h < d->heads; h++) {
            const float *q = p->q + (long)b * Tq * width + h * dh;
            for (int t = 0; t < Tq; t++) {
                int limit = d->k_lengths && d->k_lengths[b] < Tk ? d->k_lengths[b] : Tk;
                if (d->causal && t + d->q_offset + 1 < limit) limit = t + d->q_offset + 1;
                double max = -INFINITY, sum = 0.0, es = 0.0, vmax = 0.0, ev = 0.0;
                for (int j = 0; j < limit; j++) {
                    double score = 0.0, err = 0.0, kmax = 0.0, vrow = 0.0;
                    double qmax = 0.0;
                    for (int i = 0; i < dh; i++) {
                        kmax = fmax(kmax, fabs(key_row(p, p->k, b, h, j)[i]));
                        vrow = fmax(vrow, fabs(key_row(p, p->v, b, h, j)[i]));
                        qmax = fmax(qmax, fabs(q[t * width + i]));
                    }
                    /* Half a step of each quantized operand: int8 keys, and with them int8 queries. */
                    for (int i = 0; i < dh; i++) {
                        const double qi = fabs(q[t * width + i]), ki = fabs(key_row(p, p->k, b, h, j)[i]);
                        score += (double)q[t * width + i] * key_row(p, p->k, b, h, j)[i];
                        err += format == NMT_KV_F16 ? qi * ldexp(ki, -11)
                                                    : qi * kmax / 254.0 + (ki + kmax / 254.0) * qmax / 254.0;
                    }
                    scores[j] = score * d->scale;
                    es = fmax(es, err * d->scale);
                    vmax = fmax(vmax, vrow);
                    ev = fmax(ev, format == NMT_KV_F16 ? ldexp(vrow, -11) : vrow / 254.0);
                    max = fmax(max, scores[j]);
                }
                for (int j = 0; j < limit; j++) sum += scores[j] = exp(scores[j] - max);
                for (int i = 0; i < dh; i++) o[i] = 0.0;
                for (int j = 0; j < limit; j++)
                    for (int i = 0; i < dh; i++) o[i] += scores[j] / sum * key_row(p, p->v, b, h, j)[i];
                const double tolerance = (exp(2.0 * es) - 1.0) * vmax + ev + 2e-5;
                const float *got = out + ((long)b * Tq + t) * width + h * dh;
                for (int i = 0; i < dh; i++)
                    ck_assert_msg(fabs(got[i] - o[i]) <= tolerance, "%s b %d h %d t %d: %.7g, want %.7g (within %.2g)",
                                  nmt_kv_format_name(format), b, h, t, got[i], o[i], tolerance);
            }
        }
}

/* Attention on stored float16 keys and values is nmt_attention_forward on their widened floats,
 * bit for bit (several key blocks, slots, causal offsets, lengths); on int8 ones (queries quantized
 * too) it is within the quantization's bound of the float64 reference, as float16 is within its
 * rounding's; every format gives the same bits on 1, 2 and 3 threads and for a row alone. */
START_TEST(stored_attention_is_attention_on_the_widened_values) {
    const shape shapes[] = {
        {3, 2, 64, 1, 150, 0, 0, 1, 0, 0}, /* a decoding step over three key blocks (64 keys each) */
        {3, 2, 64, 1, 70, 1, 69, 0, 0, 1}, /* self-attention through slots, two blocks */
        {3, 2, 64, 1, 150, 1, 149, 0, 0, 2}, /* ... through paths, three blocks */
        {2, 4, 64, 5, 130, 0, 0, 1, 0, 1}, /* cross-attention: 5 beam rows per sentence */
        {2, 3, 24, 7, 5, 1, 2, 1, 0, 0},   /* head size 24, causal with an offset, a short key block */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int f = 0; f < 3; f++) {
            const shape *sh = &shapes[i];
            const nmt_kv_format format = (nmt_kv_format)f;
            problem p = {.pad = 3, .use_slots = sh->slots};
            p.d = (nmt_attention_dims){.batch = sh->batch, .heads = sh->heads, .head_dim = sh->head_dim,
                                       .q_len = sh->q_len, .k_len = sh->k_len, .causal = sh->causal,
                                       .q_offset = sh->q_offset, .scale = 1.0f / sqrtf((float)sh->head_dim)};
            if (sh->lengths) {
                for (int b = 0; b < sh->batch; b++) p.lengths[b] = b == 1 ? 0 : sh->k_len - 1 - 2 * b;
                p.d.k_lengths = p.lengths;
            }
            problem_init(&p, 300 + (unsigned)i);
            stored_problem s = store(&p, format);
            float *out[3], *w[3];
            for (int n = 0; n < 3; n++) {
                nmt_pool_set_threads(n + 1);
                out[n] = filled(q_size(&p), 0);
                w[n] = filled(w_size(&p), 0);
                run_stored(&p, &s, format, out[n], w[n]);
            }
            nmt_pool_set_threads(2);
            nmt_attention_forward(view(&p, p.out, p.d.q_len, 0), p.w, view(&p, p.q, p.d.q_len, 0),
                                  view(&p, s.kf, p.d.k_len, 1), view(&p, s.vf, p.d.k_len, 1), &p.d);
            if (format == NMT_KV_I8) { /* the threads' agreement below, against out[0] */
                memcpy(p.out, out[0], sizeof(float) * (size_t)q_size(&p));
                memcpy(p.w, w[0], sizeof(float) * (size_t)w_size(&p));
            }
            for (int n = 0; n < 3; n++) {
                ck_assert_msg(memcmp(out[n], p.out, sizeof(float) * (size_t)q_size(&p)) == 0, "shape %zu %s: out",
                              i, nmt_kv_format_name(format));
                ck_assert_msg(memcmp(w[n], p.w, sizeof(float) * (size_t)w_size(&p)) == 0, "shape %zu %s: weights", i,
                              nmt_kv_format_name(format));
            }
            if (format != NMT_KV_F32) expect_within_rounding(&p, out[0], format);
            /* int8 scores are integer dot products: the same on every int8 kernel. */
            for (int kernel = NMT_QGEMM_C; format == NMT_KV_I8 && kernel <= (int)nmt_qgemm_best(); kernel++) {
                ck_assert_int_eq(nmt_qgemm_set_kernel((nmt_qgemm_kernel)kernel), 0);
                float *again = filled(q_size(&p), 0), *w_again = filled(w_size(&p), 0);
                run_stored(&p, &s, format, again, w_again);
                ck_assert_msg(memcmp(again, out[0], sizeof(float) * (size_t)q_size(&p)) == 0, "shape %zu: kernel %s", i,
                              nmt_qgemm_kernel_name((nmt_qgemm_kernel)kernel));
                free(again);
                free(w_again);
            }
            ck_assert_int_eq(nmt_qgemm_set_kernel(nmt_qgemm_best()), 0);
            /* Batch row 0 alone (a batch of one whose slot, if any, is its own). */
            problem one = p;
            one.d.batch = 1;
            float *alone = filled(q_size(&one), 0), *w_alone = filled(w_size(&one), 0);
            run_stored(&one, &s, format, alone, w_alone);
            ck_assert(memcmp(alone, p.out, sizeof(float) * (size_t)q_size(&one)) == 0);
            free(alone);
            free(w_alone);
            for (int n = 0; n < 3; n++) {
                free(out[n]);
                free(w[n]);
            }
            stored_free(&s);
            problem_free(&p);
        }
}
END_TEST

/* A decoding step (one query a batch row, every head of the row at once) gives each query the bits
 * the general path gives it among all the queries: causal self-attention with key lengths, 5 heads
 * (a group of 4 and one more), head size 40 (a tail), keys read directly, through slots and through
 * paths. */
START_TEST(a_decoding_step_is_its_query_among_all) {
    enum { B = 3, H = 5, DH = 40, T = 9 };
    for (int slots = 0; slots <= 2; slots++) {
        problem all = {.pad = 2, .use_slots = slots};
        all.d = (nmt_attention_dims){.batch = B, .heads = H, .head_dim = DH, .q_len = T, .k_len = T, .causal = 1,
                                     .scale = 0.2f};
        for (int b = 0; b < B; b++) all.lengths[b] = T - 2 * b;
        all.d.k_lengths = all.lengths;
        problem_init(&all, 31 + (unsigned)slots);
        run(&all);
        expect_steps_equal_all(&all, NULL);
        problem_free(&all);
    }
}
END_TEST

/* A decoding step over int8 keys and values (every head of a row at once, each key row read whole)
 * gives each query the bits the per-head path gives it among all the queries: causal
 * self-attention with key lengths, 5 heads of 40 (the plain loops) and 8 of 64 (the AVX-512 ones where
 * the int8 products run on VNNI), keys reached directly, through slots and through paths, on every
 * int8 kernel. */
START_TEST(an_int8_decoding_step_is_its_query_among_all) {
    enum { B = 3, T = 9 };
    const int heads[] = {5, 8}, sizes[] = {40, 64};
    for (int kernel = NMT_QGEMM_C; kernel <= (int)nmt_qgemm_best(); kernel++)
        for (int shape = 0; shape < 2; shape++)
            for (int slots = 0; slots <= 2; slots++) {
                ck_assert_int_eq(nmt_qgemm_set_kernel((nmt_qgemm_kernel)kernel), 0);
                problem all = {.pad = 2, .use_slots = slots};
                all.d = (nmt_attention_dims){.batch = B, .heads = heads[shape], .head_dim = sizes[shape], .q_len = T,
                                             .k_len = T, .causal = 1, .scale = 0.2f};
                for (int b = 0; b < B; b++) all.lengths[b] = T - 2 * b;
                all.d.k_lengths = all.lengths;
                problem_init(&all, 41 + (unsigned)slots);
                stored_problem s = store(&all, NMT_KV_I8);
                run_stored(&all, &s, NMT_KV_I8, all.out, all.w);
                expect_steps_equal_all(&all, &s);
                stored_free(&s);
                problem_free(&all);
            }
    ck_assert_int_eq(nmt_qgemm_set_kernel(nmt_qgemm_best()), 0);
}
END_TEST

/* Sentences packed one after another without padding (an encoder's rows: each sentence's first
 * row through slot, rows one width apart, q_lengths = k_lengths = its length): every output is
 * the sentence's alone, bit for bit, in the forward and the stored forward (float16), with and
 * without dropout nothing is written past the packed rows, and no sentence's rows are written by
 * another's queries. */
START_TEST(attention_over_packed_sentences_is_each_sentence_alone) {
    enum { H = 2, DH = 40, W = H * DH, B = 3, T = 11, ROWS = 22, SPARE = 3 };
    const int32_t len[B] = {11, 4, 7}, first[B] = {0, 11, 15};
    float *q = filled((ROWS + SPARE) * W, 1), *k = filled((ROWS + SPARE) * W, 2), *v = filled((ROWS + SPARE) * W, 3);
    float *out = filled((ROWS + SPARE) * W, 4), *w = filled(B * H * T * T, 5), *sentinel = filled(SPARE * W, 0);
    memcpy(sentinel, out + ROWS * W, sizeof(float) * SPARE * W);
    uint16_t *kh = malloc(sizeof(uint16_t) * (ROWS + SPARE) * W), *vh = malloc(sizeof(uint16_t) * (ROWS + SPARE) * W);
    ck_assert(kh && vh);
    nmt_kv_store(NMT_KV_F16, kh, NULL, 0, k, W, ROWS + SPARE, H, DH);
    nmt_kv_store(NMT_KV_F16, vh, NULL, 0, v, W, ROWS + SPARE, H, DH);
    for (int pass = 0; pass < 3; pass++) { /* plain, stored (float16), dropout */
        nmt_attention_dims d = {.batch = B, .heads = H, .head_dim = DH, .q_len = T, .k_len = T, .k_lengths = len,
                                .q_lengths = len, .scale = 0.2f};
        if (pass == 2) d.dropout = (nmt_dropout){.rate = 0.1f, .seed = 5, .stream = 1};
        const nmt_heads qs = {q, W, W, first, NULL, 0}, ks = {k, W, W, first, NULL, 0}, vs = {v, W, W, first, NULL, 0};
        const nmt_heads outs = {out, W, W, first, NULL, 0};
        const nmt_kv_heads kst = {kh, NULL, W, W, first, NMT_KV_F16, NULL, 0}, vst = {vh, NULL, W, W, first, NMT_KV_F16, NULL, 0};
        if (pass == 1) nmt_attention_forward_stored(outs, w, qs, kst, vst, &d);
        else nmt_attention_forward(outs, w, qs, ks, vs, &d);
        ck_assert_msg(memcmp(out + ROWS * W, sentinel, sizeof(float) * SPARE * W) == 0, "pass %d wrote past the rows", pass);
        if (pass == 2) continue;
        for (int b = 0; b < B; b++) {
            const int n = len[b];
            float *alone = filled(n * W, 6), *w_alone = filled(H * n * n, 7);
            nmt_attention_dims one = {.batch = 1, .heads = H, .head_dim = DH, .q_len = n, .k_len = n, .scale = 0.2f};
            const long at = (long)first[b] * W;
            const nmt_heads q1 = {q + at, W, W, NULL, NULL, 0}, k1 = {k + at, W, W, NULL, NULL, 0},
                            v1 = {v + at, W, W, NULL, NULL, 0}, o1 = {alone, W, W, NULL, NULL, 0};
            if (pass == 1) {
                const nmt_kv_heads k1s = {kh + at, NULL, W, W, NULL, NMT_KV_F16, NULL, 0},
                                   v1s = {vh + at, NULL, W, W, NULL, NMT_KV_F16, NULL, 0};
                nmt_attention_forward_stored(o1, w_alone, q1, k1s, v1s, &one);
            } else {
                nmt_attention_forward(o1, w_alone, q1, k1, v1, &one);
            }
            ck_assert_msg(memcmp(alone, out + at, sizeof(float) * (size_t)(n * W)) == 0, "pass %d sentence %d", pass, b);
            for (int h = 0; h < H; h++)
                expect_same_rows("weights", w_alone + (long)h * n * n, n, w + ((long)b * H + h) * T * T, T, n, n);
            free(alone);
            free(w_alone);
        }
    }
    float *all[] = {q, k, v, out, w, sentinel};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
    free(kh);
    free(vh);
}
END_TEST

static Suite *attention_suite(void) {
    Suite *s = suite_create("attention");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, attention_matches_double_reference);
    tcase_add_test(tc, attention_rows_do_not_depend_on_the_batch);
    tcase_add_test(tc, a_decoding_step_is_its_query_among_all);
    tcase_add_test(tc, attention_is_identical_on_any_thread_count);
    tcase_add_test(tc, stored_attention_is_attention_on_the_widened_values);
    tcase_add_test(tc, an_int8_decoding_step_is_its_query_among_all);
    tcase_add_test(tc, attention_over_packed_sentences_is_each_sentence_alone);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return nmt_test_run(attention_suite()); }
