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
    if (strcmp(text, "fp32") == 0) {
        *out = NMT_PRECISION_FP32;
        return 0;
    }
    if (strcmp(text, "bf16") != 0) {
        nmt_cli_usage_error(command, "--precision: expected fp32 or bf16, got '%s'", text);
        return -1;
    }
    if (!nmt_packed_available(NMT_PRECISION_BF16)) {
        fprintf(stderr, "nmt %s: --precision bf16 needs a CPU with AVX512_BF16 instructions; this one has none "
                        "(or NMT_GEMM=openblas is set)\n", command);
        return -1;
    }
    *out = NMT_PRECISION_BF16;
    return 0;
}
