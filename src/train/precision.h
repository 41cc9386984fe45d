/* precision: whether training in a lower precision pays on this CPU, decided by measuring it.
 *
 * bf16 training (bf16 products with float32 sums; float32 master weights, gradients, LayerNorm,
 * softmax, loss and Adam) only makes sense where the CPU multiplies bf16 clearly faster than fp32:
 * nmt asks for a measured bf16 product rate at least NMT_TRAIN_BF16_MIN_SPEEDUP times fp32's at a
 * training product's shape (a 4,096-token batch through a 256 -> 1,024 layer). Where the CPU has no
 * AVX512_BF16 (AMD Zen 3 and older, most Intel cores before Cooper Lake) bf16 products would be
 * emulated; on Intel Xeons without AMX, vdpbf16ps issues at half the FMA rate and bf16 runs at about
 * 0.65x fp32 (measured on beam search); on AMD Zen 4 it was 1.6x. The refusal names the rates.
 */
#ifndef NMT_TRAIN_PRECISION_H
#define NMT_TRAIN_PRECISION_H

#include "compute/packed.h"

#define NMT_TRAIN_BF16_MIN_SPEEDUP 1.3

/* 0 when training may run in `precision` here (fp32 always may); -1 with the error set, naming the
 * measured rates, when it may not. Measuring takes about half a second. */
int nmt_train_precision_check(nmt_precision precision);

#endif
