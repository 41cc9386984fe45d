/* kernels: the fused loops of the model's layers, on the pool's threads (vector helpers: simd.h).
 */
#include "compute/kernels.h"

#include "base/random.h"
#include "compute/gemm.h"
#include "compute/pool.h"
#include "compute/simd.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------- */
/* Vector helpers: 16-lane accumulators summed in v16_sum's order, so every build sums alike. */

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

/* v * sigmoid(a v), the sigmoid in the form that does not overflow (as Marian computes it). */
NMT_INLINE float times_sigmoid(float v, float a) {
    const float z = a * v;
    if (z >= 0.0f) return v / (1.0f + expf(-z));
    const float e = expf(z);
    return v * e / (1.0f + e);
}

typedef struct activation_task {
    float *x;
    nmt_activation kind;
} activation_task;

/* One loop per kind, the switch outside it. The constants: 1/sqrt(2); sqrt(2/pi) and 0.044715 of the
 * tanh approximation (Hendrycks and Gimpel); 1.702 of the sigmoid one. */
NMT_HOT static void activation_range(void *ctx, long begin, long end) {
    const activation_task *t = ctx;
    float *x = t->x;
    switch (t->kind) {
    case NMT_ACTIVATION_RELU:
        for (long i = begin; i < end; i++) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
        break;
    case NMT_ACTIVATION_SWISH:
        for (long i = begin; i < end; i++) x[i] = times_sigmoid(x[i], 1.0f);
        break;
    case NMT_ACTIVATION_GELU:
        for (long i = begin; i < end; i++) x[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f));
        break;
    case NMT_ACTIVATION_GELU_TANH:
        for (long i = begin; i < end; i++) {
            const float v = x[i];
            x[i] = 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
        }
        break;
    case NMT_ACTIVATION_GELU_SIGMOID:
        for (long i = begin; i < end; i++) x[i] = times_sigmoid(x[i], 1.702f);
        break;
    }
}

void nmt_activation_forward(nmt_activation kind, float *x, long n) {
    activation_task t = {.x = x, .kind = kind};
    nmt_pool_work(n, 1, activation_range, &t);
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

void nmt_dropout_factors(float *factors, nmt_dropout drop, uint64_t first, int n) {
    if (drop.rate <= 0.0f) {
        for (int i = 0; i < n; i++) factors[i] = 1.0f;
        return;
    }
    dropout_key key = dropout_key_of(drop);
    for (int i = 0; i < n; i++) factors[i] = dropout_factor(&key, first + (uint64_t)i);
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

/* x[0..n) = exp(x - shift) in place; returns their sum (16 lanes, then v16_sum). Whole blocks of 16
 * move as vectors and the last part element by element: a copy of a variable length (memcpy) of
 * the short rows of attention became a microcoded rep movs that took a third of the softmax. */
NMT_INLINE float exp_in_place(float *x, int n, float shift) {
    v16 acc = {0};
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        float e[16];
        for (int k = 0; k < 16; k++) e[k] = exp_fast(x[i + k] - shift);
        memcpy(x + i, e, sizeof e);
        acc += V16_LOAD(e);
    }
    if (i < n) {
        float e[16] = {0};
        for (int k = 0; k < n - i; k++) {
            e[k] = exp_fast(x[i + k] - shift);
            x[i + k] = e[k];
        }
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

NMT_HOT static void logsumexp_add(nmt_logsumexp *s, const float *x, int n) {
    if (n <= 0) return;
    float chunk_max = max_of(x, n);
    if (chunk_max > s->max) {
        s->sum = s->max == -INFINITY ? 0.0f : s->sum * exp_fast(s->max - chunk_max);
        s->max = chunk_max;
    }
    s->sum += sum_exp(x, n, s->max);
}

void nmt_logsumexp_add(nmt_logsumexp *s, const float *x, int n) { logsumexp_add(s, x, n); }

float nmt_logsumexp_value(nmt_logsumexp s) { return s.max + logf(s.sum); }

/* Whether any lane of a comparison is set, the lanes OR-ed as a tree (OR-ed lane by lane, GCC
 * extracted each of the 16 into a general register: 2-4% of beam-5 decoding in first_above). */
NMT_INLINE int v16i_any(const v16i *pm) {
    typedef int32_t v8i __attribute__((vector_size(32)));
    typedef int32_t v4i __attribute__((vector_size(16)));
    const v16i m = *pm;
    const v8i h = __builtin_shufflevector(m, m, 0, 1, 2, 3, 4, 5, 6, 7) |
                  __builtin_shufflevector(m, m, 8, 9, 10, 11, 12, 13, 14, 15);
    const v4i q = __builtin_shufflevector(h, h, 0, 1, 2, 3) | __builtin_shufflevector(h, h, 4, 5, 6, 7);
    return (q[0] | q[1] | q[2] | q[3]) != 0;
}

NMT_HOT static int first_above(const float *x, int n, float threshold) {
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        const v16i above = V16_LOAD(x + i) > threshold;
        if (v16i_any(&above)) break;
    }
    for (; i < n; i++)
        if (x[i] > threshold) return i;
    return n;
}

int nmt_first_above(const float *x, int n, float threshold) { return first_above(x, n, threshold); }

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

/* Row z's logits become its log-probabilities; returns its label-smoothed loss and sets *nll. */
NMT_INLINE float log_softmax_loss(float *z, int V, int target, float smoothing, float *nll) {
    float max = max_of(z, V), sum_z = sum(z, V);
    float lse = max + logf(sum_exp(z, V, max));
    *nll = lse - z[target];
    for (int j = 0; j < V; j++) z[j] -= lse;
    return (1.0f - smoothing) * *nll + smoothing * (lse - sum_z / (float)V);
}

/* Both Kullback-Leibler divergences between rows of log-probabilities a and b: kl[0] = KL(p_a || p_b) =
 * sum p_a (a - b), kl[1] = KL(p_b || p_a), in 16-lane accumulators. */
NMT_INLINE void divergences(const float *a, const float *b, int n, float kl[2]) {
    v16 ab = {0}, ba = {0};
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        float pa[16], pb[16];
        for (int k = 0; k < 16; k++) {
            pa[k] = exp_fast(a[i + k]);
            pb[k] = exp_fast(b[i + k]);
        }
        v16 d = V16_LOAD(a + i) - V16_LOAD(b + i);
        ab += V16_LOAD(pa) * d;
        ba -= V16_LOAD(pb) * d;
    }
    kl[0] = v16_sum(&ab);
    kl[1] = v16_sum(&ba);
    for (; i < n; i++) {
        kl[0] += exp_fast(a[i]) * (a[i] - b[i]);
        kl[1] += exp_fast(b[i]) * (b[i] - a[i]);
    }
}

typedef struct pair_task {
    float *logits, *loss, *nll;
    const int32_t *targets;
    int V, want_grad;
    float smoothing, alpha;
} pair_task;

/* A pair's loss is L = CE_a + CE_b + alpha/2 (KL(p_a||p_b) + KL(p_b||p_a)). With d = a - b (log-
 * probabilities), dKL(p_a||p_b)/dz_a = p_a (d - KL(p_a||p_b)) and dKL(p_b||p_a)/dz_a = p_a - p_b, so
 * dL/dz_a = p_a - q + alpha/2 (p_a (d - KL(p_a||p_b)) + p_a - p_b), and b's mirrors it. */
NMT_HOT static void cross_entropy_pair_range(void *ctx, long begin, long end) {
    const pair_task *t = ctx;
    int V = t->V;
    for (long k = begin; k < end; k++) {
        long r = 2 * k;
        float *a = t->logits + r * V, *b = a + V, kl[2];
        t->loss[r] = log_softmax_loss(a, V, t->targets[r], t->smoothing, &t->nll[r]);
        t->loss[r + 1] = log_softmax_loss(b, V, t->targets[r + 1], t->smoothing, &t->nll[r + 1]);
        divergences(a, b, V, kl);
        float consistency = 0.25f * t->alpha * (kl[0] + kl[1]);
        t->loss[r] += consistency;
        t->loss[r + 1] += consistency;
        if (!t->want_grad) continue;
        float half = 0.5f * t->alpha, uniform = t->smoothing / (float)V;
        for (int j = 0; j < V; j++) {
            float pa = exp_fast(a[j]), pb = exp_fast(b[j]), d = a[j] - b[j];
            a[j] = pa - uniform + half * (pa * (d - kl[0]) + pa - pb);
            b[j] = pb - uniform + half * (pb * (-d - kl[1]) + pb - pa);
        }
        a[t->targets[r]] -= 1.0f - t->smoothing;
        b[t->targets[r + 1]] -= 1.0f - t->smoothing;
    }
}

void nmt_cross_entropy_pairs(float *logits, float *loss, float *nll, const int32_t *targets, int pairs, int V,
                             float smoothing, float alpha, int want_grad) {
    pair_task t = {logits, loss, nll, targets, V, want_grad, smoothing, alpha};
    if (V <= 0) return;
    nmt_pool_work(pairs, 2L * V, cross_entropy_pair_range, &t);
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
