/* kernels: the fused loops of the model's layers, on the pool's threads.
 *
 * Hot loops are compiled three times (AVX-512, AVX2+FMA, baseline x86-64) and the best is chosen
 * at load time; all three perform the same float operations in the same order (C11 mode turns FMA
 * contraction off), so results do not depend on the CPU's vector width. Reductions go through a
 * 16-lane accumulator of fixed order.
 */
#include "compute/kernels.h"

#include "base/random.h"
#include "compute/gemm.h"
#include "compute/pool.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define NMT_HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NMT_HOT
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Vector helpers: a 16-lane accumulator summed in a fixed order, so every build sums alike. */

typedef float v16 __attribute__((vector_size(64)));
/* No v16 ever crosses a function call: loads are a macro and the helpers below take vectors by
 * pointer and are always inlined, even at -O0. A v16 passed or returned by value would need
 * AVX-512's calling convention, which the baseline clone of a multiversioned loop does not have
 * (GCC warns and disagrees with the AVX-512 clone about where the value lives; clang refuses). */
#define NMT_INLINE static inline __attribute__((always_inline))
#define V16_LOAD(p)                                  \
    __extension__({                                  \
        v16 v16_load_;                               \
        memcpy(&v16_load_, (p), sizeof v16_load_);   \
        v16_load_;                                   \
    })

/* The lanes summed as a tree (halves, quarters, ...): a fixed order, and a short dependency chain
 * where a lane-by-lane sum would wait on 15 additions in a row. */
NMT_INLINE float v16_sum(const v16 *pv) {
    typedef float v8 __attribute__((vector_size(32)));
    typedef float v4 __attribute__((vector_size(16)));
    const v16 v = *pv;
    v8 h = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) + __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    v4 q = __builtin_shufflevector(h, h, 0, 1, 2, 3) + __builtin_shufflevector(h, h, 4, 5, 6, 7);
    return (q[0] + q[2]) + (q[1] + q[3]);
}

NMT_INLINE float dot(const float *a, const float *b, int n) {
    v16 acc = {0};
    int i = 0;
    for (; i + 16 <= n; i += 16) acc += V16_LOAD(a + i) * V16_LOAD(b + i);
    float s = v16_sum(&acc);
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

/* v16_sum of each of four vectors, in exactly v16_sum's order, sharing the shuffles. */
NMT_INLINE void v16_sum4(float *out, const v16 *acc) {
    const v16 a = acc[0], b = acc[1], c = acc[2], d = acc[3];
    v16 ab = __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
             __builtin_shufflevector(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    v16 cd = __builtin_shufflevector(c, d, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
             __builtin_shufflevector(c, d, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    v16 q = __builtin_shufflevector(ab, cd, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27) +
            __builtin_shufflevector(ab, cd, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
    v16 u = q + __builtin_shufflevector(q, q, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
    v16 total = u + __builtin_shufflevector(u, u, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
    out[0] = total[0], out[1] = total[4], out[2] = total[8], out[3] = total[12];
}

/* out[i] = dot(a, b[i], n) for four vectors b[i], bit for bit, with one reduction network. */
NMT_INLINE void dot4(float *out, const float *a, const float *const b[4], int n) {
    v16 acc[4] = {{0}, {0}, {0}, {0}};
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        v16 x = V16_LOAD(a + i);
        for (int k = 0; k < 4; k++) acc[k] += x * V16_LOAD(b[k] + i);
    }
    v16_sum4(out, acc);
    for (int k = 0; k < 4; k++)
        for (int j = i; j < n; j++) out[k] += a[j] * b[k][j];
}

NMT_INLINE float sum(const float *a, int n) {
    v16 acc = {0};
    int i = 0;
    for (; i + 16 <= n; i += 16) acc += V16_LOAD(a + i);
    float s = v16_sum(&acc);
    for (; i < n; i++) s += a[i];
    return s;
}

typedef int32_t v16i __attribute__((vector_size(64)));

/* The largest of n >= 1 values (lane-wise maxima by masks, then the lanes in order). */
NMT_INLINE float max_of(const float *a, int n) {
    float m = a[0];
    int i = 0;
    if (n >= 16) {
        v16 acc = V16_LOAD(a);
        for (i = 16; i + 16 <= n; i += 16) {
            v16 x = V16_LOAD(a + i);
            v16i greater = x > acc;
            acc = (v16)(((v16i)x & greater) | ((v16i)acc & ~greater));
        }
        for (int k = 0; k < 16; k++) m = acc[k] > m ? acc[k] : m;
    }
    for (; i < n; i++) m = a[i] > m ? a[i] : m;
    return m;
}

/* y += alpha x */
NMT_INLINE void axpy(float *restrict y, float alpha, const float *restrict x, int n) {
    for (int i = 0; i < n; i++) y[i] += alpha * x[i];
}

/* exp for x <= 88: Cephes' expf (range reduction by ln 2, degree-6 polynomial, exponent by bits),
 * within 2 ulp, written without branches so that loops over it vectorize. Inputs below -87 return
 * about 1e-38 instead of smaller values (harmless after a max is subtracted). */
NMT_INLINE float exp_fast(float x) {
    x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
    float t = x * 1.44269504088896341f + 12582912.0f; /* round(x / ln 2) in the low mantissa bits */
    float n = t - 12582912.0f;
    uint32_t ti; /* unsigned: a NaN's bits wrap around instead of overflowing */
    memcpy(&ti, &t, sizeof ti);
    float r = x - n * 0.693359375f - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    float y = p * r * r + r + 1.0f;
    uint32_t bits = (ti - 0x4B400000u + 127u) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return y * scale;
}

/* ---------------------------------------------------------------------------------------------- */
/* Linear layers */

typedef struct bias_task {
    float *y;
    const float *b;
    int N;
} bias_task;

NMT_HOT static void bias_rows(void *ctx, long begin, long end) {
    const bias_task *t = ctx;
    for (long m = begin; m < end; m++) memcpy(t->y + m * t->N, t->b, (size_t)t->N * sizeof(float));
}

void nmt_linear_forward(float *y, const float *x, const float *w, const float *b, int M, int K, int N) {
    if (b) {
        bias_task t = {y, b, N};
        nmt_pool_work(M, N, bias_rows, &t);
    }
    nmt_sgemm(0, 1, M, N, K, 1.0f, x, K, w, K, b ? 1.0f : 0.0f, y, N);
}

typedef struct colsum_task {
    float *out;
    const float *x;
    int M, N;
} colsum_task;

/* out[n] += sum over rows of x[m, n], for the columns [begin, end). */
NMT_HOT static void column_sums(void *ctx, long begin, long end) {
    const colsum_task *t = ctx;
    for (int m = 0; m < t->M; m++) {
        const float *row = t->x + (long)m * t->N;
        for (long n = begin; n < end; n++) t->out[n] += row[n];
    }
}

void nmt_linear_backward(float *dx, float *dw, float *db, const float *dy, const float *x, const float *w, int M,
                         int K, int N, int accumulate_dx) {
    if (dx) nmt_sgemm(0, 0, M, K, N, 1.0f, dy, N, w, K, accumulate_dx ? 1.0f : 0.0f, dx, K);
    if (dw) nmt_sgemm(1, 0, N, K, M, 1.0f, dy, N, x, K, 1.0f, dw, K);
    if (db) {
        colsum_task t = {db, dy, M, N};
        nmt_pool_columns(N, M, column_sums, &t);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* LayerNorm */

typedef struct layernorm_task {
    float *y, *mean, *rstd, *dx, *dw, *db;
    const float *x, *dy, *w, *b;
    const float *mean_in, *rstd_in;
    int M, D, accumulate;
    float eps;
} layernorm_task;

NMT_HOT static void layernorm_rows(void *ctx, long begin, long end) {
    const layernorm_task *t = ctx;
    int D = t->D;
    for (long m = begin; m < end; m++) {
        const float *x = t->x + m * D;
        float *y = t->y + m * D;
        float mu = sum(x, D) / (float)D;
        v16 acc = {0};
        int i = 0;
        for (; i + 16 <= D; i += 16) {
            v16 c = V16_LOAD(x + i) - mu;
            acc += c * c;
        }
        float var = v16_sum(&acc);
        for (; i < D; i++) var += (x[i] - mu) * (x[i] - mu);
        float rs = 1.0f / sqrtf(var / (float)D + t->eps);
        for (i = 0; i < D; i++) y[i] = (x[i] - mu) * rs * t->w[i] + t->b[i];
        t->mean[m] = mu;
        t->rstd[m] = rs;
    }
}

void nmt_layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *w, const float *b, int M,
                           int D, float eps) {
    layernorm_task t = {.y = y, .mean = mean, .rstd = rstd, .x = x, .w = w, .b = b, .D = D, .eps = eps};
    nmt_pool_work(M, D, layernorm_rows, &t);
}

/* dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * w, per row. */
NMT_HOT static void layernorm_backward_rows(void *ctx, long begin, long end) {
    const layernorm_task *t = ctx;
    int D = t->D;
    for (long m = begin; m < end; m++) {
        const float *x = t->x + m * D, *dy = t->dy + m * D;
        float *dx = t->dx + m * D;
        float mu = t->mean_in[m], rs = t->rstd_in[m];
        v16 acc_g = {0}, acc_gx = {0};
        int i = 0;
        for (; i + 16 <= D; i += 16) {
            v16 g = V16_LOAD(dy + i) * V16_LOAD(t->w + i);
            acc_g += g;
            acc_gx += g * ((V16_LOAD(x + i) - mu) * rs);
        }
        float sum_g = v16_sum(&acc_g), sum_gx = v16_sum(&acc_gx);
        for (; i < D; i++) {
            float g = dy[i] * t->w[i];
            sum_g += g;
            sum_gx += g * ((x[i] - mu) * rs);
        }
        float mean_g = sum_g / (float)D, mean_gx = sum_gx / (float)D;
        for (i = 0; i < D; i++) {
            float v = rs * (dy[i] * t->w[i] - mean_g - (x[i] - mu) * rs * mean_gx);
            dx[i] = t->accumulate ? dx[i] + v : v;
        }
    }
}

/* dw[d] += sum over rows of dy * xhat; db[d] += sum of dy; for the columns [begin, end). */
NMT_HOT static void layernorm_backward_columns(void *ctx, long begin, long end) {
    const layernorm_task *t = ctx;
    for (long m = 0; m < t->M; m++) {
        const float *x = t->x + m * t->D, *dy = t->dy + m * t->D;
        float mu = t->mean_in[m], rs = t->rstd_in[m];
        for (long d = begin; d < end; d++) {
            t->dw[d] += dy[d] * ((x[d] - mu) * rs);
            t->db[d] += dy[d];
        }
    }
}

void nmt_layernorm_backward(float *dx, float *dw, float *db, const float *dy, const float *x, const float *mean,
                            const float *rstd, const float *w, int M, int D, int accumulate_dx) {
    layernorm_task t = {.dx = dx, .dw = dw, .db = db, .x = x, .dy = dy, .w = w, .mean_in = mean, .rstd_in = rstd,
                        .M = M, .D = D, .accumulate = accumulate_dx};
    nmt_pool_work(M, D, layernorm_backward_rows, &t);
    nmt_pool_columns(D, M, layernorm_backward_columns, &t);
}

/* ---------------------------------------------------------------------------------------------- */
/* ReLU and dropout */

typedef struct elementwise_task {
    float *out;
    const float *a, *b;
    nmt_dropout drop;
    int accumulate;
} elementwise_task;

NMT_HOT static void relu_range(void *ctx, long begin, long end) {
    float *x = ((const elementwise_task *)ctx)->out;
    for (long i = begin; i < end; i++) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void nmt_relu_forward(float *x, long n) {
    elementwise_task t = {.out = x};
    nmt_pool_work(n, 1, relu_range, &t);
}

NMT_HOT static void relu_backward_range(void *ctx, long begin, long end) {
    const elementwise_task *t = ctx;
    for (long i = begin; i < end; i++) t->out[i] = t->a[i] > 0.0f ? t->out[i] : 0.0f;
}

void nmt_relu_backward(float *dx, const float *y, long n) {
    elementwise_task t = {.out = dx, .a = y};
    nmt_pool_work(n, 1, relu_backward_range, &t);
}

/* Chris Wellons' lowbias32: a 32-bit integer hash with low bias, vectorizable. */
NMT_INLINE uint32_t hash32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

typedef struct dropout_key {
    uint32_t k1, k2, threshold; /* keep(i) iff hash >= threshold */
    float scale;                /* 1 / (1 - rate) */
} dropout_key;

static dropout_key dropout_key_of(nmt_dropout drop) {
    uint64_t z = nmt_random_at(drop.seed, drop.stream);
    double threshold = (double)drop.rate * 4294967296.0;
    dropout_key key = {(uint32_t)z, (uint32_t)(z >> 32), threshold >= 4294967295.0 ? 0xFFFFFFFFU : (uint32_t)threshold,
                       drop.rate < 1.0f ? 1.0f / (1.0f - drop.rate) : 0.0f};
    return key;
}

/* The factor of element i: scale if kept, else 0. hi_mix carries the index's upper 32 bits. */
NMT_INLINE float dropout_factor_lo(const dropout_key *key, uint32_t lo, uint32_t hi_mix) {
    uint32_t h = hash32(hash32(lo + key->k1) ^ hi_mix);
    return h >= key->threshold ? key->scale : 0.0f;
}

NMT_INLINE uint32_t dropout_hi_mix(const dropout_key *key, uint64_t i) {
    return key->k2 ^ ((uint32_t)(i >> 32) * 0x9E3779B9U);
}

NMT_INLINE float dropout_factor(const dropout_key *key, uint64_t i) {
    return dropout_factor_lo(key, (uint32_t)i, dropout_hi_mix(key, i));
}

int nmt_dropout_keep(nmt_dropout drop, uint64_t index) {
    if (drop.rate <= 0.0f) return 1;
    dropout_key key = dropout_key_of(drop);
    return dropout_factor(&key, index) != 0.0f;
}

/* The elementwise loops below read and write element i only, so they may run in place; `ivdep`
 * lets GCC vectorize them without the overlap check that in-place calls would fail. */
#if defined(__GNUC__) && !defined(__clang__)
#define NMT_IVDEP _Pragma("GCC ivdep")
#else
#define NMT_IVDEP
#endif

/* out[i] = (x ? x[i] : 0) + factor(i) * delta[i], or with accumulate: out[i] += factor(i) * delta[i]
 * (x unused); factor 1 when dropout is off. The index's upper half is constant within a block. */
NMT_HOT static void dropout_range(float *out, const float *x, const float *delta, nmt_dropout drop, int accumulate,
                                  long begin, long end) {
    if (drop.rate <= 0.0f) {
        if (accumulate) x = out;
        if (x) {
            NMT_IVDEP
            for (long i = begin; i < end; i++) out[i] = x[i] + delta[i];
        } else if (out != delta) {
            memcpy(out + begin, delta + begin, (size_t)(end - begin) * sizeof(float));
        }
        return;
    }
    dropout_key key = dropout_key_of(drop);
    if (accumulate) x = out;
    for (long block = begin; block < end;) {
        long stop = (long)(((uint64_t)block >> 32) + 1) << 32;
        if (stop > end) stop = end;
        uint32_t hi_mix = dropout_hi_mix(&key, (uint64_t)block);
        if (x) {
            NMT_IVDEP
            for (long i = block; i < stop; i++) out[i] = x[i] + dropout_factor_lo(&key, (uint32_t)i, hi_mix) * delta[i];
        } else {
            NMT_IVDEP
            for (long i = block; i < stop; i++) out[i] = dropout_factor_lo(&key, (uint32_t)i, hi_mix) * delta[i];
        }
        block = stop;
    }
}

static void dropout_add_range(void *ctx, long begin, long end) {
    const elementwise_task *t = ctx;
    dropout_range(t->out, t->a, t->b, t->drop, 0, begin, end);
}

void nmt_dropout_add(float *out, const float *x, const float *delta, nmt_dropout drop, long n) {
    elementwise_task t = {.out = out, .a = x, .b = delta, .drop = drop};
    nmt_pool_work(n, 4, dropout_add_range, &t);
}

static void dropout_backward_range(void *ctx, long begin, long end) {
    const elementwise_task *t = ctx;
    dropout_range(t->out, NULL, t->a, t->drop, t->accumulate, begin, end);
}

void nmt_dropout_backward(float *d_delta, const float *d_out, nmt_dropout drop, long n, int accumulate) {
    elementwise_task t = {.out = d_delta, .a = d_out, .drop = drop, .accumulate = accumulate};
    nmt_pool_work(n, 4, dropout_backward_range, &t);
}

/* ---------------------------------------------------------------------------------------------- */
/* Softmax and positions */

/* x[0..n) = exp(x - shift) in place; returns their sum (16 lanes, then v16_sum). */
NMT_INLINE float exp_in_place(float *x, int n, float shift) {
    v16 acc = {0};
    for (int i = 0; i < n; i += 16) {
        const int m = n - i < 16 ? n - i : 16;
        float e[16] = {0};
        memcpy(e, x + i, (size_t)m * sizeof(float));
        for (int k = 0; k < 16; k++) e[k] = exp_fast(e[k] - shift);
        for (int k = m; k < 16; k++) e[k] = 0.0f;
        memcpy(x + i, e, (size_t)m * sizeof(float));
        acc += V16_LOAD(e);
    }
    return v16_sum(&acc);
}

/* x[0..n) = softmax(x) in place. */
NMT_INLINE void softmax_row(float *x, int n) {
    float inv = 1.0f / exp_in_place(x, n, max_of(x, n));
    for (int j = 0; j < n; j++) x[j] *= inv;
}

typedef struct softmax_task {
    float *x;
    int n;
} softmax_task;

NMT_HOT static void softmax_range(void *ctx, long begin, long end) {
    const softmax_task *t = ctx;
    for (long r = begin; r < end; r++) softmax_row(t->x + r * t->n, t->n);
}

void nmt_softmax_rows(float *x, int rows, int n) {
    if (n <= 0) return;
    softmax_task t = {x, n};
    nmt_pool_work(rows, n, softmax_range, &t);
}

/* The sum of exp(x[i] - shift) over n values, in a 16-lane accumulator. */
NMT_INLINE float sum_exp(const float *x, int n, float shift) {
    v16 acc = {0};
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        float e[16];
        for (int k = 0; k < 16; k++) e[k] = exp_fast(x[i + k] - shift);
        acc += V16_LOAD(e);
    }
    float s = v16_sum(&acc);
    for (; i < n; i++) s += exp_fast(x[i] - shift);
    return s;
}

/* Added for decoding (decode helper): x = log_softmax(x) = x - (max + log sum exp(x - max)). */
NMT_HOT static void log_softmax_range(void *ctx, long begin, long end) {
    const softmax_task *t = ctx;
    for (long r = begin; r < end; r++) {
        float *x = t->x + r * t->n;
        float max = max_of(x, t->n);
        float lse = max + logf(sum_exp(x, t->n, max));
        for (int j = 0; j < t->n; j++) x[j] -= lse;
    }
}

NMT_HOT void nmt_logsumexp_add(nmt_logsumexp *s, const float *x, int n) {
    if (n <= 0) return;
    float chunk_max = max_of(x, n);
    if (chunk_max > s->max) {
        s->sum = s->max == -INFINITY ? 0.0f : s->sum * exp_fast(s->max - chunk_max);
        s->max = chunk_max;
    }
    s->sum += sum_exp(x, n, s->max);
}

float nmt_logsumexp_value(nmt_logsumexp s) { return s.max + logf(s.sum); }

NMT_HOT int nmt_first_above(const float *x, int n, float threshold) {
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        v16i above = V16_LOAD(x + i) > threshold;
        int32_t any = 0;
        for (int k = 0; k < 16; k++) any |= above[k];
        if (any) break;
    }
    for (; i < n; i++)
        if (x[i] > threshold) return i;
    return n;
}

void nmt_log_softmax_rows(float *x, int rows, int n) {
    if (n <= 0) return;
    softmax_task t = {x, n};
    nmt_pool_work(rows, n, log_softmax_range, &t);
}

typedef struct cross_entropy_task {
    float *logits, *loss, *nll;
    const int32_t *targets;
    int V, want_grad;
    float smoothing;
} cross_entropy_task;

/* Four passes over each row (it stays in cache): max and sum of the logits; exponentials in place;
 * their sum; with want_grad the gradient. log p_j = z_j - lse, lse = max + log(sum exp(z - max)).
 * The logits are clobbered either way. */
NMT_HOT static void cross_entropy_range(void *ctx, long begin, long end) {
    const cross_entropy_task *t = ctx;
    int V = t->V;
    for (long r = begin; r < end; r++) {
        float *z = t->logits + r * V;
        int y = t->targets[r];
        float max = max_of(z, V), sum_z = sum(z, V), target_z = z[y];
        for (int j = 0; j < V; j++) z[j] = exp_fast(z[j] - max);
        float sum_exp = sum(z, V);
        float lse = max + logf(sum_exp);
        float nll = lse - target_z, smooth = lse - sum_z / (float)V;
        t->nll[r] = nll;
        t->loss[r] = (1.0f - t->smoothing) * nll + t->smoothing * smooth;
        if (t->want_grad) {
            float inv = 1.0f / sum_exp, uniform = t->smoothing / (float)V;
            for (int j = 0; j < V; j++) z[j] = z[j] * inv - uniform;
            z[y] -= 1.0f - t->smoothing;
        }
    }
}

void nmt_cross_entropy_rows(float *logits, float *loss, float *nll, const int32_t *targets, int rows, int V,
                            float smoothing, int want_grad) {
    cross_entropy_task t = {logits, loss, nll, targets, V, want_grad, smoothing};
    if (V <= 0) return;
    nmt_pool_work(rows, V, cross_entropy_range, &t);
}

void nmt_sinusoidal_positions(float *pe, int positions, int D) {
    for (int i = 0; 2 * i < D; i++) {
        double inv_freq = pow(10000.0, -2.0 * i / D);
        for (int pos = 0; pos < positions; pos++) {
            pe[(long)pos * D + 2 * i] = (float)sin(pos * inv_freq);
            if (2 * i + 1 < D) pe[(long)pos * D + 2 * i + 1] = (float)cos(pos * inv_freq);
        }
    }
}

void nmt_rope_table(float *table, int positions, int head_dim) {
    int pairs = head_dim / 2;
    for (int i = 0; i < pairs; i++) {
        double inv_freq = pow(10000.0, -2.0 * i / head_dim);
        for (int pos = 0; pos < positions; pos++) {
            table[((long)pos * pairs + i) * 2] = (float)cos(pos * inv_freq);
            table[((long)pos * pairs + i) * 2 + 1] = (float)sin(pos * inv_freq);
        }
    }
}

typedef struct rope_task {
    float *x;
    long row_stride;
    const float *table;
    const int32_t *pos;
    int heads, head_dim;
    float sign; /* +1 forward, -1 inverse */
} rope_task;

NMT_HOT static void rope_range(void *ctx, long begin, long end) {
    const rope_task *t = ctx;
    int pairs = t->head_dim / 2;
    for (long r = begin; r < end; r++) {
        const float *cs = t->table + (long)t->pos[r] * pairs * 2;
        for (int h = 0; h < t->heads; h++) {
            float *x = t->x + r * t->row_stride + (long)h * t->head_dim;
            for (int i = 0; i < pairs; i++) {
                float c = cs[2 * i], s = t->sign * cs[2 * i + 1];
                float x0 = x[2 * i], x1 = x[2 * i + 1];
                x[2 * i] = x0 * c - x1 * s;
                x[2 * i + 1] = x0 * s + x1 * c;
            }
        }
    }
}

void nmt_rope_apply(float *x, long row_stride, const float *table, const int32_t *pos, int rows, int heads,
                    int head_dim, int inverse) {
    rope_task t = {x, row_stride, table, pos, heads, head_dim, inverse ? -1.0f : 1.0f};
    nmt_pool_work(rows, (long)heads * head_dim, rope_range, &t);
}

/* ---------------------------------------------------------------------------------------------- */
/* Attention: units of whole batch rows (all heads of a sentence: its rows stay in one cache) */

typedef struct attention_task {
    nmt_heads out, q, k, v, dq, dk, dv, dout;
    float *weights, *dweights;
    const float *weights_in;
    const nmt_attention_dims *dims;
} attention_task;

/* Keys visible to query t of batch row b: [0, limit). */
NMT_INLINE int attention_limit(const nmt_attention_dims *d, int b, int t) {
    int limit = d->k_lengths ? d->k_lengths[b] : d->k_len;
    if (limit > d->k_len) limit = d->k_len;
    if (d->causal && t + d->q_offset + 1 < limit) limit = t + d->q_offset + 1;
    return limit < 0 ? 0 : limit;
}

NMT_INLINE float *head_row(nmt_heads x, int b, int t, int h, int dh) {
    return x.data + (x.slot ? x.slot[b] : b) * x.batch_stride + t * x.row_stride + (long)h * dh;
}

/* Pulls the rows of batch row b (len rows of `width` floats from x.data) towards the cache. The
 * heads of one batch row are processed one after another, each reading a narrow column band of
 * rows a long stride apart, a pattern the hardware prefetchers miss; fetching the next batch row
 * while working on this one hides that latency. */
NMT_INLINE void prefetch_rows(nmt_heads x, int b, int len, int width) {
    for (int t = 0; t < len; t++) {
        const char *row = (const char *)head_row(x, b, t, 0, 0);
        for (int i = 0; i < width * (int)sizeof(float); i += 64) __builtin_prefetch(row + i);
    }
}

/* The inputs of batch row b, for all heads (dout only in backward). */
NMT_INLINE void attention_prefetch(const attention_task *a, int b) {
    const nmt_attention_dims *d = a->dims;
    if (b >= d->batch) return;
    int width = d->heads * d->head_dim;
    prefetch_rows(a->q, b, d->q_len, width);
    prefetch_rows(a->k, b, d->k_len, width);
    prefetch_rows(a->v, b, d->k_len, width);
    if (a->dout.data) prefetch_rows(a->dout, b, d->q_len, width);
}

enum { ATTENTION_KEYS = 64 }; /* keys per block of the weighted sum of values */

/* o[0..dh) += sum over j < n of p[j] v[j][0..dh), j in order: 16 columns at a time, each in a
 * register across all n keys (the same additions, in the same order, as n axpy calls). */
NMT_INLINE void weighted_sum(float *o, const float *p, const float *const *v, int n, int dh) {
    int c = 0;
    for (; c + 16 <= dh; c += 16) {
        v16 acc = V16_LOAD(o + c);
        for (int j = 0; j < n; j++) acc += p[j] * V16_LOAD(v[j] + c);
        memcpy(o + c, &acc, sizeof acc);
    }
    for (; c < dh; c++)
        for (int j = 0; j < n; j++) o[c] += p[j] * v[j][c];
}

NMT_HOT static void attention_forward_range(void *ctx, long begin, long end) {
    const attention_task *a = ctx;
    const nmt_attention_dims *d = a->dims;
    int dh = d->head_dim, Tq = d->q_len, Tk = d->k_len;
    dropout_key key = dropout_key_of(d->dropout);
    const float *rows[ATTENTION_KEYS];
    float dropped[ATTENTION_KEYS];
    for (long item = begin * d->heads; item < end * d->heads; item++) {
        int b = (int)(item / d->heads), h = (int)(item % d->heads);
        /* No attention_prefetch here: measured, it bought the forward nothing in training and cost
         * decoding steps (one query per row) 3%. */
        for (int t = 0; t < Tq; t++) {
            int limit = attention_limit(d, b, t), j = 0;
            long row = (item * Tq + t) * Tk;
            float *w = a->weights + row;
            const float *q = head_row(a->q, b, t, h, dh);
            float *o = head_row(a->out, b, t, h, dh);
            memset(o, 0, (size_t)dh * sizeof(float));
            for (int k = limit; k < Tk; k++) w[k] = 0.0f;
            if (limit == 0) continue;
            for (; j + 4 <= limit; j += 4) {
                for (int k = 0; k < 4; k++) rows[k] = head_row(a->k, b, j + k, h, dh);
                dot4(w + j, q, rows, dh);
            }
            for (; j < limit; j++) w[j] = dot(q, head_row(a->k, b, j, h, dh), dh);
            for (j = 0; j < limit; j++) w[j] *= d->scale;
            softmax_row(w, limit);
            for (int first = 0; first < limit; first += ATTENTION_KEYS) {
                const int n = limit - first < ATTENTION_KEYS ? limit - first : ATTENTION_KEYS;
                const float *p = w + first;
                if (d->dropout.rate > 0.0f) {
                    for (int k = 0; k < n; k++) dropped[k] = p[k] * dropout_factor(&key, (uint64_t)(row + first + k));
                    p = dropped;
                }
                for (int k = 0; k < n; k++) rows[k] = head_row(a->v, b, first + k, h, dh);
                weighted_sum(o, p, rows, n, dh);
            }
        }
    }
}

void nmt_attention_forward(nmt_heads out, float *weights, nmt_heads q, nmt_heads k, nmt_heads v,
                           const nmt_attention_dims *dims) {
    attention_task a = {.out = out, .q = q, .k = k, .v = v, .weights = weights, .dims = dims};
    nmt_pool_work(dims->batch, (long)dims->heads * dims->q_len * dims->k_len * dims->head_dim, attention_forward_range, &a);
}

/* With P the weights, M the dropout factors and dO the output gradient:
 * dV = (P*M)^T dO, dP = (dO V^T) * M, dS = P * (dP - rowsum(P * dP)) * scale, dQ = dS K, dK = dS^T Q. */
NMT_HOT static void attention_backward_range(void *ctx, long begin, long end) {
    const attention_task *a = ctx;
    const nmt_attention_dims *d = a->dims;
    int dh = d->head_dim, Tq = d->q_len, Tk = d->k_len;
    dropout_key key = dropout_key_of(d->dropout);
    for (long item = begin * d->heads; item < end * d->heads; item++) {
        int b = (int)(item / d->heads), h = (int)(item % d->heads);
        if (h == 0) attention_prefetch(a, b + 1);
        for (int j = 0; j < Tk; j++) {
            memset(head_row(a->dk, b, j, h, dh), 0, (size_t)dh * sizeof(float));
            memset(head_row(a->dv, b, j, h, dh), 0, (size_t)dh * sizeof(float));
        }
        for (int t = 0; t < Tq; t++) {
            int limit = attention_limit(d, b, t);
            long row = (item * Tq + t) * Tk;
            const float *w = a->weights_in + row;
            float *dp = a->dweights + row;
            const float *q = head_row(a->q, b, t, h, dh), *dout = head_row(a->dout, b, t, h, dh);
            float *dq = head_row(a->dq, b, t, h, dh);
            memset(dq, 0, (size_t)dh * sizeof(float));
            float rowdot = 0.0f;
            for (int j = 0; j < limit; j++) {
                float factor = d->dropout.rate > 0.0f ? dropout_factor(&key, (uint64_t)(row + j)) : 1.0f;
                dp[j] = factor * dot(dout, head_row(a->v, b, j, h, dh), dh);
                if (w[j] * factor != 0.0f) axpy(head_row(a->dv, b, j, h, dh), w[j] * factor, dout, dh);
                rowdot += w[j] * dp[j];
            }
            for (int j = 0; j < limit; j++) {
                float ds = w[j] * (dp[j] - rowdot) * d->scale;
                if (ds == 0.0f) continue;
                axpy(dq, ds, head_row(a->k, b, j, h, dh), dh);
                axpy(head_row(a->dk, b, j, h, dh), ds, q, dh);
            }
        }
    }
}

void nmt_attention_backward(nmt_heads dq, nmt_heads dk, nmt_heads dv, float *dweights, nmt_heads dout,
                            const float *weights, nmt_heads q, nmt_heads k, nmt_heads v,
                            const nmt_attention_dims *dims) {
    attention_task a = {.dq = dq, .dk = dk, .dv = dv, .dweights = dweights, .dout = dout, .weights_in = weights,
                        .q = q, .k = k, .v = v, .dims = dims};
    nmt_pool_work(dims->batch, 2L * dims->heads * dims->q_len * dims->k_len * dims->head_dim, attention_backward_range, &a);
}
