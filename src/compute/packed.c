/* packed: weights packed once into 32-column panels, and the products on them.
 *
 * fp32 products run gemm.h's own micro-kernel (AVX-512 or AVX2+FMA) over the pre-packed panels
 * (nothing is packed per call), bf16 ones bf16.h's, with the bias as each sum's start. A task owns
 * whole panels and walks all row tiles over each, so a panel stays in L1/L2 while x streams.
 */
#include "compute/packed.h"

#include "compute/bf16.h"
#include "compute/gemm.h"
#include "compute/pool.h"
#include "compute/kernels.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PANEL = NMT_GEMM_PANEL, TILE_ROWS = NMT_GEMM_TILE_ROWS };

#if defined(__x86_64__) && defined(__GNUC__)
#define PACKED_X86 1
#else
#define PACKED_X86 0
#endif

int nmt_packed_available(nmt_precision precision) {
    if (precision == NMT_PRECISION_INT8) return nmt_qgemm_best() != NMT_QGEMM_C;
#if PACKED_X86
    const nmt_gemm_kernel kernel = nmt_gemm_kernel_used();
    if (precision == NMT_PRECISION_FP32) return kernel != NMT_GEMM_OPENBLAS;
    return kernel == NMT_GEMM_AVX512 && nmt_bf16_available();
#else
    (void)precision;
    return 0;
#endif
}

int nmt_packed_init(nmt_packed *p, const float *weight, int N, int K, nmt_precision precision) {
    *p = (nmt_packed){.weight = weight, .N = N, .K = K};
    if (N < 1 || K < 1) return nmt_error_set("packed matrix of %d x %d", N, K);
    if (precision == NMT_PRECISION_BF16 && !nmt_packed_available(NMT_PRECISION_BF16))
        return nmt_error_set("bf16 products need a CPU with AVX512_BF16 (and NMT_GEMM not set to openblas)");
    if (precision == NMT_PRECISION_INT8) return nmt_qgemm_init(&p->q, weight, N, K);
    if (!nmt_packed_available(NMT_PRECISION_FP32)) return 0;
    const size_t panels = ((size_t)N + PANEL - 1) / PANEL;
    const size_t depth = precision == NMT_PRECISION_BF16 ? ((size_t)K + 1) / 2 : (size_t)K; /* rows per panel */
    size_t cells = 0;
    if (nmt_size_mul(panels * PANEL, depth, &cells, "packed matrix") < 0) return -1;
    void *data = nmt_malloc_aligned(cells * sizeof(float));
    if (!data) return -1;
    nmt_pages_populate(data, cells * sizeof(float)); /* written whole next: one call, not a fault a page */
    if (precision == NMT_PRECISION_BF16) {
        p->pairs = data;
        p->width = PANEL;
        nmt_bf16_panels(p->pairs, weight, K, 1, K, N); /* W^T: the weight's rows are the columns */
        return 0;
    }
    p->panels = data;
    p->width = nmt_gemm_panel_width();
    const size_t width = (size_t)p->width;
    /* Row n of the weight is column c of panel j. Each panel is written in order, reading its
     * `width` weight rows side by side (each row a sequential stream, one cache line of each in use
     * at a time): written a column at a time instead, every store landed on another line and a
     * 64-256 KiB panel was swept `width` times (the packing took a fifth of a base-size model's
     * load time). */
    for (size_t j = 0; j < panels * PANEL / width; j++) {
        const float *rows[PANEL];
        for (size_t c = 0; c < width; c++) rows[c] = j * width + c < (size_t)N ? weight + (j * width + c) * (size_t)K : NULL;
        float *out = p->panels + j * depth * width;
        for (size_t d = 0; d < depth; d++, out += width)
            for (size_t c = 0; c < width; c++) out[c] = rows[c] ? rows[c][d] : 0.0f;
    }
    return 0;
}

void nmt_packed_free(nmt_packed *p) {
    free(p->panels);
    free(p->pairs);
    nmt_qgemm_free(&p->q);
    p->panels = NULL;
    p->pairs = NULL;
}

int nmt_packed_self_contained(nmt_precision precision) {
    return precision == NMT_PRECISION_INT8 || (precision == NMT_PRECISION_FP32 && nmt_packed_available(precision));
}

int nmt_packed_products_self_contained(nmt_precision precision) {
    return nmt_packed_self_contained(precision) || (precision == NMT_PRECISION_BF16 && nmt_packed_available(precision));
}

void nmt_packed_row(const nmt_packed *p, int n, float *out) {
    if (p->q.panels) {
        nmt_qgemm_row(&p->q, n, out);
        return;
    }
    const size_t width = (size_t)p->width, K = (size_t)p->K;
    const float *column = p->panels + (size_t)n / width * K * width + (size_t)n % width;
    for (size_t k = 0; k < K; k++) out[k] = column[k * width];
}

int nmt_packed_fast(const nmt_packed *p) { return p->panels != NULL || p->pairs != NULL || p->q.panels != NULL; }

typedef struct product {
    float *y;             /* [M, count] */
    const float *x, *bias;
    const uint32_t *x_pairs; /* bf16: x as pairs, [M, ceil(K/2)] */
    const nmt_packed *p;
    int M, first, count;  /* columns first .. first + count - 1 */
} product;

/* The bf16 kernel over panels [begin, end) of the product, all rows. */
static void bf16_panels(const product *t, long begin, long end) {
    const size_t pair_rows = ((size_t)t->p->K + 1) / 2;
    for (long j = begin; j < end; j++) {
        const size_t panel = (size_t)(t->first / PANEL + j);
        const int column = (int)j * PANEL, cols = t->count - column < PANEL ? t->count - column : PANEL;
        const float *bias = t->bias ? t->bias + t->first + column : NULL;
        for (int m = 0; m < t->M; m += TILE_ROWS) {
            const nmt_bf16_view x = {t->x_pairs + (size_t)m * pair_rows, pair_rows, 1};
            nmt_bf16_tile(t->M - m < TILE_ROWS ? t->M - m : TILE_ROWS, x, (int)pair_rows,
                          t->p->pairs + panel * pair_rows * PANEL, bias, t->y + (size_t)m * (size_t)t->count + (size_t)column,
                          t->count, cols, 1.0f, 0.0f);
        }
    }
}

/* Panels [begin, end) of the product: bf16's kernel, or the fp32 one of gemm.h (the products added
 * to the bias). */
static void product_panels(void *ctx, long begin, long end) {
    const product *t = ctx;
    if (t->p->pairs) {
        bf16_panels(t, begin, end);
        return;
    }
    const int column = (int)begin * PANEL, last = (int)end * PANEL < t->count ? (int)end * PANEL : t->count;
    float *y = t->y + column;
    const float *panels = t->p->panels + (size_t)(t->first + column) * (size_t)t->p->K;
    if (t->bias)
        nmt_gemm_panels_bias(y, t->count, t->x, t->M, t->p->K, panels, t->p->width, last - column,
                             t->bias + t->first + column);
    else
        nmt_gemm_panels(y, t->count, t->x, t->M, t->p->K, panels, t->p->width, last - column, 0);
}

size_t nmt_packed_scratch_rows(const nmt_packed *p, int M, int K) {
    if (M < 1 || K < 1) return 0;
    if (p->q.panels) return (size_t)M * (((size_t)K + 3) / 4 + 1);
    return p->pairs ? (size_t)M * (((size_t)K + 1) / 2) : 0;
}

size_t nmt_packed_scratch(const nmt_packed *p, int M) { return nmt_packed_scratch_rows(p, M, p->K); }

typedef struct conversion {
    uint32_t *pairs;
    const float *x;
    int K;
} conversion;

static void convert_rows(void *ctx, long begin, long end) {
    const conversion *c = ctx;
    const size_t stride = ((size_t)c->K + 1) / 2;
    for (long r = begin; r < end; r++) nmt_bf16_pairs(c->pairs + (size_t)r * stride, c->x + (size_t)r * (size_t)c->K, c->K);
}

void nmt_packed_to_pairs(const nmt_packed *p, uint32_t *pairs, const float *x, int M) {
    if (p->q.panels) nmt_qgemm_quantize(&p->q, pairs, x, M);
    if (!p->pairs || M < 1) return;
    conversion c = {pairs, x, p->K};
    nmt_pool_work(M, p->K, convert_rows, &c);
}

void nmt_packed_linear_columns(float *y, const float *x, const uint32_t *x_pairs, const nmt_packed *p,
                               const float *bias, int M, int first, int count) {
    if (M < 1 || count < 1) return;
    if (p->q.panels) {
        nmt_qgemm_columns(y, x_pairs, &p->q, bias, M, first, count);
        return;
    }
    if (!nmt_packed_fast(p)) {
        nmt_linear_forward(y, x, p->weight + (size_t)first * (size_t)p->K, bias ? bias + first : NULL, M, p->K, count);
        return;
    }
    product t = {y, x, bias, x_pairs, p, M, first, count};
    const long panels = (count + PANEL - 1) / PANEL;
    nmt_pool_work(panels, (long)M * p->K * PANEL, product_panels, &t);
}

void nmt_packed_linear(float *y, const float *x, const nmt_packed *p, const float *bias, int M, uint32_t *scratch) {
    nmt_packed_to_pairs(p, scratch, x, M);
    nmt_packed_linear_columns(y, x, scratch, p, bias, M, 0, p->N);
}

const char *nmt_packed_precision_name(nmt_precision precision) {
    return precision == NMT_PRECISION_INT8 ? "int8" : precision == NMT_PRECISION_BF16 ? "bf16" : "fp32";
}

const char *nmt_packed_kernel_name(nmt_precision precision) {
    static _Thread_local char name[64];
    if (precision == NMT_PRECISION_INT8) snprintf(name, sizeof name, "int8 %s", nmt_qgemm_kernel_name(nmt_qgemm_kernel_used()));
    else if (nmt_packed_available(precision))
        snprintf(name, sizeof name, "packed %s %s", precision == NMT_PRECISION_BF16 ? "AVX-512" : nmt_gemm_kernel_name(nmt_gemm_kernel_used()),
                 nmt_packed_precision_name(precision));
    else snprintf(name, sizeof name, "OpenBLAS %s", nmt_gemm_blas_core());
    return name;
}

double nmt_packed_gops(nmt_precision precision, int M, int N, int K, double min_seconds) {
    if (precision != NMT_PRECISION_FP32 && !nmt_packed_available(precision)) return -1.0;
    float *x = nmt_malloc(sizeof(float) * (size_t)M * (size_t)K), *w = nmt_malloc(sizeof(float) * (size_t)N * (size_t)K);
    float *y = nmt_malloc(sizeof(float) * (size_t)M * (size_t)N);
    nmt_packed p = {0};
    uint32_t *scratch = NULL;
    double best = -1.0;
    if (x && w && y) {
        for (size_t i = 0; i < (size_t)M * (size_t)K; i++) x[i] = (float)(i % 17) * 0.01f - 0.08f;
        for (size_t i = 0; i < (size_t)N * (size_t)K; i++) w[i] = (float)(i % 13) * 0.01f - 0.06f;
    }
    const size_t words = x && w && y && nmt_packed_init(&p, w, N, K, precision) == 0 ? nmt_packed_scratch(&p, M) + 1 : 0;
    if (words && (scratch = nmt_malloc(words * sizeof(uint32_t)))) {
        nmt_packed_linear(y, x, &p, NULL, M, scratch); /* warm-up: threads, caches */
        best = 0.0;
        const double start = nmt_now();
        for (int reps = 0; reps < 3 || nmt_now() - start < min_seconds; reps++) {
            const double t = nmt_now();
            nmt_packed_linear(y, x, &p, NULL, M, scratch);
            const double gops = 2.0 * M * N * K / (nmt_now() - t) / 1e9;
            if (gops > best) best = gops;
        }
    }
    nmt_packed_free(&p);
    free(scratch);
    free(x);
    free(w);
    free(y);
    return best;
}

void nmt_packed_rates(const nmt_precision *precisions, int count, int M, int N, int K, int rounds,
                      double min_seconds, double *rates) {
    for (int i = 0; i < count; i++) rates[i] = -1.0;
    for (int round = 0; round < rounds; round++)
        for (int i = 0; i < count; i++) rates[i] = fmax(rates[i], nmt_packed_gops(precisions[i], M, N, K, min_seconds));
}

nmt_precision nmt_packed_fastest(int M, int N, int K, double min_seconds, double rates[3]) {
    static const nmt_precision order[] = {NMT_PRECISION_FP32, NMT_PRECISION_BF16, NMT_PRECISION_INT8};
    enum { ROUNDS = 3 };
    double measured[3];
    nmt_packed_rates(order, 3, M, N, K, ROUNDS, min_seconds / ROUNDS, measured);
    nmt_precision best = NMT_PRECISION_FP32;
    double best_rate = 0.0;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        const double r = measured[i];
        if (rates) rates[order[i]] = r;
        /* A lower precision must beat fp32 clearly, so that noise does not flip the choice. */
        if (r > best_rate * (order[i] == NMT_PRECISION_FP32 ? 1.0 : 1.1)) {
            best = order[i];
            best_rate = r;
        }
    }
    return best;
}
