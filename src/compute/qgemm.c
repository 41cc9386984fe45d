/* qgemm: int8 weights quantized and packed once, activations quantized per call, and the integer
 * kernels over them (VNNI, AVX2, plain C; see qgemm.h).
 *
 * A task owns whole 32-column panels and walks all row tiles over each, so a panel (K * 32 bytes)
 * stays in L1/L2 while the quantized rows stream. The VNNI tile is up to 12 rows x 32 columns in
 * 24 zmm accumulators; the AVX2 tile up to 4 rows x 16 columns in 8 ymm, twice per panel.
 */
#include "compute/qgemm.h"

#include "base/util.h"
#include "compute/pool.h"
#include "compute/simd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { PANEL = 32, GROUP = 4, VNNI_ROWS = 12, AVX2_ROWS = 4 };
/* Bytes of the panel ahead of its group d that the VNNI tile prefetches at d: as gemm.c's AVX-512
 * tile does, for the first pass over weights that decoding streams from beyond L2 (the next panel
 * follows in memory). */
enum { VNNI_PREFETCH = 3072 };

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QGEMM_X86 1
#else
#define QGEMM_X86 0
#endif

nmt_qgemm_kernel nmt_qgemm_best(void) {
#if QGEMM_X86
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vnni"))
        return NMT_QGEMM_VNNI;
    if (__builtin_cpu_supports("avx2")) return NMT_QGEMM_AVX2;
#endif
    return NMT_QGEMM_C;
}

static int kernel_set = -1; /* -1: nmt_qgemm_best() */

nmt_qgemm_kernel nmt_qgemm_kernel_used(void) { return kernel_set < 0 ? nmt_qgemm_best() : (nmt_qgemm_kernel)kernel_set; }

int nmt_qgemm_set_kernel(nmt_qgemm_kernel kernel) {
    if (kernel > nmt_qgemm_best()) return nmt_error_set("int8 kernel %s: not on this CPU", nmt_qgemm_kernel_name(kernel));
    kernel_set = (int)kernel;
    return 0;
}

const char *nmt_qgemm_kernel_name(nmt_qgemm_kernel kernel) {
    return kernel == NMT_QGEMM_VNNI ? "AVX-512 VNNI" : kernel == NMT_QGEMM_AVX2 ? "AVX2" : "C";
}

#if QGEMM_X86
/* quantize_row's values from k = 0 on, 64 at a time; returns where it stopped. Rounded to the
 * nearest integer, ties to even, as nearbyintf rounds (adding and taking off 1.5 * 2^23 leaves the
 * integer for |x| < 2^22; |x| <= 127 here), a NaN made 0 as the plain loop makes it, clamped, then
 * narrowed by two saturating packs and one permutation of 4-byte groups into order: the plain
 * loop's clamps and narrowing took about a cycle a value on an AMD Zen 4 core. */
__attribute__((target("avx512f,avx512bw"))) static int quantize_avx512(int8_t *q, const float *v, int K,
                                                                       float inverse) {
    const __m512 scale = _mm512_set1_ps(inverse), magic = _mm512_set1_ps(12582912.0f);
    const __m512 top = _mm512_set1_ps(127.0f), bottom = _mm512_set1_ps(-127.0f);
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    int k = 0;
    for (; k + 64 <= K; k += 64) {
        __m512i n[4];
        for (int u = 0; u < 4; u++) {
            const __m512 x = _mm512_mul_ps(_mm512_loadu_ps(v + k + 16 * u), scale);
            const __m512 r = _mm512_sub_ps(_mm512_add_ps(x, magic), magic);
            const __m512 finite = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(r, r, _CMP_ORD_Q), r);
            n[u] = _mm512_cvttps_epi32(_mm512_max_ps(_mm512_min_ps(finite, top), bottom));
        }
        const __m512i bytes = _mm512_packs_epi16(_mm512_packs_epi32(n[0], n[1]), _mm512_packs_epi32(n[2], n[3]));
        _mm512_storeu_si512(q + k, _mm512_permutexvar_epi32(order, bytes));
    }
    return k;
}
#endif

NMT_HOT static float quantize_row(int8_t *q, const float *v, int K) {
    /* A comparison, not fmaxf (a libm call without -ffast-math): the same maximum, NaNs skipped
     * (a NaN compares false). Running maxima per lane in four vectors, so that the loop runs on
     * vectors (one chain of scalar comparisons took most of the activations' quantization); the
     * maximum of a set does not depend on the order it is taken in, so the result is the same. */
    typedef int32_t i16 __attribute__((vector_size(64)));
    const i16 magnitude = {0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff,
                           0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff,
                           0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff};
    v16 m0 = {0.0f}, m1 = {0.0f}, m2 = {0.0f}, m3 = {0.0f}; /* four chains: no comparison waits on the last */
#define QGEMM_ABOVE(m, a)                                          \
    do {                                                           \
        const i16 above_ = (a) > (m);                              \
        (m) = (v16)(((i16)(a) & above_) | ((i16)(m) & ~above_));   \
    } while (0)
#define QGEMM_MAX16(m, at) QGEMM_ABOVE(m, (v16)((i16)V16_LOAD(v + (at)) & magnitude))
    int k = 0;
    for (; k + 64 <= K; k += 64) {
        QGEMM_MAX16(m0, k);
        QGEMM_MAX16(m1, k + 16);
        QGEMM_MAX16(m2, k + 32);
        QGEMM_MAX16(m3, k + 48);
    }
    for (; k + 16 <= K; k += 16) QGEMM_MAX16(m0, k);
    /* Lane by lane, then halves: vector selects, not a chain of scalar ones through memory. */
    QGEMM_ABOVE(m0, m1);
    QGEMM_ABOVE(m2, m3);
    QGEMM_ABOVE(m0, m2);
    const v16 h8 = __builtin_shufflevector(m0, m0, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    QGEMM_ABOVE(m0, h8);
    const v16 h4 = __builtin_shufflevector(m0, m0, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3);
    QGEMM_ABOVE(m0, h4);
    const v16 h2 = __builtin_shufflevector(m0, m0, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1);
    QGEMM_ABOVE(m0, h2);
    const v16 h1 = __builtin_shufflevector(m0, m0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0);
    QGEMM_ABOVE(m0, h1);
#undef QGEMM_MAX16
#undef QGEMM_ABOVE
    float max = m0[0];
    for (; k < K; k++) {
        const float a = fabsf(v[k]);
        max = a > max ? a : max;
    }
    if (!(max > 0.0f) || !isfinite(max)) {
        memset(q, 0, (size_t)K);
        return 0.0f;
    }
    /* The factor keeps 17 significant bits, so that q * factor is exact in float32 for every q
     * (7 + 17 bits): a row dequantized (an int8 model file read back) quantizes to the same q and
     * the same factor again. */
    float factor = max / 127.0f;
    uint32_t bits;
    memcpy(&bits, &factor, sizeof bits);
    bits = (bits + (1u << 5)) & ~((1u << 6) - 1);
    memcpy(&factor, &bits, sizeof bits);
    const float inverse = 1.0f / factor;
    k = 0;
#if QGEMM_X86
    if (nmt_qgemm_kernel_used() == NMT_QGEMM_VNNI) k = quantize_avx512(q, v, K, inverse); /* tests can set either */
#endif
    for (; k < K; k++) {
        const float r = nearbyintf(v[k] * inverse);
        q[k] = (int8_t)(r > 127.0f ? 127 : r < -127.0f ? -127 : (int)r);
    }
    return factor;
}

float nmt_qgemm_quantize_row(int8_t *q, const float *v, int K) { return quantize_row(q, v, K); }

static size_t groups(int K) { return ((size_t)K + GROUP - 1) / GROUP; }

void nmt_qgemm_row(const nmt_qgemm *w, int n, float *out) {
    const size_t j = (size_t)n / PANEL, c = (size_t)n % PANEL;
    const int8_t *panel = w->panels + j * groups(w->K) * PANEL * GROUP + c * GROUP;
    const float factor = w->factor[n];
    for (size_t k = 0; k < (size_t)w->K; k++) out[k] = (float)panel[(k / GROUP) * PANEL * GROUP + k % GROUP] * factor;
}

int nmt_qgemm_init(nmt_qgemm *w, const float *weight, int N, int K) {
    *w = (nmt_qgemm){.N = N, .K = K};
    if (N < 1 || K < 1) return nmt_error_set("int8 matrix of %d x %d", N, K);
    const size_t panels = ((size_t)N + PANEL - 1) / PANEL, depth = groups(K) * GROUP, columns = panels * PANEL;
    size_t bytes = 0;
    if (nmt_size_mul(columns, depth, &bytes, "int8 matrix") < 0) return -1;
    w->panels = nmt_malloc_aligned(bytes);
    w->factor = nmt_calloc(columns, sizeof(float));
    w->shift = nmt_calloc(columns, sizeof(int32_t));
    int8_t *row = nmt_calloc(depth, 1);
    if (!w->panels || !w->factor || !w->shift || !row) {
        free(row);
        nmt_qgemm_free(w);
        return -1;
    }
    memset(w->panels, 0, bytes);
    for (size_t n = 0; n < (size_t)N; n++) {
        w->factor[n] = nmt_qgemm_quantize_row(row, weight + n * (size_t)K, K);
        int32_t sum = 0;
        const size_t j = n / PANEL, c = n % PANEL;
        for (size_t k = 0; k < (size_t)K; k++) {
            sum += row[k];
            w->panels[((j * groups(K) + k / GROUP) * PANEL + c) * GROUP + k % GROUP] = row[k];
        }
        w->shift[n] = 128 * sum;
    }
    free(row);
    return 0;
}

void nmt_qgemm_free(nmt_qgemm *w) {
    free(w->panels);
    free(w->factor);
    free(w->shift);
    w->panels = NULL;
    w->factor = NULL;
    w->shift = NULL;
}

size_t nmt_qgemm_bytes(const nmt_qgemm *w) {
    const size_t columns = ((size_t)w->N + PANEL - 1) / PANEL * PANEL;
    return columns * groups(w->K) * GROUP + columns * (sizeof(float) + sizeof(int32_t));
}

size_t nmt_qgemm_words(const nmt_qgemm *w, int M) { return M > 0 ? (size_t)M * (groups(w->K) + 1) : 0; }

typedef struct quantizing {
    uint32_t *xq;
    const float *x;
    int K;
    int unsigned_bytes; /* the VNNI kernel's: each byte q + 128 */
} quantizing;

/* Each byte of the words plus 128 (mod 256): the signed q as vpdpbusd's unsigned operand. */
NMT_HOT static void flip_bytes(uint32_t *words, size_t n) {
    for (size_t i = 0; i < n; i++) words[i] ^= 0x80808080u;
}

static void quantize_rows(void *ctx, long begin, long end) {
    const quantizing *t = ctx;
    const size_t stride = groups(t->K) + 1;
    for (long r = begin; r < end; r++) {
        uint32_t *row = t->xq + (size_t)r * stride;
        memset(row, 0, (stride - 1) * sizeof(uint32_t));
        const float factor = nmt_qgemm_quantize_row((int8_t *)row, t->x + (size_t)r * (size_t)t->K, t->K);
        if (t->unsigned_bytes) flip_bytes(row, stride - 1);
        memcpy(row + stride - 1, &factor, sizeof factor);
    }
}

void nmt_qgemm_quantize(const nmt_qgemm *w, uint32_t *xq, const float *x, int M) {
    if (M < 1) return;
    quantizing t = {xq, x, w->K, nmt_qgemm_kernel_used() == NMT_QGEMM_VNNI};
    nmt_pool_work(M, w->K, quantize_rows, &t);
}

/* One panel's share of a product: rows [0, M) of xq times panel columns [0, cols), into y (rows
 * ldy apart); factor, shift and bias (NULL or) start at the panel's first column. */
typedef struct tile_args {
    const uint32_t *xq; /* stride words per row; the row factor is its last word */
    size_t stride;
    const int8_t *panel;
    const float *factor, *bias;
    const int32_t *shift;
    float *y;
    int ldy, cols;
} tile_args;

static float row_factor(const uint32_t *row, size_t stride) {
    float f;
    memcpy(&f, row + stride - 1, sizeof f);
    return f;
}

static void panel_c(const tile_args *a, int M) {
    const size_t depth = (a->stride - 1) * GROUP;
    for (int m = 0; m < M; m++) {
        const int8_t *x = (const int8_t *)(a->xq + (size_t)m * a->stride);
        const float xf = row_factor(a->xq + (size_t)m * a->stride, a->stride);
        for (int c = 0; c < a->cols; c++) {
            int32_t s = 0;
            for (size_t k = 0; k < depth; k++) s += (int32_t)x[k] * a->panel[((k / GROUP) * PANEL + (size_t)c) * GROUP + k % GROUP];
            const float scale = a->factor[c] * xf, v = (float)s * scale;
            a->y[(size_t)m * (size_t)a->ldy + (size_t)c] = a->bias ? v + a->bias[c] : v;
        }
    }
}

#if QGEMM_X86
static __mmask16 mask16(int cols) { return (__mmask16)(cols >= 16 ? 0xffff : cols <= 0 ? 0 : (1u << cols) - 1); }

/* (float)s * (factor * xf) + bias on 16 columns, stored under mask. */
__attribute__((target("avx512f"), always_inline)) static inline void
store16_vnni(float *y, __m512i s, const float *factor, const float *bias, float xf, __mmask16 k) {
    const __m512 scale = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, factor), _mm512_set1_ps(xf));
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(s), scale);
    if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, bias));
    _mm512_mask_storeu_ps(y, k, v);
}

/* acc + the dot products of u's unsigned and w's signed byte quads. In assembly: GCC 12 gives the
 * intrinsic's accumulator a copy (and a spill to the stack) per instruction, which cost the
 * 12-row tile over a third of its speed; "+v" keeps each sum in its register. */
__attribute__((target("avx512f,avx512vnni"), always_inline)) static inline __m512i dpbusd(__m512i acc, __m512i u,
                                                                                          __m512i w) {
    __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u), "v"(w));
    return acc;
}

__attribute__((target("avx512f,avx512bw,avx512vnni"), always_inline)) static inline void
tile_vnni(int rows, const tile_args *a, int m0) {
    __m512i acc[VNNI_ROWS][2];
    const uint32_t *x = a->xq + (size_t)m0 * a->stride;
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++) acc[i][0] = acc[i][1] = _mm512_setzero_si512();
    for (size_t d = 0; d + 1 < a->stride; d++) {
        const char *ahead = (const char *)(a->panel + d * PANEL * GROUP) + VNNI_PREFETCH;
        _mm_prefetch(ahead, _MM_HINT_T0);
        _mm_prefetch(ahead + 64, _MM_HINT_T0);
        const __m512i w0 = _mm512_load_si512((const void *)(a->panel + d * PANEL * GROUP)),
                      w1 = _mm512_load_si512((const void *)(a->panel + d * PANEL * GROUP + 64));
#pragma GCC unroll 12
        for (int i = 0; i < rows; i++) {
            const __m512i u = _mm512_set1_epi32((int)x[(size_t)i * a->stride + d]);
            acc[i][0] = dpbusd(acc[i][0], u, w0);
            acc[i][1] = dpbusd(acc[i][1], u, w1);
        }
    }
    const __mmask16 lo = mask16(a->cols), hi = mask16(a->cols - 16);
    const __m512i s0 = _mm512_maskz_loadu_epi32(lo, a->shift), s1 = _mm512_maskz_loadu_epi32(hi, a->shift + 16);
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++) {
        const float xf = row_factor(x + (size_t)i * a->stride, a->stride);
        float *y = a->y + (size_t)(m0 + i) * (size_t)a->ldy;
        store16_vnni(y, _mm512_sub_epi32(acc[i][0], s0), a->factor, a->bias, xf, lo);
        store16_vnni(y + 16, _mm512_sub_epi32(acc[i][1], s1), a->factor + 16, a->bias ? a->bias + 16 : NULL, xf, hi);
    }
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void panel_vnni(const tile_args *a, int M) {
    for (int m = 0; m < M; m += VNNI_ROWS) {
        switch (M - m < VNNI_ROWS ? M - m : VNNI_ROWS) {
#define TILE_CASE(r) \
    case r: tile_vnni(r, a, m); break;
            TILE_CASE(1) TILE_CASE(2) TILE_CASE(3) TILE_CASE(4) TILE_CASE(5) TILE_CASE(6)
            TILE_CASE(7) TILE_CASE(8) TILE_CASE(9) TILE_CASE(10) TILE_CASE(11) TILE_CASE(12)
#undef TILE_CASE
        default: break;
        }
    }
}

/* 8 columns from their (float)s * (factor * xf) + bias, the first `cols` of them stored (factor is
 * padded to whole panels, bias is not). */
__attribute__((target("avx2"), always_inline)) static inline void store8_avx2(float *y, __m256i s, const float *factor,
                                                                               const float *bias, float xf, int cols) {
    if (cols <= 0) return;
    const __m256 scale = _mm256_mul_ps(_mm256_loadu_ps(factor), _mm256_set1_ps(xf));
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(s), scale);
    if (cols >= 8) {
        if (bias) v = _mm256_add_ps(v, _mm256_loadu_ps(bias));
        _mm256_storeu_ps(y, v);
        return;
    }
    float b[8] = {0}, out[8];
    if (bias) {
        memcpy(b, bias, (size_t)cols * sizeof(float));
        v = _mm256_add_ps(v, _mm256_loadu_ps(b));
    }
    _mm256_storeu_ps(out, v);
    memcpy(y, out, (size_t)cols * sizeof(float));
}

/* Columns [half * 16, half * 16 + 16) of the panel for `rows` rows from m0. */
__attribute__((target("avx2"), always_inline)) static inline void tile_avx2(int rows, const tile_args *a, int m0,
                                                                             int half) {
    __m256i acc[AVX2_ROWS][2];
    const uint32_t *x = a->xq + (size_t)m0 * a->stride;
    const __m256i ones = _mm256_set1_epi16(1);
#pragma GCC unroll 4
    for (int i = 0; i < rows; i++) acc[i][0] = acc[i][1] = _mm256_setzero_si256();
    const int8_t *panel = a->panel + half * 16 * GROUP;
    for (size_t d = 0; d + 1 < a->stride; d++) {
        const __m256i w0 = _mm256_load_si256((const __m256i *)(const void *)(panel + d * PANEL * GROUP)),
                      w1 = _mm256_load_si256((const __m256i *)(const void *)(panel + d * PANEL * GROUP + 32));
#pragma GCC unroll 4
        for (int i = 0; i < rows; i++) {
            const __m256i v = _mm256_set1_epi32((int)x[(size_t)i * a->stride + d]), magnitude = _mm256_abs_epi8(v);
            const __m256i p0 = _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(w0, v)),
                          p1 = _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(w1, v));
            acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(p0, ones));
            acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(p1, ones));
        }
    }
    const int c0 = half * 16;
#pragma GCC unroll 4
    for (int i = 0; i < rows; i++) {
        const float xf = row_factor(x + (size_t)i * a->stride, a->stride);
        float *y = a->y + (size_t)(m0 + i) * (size_t)a->ldy + c0;
        const float *bias = a->bias ? a->bias + c0 : NULL;
        store8_avx2(y, acc[i][0], a->factor + c0, bias, xf, a->cols - c0);
        store8_avx2(y + 8, acc[i][1], a->factor + c0 + 8, bias ? bias + 8 : NULL, xf, a->cols - c0 - 8);
    }
}

__attribute__((target("avx2"))) static void panel_avx2(const tile_args *a, int M) {
    for (int half = 0; half < 2 && half * 16 < a->cols; half++)
        for (int m = 0; m < M; m += AVX2_ROWS) {
            switch (M - m < AVX2_ROWS ? M - m : AVX2_ROWS) {
            case 1: tile_avx2(1, a, m, half); break;
            case 2: tile_avx2(2, a, m, half); break;
            case 3: tile_avx2(3, a, m, half); break;
            case 4: tile_avx2(4, a, m, half); break;
            default: break;
            }
        }
}
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Dot products of queries against scattered rows (attention scores). Pair p is query p % heads
 * against its part of row p / heads: dots[p] = q_h . rows[j][h K .. h K + K). */

static void dots_c(int32_t *dots, const int8_t *q, int heads, const int8_t *const *rows, int n, int K) {
    for (int p = 0; p < n * heads; p++) {
        const int8_t *x = q + (size_t)(p % heads) * (size_t)K, *y = rows[p / heads] + (size_t)(p % heads) * (size_t)K;
        int32_t s = 0;
        for (int k = 0; k < K; k++) s += (int32_t)x[k] * y[k];
        dots[p] = s;
    }
}

#if QGEMM_X86
static __mmask64 mask64(int bytes) { return bytes >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << bytes) - 1; }

/* Lane i of the result = the sum of the 16 lanes of v[i]: pairs of vectors folded four times, each
 * fold halving the vectors and doubling the keys a vector holds (unpacks within 128-bit blocks,
 * then block shuffles). */
__attribute__((target("avx512f"), always_inline)) static inline __m512i lane_sums16(__m512i *v) {
    __m512i w[8], x[4], y[2];
    for (int i = 0; i < 8; i++) {
        const __m512i a = v[2 * i], b = v[2 * i + 1];
        w[i] = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
    }
    for (int i = 0; i < 4; i++) {
        const __m512i a = w[2 * i], b = w[2 * i + 1];
        x[i] = _mm512_add_epi32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
    }
    for (int i = 0; i < 2; i++) {
        const __m512i a = x[2 * i], b = x[2 * i + 1];
        y[i] = _mm512_add_epi32(_mm512_shuffle_i32x4(a, b, 0x88), _mm512_shuffle_i32x4(a, b, 0xdd));
    }
    return _mm512_add_epi32(_mm512_shuffle_i32x4(y[0], y[1], 0x88), _mm512_shuffle_i32x4(y[0], y[1], 0xdd));
}

/* 16 pairs at a time, 64 bytes of each per vpdpbusd: the row's bytes + 128 (its sign bit flipped)
 * as the unsigned operand, the query as the signed one, so each sum is the dot product plus 128
 * times the sum of its query, taken off at the end. */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void dots_vnni(int32_t *dots, const int8_t *q, int heads,
                                                                            const int8_t *const *rows, int n, int K) {
    int32_t qsum[NMT_QGEMM_DOT_HEADS];
    for (int h = 0; h < heads; h++) {
        qsum[h] = 0;
        for (int k = 0; k < K; k++) qsum[h] += q[(size_t)h * (size_t)K + (size_t)k];
    }
    /* Pair i of a group of 16 from pair p0 on: its query, row (after the group's first) and the
     * query's part of the row; the same for every group when the heads divide 16. */
    const int8_t *x[16];
    int row[16];
    size_t part[16];
    int32_t shift[16];
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    const int pairs = n * heads, periodic = 16 % heads == 0;
    for (int p0 = 0; p0 < pairs; p0 += 16) {
        const int count = pairs - p0 < 16 ? pairs - p0 : 16, first = p0 / heads;
        if (p0 == 0 || !periodic)
            for (int i = 0, r = 0, h = p0 % heads; i < 16; i++) {
                x[i] = q + (size_t)h * (size_t)K;
                row[i] = r;
                part[i] = (size_t)h * (size_t)K;
                shift[i] = 128 * qsum[h];
                if (++h == heads) h = 0, r++;
            }
        __m512i acc[16];
        for (int i = 0; i < 16; i++) acc[i] = _mm512_setzero_si512();
        for (int k = 0; k < K; k += 64) {
            const __mmask64 m = mask64(K - k); /* bytes past K are 0 */
            for (int i = 0; i < count; i++) {
                const __m512i y = _mm512_maskz_loadu_epi8(m, rows[first + row[i]] + part[i] + k);
                acc[i] = dpbusd(acc[i], _mm512_xor_si512(y, flip), _mm512_maskz_loadu_epi8(m, x[i] + k));
            }
        }
        _mm512_mask_storeu_epi32(dots + p0, mask16(count),
                                 _mm512_sub_epi32(lane_sums16(acc), _mm512_loadu_si512(shift)));
    }
}

/* 16 bytes of the query and of the row widened to int16, pairs of products summed to int32 (vpmaddwd). */
__attribute__((target("avx2"))) static void dots_avx2(int32_t *dots, const int8_t *q, int heads,
                                                     const int8_t *const *rows, int n, int K) {
    const int whole = K / 16 * 16;
    for (int p = 0; p < n * heads; p++) {
        const int8_t *x = q + (size_t)(p % heads) * (size_t)K, *y = rows[p / heads] + (size_t)(p % heads) * (size_t)K;
        __m256i acc = _mm256_setzero_si256();
        for (int k = 0; k < whole; k += 16) {
            const __m256i a = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(x + k)));
            const __m256i b = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(y + k)));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
        }
        __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
        int32_t sum = _mm_cvtsi128_si32(s);
        for (int k = whole; k < K; k++) sum += (int32_t)x[k] * y[k];
        dots[p] = sum;
    }
}
#endif

void nmt_qgemm_dots_heads(int32_t *dots, const int8_t *q, int heads, const int8_t *const *rows, int n, int K) {
#if QGEMM_X86
    const nmt_qgemm_kernel kernel = nmt_qgemm_kernel_used();
    if (kernel == NMT_QGEMM_VNNI && heads <= NMT_QGEMM_DOT_HEADS) { /* its query sums: one a head, on the stack */
        dots_vnni(dots, q, heads, rows, n, K);
        return;
    }
    if (kernel == NMT_QGEMM_AVX2) {
        dots_avx2(dots, q, heads, rows, n, K);
        return;
    }
#endif
    dots_c(dots, q, heads, rows, n, K);
}

void nmt_qgemm_dots(int32_t *dots, const int8_t *q, const int8_t *const *rows, int n, int K) {
    nmt_qgemm_dots_heads(dots, q, 1, rows, n, K);
}

typedef struct product {
    float *y;             /* [M, count] */
    const uint32_t *xq;
    const nmt_qgemm *w;
    const float *bias;    /* [N] or NULL */
    int M, first, count;  /* columns first .. first + count - 1 */
    nmt_qgemm_kernel kernel;
} product;

static void product_panels(void *ctx, long begin, long end) {
    const product *t = ctx;
    const size_t stride = groups(t->w->K) + 1;
    for (long j = begin; j < end; j++) {
        const int column = (int)j * PANEL, n = t->first + column;
        const tile_args a = {
            .xq = t->xq,
            .stride = stride,
            .panel = t->w->panels + (size_t)(n / PANEL) * (stride - 1) * PANEL * GROUP,
            .factor = t->w->factor + n,
            .bias = t->bias ? t->bias + n : NULL,
            .shift = t->w->shift + n,
            .y = t->y + column,
            .ldy = t->count,
            .cols = t->count - column < PANEL ? t->count - column : PANEL,
        };
#if QGEMM_X86
        if (t->kernel == NMT_QGEMM_VNNI) {
            panel_vnni(&a, t->M);
            continue;
        }
        if (t->kernel == NMT_QGEMM_AVX2) {
            panel_avx2(&a, t->M);
            continue;
        }
#endif
        panel_c(&a, t->M);
    }
}

void nmt_qgemm_columns(float *y, const uint32_t *xq, const nmt_qgemm *w, const float *bias, int M, int first,
                       int count) {
    if (M < 1 || count < 1) return;
    product t = {y, xq, w, bias, M, first, count, nmt_qgemm_kernel_used()};
    nmt_pool_work((count + PANEL - 1) / PANEL, (long)M * w->K * PANEL / 4, product_panels, &t);
}
