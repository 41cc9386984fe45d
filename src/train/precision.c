/* precision: the measurement behind train.precision (see precision.h). */
#include "train/precision.h"

#include "base/util.h"

#include <stdio.h>

enum { SHAPE_M = 4096, SHAPE_N = 1024, SHAPE_K = 256 };

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
    /* Measured once a process, so that every run of a process (a test's, a library user's) gets the
     * same answer, and in alternating rounds, best of each, so that a burst of load on the machine
     * slows both alike instead of the one being measured. */
    static double fp32 = 0, bf16 = 0;
    static int measured = 0;
    for (int round = 0; !measured && round < 6; round++) {
        const double f = nmt_packed_gops(NMT_PRECISION_FP32, SHAPE_M, SHAPE_N, SHAPE_K, 0.05);
        const double b = nmt_packed_gops(NMT_PRECISION_BF16, SHAPE_M, SHAPE_N, SHAPE_K, 0.05);
        if (f > fp32) fp32 = f;
        if (b > bf16) bf16 = b;
    }
    measured = 1;
    if (fp32 <= 0 || bf16 <= 0) return nmt_error_prefix("train.precision: measuring the bf16 and fp32 products");
    if (speedup) *speedup = bf16 / fp32;
    if (bf16 < NMT_TRAIN_BF16_MIN_SPEEDUP * fp32)
        return nmt_error_set("train.precision: bf16 is refused on this CPU: its bf16 products run at %.1f GOP/s "
                             "against fp32's %.1f (%.2fx, measured now at %dx%dx%d), below the %.1fx at which bf16 "
                             "training pays; train in fp32",
                             bf16, fp32, bf16 / fp32, SHAPE_M, SHAPE_N, SHAPE_K, NMT_TRAIN_BF16_MIN_SPEEDUP);
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
        snprintf(why, size, "bf16 products measured at %.2fx fp32's here", speedup);
        return 0;
    }
    if (setting == NMT_TRAIN_PRECISION_BF16) return -1;
    *chosen = NMT_PRECISION_FP32;
    snprintf(why, size, "auto chose fp32: %s", nmt_error());
    return 0;
}
