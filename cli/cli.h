/* cli: what every `nmt` subcommand shares: exit codes, error printing, checked number parsing.
 *
 * A subcommand lives in cli/cmd_<name>.c and defines
 *     const char nmt_cmd_<name>_summary[] = "one line for `nmt help`";
 *     int nmt_cmd_<name>(int argc, char **argv);   (argv[0] is "<name>")
 * The build registers it; it returns one of the exit codes below. It parses flags with
 * nmt_cli_getopt (`--help` printing its usage to stdout and returning NMT_EXIT_OK), calls the
 * library, prints results to stdout and messages to stderr (-q/--quiet: errors only). Anything a
 * test must reach belongs in the library.
 *
 * A closed pipe: main() gives SIGPIPE its default action, so when the reader of nmt's output goes
 * away (`nmt translate ... | head -1`) every subcommand ends at once and quietly, with the status a
 * shell reports for SIGPIPE (141), as cat or grep do; `nmt train` alone ignores it, so a closed
 * progress pipe never ends a training run.
 */
#ifndef NMT_CLI_H
#define NMT_CLI_H

#include "compute/packed.h"

#include <getopt.h>
#include <stdio.h>

struct nmt_config; /* train/config.h */

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
/* Checks a model directory given as `flag` before any work: an empty path, or (without overwrite)
 * a directory that already holds a model (model.safetensors) is a usage error, printed, naming the
 * file and --overwrite; returns -1 then, else 0. */
int nmt_cli_model_dir_output(const char *command, const char *flag, const char *dir, int overwrite);
/* --precision fp32|bf16|int8|auto (packed.h); bf16 on a CPU without AVX512_BF16, or int8 without
 * AVX2 or AVX-512 VNNI, is an error naming what is missing; auto measures the products of each
 * precision available here and takes the fastest (nmt_packed_fastest). */
int nmt_cli_precision(const char *command, const char *text, nmt_precision *out);

/* getopt_long's tables and globals (optind, optarg) with exact names only: an unknown or
 * abbreviated long option ("--max-length" for "--max-length-ratio"), a missing value, a value given
 * to a flag, or a second use of an option that takes a value (aliases count as one; `-m A -m B`
 * would silently mean B) unless its val is in `repeatable` (0-terminated; NULL: none) prints a
 * usage error and returns '?'. A flag given twice means the same as once.
 * Operands may come between options: at the end (-1) they are argv[optind..argc), in order; "--"
 * ends the options. Start each parse with optind = 1. */
int nmt_cli_getopt(const char *command, int argc, char **argv, const char *shortopts, const struct option *longopts,
                   const int *repeatable);

/* Builds MODEL_DIR/shortlist.bin (nmt_shortlist_build_dir) from every corpus of config's data.train:
 * what `nmt train` does when it finishes and `nmt shortlist` without --src/--tgt. */
int nmt_cli_shortlist_from_config(const char *model_dir, const struct nmt_config *config, int k, int m, int fit,
                                  FILE *progress);

/* The default of --threads for every subcommand: the CPUs this process may run on
 * (sched_getaffinity, so `taskset` and container limits are honoured). */
int nmt_cli_threads_default(void);

#endif
