/* cli: shared error printing, number parsing, exact-name option parsing and defaults for the
 * subcommands. */
#include "cli.h"

#include "base/io.h"
#include "base/util.h"
#include "infer/pipeline.h"
#include "infer/shortlist.h"
#include "train/config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int nmt_cli_model_dir_output(const char *command, const char *flag, const char *dir, int overwrite) {
    if (!*dir) return nmt_cli_usage_error(command, "%s '': an empty path; name the model directory to write", flag), -1;
    char *model = nmt_path_join(dir, "model.safetensors");
    if (!model) return nmt_cli_fail(command), -1;
    const int taken = !overwrite && nmt_file_exists(model);
    if (taken)
        nmt_cli_usage_error(command, "%s %s already holds a model (%s); choose another directory, or add --overwrite "
                                     "to replace it", flag, dir, model);
    free(model);
    return taken ? -1 : 0;
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
    if (nmt_pipeline_precision_parse(text, out) == 0) return 0;
    /* The library's message, as the flag's: "--precision: expected ..." or "--precision bf16 needs ...". */
    nmt_cli_usage_error(command, "--%s", nmt_error());
    return -1;
}

/* ---- Option parsing ---- */

/* Parser state across the calls of one parse (reset when optind is set back to 1). */
static struct {
    int next;      /* index in argv[optind] of the next short option of a cluster ("-qv"); 0: none */
    int seen[64];  /* option values given so far, for refusing repeats */
    int num_seen;
} parser;

static const struct option *find_long(const struct option *longopts, const char *name, size_t len) {
    for (const struct option *o = longopts; o && o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) return o;
    return NULL;
}

/* The argument kind of short option c (no_argument, required_argument), or -1 when unknown. */
static int short_kind(const char *shortopts, int c) {
    if (c == ':' || c == '+' || c == '-') return -1;
    const char *p = strchr(shortopts, c);
    if (!p) return -1;
    return p[1] == ':' ? required_argument : no_argument;
}

/* How many argv words the option word `arg` uses (2 when its value is the next word). */
static int option_words(const char *arg, const char *shortopts, const struct option *longopts) {
    if (arg[1] == '-') {
        if (strchr(arg, '=')) return 1;
        const struct option *o = find_long(longopts, arg + 2, strlen(arg + 2));
        return o && o->has_arg == required_argument ? 2 : 1;
    }
    for (const char *p = arg + 1; *p; p++)
        if (short_kind(shortopts, *p) == required_argument) return p[1] ? 1 : 2;
    return 1;
}

static int is_option_word(const char *arg) { return arg[0] == '-' && arg[1] != '\0'; }

/* Moves argv[to] (an option word, and its value word if words == 2) before argv[from..to). */
static void rotate(char **argv, int from, int to, int words) {
    for (int w = 0; w < words; w++) {
        char *moved = argv[to + w];
        memmove(&argv[from + w + 1], &argv[from + w], (size_t)(to - from) * sizeof *argv);
        argv[from + w] = moved;
    }
}

/* Refuses a second use of an option with a value (aliases share a val) unless it is repeatable. */
static int check_repeat(const char *command, int val, const int *repeatable, const char *name) {
    for (const int *r = repeatable; r && *r; r++)
        if (*r == val) return val;
    for (int i = 0; i < parser.num_seen; i++)
        if (parser.seen[i] == val) {
            nmt_cli_usage_error(command, "%s given more than once (an option takes one value)", name);
            return '?';
        }
    if (parser.num_seen < (int)(sizeof parser.seen / sizeof *parser.seen)) parser.seen[parser.num_seen++] = val;
    return val;
}

/* "unknown option" with the options the word abbreviates, since nmt does not expand abbreviations. */
static int unknown_long(const char *command, const char *word, size_t len, const struct option *longopts) {
    char hint[256] = "";
    size_t used = 0;
    for (const struct option *o = longopts; o && o->name; o++)
        if (strncmp(o->name, word + 2, len) == 0 && used < sizeof hint - 64)
            used += (size_t)snprintf(hint + used, sizeof hint - used, "%s--%s", used ? ", " : "", o->name);
    if (used)
        return nmt_cli_usage_error(command, "unknown option '%.*s' (options are never abbreviated; did you mean %s?)",
                                   (int)len + 2, word, hint), '?';
    return nmt_cli_usage_error(command, "unknown option '%.*s'", (int)len + 2, word), '?';
}

static int parse_long_option(const char *command, int argc, char **argv, const struct option *longopts,
                             const int *repeatable) {
    const char *word = argv[optind++];
    const char *eq = strchr(word, '=');
    size_t len = eq ? (size_t)(eq - word - 2) : strlen(word + 2);
    const struct option *o = find_long(longopts, word + 2, len);
    if (!o) return unknown_long(command, word, len, longopts);
    optarg = NULL;
    if (o->has_arg == no_argument && eq) return nmt_cli_usage_error(command, "--%s takes no value", o->name), '?';
    if (o->has_arg != no_argument && eq) optarg = (char *)eq + 1;
    if (o->has_arg == required_argument && !eq) {
        if (optind >= argc) return nmt_cli_usage_error(command, "--%s needs a value", o->name), '?';
        optarg = argv[optind++];
    }
    if (o->has_arg == no_argument) return o->val; /* a flag said twice means the same */
    char name[80];
    snprintf(name, sizeof name, "--%s", o->name);
    return check_repeat(command, o->val, repeatable, name);
}

static int parse_short_option(const char *command, int argc, char **argv, const char *shortopts,
                              const int *repeatable) {
    char *word = argv[optind];
    int c = (unsigned char)word[parser.next++];
    int kind = short_kind(shortopts, c);
    int last = word[parser.next] == '\0';
    char name[3] = {'-', (char)c, '\0'};
    optarg = NULL;
    if (kind < 0) {
        parser.next = 0;
        optind++;
        return nmt_cli_usage_error(command, "unknown option '%s'", name), '?';
    }
    if (kind == required_argument) {
        optind++;
        if (!last) optarg = word + parser.next;
        else if (optind < argc) optarg = argv[optind++];
        else {
            parser.next = 0;
            return nmt_cli_usage_error(command, "%s needs a value", name), '?';
        }
        parser.next = 0;
        return check_repeat(command, c, repeatable, name);
    }
    if (last) {
        optind++;
        parser.next = 0;
    }
    return c; /* a flag said twice means the same */
}

int nmt_cli_getopt(const char *command, int argc, char **argv, const char *shortopts, const struct option *longopts,
                   const int *repeatable) {
    if (optind <= 1 && parser.next == 0) {
        optind = 1;
        parser.num_seen = 0;
    }
    if (parser.next) return parse_short_option(command, argc, argv, shortopts, repeatable);
    /* Find the next option word, moving it (and its value) before the operands seen so far. */
    int j = optind;
    while (j < argc && !is_option_word(argv[j])) j++;
    if (j >= argc) return -1;
    if (strcmp(argv[j], "--") == 0) {
        rotate(argv, optind, j, 1);
        optind++;
        return -1;
    }
    int words = option_words(argv[j], shortopts, longopts);
    if (j + words > argc) words = argc - j;
    if (j > optind) rotate(argv, optind, j, words);
    if (argv[optind][1] == '-') return parse_long_option(command, argc, argv, longopts, repeatable);
    parser.next = 1;
    return parse_short_option(command, argc, argv, shortopts, repeatable);
}

int nmt_cli_threads_default(void) { return nmt_cpus_available(); }

int nmt_cli_shortlist_from_config(const char *model_dir, const nmt_config *config, int k, int m, int fit,
                                  FILE *progress) {
    const char *src[NMT_CONFIG_MAX_CORPORA], *tgt[NMT_CONFIG_MAX_CORPORA];
    for (int i = 0; i < config->num_train; i++) {
        src[i] = config->train[i].src;
        tgt[i] = config->train[i].tgt;
    }
    return nmt_shortlist_build_dir(model_dir, config->num_train, src, tgt, k, m, fit, progress);
}
