/* gemm: the matrix products, on nmt's own AVX-512 or AVX2+FMA kernel or OpenBLAS's sgemm, over the pool.
 *
 * nmt has two micro-kernels of its own for one panel layout: AVX-512 (12 rows x 32 columns) and
 * AVX2+FMA (6 x 16); both give each element of C the same float operations in the same order, so
 * their results are the same bits. The best one the CPU has (nmt_gemm_kernel_used) runs the
 * products on weights packed once for decoding (nmt_gemm_panels, packed.h), and nmt_sgemm where
 * nmt_gemm_own() says so; OpenBLAS's sgemm runs everything else, and everything with
 * NMT_GEMM=openblas in the environment. Each product of nmt_sgemm is cut, by its shape alone, into
 * 4-16 blocks of whole micro-kernel tiles that the pool's threads take as they come (pool.h);
 * OpenBLAS runs on one thread inside each block. So products are bit-identical across thread
 * counts on every kernel; on the own kernels each element of C is moreover one sum over k in order
 * whatever the shape and the split (row-invariant).
 *
 * The panel layout, shared with packed.h's pre-packed weights: a matrix W[N, K] used as op(B) =
 * W^T is stored as panels [K, width] of `width` columns each (columns past N zero), each panel
 * 64-byte aligned: 32 columns (NMT_GEMM_PANEL) for the AVX-512 micro-kernel, which computes
 * NMT_GEMM_TILE_ROWS rows by one panel at a time, and 16 for the AVX2 one, so that each of its
 * strips is contiguous (with 32, a strip holds every other cache line and crowds half the L1
 * sets: measured 5-20% slower). The AVX2 kernel reads either width.
 */
#ifndef NMT_GEMM_H
#define NMT_GEMM_H

enum { NMT_GEMM_PANEL = 32, NMT_GEMM_TILE_ROWS = 12 };

/* C[M,N] = alpha op(A) op(B) + beta C, row-major, op(X) = X or X^T, on all pool threads. */
void nmt_sgemm(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
               const float *B, int ldb, float beta, float *C, int ldc);

/* y[M, N] (rows ldy apart) = x[M, K] W^T, or += with accumulate, for W in panels of `width` (16
 * or 32) columns, [ceil(N / width), K, width], on this thread only, on nmt_gemm_kernel_used()
 * (nmt_gemm_best() when that is OpenBLAS; the CPU must have an own kernel), or the AVX2 kernel
 * where that cannot read this width. */
void nmt_gemm_panels(float *y, int ldy, const float *x, int M, int K, const float *panels, int width, int N,
                     int accumulate);
/* The same with y = bias[0 .. N) + x W^T for every row: the bits of writing the bias into y, then
 * nmt_gemm_panels with accumulate, without that copy. */
void nmt_gemm_panels_bias(float *y, int ldy, const float *x, int M, int K, const float *panels, int width, int N,
                          const float *bias);
/* The panel width for matrices packed now for nmt_gemm_panels: the kernel's (16 or 32). */
int nmt_gemm_panel_width(void);

/* nmt's own kernels, slowest first. */
typedef enum nmt_gemm_kernel { NMT_GEMM_OPENBLAS, NMT_GEMM_AVX2, NMT_GEMM_AVX512 } nmt_gemm_kernel;
/* The fastest own kernel this CPU has: AVX-512 with AVX-512F, AVX2 with AVX2 and FMA, else
 * NMT_GEMM_OPENBLAS (none). */
nmt_gemm_kernel nmt_gemm_best(void);
/* The kernel of products on packed weights (nmt_gemm_panels, packed.h): nmt_gemm_best(). */
nmt_gemm_kernel nmt_gemm_kernel_used(void);
/* The kernel of nmt_sgemm: AVX-512 where the CPU has it, else OpenBLAS. Not the AVX2 kernel: on
 * the training shapes it measured 0.88-1.07x OpenBLAS 0.3.21's Zen kernels (`nmt bench gemm`, 2
 * threads of an AMD EPYC Zen 3: qkv 113 against 129 GFLOP/s, fc1 113/126, fc2 128/119, o 130/141,
 * logits 106/118), and whole training steps (`nmt bench train configs/multi30k-small.yaml`,
 * NMT_GEMM=avx2 against openblas, three rounds) 1,445-1,490 against 1,441-1,967 target tokens/s.
 * NMT_GEMM=openblas, avx2 or avx512 in the environment (read at the first call) puts both on that
 * kernel instead, where the CPU has it. */
nmt_gemm_kernel nmt_gemm_sgemm_kernel(void);
/* Choose either from now on (any kernel up to nmt_gemm_best(), e.g. to measure or test each in one
 * run); not while products run. Return 0, or -1 with the error set. */
int nmt_gemm_set_kernel(nmt_gemm_kernel kernel);
int nmt_gemm_set_sgemm_kernel(nmt_gemm_kernel kernel);
/* From now on (on = 1) nmt_sgemm rounds its operands to bfloat16 and sums in float32 on
 * bf16.h's kernel, or not (0, the default): the products of train.precision bf16. Not while
 * products run. Returns 0, or -1 with the error set where the CPU has no AVX512_BF16. */
int nmt_gemm_set_sgemm_bf16(int on);
int nmt_gemm_sgemm_bf16(void);
/* 1 when nmt_sgemm runs on an own kernel, 0 when on OpenBLAS's. */
int nmt_gemm_own(void);
/* "AVX-512", "AVX2+FMA" or "OpenBLAS". */
const char *nmt_gemm_kernel_name(nmt_gemm_kernel kernel);

/* The OpenBLAS kernel set in use, e.g. "Haswell" or "SkylakeX". */
const char *nmt_gemm_blas_core(void);
/* "SkylakeX" when this CPU has AVX-512 (F, BW, DQ, VL) but OpenBLAS chose its AVX2 kernels, as
 * OpenBLAS 0.3.21 does on AMD Zen 4 and 5: there OPENBLAS_CORETYPE=SkylakeX in the environment of
 * a new process makes sgemm about 1.8x faster. NULL when there is nothing to gain. */
const char *nmt_gemm_blas_core_advice(void);

#endif
