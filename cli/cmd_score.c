/* nmt score: the model's log-probability of given translations (forced decoding), one a line.
 *
 * Each side of a pair is bounded as `nmt translate` bounds a line (infer/pipeline.h): a side of more
 * than --max-input-length pieces gets a warning naming file:line and the pair "nan" (or, with
 * --max-input-length-crop, the score of its first pieces), so that no line makes it ask for more
 * memory than the bound allows.
 */
#include "cli.h"

#include "infer/forced.h"
#include "infer/pipeline.h"
#include "base/input.h"
#include "base/io.h"
#include "compute/gemm.h"
#include "compute/pool.h"
#include "text/spm.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char nmt_cmd_score_summary[] = "score translations with a model (log-probability per sentence pair)";

static void usage(FILE *out) {
    fprintf(out,
            "Usage: nmt score -m MODEL_DIR -s SRC -t TGT [options]\n"
            "\n"
            "Writes one line per sentence pair: the natural-log probability of the target's pieces and\n"
            "eos given the source (evaluation mode: no dropout, no label smoothing). For rescoring\n"
            "n-best lists, and for checking nmt's numbers with other tools.\n"
            "\n"
            "  -m, --model DIR        model directory written by `nmt train`, or a model file or\n"
            "                         checkpoint (as nmt translate -m takes them)\n"
            "  -s, --source FILE      source sentences, one a line (`-` = stdin; gzip files are read)\n"
            "  -t, --target FILE      target sentences, as many lines (the same)\n"
            "      --normalize        divide by the number of target tokens (pieces + eos)\n"
            "      --tokens           append ` ||| ` and the log-probability of each target piece and\n"
            "                         of eos (as CTranslate2's --with_tokens_score)\n"
            "      --batch-size N     pairs scored together (default 32)\n"
            "      --precision P      fp32 (default) or bf16: the products' arithmetic (bf16: bfloat16\n"
            "                         operands, float32 sums, as train.precision bf16; needs AVX512_BF16:\n"
            "                         about 1.8x faster, log-probabilities within about 1%% of fp32's)\n"
            "      --max-input-length N  a pair with a side of more than N pieces is not scored: `nan` is\n"
            "                         written, with a warning naming the line (default %d, as nmt\n"
            "                         translate's)\n"
            "      --max-input-length-crop  score the first N pieces of such a side instead\n"
            "      --loss-json FILE   also write the training objective on these pairs to FILE:\n"
            "                         {\"tokens\": N, \"loss_sum\": X, \"nll_sum\": Y} (label-smoothed and\n"
            "                         plain cross-entropy summed over target pieces + eos; for comparing\n"
            "                         nmt with tools/bench/torch_reference.py)\n"
            "      --label-smoothing E  epsilon of that loss (default 0.1)\n"
            "      --threads N        threads (default: the CPUs this process may use; alias\n"
            "                         --cpu-threads)\n"
            "  -q, --quiet            accepted: score reports nothing but errors on stderr\n"
            "  -h, --help             show this help\n",
            nmt_pipeline_options_default().max_input_length);
}

enum { WINDOW = 1024 };

/* One side of a window of pairs. */
typedef struct side {
    nmt_lines lines;
    FILE *fp;
    int32_t *ids[WINDOW];
    int count[WINDOW];
} side;

/* How a side is encoded and bounded. */
typedef struct bound {
    nmt_tokenizer tokenizer;
    size_t limit;
    int crop;
} bound;

/* Reads and encodes the next line of one side into slot i; 1 = read, 0 = end, -1 = error. Sets
 * *skip when the line is over the bound and not cropped. */
static int read_side(const bound *b, side *s, int i, int32_t **ids, size_t *cap, int *skip) {
    int r = nmt_lines_next(&s->lines);
    if (r <= 0) return r;
    size_t n = 0, pieces = 0;
    r = nmt_pipeline_encode_with(&b->tokenizer, b->limit, b->crop, &s->lines, ids, cap, &n, &pieces);
    if (r < 0) return -1;
    if (r == NMT_PIPELINE_OVERLONG && b->crop)
        fprintf(stderr, "nmt score: warning: %s:%ld: %zu pieces; scoring the first %zu (--max-input-length)\n",
                s->lines.name, s->lines.number, pieces, b->limit);
    else if (r == NMT_PIPELINE_OVERLONG)
        fprintf(stderr, "nmt score: warning: %s:%ld: %zu pieces, more than --max-input-length %zu; writing nan "
                        "(--max-input-length-crop scores the first %zu)\n",
                s->lines.name, s->lines.number, pieces, b->limit, b->limit);
    if (r == NMT_PIPELINE_OVERLONG && !b->crop) *skip = 1;
    free(s->ids[i]);
    s->ids[i] = nmt_malloc((n ? n : 1) * sizeof(int32_t));
    if (!s->ids[i]) return -1;
    if (n) memcpy(s->ids[i], *ids, n * sizeof(int32_t));
    s->count[i] = (int)n;
    return 1;
}

typedef struct score_options {
    const char *model_dir;
    int normalize, tokens, batch_size, max_input_length, crop;
    nmt_precision precision; /* of the products: fp32 or bf16 */
    long threads;
    const char *loss_json;  /* NULL: no loss */
    double label_smoothing;
} score_options;

static int write_loss(const char *path, const nmt_loss *loss) {
    char text[160];
    int len = snprintf(text, sizeof text, "{\"tokens\": %ld, \"loss_sum\": %.17g, \"nll_sum\": %.17g}\n", loss->tokens,
                       loss->loss_sum, loss->nll_sum);
    return nmt_atomic_write(path, text, (size_t)len);
}

/* Moves the pairs not skipped to the front of both sides (order kept); returns their count. */
static int compact(side *src, side *tgt, const int *skip, int n) {
    int kept = 0;
    for (int i = 0; i < n; i++) {
        if (skip[i]) continue;
        int32_t *a = src->ids[kept], *b = tgt->ids[kept];
        const int ca = src->count[kept], cb = tgt->count[kept];
        src->ids[kept] = src->ids[i], src->count[kept] = src->count[i];
        tgt->ids[kept] = tgt->ids[i], tgt->count[kept] = tgt->count[i];
        src->ids[i] = a, src->count[i] = ca;
        tgt->ids[i] = b, tgt->count[i] = cb;
        kept++;
    }
    return kept;
}

static int score_all(const score_options *o, side *src, side *tgt) {
    nmt_model model;
    memset(&model, 0, sizeof model);
    nmt_spm *spm = NULL;
    char *dir = NULL;
    int32_t *ids = NULL;
    size_t cap = 0;
    static double scores[WINDOW];
    static int skip[WINDOW];
    static float *tokens[WINDOW];
    char text[64];
    int rc = -1;
    nmt_loss total = {0};
    nmt_precision fp32 = NMT_PRECISION_FP32;
    if (nmt_pipeline_load(o->model_dir, 1, 0, &fp32, &model, &spm, &dir) < 0) goto done;
    nmt_pool_set_threads((int)o->threads);
    if (o->precision == NMT_PRECISION_BF16 && nmt_gemm_set_sgemm_bf16(1) < 0) goto done;
    const size_t limit = nmt_pipeline_input_limit(&model.config, o->max_input_length);
    const bound source = {nmt_tokenizer_spm(spm), limit, o->crop}, target = {nmt_tokenizer_spm_target(spm), limit, o->crop};
    for (int eof = 0; !eof;) {
        int n = 0;
        while (n < WINDOW) {
            skip[n] = 0;
            int a = read_side(&source, src, n, &ids, &cap, &skip[n]);
            if (a < 0) goto done;
            int b_read = read_side(&target, tgt, n, &ids, &cap, &skip[n]);
            if (b_read < 0) goto done;
            if (a != b_read) {
                const side *longer = a ? src : tgt, *shorter = a ? tgt : src;
                nmt_error_set("%s has more lines than %s, which ends after line %ld", longer->lines.name,
                              shorter->lines.name, shorter->lines.number);
                goto done;
            }
            if (!a) {
                eof = 1;
                break;
            }
            n++;
        }
        const int kept = compact(src, tgt, skip, n);
        for (int i = 0; o->tokens && i < kept; i++) {
            free(tokens[i]);
            if (!(tokens[i] = nmt_malloc(((size_t)tgt->count[i] + 1) * sizeof(float)))) goto done;
        }
        if (nmt_forced_score_tokens(&model, kept, (const int32_t *const *)src->ids, src->count,
                                    (const int32_t *const *)tgt->ids, tgt->count, o->batch_size, scores,
                                    o->tokens ? tokens : NULL) < 0)
            goto done;
        if (o->loss_json) {
            nmt_loss loss;
            if (nmt_forced_loss(&model, kept, (const int32_t *const *)src->ids, src->count, (const int32_t *const *)tgt->ids,
                                tgt->count, o->batch_size, o->label_smoothing, &loss) < 0)
                goto done;
            total.loss_sum += loss.loss_sum;
            total.nll_sum += loss.nll_sum;
            total.tokens += loss.tokens;
        }
        for (int i = 0, k = 0; i < n; i++) {
            int len;
            if (skip[i]) {
                len = snprintf(text, sizeof text, "nan\n");
            } else {
                const double value = o->normalize ? scores[k] / (tgt->count[k] + 1) : scores[k];
                len = snprintf(text, sizeof text, "%.6f%s", value, o->tokens ? " |||" : "\n");
                if (nmt_io_write(stdout, text, (size_t)len, "<stdout>") < 0) goto done;
                for (int j = 0; o->tokens && j <= tgt->count[k]; j++) {
                    len = snprintf(text, sizeof text, " %.6g%s", (double)tokens[k][j], j == tgt->count[k] ? "\n" : "");
                    if (nmt_io_write(stdout, text, (size_t)len, "<stdout>") < 0) goto done;
                }
                k++;
                continue;
            }
            if (nmt_io_write(stdout, text, (size_t)len, "<stdout>") < 0) goto done;
        }
        if (fflush(stdout) != 0) {
            nmt_error_set("<stdout>: write failed: %s", strerror(errno));
            goto done;
        }
    }
    rc = o->loss_json ? write_loss(o->loss_json, &total) : 0;
done:
    for (int i = 0; i < WINDOW; i++) {
        free(tokens[i]);
        tokens[i] = NULL;
    }
    free(ids);
    free(dir);
    nmt_spm_free(spm);
    nmt_model_free(&model);
    nmt_gemm_set_sgemm_bf16(0);
    return rc;
}

int nmt_cmd_score(int argc, char **argv) {
    static const struct option options[] = {
        {"model", required_argument, NULL, 'm'},  {"source", required_argument, NULL, 's'},
        {"target", required_argument, NULL, 't'}, {"normalize", no_argument, NULL, 'n'},
        {"tokens", no_argument, NULL, 'k'},
        {"batch-size", required_argument, NULL, 'b'}, {"threads", required_argument, NULL, 'T'},
        {"loss-json", required_argument, NULL, 'L'}, {"label-smoothing", required_argument, NULL, 'e'},
        {"quiet", no_argument, NULL, 'q'},        {"cpu-threads", required_argument, NULL, 'T'},
        {"max-input-length", required_argument, NULL, 'M'}, {"max-input-length-crop", no_argument, NULL, 'C'},
        {"precision", required_argument, NULL, 'P'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *paths[2] = {NULL, NULL};
    long batch = 32, threads = nmt_cli_threads_default();
    score_options o = {.label_smoothing = 0.1, .max_input_length = nmt_pipeline_options_default().max_input_length,
                       .precision = NMT_PRECISION_FP32};
    long max_input = o.max_input_length;
    optind = 1;
    int c;
    while ((c = nmt_cli_getopt("score", argc, argv, "m:s:t:qh", options, NULL)) != -1) {
        switch (c) {
        case 'm': o.model_dir = optarg; break;
        case 's': paths[0] = optarg; break;
        case 't': paths[1] = optarg; break;
        case 'n': o.normalize = 1; break;
        case 'k': o.tokens = 1; break;
        case 'L': o.loss_json = optarg; break;
        case 'e':
            if (nmt_cli_double("score", "--label-smoothing", optarg, 0.0, 1.0, &o.label_smoothing) < 0)
                return NMT_EXIT_USAGE;
            break;
        case 'b':
            if (nmt_cli_long("score", "--batch-size", optarg, 1, 4096, &batch) < 0) return NMT_EXIT_USAGE;
            break;
        case 'T':
            if (nmt_cli_long("score", "--threads", optarg, 1, 1024, &threads) < 0) return NMT_EXIT_USAGE;
            break;
        case 'M':
            if (nmt_cli_long("score", "--max-input-length", optarg, 1, 1000000, &max_input) < 0) return NMT_EXIT_USAGE;
            break;
        case 'C': o.crop = 1; break;
        case 'P':
            if (strcmp(optarg, "fp32") != 0 && strcmp(optarg, "bf16") != 0)
                return nmt_cli_usage_error("score", "--precision: expected fp32 or bf16, got '%s'", optarg);
            if (nmt_cli_precision("score", optarg, &o.precision) < 0) return NMT_EXIT_USAGE;
            break;
        case 'h': usage(stdout); return NMT_EXIT_OK;
        case 'q': break; /* score prints nothing but its results and errors */
        default: return NMT_EXIT_USAGE;
        }
    }
    if (optind < argc) return nmt_cli_usage_error("score", "unexpected argument '%s'", argv[optind]);
    if (!o.model_dir || !paths[0] || !paths[1]) return nmt_cli_usage_error("score", "--model, --source and --target are required");
    const char *inputs[] = {paths[0], paths[1], NULL};
    if (o.loss_json && nmt_cli_output("score", "--loss-json", o.loss_json, inputs, NULL) < 0) return NMT_EXIT_USAGE;
    static side sides[2];
    int rc = NMT_EXIT_OK;
    memset(sides, 0, sizeof sides);
    for (int i = 0; i < 2; i++) {
        if (i == 1 && strcmp(paths[0], "-") == 0 && strcmp(paths[1], "-") == 0) {
            rc = nmt_cli_usage_error("score", "--source and --target cannot both be standard input");
            goto done;
        }
        sides[i].fp = nmt_input_open(paths[i]);
        if (!sides[i].fp) {
            rc = nmt_cli_fail("score");
            goto done;
        }
        nmt_lines_init(&sides[i].lines, sides[i].fp, paths[i]);
    }
    o.batch_size = (int)batch;
    o.max_input_length = (int)max_input;
    o.threads = threads;
    if (score_all(&o, &sides[0], &sides[1]) < 0) rc = nmt_cli_fail("score");
done:
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < WINDOW; j++) free(sides[i].ids[j]);
        nmt_lines_free(&sides[i].lines);
        if (sides[i].fp) nmt_input_close(sides[i].fp, paths[i]);
    }
    return rc;
}
