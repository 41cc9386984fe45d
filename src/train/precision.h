/* precision: whether training in a lower precision pays on this CPU, decided by measuring it.
 *
 * bf16 training (bf16 products with float32 sums; float32 master weights, gradients, LayerNorm,
 * softmax, loss and Adam) only makes sense where the CPU multiplies bf16 clearly faster than fp32:
 * nmt asks for a measured bf16 product rate at least NMT_TRAIN_BF16_MIN_SPEEDUP times fp32's at a
 * training product's shape (a 4,096-token batch through a 256 -> 1,024 layer). Where the CPU has no
 * AVX512_BF16 (AMD Zen 3 and older, most Intel cores before Cooper Lake) bf16 products would be
 * emulated; on Intel Xeons without AMX, vdpbf16ps issues at half the FMA rate and bf16 runs at about
 * 0.65x fp32 (measured on beam search); on AMD Zen 4 it runs at 2.0-2.8x (2 threads, at that shape
 * and at 2048^3), on Zen 5, whose fp32 FMAs are full-width, at 1.5x at that shape. The refusal
 * names the rates. Where it pays, the run's products go through bf16.h (gemm.h's
 * nmt_gemm_set_sgemm_bf16); everything else stays in float32.
 *
 * train.precision: auto makes the same measurement the choice instead of the condition: bf16 where
 * it pays, fp32 elsewhere, so that one config trains at the best rate on any CPU.
 */
#ifndef NMT_TRAIN_PRECISION_H
#define NMT_TRAIN_PRECISION_H

#include "compute/packed.h"

#define NMT_TRAIN_BF16_MIN_SPEEDUP 1.3
/* Below this share of its threads' time during the measurement, the machine counts as busy and the
 * choice says so (its rates may mislead). */
#define NMT_TRAIN_QUIET_SHARE 0.8

/* train.precision's values: nmt_precision's fp32 and bf16, or auto. */
typedef enum nmt_train_precision {
    NMT_TRAIN_PRECISION_FP32 = NMT_PRECISION_FP32,
    NMT_TRAIN_PRECISION_BF16 = NMT_PRECISION_BF16,
    NMT_TRAIN_PRECISION_AUTO
} nmt_train_precision;

/* 0 when training may run in `precision` here (fp32 always may); -1 with the error set, naming the
 * measured rates, when it may not. Measuring takes about half a second, once a process; *speedup
 * (may be NULL) gets bf16's measured rate over fp32's (0 where nothing was measured). */
int nmt_train_precision_check(nmt_precision precision, double *speedup);

/* The precision a run with train.precision `setting` trains in here: fp32 or bf16 as set (-1 with
 * the error set where bf16 is refused), and for auto bf16 where nmt_train_precision_check accepts
 * it, else fp32. A resumed run (resumed: the precision it trained in, an nmt_precision; -1 for a
 * fresh one) keeps its precision under auto wherever this CPU can run it, so that it continues bit
 * for bit even where a loaded machine would measure otherwise. why[size] gets a sentence for the
 * log saying what decided ("" for fp32 as set). */
int nmt_train_precision_choose(nmt_train_precision setting, int resumed, nmt_precision *chosen, char *why, size_t size);

#endif
