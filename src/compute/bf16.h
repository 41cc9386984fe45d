/* bf16: products with bfloat16 operands and float32 sums, on AVX-512 BF16 (vdpbf16ps).
 *
 * An operand is rounded to bfloat16 (8 bits of mantissa, round to nearest even, subnormals to
 * zero, as VCVTNE2PS2BF16 does) and stored as pairs: one 32-bit word holds elements k = 2d (low
 * half) and 2d + 1 (high half) of a row, an odd K padded with zero. One dot-product instruction
 * adds both products of a pair to a float32 sum, so every element of a product is one float32
 * sum over the pairs in order, whatever the shape, the rows beside it and the threads: bf16
 * products are row-invariant and bit-identical for any thread count, like gemm.h's.
 *
 * The right operand lies in panels of 32 columns, [ceil(N/32), ceil(K/2), 32] pairs (columns past N
 * zero), which packed.h keeps for decoding's weights and nmt_bf16_gemm makes per product:
 *
 *     if (nmt_bf16_available())
 *         nmt_bf16_gemm(0, 1, M, N, K, 1.0f, x, K, w, K, 0.0f, y, N);  // y = bf16(x) bf16(w)^T
 *
 * Everything here needs a CPU with AVX512_BF16 (nmt_bf16_available); elsewhere it does nothing.
 */
#ifndef NMT_BF16_H
#define NMT_BF16_H

#include <stddef.h>
#include <stdint.h>

/* 1 when this CPU has AVX-512 F, BW and BF16. */
int nmt_bf16_available(void);

/* Where the left operand's pairs lie: pair d of row i at pairs[i * row + d * step]. */
typedef struct nmt_bf16_view {
    const uint32_t *pairs;
    size_t row, step;
} nmt_bf16_view;

/* dst[0 .. ceil(n/2)) = x[0 .. n) as pairs. */
void nmt_bf16_pairs(uint32_t *dst, const float *x, int n);

/* panels [ceil(N/32), ceil(K/2), 32] = op(B)[K, N] as pairs, op(B) = B^T of B[N, K] with trans_b, else
 * B[K, N] (rows ldb apart); columns past N zero. Over the pool's threads. */
void nmt_bf16_panels(uint32_t *panels, const float *B, int ldb, int trans_b, int K, int N);

/* y[rows, cols] (rows ldy apart, rows <= 12, cols <= 32) = (init + x panel) where y is set, with x
 * `pairs` pairs of each row and panel [pairs, 32]; init (NULL: zeros) is added first, per column,
 * as a bias: y = alpha (init + sum) when beta is 0, y += alpha sum when beta is 1 (init NULL), else
 * y = alpha sum + beta y. */
void nmt_bf16_tile(int rows, nmt_bf16_view x, int pairs, const uint32_t *panel, const float *init, float *y, int ldy,
                   int cols, float alpha, float beta);

/* C[M, N] = alpha op(A) op(B) + beta C with op(A) and op(B) rounded to bfloat16 (the contract of
 * nmt_sgemm, gemm.h), over the pool's threads; both operands are converted once per call into
 * buffers that only grow. Returns 0, or -1 with the error set when the CPU has no AVX512_BF16 or
 * memory runs out (C untouched). */
int nmt_bf16_gemm(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                  int ldb, float beta, float *C, int ldc);

#endif
