/* cli: shared error printing and number parsing for the subcommands. */
#include "cli.h"

#include "base/io.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nmt_cli_fail(const char *command) {
    fprintf(stderr, "nmt %s: %s\n", command, nmt_error());
    return NMT_EXIT_FAILURE;
}

int nmt_cli_usage_error(const char *command, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "nmt %s: ", command);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'nmt %s --help'.\n", command);
    return NMT_EXIT_USAGE;
}

int nmt_cli_output(const char *command, const char *flag, const char *path, const char *const *inputs,
                   const char *input_flag) {
    if (nmt_output_check(path, flag) < 0) return nmt_cli_usage_error(command, "%s", nmt_error()), -1;
    for (const char *const *in = inputs; in && *in; in++)
        if (nmt_same_file(path, *in))
            return nmt_cli_usage_error(command, "%s %s is also an input (%s%s%s): writing it would destroy what is "
                                                "read; choose another output file",
                                       flag, path, input_flag ? input_flag : "", input_flag ? " " : "", *in),
                   -1;
    return 0;
}

int nmt_cli_long(const char *command, const char *flag, const char *text, long min, long max, long *out) {
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < min || v > max) {
        nmt_cli_usage_error(command, "%s: expected an integer from %ld to %ld, got '%s'", flag, min, max, text);
        return -1;
    }
    *out = v;
    return 0;
}

int nmt_cli_double(const char *command, const char *flag, const char *text, double min, double max, double *out) {
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end != '\0' || !isfinite(v) || v < min || v > max) {
        nmt_cli_usage_error(command, "%s: expected a number from %g to %g, got '%s'", flag, min, max, text);
        return -1;
    }
    *out = v;
    return 0;
}

int nmt_cli_precision(const char *command, const char *text, nmt_precision *out) {
    if (strcmp(text, "auto") == 0) {
        /* One decoding step's feed-forward product of a d256/ff1024 model at beam 5 x 8 sentences. */
        *out = nmt_packed_fastest(40, 1024, 256, 0.05, NULL);
        return 0;
    }
    static const nmt_precision all[] = {NMT_PRECISION_FP32, NMT_PRECISION_BF16, NMT_PRECISION_INT8};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(text, nmt_packed_precision_name(all[i])) != 0) continue;
        if (all[i] == NMT_PRECISION_BF16 && !nmt_packed_available(all[i])) {
            fprintf(stderr, "nmt %s: --precision bf16 needs a CPU with AVX512_BF16 instructions; this one has none "
                            "(or NMT_GEMM=openblas is set)\n", command);
            return -1;
        }
        if (all[i] == NMT_PRECISION_INT8 && !nmt_packed_available(all[i])) {
            fprintf(stderr, "nmt %s: --precision int8 needs a CPU with AVX2 or AVX-512 VNNI instructions; this one "
                            "has neither\n", command);
            return -1;
        }
        *out = all[i];
        return 0;
    }
    nmt_cli_usage_error(command, "--precision: expected fp32, bf16, int8 or auto, got '%s'", text);
    return -1;
}
