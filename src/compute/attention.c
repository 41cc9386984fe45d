/* attention: multi-head attention as register-tiled products per (batch row, head).
 *
 * One (batch row b, head h) is a set of small matrices with a row stride: Q and dO [Tq, dh],
 * K and V [Tk, dh], the weights P and the scratch G [Tq, Tk]. Two micro-kernels make every
 * product:
 *   dot_tile       2 rows x 2 rows (or 1 x 4) dot products over dh: 16 lanes held as two v8
 *                  halves, each operand row loaded once for the tile, the four sums reduced by
 *                  one network in v16_sum's order (so each equals a plain 16-lane dot product);
 *   weighted_rows  R (4 or 1) output rows = sum over k, ascending, of p(r, k) x_k: 16 columns of
 *                  4 rows (64 of one row, then 8, then single columns) stay in registers across
 *                  all k, and each x_k is loaded once for the R rows (the additions of axpy calls,
 *                  in their order).
 * Forward: P = softmax(scale Q K^T) row by row (dot_tile, then kernels' softmax), O = (P*M) V;
 * a decoding step (one query a batch row) reads the keys and values in row order instead
 * (decode_row; decode_row_i8 on stored int8 ones), with the same operations per head.
 * Backward, with M the dropout factors: dV = (P*M)^T dO, dP = (dO V^T) * M,
 * dS = P * (dP - rowsum(P * dP)) * scale, dQ = dS K, dK = dS^T Q.
 * A tile may run past a row's own limit (a causal tile's last row sees the most keys); the extra
 * terms have weight exactly 0 and, with finite operands, add nothing (a sum that starts at +0 is
 * never -0), and scores past a row's limit are never stored.
 */
#include "compute/attention.h"

#include "compute/kernels.h"
#include "compute/pool.h"
#include "compute/qgemm.h"
#include "compute/simd.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

typedef struct attention_task {
    nmt_heads out, q, k, v, dq, dk, dv, dout;
    float *weights, *dweights;
    const float *weights_in;
    const nmt_attention_dims *dims;
} attention_task;

/* One operand of one (batch row, head): row i at data + i * stride, plus path[i] * jump where
 * path is set (the row's own block, nmt_heads' path). Stored int8 keys or values (kvstore.h's I8)
 * have `bytes` instead of data, row i at the same offset and its factor at factor[offset / dh],
 * reached as i * fstride + path[i] * fjump (the strides over dh). */
typedef struct matrix {
    float *data;
    long stride;
    const int32_t *path;
    long jump;
    const int8_t *bytes;
    const float *factor;
    long fstride, fjump;
} matrix;

NMT_INLINE long offset_of(matrix m, long i) { return i * m.stride + (m.path ? m.path[i] * m.jump : 0); }
NMT_INLINE float *row_of(matrix m, long i) { return m.data + offset_of(m, i); }

/* The index of int8 row i's factor in m.factor. */
NMT_INLINE long factor_of(matrix m, long i) { return i * m.fstride + (m.path ? m.path[i] * m.fjump : 0); }

/* Row i of a float (q8 0) or int8 (q8 1) operand, and its factor (1 for floats). */
NMT_INLINE const void *any_row(matrix m, long i, int q8, float *factor) {
    if (!q8) {
        *factor = 1.0f;
        return row_of(m, i);
    }
    *factor = m.factor[factor_of(m, i)];
    return m.bytes + offset_of(m, i);
}

typedef int i32x8 __attribute__((vector_size(32)));
typedef unsigned u32x8 __attribute__((vector_size(32)));
typedef unsigned u32x4 __attribute__((vector_size(16)));
typedef long long i64x2 __attribute__((vector_size(16)));
/* The eight int8 values at p as floats: each byte shifted to the top of its own 32-bit lane, then
 * back down with its sign (GCC 12 turns a plain conversion of a vector of bytes into scalar code). */
#define V8_FROM_I8(p)                                                                                 \
    __extension__({                                                                                   \
        long long bytes_;                                                                             \
        memcpy(&bytes_, (p), 8);                                                                      \
        const i64x2 pair_ = {bytes_, 0};                                                              \
        const u32x4 words_ = (u32x4)pair_;                                                            \
        const u32x8 shift_ = {24, 16, 8, 0, 24, 16, 8, 0};                                            \
        const u32x8 top_ = __builtin_shufflevector(words_, words_, 0, 0, 0, 0, 1, 1, 1, 1) << shift_; \
        __builtin_convertvector((i32x8)top_ >> 24, v8);                                               \
    })
/* Values i..i+7 of a row from any_row as a v8 (a macro: no vector crosses a call). */
#define ROW_V8(q8, row, factor, i) \
    ((q8) ? V8_FROM_I8((const int8_t *)(row) + (i)) * (factor) : V8_LOAD((const float *)(row) + (i)))
/* Value i of such a row. */
NMT_INLINE float row_value(const void *row, float factor, int i, int q8) {
    return q8 ? (float)((const int8_t *)row)[i] * factor : ((const float *)row)[i];
}

NMT_INLINE matrix head_of(nmt_heads x, int b, int h, int dh) {
    if (x.path) {
        matrix m = {.data = x.data + (long)h * dh, .stride = x.row_stride, .path = x.path + b * x.path_stride,
                    .jump = x.batch_stride};
        return m;
    }
    matrix m = {.data = x.data + (x.slot ? x.slot[b] : b) * x.batch_stride + (long)h * dh, .stride = x.row_stride};
    return m;
}

NMT_INLINE matrix rows_from(matrix m, int first) {
    matrix r = m;
    if (m.bytes) {
        r.bytes += first * m.stride;
        r.factor += first * m.fstride;
    } else {
        r.data += first * m.stride;
    }
    if (m.path) r.path += first;
    return r;
}

/* The keys query t of a batch row sees: j < limit_of(l, t), nondecreasing in t. */
typedef struct limits {
    int row;    /* min(k_lengths[b], Tk) */
    int causal; /* nonzero: also j <= t + offset */
    int offset;
} limits;

NMT_INLINE limits limits_of(const nmt_attention_dims *d, int b) {
    limits l = {d->k_lengths && d->k_lengths[b] < d->k_len ? d->k_lengths[b] : d->k_len, d->causal, d->q_offset};
    return l;
}

/* The queries of batch row b that are computed: q_len, or fewer by q_lengths. */
NMT_INLINE int queries_of(const nmt_attention_dims *d, int b) {
    if (!d->q_lengths || d->q_lengths[b] >= d->q_len) return d->q_len;
    return d->q_lengths[b] > 0 ? d->q_lengths[b] : 0;
}

NMT_INLINE int limit_of(const limits *l, int t) {
    int limit = l->row;
    if (l->causal && t + l->offset + 1 < limit) limit = t + l->offset + 1;
    return limit < 0 ? 0 : limit;
}

/* ---------------------------------------------------------------------------------------------- */
/* Micro-kernels */

/* out[c] = lo[c] + hi[c] with its lanes summed by v16_sum's tree (halves, quarters, then
 * (q0 + q2) + (q1 + q3)), for c < 4. */
NMT_INLINE void sum_lanes4(float *out, const v8 *lo, const v8 *hi) {
    const v8 h0 = lo[0] + hi[0], h1 = lo[1] + hi[1], h2 = lo[2] + hi[2], h3 = lo[3] + hi[3];
    v8 ab = __builtin_shufflevector(h0, h1, 0, 1, 2, 3, 8, 9, 10, 11) +
            __builtin_shufflevector(h0, h1, 4, 5, 6, 7, 12, 13, 14, 15);
    v8 cd = __builtin_shufflevector(h2, h3, 0, 1, 2, 3, 8, 9, 10, 11) +
            __builtin_shufflevector(h2, h3, 4, 5, 6, 7, 12, 13, 14, 15);
    ab += __builtin_shufflevector(ab, ab, 2, 3, 0, 1, 6, 7, 4, 5);
    cd += __builtin_shufflevector(cd, cd, 2, 3, 0, 1, 6, 7, 4, 5);
    ab += __builtin_shufflevector(ab, ab, 1, 0, 3, 2, 5, 4, 7, 6);
    cd += __builtin_shufflevector(cd, cd, 1, 0, 3, 2, 5, 4, 7, 6);
    out[0] = ab[0], out[1] = ab[4], out[2] = cd[0], out[3] = cd[4];
}

/* out[a * nk + c] = x[a] . y[c] over n values for a < nq, c < nk (nq * nk = 4): 16 lanes at a
 * time as two v8 halves, summed by sum_lanes4, then the n % 16 tail in order. */
NMT_INLINE void dot_tile(float *out, const float *const *x, const float *const *y, int nq, int nk, int n) {
    v8 lo[4] = {{0}, {0}, {0}, {0}}, hi[4] = {{0}, {0}, {0}, {0}};
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        v8 xl[2], xh[2], yl[4], yh[4];
        for (int a = 0; a < nq; a++) xl[a] = V8_LOAD(x[a] + i), xh[a] = V8_LOAD(x[a] + i + 8);
        for (int c = 0; c < nk; c++) yl[c] = V8_LOAD(y[c] + i), yh[c] = V8_LOAD(y[c] + i + 8);
        for (int a = 0; a < nq; a++)
            for (int c = 0; c < nk; c++) {
                lo[a * nk + c] += xl[a] * yl[c];
                hi[a * nk + c] += xh[a] * yh[c];
            }
    }
    sum_lanes4(out, lo, hi);
    for (int a = 0; a < nq; a++)
        for (int c = 0; c < nk; c++)
            for (int j = i; j < n; j++) out[a * nk + c] += x[a][j] * y[c][j];
}

/* out[c] = x[c] . y[c] over n values for four independent pairs, each summed as dot_tile sums
 * one of its products (so the same bits). */
NMT_INLINE void dot_pairs(float *out, const float *const *x, const float *const *y, int n) {
    v8 lo[4] = {{0}, {0}, {0}, {0}}, hi[4] = {{0}, {0}, {0}, {0}};
    int i = 0;
    for (; i + 16 <= n; i += 16)
        for (int c = 0; c < 4; c++) {
            lo[c] += V8_LOAD(x[c] + i) * V8_LOAD(y[c] + i);
            hi[c] += V8_LOAD(x[c] + i + 8) * V8_LOAD(y[c] + i + 8);
        }
    sum_lanes4(out, lo, hi);
    for (int c = 0; c < 4; c++)
        for (int j = i; j < n; j++) out[c] += x[c][j] * y[c][j];
}

/* s[t * ss + j] = scale * (x_t . y_j) for t < rows and j < limit_of(l, t); nothing else written.
 * (Functions that hold no vector across their calls are not inlined: one copy of each kernel per
 * CPU clone keeps the file quick to compile.) */
NMT_HOT static void scores(float *s, long ss, matrix x, matrix y, const limits *l, int rows, int n, float scale) {
    int t = 0;
    for (; t + 2 <= rows; t += 2) {
        const int lim0 = limit_of(l, t), lim1 = limit_of(l, t + 1);
        const float *xs[2] = {row_of(x, t), row_of(x, t + 1)};
        float *s0 = s + t * ss, *s1 = s0 + ss;
        for (int j = 0; j < lim1; j += 2) {
            const float *ys[2] = {row_of(y, j), row_of(y, j + 1 < lim1 ? j + 1 : j)};
            float out[4];
            dot_tile(out, xs, ys, 2, 2, n);
            if (j < lim0) s0[j] = out[0] * scale;
            if (j + 1 < lim0) s0[j + 1] = out[1] * scale;
            s1[j] = out[2] * scale;
            if (j + 1 < lim1) s1[j + 1] = out[3] * scale;
        }
    }
    for (; t < rows; t++) {
        const int lim = limit_of(l, t);
        const float *xs[1] = {row_of(x, t)};
        for (int j = 0; j < lim; j += 4) {
            const float *ys[4];
            for (int c = 0; c < 4; c++) ys[c] = row_of(y, j + c < lim ? j + c : j);
            float out[4];
            dot_tile(out, xs, ys, 1, 4, n);
            for (int c = 0; c < 4 && j + c < lim; c++) s[t * ss + j + c] = out[c] * scale;
        }
    }
}

enum { QUANTIZED_KEYS = 256 }; /* int8 keys whose dot products are taken at once */

/* scores over int8 keys y: each query row x_t quantized as qgemm quantizes a row (q_t, factor
 * f_t), the exact integer dot products with the keys' int8 values (nmt_qgemm_dots: VNNI, AVX2 or
 * C, the same integers), then s = (float)dot * (f_j * f_t) * scale with f_j key j's factor. */
static void scores_i8(float *s, long ss, matrix x, matrix y, const limits *l, int rows, int n, float scale) {
    int8_t q[NMT_ATTENTION_STORED_BLOCK];
    const int8_t *keys[QUANTIZED_KEYS];
    float factor[QUANTIZED_KEYS];
    int32_t dots[QUANTIZED_KEYS];
    for (int t = 0; t < rows; t++) {
        const float qf = nmt_qgemm_quantize_row(q, row_of(x, t), n);
        const int limit = limit_of(l, t);
        for (int first = 0; first < limit; first += QUANTIZED_KEYS) {
            const int count = limit - first < QUANTIZED_KEYS ? limit - first : QUANTIZED_KEYS;
            for (int j = 0; j < count; j++) keys[j] = (const int8_t *)any_row(y, first + j, 1, &factor[j]);
            nmt_qgemm_dots(dots, q, keys, count, n);
            for (int j = 0; j < count; j++) s[t * ss + first + j] = (float)dots[j] * (factor[j] * qf) * scale;
        }
    }
}

/* Columns [c, c + 8 V) of weighted_rows, V v8 per row in registers (R * V <= 8 accumulators);
 * the sums start from the output rows (`add`) or from 0. */
NMT_INLINE void weighted_chunk(matrix out, const float *p, long pr, long pk, matrix x, int count, int c, int R,
                               int V, int add, int q8) {
    v8 acc[4][8];
    for (int r = 0; r < R; r++)
        for (int u = 0; u < V; u++) {
            const v8 zero = {0};
            acc[r][u] = add ? V8_LOAD(row_of(out, r) + c + 8 * u) : zero;
        }
    for (int k = 0; k < count; k++) {
        float f;
        const void *xk = any_row(x, k, q8, &f);
        v8 xv[8];
        for (int u = 0; u < V; u++) xv[u] = ROW_V8(q8, xk, f, c + 8 * u);
        for (int r = 0; r < R; r++) {
            const float weight = p[r * pr + k * pk];
            for (int u = 0; u < V; u++) acc[r][u] += weight * xv[u];
        }
    }
    for (int r = 0; r < R; r++)
        for (int u = 0; u < V; u++) memcpy(row_of(out, r) + c + 8 * u, &acc[r][u], sizeof(v8));
}

/* out_r[c] = (add ? out_r[c] : 0) + the sum over k < count, in order, of p[r * pr + k * pk] x_k[c],
 * for the R (a constant 4 or 1) rows out_r of `out` and c < n: 4 rows 16 columns at a time, one row
 * 64 (eight independent sums, so that one row does not wait on the latency of each addition); x of
 * floats or (q8) of int8. */
NMT_INLINE void weighted_rows(matrix out, const float *p, long pr, long pk, matrix x, int count, int n, int R,
                              int add, int q8) {
    const int wide = R == 1 ? 8 : 2;
    int c = 0;
    for (; c + 8 * wide <= n; c += 8 * wide) weighted_chunk(out, p, pr, pk, x, count, c, R, wide, add, q8);
    for (; c + 8 <= n; c += 8) weighted_chunk(out, p, pr, pk, x, count, c, R, 1, add, q8);
    for (; c < n; c++)
        for (int r = 0; r < R; r++) {
            float acc = add ? row_of(out, r)[c] : 0.0f;
            for (int k = 0; k < count; k++) {
                float f;
                const void *xk = any_row(x, k, q8, &f);
                acc += p[r * pr + k * pk] * row_value(xk, f, c, q8);
            }
            row_of(out, r)[c] = acc;
        }
}

/* weighted_rows over 4 rows or 1, with R a constant in each instance, on floats and on int8. */
NMT_HOT static void weighted(matrix out, const float *p, long pr, long pk, matrix x, int count, int n, int R,
                             int add) {
    if (R == 4)
        weighted_rows(out, p, pr, pk, x, count, n, 4, add, 0);
    else
        weighted_rows(out, p, pr, pk, x, count, n, 1, add, 0);
}

NMT_HOT static void weighted_i8(matrix out, const float *p, long pr, long pk, matrix x, int count, int n, int R) {
    if (R == 4)
        weighted_rows(out, p, pr, pk, x, count, n, 4, 0, 1);
    else
        weighted_rows(out, p, pr, pk, x, count, n, 1, 0, 1);
}

NMT_INLINE void zero_rows(matrix m, int rows, int n) {
    for (int i = 0; i < rows; i++) memset(row_of(m, i), 0, (size_t)n * sizeof(float));
}

#if defined(__x86_64__) && defined(__GNUC__)
/* weighted_i8 with AVX-512 for n a multiple of 16: sixteen int8 values widened by one vpmovsxbd and
 * one vcvtdq2ps (GCC 12 makes four instructions of a vector conversion of eight bytes), then the
 * same float operations lane by lane, acc + p * (q * f) over k in order, so the same bits. Up to 64
 * columns of R rows in registers. */
__attribute__((target("avx512f"))) static void weighted_i8_avx512(matrix out, const float *p, long pr, long pk,
                                                                   matrix x, int count, int n, int R) {
    for (int c = 0; c < n; c += 64) {
        const int V = (n - c) / 16 < 4 ? (n - c) / 16 : 4;
        __m512 acc[4][4];
        for (int r = 0; r < R; r++)
            for (int u = 0; u < V; u++) acc[r][u] = _mm512_setzero_ps();
        for (int k = 0; k < count; k++) {
            float f;
            const int8_t *xk = (const int8_t *)any_row(x, k, 1, &f) + c;
            const __m512 factor = _mm512_set1_ps(f);
            __m512 xv[4];
            for (int u = 0; u < V; u++) {
                const __m128i bytes = _mm_loadu_si128((const __m128i *)(xk + 16 * u));
                xv[u] = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes)), factor);
            }
            for (int r = 0; r < R; r++) {
                const __m512 weight = _mm512_set1_ps(p[r * pr + k * pk]);
                for (int u = 0; u < V; u++) acc[r][u] = _mm512_add_ps(acc[r][u], _mm512_mul_ps(weight, xv[u]));
            }
        }
        for (int r = 0; r < R; r++)
            for (int u = 0; u < V; u++) _mm512_storeu_ps(row_of(out, r) + c + 16 * u, acc[r][u]);
    }
}
#define ATTENTION_AVX512 1
#else
#define ATTENTION_AVX512 0
#endif

/* The weighted sum of int8 values: with AVX-512 where the int8 products run on it (qgemm's VNNI
 * kernel: so that the tests, setting qgemm's kernel, run both versions), else weighted_i8. */
NMT_INLINE void weighted_values_i8(matrix out, const float *p, long pr, long pk, matrix x, int count, int n, int R) {
#if ATTENTION_AVX512
    if (n % 16 == 0 && nmt_qgemm_kernel_used() == NMT_QGEMM_VNNI) {
        if (R == 4)
            weighted_i8_avx512(out, p, pr, pk, x, count, n, 4);
        else
            weighted_i8_avx512(out, p, pr, pk, x, count, n, 1);
        return;
    }
#endif
    weighted_i8(out, p, pr, pk, x, count, n, R);
}

/* out_t = sum over j, ascending, of p[t][j] x_j for t < Tq (p rows of Tk, zero past each row's
 * limit): the weighted sum of values (forward) and dQ = dS K (backward). */
NMT_INLINE void query_rows(matrix out, const float *p, int Tk, matrix x, const limits *l, int Tq, int n) {
    for (int t = 0; t < Tq;) {
        const int R = Tq - t >= 4 ? 4 : 1;
        if (x.bytes)
            weighted_values_i8(rows_from(out, t), p + (long)t * Tk, Tk, 1, x, limit_of(l, t + R - 1), n, R);
        else
            weighted(rows_from(out, t), p + (long)t * Tk, Tk, 1, x, limit_of(l, t + R - 1), n, R, 0);
        t += R;
    }
}

/* out_j = sum over t, ascending, of p[t][j] x_t for the Tk keys (p rows of Tk, zero past each
 * row's limit; keys no query sees get zeros): dV = (P*M)^T dO and dK = dS^T Q. */
NMT_INLINE void key_rows(matrix out, const float *p, int Tk, matrix x, const limits *l, int Tq, int n) {
    const int seen = Tq > 0 ? limit_of(l, Tq - 1) : 0;
    zero_rows(rows_from(out, seen), Tk - seen, n);
    for (int j = 0; j < seen;) {
        const int R = seen - j >= 4 ? 4 : 1;
        int first = l->causal ? j - l->offset : 0; /* the first query that sees key j */
        if (first < 0) first = 0;
        weighted(rows_from(out, j), p + (long)first * Tk + j, 1, Tk, rows_from(x, first), Tq - first, n, R, 0);
        j += R;
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Forward and backward: units of whole batch rows (all heads of a sentence: its rows stay in one
 * cache) */

enum { ATTENTION_KEYS = 64 }; /* keys per block of dropout factors */

NMT_INLINE float *head_weights(float *w, const nmt_attention_dims *d, long item) {
    return w + item * d->q_len * d->k_len;
}

/* Each of the rows of scores w (rows of Tk) turned into softmax weights over its visible keys,
 * zeros past them. */
NMT_INLINE void softmax_rows(float *w, int Tk, const limits *l, int rows) {
    for (int t = 0; t < rows; t++) {
        const int limit = limit_of(l, t);
        float *row = w + (long)t * Tk;
        memset(row + limit, 0, (size_t)(Tk - limit) * sizeof(float));
        nmt_softmax_rows(row, 1, limit);
    }
}

/* The weighted sum of values with dropout on the weights: key blocks of ATTENTION_KEYS, the
 * dropped weights of R rows in `dropped`, each block added to the output in key order. */
NMT_INLINE void dropped_query_rows(matrix out, const float *w, matrix v, const limits *l,
                                   const nmt_attention_dims *d, long item, int rows, float *dropped) {
    const int Tq = d->q_len, Tk = d->k_len;
    zero_rows(out, rows, d->head_dim);
    for (int t = 0; t < rows;) {
        const int R = rows - t >= 4 ? 4 : 1, limit = limit_of(l, t + R - 1);
        for (int first = 0; first < limit; first += ATTENTION_KEYS) {
            const int n = limit - first < ATTENTION_KEYS ? limit - first : ATTENTION_KEYS;
            for (int r = 0; r < R; r++) {
                float *f = dropped + r * ATTENTION_KEYS;
                const float *p = w + (long)(t + r) * Tk + first;
                nmt_dropout_factors(f, d->dropout, (uint64_t)((item * Tq + t + r) * Tk + first), n);
                for (int k = 0; k < n; k++) f[k] = p[k] * f[k];
            }
            weighted(rows_from(out, t), dropped, ATTENTION_KEYS, 1, rows_from(v, first), n, d->head_dim, R, 1);
        }
        t += R;
    }
}

/* Pulls `rows` rows of `bytes` bytes, `stride` bytes apart, towards the cache. A decoder's cached
 * keys and values (reached through slots) lie a whole step's rows apart, one narrow band per head:
 * a pattern the hardware prefetchers miss, so each (row, head) fetches the next one's while it
 * works. */
NMT_INLINE void prefetch_band(const char *first, long stride, int rows, int bytes) {
    for (int t = 0; t < rows; t++)
        for (int i = 0; i < bytes; i += 64) __builtin_prefetch(first + (long)t * stride + i);
}

/* Where a decoder's cached keys and values lie (shared by both: one layout, slot and path). */
typedef struct cached_layout {
    const char *k, *v;
    const int32_t *slot, *path;
    long path_stride, batch_stride, row_stride;
    size_t size; /* bytes a value */
} cached_layout;

/* The keys and values of item `next` (batch row, head) of a decoding step's self-attention. */
NMT_INLINE void prefetch_cached(const cached_layout *c, const nmt_attention_dims *d, long next) {
    if (next >= (long)d->batch * d->heads) return;
    const int b = (int)(next / d->heads), h = (int)(next % d->heads), rows = queries_of(d, b);
    const limits l = limits_of(d, b);
    const int seen = rows > 0 ? limit_of(&l, rows - 1) : 0, bytes = d->head_dim * (int)c->size;
    const long size = (long)c->size, at = (long)h * d->head_dim * size;
    if (!c->path) {
        const long first = at + c->slot[b] * c->batch_stride * size;
        prefetch_band(c->k + first, c->row_stride * size, seen, bytes);
        prefetch_band(c->v + first, c->row_stride * size, seen, bytes);
        return;
    }
    const int32_t *path = c->path + b * c->path_stride;
    for (int t = 0; t < seen; t++) {
        const long row = at + (path[t] * c->batch_stride + t * c->row_stride) * size;
        prefetch_band(c->k + row, 0, 1, bytes);
        prefetch_band(c->v + row, 0, 1, bytes);
    }
}

/* Batch row b of a decoding step: one query, for every head at once. A key's or value's row holds
 * every head's values; the general path, head after head, reads each head's narrow band of the rows
 * in turn, and a decoding batch's caches are far larger than the caches of the CPU: a band of 256
 * bytes every 2 KB streams at a third of the rate of the same bytes in order (8 against 24 GB/s on
 * one AMD Zen 4 core). Here the rows are read whole, in key order (the decoder lays each batch
 * row's keys, and its values, one after another), and each head gets the general path's operations
 * in its order: its scores as dot_tile's, its weighted sum added key by key from zero (out = out +
 * p x, as weighted_rows' registers), so the same bits. */
NMT_HOT static void decode_row(const attention_task *a, int b) {
    const nmt_attention_dims *d = a->dims;
    const int H = d->heads, dh = d->head_dim, Tk = d->k_len;
    const limits l = limits_of(d, b);
    const int limit = limit_of(&l, 0);
    const matrix k = head_of(a->k, b, 0, dh), v = head_of(a->v, b, 0, dh);
    const float *q = row_of(head_of(a->q, b, 0, dh), 0);
    float *out = row_of(head_of(a->out, b, 0, dh), 0), *w = head_weights(a->weights, d, (long)b * H);
    for (int j = 0; j < limit; j++) {
        const float *key = row_of(k, j);
        for (int h = 0; h < H; h += 4) {
            const float *xs[4], *ys[4];
            for (int c = 0; c < 4; c++) {
                const int head = h + c < H ? h + c : h;
                xs[c] = q + head * dh;
                ys[c] = key + head * dh;
            }
            float dots[4];
            dot_pairs(dots, xs, ys, dh);
            for (int c = 0; c < 4 && h + c < H; c++) w[(long)(h + c) * Tk + j] = dots[c] * d->scale;
        }
    }
    for (int h = 0; h < H; h++) softmax_rows(w + (long)h * Tk, Tk, &l, 1);
    memset(out, 0, (size_t)H * (size_t)dh * sizeof(float));
    for (int j = 0; j < limit; j++) {
        const float *value = row_of(v, j);
        for (int h = 0; h < H; h++) {
            const float p = w[(long)h * Tk + j];
            float *o = out + h * dh;
            const float *x = value + h * dh;
            int c = 0;
            for (; c + 8 <= dh; c += 8) {
                const v8 sum = V8_LOAD(o + c) + p * V8_LOAD(x + c);
                memcpy(o + c, &sum, sizeof sum);
            }
            for (; c < dh; c++) o[c] += p * x[c];
        }
    }
}

NMT_HOT static void attention_forward_range(void *ctx, long begin, long end) {
    const attention_task *a = ctx;
    const nmt_attention_dims *d = a->dims;
    if (d->q_len == 1 && d->dropout.rate <= 0.0f) { /* a decoding step (the hardware prefetches its rows) */
        for (long b = begin; b < end; b++)
            if (queries_of(d, (int)b) == 1) decode_row(a, (int)b);
        return;
    }
    const int dh = d->head_dim, Tk = d->k_len;
    float dropped[4 * ATTENTION_KEYS];
    const nmt_heads *k = &a->k, *v = &a->v;
    /* Keys and values in one layout, reached through slot or path: a decoder's caches. */
    const cached_layout layout = {(const char *)k->data, (const char *)v->data, k->slot, k->path, k->path_stride,
                                  k->batch_stride, k->row_stride, sizeof(float)};
    const int cached = (k->slot || k->path) && v->slot == k->slot && v->path == k->path &&
                       v->path_stride == k->path_stride && v->batch_stride == k->batch_stride &&
                       v->row_stride == k->row_stride;
    for (long item = begin * d->heads; item < end * d->heads; item++) {
        const int b = (int)(item / d->heads), h = (int)(item % d->heads);
        if (cached) prefetch_cached(&layout, d, item + 1);
        const limits l = limits_of(d, b);
        const int rows = queries_of(d, b);
        const matrix q = head_of(a->q, b, h, dh), k = head_of(a->k, b, h, dh), v = head_of(a->v, b, h, dh);
        const matrix out = head_of(a->out, b, h, dh);
        float *w = head_weights(a->weights, d, item);
        scores(w, Tk, q, k, &l, rows, dh, d->scale);
        softmax_rows(w, Tk, &l, rows);
        if (d->dropout.rate > 0.0f)
            dropped_query_rows(out, w, v, &l, d, item, rows, dropped);
        else
            query_rows(out, w, Tk, v, &l, rows, dh);
    }
}

void nmt_attention_forward(nmt_heads out, float *weights, nmt_heads q, nmt_heads k, nmt_heads v,
                           const nmt_attention_dims *dims) {
    attention_task a = {.out = out, .q = q, .k = k, .v = v, .weights = weights, .dims = dims};
    nmt_pool_work(dims->batch, (long)dims->heads * dims->q_len * dims->k_len * dims->head_dim, attention_forward_range, &a);
}

/* Stored keys and values (inference caches). int8 ones go straight into the kernels: the scores
 * are integer dot products with the quantized queries (scores_i8), the values are converted in
 * registers, (float)q * f as nmt_kv_widen does. Others (float16) are widened block by block for
 * each (batch row, head): its keys for the scores, then its values, each block's weighted sum added
 * to the output in key order (weighted_rows carried over blocks adds the same terms in the same
 * order). */
typedef struct stored_task {
    nmt_heads out, q;
    nmt_kv_heads k, v;
    float *weights;
    const nmt_attention_dims *dims;
} stored_task;

/* The value offset of (batch row b, key t, head h) in x, less the path's part (nmt_kv_widen adds it). */
NMT_INLINE size_t stored_at(const nmt_kv_heads *x, int b, int t, int h, int dh) {
    const long block = x->path ? 0 : (x->slot ? x->slot[b] : b) * x->batch_stride;
    return (size_t)(block + t * x->row_stride + (long)h * dh);
}

/* The path of batch row b from key t on, or NULL. */
NMT_INLINE const int32_t *stored_path(const nmt_kv_heads *x, int b, int t) {
    return x->path ? x->path + b * x->path_stride + t : NULL;
}

/* Head h of batch row b of int8 keys or values as a matrix. */
NMT_INLINE matrix stored_i8(const nmt_kv_heads *x, int b, int h, int dh) {
    const size_t at = stored_at(x, b, 0, h, dh);
    matrix m = {NULL, x->row_stride, stored_path(x, b, 0), x->batch_stride, (const int8_t *)x->data + at,
                x->factor + at / (size_t)dh, x->row_stride / dh, x->batch_stride / dh};
    return m;
}

/* The limits of l seen from key `first` on, for a block of n keys. */
NMT_INLINE limits block_limits(const limits *l, int first, int n) {
    limits part = {l->row - first < n ? l->row - first : n, l->causal, l->offset - first};
    return part;
}

#if ATTENTION_AVX512
/* decode_row_i8's weighted sums with AVX-512 (head size a multiple of 16): sixteen values widened
 * by one vpmovsxbd, the same float operations lane by lane as its plain loop. */
__attribute__((target("avx512f"))) static void decode_values_i8_avx512(float *out, const float *w, long Tk, matrix v,
                                                                       int limit, int H, int dh) {
    for (int j = 0; j < limit; j++) {
        const int8_t *value = v.bytes + offset_of(v, j);
        const float *factor = v.factor + factor_of(v, j);
        for (int h = 0; h < H; h++) {
            const __m512 p = _mm512_set1_ps(w[(long)h * Tk + j]), f = _mm512_set1_ps(factor[h]);
            float *o = out + h * dh;
            const int8_t *x = value + h * dh;
            for (int c = 0; c < dh; c += 16) {
                const __m128i bytes = _mm_loadu_si128((const __m128i *)(x + c));
                const __m512 xv = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes)), f);
                _mm512_storeu_ps(o + c, _mm512_add_ps(_mm512_loadu_ps(o + c), _mm512_mul_ps(p, xv)));
            }
        }
    }
}
#endif

/* Whether decode_row_i8 takes the batch rows of a step over int8 keys and values: one query a row,
 * every head's quantized query in one buffer and its dot products in one call. */
NMT_INLINE int decodes_i8_rows(const nmt_attention_dims *d) {
    return d->q_len == 1 && d->heads <= NMT_QGEMM_DOT_HEADS && d->heads * d->head_dim <= NMT_ATTENTION_STORED_BLOCK;
}

/* Batch row b of a decoding step over int8 keys and values, every head at once (decode_row's reason):
 * each key row read whole, in order, all its heads' integer dot products taken together
 * (nmt_qgemm_dots_heads), then each value row whole. Each head gets scores_i8's and weighted_rows'
 * operations in their order: its query quantized alone, s = (float)dot * (f_j * f_q) * scale, its
 * weighted sum added key by key from zero as acc + p ((float)x * f), so the same bits. */
NMT_HOT static void decode_row_i8(const stored_task *a, int b) {
    const nmt_attention_dims *d = a->dims;
    const int H = d->heads, dh = d->head_dim, Tk = d->k_len, keys_at_once = QUANTIZED_KEYS / H;
    const limits l = limits_of(d, b);
    const int limit = limit_of(&l, 0);
    int8_t q[NMT_ATTENTION_STORED_BLOCK];
    float qf[NMT_QGEMM_DOT_HEADS];
    const int8_t *rows[QUANTIZED_KEYS];
    int32_t dots[QUANTIZED_KEYS];
    for (int h = 0; h < H; h++) qf[h] = nmt_qgemm_quantize_row(q + h * dh, row_of(head_of(a->q, b, h, dh), 0), dh);
    const matrix k = stored_i8(&a->k, b, 0, dh), v = stored_i8(&a->v, b, 0, dh);
    float *w = head_weights(a->weights, d, (long)b * H), *out = row_of(head_of(a->out, b, 0, dh), 0);
    for (int first = 0; first < limit; first += keys_at_once) {
        const int count = limit - first < keys_at_once ? limit - first : keys_at_once;
        for (int j = 0; j < count; j++) rows[j] = k.bytes + offset_of(k, first + j);
        nmt_qgemm_dots_heads(dots, q, H, rows, count, dh);
        for (int j = 0; j < count; j++) {
            const float *factor = k.factor + factor_of(k, first + j);
            for (int h = 0; h < H; h++)
                w[(long)h * Tk + first + j] = (float)dots[j * H + h] * (factor[h] * qf[h]) * d->scale;
        }
    }
    for (int h = 0; h < H; h++) softmax_rows(w + (long)h * Tk, Tk, &l, 1);
    memset(out, 0, (size_t)H * (size_t)dh * sizeof(float));
#if ATTENTION_AVX512
    if (dh % 16 == 0 && nmt_qgemm_kernel_used() == NMT_QGEMM_VNNI) {
        decode_values_i8_avx512(out, w, Tk, v, limit, H, dh);
        return;
    }
#endif
    for (int j = 0; j < limit; j++) {
        const int8_t *value = v.bytes + offset_of(v, j);
        const float *factor = v.factor + factor_of(v, j);
        for (int h = 0; h < H; h++) {
            const float p = w[(long)h * Tk + j], f = factor[h];
            float *o = out + h * dh;
            const int8_t *x = value + h * dh;
            int c = 0;
            for (; c + 8 <= dh; c += 8) {
                const v8 sum = V8_LOAD(o + c) + p * (V8_FROM_I8(x + c) * f);
                memcpy(o + c, &sum, sizeof sum);
            }
            for (; c < dh; c++) o[c] += p * ((float)x[c] * f);
        }
    }
}

static void attention_stored_range(void *ctx, long begin, long end) {
    const stored_task *a = ctx;
    const nmt_attention_dims *d = a->dims;
    const int dh = d->head_dim, Tk = d->k_len, block = NMT_ATTENTION_STORED_BLOCK / dh;
    float widened[NMT_ATTENTION_STORED_BLOCK];
    const matrix x = {.data = widened, .stride = dh};
    const nmt_kv_heads *k = &a->k, *v = &a->v;
    const cached_layout layout = {(const char *)k->data, (const char *)v->data, k->slot, k->path, k->path_stride,
                                  k->batch_stride, k->row_stride, nmt_kv_value_bytes(k->format)};
    const int cached = (k->slot || k->path) && v->slot == k->slot && v->path == k->path &&
                       v->path_stride == k->path_stride && v->batch_stride == k->batch_stride &&
                       v->row_stride == k->row_stride && k->format == v->format;
    const int int8 = k->format == NMT_KV_I8 && v->format == NMT_KV_I8;
    if (int8 && decodes_i8_rows(d)) {
        for (long b = begin; b < end; b++)
            if (queries_of(d, (int)b) == 1) decode_row_i8(a, (int)b);
        return;
    }
    for (long item = begin * d->heads; item < end * d->heads; item++) {
        const int b = (int)(item / d->heads), h = (int)(item % d->heads);
        if (cached) prefetch_cached(&layout, d, item + 1);
        const limits l = limits_of(d, b);
        const int Tq = queries_of(d, b), seen = Tq > 0 ? limit_of(&l, Tq - 1) : 0;
        const matrix q = head_of(a->q, b, h, dh), out = head_of(a->out, b, h, dh);
        float *w = head_weights(a->weights, d, item);
        if (int8) {
            scores_i8(w, Tk, q, stored_i8(k, b, h, dh), &l, Tq, dh, d->scale);
            softmax_rows(w, Tk, &l, Tq);
            query_rows(out, w, Tk, stored_i8(v, b, h, dh), &l, Tq, dh);
            continue;
        }
        for (int first = 0; first < seen; first += block) {
            const int n = seen - first < block ? seen - first : block;
            const limits part = block_limits(&l, first, n);
            nmt_kv_widen(k->format, widened, dh, k->data, k->factor, stored_at(k, b, first, h, dh), k->row_stride,
                         stored_path(k, b, first), k->batch_stride, n, dh, dh);
            scores(w + first, Tk, q, x, &part, Tq, dh, d->scale);
        }
        softmax_rows(w, Tk, &l, Tq);
        zero_rows(out, Tq, dh);
        for (int first = 0; first < seen; first += block) {
            const int n = seen - first < block ? seen - first : block;
            nmt_kv_widen(v->format, widened, dh, v->data, v->factor, stored_at(v, b, first, h, dh), v->row_stride,
                         stored_path(v, b, first), v->batch_stride, n, dh, dh);
            for (int t = 0; t < Tq;) {
                const int R = Tq - t >= 4 ? 4 : 1, limit = limit_of(&l, t + R - 1);
                const int count = (limit < first + n ? limit : first + n) - first;
                if (count > 0) weighted(rows_from(out, t), w + (long)t * Tk + first, Tk, 1, x, count, dh, R, 1);
                t += R;
            }
        }
    }
}

void nmt_attention_forward_stored(nmt_heads out, float *weights, nmt_heads q, nmt_kv_heads k, nmt_kv_heads v,
                                  const nmt_attention_dims *dims) {
    stored_task a = {.out = out, .q = q, .k = k, .v = v, .weights = weights, .dims = dims};
    nmt_pool_work(dims->batch, (long)dims->heads * dims->q_len * dims->k_len * dims->head_dim, attention_stored_range, &a);
}

/* Pulls the rows of batch row b (len rows of `width` floats from x.data) towards the cache. The
 * heads of one batch row are processed one after another, each reading a narrow column band of
 * rows a long stride apart, a pattern the hardware prefetchers miss; fetching the next batch row
 * while working on this one hides that latency. */
NMT_INLINE void prefetch_rows(nmt_heads x, int b, int len, int width) {
    const matrix m = head_of(x, b, 0, 0);
    for (int t = 0; t < len; t++) {
        const char *row = (const char *)row_of(m, t);
        for (int i = 0; i < width * (int)sizeof(float); i += 64) __builtin_prefetch(row + i);
    }
}

/* The backward's inputs of batch row b, for all heads. */
NMT_INLINE void attention_prefetch(const attention_task *a, int b) {
    const nmt_attention_dims *d = a->dims;
    if (b >= d->batch) return;
    int width = d->heads * d->head_dim;
    prefetch_rows(a->q, b, d->q_len, width);
    prefetch_rows(a->k, b, d->k_len, width);
    prefetch_rows(a->v, b, d->k_len, width);
    prefetch_rows(a->dout, b, d->q_len, width);
}

/* g[t][j] for j < limit(t), in blocks of ATTENTION_KEYS: g = P * factor when `dp` is 0, else
 * g = g * factor (the dropout on dP); zero from limit(t) to `seen`. */
NMT_INLINE void apply_dropout(float *g, const float *w, const limits *l, const nmt_attention_dims *d, long item,
                              int seen, int dp, float *factors) {
    const int Tq = d->q_len, Tk = d->k_len;
    for (int t = 0; t < Tq; t++) {
        const int limit = limit_of(l, t);
        float *row = g + (long)t * Tk;
        const float *p = w + (long)t * Tk;
        for (int first = 0; first < limit; first += ATTENTION_KEYS) {
            const int n = limit - first < ATTENTION_KEYS ? limit - first : ATTENTION_KEYS;
            nmt_dropout_factors(factors, d->dropout, (uint64_t)((item * Tq + t) * Tk + first), n);
            for (int k = 0; k < n; k++) row[first + k] = (dp ? row[first + k] : p[first + k]) * factors[k];
        }
        if (seen > limit) memset(row + limit, 0, (size_t)(seen - limit) * sizeof(float));
    }
}

NMT_HOT static void attention_backward_range(void *ctx, long begin, long end) {
    const attention_task *a = ctx;
    const nmt_attention_dims *d = a->dims;
    const int dh = d->head_dim, Tq = d->q_len, Tk = d->k_len, drop = d->dropout.rate > 0.0f;
    float factors[ATTENTION_KEYS];
    for (long item = begin * d->heads; item < end * d->heads; item++) {
        const int b = (int)(item / d->heads), h = (int)(item % d->heads);
        if (h == 0) attention_prefetch(a, b + 1);
        const limits l = limits_of(d, b);
        const int seen = Tq > 0 ? limit_of(&l, Tq - 1) : 0; /* keys any query sees */
        const matrix q = head_of(a->q, b, h, dh), k = head_of(a->k, b, h, dh), v = head_of(a->v, b, h, dh);
        const matrix dout = head_of(a->dout, b, h, dh), dq = head_of(a->dq, b, h, dh);
        const matrix dk = head_of(a->dk, b, h, dh), dv = head_of(a->dv, b, h, dh);
        const float *w = a->weights_in + item * Tq * Tk;
        float *g = head_weights(a->dweights, d, item);
        /* dV = (P*M)^T dO, with P*M in g under dropout. */
        if (drop) apply_dropout(g, w, &l, d, item, seen, 0, factors);
        key_rows(dv, drop ? g : w, Tk, dout, &l, Tq, dh);
        /* dP = (dO V^T) * M, then dS in place. */
        scores(g, Tk, dout, v, &l, Tq, dh, 1.0f);
        if (drop) apply_dropout(g, w, &l, d, item, seen, 1, factors);
        for (int t = 0; t < Tq; t++) {
            const int limit = limit_of(&l, t);
            float *ds = g + (long)t * Tk;
            const float *p = w + (long)t * Tk;
            float rowdot = 0.0f;
            for (int j = 0; j < limit; j++) rowdot += p[j] * ds[j];
            for (int j = 0; j < limit; j++) ds[j] = p[j] * (ds[j] - rowdot) * d->scale;
            if (seen > limit) memset(ds + limit, 0, (size_t)(seen - limit) * sizeof(float));
        }
        query_rows(dq, g, Tk, k, &l, Tq, dh);
        key_rows(dk, g, Tk, q, &l, Tq, dh);
    }
}

void nmt_attention_backward(nmt_heads dq, nmt_heads dk, nmt_heads dv, float *dweights, nmt_heads dout,
                            const float *weights, nmt_heads q, nmt_heads k, nmt_heads v,
                            const nmt_attention_dims *dims) {
    attention_task a = {.dq = dq, .dk = dk, .dv = dv, .dweights = dweights, .dout = dout, .weights_in = weights,
                        .q = q, .k = k, .v = v, .dims = dims};
    nmt_pool_work(dims->batch, 2L * dims->heads * dims->q_len * dims->k_len * dims->head_dim, attention_backward_range, &a);
}
