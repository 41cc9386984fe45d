/* nmt bleu: BLEU, chrF and TER with sacreBLEU 2.x's flags, numbers and output.
 *
 * The flags are sacreBLEU's, parsed the way its argparse parser does (lists after -i and -m, long
 * options by unique prefix, --flag=value). Files are read whole, split on '\n' only and stripped of
 * trailing whitespace; standard input also ends lines at '\r' and holds several systems separated
 * by tabs, as in sacreBLEU. The work is done by the library (metric.h, report.h); this file decides
 * what to compute and prints the report.
 */
#include "cli.h"

#include "base/input.h"
#include "base/io.h"
#include "eval/metric.h"
#include "eval/report.h"
#include "base/utf8.h"
#include "base/util.h"
#include "nmt/version.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
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
    nmt_metric_kind metrics[3];
    int nmetrics;
    nmt_metric_options opt;
    int tokenize_given;
    const char *langpair;
    long num_refs;
    int sentence_level, confidence, paired_bs, paired_ar;
    long confidence_n, paired_bs_n, paired_ar_n;
    int score_only, short_sig, quiet, force;
    long width, threads;
    nmt_report_format format;
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
        if (nmt_bleu_smooth_parse(v, &a->opt.bleu.smooth) < 0) return nmt_cli_usage_error(CMD, "%s: %s", flag, nmt_error()), -1;
        return 0;
    case O_SMOOTH_VALUE: return nmt_cli_double(CMD, flag, v, 0, 1e300, &a->opt.bleu.smooth_value) < 0 ? -1 : 0;
    case O_TOKENIZE:
        a->tokenize_given = 1;
        if (nmt_tokenize_parse(v, &a->opt.bleu.tokenizer) < 0) return nmt_cli_usage_error(CMD, "%s: %s", flag, nmt_error()), -1;
        return 0;
    case O_CHAR_ORDER:
        if (parse_long(flag, v, 0, NMT_CHRF_MAX_ORDER, &n) < 0) return -1;
        a->opt.chrf.char_order = (int)n;
        return 0;
    case O_WORD_ORDER:
        if (parse_long(flag, v, 0, NMT_CHRF_MAX_ORDER, &n) < 0) return -1;
        a->opt.chrf.word_order = (int)n;
        return 0;
    case O_BETA:
        if (parse_long(flag, v, 0, 1000000, &n) < 0) return -1;
        a->opt.chrf.beta = (int)n;
        return 0;
    case O_CI_N: return parse_long(flag, v, 0, 100000000, &a->confidence_n);
    case O_PBS_N: return parse_long(flag, v, 0, 100000000, &a->paired_bs_n);
    case O_PAR_N: return parse_long(flag, v, 0, 100000000, &a->paired_ar_n);
    case O_JOBS: return parse_long(flag, v, 0, 100000, &n);
    case O_WIDTH: return parse_long(flag, v, 0, 100, &a->width);
    case O_THREADS: return parse_long(flag, v, 1, 256, &a->threads);
    case O_LANGPAIR:
        if (!strchr(v, '-')) return nmt_cli_usage_error(CMD, "%s: expected SRC-TRG, got '%s'", flag, v), -1;
        a->langpair = v;
        return 0;
    case O_FORMAT:
        if (strcmp(v, "json") == 0) a->format = NMT_REPORT_JSON;
        else if (strcmp(v, "text") == 0) a->format = NMT_REPORT_TEXT;
        else if (strcmp(v, "latex") == 0) a->format = NMT_REPORT_LATEX;
        else return nmt_cli_usage_error(CMD, "%s: choose from json, text, latex (got '%s')", flag, v), -1;
        return 0;
    default: return 0;
    }
}

static void set_flag(args *a, int id) {
    switch (id) {
    case O_SENTENCE: a->sentence_level = 1; break;
    case O_LOWERCASE: a->opt.bleu.lowercase = 1; break;
    case O_WHITESPACE: a->opt.chrf.whitespace = 1; break;
    case O_CHRF_LC: a->opt.chrf.lowercase = 1; break;
    case O_EPS: a->opt.chrf.eps_smoothing = 1; break;
    case O_TER_CASE: a->opt.ter.case_sensitive = 1; break;
    case O_TER_ASIAN: a->opt.ter.asian_support = 1; break;
    case O_TER_PUNCT: a->opt.ter.no_punct = 1; break;
    case O_TER_NORM: a->opt.ter.normalized = 1; break;
    case O_CI: a->confidence = 1; break;
    case O_PAR: a->paired_ar = 1; break;
    case O_PBS: a->paired_bs = 1; break;
    case O_QUIET: a->quiet = 1; break;
    case O_SHORT: a->short_sig = 1; break;
    case O_SCORE_ONLY: a->score_only = 1; break;
    case O_FORCE: a->force = 1; break;
    default: break; /* --no-color: nmt never colours */
    }
}

static int add_metric(args *a, const char *name) {
    nmt_metric_kind kind;
    if (nmt_metric_parse(name, &kind) < 0) return nmt_cli_usage_error(CMD, "-m: %s", nmt_error()), -1;
    for (int i = 0; i < a->nmetrics; i++)
        if (a->metrics[i] == kind) return 0; /* sacreBLEU keeps one of each */
    a->metrics[a->nmetrics++] = kind;
    return 0;
}

/* Parses argv; returns -1 to go on, or the exit code to return. */
static int parse_args(int argc, char **argv, args *a) {
    memset(a, 0, sizeof *a);
    nmt_metric_options_init(&a->opt);
    a->num_refs = 1;
    a->confidence_n = 1000;
    a->paired_bs_n = 1000;
    a->paired_ar_n = 10000;
    a->width = 1;
    long cpus = nmt_cli_threads_default();
    a->threads = cpus > 8 ? 8 : cpus;
    a->format = NMT_REPORT_JSON;
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
                a->nmetrics = 0;
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
    if (!metrics_given) a->metrics[a->nmetrics++] = NMT_METRIC_BLEU;
    if (a->has_input && a->ninputs == 0) return nmt_cli_usage_error(CMD, "-i expects at least one hypothesis file");
    if (a->paired_bs && a->paired_ar)
        return nmt_cli_usage_error(CMD, "--paired-bs and --paired-ar cannot be used together");
    return -1;
}

/* --- reading ------------------------------------------------------------------------------- */

/* One stream of segments: pointers into a buffer that some `text` owns. */
typedef struct stream {
    const char **lines;
    size_t *lens;
    size_t count, cap;
} stream;

static int stream_push(stream *s, const char *line, size_t len) {
    if (s->count == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        const char **lines = nmt_realloc(s->lines, cap * sizeof *lines);
        if (!lines) return -1;
        s->lines = lines;
        size_t *lens = nmt_realloc(s->lens, cap * sizeof *lens);
        if (!lens) return -1;
        s->lens = lens;
        s->cap = cap;
    }
    s->lines[s->count] = line;
    s->lens[s->count++] = len;
    return 0;
}

static void stream_free(stream *s) {
    free(s->lines);
    free(s->lens);
    memset(s, 0, sizeof *s);
}

/* Reads a whole file: a regular file in one read of its size, anything else (a pipe) in chunks; a
 * gzip file (by its magic bytes) decompressed. */
static int slurp(const char *path, char **data, size_t *size) {
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0) close(fd);
        return nmt_read_file(path, data, size);
    }
    *data = nmt_malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (*data && got < (size_t)st.st_size) {
        ssize_t n = read(fd, *data + got, (size_t)st.st_size - got);
        if (n <= 0) {
            nmt_error_set("%s: read failed: %s", path, n < 0 ? strerror(errno) : "file shrank");
            free(*data);
            *data = NULL;
            break;
        }
        got += (size_t)n;
    }
    close(fd);
    if (!*data) return -1;
    (*data)[got] = '\0';
    *size = got;
    if (got >= 2 && (unsigned char)(*data)[0] == 0x1f && (unsigned char)(*data)[1] == 0x8b) {
        free(*data);
        return nmt_input_read_all(path, data, size);
    }
    return 0;
}

/* Reads a whole file (or standard input for "/dev/stdin"), checks UTF-8 line by line, and calls
 * `line` for each line, split on '\n' (and on '\r' too when universal_newlines) without its
 * trailing whitespace. */
typedef int (*line_fn)(void *ctx, char *line, size_t len, long number);
static int read_lines(const char *path, const char *name, int universal_newlines, char **owned, line_fn line, void *ctx) {
    size_t size;
    if (slurp(path, owned, &size) < 0) return -1;
    char *data = *owned;
    long number = 0;
    size_t start = 0;
    while (start < size) {
        const char *nl = memchr(data + start, '\n', size - start);
        size_t end = nl ? (size_t)(nl - data) : size;
        if (universal_newlines) {
            const char *cr = memchr(data + start, '\r', end - start);
            if (cr) end = (size_t)(cr - data);
        }
        size_t next = end + 1;
        if (universal_newlines && end < size && data[end] == '\r' && end + 1 < size && data[end + 1] == '\n') next++;
        number++;
        long bad = nmt_utf8_invalid_at(data + start, end - start);
        if (bad >= 0) return nmt_error_set("%s:%ld: invalid UTF-8 at byte %ld", name, number, bad + 1);
        data[end < size ? end : size] = '\0';
        size_t len = nmt_tokenize_rstrip(data + start, end - start);
        data[start + len] = '\0';
        if (line(ctx, data + start, len, number) < 0) return -1;
        start = next;
    }
    return 0;
}

typedef struct ref_reader {
    stream *streams; /* [num_refs] */
    long num_refs;
    const char *name;
} ref_reader;

/* A reference line: one segment, or num_refs tab-separated ones (split at most num_refs - 1 times). */
static int ref_line(void *ctx, char *line, size_t len, long number) {
    ref_reader *r = ctx;
    if (r->num_refs == 1) return stream_push(&r->streams[0], line, len);
    char *p = line, *end = line + len;
    for (long k = 0; k < r->num_refs; k++) {
        char *tab = k + 1 < r->num_refs ? memchr(p, '\t', (size_t)(end - p)) : NULL;
        if (!tab && k + 1 < r->num_refs)
            return nmt_error_set("%s:%ld: expected %ld tab-separated references, found %ld", r->name, number, r->num_refs,
                                 k + 1);
        char *stop = tab ? tab : end;
        *stop = '\0';
        if (stream_push(&r->streams[k], p, (size_t)(stop - p)) < 0) return -1;
        p = stop + 1;
    }
    return 0;
}

static int hyp_line(void *ctx, char *line, size_t len, long number) {
    (void)number;
    return stream_push(ctx, line, len);
}

typedef struct stdin_reader {
    stream *systems; /* grows with the first line */
    int count;
} stdin_reader;

/* A line of standard input: tab-separated systems; the first line fixes their number. sacreBLEU
 * strips each field after the first line, and only the whole first line. */
static int stdin_line(void *ctx, char *line, size_t len, long number) {
    stdin_reader *r = ctx;
    int fields = 1;
    for (size_t i = 0; i < len; i++) fields += line[i] == '\t';
    if (number == 1) {
        r->systems = nmt_calloc((size_t)fields, sizeof *r->systems);
        if (!r->systems) return -1;
        r->count = fields;
    } else if (fields != r->count) {
        return nmt_error_set("<stdin>:%ld: the number of tab-separated systems differs from the first line's (%d)",
                             number, r->count);
    }
    char *p = line;
    for (int k = 0; k < fields; k++) {
        char *tab = memchr(p, '\t', len - (size_t)(p - line));
        char *stop = tab ? tab : line + len;
        *stop = '\0';
        size_t n = (size_t)(stop - p);
        if (number > 1) n = nmt_tokenize_rstrip(p, n);
        if (stream_push(&r->systems[k], p, n) < 0) return -1;
        p = stop + 1;
    }
    return 0;
}

/* --- scoring ------------------------------------------------------------------------------- */

/* One system under one metric: its corpus score and, when kept, its segments' statistics (n rows
 * of k), which the resampling tests and sentence-level scores need. */
typedef struct scored {
    double *stats;
    double score;
    char verbose[160];
} scored;

/* A share of the segments [from, to), scored by its own metric instance into rows[from*k, to*k). */
typedef struct worker {
    nmt_metric *metric;
    const stream *hyps, *refs;
    int nrefs;
    size_t from, to;
    double *rows;
    int failed;
    char error[1024];
    pthread_t thread;
} worker;

static void *score_share(void *arg) {
    worker *w = arg;
    int k = nmt_metric_stat_count(w->metric);
    const char *lines[64];
    size_t lens[64];
    const char **ref_lines = w->nrefs <= 64 ? lines : nmt_malloc((size_t)w->nrefs * sizeof *ref_lines);
    size_t *ref_lens = w->nrefs <= 64 ? lens : nmt_malloc((size_t)w->nrefs * sizeof *ref_lens);
    w->failed = !ref_lines || !ref_lens;
    for (size_t i = w->from; i < w->to && !w->failed; i++) {
        for (int r = 0; r < w->nrefs; r++) {
            ref_lines[r] = w->refs[r].lines[i];
            ref_lens[r] = w->refs[r].lens[i];
        }
        if (nmt_metric_segment(w->metric, w->hyps->lines[i], w->hyps->lens[i], ref_lines, ref_lens, w->nrefs,
                               w->rows + i * (size_t)k) < 0) {
            nmt_error_prefix("segment %zu", i + 1);
            w->failed = 1;
        }
    }
    if (w->failed) snprintf(w->error, sizeof w->error, "%s", nmt_error());
    if (ref_lines != lines) free(ref_lines);
    if (ref_lens != lens) free(ref_lens);
    return NULL;
}

/* Scores every segment, on `threads` threads for a large corpus (each with its own instance of the
 * metric), and sums the statistics in segment order. */
static int score_system(nmt_metric *metric, const nmt_metric_options *options, const stream *hyps, const stream *refs,
                        int nrefs, int keep, int threads, scored *out) {
    int k = nmt_metric_stat_count(metric);
    size_t n = hyps->count;
    if (n < 2000) threads = 1; /* not worth a thread */
    worker *workers = nmt_calloc((size_t)threads, sizeof *workers);
    out->stats = nmt_malloc((n ? n : 1) * (size_t)k * sizeof *out->stats);
    double *sum = nmt_calloc((size_t)k, sizeof *sum);
    int rc = -1, started = 0;
    if (!workers || !out->stats || !sum) goto done;
    for (int t = 0; t < threads; t++) {
        worker *w = &workers[t];
        *w = (worker){.hyps = hyps, .refs = refs, .nrefs = nrefs, .rows = out->stats,
                      .from = n * (size_t)t / (size_t)threads, .to = n * (size_t)(t + 1) / (size_t)threads};
        w->metric = t == 0 ? metric : nmt_metric_new(nmt_metric_kind_of(metric), options);
        if (!w->metric) goto done;
    }
    for (started = 1; started < threads; started++)
        if (pthread_create(&workers[started].thread, NULL, score_share, &workers[started]) != 0) {
            nmt_error_set("cannot start a scoring thread");
            break;
        }
    score_share(&workers[0]);
    for (int t = 1; t < started; t++) pthread_join(workers[t].thread, NULL);
    if (started < threads) goto done;
    for (int t = 0; t < threads; t++)
        if (workers[t].failed) {
            nmt_error_set("%s", workers[t].error);
            goto done;
        }
    nmt_metric_sum(out->stats, n, k, sum);
    out->score = nmt_metric_compute(metric, sum, NMT_SCORE_PYTHON, out->verbose, sizeof out->verbose);
    rc = 0;
done:
    for (int t = 1; workers && t < threads; t++) nmt_metric_free(workers[t].metric);
    free(workers);
    if (!keep || rc < 0) {
        free(out->stats);
        out->stats = NULL;
    }
    free(sum);
    return rc;
}

/* sacreBLEU's warning for BLEU input that looks tokenized. */
static void warn_tokenized(const args *a, const stream *hyps) {
    long count = 0;
    for (size_t i = 0; i < hyps->count; i++)
        count += hyps->lens[i] >= 2 && memcmp(hyps->lines[i] + hyps->lens[i] - 2, " .", 2) == 0;
    if (count >= 100 && !a->quiet)
        fprintf(stderr, "nmt bleu: warning: %ld lines end in a tokenized period (' .'); it looks like you forgot to "
                        "detokenize your test data, which may hurt your score (--force silences this)\n",
                count);
}

/* The resampling seed from $SACREBLEU_SEED (default 12345); `text` is how the signature shows it. */
static int resampling_seed(nmt_metric_seed *seed, char *text, size_t size) {
    const char *env = getenv("SACREBLEU_SEED");
    if (!env) env = "12345";
    if (strcasecmp(env, "none") == 0) {
        seed->random = 1;
        seed->value = 0;
        snprintf(text, size, "none");
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(env, &end, 10);
    if (errno || end == env || *end || env[0] == '-')
        return nmt_error_set("SACREBLEU_SEED: expected a non-negative integer or 'none', got '%s'", env);
    seed->random = 0;
    seed->value = v;
    snprintf(text, size, "%s", env);
    return 0;
}

static size_t signature_of(const nmt_metric *metric, const nmt_score_signature *global, char *out, size_t size) {
    nmt_score_field fields[NMT_METRIC_MAX_FIELDS];
    int count = nmt_metric_signature_fields(metric, fields);
    return nmt_score_signature_format(global, fields, count, out, size);
}

static int print_and_clear(nmt_tokenize_buf *out) {
    if (out->len && fwrite(out->data, 1, out->len, stdout) != out->len)
        return nmt_error_set("<stdout>: write failed: %s", strerror(errno));
    out->len = 0;
    return 0;
}

static int run_sentence_level(const args *a, nmt_metric *metric, const stream *hyps, const stream *refs, int nrefs,
                              nmt_tokenize_buf *out) {
    scored s = {0};
    if (score_system(metric, &a->opt, hyps, refs, nrefs, 1, (int)a->threads, &s) < 0) return -1;
    char sig[512];
    nmt_score_signature global = {.nrefs = nrefs, .short_form = a->short_sig};
    signature_of(metric, &global, sig, sizeof sig);
    int k = nmt_metric_stat_count(metric), rc = 0;
    for (size_t i = 0; i < hyps->count && rc == 0; i++) {
        char verbose[160];
        nmt_report_score score = {.name = nmt_metric_name(metric), .verbose = verbose, .signature = sig};
        score.score = nmt_metric_compute(metric, s.stats + i * (size_t)k, NMT_SCORE_PYTHON, verbose, sizeof verbose);
        rc = nmt_report_score_format(&score, (int)a->width, a->score_only, 0, out);
        if (rc == 0) rc = nmt_tokenize_buf_reserve(out, out->len + 2);
        if (rc == 0) out->data[out->len++] = '\n';
        if (rc == 0 && out->len > (1 << 16)) rc = print_and_clear(out);
    }
    free(s.stats);
    return rc;
}

static int run_single(const args *a, nmt_metric **metrics, const stream *hyps, const stream *refs, int nrefs,
                      nmt_tokenize_buf *out) {
    char *results[3] = {0};
    int rc = -1, bootstrap = a->confidence && a->confidence_n > 1;
    nmt_metric_seed seed;
    char seed_text[64];
    if (bootstrap && resampling_seed(&seed, seed_text, sizeof seed_text) < 0) return -1;
    for (int m = 0; m < a->nmetrics; m++) {
        scored s = {0};
        if (nmt_metric_kind_of(metrics[m]) == NMT_METRIC_BLEU && !a->force) warn_tokenized(a, hyps);
        if (score_system(metrics[m], &a->opt, hyps, refs, nrefs, bootstrap, (int)a->threads, &s) < 0) goto done;
        nmt_report_score score = {.name = nmt_metric_name(metrics[m]), .score = s.score, .verbose = s.verbose};
        if (bootstrap) {
            double *scores = nmt_malloc((size_t)a->confidence_n * sizeof *scores);
            const double *stats[1] = {s.stats};
            if (!scores || nmt_metric_bootstrap(metrics[m], stats, 1, hyps->count, &seed, a->confidence_n, &scores) < 0) {
                free(scores);
                free(s.stats);
                goto done;
            }
            score.has_ci = 1;
            score.ci = nmt_metric_ci(scores, a->confidence_n, 0, &score.mean);
            free(scores);
        }
        free(s.stats);
        char sig[512];
        nmt_score_signature global = {.nrefs = nrefs,
                                      .bootstrap = bootstrap ? a->confidence_n : 0,
                                      .seed = bootstrap ? seed_text : NULL,
                                      .short_form = a->short_sig && a->format != NMT_REPORT_JSON};
        signature_of(metrics[m], &global, sig, sizeof sig);
        score.signature = sig;
        nmt_tokenize_buf line = {0};
        if (nmt_report_score_format(&score, (int)a->width, a->score_only, a->format == NMT_REPORT_JSON, &line) < 0) {
            nmt_tokenize_buf_free(&line);
            goto done;
        }
        results[m] = line.data;
    }
    rc = nmt_report_single((const char *const *)results, a->nmetrics, a->format == NMT_REPORT_JSON, out);
done:
    for (int m = 0; m < 3; m++) free(results[m]);
    return rc;
}

/* Several systems: a table of scores, or of a paired test against the first system. */
static int run_multi(const args *a, nmt_metric **metrics, const stream *systems, const char *const *names, int nsys,
                     const stream *refs, int nrefs, nmt_tokenize_buf *out) {
    int paired = a->paired_bs || a->paired_ar, nm = a->nmetrics, rc = -1;
    long samples = a->paired_bs ? (a->paired_bs_n > 0 ? a->paired_bs_n : 1000) : (a->paired_ar_n > 0 ? a->paired_ar_n : 10000);
    nmt_metric_seed seed = {0};
    char seed_text[64] = "";
    nmt_report_cell *cells = nmt_calloc((size_t)nsys * (size_t)nm, sizeof *cells);
    scored *base = nmt_calloc((size_t)nm, sizeof *base);
    char (*sigs)[512] = nmt_calloc((size_t)nm, sizeof *sigs);
    const char *sig_ptrs[3], *metric_names[3];
    if (!cells || !base || !sigs) goto done;
    if (paired) {
        if (resampling_seed(&seed, seed_text, sizeof seed_text) < 0) goto done;
        if (!seed.random) snprintf(seed_text, sizeof seed_text, "%llu", (unsigned long long)seed.value);
    }
    /* sacreBLEU's paired tests seed with None (fresh entropy) when the seed is 0 */
    nmt_metric_seed test_seed = seed;
    if (!seed.random && seed.value == 0) test_seed.random = 1;
    for (int m = 0; m < nm; m++) {
        metric_names[m] = nmt_metric_name(metrics[m]);
        sig_ptrs[m] = sigs[m];
        nmt_score_signature global = {.nrefs = nrefs, .short_form = a->short_sig};
        if (paired) {
            global.bootstrap = a->paired_bs ? samples : 0;
            global.trials = a->paired_ar ? samples : 0;
            global.seed = seed_text;
        }
        signature_of(metrics[m], &global, sigs[m], sizeof sigs[m]);
        if (nmt_metric_kind_of(metrics[m]) == NMT_METRIC_BLEU && !a->force)
            for (int s = 0; s < nsys; s++) warn_tokenized(a, &systems[s]);
        if (score_system(metrics[m], &a->opt, &systems[0], refs, nrefs, paired, (int)a->threads, &base[m]) < 0) goto done;
        nmt_report_cell *cell = &cells[m];
        cell->score = base[m].score;
        if (paired && a->paired_bs) {
            double *scores = nmt_malloc((size_t)samples * sizeof *scores);
            const double *stats[1] = {base[m].stats};
            if (!scores || nmt_metric_bootstrap(metrics[m], stats, 1, systems[0].count, &seed, samples, &scores) < 0) {
                free(scores);
                goto done;
            }
            cell->has_ci = 1;
            cell->ci = nmt_metric_ci(scores, samples, 1, &cell->mean);
            free(scores);
        }
    }
    for (int s = 1; s < nsys; s++)
        for (int m = 0; m < nm; m++) {
            scored sys = {0};
            nmt_report_cell *cell = &cells[s * nm + m];
            if (score_system(metrics[m], &a->opt, &systems[s], refs, nrefs, paired, (int)a->threads, &sys) < 0) {
                free(sys.stats);
                goto done;
            }
            cell->score = sys.score;
            int failed = 0;
            if (a->paired_bs) {
                cell->has_p = cell->has_ci = 1;
                failed = nmt_metric_paired_bootstrap(metrics[m], base[m].stats, sys.stats, systems[0].count, &test_seed,
                                                     samples, base[m].score, sys.score, &cell->p_value, &cell->mean,
                                                     &cell->ci) < 0;
            } else if (a->paired_ar) {
                cell->has_p = 1;
                failed = nmt_metric_paired_randomization(metrics[m], base[m].stats, sys.stats, systems[0].count,
                                                         &test_seed, samples, base[m].score, sys.score,
                                                         &cell->p_value) < 0;
            }
            free(sys.stats);
            if (failed) goto done;
        }
    nmt_report_table table = {
        .systems = nsys,
        .metrics = nm,
        .system_names = names,
        .metric_names = metric_names,
        .signatures = sig_ptrs,
        .cells = cells,
        .test = a->paired_bs ? NMT_REPORT_PAIRED_BOOTSTRAP : a->paired_ar ? NMT_REPORT_PAIRED_RANDOMIZATION : NMT_REPORT_NO_TEST,
        .samples = a->paired_bs ? a->paired_bs_n : a->paired_ar_n,
    };
    rc = nmt_report_table_format(&table, a->format, (int)a->width, out);
done:
    if (base)
        for (int m = 0; m < nm; m++) free(base[m].stats);
    free(base);
    free(cells);
    free(sigs);
    return rc;
}

/* Everything after the arguments; returns an exit code. */
static int run(args *a) {
    int exit_code = NMT_EXIT_FAILURE, nsys = 0;
    long nrefs = 0;
    stream *refs = NULL, *systems = NULL;
    char **owned = NULL, **names = NULL;
    int nowned = 0;
    nmt_metric *metrics[3] = {0};
    nmt_tokenize_buf out = {0};

    const char *env_format = getenv("SACREBLEU_FORMAT");
    if (env_format) {
        if (strcasecmp(env_format, "json") == 0) a->format = NMT_REPORT_JSON;
        else if (strcasecmp(env_format, "text") == 0) a->format = NMT_REPORT_TEXT;
        else if (strcasecmp(env_format, "latex") == 0) a->format = NMT_REPORT_LATEX;
    }
    if (a->sentence_level && a->nmetrics > 1) {
        fprintf(stderr, "nmt bleu: only one metric can be used in sentence-level mode\n");
        goto cleanup;
    }
    if (a->nrefs_files == 0) {
        fprintf(stderr, "nmt bleu: no reference files given (give them before -i)\n");
        goto cleanup;
    }
    if (a->num_refs != 1 && a->nrefs_files > 1) {
        fprintf(stderr, "nmt bleu: --num-refs reads several tab-separated references from one file; it cannot be "
                        "combined with several reference files\n");
        goto cleanup;
    }
    /* The target language picks the tokenizer when -tok is not given, as in sacreBLEU. */
    if (a->langpair) {
        const char *target = strchr(a->langpair, '-') + 1;
        if (!a->tokenize_given && strcmp(target, "zh") == 0) a->opt.bleu.tokenizer = NMT_TOKENIZE_ZH;
        else if (!a->tokenize_given && (strcmp(target, "ja") == 0 || strcmp(target, "ko") == 0)) {
            fprintf(stderr, "nmt bleu: the default tokenizer for '%s' is %s-mecab, which needs MeCab; give -tok\n",
                    target, target);
            goto cleanup;
        } else if (a->tokenize_given && strcmp(target, "zh") == 0 && a->opt.bleu.tokenizer != NMT_TOKENIZE_ZH && !a->quiet)
            fprintf(stderr, "nmt bleu: warning: consider the 'zh' tokenizer for Chinese\n");
    }
    owned = nmt_calloc((size_t)a->nrefs_files + (size_t)a->ninputs + 1, sizeof *owned);
    nrefs = a->num_refs > 1 ? a->num_refs : a->nrefs_files;
    refs = nmt_calloc((size_t)nrefs, sizeof *refs);
    if (!owned || !refs) goto fail;
    for (int f = 0; f < a->nrefs_files; f++) {
        ref_reader reader = {refs + (a->num_refs > 1 ? 0 : f), a->num_refs, a->refs[f]};
        if (read_lines(a->refs[f], a->refs[f], 0, &owned[nowned++], ref_line, &reader) < 0) goto fail;
    }
    int paired = a->paired_bs || a->paired_ar;
    if (a->has_input) {
        systems = nmt_calloc((size_t)a->ninputs + 1, sizeof *systems);
        names = nmt_calloc((size_t)a->ninputs + 1, sizeof *names);
        if (!systems || !names) goto fail;
        for (int f = 0; f < a->ninputs; f++) {
            int duplicate = 0;
            for (int g = 0; g < nsys; g++) duplicate |= strcmp(names[g], a->inputs[f]) == 0;
            if (duplicate) {
                if (paired && strcmp(names[0], a->inputs[f]) == 0) {
                    if (!a->quiet) fprintf(stderr, "nmt bleu: ignoring '%s' as it was also given as the baseline\n", a->inputs[f]);
                    continue;
                }
                fprintf(stderr, "nmt bleu: '%s' already names a system; give each system a different file name\n",
                        a->inputs[f]);
                goto cleanup;
            }
            if (read_lines(a->inputs[f], a->inputs[f], 0, &owned[nowned++], hyp_line, &systems[nsys]) < 0) goto fail;
            if (!(names[nsys] = nmt_strdup(a->inputs[f]))) goto fail;
            nsys++;
        }
        if (paired && nsys > 0) {
            size_t n = strlen(names[0]) + 11;
            char *renamed = nmt_malloc(n);
            if (!renamed) goto fail;
            snprintf(renamed, n, "Baseline: %s", names[0]);
            free(names[0]);
            names[0] = renamed;
        }
    } else {
        stdin_reader reader = {0};
        if (read_lines("/dev/stdin", "<stdin>", 1, &owned[nowned++], stdin_line, &reader) < 0) {
            for (int k = 0; k < reader.count; k++) stream_free(&reader.systems[k]);
            free(reader.systems);
            goto fail;
        }
        if (reader.count == 0) { /* empty input: sacreBLEU reads one empty line */
            if (!(reader.systems = nmt_calloc(1, sizeof *reader.systems))) goto fail;
            reader.count = 1;
            if (stream_push(&reader.systems[0], "", 0) < 0) goto fail;
        }
        systems = reader.systems;
        nsys = reader.count;
        if (!(names = nmt_calloc((size_t)nsys, sizeof *names))) goto fail;
        for (int s = 0; s < nsys; s++) {
            char name[48];
            if (paired) snprintf(name, sizeof name, s == 0 ? "Baseline" : "System %d", s);
            else snprintf(name, sizeof name, "System %d", s + 1);
            if (!(names[s] = nmt_strdup(name))) goto fail;
        }
    }
    if (a->sentence_level && nsys > 1) {
        fprintf(stderr, "nmt bleu: only one system can be evaluated in sentence-level mode\n");
        goto cleanup;
    }
    if (a->sentence_level && (a->confidence || paired)) {
        fprintf(stderr, "nmt bleu: statistical tests are unavailable in sentence-level mode\n");
        goto cleanup;
    }
    if (paired && nsys == 1) {
        fprintf(stderr, "nmt bleu: paired tests need several systems given to -i\n");
        goto cleanup;
    }
    if (nsys > 1 && a->confidence) {
        fprintf(stderr, "nmt bleu: use a paired test (--paired-bs, --paired-ar) for several systems\n");
        goto cleanup;
    }
    for (int s = 0; s < nsys; s++) {
        if (systems[s].count == 0) {
            fprintf(stderr, "nmt bleu: %s has no lines\n", a->has_input ? a->inputs[s] : "standard input");
            goto cleanup;
        }
        for (long r = 0; r < nrefs; r++)
            if (refs[r].count != systems[s].count) {
                fprintf(stderr, "nmt bleu: the system and reference streams have different lengths (%zu and %zu lines)\n",
                        systems[s].count, refs[r].count);
                goto cleanup;
            }
    }

    if (a->sentence_level) a->opt.bleu.effective_order = 1;
    /* sacreBLEU sorts the metrics (BLEU, chrF, TER), except for a paired test, which keeps -m's order. */
    nmt_metric_kind order[3];
    int n = 0;
    for (int kind = NMT_METRIC_BLEU; kind <= NMT_METRIC_TER; kind++)
        for (int i = 0; i < a->nmetrics; i++)
            if ((int)a->metrics[i] == kind) order[n++] = a->metrics[i];
    for (int m = 0; m < a->nmetrics; m++)
        if (!(metrics[m] = nmt_metric_new(paired ? a->metrics[m] : order[m], &a->opt))) goto fail;

    int rc;
    if (a->sentence_level) rc = run_sentence_level(a, metrics[0], &systems[0], refs, (int)nrefs, &out);
    else if (nsys == 1) rc = run_single(a, metrics, &systems[0], refs, (int)nrefs, &out);
    else rc = run_multi(a, metrics, systems, (const char *const *)names, nsys, refs, (int)nrefs, &out);
    if (rc < 0 || print_and_clear(&out) < 0) goto fail;
    if (fflush(stdout) != 0) {
        nmt_error_set("<stdout>: write failed: %s", strerror(errno));
        goto fail;
    }
    exit_code = NMT_EXIT_OK;
    goto cleanup;
fail:
    exit_code = nmt_cli_fail(CMD);
cleanup:
    for (int m = 0; m < 3; m++) nmt_metric_free(metrics[m]);
    for (long r = 0; refs && r < nrefs; r++) stream_free(&refs[r]);
    for (int s = 0; systems && s < (a->has_input ? a->ninputs : nsys); s++) stream_free(&systems[s]);
    for (int s = 0; names && s < (a->has_input ? a->ninputs : nsys); s++) free(names[s]);
    for (int f = 0; owned && f < nowned; f++) free(owned[f]);
    free(refs);
    free(systems);
    free(names);
    free(owned);
    nmt_tokenize_buf_free(&out);
    return exit_code;
}

int nmt_cmd_bleu(int argc, char **argv) {
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc < 0) rc = run(&a);
    free(a.refs);
    free(a.inputs);
    return rc;
}
