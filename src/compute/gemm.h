/* gemm: the matrix products, on nmt's own AVX-512 kernel or OpenBLAS's sgemm, over the pool.
 *
 * nmt_sgemm runs nmt's own AVX-512 kernel where the CPU has AVX-512 (about twice the speed of the
 * AVX2 kernels Debian's OpenBLAS picks on AMD Zen 4 and 5, and row-invariant), and OpenBLAS's
 * sgemm otherwise or with NMT_GEMM=openblas in the environment. Each product is cut, by its shape
 * alone, into 4-16 blocks of whole micro-kernel tiles that the pool's threads take as they come
 * (pool.h); OpenBLAS runs on one thread inside each block. So products are bit-identical across
 * thread counts on both kernels; on the own kernel each element of C is moreover one sum over k in
 * order whatever the shape and the split (row-invariant).
 *
 * The panel layout, shared with packed.h's pre-packed weights: a matrix W[N, K] used as op(B) =
 * W^T is stored as ceil(N / NMT_GEMM_PANEL) panels [K, NMT_GEMM_PANEL] (columns past N zero); the
 * micro-kernel computes NMT_GEMM_TILE_ROWS rows by one panel at a time.
 */
#ifndef NMT_GEMM_H
#define NMT_GEMM_H

enum { NMT_GEMM_PANEL = 32, NMT_GEMM_TILE_ROWS = 12 };

/* C[M,N] = alpha op(A) op(B) + beta C, row-major, op(X) = X or X^T, on all pool threads. */
void nmt_sgemm(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
               const float *B, int ldb, float beta, float *C, int ldc);

/* y[M, N] (rows ldy apart) = x[M, K] W^T, or += with accumulate, for W in the panel layout
 * [ceil(N/32), K, 32], on this thread only. Needs nmt_gemm_own(). */
void nmt_gemm_panels(float *y, int ldy, const float *x, int M, int K, const float *panels, int N, int accumulate);

/* 1 when products run on nmt's own AVX-512 kernels (the CPU has AVX-512F and NMT_GEMM is not
 * "openblas" in the environment), 0 when on OpenBLAS's. Decided once, at the first call. */
int nmt_gemm_own(void);
/* Chooses for the products from now on (1: own, which needs AVX-512; 0: OpenBLAS), e.g. to measure
 * both in one run. Not while products run. */
int nmt_gemm_set_own(int on);

/* The OpenBLAS kernel set in use, e.g. "Haswell" or "SkylakeX". */
const char *nmt_gemm_blas_core(void);
/* "SkylakeX" when this CPU has AVX-512 (F, BW, DQ, VL) but OpenBLAS chose its AVX2 kernels, as
 * OpenBLAS 0.3.21 does on AMD Zen 4 and 5: there OPENBLAS_CORETYPE=SkylakeX in the environment of
 * a new process makes sgemm about 1.8x faster. NULL when there is nothing to gain. */
const char *nmt_gemm_blas_core_advice(void);

#endif
