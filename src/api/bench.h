/* bench: what `nmt bench` measures, where tests reach it -- sgemm and the packed decoding products of
 * every kernel and precision this CPU has, forward and backward on a synthetic batch, and the speed
 * of translating a file through the pipeline every front end takes (infer/pipeline.h). `nmt bench`
 * parses its flags and prints these results; nothing here prints but the progress it is given.
 */
#ifndef NMT_BENCH_H
#define NMT_BENCH_H

#include <stdio.h>

#include "compute/gemm.h"
#include "infer/pipeline.h"
#include "model/model.h"
#include "train/train.h"

/* The peak resident memory of this process so far, GiB. */
double nmt_bench_peak_rss_gib(void);
/* The best GFLOP/s of C[M,N] = A[M,K] B[N,K]^T over repetitions (3 at least) lasting at least
 * min_seconds, on the current sgemm kernel; -1 when memory runs out. */
double nmt_bench_gemm_gflops(int M, int N, int K, double min_seconds);
/* The same through the bf16 products training multiplies with (gemm.h's nmt_gemm_set_sgemm_bf16:
 * both operands converted on every call), in GOP/s; -1 where this CPU has no AVX512_BF16 or memory
 * runs out. */
double nmt_bench_bf16_gemm_gops(int M, int N, int K, double min_seconds);

/* The products of one training step of d256/h4/ff1024/V8000 on 4096 target tokens, after the square
 * one of the size measured (M, N, K 0 in the table). */
typedef struct nmt_bench_shape {
    const char *what;
    int M, N, K;
} nmt_bench_shape;
enum { NMT_BENCH_SHAPES = 6, NMT_BENCH_KERNELS = NMT_GEMM_AVX512 + 1, NMT_BENCH_PRECISIONS = 3 };
/* One beam step's fc1 of d256/ff1024 at 5 beams x 8 sentences: the packed products' second shape. */
enum { NMT_BENCH_STEP_M = 40, NMT_BENCH_STEP_N = 1024, NMT_BENCH_STEP_K = 256 };
extern const nmt_bench_shape nmt_bench_shapes[NMT_BENCH_SHAPES];
/* fp32, bf16, int8: the rows of the packed products. */
extern const nmt_precision nmt_bench_precisions[NMT_BENCH_PRECISIONS];

typedef struct nmt_bench_gemm_result {
    int size;                                          /* N of the square product */
    double gflops[NMT_BENCH_KERNELS][NMT_BENCH_SHAPES]; /* per sgemm kernel and shape; -1: not on this CPU */
    nmt_gemm_kernel sgemm;                             /* the kernel nmt_sgemm runs */
    /* The packed products in GOP/s: square (peak) and the beam step, per precision (-1: not on this
     * CPU), and last, when blas_row, fp32 through OpenBLAS (the weights repacked every call). */
    double packed_peak[NMT_BENCH_PRECISIONS + 1], packed_step[NMT_BENCH_PRECISIONS + 1];
    int blas_row;
} nmt_bench_gemm_result;

/* Every sgemm kernel here (the best of three rounds that take turns) at each shape, and the packed
 * products; the kernels in use are as they were afterwards. */
int nmt_bench_gemm(int size, nmt_bench_gemm_result *result);

/* Forward and backward (no optimizer) of a freshly initialised model of config c on one synthetic
 * batch of batch_tokens padded target tokens (lengths a little below src_len and tgt_len): warmup
 * steps, then `steps` measured into *result (optimizer_s -1). Each step's time and loss on progress
 * (NULL: nothing). */
int nmt_bench_train_synthetic(const nmt_model_config *c, long batch_tokens, int src_len, int tgt_len, long warmup,
                              long steps, FILE *progress, nmt_train_bench_result *result);

typedef struct nmt_bench_translate_result {
    int sentences;
    double seconds;           /* the search only: loading and encoding excluded */
    long source_tokens;       /* pieces + eos of the sources, as bounded */
    long target_tokens;       /* pieces + eos of the best translations */
    nmt_precision precision;  /* in effect */
    int shortlist_k, shortlist_m; /* of the shortlist used; 0 without */
    long phrases;             /* constraint phrases of all lines (0 without constraints) */
} nmt_bench_translate_result;

/* Translates every line of `input` (a file, `-` or gzip, as nmt_input_open reads it) with the model
 * `model` and the options, as `nmt translate` would (with `constraints`, as `nmt translate
 * --constraints`: SOURCE<TAB>PHRASE... a line), timing the translation; says what it starts on
 * progress (NULL: nothing). */
int nmt_bench_translate(const char *model, const char *input, const nmt_pipeline_options *options, int constraints,
                        FILE *progress, nmt_bench_translate_result *result);

#endif
