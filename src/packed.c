/* packed: weights packed once into 32-column panels, and the AVX-512 kernel that multiplies by them.
 *
 * The kernel computes a tile of up to 12 rows x 32 columns of y in 24 zmm accumulators: per k it
 * loads the panel's 32 weights (two vectors) and broadcasts each row's x[i, k], so every weight
 * loaded feeds 12 rows and every x element 32 columns. A task owns whole panels and walks all row
 * tiles over each, so a panel (K x 32 floats) stays in L1/L2 while x streams from L2.
 */
#include "nmt/packed.h"

#include "nmt/kernels.h"
#include "nmt/util.h"

#include <stdlib.h>
#include <string.h>

enum { PANEL = 32, TILE_ROWS = 12 };

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PACKED_X86 1
#else
#define PACKED_X86 0
#endif

int nmt_packed_available(void) {
#if PACKED_X86
    const char *env = getenv("NMT_PACKED");
    if (env && strcmp(env, "0") == 0) return 0;
    return __builtin_cpu_supports("avx512f");
#else
    return 0;
#endif
}

int nmt_packed_init(nmt_packed *p, const float *weight, int N, int K) {
    *p = (nmt_packed){.weight = weight, .N = N, .K = K};
    if (N < 1 || K < 1) return nmt_error_set("packed matrix of %d x %d", N, K);
    if (!nmt_packed_available()) return 0;
    const size_t panels = ((size_t)N + PANEL - 1) / PANEL;
    size_t floats = 0;
    if (nmt_size_mul(panels * PANEL, (size_t)K, &floats, "packed matrix") < 0) return -1;
    p->panels = nmt_malloc_aligned(floats * sizeof(float));
    if (!p->panels) return -1;
    for (size_t j = 0; j < panels; j++) {
        float *panel = p->panels + j * (size_t)K * PANEL;
        for (int k = 0; k < K; k++)
            for (int c = 0; c < PANEL; c++) {
                size_t n = j * PANEL + (size_t)c;
                panel[(size_t)k * PANEL + (size_t)c] = n < (size_t)N ? weight[n * (size_t)K + (size_t)k] : 0.0f;
            }
    }
    return 0;
}

void nmt_packed_free(nmt_packed *p) {
    free(p->panels);
    p->panels = NULL;
}

int nmt_packed_fast(const nmt_packed *p) { return p->panels != NULL; }

#if PACKED_X86
/* y[rows, cols] = x[rows, K] panel^T (+ bias), y rows ldy apart, rows <= 12, cols <= 32; `rows` is
 * a constant wherever this is inlined, so the accumulators live in registers. */
__attribute__((target("avx512f"), always_inline)) static inline void tile(int rows, const float *x, int K,
                                                                            const float *panel, const float *bias,
                                                                            float *y, int ldy, int cols) {
    const __mmask16 lo = (__mmask16)(cols >= 16 ? 0xffff : (1u << cols) - 1),
                    hi = (__mmask16)(cols >= 32 ? 0xffff : cols <= 16 ? 0 : (1u << (cols - 16)) - 1);
    __m512 acc[TILE_ROWS][2];
    const __m512 b0 = bias ? _mm512_maskz_loadu_ps(lo, bias) : _mm512_setzero_ps(),
                 b1 = bias ? _mm512_maskz_loadu_ps(hi, bias + 16) : _mm512_setzero_ps();
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++) {
        acc[i][0] = b0;
        acc[i][1] = b1;
    }
    for (int k = 0; k < K; k++) {
        const __m512 w0 = _mm512_load_ps(panel + (size_t)k * PANEL), w1 = _mm512_load_ps(panel + (size_t)k * PANEL + 16);
#pragma GCC unroll 12
        for (int i = 0; i < rows; i++) {
            const __m512 a = _mm512_set1_ps(x[(size_t)i * (size_t)K + (size_t)k]);
            acc[i][0] = _mm512_fmadd_ps(a, w0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(a, w1, acc[i][1]);
        }
    }
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++) {
        _mm512_mask_storeu_ps(y + (size_t)i * (size_t)ldy, lo, acc[i][0]);
        _mm512_mask_storeu_ps(y + (size_t)i * (size_t)ldy + 16, hi, acc[i][1]);
    }
}

/* One specialisation per row count, so that each keeps its accumulators in registers. */
__attribute__((target("avx512f"))) static void tile_rows(int rows, const float *x, int K, const float *panel,
                                                         const float *bias, float *y, int ldy, int cols) {
    switch (rows) {
#define TILE_CASE(r) \
    case r: tile(r, x, K, panel, bias, y, ldy, cols); break;
        TILE_CASE(1) TILE_CASE(2) TILE_CASE(3) TILE_CASE(4) TILE_CASE(5) TILE_CASE(6)
        TILE_CASE(7) TILE_CASE(8) TILE_CASE(9) TILE_CASE(10) TILE_CASE(11) TILE_CASE(12)
#undef TILE_CASE
    default: break;
    }
}
#endif

typedef struct product {
    float *y;             /* [M, count] */
    const float *x, *bias;
    const nmt_packed *p;
    int M, first, count;  /* columns first .. first + count - 1 */
} product;

static void product_panels(void *ctx, long begin, long end) {
#if PACKED_X86
    const product *t = ctx;
    const int K = t->p->K, first_panel = t->first / PANEL;
    for (long j = begin; j < end; j++) {
        const float *panel = t->p->panels + (size_t)(first_panel + j) * (size_t)K * PANEL;
        const int column = (int)j * PANEL, cols = t->count - column < PANEL ? t->count - column : PANEL;
        const float *bias = t->bias ? t->bias + t->first + column : NULL;
        for (int m = 0; m < t->M; m += TILE_ROWS)
            tile_rows(t->M - m < TILE_ROWS ? t->M - m : TILE_ROWS, t->x + (size_t)m * (size_t)K, K, panel, bias,
                      t->y + (size_t)m * (size_t)t->count + (size_t)column, t->count, cols);
    }
#else
    (void)ctx, (void)begin, (void)end;
#endif
}

void nmt_packed_linear_columns(float *y, const float *x, const nmt_packed *p, const float *bias, int M, int first,
                               int count) {
    if (M < 1 || count < 1) return;
    if (!p->panels) {
        nmt_linear_forward(y, x, p->weight + (size_t)first * (size_t)p->K, bias ? bias + first : NULL, M, p->K, count);
        return;
    }
    product t = {y, x, bias, p, M, first, count};
    const long panels = (count + PANEL - 1) / PANEL;
    nmt_parallel_work(panels, (long)M * p->K * PANEL, product_panels, &t);
}

void nmt_packed_linear(float *y, const float *x, const nmt_packed *p, const float *bias, int M) {
    nmt_packed_linear_columns(y, x, p, bias, M, 0, p->N);
}
