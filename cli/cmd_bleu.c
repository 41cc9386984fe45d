/* nmt bleu: BLEU, chrF and TER with sacreBLEU 2.x's flags, numbers and output.
 *
 * The flags are sacreBLEU's, parsed the way its argparse parser does (lists after -i and -m, long
 * options by unique prefix, --flag=value). Files are read whole, split on '\n' only and stripped of
 * trailing whitespace; standard input also ends lines at '\r' and holds several systems separated
 * by tabs, as in sacreBLEU. The work is done by the library (segments.h reads, evaluate.h scores and
 * reports); this file turns the flags into options and prints the report.
 */
#include "cli.h"

#include "base/util.h"
#include "compute/pool.h"
#include "eval/evaluate.h"
#include "nmt/version.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

const char nmt_cmd_bleu_summary[] = "score translations with BLEU, chrF or TER, exactly as sacreBLEU";

static const char usage_text[] =
    "Usage: nmt bleu REF [REF ...] [-i HYP [HYP ...]] [options]\n"
    "\n"
    "Scores hypotheses (standard input, or the files after -i) against references, giving the numbers\n"
    "and signatures of sacreBLEU 2.x for the same flags. Several -i files compare systems (a table);\n"
    "several REF files are several references per segment.\n"
    "\n"
    "Input:\n"
    "  -i, --input HYP [HYP ...]   hypothesis files (default: standard input, systems separated by tabs)\n"
    "                              (REF and HYP files compressed with gzip are read as sacreBLEU does)\n"
    "  -nr, --num-refs N           REF holds N tab-separated references per line (default 1)\n"
    "  -e, --encoding utf-8        only UTF-8 is supported\n"
    "  -l, --language-pair SRC-TRG the target language picks the default tokenizer (zh for Chinese)\n"
    "Metrics:\n"
    "  -m, --metrics {bleu,chrf,ter} [...]   (default: bleu)\n"
    "  -sl, --sentence-level       a score per line (one metric, one system)\n"
    "BLEU:\n"
    "  -tok, --tokenize {none,13a,intl,char,zh}   (default 13a)\n"
    "  -lc, --lowercase            case-insensitive\n"
    "  -s, --smooth-method {exp,floor,add-k,none} (default exp)\n"
    "  -sv, --smooth-value V       for floor (default 0.1) and add-k (default 1)\n"
    "  --force                     no warning for tokenized-looking input\n"
    "chrF:\n"
    "  -cc, --chrf-char-order N    (default 6)\n"
    "  -cw, --chrf-word-order N    (default 0; 2 is chrF++)\n"
    "  --chrf-beta B               (default 2)\n"
    "  --chrf-whitespace           keep whitespace in character n-grams\n"
    "  --chrf-lowercase            case-insensitive\n"
    "  --chrf-eps-smoothing        chrF++.py's epsilon smoothing instead of the effective order\n"
    "TER:\n"
    "  --ter-case-sensitive, --ter-asian-support, --ter-no-punct, --ter-normalized\n"
    "Significance:\n"
    "  -ci, --confidence           bootstrap 95% confidence interval (one system)\n"
    "  -cin, --confidence-n N      resamples (default 1000)\n"
    "  -pbs, --paired-bs           paired bootstrap test of each system against the first\n"
    "  -pbsn, --paired-bs-n N      resamples (default 1000)\n"
    "  -par, --paired-ar           paired approximate randomization test\n"
    "  -parn, --paired-ar-n N      trials (default 10000)\n"
    "  -j, --paired-jobs N         accepted for compatibility (nmt runs the tests in one process)\n"
    "  The resampling seed is 12345, or $SACREBLEU_SEED ('none' for a random one), drawn exactly as\n"
    "  sacreBLEU's numpy generator draws it.\n"
    "Output:\n"
    "  -f, --format {json,text,latex}  (default json, or $SACREBLEU_FORMAT; latex: tables only)\n"
    "  -w, --width N               decimals (default 1)\n"
    "  -b, --score-only            numbers only\n"
    "  -sh, --short                abbreviated signatures\n"
    "  -q, --quiet                 no messages on standard error\n"
    "  -nc, --no-color             accepted (nmt never colours its output)\n"
    "  --threads N                 threads for scoring a large corpus (default: the CPUs this process\n"
    "                              may use, at most 8)\n"
    "  -h, --help                  this help\n"
    "\n"
    "Not supported: test-set downloads (-t, --list, --echo, --download, --citation, --origlang, --subset,\n"
    "--detail) and tokenizers needing external models (ja-mecab, ko-mecab, spm, flores*).\n"
    "Exit status: 0 success, 1 failure (bad input), 2 usage error.\n";

typedef struct args {
    const char **refs;
    int nrefs_files;
    const char **inputs;
    int ninputs, has_input;
    nmt_evaluate_options e; /* what to compute and show */
    int tokenize_given;
    const char *langpair;
    long num_refs;
    int quiet, force;
    long threads;
} args;

enum kind { FLAG, VALUE, LIST, REFUSED };
typedef struct option_spec {
    const char *long_name;  /* "--input" */
    const char *short_name; /* "-i" or NULL */
    enum kind kind;
    int id;
} option_spec;

enum {
    O_HELP, O_INPUT, O_NUM_REFS, O_ENCODING, O_METRICS, O_SENTENCE, O_SMOOTH, O_SMOOTH_VALUE, O_TOKENIZE, O_LOWERCASE,
    O_FORCE, O_CHAR_ORDER, O_WORD_ORDER, O_BETA, O_WHITESPACE, O_CHRF_LC, O_EPS, O_TER_CASE, O_TER_ASIAN, O_TER_PUNCT,
    O_TER_NORM, O_CI, O_CI_N, O_PAR, O_PBS, O_PAR_N, O_PBS_N, O_JOBS, O_QUIET, O_SHORT, O_SCORE_ONLY, O_WIDTH,
    O_NO_COLOR, O_FORMAT, O_LANGPAIR, O_VERSION, O_TEST_SET, O_THREADS,
};

static const option_spec options[] = {
    {"--help", "-h", FLAG, O_HELP},
    {"--version", "-V", FLAG, O_VERSION},
    {"--input", "-i", LIST, O_INPUT},
    {"--num-refs", "-nr", VALUE, O_NUM_REFS},
    {"--encoding", "-e", VALUE, O_ENCODING},
    {"--metrics", "-m", LIST, O_METRICS},
    {"--sentence-level", "-sl", FLAG, O_SENTENCE},
    {"--smooth-method", "-s", VALUE, O_SMOOTH},
    {"--smooth-value", "-sv", VALUE, O_SMOOTH_VALUE},
    {"--tokenize", "-tok", VALUE, O_TOKENIZE},
    {"--lowercase", "-lc", FLAG, O_LOWERCASE},
    {"--force", NULL, FLAG, O_FORCE},
    {"--chrf-char-order", "-cc", VALUE, O_CHAR_ORDER},
    {"--chrf-word-order", "-cw", VALUE, O_WORD_ORDER},
    {"--chrf-beta", NULL, VALUE, O_BETA},
    {"--chrf-whitespace", NULL, FLAG, O_WHITESPACE},
    {"--chrf-lowercase", NULL, FLAG, O_CHRF_LC},
    {"--chrf-eps-smoothing", NULL, FLAG, O_EPS},
    {"--ter-case-sensitive", NULL, FLAG, O_TER_CASE},
    {"--ter-asian-support", NULL, FLAG, O_TER_ASIAN},
    {"--ter-no-punct", NULL, FLAG, O_TER_PUNCT},
    {"--ter-normalized", NULL, FLAG, O_TER_NORM},
    {"--confidence", "-ci", FLAG, O_CI},
    {"--confidence-n", "-cin", VALUE, O_CI_N},
    {"--paired-ar", "-par", FLAG, O_PAR},
    {"--paired-bs", "-pbs", FLAG, O_PBS},
    {"--paired-ar-n", "-parn", VALUE, O_PAR_N},
    {"--paired-bs-n", "-pbsn", VALUE, O_PBS_N},
    {"--paired-jobs", "-j", VALUE, O_JOBS},
    {"--threads", NULL, VALUE, O_THREADS},
    {"--quiet", "-q", FLAG, O_QUIET},
    {"--short", "-sh", FLAG, O_SHORT},
    {"--score-only", "-b", FLAG, O_SCORE_ONLY},
    {"--width", "-w", VALUE, O_WIDTH},
    {"--no-color", "-nc", FLAG, O_NO_COLOR},
    {"--format", "-f", VALUE, O_FORMAT},
    {"--language-pair", "-l", VALUE, O_LANGPAIR},
    {"--test-set", "-t", REFUSED, O_TEST_SET},
    {"--list", NULL, REFUSED, O_TEST_SET},
    {"--download", NULL, REFUSED, O_TEST_SET},
    {"--echo", NULL, REFUSED, O_TEST_SET},
    {"--citation", "--cite", REFUSED, O_TEST_SET},
    {"--origlang", "-ol", REFUSED, O_TEST_SET},
    {"--subset", NULL, REFUSED, O_TEST_SET},
    {"--detail", "-d", REFUSED, O_TEST_SET},
};
enum { OPTION_COUNT = sizeof options / sizeof *options };

#define CMD "bleu"

/* Finds an option by its short name, its long name, or a unique prefix of a long name (argparse's
 * abbreviations). NULL with a usage message printed when unknown or ambiguous. */
static const option_spec *find_option(const char *name) {
    for (int i = 0; i < OPTION_COUNT; i++)
        if ((options[i].short_name && strcmp(name, options[i].short_name) == 0) || strcmp(name, options[i].long_name) == 0)
            return &options[i];
    const option_spec *found = NULL;
    if (strncmp(name, "--", 2) == 0 && name[2])
        for (int i = 0; i < OPTION_COUNT; i++)
            if (strncmp(options[i].long_name, name, strlen(name)) == 0) {
                if (found) {
                    nmt_cli_usage_error(CMD, "ambiguous option: %s could match %s, %s", name, found->long_name,
                                        options[i].long_name);
                    return NULL;
                }
                found = &options[i];
            }
    if (!found) nmt_cli_usage_error(CMD, "unrecognized argument: %s", name);
    return found;
}

/* argparse takes "-5" as a value, not an option, since no option looks like a number. */
static int is_option(const char *s) { return s[0] == '-' && s[1] && !(s[1] >= '0' && s[1] <= '9') && s[1] != '.'; }

static int parse_long(const char *flag, const char *text, long min, long max, long *out) {
    return nmt_cli_long(CMD, flag, text, min, max, out) < 0 ? -1 : 0;
}

static int set_value(args *a, const option_spec *o, const char *flag, const char *v) {
    long n;
    switch (o->id) {
    case O_NUM_REFS: return parse_long(flag, v, 1, 1000, &a->num_refs);
    case O_ENCODING:
        if (strcasecmp(v, "utf-8") != 0 && strcasecmp(v, "utf8") != 0)
            return nmt_cli_usage_error(CMD, "%s: only utf-8 is supported, got '%s'", flag, v), -1;
        return 0;
    case O_SMOOTH:
        if (nmt_bleu_smooth_parse(v, &a->e.metric.bleu.smooth) < 0) return nmt_cli_usage_error(CMD, "%s: %s", flag, nmt_error()), -1;
        return 0;
    case O_SMOOTH_VALUE: return nmt_cli_double(CMD, flag, v, 0, 1e300, &a->e.metric.bleu.smooth_value) < 0 ? -1 : 0;
    case O_TOKENIZE:
        a->tokenize_given = 1;
        if (nmt_tokenize_parse(v, &a->e.metric.bleu.tokenizer) < 0) return nmt_cli_usage_error(CMD, "%s: %s", flag, nmt_error()), -1;
        return 0;
    case O_CHAR_ORDER:
        if (parse_long(flag, v, 0, NMT_CHRF_MAX_ORDER, &n) < 0) return -1;
        a->e.metric.chrf.char_order = (int)n;
        return 0;
    case O_WORD_ORDER:
        if (parse_long(flag, v, 0, NMT_CHRF_MAX_ORDER, &n) < 0) return -1;
        a->e.metric.chrf.word_order = (int)n;
        return 0;
    case O_BETA:
        if (parse_long(flag, v, 0, 1000000, &n) < 0) return -1;
        a->e.metric.chrf.beta = (int)n;
        return 0;
    case O_CI_N: return parse_long(flag, v, 0, 100000000, &a->e.confidence_n);
    case O_PBS_N: return parse_long(flag, v, 0, 100000000, &a->e.paired_bs_n);
    case O_PAR_N: return parse_long(flag, v, 0, 100000000, &a->e.paired_ar_n);
    case O_JOBS: return parse_long(flag, v, 0, 100000, &n);
    case O_WIDTH:
        if (parse_long(flag, v, 0, 100, &n) < 0) return -1;
        a->e.width = (int)n;
        return 0;
    case O_THREADS: return parse_long(flag, v, 1, 256, &a->threads);
    case O_LANGPAIR:
        if (!strchr(v, '-')) return nmt_cli_usage_error(CMD, "%s: expected SRC-TRG, got '%s'", flag, v), -1;
        a->langpair = v;
        return 0;
    case O_FORMAT:
        if (strcmp(v, "json") == 0) a->e.format = NMT_REPORT_JSON;
        else if (strcmp(v, "text") == 0) a->e.format = NMT_REPORT_TEXT;
        else if (strcmp(v, "latex") == 0) a->e.format = NMT_REPORT_LATEX;
        else return nmt_cli_usage_error(CMD, "%s: choose from json, text, latex (got '%s')", flag, v), -1;
        return 0;
    default: return 0;
    }
}

static void set_flag(args *a, int id) {
    switch (id) {
    case O_SENTENCE: a->e.sentence_level = 1; break;
    case O_LOWERCASE: a->e.metric.bleu.lowercase = 1; break;
    case O_WHITESPACE: a->e.metric.chrf.whitespace = 1; break;
    case O_CHRF_LC: a->e.metric.chrf.lowercase = 1; break;
    case O_EPS: a->e.metric.chrf.eps_smoothing = 1; break;
    case O_TER_CASE: a->e.metric.ter.case_sensitive = 1; break;
    case O_TER_ASIAN: a->e.metric.ter.asian_support = 1; break;
    case O_TER_PUNCT: a->e.metric.ter.no_punct = 1; break;
    case O_TER_NORM: a->e.metric.ter.normalized = 1; break;
    case O_CI: a->e.confidence = 1; break;
    case O_PAR: a->e.paired_ar = 1; break;
    case O_PBS: a->e.paired_bs = 1; break;
    case O_QUIET: a->quiet = 1; break;
    case O_SHORT: a->e.short_signature = 1; break;
    case O_SCORE_ONLY: a->e.score_only = 1; break;
    case O_FORCE: a->force = 1; break;
    default: break; /* --no-color: nmt never colours */
    }
}

static int add_metric(args *a, const char *name) {
    nmt_metric_kind kind;
    if (nmt_metric_parse(name, &kind) < 0) return nmt_cli_usage_error(CMD, "-m: %s", nmt_error()), -1;
    for (int i = 0; i < a->e.nmetrics; i++)
        if (a->e.metrics[i] == kind) return 0; /* sacreBLEU keeps one of each */
    a->e.metrics[a->e.nmetrics++] = kind;
    return 0;
}

/* Parses argv; returns -1 to go on, or the exit code to return. */
static int parse_args(int argc, char **argv, args *a) {
    memset(a, 0, sizeof *a);
    a->e = nmt_evaluate_options_default();
    a->e.nmetrics = 0;
    a->num_refs = 1;
    long cpus = nmt_cli_threads_default();
    a->threads = cpus > 8 ? 8 : cpus;
    a->refs = nmt_calloc((size_t)argc + 1, sizeof *a->refs);
    a->inputs = nmt_calloc((size_t)argc + 1, sizeof *a->inputs);
    if (!a->refs || !a->inputs) return nmt_cli_fail(CMD);
    int metrics_given = 0;
    for (int i = 1; i < argc; i++) {
        char *arg = argv[i];
        if (!is_option(arg)) {
            a->refs[a->nrefs_files++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            while (++i < argc) a->refs[a->nrefs_files++] = argv[i];
            break;
        }
        char name[64];
        const char *inline_value = NULL, *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
        if (eq) inline_value = eq + 1;
        const option_spec *o = find_option(name);
        if (!o) return NMT_EXIT_USAGE;
        if (o->kind == REFUSED)
            return nmt_cli_usage_error(CMD, "%s: test sets (downloads) are not supported; give reference files", name);
        if (o->id == O_HELP) {
            fputs(usage_text, stdout);
            return NMT_EXIT_OK;
        }
        if (o->id == O_VERSION) {
            printf("nmt %s\n", NMT_VERSION);
            return NMT_EXIT_OK;
        }
        if (o->kind == FLAG) {
            if (inline_value) return nmt_cli_usage_error(CMD, "%s takes no value", name);
            set_flag(a, o->id);
        } else if (o->kind == VALUE) {
            const char *v = inline_value;
            if (!v) {
                if (i + 1 >= argc || is_option(argv[i + 1])) return nmt_cli_usage_error(CMD, "%s expects a value", name);
                v = argv[++i];
            }
            if (set_value(a, o, name, v) < 0) return NMT_EXIT_USAGE;
        } else { /* LIST: -i takes zero or more values, -m one or more */
            int count = 0;
            if (o->id == O_INPUT) a->has_input = 1;
            if (o->id == O_METRICS && !metrics_given) {
                metrics_given = 1;
                a->e.nmetrics = 0;
            }
            if (inline_value) {
                count++;
                if (o->id == O_INPUT) a->inputs[a->ninputs++] = inline_value;
                else if (add_metric(a, inline_value) < 0) return NMT_EXIT_USAGE;
            }
            while (i + 1 < argc && !is_option(argv[i + 1])) {
                count++;
                if (o->id == O_INPUT) a->inputs[a->ninputs++] = argv[++i];
                else if (add_metric(a, argv[++i]) < 0) return NMT_EXIT_USAGE;
            }
            if (o->id == O_METRICS && count == 0) return nmt_cli_usage_error(CMD, "%s expects at least one metric", name);
        }
    }
    if (!metrics_given) a->e.metrics[a->e.nmetrics++] = NMT_METRIC_BLEU;
    if (a->has_input && a->ninputs == 0) return nmt_cli_usage_error(CMD, "-i expects at least one hypothesis file");
    if (a->e.paired_bs && a->e.paired_ar)
        return nmt_cli_usage_error(CMD, "--paired-bs and --paired-ar cannot be used together");
    return -1;
}

/* --- running --------------------------------------------------------------------------------- */

static int print_and_clear(void *ctx, nmt_strbuf *out) {
    (void)ctx;
    if (out->len && fwrite(out->data, 1, out->len, stdout) != out->len)
        return nmt_error_set("<stdout>: write failed: %s", strerror(errno));
    out->len = 0;
    return 0;
}

/* sacreBLEU's warning for BLEU input that looks tokenized. */
static void warn_tokenized(const args *a, const nmt_segments *hyps) {
    long count = nmt_segments_tokenized_periods(hyps);
    if (count >= 100 && !a->quiet)
        fprintf(stderr, "nmt bleu: warning: %ld lines end in a tokenized period (' .'); it looks like you forgot to "
                        "detokenize your test data, which may hurt your score (--force silences this)\n",
                count);
}

/* Checks what the flags cannot; 0 to go on. The target language picks the tokenizer when -tok is
 * not given, as in sacreBLEU. */
static int check_args(args *a) {
    const char *env_format = getenv("SACREBLEU_FORMAT");
    if (env_format) {
        if (strcasecmp(env_format, "json") == 0) a->e.format = NMT_REPORT_JSON;
        else if (strcasecmp(env_format, "text") == 0) a->e.format = NMT_REPORT_TEXT;
        else if (strcasecmp(env_format, "latex") == 0) a->e.format = NMT_REPORT_LATEX;
    }
    if (a->e.sentence_level && a->e.nmetrics > 1)
        return nmt_error_set("only one metric can be used in sentence-level mode");
    if (a->nrefs_files == 0) return nmt_error_set("no reference files given (give them before -i)");
    if (a->num_refs != 1 && a->nrefs_files > 1)
        return nmt_error_set("--num-refs reads several tab-separated references from one file; it cannot be "
                             "combined with several reference files");
    if (a->langpair) {
        const char *target = strchr(a->langpair, '-') + 1;
        if (!a->tokenize_given && strcmp(target, "zh") == 0) a->e.metric.bleu.tokenizer = NMT_TOKENIZE_ZH;
        else if (!a->tokenize_given && (strcmp(target, "ja") == 0 || strcmp(target, "ko") == 0))
            return nmt_error_set("the default tokenizer for '%s' is %s-mecab, which needs MeCab; give -tok", target,
                                 target);
        else if (a->tokenize_given && strcmp(target, "zh") == 0 && a->e.metric.bleu.tokenizer != NMT_TOKENIZE_ZH &&
                 !a->quiet)
            fprintf(stderr, "nmt bleu: warning: consider the 'zh' tokenizer for Chinese\n");
    }
    return 0;
}

/* The files read, and the streams and names that point into them. */
typedef struct inputs {
    nmt_segments_file *files; /* [nrefs_files + ninputs + 1] */
    int nfiles;
    const nmt_segments **refs, **systems;
    char **names;
    int nrefs, nsys;
} inputs;

/* Reads the -i files (each system once: a repeated baseline is dropped from a paired test) or the
 * tab-separated systems of standard input, and names the systems as sacreBLEU does. */
static int read_systems(const args *a, inputs *in) {
    int paired = a->e.paired_bs || a->e.paired_ar, first = in->nfiles;
    if (a->has_input) {
        if (!(in->names = nmt_calloc((size_t)a->ninputs + 1, sizeof *in->names))) return -1;
        for (int f = 0; f < a->ninputs; f++) {
            int duplicate = 0;
            for (int g = 0; g < in->nsys; g++) duplicate |= strcmp(in->names[g], a->inputs[f]) == 0;
            if (duplicate) {
                if (paired && strcmp(in->names[0], a->inputs[f]) == 0) {
                    if (!a->quiet) fprintf(stderr, "nmt bleu: ignoring '%s' as it was also given as the baseline\n", a->inputs[f]);
                    continue;
                }
                return nmt_error_set("'%s' already names a system; give each system a different file name",
                                     a->inputs[f]);
            }
            if (nmt_segments_file_read(&in->files[in->nfiles], a->inputs[f], a->inputs[f], NMT_SEGMENTS_LINES, 1) < 0)
                return -1;
            in->nfiles++;
            if (!(in->names[in->nsys++] = nmt_strdup(a->inputs[f]))) return -1;
        }
        if (paired && in->nsys > 0) {
            size_t n = strlen(in->names[0]) + 11;
            char *renamed = nmt_malloc(n);
            if (!renamed) return -1;
            snprintf(renamed, n, "Baseline: %s", in->names[0]);
            free(in->names[0]);
            in->names[0] = renamed;
        }
    } else {
        if (nmt_segments_file_read(&in->files[in->nfiles++], "/dev/stdin", "<stdin>", NMT_SEGMENTS_STDIN, 1) < 0) {
            in->nfiles--;
            return -1;
        }
        in->nsys = in->files[first].count;
        if (!(in->names = nmt_calloc((size_t)in->nsys, sizeof *in->names))) return -1;
        for (int s = 0; s < in->nsys; s++) {
            char name[48];
            if (paired) snprintf(name, sizeof name, s == 0 ? "Baseline" : "System %d", s);
            else snprintf(name, sizeof name, "System %d", s + 1);
            if (!(in->names[s] = nmt_strdup(name))) return -1;
        }
    }
    if (!(in->systems = nmt_calloc((size_t)in->nsys, sizeof *in->systems))) return -1;
    for (int s = 0; s < in->nsys; s++)
        in->systems[s] = a->has_input ? &in->files[first + s].streams[0] : &in->files[first].streams[s];
    return 0;
}

static int read_inputs(const args *a, inputs *in) {
    in->files = nmt_calloc((size_t)a->nrefs_files + (size_t)a->ninputs + 1, sizeof *in->files);
    in->nrefs = a->num_refs > 1 ? (int)a->num_refs : a->nrefs_files;
    in->refs = nmt_calloc((size_t)in->nrefs, sizeof *in->refs);
    if (!in->files || !in->refs) return -1;
    int r = 0;
    for (int f = 0; f < a->nrefs_files; f++) {
        nmt_segments_file *file = &in->files[in->nfiles];
        if (nmt_segments_file_read(file, a->refs[f], a->refs[f], a->num_refs > 1 ? NMT_SEGMENTS_COLUMNS : NMT_SEGMENTS_LINES,
                                   a->num_refs) < 0)
            return -1;
        in->nfiles++;
        for (int k = 0; k < file->count; k++) in->refs[r++] = &file->streams[k];
    }
    return read_systems(a, in);
}

static void inputs_free(inputs *in) {
    for (int f = 0; f < in->nfiles; f++) nmt_segments_file_free(&in->files[f]);
    for (int s = 0; in->names && s < in->nsys; s++) free(in->names[s]);
    free(in->files);
    free(in->refs);
    free(in->systems);
    free(in->names);
}

/* Everything after the arguments; returns an exit code. */
static int run(args *a) {
    inputs in = {0};
    nmt_strbuf out = {0};
    if (check_args(a) < 0) return nmt_cli_usage_error(CMD, "%s", nmt_error()); /* arguments that do not go together */
    int ok = read_inputs(a, &in) == 0 &&
             nmt_evaluate_check(&a->e, in.systems, in.nsys, in.refs, in.nrefs) == 0;
    if (ok && !a->e.sentence_level && !a->force)
        for (int m = 0; m < a->e.nmetrics; m++)
            if (a->e.metrics[m] == NMT_METRIC_BLEU)
                for (int s = 0; s < in.nsys; s++) warn_tokenized(a, in.systems[s]);
    a->e.seed = getenv("SACREBLEU_SEED");
    ok = ok && nmt_pool_set_threads((int)a->threads) == 0 &&
         nmt_evaluate_report(&a->e, in.systems, (const char *const *)in.names, in.nsys, in.refs, in.nrefs, &out,
                             print_and_clear, NULL) == 0 &&
         print_and_clear(NULL, &out) == 0;
    if (ok && fflush(stdout) != 0) {
        nmt_error_set("<stdout>: write failed: %s", strerror(errno));
        ok = 0;
    }
    inputs_free(&in);
    nmt_strbuf_free(&out);
    return ok ? NMT_EXIT_OK : nmt_cli_fail(CMD);
}

int nmt_cmd_bleu(int argc, char **argv) {
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc < 0) rc = run(&a);
    free(a.refs);
    free(a.inputs);
    return rc;
}
