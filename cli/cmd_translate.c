/* nmt translate: translate raw sentences, one a line, with a trained model directory.
 *
 * Streaming with bounded memory: a window of lines is read, encoded, translated (the library sorts
 * it by length and decodes it in batches) and written in input order, then flushed; the next
 * window follows. On a terminal the window is one line, so each line is answered at once.
 */
#include "cli.h"

#include "infer/shortlist.h"
#include "model/model_file.h"
#include "base/io.h"
#include "compute/pool.h"
#include "model/model_dir.h"
#include "viz/plot.h"
#include "infer/translator.h"
#include "text/spm.h"
#include "base/utf8.h"
#include "base/util.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char nmt_cmd_translate_summary[] = "translate sentences with beam search (n-best lists, alignments)";

static void usage(FILE *out) {
    fprintf(out,
            "Usage: nmt translate -m MODEL_DIR [-i IN] [-o OUT] [options]\n"
            "\n"
            "Translates raw sentences, one a line (stdin by default), into detokenized translations in\n"
            "the same order (stdout by default). An empty line gives an empty line.\n"
            "\n"
            "  -m, --model DIR             model directory written by `nmt train`\n"
            "  -i, --input FILE            input text (default stdin)\n"
            "  -o, --output FILE           output (default stdout; a file is written atomically)\n"
            "  -k, --beam-size K           beam size (default 5)\n"
            "      --n-best N              write the N best hypotheses of each line as\n"
            "                              `i ||| hypothesis ||| F0= logprob ||| score` (i from 0)\n"
            "      --length-penalty A      GNMT length penalty ((5+|y|)/6)^A (default 0.6)\n"
            "      --max-length-ratio R    at most R * source pieces + 10 target pieces (default 2)\n"
            "      --batch-size N          sentences decoded together (default 64)\n"
            "      --threads N             threads (default: all processors)\n"
            "      --greedy                greedy search (the fastest; no n-best)\n"
            "      --precision P           fp32 (default), bf16, int8 or auto: the matrix products'\n"
            "                              arithmetic. bf16: bfloat16 values, float32 sums (AVX512_BF16\n"
            "                              CPUs: 1.6x fp32 on AMD Zen 4, but 0.65x on Intel Xeon,\n"
            "                              whose vdpbf16ps is no faster than its float32 FMAs). int8:\n"
            "                              weights and activations quantized per row, exact integer\n"
            "                              sums (AVX-512 VNNI, or AVX2); attention, LayerNorm and\n"
            "                              softmax stay float32. auto: the fastest of those on this CPU,\n"
            "                              measured when the command starts. Translations can differ\n"
            "                              slightly from fp32's\n"
            "      --shortlist             the output layer scores only each batch's shortlist\n"
            "                              candidates (MODEL_DIR/shortlist.bin, `nmt shortlist`);\n"
            "                              a line's translation can then depend on its batch\n"
            "      --print-alignment       append ` ||| i-j ...`: source piece i that target piece j\n"
            "                              attends to most (last decoder layer, heads averaged)\n"
            "      --alignment-map FILE    draw that attention as an SVG heat map (FILE.N.svg for input\n"
            "                              line N when there are several lines); `-` draws it on stderr\n"
            "                              with shade blocks\n"
            "      --skip-invalid          translate a line with invalid UTF-8 as an empty line (with a\n"
            "                              warning) instead of stopping\n"
            "  -q, --quiet                 no progress report\n"
            "  -h, --help                  show this help\n");
}

typedef struct args {
    const char *model_dir, *input, *output, *map;
    nmt_decode_options decode;
    long threads;
    int n_best;  /* 0: one translation a line; N: Moses n-best lines */
    int print_alignment, skip_invalid, quiet, shortlist;
} args;

/* One input line of the window. */
typedef struct line {
    long number;   /* 1-based */
    char *text;    /* the raw line (for map titles) */
    int32_t *ids;  /* source pieces */
    int count;
} line;

typedef struct translate {
    args a;
    nmt_model model;
    nmt_spm *spm;
    nmt_translator *translator;
    nmt_shortlist *shortlist;
    FILE *out;
    const char *out_name;
    nmt_strbuf text; /* the output of one line, built before it is written */
    int numbered_maps;    /* alignment maps get the line number in their names */
    long sentences, tokens;
    double start;
} translate;

static int parse_args(int argc, char **argv, args *a) {
    static const struct option options[] = {
        {"model", required_argument, NULL, 'm'},
        {"input", required_argument, NULL, 'i'},
        {"output", required_argument, NULL, 'o'},
        {"beam-size", required_argument, NULL, 'k'},
        {"n-best", required_argument, NULL, 'n'},
        {"length-penalty", required_argument, NULL, 'a'},
        {"max-length-ratio", required_argument, NULL, 'r'},
        {"batch-size", required_argument, NULL, 'b'},
        {"threads", required_argument, NULL, 't'},
        {"greedy", no_argument, NULL, 'g'},
        {"precision", required_argument, NULL, 'P'},
        {"print-alignment", no_argument, NULL, 'p'},
        {"alignment-map", required_argument, NULL, 'M'},
        {"skip-invalid", no_argument, NULL, 's'},
        {"shortlist", no_argument, NULL, 'S'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    a->decode = nmt_decode_options_default();
    long beam = a->decode.beam_size, n_best = 0, batch = a->decode.batch_size;
    a->threads = sysconf(_SC_NPROCESSORS_ONLN);
    if (a->threads < 1) a->threads = 1;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":m:i:o:k:qh", options, NULL)) != -1) {
        switch (c) {
        case 'm': a->model_dir = optarg; break;
        case 'i': a->input = optarg; break;
        case 'o': a->output = optarg; break;
        case 'k':
            if (nmt_cli_long("translate", "--beam-size", optarg, 1, 1000, &beam) < 0) return -1;
            break;
        case 'n':
            if (nmt_cli_long("translate", "--n-best", optarg, 1, 1000, &n_best) < 0) return -1;
            break;
        case 'a':
            if (nmt_cli_double("translate", "--length-penalty", optarg, 0, 10, &a->decode.length_penalty) < 0) return -1;
            break;
        case 'r':
            if (nmt_cli_double("translate", "--max-length-ratio", optarg, 0, 100, &a->decode.max_length_ratio) < 0)
                return -1;
            break;
        case 'b':
            if (nmt_cli_long("translate", "--batch-size", optarg, 1, 4096, &batch) < 0) return -1;
            break;
        case 't':
            if (nmt_cli_long("translate", "--threads", optarg, 1, 1024, &a->threads) < 0) return -1;
            break;
        case 'g': a->decode.greedy = 1; break;
        case 'P':
            if (nmt_cli_precision("translate", optarg, &a->decode.precision) < 0) return -1;
            break;
        case 'p': a->print_alignment = 1; break;
        case 'M': a->map = optarg; break;
        case 's': a->skip_invalid = 1; break;
        case 'S': a->shortlist = 1; break;
        case 'q': a->quiet = 1; break;
        case 'h': usage(stdout); return 1;
        case ':': nmt_cli_usage_error("translate", "%s needs a value", argv[optind - 1]); return -1;
        default: nmt_cli_usage_error("translate", "unknown option '%s'", argv[optind - 1]); return -1;
        }
    }
    if (optind < argc) return nmt_cli_usage_error("translate", "unexpected argument '%s'", argv[optind]), -1;
    if (!a->model_dir) return nmt_cli_usage_error("translate", "--model is required"), -1;
    const char *inputs[] = {a->input, NULL}, *written[] = {a->input, a->output, NULL};
    if (a->output && nmt_cli_output("translate", "--output", a->output, inputs, "--input") < 0) return -1;
    if (a->map && strcmp(a->map, "-") != 0 && nmt_cli_output("translate", "--alignment-map", a->map, written, NULL) < 0)
        return -1;
    if (a->decode.greedy && n_best > 1)
        return nmt_cli_usage_error("translate", "--greedy gives one hypothesis: --n-best must be 1"), -1;
    if (!a->decode.greedy && n_best > beam)
        return nmt_cli_usage_error("translate", "--n-best %ld is more than the beam size %ld", n_best, beam), -1;
    a->decode.beam_size = (int)beam;
    a->decode.n_best = n_best > 0 ? (int)n_best : 1;
    a->decode.batch_size = (int)batch;
    a->decode.attention = a->print_alignment || a->map;
    a->n_best = (int)n_best;
    return 0;
}

static void window_free(line *window, int count) {
    for (int i = 0; i < count; i++) {
        free(window[i].text);
        free(window[i].ids);
    }
}

/* Reads up to `cap` lines into window[], encoded. Sets *count; *eof at the end. */
static int read_window(translate *t, nmt_lines *in, line *window, int cap, int *count, int *eof) {
    int32_t *ids = NULL;
    size_t ids_cap = 0, n_ids = 0;
    int rc = -1;
    *count = 0;
    while (*count < cap) {
        int r = nmt_lines_next(in);
        if (r < 0) goto done;
        if (r == 0) {
            *eof = 1;
            break;
        }
        line *l = &window[(*count)++];
        memset(l, 0, sizeof *l);
        l->number = in->number;
        int encoded = nmt_model_dir_encode_line(&t->model, t->spm, in, &ids, &ids_cap, &n_ids);
        if (encoded == NMT_MODEL_DIR_INVALID_UTF8 && t->a.skip_invalid) {
            fprintf(stderr, "nmt translate: warning: %s; writing an empty line\n", nmt_error());
            n_ids = 0;
        } else if (encoded == NMT_MODEL_DIR_INVALID_UTF8) {
            char message[512];
            snprintf(message, sizeof message, "%s", nmt_error());
            nmt_error_set("%s (--skip-invalid writes an empty line for it instead)", message);
            goto done;
        } else if (encoded < 0) {
            goto done;
        }
        l->text = nmt_strdup(encoded == 0 ? in->line : "");
        l->ids = nmt_malloc((n_ids ? n_ids : 1) * sizeof(int32_t));
        if (!l->text || !l->ids) goto done;
        if (n_ids) memcpy(l->ids, ids, n_ids * sizeof(int32_t));
        l->count = (int)n_ids;
    }
    rc = 0;
done:
    free(ids);
    return rc;
}

/* Appends " ||| i-j ..." for a hypothesis with attention (nothing after the bars without it). */
static int append_alignment(translate *t, const nmt_hypothesis *h) {
    nmt_strbuf_printf(&t->text, " |||");
    if (!h->attention || h->length == 0) return 0;
    int *src_of = nmt_malloc((size_t)h->length * sizeof(int));
    if (!src_of) return -1;
    nmt_hypothesis_alignment(h, src_of);
    for (int j = 0; j < h->length; j++) nmt_strbuf_printf(&t->text, " %d-%d", src_of[j], j);
    free(src_of);
    return 0;
}

/* Appends the detokenized hypothesis. */
static int append_hypothesis(translate *t, const nmt_hypothesis *h) {
    char *text = nmt_spm_decode(t->spm, h->tokens, (size_t)h->length);
    if (!text) return -1;
    nmt_strbuf_printf(&t->text, "%s", text);
    free(text);
    return 0;
}

/* Writes the output of input line `index` (0-based). */
static int write_translation(translate *t, long index, const nmt_translation *tr) {
    t->text.len = 0;
    if (t->a.n_best) {
        for (int i = 0; i < tr->count; i++) {
            const nmt_hypothesis *h = &tr->hyps[i];
            nmt_strbuf_printf(&t->text, "%ld ||| ", index);
            if (append_hypothesis(t, h) < 0) return -1;
            nmt_strbuf_printf(&t->text, " ||| F0= %.6f ||| %.6f", h->logprob, h->score);
            if (t->a.print_alignment && append_alignment(t, h) < 0) return -1;
            nmt_strbuf_printf(&t->text, "\n");
        }
    } else {
        if (append_hypothesis(t, &tr->hyps[0]) < 0) return -1;
        if (t->a.print_alignment && append_alignment(t, &tr->hyps[0]) < 0) return -1;
        nmt_strbuf_printf(&t->text, "\n");
    }
    if (t->text.failed) return nmt_error_set("out of memory formatting a translation");
    return nmt_io_write(t->out, t->text.data, t->text.len, t->out_name);
}

/* "map.svg" for line 7 -> "map.7.svg" (the number goes before the extension, if any). */
static char *map_path(const char *path, long number) {
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash) || dot == path || (slash && dot == slash + 1)) dot = path + strlen(path);
    size_t n = strlen(path) + 24;
    char *out = nmt_malloc(n);
    if (out) snprintf(out, n, "%.*s.%ld%s", (int)(dot - path), path, number, dot);
    return out;
}

/* Draws the attention of a line's best hypothesis as a file or on stderr. */
static int draw_map(translate *t, const line *l, const nmt_hypothesis *h) {
    if (!h->attention || l->count == 0) return 0;
    static const char eos[] = "</s>";
    const char **src = nmt_malloc(((size_t)l->count + 1) * sizeof *src);
    const char **tgt = nmt_malloc(((size_t)h->length + 1) * sizeof *tgt);
    nmt_strbuf picture = {0}, title = {0};
    char *path = NULL;
    int rc = -1;
    if (!src || !tgt) goto done;
    for (int i = 0; i < l->count; i++) src[i] = nmt_spm_piece(t->spm, l->ids[i]);
    for (int j = 0; j < h->length; j++) tgt[j] = nmt_spm_piece(t->spm, h->tokens[j]);
    src[l->count] = tgt[h->length] = eos;
    nmt_strbuf_printf(&title, "line %ld: %.120s", l->number, l->text);
    if (title.failed) {
        nmt_error_set("out of memory drawing an attention map");
        goto done;
    }
    if (strcmp(t->a.map, "-") == 0) {
        if (nmt_plot_alignment_text(&picture, title.data, src, l->count + 1, tgt, h->length + 1, h->attention) < 0) goto done;
        nmt_strbuf_printf(&picture, "\n");
        rc = nmt_io_write(stderr, picture.data, picture.len, "<stderr>");
        goto done;
    }
    if (nmt_plot_alignment_svg(&picture, title.data, src, l->count + 1, tgt, h->length + 1, h->attention) < 0) goto done;
    path = t->numbered_maps ? map_path(t->a.map, l->number) : nmt_strdup(t->a.map);
    if (!path) goto done;
    rc = nmt_atomic_write(path, picture.data, picture.len);
done:
    free(src);
    free(tgt);
    free(path);
    nmt_strbuf_free(&picture);
    nmt_strbuf_free(&title);
    return rc;
}

static void progress(translate *t, int final) {
    double seconds = nmt_now() - t->start;
    if (seconds <= 0) seconds = 1e-9;
    fprintf(stderr, "\rnmt translate: %ld sentences, %.1f sentences/s, %.0f target tokens/s%s", t->sentences,
            t->sentences / seconds, t->tokens / seconds, final ? "\n" : "");
}

/* Translates and writes one window. */
static int translate_window(translate *t, line *window, int count, long first_index) {
    const int32_t **src = nmt_malloc((size_t)count * sizeof *src);
    int *len = nmt_malloc((size_t)count * sizeof *len);
    nmt_translation *out = nmt_calloc((size_t)count, sizeof *out);
    int rc = -1;
    if (!src || !len || !out) goto done;
    for (int i = 0; i < count; i++) {
        src[i] = window[i].ids;
        len[i] = window[i].count;
    }
    if (nmt_translator_run(t->translator, count, src, len, out) < 0) goto done;
    for (int i = 0; i < count; i++) {
        if (write_translation(t, first_index + i, &out[i]) < 0) goto done;
        if (t->a.map && draw_map(t, &window[i], &out[i].hyps[0]) < 0) goto done;
        t->tokens += out[i].hyps[0].length + (window[i].count ? 1 : 0);
    }
    t->sentences += count;
    if (fflush(t->out) != 0) {
        nmt_error_set("%s: write failed: %s", t->out_name, strerror(errno));
        goto done;
    }
    rc = 0;
done:
    if (out)
        for (int i = 0; i < count; i++) nmt_translation_free(&out[i]);
    free(out);
    free(src);
    free(len);
    return rc;
}

static int run(translate *t) {
    FILE *in = stdin;
    const char *in_name = "<stdin>";
    nmt_atomic_file atomic = {0};
    nmt_lines lines = {0};
    line *window = NULL;
    int count = 0, rc = -1, eof = 0, committed = 0;
    if (nmt_model_dir_open(t->a.model_dir, &t->model, &t->spm) < 0) return -1;
    if (t->a.decode.precision == NMT_PRECISION_INT8 && nmt_model_quantize_int8(&t->model) < 0) return -1;
    if (t->a.shortlist) {
        if (nmt_shortlist_load_dir(&t->shortlist, t->a.model_dir, t->model.config.vocab_size) < 0) return -1;
        t->a.decode.shortlist = t->shortlist;
    }
    nmt_pool_set_threads((int)t->a.threads);
    if (nmt_translator_create(&t->translator, &t->model, &t->a.decode) < 0) return -1;
    if (t->a.input) {
        in = fopen(t->a.input, "rb");
        if (!in) return nmt_error_set("%s: cannot open: %s", t->a.input, strerror(errno));
        in_name = t->a.input;
    }
    t->out = stdout;
    t->out_name = "<stdout>";
    if (t->a.output) {
        if (nmt_atomic_open(&atomic, t->a.output) < 0) goto done;
        t->out = atomic.fp;
        t->out_name = t->a.output;
    }
    /* A window of lines is sorted by length for batching; on a terminal, answer each line at once. */
    const int cap = isatty(fileno(in)) ? 1 : 16 * t->a.decode.batch_size;
    const int show_progress = !t->a.quiet && isatty(STDERR_FILENO);
    window = nmt_calloc((size_t)cap, sizeof *window);
    if (!window) goto done;
    nmt_lines_init(&lines, in, in_name);
    t->start = nmt_now();
    for (long first = 0; !eof; first += count) {
        window_free(window, count);
        count = 0;
        if (read_window(t, &lines, window, cap, &count, &eof) < 0) goto done;
        if (first == 0) t->numbered_maps = !(eof && count == 1);
        if (count && translate_window(t, window, count, first) < 0) {
            if (strstr(nmt_error(), "out of memory"))
                nmt_error_prefix("translating lines %ld to %ld (--batch-size %d and --beam-size %d set the memory a "
                                 "batch needs; lower them)", first + 1, first + count, t->a.decode.batch_size,
                                 t->a.decode.beam_size);
            goto done;
        }
        if (show_progress && count) progress(t, 0);
    }
    if (show_progress) progress(t, 1);
    if (t->a.output && nmt_atomic_commit(&atomic) < 0) goto done;
    committed = 1;
    rc = 0;
done:
    if (t->a.output && atomic.fp && !committed) nmt_atomic_abort(&atomic);
    window_free(window, count);
    free(window);
    nmt_lines_free(&lines);
    if (in != stdin) fclose(in);
    return rc;
}

int nmt_cmd_translate(int argc, char **argv) {
    translate t;
    memset(&t, 0, sizeof t);
    int parsed = parse_args(argc, argv, &t.a);
    if (parsed != 0) return parsed > 0 ? NMT_EXIT_OK : NMT_EXIT_USAGE;
    /* A closed pipe must be an error we report (EPIPE), not a silent death by SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    int rc = run(&t) < 0 ? nmt_cli_fail("translate") : NMT_EXIT_OK;
    nmt_translator_free(t.translator);
    nmt_shortlist_free(t.shortlist);
    nmt_spm_free(t.spm);
    nmt_model_free(&t.model);
    nmt_strbuf_free(&t.text);
    return rc;
}
