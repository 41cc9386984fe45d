/* packed: inference products with weights laid out once for the CPU's widest vectors.
 *
 * Decoding multiplies small row blocks (the live beam rows of one step) by the same weights
 * thousands of times. OpenBLAS repacks the weight matrix on every call and, as Debian ships it,
 * may pick AVX2 kernels on AVX-512 CPUs (it does on AMD Zen 4 and 5). A packed matrix is the weight
 * W[N, K] of y = x W^T + b rearranged once into panels of 32 output columns, [ceil(N/32), K, 32]
 * (16 for the AVX2 kernel; columns past a multiple of 32 above N are zero), which gemm.h's
 * AVX-512 or AVX2+FMA kernel streams without further copying:
 *
 *     nmt_packed w;
 *     nmt_packed_init(&w, weight, N, K, NMT_PRECISION_FP32);  // once, e.g. for a translator
 *     nmt_packed_linear(y, x, &w, bias, M, NULL);  // y[M, N] = x[M, K] W^T + bias, every step
 *     nmt_packed_free(&w);
 *
 * Each output element is one dot product summed over k in order, independent of M and of the
 * threads, so a row's result is the same alone or in any batch (and the same bits on either
 * kernel). Without AVX2+FMA (or with NMT_GEMM=openblas in the environment) nothing is packed and
 * the product is nmt_linear_forward's.
 * Products are split over the pool's threads (pool.h) by column panels.
 */
#ifndef NMT_PACKED_H
#define NMT_PACKED_H

#include <stddef.h>
#include <stdint.h>

#include "compute/qgemm.h"

/* The arithmetic of the products. bf16: weights and x rounded to bfloat16 (8 bits of mantissa),
 * products summed in float32 by AVX-512 BF16 dot-product instructions, twice fp32's rate; each
 * product is then exact to about 3 significant digits, which changes translations rarely and
 * slightly. int8: weights quantized per output row and x per row at each product, integer sums
 * (qgemm.h): a quarter of fp32's weight bytes. */
typedef enum nmt_precision { NMT_PRECISION_FP32, NMT_PRECISION_BF16, NMT_PRECISION_INT8 } nmt_precision;

typedef struct nmt_packed {
    const float *weight; /* [N, K] the original, for the fallback */
    float *panels;       /* fp32: [32 ceil(N/32) / width, K, width], or NULL on the fallback */
    uint32_t *pairs;     /* bf16: [ceil(N/32), ceil(K/2), 32] pairs (k even: low half, k odd: high) */
    nmt_qgemm q;         /* int8: the quantized matrix (q.panels NULL otherwise) */
    int N, K;
    int width; /* fp32: columns per panel (nmt_gemm_panel_width() when packed); bf16: 32 */
} nmt_packed;

/* Packs weight[N, K] (which must outlive the packed copy). bf16 needs a CPU with AVX512_BF16 (see
 * nmt_packed_available). Returns 0, or -1 with the error set. */
int nmt_packed_init(nmt_packed *p, const float *weight, int N, int K, nmt_precision precision);
void nmt_packed_free(nmt_packed *p);
/* 1 when products use a packed kernel (fp32 on AVX2 or AVX-512, bf16, or int8 on any CPU). */
int nmt_packed_fast(const nmt_packed *p);
/* 1 when matrices packed now in this precision would use a packed kernel: fp32 needs one of
 * gemm.h's own (nmt_gemm_kernel_used: AVX2+FMA or AVX-512F, and not NMT_GEMM=openblas in the
 * environment), bf16 the AVX-512 one and AVX512_BF16, int8 AVX2 or AVX-512 VNNI (the plain C
 * kernel is far slower than fp32). */
int nmt_packed_available(nmt_precision precision);
/* 1 when matrices packed now in this precision hold all that their products and nmt_packed_row
 * read, so that the original matrix may go: int8, and fp32 on a packed kernel (bf16 rounds its
 * copy, which an exact row could not be read back from). */
int nmt_packed_self_contained(nmt_precision precision);
/* 1 when the products of matrices packed now in this precision read nothing but the packed copy
 * (fp32 on a packed kernel, bf16, int8), so that a matrix that is only multiplied may go once packed:
 * bf16 is such a precision without being self-contained (its rows cannot be read back). */
int nmt_packed_products_self_contained(nmt_precision precision);
/* Row n (< N) of a self-contained packed matrix, out[K]: exactly the floats its products use (fp32:
 * the weight's own; int8: the quantized row times its factor). */
void nmt_packed_row(const nmt_packed *p, int n, float *out);

/* y[M, N] = x[M, K] W^T + bias[N] (bias may be NULL); x rows are K apart, y rows N apart. scratch
 * holds nmt_packed_scratch(p, M) values (none for fp32: NULL will do). */
void nmt_packed_linear(float *y, const float *x, const nmt_packed *p, const float *bias, int M, uint32_t *scratch);
size_t nmt_packed_scratch(const nmt_packed *p, int M);
/* The same for rows of K values in p's precision (room for any matrix packed like p). */
size_t nmt_packed_scratch_rows(const nmt_packed *p, int M, int K);

/* The same in two parts, for several products of one x: x converted once (bf16: into pairs, int8:
 * quantized, room for nmt_packed_scratch(p, M); nothing for fp32), then any columns first .. first + count - 1
 * (first a multiple of 32): y[M, count] = x W[first : first + count]^T + bias[first : first + count]. */
void nmt_packed_to_pairs(const nmt_packed *p, uint32_t *pairs, const float *x, int M);
void nmt_packed_linear_columns(float *y, const float *x, const uint32_t *x_pairs, const nmt_packed *p,
                               const float *bias, int M, int first, int count);

/* "fp32", "bf16" or "int8". */
const char *nmt_packed_precision_name(nmt_precision precision);
/* The kernels products of this precision run on here, e.g. "packed AVX-512 fp32", "packed
 * AVX2+FMA fp32", "int8 AVX2" or "OpenBLAS Haswell" (fp32 without AVX2), for reports. */
const char *nmt_packed_kernel_name(nmt_precision precision);
/* Best GOP/s (2 M N K operations a product) of y[M, N] = x[M, K] W^T through packed weights over
 * repetitions lasting at least min_seconds; -1 where the precision is not available here. */
double nmt_packed_gops(nmt_precision precision, int M, int N, int K, double min_seconds);
/* The best GOP/s of each of `count` precisions at one shape, rates[i] for precisions[i] (-1 where it
 * is not available here), over `rounds` rounds that take each in turn for at least min_seconds, so
 * that a burst of load on the machine slows all alike instead of the one being measured. */
void nmt_packed_rates(const nmt_precision *precisions, int count, int M, int N, int K, int rounds,
                      double min_seconds, double *rates);
/* The precision whose products of this shape run fastest on this CPU, measured now in alternating
 * rounds (nmt_packed_rates; a lower one must be at least 1.1x faster than the one before it);
 * rates[precision] receives the GOP/s of each (-1: not available). Every precision here is one
 * whose translations were checked against fp32 (docs/performance.md). */
nmt_precision nmt_packed_fastest(int M, int N, int K, double min_seconds, double rates[3]);

#endif
