/* precision: the measurement behind train.precision (see precision.h). */
#include "train/precision.h"

#include "base/util.h"
#include "compute/pool.h"

#include <stdio.h>

enum { SHAPE_M = 4096, SHAPE_N = 1024, SHAPE_K = 256 };

/* The products' rates, measured once a process, so that every run of a process (a test's, a library
 * user's) gets the same answer, in alternating rounds (nmt_packed_rates). Load that lasts the whole
 * measurement can still slow one more than the other (1.06x here with a beam search running beside
 * it, 1.5x alone), which the pool's share of the CPU time shows. */
static struct {
    double fp32, bf16; /* GOP/s */
    double share;      /* CPU time the process got over the time its threads asked for (1: quiet) */
    int measured;
} rates;

static void measure(void) {
    if (rates.measured) return;
    const double wall = nmt_now(), cpu = nmt_cpu_seconds();
    static const nmt_precision both[] = {NMT_PRECISION_FP32, NMT_PRECISION_BF16};
    double measured[2];
    nmt_packed_rates(both, 2, SHAPE_M, SHAPE_N, SHAPE_K, 6, 0.05, measured);
    rates.fp32 = measured[0];
    rates.bf16 = measured[1];
    rates.share = (nmt_cpu_seconds() - cpu) / ((nmt_now() - wall) * nmt_pool_threads());
    rates.measured = 1;
}

/* What a reader of the rates must know when other processes held the CPUs during the measurement. */
static const char *busy_note(char *out, size_t size) {
    if (rates.share >= NMT_TRAIN_QUIET_SHARE) return "";
    snprintf(out, size,
             "; the machine was busy: its %d threads ran %.0f%% of the time, and other processes' work slows the two "
             "precisions unevenly, so measure again on a quiet machine or set train.precision",
             nmt_pool_threads(), 100.0 * rates.share);
    return out;
}

int nmt_train_precision_check(nmt_precision precision, double *speedup) {
    if (speedup) *speedup = 0;
    if (precision == NMT_PRECISION_FP32) return 0;
    if (precision != NMT_PRECISION_BF16)
        return nmt_error_set("train.precision: %s is not a training precision (fp32 or bf16)",
                             nmt_packed_precision_name(precision));
    if (!nmt_packed_available(NMT_PRECISION_BF16))
        return nmt_error_set("train.precision: bf16 is refused on this CPU: it has no AVX-512 BF16 dot products "
                             "(or NMT_GEMM=openblas is set), so bf16 products would be emulated and run slower than "
                             "fp32's %s; train in fp32", nmt_packed_kernel_name(NMT_PRECISION_FP32));
    measure();
    if (rates.fp32 <= 0 || rates.bf16 <= 0) return nmt_error_prefix("train.precision: measuring the bf16 and fp32 products");
    if (speedup) *speedup = rates.bf16 / rates.fp32;
    char note[256];
    if (rates.bf16 < NMT_TRAIN_BF16_MIN_SPEEDUP * rates.fp32)
        return nmt_error_set("train.precision: bf16 is refused on this CPU: its bf16 products run at %.1f GOP/s "
                             "against fp32's %.1f (%.2fx, measured now at %dx%dx%d), below the %.1fx at which bf16 "
                             "training pays; train in fp32%s",
                             rates.bf16, rates.fp32, rates.bf16 / rates.fp32, SHAPE_M, SHAPE_N, SHAPE_K,
                             NMT_TRAIN_BF16_MIN_SPEEDUP, busy_note(note, sizeof note));
    return 0;
}

int nmt_train_precision_choose(nmt_train_precision setting, int resumed, nmt_precision *chosen, char *why, size_t size) {
    double speedup;
    *chosen = setting == NMT_TRAIN_PRECISION_FP32 ? NMT_PRECISION_FP32 : NMT_PRECISION_BF16;
    snprintf(why, size, "%s", "");
    if (setting == NMT_TRAIN_PRECISION_FP32) return 0;
    if (setting == NMT_TRAIN_PRECISION_AUTO &&
        (resumed == NMT_PRECISION_FP32 || (resumed == NMT_PRECISION_BF16 && nmt_packed_available(NMT_PRECISION_BF16)))) {
        *chosen = (nmt_precision)resumed;
        snprintf(why, size, "auto keeps the %s of the run being resumed", nmt_packed_precision_name(*chosen));
        return 0;
    }
    if (nmt_train_precision_check(NMT_PRECISION_BF16, &speedup) == 0) {
        char note[256];
        snprintf(why, size, "bf16 products measured at %.2fx fp32's here%s", speedup, busy_note(note, sizeof note));
        return 0;
    }
    if (setting == NMT_TRAIN_PRECISION_BF16) return -1;
    *chosen = NMT_PRECISION_FP32;
    snprintf(why, size, "auto chose fp32: %s", nmt_error());
    return 0;
}
