/* nmt translate: translate raw sentences, one a line, with a trained model directory.
 *
 * Bounded memory for any input: a window of lines is read, encoded (a line over --max-input-length
 * pieces is cropped or skipped, with a warning), translated (the library sorts it by length and
 * decodes it in batches bounded by --batch-size and --batch-tokens) and written in input order, then
 * flushed; the next window follows. In stream mode (a terminal or a pipe) the window holds only the
 * lines that have already arrived, so each line is answered as soon as it is read. When a line
 * fails, the lines before it are translated and written before the error is reported.
 */
#include "cli.h"

#include "base/input.h"
#include "base/io.h"
#include "base/json.h"
#include "base/util.h"
#include "compute/packed.h"
#include "compute/pool.h"
#include "base/utf8.h"
#include "infer/guide.h"
#include "infer/pipeline.h"
#include "viz/plot.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char nmt_cmd_translate_summary[] = "translate sentences with beam search (n-best lists, alignments)";

/* The defaults in the help are the library's (nmt_pipeline_options_default). */
static void usage(FILE *out) {
    const nmt_pipeline_options d = nmt_pipeline_options_default();
    fprintf(out,
            "Usage: nmt translate -m MODEL_DIR [-i IN] [-o OUT] [options]\n"
            "\n"
            "Translates raw sentences, one a line (stdin by default), into detokenized translations in\n"
            "the same order (stdout by default). An empty line gives an empty line.\n"
            "\n"
            "  -m, --model DIR             model directory written by `nmt train` or `nmt average`, or a\n"
            "                              model file in one, or a checkpoint DIR/checkpoints/step-N.\n"
            "                              safetensors (its weights, with DIR's vocabulary)\n"
            "  -i, --input FILE            input text (default stdin; `-` = stdin; gzip files are read)\n"
            "  -o, --output FILE           output (default stdout; a file is written atomically: only when\n"
            "                              every line succeeded)\n"
            "  -k, -b, --beam-size K       beam size (default %d; alias --beam)\n"
            "      --n-best N              write the N best hypotheses of each line as\n"
            "                              `i ||| hypothesis ||| F0= logprob ||| score` (i from 0; alias\n"
            "                              --nbest); with --sampling, N samples of each line\n"
            "      --length-penalty A      GNMT length penalty ((5+|y|)/6)^A (default %g; alias --lenpen,\n"
            "                              though fairseq's penalty is |y|^A)\n"
            "      --ct2-search            rank and stop as CTranslate2's beam search: length penalty\n"
            "                              |y|^A (|y| = pieces + eos), a sentence done once K hypotheses\n"
            "                              have finished, or with A = 0 once N have and some step's best\n"
            "                              candidate was eos (for CTranslate2 models: docs/model-formats.md)\n"
            "      --max-length-ratio R    at most R * source pieces + 10 target pieces, where a translation\n"
            "                              is cut without eos (default %g)\n"
            "      --max-output-length N   at most N target pieces too, whatever the source's length\n"
            "                              (CTranslate2's max_decoding_length; default: none)\n"
            "      --max-input-length N    a line of more than N source pieces is not translated: an\n"
            "                              empty line is written, with a warning naming the line\n"
            "                              (default %d, as Marian's; alias --max-length)\n"
            "      --max-input-length-crop translate the first N pieces of such a line instead (alias\n"
            "                              --max-length-crop)\n"
            "      --batch-size N          sentences decoded together (default %d; alias --mini-batch)\n"
            "      --batch-tokens N        at most N padded source pieces in a batch (default %d): a\n"
            "                              batch whose longest line has L pieces holds at most N/(L+1)\n"
            "                              sentences\n"
            "      --stream                answer each line as soon as it is read: lines that have arrived\n"
            "                              are batched, none is waited for (default when the input is a\n"
            "                              terminal or a pipe; for a coprocess)\n"
            "      --no-stream             read windows of 16 x batch-size lines even from a pipe\n"
            "      --threads N             threads (default: the CPUs this process may use; alias\n"
            "                              --cpu-threads)\n"
            "      --greedy                greedy search (the fastest; no n-best)\n"
            "      --sampling              draw each target piece from the model's distribution instead\n"
            "                              of searching (back-translation of monolingual text); the draws\n"
            "                              are a function of --seed and the line number only: the same\n"
            "                              on any thread count and batch size\n"
            "      --sampling-topk K       draw from the K most probable pieces only (default 0: all)\n"
            "      --sampling-topp P       draw from the fewest most probable pieces holding probability\n"
            "                              P, in (0, 1] (nucleus sampling; default 1: all)\n"
            "      --temperature T         divide the log-probabilities by T before drawing (default 1)\n"
            "      --seed N                the draws' seed (default 1)\n"
            "      --repetition-penalty P  a piece already in the hypothesis has its logit divided by P\n"
            "                              (multiplied where negative): CTranslate2's penalty; P in\n"
            "                              (0, 100], default %g: off\n"
            "      --no-repeat-ngram-size N\n"
            "                              no N-gram of pieces twice in a hypothesis (fairseq's; default %d:\n"
            "                              off)\n"
            "      --loop-guard N          end a hypothesis stuck repeating one 1- to 4-gram of pieces: more\n"
            "                              than N copies in a row, of more than 2N pieces (default %d;\n"
            "                              0 turns the guard off)\n"
            "      --prefix                each input line is SOURCE<TAB>PREFIX: every translation of the\n"
            "                              line starts with PREFIX (target text; a line without a tab\n"
            "                              has none)\n"
            "      --constraints           each input line is SOURCE<TAB>PHRASE<TAB>PHRASE... (fairseq's\n"
            "                              layout): every translation holds each target PHRASE whole;\n"
            "                              with --prefix, SOURCE<TAB>PREFIX<TAB>PHRASE...\n"
            "      --glossary FILE         TSV of `source term<TAB>target term`: the target term of each\n"
            "                              source term found in a line (whole words, any case) becomes a\n"
            "                              constraint of that line\n"
            "      --glossary-case         glossary source terms match only with their case\n"
            "      --format F              text (default: the lines above) or json: one object a line,\n"
            "                              {\"text\", \"score\", \"logprob\", \"confidence\": {\"mean_logprob\",\n"
            "                              \"alternatives\"}, \"pieces\", \"alignment\" (with --print-alignment:\n"
            "                              [source, target] pairs)}; with --n-best, {\"hypotheses\": [...]}\n"
            "      --precision P           fp32, bf16, int8 or auto: the matrix products' arithmetic\n"
            "                              (default: as the model was written, int8 for a directory of\n"
            "                              `nmt convert --precision int8`, else fp32). bf16: bfloat16\n"
            "                              values, float32 sums (AVX512_BF16 CPUs, beam 5: 1.6x fp32 on\n"
            "                              AMD Zen 4, 1.5x on Zen 5, but 0.65x on Intel Xeon, whose\n"
            "                              vdpbf16ps is no faster than its float32 FMAs). int8: weights\n"
            "                              and activations quantized per row, exact integer sums\n"
            "                              (AVX-512 VNNI, or AVX2), attention scores included (int8\n"
            "                              queries against int8 cached keys); LayerNorm, softmax and\n"
            "                              the weighted values stay float32. auto: the fastest of\n"
            "                              those on this CPU, measured when the command starts and\n"
            "                              named on stderr.\n"
            "                              Translations can differ slightly from fp32's\n"
            "      --shortlist             the output layer scores only each batch's shortlist\n"
            "                              candidates (MODEL_DIR/shortlist.bin, `nmt shortlist`);\n"
            "                              a line's translation can then depend on its batch\n"
            "      --print-alignment       append ` ||| s-t ...`: source position s that target position\n"
            "                              t attends to most (last decoder layer, heads averaged), 0-based\n"
            "                              (alias --alignment hard)\n"
            "      --alignment-unit U      piece (default: SentencePiece pieces) or word (pieces merged\n"
            "                              at word boundaries: the words of the text split at spaces)\n"
            "      --print-pieces          append ` ||| source pieces ||| target pieces`, which piece\n"
            "                              alignments count\n"
            "      --alignment-map FILE    draw that attention as an SVG heat map (FILE.N.svg for input\n"
            "                              line N, from 0, when there are several lines); `-` draws it on\n"
            "                              stderr with shade blocks\n"
            "      --skip-invalid          translate a line with invalid UTF-8 as an empty line (with a\n"
            "                              warning) instead of stopping\n"
            "  -q, --quiet                 no progress report\n"
            "  -h, --help                  show this help\n"
            "\n"
            "Memory is bounded by the flags whatever the input: at most --batch-tokens source pieces\n"
            "(each line at most --max-input-length) are decoded together, with beam-size hypotheses of\n"
            "at most R x L + 10 pieces each; the decoder's cache grows with beam x batch-tokens x (R + 1)\n"
            "x layers x d_model floats (bytes with --precision int8, whose cache is int8). When a line\n"
            "fails (invalid UTF-8), the translations of the lines before it are written first, then the\n"
            "error.\n",
            d.decode.beam_size, d.decode.length_penalty, d.decode.max_length_ratio, d.max_input_length,
            d.decode.batch_size, d.decode.batch_tokens, d.decode.repetition_penalty, d.decode.no_repeat_ngram_size,
            d.decode.loop_repeats);
}

typedef struct args {
    const char *model_dir, *input, *output, *map, *glossary;
    nmt_pipeline_options pipe; /* the library's options and defaults */
    long threads;
    int n_best;      /* 0: one translation a line; N: Moses n-best lines */
    int print_alignment, words, print_pieces, skip_invalid, quiet;
    int stream;      /* 1 on, 0 off, -1 by the kind of input */
    int prefix, constraints; /* a line is SOURCE<TAB>PREFIX, SOURCE<TAB>PHRASE..., or SOURCE<TAB>PREFIX<TAB>PHRASE... */
    int glossary_case;       /* glossary terms match with their case */
    int json;                /* one JSON object a line */
    int precision_auto;      /* --precision auto: say on stderr which precision it measured fastest */
} args;

/* One input line of the window. */
typedef struct line {
    long number;   /* 1-based */
    char *text;    /* the raw line (for map titles) */
    int32_t *ids;  /* source pieces */
    int count;
    nmt_guide *guide; /* its target prefix and phrases, or NULL */
} line;

typedef struct translate {
    args a;
    nmt_pipeline *pipeline;
    nmt_glossary *glossary;
    nmt_guide guide; /* the line being read's, moved into the line when it guides anything */
    FILE *out;
    const char *out_name;
    nmt_strbuf text; /* the output of one line, built before it is written */
    int *pairs;           /* [2 * longest hypothesis] alignment pairs */
    size_t pairs_cap;
    int numbered_maps;    /* alignment maps get the line index in their names */
    long sentences, tokens;
    double start;
} translate;

static int parse_args(int argc, char **argv, args *a) {
    enum { O_NBEST = 256, O_LP, O_CT2, O_RATIO, O_MAXOUT, O_MAXIN, O_CROP, O_BATCH, O_TOKENS, O_THREADS, O_GREEDY, O_PRECISION,
           O_ALIGN, O_ALIGN_HARD, O_UNIT, O_PIECES, O_MAP, O_SKIP, O_STREAM, O_NO_STREAM, O_SHORTLIST, O_SAMPLING,
           O_TOPK, O_TOPP, O_TEMPERATURE, O_SEED, O_REPETITION, O_NO_REPEAT, O_LOOP_GUARD, O_PREFIX, O_CONSTRAINTS,
           O_GLOSSARY, O_GLOSSARY_CASE, O_FORMAT };
    static const struct option options[] = {
        {"model", required_argument, NULL, 'm'},
        {"input", required_argument, NULL, 'i'},
        {"output", required_argument, NULL, 'o'},
        {"beam-size", required_argument, NULL, 'k'},
        {"beam", required_argument, NULL, 'k'},
        {"n-best", required_argument, NULL, O_NBEST},
        {"nbest", required_argument, NULL, O_NBEST},
        {"length-penalty", required_argument, NULL, O_LP},
        {"lenpen", required_argument, NULL, O_LP},
        {"ct2-search", no_argument, NULL, O_CT2},
        {"max-length-ratio", required_argument, NULL, O_RATIO},
        {"max-output-length", required_argument, NULL, O_MAXOUT},
        {"max-input-length", required_argument, NULL, O_MAXIN},
        {"max-length", required_argument, NULL, O_MAXIN},
        {"max-input-length-crop", no_argument, NULL, O_CROP},
        {"max-length-crop", no_argument, NULL, O_CROP},
        {"batch-size", required_argument, NULL, O_BATCH},
        {"mini-batch", required_argument, NULL, O_BATCH},
        {"batch-tokens", required_argument, NULL, O_TOKENS},
        {"threads", required_argument, NULL, O_THREADS},
        {"cpu-threads", required_argument, NULL, O_THREADS},
        {"greedy", no_argument, NULL, O_GREEDY},
        {"sampling", no_argument, NULL, O_SAMPLING},
        {"sampling-topk", required_argument, NULL, O_TOPK},
        {"sampling-topp", required_argument, NULL, O_TOPP},
        {"temperature", required_argument, NULL, O_TEMPERATURE},
        {"seed", required_argument, NULL, O_SEED},
        {"repetition-penalty", required_argument, NULL, O_REPETITION},
        {"no-repeat-ngram-size", required_argument, NULL, O_NO_REPEAT},
        {"loop-guard", required_argument, NULL, O_LOOP_GUARD},
        {"prefix", no_argument, NULL, O_PREFIX},
        {"constraints", no_argument, NULL, O_CONSTRAINTS},
        {"glossary", required_argument, NULL, O_GLOSSARY},
        {"glossary-case", no_argument, NULL, O_GLOSSARY_CASE},
        {"format", required_argument, NULL, O_FORMAT},
        {"precision", required_argument, NULL, O_PRECISION},
        {"print-alignment", no_argument, NULL, O_ALIGN},
        {"alignment", required_argument, NULL, O_ALIGN_HARD},
        {"alignment-unit", required_argument, NULL, O_UNIT},
        {"print-pieces", no_argument, NULL, O_PIECES},
        {"alignment-map", required_argument, NULL, O_MAP},
        {"skip-invalid", no_argument, NULL, O_SKIP},
        {"stream", no_argument, NULL, O_STREAM},
        {"no-stream", no_argument, NULL, O_NO_STREAM},
        {"shortlist", no_argument, NULL, O_SHORTLIST},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    a->pipe = nmt_pipeline_options_default();
    nmt_decode_options *decode = &a->pipe.decode;
    long beam = decode->beam_size, n_best = 0, batch = decode->batch_size, tokens = decode->batch_tokens;
    long max_input = a->pipe.max_input_length, max_output = 0;
    a->threads = nmt_cli_threads_default();
    a->stream = -1;
    const char *sampling_flag = NULL; /* the last sampling option given */
    int beam_given = 0;
    long top_k = 0, seed = 1, no_repeat = decode->no_repeat_ngram_size, loop_guard = decode->loop_repeats;
    optind = 1;
    int c;
    while ((c = nmt_cli_getopt("translate", argc, argv, "m:i:o:k:b:qh", options, NULL)) != -1) {
        switch (c) {
        case 'm': a->model_dir = optarg; break;
        case 'i': a->input = optarg; break;
        case 'o': a->output = optarg; break;
        case 'b':
        case 'k':
            if (nmt_cli_long("translate", "--beam-size", optarg, 1, 1000, &beam) < 0) return -1;
            beam_given = 1;
            break;
        case O_NBEST:
            if (nmt_cli_long("translate", "--n-best", optarg, 1, 1000, &n_best) < 0) return -1;
            break;
        case O_LP:
            if (nmt_cli_double("translate", "--length-penalty", optarg, 0, 10, &decode->length_penalty) < 0) return -1;
            break;
        case O_CT2:
            decode->ctranslate2 = 1;
            break;
        case O_RATIO:
            if (nmt_cli_double("translate", "--max-length-ratio", optarg, 0, 100, &decode->max_length_ratio) < 0)
                return -1;
            break;
        case O_MAXOUT:
            if (nmt_cli_long("translate", "--max-output-length", optarg, 1, 65536, &max_output) < 0) return -1;
            decode->max_length = (int)max_output;
            break;
        case O_MAXIN:
            if (nmt_cli_long("translate", "--max-input-length", optarg, 1, 1000000, &max_input) < 0) return -1;
            break;
        case O_CROP: a->pipe.crop = 1; break;
        case O_BATCH:
            if (nmt_cli_long("translate", "--batch-size", optarg, 1, 4096, &batch) < 0) return -1;
            break;
        case O_TOKENS:
            if (nmt_cli_long("translate", "--batch-tokens", optarg, 1, 1 << 24, &tokens) < 0) return -1;
            break;
        case O_THREADS:
            if (nmt_cli_long("translate", "--threads", optarg, 1, 1024, &a->threads) < 0) return -1;
            break;
        case O_GREEDY: decode->greedy = 1; break;
        case O_SAMPLING: decode->sampling.enabled = 1; break;
        case O_TOPK:
            if (nmt_cli_long("translate", "--sampling-topk", optarg, 0, 1 << 24, &top_k) < 0) return -1;
            sampling_flag = "--sampling-topk";
            break;
        case O_TOPP:
            if (nmt_cli_double("translate", "--sampling-topp", optarg, 0, 1, &decode->sampling.top_p) < 0) return -1;
            if (!(decode->sampling.top_p > 0))
                return nmt_cli_usage_error("translate", "--sampling-topp: expected a number in (0, 1], got '%s'", optarg), -1;
            sampling_flag = "--sampling-topp";
            break;
        case O_TEMPERATURE:
            if (nmt_cli_double("translate", "--temperature", optarg, 0, 1000, &decode->sampling.temperature) < 0)
                return -1;
            if (!(decode->sampling.temperature > 0))
                return nmt_cli_usage_error("translate", "--temperature: expected a number > 0, got '%s'", optarg), -1;
            sampling_flag = "--temperature";
            break;
        case O_SEED:
            if (nmt_cli_long("translate", "--seed", optarg, 0, LONG_MAX, &seed) < 0) return -1;
            sampling_flag = "--seed";
            break;
        case O_REPETITION:
            if (nmt_cli_double("translate", "--repetition-penalty", optarg, 0, 100, &decode->repetition_penalty) < 0)
                return -1;
            if (!(decode->repetition_penalty > 0))
                return nmt_cli_usage_error("translate", "--repetition-penalty: expected a number in (0, 100], got '%s'",
                                           optarg), -1;
            break;
        case O_NO_REPEAT:
            if (nmt_cli_long("translate", "--no-repeat-ngram-size", optarg, 0, 1000, &no_repeat) < 0) return -1;
            break;
        case O_LOOP_GUARD:
            if (nmt_cli_long("translate", "--loop-guard", optarg, 0, 1000, &loop_guard) < 0) return -1;
            break;
        case O_PREFIX: a->prefix = 1; break;
        case O_CONSTRAINTS: a->constraints = 1; break;
        case O_GLOSSARY: a->glossary = optarg; break;
        case O_GLOSSARY_CASE: a->glossary_case = 1; break;
        case O_FORMAT:
            if (strcmp(optarg, "text") != 0 && strcmp(optarg, "json") != 0)
                return nmt_cli_usage_error("translate", "--format: expected text or json, got '%s'", optarg), -1;
            a->json = strcmp(optarg, "json") == 0;
            break;
        case O_PRECISION:
            if (nmt_cli_precision("translate", optarg, &decode->precision) < 0) return -1;
            a->pipe.precision_of_model = 0;
            a->precision_auto = strcmp(optarg, "auto") == 0;
            break;
        case O_ALIGN_HARD:
            if (strcmp(optarg, "hard") != 0)
                return nmt_cli_usage_error("translate", "--alignment: only 'hard' is supported (the pairs of "
                                                        "--print-alignment), not '%s'", optarg), -1;
            /* fall through */
        case O_ALIGN: a->print_alignment = 1; break;
        case O_UNIT:
            if (strcmp(optarg, "piece") != 0 && strcmp(optarg, "word") != 0)
                return nmt_cli_usage_error("translate", "--alignment-unit: expected piece or word, got '%s'", optarg), -1;
            a->words = strcmp(optarg, "word") == 0;
            break;
        case O_PIECES: a->print_pieces = 1; break;
        case O_MAP: a->map = optarg; break;
        case O_SKIP: a->skip_invalid = 1; break;
        case O_STREAM:
        case O_NO_STREAM:
            if (a->stream >= 0) return nmt_cli_usage_error("translate", "--stream and --no-stream exclude each other"), -1;
            a->stream = c == O_STREAM;
            break;
        case O_SHORTLIST: a->pipe.shortlist = 1; break;
        case 'q': a->quiet = 1; break;
        case 'h': usage(stdout); return 1;
        default: return -1;
        }
    }
    if (optind < argc) return nmt_cli_usage_error("translate", "unexpected argument '%s'", argv[optind]), -1;
    if (!a->model_dir) return nmt_cli_usage_error("translate", "--model is required"), -1;
    const char *inputs[] = {a->input, NULL}, *written[] = {a->input, a->output, NULL};
    if (a->output && nmt_cli_output("translate", "--output", a->output, inputs, "--input") < 0) return -1;
    if (a->map && strcmp(a->map, "-") != 0 && nmt_cli_output("translate", "--alignment-map", a->map, written, NULL) < 0)
        return -1;
    if (sampling_flag && !decode->sampling.enabled)
        return nmt_cli_usage_error("translate", "%s is for --sampling", sampling_flag), -1;
    if (decode->sampling.enabled) {
        if (beam_given)
            return nmt_cli_usage_error("translate", "--sampling draws instead of searching: it takes no --beam-size "
                                                    "(--n-best N draws N samples a line)"), -1;
        if (a->pipe.shortlist)
            return nmt_cli_usage_error("translate", "--sampling draws from the whole vocabulary: it takes no --shortlist"), -1;
        decode->greedy = 1;
        decode->sampling.top_k = (int)top_k;
        decode->sampling.seed = (uint64_t)seed;
    }
    if (decode->greedy && !decode->sampling.enabled && n_best > 1)
        return nmt_cli_usage_error("translate", "--greedy gives one hypothesis: --n-best must be 1"), -1;
    if (!decode->greedy && n_best > beam)
        return nmt_cli_usage_error("translate", "--n-best %ld is more than the beam size %ld", n_best, beam), -1;
    decode->beam_size = (int)beam;
    decode->n_best = n_best > 0 ? (int)n_best : 1;
    decode->batch_size = (int)batch;
    decode->batch_tokens = (int)tokens;
    decode->attention = a->print_alignment || a->map;
    decode->no_repeat_ngram_size = (int)no_repeat;
    decode->loop_repeats = (int)loop_guard;
    if (a->json && a->pipe.shortlist)
        return nmt_cli_usage_error("translate", "--format json gives each hypothesis's confidence, which reads the "
                                                "whole vocabulary: it takes no --shortlist"), -1;
    if (a->json && a->map && strcmp(a->map, "-") == 0)
        return nmt_cli_usage_error("translate", "--format json writes no alignment map on stderr"), -1;
    decode->confidence = a->json;
    if (a->glossary_case && !a->glossary) return nmt_cli_usage_error("translate", "--glossary-case is for --glossary"), -1;
    if ((a->constraints || a->glossary) && (decode->sampling.enabled || a->pipe.shortlist))
        return nmt_cli_usage_error("translate", "--constraints and --glossary need greedy or beam search over the "
                                                "whole vocabulary: they take no --sampling or --shortlist"), -1;
    if (a->pipe.shortlist && (decode->repetition_penalty != 1.0 || no_repeat > 0))
        return nmt_cli_usage_error("translate", "--repetition-penalty and --no-repeat-ngram-size read the whole "
                                                "vocabulary: they take no --shortlist"), -1;
    a->pipe.max_input_length = (int)max_input;
    a->n_best = (int)n_best;
    if (a->words && !a->print_alignment)
        return nmt_cli_usage_error("translate", "--alignment-unit is for --print-alignment"), -1;
    if (a->precision_auto && !a->quiet)
        fprintf(stderr, "nmt translate: --precision auto: %s (%s), the fastest products measured on this CPU\n",
                nmt_packed_precision_name(decode->precision), nmt_packed_kernel_name(decode->precision));
    return 0;
}

static void window_free(line *window, int count) {
    for (int i = 0; i < count; i++) {
        free(window[i].text);
        free(window[i].ids);
        if (window[i].guide) nmt_guide_free(window[i].guide);
        free(window[i].guide);
    }
}

/* 1 when more input can be read at once without waiting (the stream is unbuffered in stream mode, so
 * what poll sees is all there is). */
static int input_ready(FILE *in) {
    struct pollfd p = {.fd = fileno(in), .events = POLLIN};
    return poll(&p, 1, 0) > 0;
}

/* Says what the pipeline did with a line over --max-input-length: cropped it, or emptied it. */
static void warn_overlong(const translate *t, const nmt_lines *in, size_t pieces) {
    const size_t limit = nmt_pipeline_limit(t->pipeline);
    if (t->a.pipe.crop)
        fprintf(stderr, "nmt translate: warning: %s:%ld: %zu pieces; translating the first %zu (--max-input-length)\n",
                in->name, in->number, pieces, limit);
    else
        fprintf(stderr, "nmt translate: warning: %s:%ld: %zu pieces, more than --max-input-length %zu; writing an "
                        "empty line (--max-input-length-crop translates the first %zu)\n",
                in->name, in->number, pieces, limit, limit);
}

/* With --prefix or --constraints, ends the line at its first tab (a line of valid UTF-8; the
 * pipeline reports invalid bytes); *fields is what follows the tab, or NULL. */
static void split_fields(const translate *t, nmt_lines *in, const char **fields, size_t *n) {
    *fields = NULL;
    *n = 0;
    if (!(t->a.prefix || t->a.constraints) || nmt_utf8_invalid_at(in->line, in->len) >= 0) return;
    nmt_guide_split_line(in->line, &in->len, fields, n);
}

/* Sets l->guide from the line's target fields and the glossary terms of its source (none: NULL). */
static int line_guide(translate *t, const nmt_lines *in, line *l, const char *fields, size_t n) {
    nmt_guide *g = &t->guide;
    const nmt_tokenizer *target = nmt_pipeline_target(t->pipeline);
    nmt_guide_reset(g);
    if (fields && nmt_guide_parse(g, target, t->a.prefix, t->a.constraints, fields, n) < 0)
        return nmt_error_prefix("%s:%ld", in->name, in->number);
    if (t->glossary && nmt_glossary_apply(t->glossary, l->text, strlen(l->text), g, target) < 0)
        return nmt_error_prefix("%s:%ld", in->name, in->number);
    const size_t limit = nmt_pipeline_limit(t->pipeline);
    if (nmt_guide_pieces(g) > limit)
        return nmt_error_set("%s:%ld: the target prefix and phrases have %zu pieces, more than --max-input-length %zu",
                             in->name, in->number, nmt_guide_pieces(g), limit);
    if (nmt_guide_pieces(g) == 0) return 0;
    nmt_guide_set_source(g, l->text, strlen(l->text));
    if (!(l->guide = nmt_malloc(sizeof *l->guide))) return -1;
    *l->guide = *g; /* the pieces move to the line; the scratch stays */
    l->guide->scratch = NULL;
    l->guide->scratch_cap = 0;
    g->pieces = NULL;
    g->count = g->cap = 0;
    nmt_guide_finish(l->guide);
    return 0;
}

/* Reads up to `cap` lines into window[], encoded (in stream mode, only those already arrived after
 * the first). Sets *count; *eof at the end. On an error, window[0..*count) holds the lines before it. */
static int read_window(translate *t, nmt_lines *in, line *window, int cap, int stream, int *count, int *eof) {
    int32_t *ids = NULL;
    size_t ids_cap = 0, n_ids = 0, pieces = 0;
    int rc = -1;
    *count = 0;
    while (*count < cap && !(stream && *count > 0 && !input_ready(in->fp))) {
        int r = nmt_lines_next(in);
        if (r < 0) goto done;
        if (r == 0) {
            *eof = 1;
            break;
        }
        const char *fields;
        size_t fields_len;
        split_fields(t, in, &fields, &fields_len);
        int encoded = nmt_pipeline_encode(t->pipeline, in, &ids, &ids_cap, &n_ids, &pieces);
        if (encoded == NMT_PIPELINE_INVALID_UTF8 && t->a.skip_invalid) {
            fprintf(stderr, "nmt translate: warning: %s; writing an empty line\n", nmt_error());
            n_ids = 0;
        } else if (encoded == NMT_PIPELINE_INVALID_UTF8) {
            char message[512];
            snprintf(message, sizeof message, "%s", nmt_error());
            nmt_error_set("%s (--skip-invalid writes an empty line for it instead)", message);
            goto done;
        } else if (encoded < 0) {
            goto done;
        }
        if (encoded == NMT_PIPELINE_OVERLONG) warn_overlong(t, in, pieces);
        line *l = &window[*count];
        memset(l, 0, sizeof *l);
        l->number = in->number;
        l->text = nmt_strdup(encoded >= 0 ? in->line : "");
        l->ids = nmt_malloc((n_ids ? n_ids : 1) * sizeof(int32_t));
        (*count)++;
        if (!l->text || !l->ids) goto done;
        if (n_ids) memcpy(l->ids, ids, n_ids * sizeof(int32_t));
        l->count = (int)n_ids;
        if (n_ids && (fields || t->glossary) && line_guide(t, in, l, fields, fields_len) < 0) {
            window_free(l, 1); /* the failing line is not translated; those before it are */
            (*count)--;
            goto done;
        }
    }
    rc = 0;
done:
    if (rc < 0 && *count > 0 && (!window[*count - 1].text || !window[*count - 1].ids)) {
        free(window[*count - 1].text);
        free(window[*count - 1].ids);
        (*count)--;
    }
    free(ids);
    return rc;
}

/* A hypothesis's alignment pairs into t->pairs; returns their count, or -1. */
static int align(translate *t, const line *l, const nmt_hypothesis *h) {
    if ((size_t)h->length * 2 > t->pairs_cap) {
        int *grown = nmt_realloc(t->pairs, (size_t)h->length * 2 * sizeof *grown);
        if (!grown) return -1;
        t->pairs = grown;
        t->pairs_cap = (size_t)h->length * 2;
    }
    return nmt_pipeline_align(t->pipeline, h, l->ids, l->count, t->a.words, t->pairs);
}

/* Appends " ||| s-t ..." for a hypothesis with attention (nothing after the bars without it). */
static int append_alignment(translate *t, const line *l, const nmt_hypothesis *h) {
    nmt_strbuf_printf(&t->text, " |||");
    int n = align(t, l, h);
    if (n < 0) return -1;
    for (int k = 0; k < n; k++) nmt_strbuf_printf(&t->text, " %d-%d", t->pairs[2 * k], t->pairs[2 * k + 1]);
    return 0;
}

/* Appends the hypothesis as a JSON object: text, score, logprob, confidence, pieces, alignment. */
static int append_json(translate *t, const line *l, const nmt_hypothesis *h) {
    char *text = nmt_pipeline_text(t->pipeline, h);
    if (!text) return -1;
    nmt_strbuf_printf(&t->text, "{\"text\": ");
    nmt_json_append_string(&t->text, text);
    free(text);
    nmt_strbuf_printf(&t->text, ", \"score\": %.6f, \"logprob\": %.6f, \"confidence\": {\"mean_logprob\": %.6f, "
                                "\"alternatives\": %.6f}, \"pieces\": [", h->score, h->logprob, h->mean_logprob,
                      h->alternatives);
    const nmt_tokenizer *target = nmt_pipeline_target(t->pipeline);
    for (int i = 0; i < h->length; i++) {
        if (i) nmt_strbuf_printf(&t->text, ", ");
        nmt_json_append_string(&t->text, target->piece(target->state, h->tokens[i]));
    }
    nmt_strbuf_printf(&t->text, "]");
    if (t->a.print_alignment) {
        int n = align(t, l, h);
        if (n < 0) return -1;
        nmt_strbuf_printf(&t->text, ", \"alignment\": [");
        for (int k = 0; k < n; k++) nmt_strbuf_printf(&t->text, "%s[%d, %d]", k ? ", " : "", t->pairs[2 * k], t->pairs[2 * k + 1]);
        nmt_strbuf_printf(&t->text, "]");
    }
    nmt_strbuf_printf(&t->text, "}");
    return 0;
}

/* Appends " ||| " and the pieces, separated by spaces. */
static void append_pieces(translate *t, const nmt_tokenizer *tokenizer, const int32_t *ids, int n) {
    nmt_strbuf_printf(&t->text, " |||");
    for (int i = 0; i < n; i++) nmt_strbuf_printf(&t->text, " %s", tokenizer->piece(tokenizer->state, ids[i]));
}

/* Appends the detokenized hypothesis and what was asked for after it. */
static int append_hypothesis(translate *t, const line *l, const nmt_hypothesis *h, int scores) {
    char *text = nmt_pipeline_text(t->pipeline, h);
    if (!text) return -1;
    nmt_strbuf_printf(&t->text, "%s", text);
    free(text);
    if (scores) nmt_strbuf_printf(&t->text, " ||| F0= %.6f ||| %.6f", h->logprob, h->score);
    if (t->a.print_alignment && append_alignment(t, l, h) < 0) return -1;
    if (t->a.print_pieces) {
        append_pieces(t, nmt_pipeline_source(t->pipeline), l->ids, l->count);
        append_pieces(t, nmt_pipeline_target(t->pipeline), h->tokens, h->length);
    }
    nmt_strbuf_printf(&t->text, "\n");
    return 0;
}

/* Writes the output of input line `index` (0-based). */
static int write_translation(translate *t, long index, const line *l, const nmt_translation *tr) {
    t->text.len = 0;
    if (t->a.json && t->a.n_best) {
        nmt_strbuf_printf(&t->text, "{\"hypotheses\": [");
        for (int i = 0; i < tr->count; i++) {
            if (i) nmt_strbuf_printf(&t->text, ", ");
            if (append_json(t, l, &tr->hyps[i]) < 0) return -1;
        }
        nmt_strbuf_printf(&t->text, "]}\n");
    } else if (t->a.json) {
        if (append_json(t, l, &tr->hyps[0]) < 0) return -1;
        nmt_strbuf_printf(&t->text, "\n");
    } else if (t->a.n_best) {
        for (int i = 0; i < tr->count; i++) {
            nmt_strbuf_printf(&t->text, "%ld ||| ", index);
            if (append_hypothesis(t, l, &tr->hyps[i], 1) < 0) return -1;
        }
    } else if (append_hypothesis(t, l, &tr->hyps[0], 0) < 0) {
        return -1;
    }
    if (t->text.failed) return nmt_error_set("out of memory formatting a translation");
    return nmt_io_write(t->out, t->text.data, t->text.len, t->out_name);
}

/* "map.svg" for line 7 (0-based) -> "map.7.svg" (the number goes before the extension, if any). */
static char *map_path(const char *path, long number) {
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash) || dot == path || (slash && dot == slash + 1)) dot = path + strlen(path);
    size_t n = strlen(path) + 24;
    char *out = nmt_malloc(n);
    if (out) snprintf(out, n, "%.*s.%ld%s", (int)(dot - path), path, number, dot);
    return out;
}

/* Draws the attention of a line's best hypothesis as a file or on stderr. */
static int draw_map(translate *t, const line *l, long index, const nmt_hypothesis *h) {
    if (!h->attention || l->count == 0) return 0;
    static const char eos[] = "</s>";
    const char **src = nmt_malloc(((size_t)l->count + 1) * sizeof *src);
    const char **tgt = nmt_malloc(((size_t)h->length + 1) * sizeof *tgt);
    nmt_strbuf picture = {0}, title = {0};
    char *path = NULL;
    int rc = -1;
    if (!src || !tgt) goto done;
    const nmt_tokenizer *source = nmt_pipeline_source(t->pipeline), *target = nmt_pipeline_target(t->pipeline);
    for (int i = 0; i < l->count; i++) src[i] = source->piece(source->state, l->ids[i]);
    for (int j = 0; j < h->length; j++) tgt[j] = target->piece(target->state, h->tokens[j]);
    src[l->count] = tgt[h->length] = eos;
    nmt_strbuf_printf(&title, "sentence %ld: %.120s", index, l->text);
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
    path = t->numbered_maps ? map_path(t->a.map, index) : nmt_strdup(t->a.map);
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
    const nmt_decode_guide **guides = nmt_calloc((size_t)count, sizeof *guides);
    int rc = -1;
    if (!src || !len || !out || !guides) goto done;
    for (int i = 0; i < count; i++) {
        src[i] = window[i].ids;
        len[i] = window[i].count;
        guides[i] = window[i].guide ? &window[i].guide->guide : NULL;
    }
    if (nmt_pipeline_translate_guided(t->pipeline, (uint64_t)first_index, count, src, len, guides, out) < 0) goto done;
    for (int i = 0; i < count; i++) {
        if (write_translation(t, first_index + i, &window[i], &out[i]) < 0) goto done;
        if (t->a.map && draw_map(t, &window[i], first_index + i, &out[i].hyps[0]) < 0) goto done;
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
    free(guides);
    return rc;
}

/* --stream's default: on for a terminal, a pipe or a socket, where lines may arrive one by one. */
static int stream_default(FILE *in) {
    struct stat st;
    if (isatty(fileno(in))) return 1;
    return fstat(fileno(in), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

static int run(translate *t) {
    const char *in_name = t->a.input && strcmp(t->a.input, "-") != 0 ? t->a.input : "<stdin>";
    nmt_atomic_file atomic = {0};
    nmt_lines lines = {0};
    line *window = NULL;
    FILE *in = NULL;
    int count = 0, rc = -1, eof = 0, committed = 0;
    nmt_pool_set_threads((int)t->a.threads);
    if (nmt_pipeline_open(&t->pipeline, t->a.model_dir, &t->a.pipe) < 0) return -1;
    if (t->a.glossary && nmt_glossary_load(&t->glossary, t->a.glossary, t->a.glossary_case) < 0) return -1;
    if (!(in = nmt_input_open(t->a.input ? t->a.input : "-"))) return -1;
    t->out = stdout;
    t->out_name = "<stdout>";
    if (t->a.output) {
        if (nmt_atomic_open(&atomic, t->a.output) < 0) goto done;
        t->out = atomic.fp;
        t->out_name = t->a.output;
    }
    /* A window of lines is sorted by length for batching. Streaming reads unbuffered, so that poll
     * tells whether another line has arrived. */
    const int stream = t->a.stream >= 0 ? t->a.stream : stream_default(in);
    if (stream) setvbuf(in, NULL, _IONBF, 0);
    const int cap = 16 * t->a.pipe.decode.batch_size;
    const int show_progress = !t->a.quiet && isatty(STDERR_FILENO);
    window = nmt_calloc((size_t)cap, sizeof *window);
    if (!window) goto done;
    nmt_lines_init(&lines, in, in_name);
    t->start = nmt_now();
    for (long first = 0; !eof; first += count) {
        window_free(window, count);
        count = 0;
        /* The lines read before a failing one are translated and written first, then the error. */
        int read = read_window(t, &lines, window, cap, stream, &count, &eof);
        char error[1024];
        snprintf(error, sizeof error, "%s", read < 0 ? nmt_error() : "");
        if (first == 0) t->numbered_maps = !(eof && count == 1);
        if (count && translate_window(t, window, count, first) < 0) {
            if (strstr(nmt_error(), "out of memory"))
                nmt_error_prefix("translating lines %ld to %ld (--batch-size %d and --beam-size %d set the memory a "
                                 "batch needs; lower them)", first + 1, first + count, t->a.pipe.decode.batch_size,
                                 t->a.pipe.decode.beam_size);
            goto done;
        }
        if (show_progress && count) progress(t, 0);
        if (read < 0) {
            nmt_error_set("%s", error);
            goto done;
        }
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
    if (nmt_input_close(in, in_name) < 0 && rc == 0) rc = -1;
    return rc;
}

int nmt_cmd_translate(int argc, char **argv) {
    translate t;
    memset(&t, 0, sizeof t);
    int parsed = parse_args(argc, argv, &t.a);
    if (parsed != 0) return parsed > 0 ? NMT_EXIT_OK : NMT_EXIT_USAGE;
    int rc = run(&t) < 0 ? nmt_cli_fail("translate") : NMT_EXIT_OK;
    nmt_pipeline_free(t.pipeline);
    nmt_glossary_free(t.glossary);
    nmt_guide_free(&t.guide);
    nmt_strbuf_free(&t.text);
    free(t.pairs);
    return rc;
}
