/* bf16: bfloat16 pairs, the AVX-512 BF16 micro-kernel and the general product on it (see bf16.h).
 *
 * The micro-kernel holds a tile of up to 12 rows x 32 columns in 24 zmm accumulators; per pair of
 * k it loads the panel's 32 pairs (two vectors) and broadcasts each row's pair, so one
 * dot-product instruction adds two products to 16 sums. nmt_bf16_gemm converts op(A) into rows of
 * pairs (or, for op(A) = A^T, into a [pairs, M] array, each converted from two rows of A) and op(B)
 * into panels, then a task owns whole panels and walks every row tile over each, so a panel stays
 * in L1/L2 while A streams; there is no blocking over k, so each element is one sum in order.
 */
#include "compute/bf16.h"

#include "compute/pool.h"
#include "base/util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { PANEL = 32, TILE_ROWS = 12 };

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define BF16_X86 1
#else
#define BF16_X86 0
#endif

int nmt_bf16_available(void) {
#if BF16_X86
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512bf16");
#else
    return 0;
#endif
}

#if BF16_X86
#define BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512bf16")))

/* The mask of the first n (0 .. 16) of 16 lanes. */
static __mmask16 lanes(int n) { return (__mmask16)(n >= 16 ? 0xffff : n <= 0 ? 0 : (1u << n) - 1); }

BF16_TARGET void nmt_bf16_pairs(uint32_t *dst, const float *x, int n) {
    for (int j = 0; j < n; j += 32) {
        const int m = n - j, pairs = m >= 32 ? 16 : (m + 1) / 2;
        const __m512 a = _mm512_maskz_loadu_ps(lanes(m), x + j), b = _mm512_maskz_loadu_ps(lanes(m - 16), x + j + 16);
        _mm512_mask_storeu_epi32(dst + j / 2, lanes(pairs), (__m512i)_mm512_cvtne2ps_pbh(b, a));
    }
}

/* dst[0 .. n) = pair d of columns 0 .. n of x[K, ld]: (x[2d][c], x[2d + 1][c]), the second 0 past K. */
BF16_TARGET static void row_pairs(uint32_t *dst, const float *x, size_t ld, int K, int d, int n) {
    const __m512i order = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6,
                                           21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const float *lo = x + (size_t)(2 * d) * ld, *hi = 2 * d + 1 < K ? lo + ld : NULL;
    for (int c = 0; c < n; c += 16) {
        const __mmask16 m = lanes(n - c);
        const __m512 l = _mm512_maskz_loadu_ps(m, lo + c), h = hi ? _mm512_maskz_loadu_ps(m, hi + c) : _mm512_setzero_ps();
        const __m512i both = (__m512i)_mm512_cvtne2ps_pbh(h, l); /* [l0 .. l15, h0 .. h15] */
        _mm512_mask_storeu_epi32(dst + c, m, _mm512_permutexvar_epi16(order, both));
    }
}

__attribute__((target("avx512f,avx512bw,avx512bf16"), always_inline)) static inline void
tile(int rows, nmt_bf16_view x, int pairs, const uint32_t *panel, const float *init, float *y, int ldy, int cols,
     float alpha, float beta) {
    const __mmask16 lo = lanes(cols), hi = lanes(cols - 16);
    __m512 acc[TILE_ROWS][2];
    const __m512 b0 = init ? _mm512_maskz_loadu_ps(lo, init) : _mm512_setzero_ps(),
                 b1 = init ? _mm512_maskz_loadu_ps(hi, init + 16) : _mm512_setzero_ps();
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++) {
        acc[i][0] = b0;
        acc[i][1] = b1;
    }
    for (int d = 0; d < pairs; d++) {
        const __m512bh w0 = (__m512bh)_mm512_load_si512((const void *)(panel + (size_t)d * PANEL)),
                       w1 = (__m512bh)_mm512_load_si512((const void *)(panel + (size_t)d * PANEL + 16));
        const uint32_t *xd = x.pairs + (size_t)d * x.step;
#pragma GCC unroll 12
        for (int i = 0; i < rows; i++) {
            const __m512bh a = (__m512bh)_mm512_set1_epi32((int)xd[(size_t)i * x.row]);
            acc[i][0] = _mm512_dpbf16_ps(acc[i][0], a, w0);
            acc[i][1] = _mm512_dpbf16_ps(acc[i][1], a, w1);
        }
    }
    const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++) {
        float *c = y + (size_t)i * (size_t)ldy;
        __m512 r0 = _mm512_mul_ps(va, acc[i][0]), r1 = _mm512_mul_ps(va, acc[i][1]);
        if (beta == 1.0f) {
            r0 = _mm512_add_ps(_mm512_maskz_loadu_ps(lo, c), r0);
            r1 = _mm512_add_ps(_mm512_maskz_loadu_ps(hi, c + 16), r1);
        } else if (beta != 0.0f) {
            r0 = _mm512_add_ps(r0, _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(lo, c)));
            r1 = _mm512_add_ps(r1, _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(hi, c + 16)));
        }
        _mm512_mask_storeu_ps(c, lo, r0);
        _mm512_mask_storeu_ps(c + 16, hi, r1);
    }
}

BF16_TARGET void nmt_bf16_tile(int rows, nmt_bf16_view x, int pairs, const uint32_t *panel, const float *init,
                               float *y, int ldy, int cols, float alpha, float beta) {
    switch (rows) {
#define TILE_CASE(r) \
    case r: tile(r, x, pairs, panel, init, y, ldy, cols, alpha, beta); break;
        TILE_CASE(1) TILE_CASE(2) TILE_CASE(3) TILE_CASE(4) TILE_CASE(5) TILE_CASE(6)
        TILE_CASE(7) TILE_CASE(8) TILE_CASE(9) TILE_CASE(10) TILE_CASE(11) TILE_CASE(12)
#undef TILE_CASE
    default: break;
    }
}

typedef struct bgemm_task {
    int trans_a, trans_b, M, N, K, lda, ldb, ldc, pairs;
    float alpha, beta;
    const float *A, *B;
    float *C;
    uint32_t *a_pairs; /* op(A): [M, pairs], or [pairs, M] for A^T */
    uint32_t *panels;  /* op(B): [ceil(N/32), pairs, 32] */
} bgemm_task;

/* Rows [begin, end) of op(A) = A into pairs. */
static void a_rows(void *ctx, long begin, long end) {
    const bgemm_task *t = ctx;
    for (long i = begin; i < end; i++)
        nmt_bf16_pairs(t->a_pairs + (size_t)i * (size_t)t->pairs, t->A + (size_t)i * (size_t)t->lda, t->K);
}

/* Pairs [begin, end) of op(A) = A^T: pair d of every row i from rows 2d and 2d + 1 of A. */
static void a_columns(void *ctx, long begin, long end) {
    const bgemm_task *t = ctx;
    for (long d = begin; d < end; d++)
        row_pairs(t->a_pairs + (size_t)d * (size_t)t->M, t->A, (size_t)t->lda, t->K, (int)d, t->M);
}

/* Panels [begin, end) of op(B), columns past N zero. */
BF16_TARGET static void b_panels(void *ctx, long begin, long end) {
    const bgemm_task *t = ctx;
    for (long j = begin; j < end; j++) {
        uint32_t *panel = t->panels + (size_t)j * (size_t)t->pairs * PANEL;
        const int column = (int)j * PANEL, cols = t->N - column < PANEL ? t->N - column : PANEL;
        if (cols < PANEL) memset(panel, 0, (size_t)t->pairs * PANEL * sizeof(uint32_t));
        if (!t->trans_b) { /* op(B) = B[K, N]: pair d of column n from rows 2d, 2d + 1 */
            for (int d = 0; d < t->pairs; d++)
                row_pairs(panel + (size_t)d * PANEL, t->B + column, (size_t)t->ldb, t->K, d, cols);
            continue;
        }
        for (int c = 0; c < cols; c++) { /* op(B) = B[N, K]^T: column n is row n of B */
            const float *row = t->B + (size_t)(column + c) * (size_t)t->ldb;
            uint32_t chunk[16];
            for (int k = 0; k < t->K; k += 32) {
                nmt_bf16_pairs(chunk, row + k, t->K - k < 32 ? t->K - k : 32);
                for (int d = k / 2; d < t->pairs && d < k / 2 + 16; d++) panel[(size_t)d * PANEL + (size_t)c] = chunk[d - k / 2];
            }
        }
    }
}

void nmt_bf16_panels(uint32_t *panels, const float *B, int ldb, int trans_b, int K, int N) {
    bgemm_task t = {.trans_b = trans_b, .N = N, .K = K, .ldb = ldb, .pairs = K > 0 ? (K + 1) / 2 : 0, .B = B,
                    .panels = panels};
    nmt_pool_work((N + PANEL - 1) / PANEL, 2L * t.pairs * PANEL, b_panels, &t);
}

/* C[., panels [begin, end)) from the converted operands. */
static void product_panels(void *ctx, long begin, long end) {
    const bgemm_task *t = ctx;
    const size_t row = t->trans_a ? 1 : (size_t)t->pairs, step = t->trans_a ? (size_t)t->M : 1;
    for (long j = begin; j < end; j++) {
        const int column = (int)j * PANEL, cols = t->N - column < PANEL ? t->N - column : PANEL;
        const uint32_t *panel = t->panels + (size_t)j * (size_t)t->pairs * PANEL;
        for (int i = 0; i < t->M; i += TILE_ROWS) {
            const nmt_bf16_view x = {t->a_pairs + (size_t)i * row, row, step};
            nmt_bf16_tile(t->M - i < TILE_ROWS ? t->M - i : TILE_ROWS, x, t->pairs, panel, NULL,
                          t->C + (size_t)i * (size_t)t->ldc + (size_t)column, t->ldc, cols, t->alpha, t->beta);
        }
    }
}

/* The converted operands of one product at a time; they only grow. */
static struct {
    pthread_mutex_t lock;
    uint32_t *a, *b;
    size_t a_size, b_size; /* words */
} buffers = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* *data holds at least `words` words (64-byte aligned), or -1 with the error set. */
static int reserve(uint32_t **data, size_t *size, size_t words) {
    if (words <= *size) return 0;
    uint32_t *grown = nmt_malloc_aligned(words * sizeof(uint32_t));
    if (!grown) return -1;
    free(*data);
    *data = grown;
    *size = words;
    return 0;
}

int nmt_bf16_gemm(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                  int ldb, float beta, float *C, int ldc) {
    if (!nmt_bf16_available()) return nmt_error_set("bf16 products need a CPU with AVX512_BF16");
    if (M <= 0 || N <= 0) return 0;
    const int pairs = K > 0 ? (K + 1) / 2 : 0;
    const long panels = (N + PANEL - 1) / PANEL;
    bgemm_task t = {trans_a, trans_b, M, N, K, lda, ldb, ldc, pairs, alpha, beta, A, B, C, NULL, NULL};
    pthread_mutex_lock(&buffers.lock);
    int rc = reserve(&buffers.a, &buffers.a_size, (size_t)M * (size_t)pairs + 16);
    if (rc == 0) rc = reserve(&buffers.b, &buffers.b_size, (size_t)panels * (size_t)pairs * PANEL + 16);
    if (rc == 0) {
        t.a_pairs = buffers.a;
        t.panels = buffers.b;
        if (trans_a) nmt_pool_work(pairs, 2L * M, a_columns, &t);
        else nmt_pool_work(M, K, a_rows, &t);
        nmt_bf16_panels(t.panels, B, ldb, trans_b, K, N);
        nmt_pool_work(panels, 2L * M * pairs * PANEL, product_panels, &t);
    }
    pthread_mutex_unlock(&buffers.lock);
    return rc;
}

#else
void nmt_bf16_pairs(uint32_t *dst, const float *x, int n) { (void)dst, (void)x, (void)n; }
void nmt_bf16_panels(uint32_t *panels, const float *B, int ldb, int trans_b, int K, int N) {
    (void)panels, (void)B, (void)ldb, (void)trans_b, (void)K, (void)N;
}
void nmt_bf16_tile(int rows, nmt_bf16_view x, int pairs, const uint32_t *panel, const float *init, float *y, int ldy,
                   int cols, float alpha, float beta) {
    (void)rows, (void)x, (void)pairs, (void)panel, (void)init, (void)y, (void)ldy, (void)cols, (void)alpha, (void)beta;
}
int nmt_bf16_gemm(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                  int ldb, float beta, float *C, int ldc) {
    (void)trans_a, (void)trans_b, (void)M, (void)N, (void)K, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb;
    (void)beta, (void)C, (void)ldc;
    return nmt_error_set("bf16 products need a CPU with AVX512_BF16");
}
#endif
