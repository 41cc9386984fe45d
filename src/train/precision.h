/* precision: whether training in a lower precision pays on this CPU, decided by measuring it.
 *
 * bf16 training (bf16 products with float32 sums; float32 master weights, gradients, LayerNorm,
 * softmax, loss and Adam) only makes sense where the CPU multiplies bf16 clearly faster than fp32:
 * nmt asks for a measured bf16 product rate at least NMT_TRAIN_BF16_MIN_SPEEDUP times fp32's at a
 * training product's shape (a 4,096-token batch through a 256 -> 1,024 layer). Where the CPU has no
 * AVX512_BF16 (AMD Zen 3 and older, most Intel cores before Cooper Lake) bf16 products would be
 * emulated; on Intel Xeons without AMX, vdpbf16ps issues at half the FMA rate and bf16 runs at about
 * 0.65x fp32 (measured on beam search); on AMD Zen 4 it runs at 2.0-2.8x (2 threads, at that shape
 * and at 2048^3). The refusal names the rates. Where it pays, the run's products go through bf16.h
 * (gemm.h's nmt_gemm_set_sgemm_bf16); everything else stays in float32.
 */
#ifndef NMT_TRAIN_PRECISION_H
#define NMT_TRAIN_PRECISION_H

#include "compute/packed.h"

#define NMT_TRAIN_BF16_MIN_SPEEDUP 1.3

/* 0 when training may run in `precision` here (fp32 always may); -1 with the error set, naming the
 * measured rates, when it may not. Measuring takes about half a second, once a process. */
int nmt_train_precision_check(nmt_precision precision);

#endif
