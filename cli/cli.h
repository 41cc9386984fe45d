/* cli: what every `nmt` subcommand shares: exit codes, error printing, checked number parsing.
 *
 * A subcommand lives in cli/cmd_<name>.c and defines
 *     const char nmt_cmd_<name>_summary[] = "one line for `nmt help`";
 *     int nmt_cmd_<name>(int argc, char **argv);   (argv[0] is "<name>")
 * The build registers it; it returns one of the exit codes below. It parses flags (getopt_long,
 * `--help` printing its usage to stdout and returning NMT_EXIT_OK), calls the library, prints
 * results to stdout and messages to stderr. Anything a test must reach belongs in the library.
 */
#ifndef NMT_CLI_H
#define NMT_CLI_H

#include "compute/packed.h"

enum {
    NMT_EXIT_OK = 0,
    NMT_EXIT_FAILURE = 1, /* the work failed: bad input, I/O error, ... */
    NMT_EXIT_USAGE = 2,   /* the command line was wrong */
};

/* Prints "nmt <command>: <library error>" to stderr; returns NMT_EXIT_FAILURE. */
int nmt_cli_fail(const char *command);
/* Prints "nmt <command>: <message>" and "Try 'nmt <command> --help'." to stderr; returns NMT_EXIT_USAGE. */
int nmt_cli_usage_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parse a whole string as a number within [min, max]; on failure print a usage error naming the
 * flag and return -1. */
int nmt_cli_long(const char *command, const char *flag, const char *text, long min, long max, long *out);
int nmt_cli_double(const char *command, const char *flag, const char *text, double min, double max, double *out);
/* Checks an output path given as `flag` before any work: an empty path, a directory, or the same file
 * as one of `inputs` (NULL-terminated, may be NULL; given as `input_flag`, or NULL for operands) is a
 * usage error, printed; returns -1 then, else 0. */
int nmt_cli_output(const char *command, const char *flag, const char *path, const char *const *inputs,
                   const char *input_flag);
/* --precision fp32|bf16|int8|auto (packed.h); bf16 on a CPU without AVX512_BF16, or int8 without
 * AVX2 or AVX-512 VNNI, is an error naming what is missing; auto measures the products of each
 * precision available here and takes the fastest (nmt_packed_fastest). */
int nmt_cli_precision(const char *command, const char *text, nmt_precision *out);
/* Builds MODEL_DIR/shortlist.bin (nmt shortlist) from the corpus src/tgt, encoded with the
 * directory's spm.model; K candidates per source piece, M frequent pieces (with fit, at most the
 * vocabulary's size; otherwise more is an error). */
enum { NMT_CLI_SHORTLIST_K = 50, NMT_CLI_SHORTLIST_M = 100 };
int nmt_cli_shortlist_build(const char *model_dir, const char *src, const char *tgt, int k, int m, int fit, int quiet);

#endif
