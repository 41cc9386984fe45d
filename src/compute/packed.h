/* packed: inference products with weights laid out once for the CPU's widest vectors.
 *
 * Decoding multiplies small row blocks (the live beam rows of one step) by the same weights
 * thousands of times. OpenBLAS repacks the weight matrix on every call and, as Debian ships it,
 * may pick AVX2 kernels on AVX-512 CPUs (it does on AMD Zen 4 and 5). A packed matrix is the weight
 * W[N, K] of y = x W^T + b rearranged once into panels of 32 output columns, [ceil(N/32), K, 32]
 * (columns past N are zero), which an AVX-512 kernel streams without further copying:
 *
 *     nmt_packed w;
 *     nmt_packed_init(&w, weight, N, K, NMT_PRECISION_FP32);  // once, e.g. for a translator
 *     nmt_packed_linear(y, x, &w, bias, M, NULL);  // y[M, N] = x[M, K] W^T + bias, every step
 *     nmt_packed_free(&w);
 *
 * Each output element is one dot product summed over k in order, independent of M and of the
 * threads, so a row's result is the same alone or in any batch. Without AVX-512 (or with
 * NMT_GEMM=openblas in the environment) nothing is packed and the product is nmt_linear_forward's.
 * Products are split over the pool's threads (pool.h) by column panels.
 */
#ifndef NMT_PACKED_H
#define NMT_PACKED_H

#include <stddef.h>
#include <stdint.h>

/* The arithmetic of the products. bf16: weights and x rounded to bfloat16 (8 bits of mantissa),
 * products summed in float32 by AVX-512 BF16 dot-product instructions, twice fp32's rate; each
 * product is then exact to about 3 significant digits, which changes translations rarely and
 * slightly. */
typedef enum nmt_precision { NMT_PRECISION_FP32, NMT_PRECISION_BF16 } nmt_precision;

typedef struct nmt_packed {
    const float *weight; /* [N, K] the original, for the fallback */
    float *panels;       /* fp32: [ceil(N/32), K, 32], or NULL on the fallback */
    uint32_t *pairs;     /* bf16: [ceil(N/32), ceil(K/2), 32] pairs (k even: low half, k odd: high) */
    int N, K;
} nmt_packed;

/* Packs weight[N, K] (which must outlive the packed copy). bf16 needs a CPU with AVX512_BF16 (see
 * nmt_packed_available). Returns 0, or -1 with the error set. */
int nmt_packed_init(nmt_packed *p, const float *weight, int N, int K, nmt_precision precision);
void nmt_packed_free(nmt_packed *p);
/* 1 when products use an AVX-512 kernel (fp32 or bf16). */
int nmt_packed_fast(const nmt_packed *p);
/* 1 when matrices packed now in this precision would use an AVX-512 kernel: fp32 needs AVX-512F
 * (nmt_gemm_own: not NMT_GEMM=openblas in the environment), bf16 also AVX512_BF16. */
int nmt_packed_available(nmt_precision precision);

/* y[M, N] = x[M, K] W^T + bias[N] (bias may be NULL); x rows are K apart, y rows N apart. scratch
 * holds nmt_packed_scratch(p, M) values (none for fp32: NULL will do). */
void nmt_packed_linear(float *y, const float *x, const nmt_packed *p, const float *bias, int M, uint32_t *scratch);
size_t nmt_packed_scratch(const nmt_packed *p, int M);

/* The same in two parts, for several products of one x: x converted once (bf16: into pairs, room
 * for nmt_packed_scratch(p, M); nothing for fp32), then any columns first .. first + count - 1
 * (first a multiple of 32): y[M, count] = x W[first : first + count]^T + bias[first : first + count]. */
void nmt_packed_to_pairs(const nmt_packed *p, uint32_t *pairs, const float *x, int M);
void nmt_packed_linear_columns(float *y, const float *x, const uint32_t *x_pairs, const nmt_packed *p,
                               const float *bias, int M, int first, int count);

#endif
