/* nmt score: the model's log-probability of given translations (forced decoding), one a line. */
#include "cli.h"

#include "infer/forced.h"
#include "base/input.h"
#include "base/io.h"
#include "compute/pool.h"
#include "model/model_dir.h"
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
            "  -m, --model DIR        model directory written by `nmt train`\n"
            "  -s, --source FILE      source sentences, one a line (`-` = stdin; gzip files are read)\n"
            "  -t, --target FILE      target sentences, as many lines (the same)\n"
            "      --normalize        divide by the number of target tokens (pieces + eos)\n"
            "      --tokens           append ` ||| ` and the log-probability of each target piece and\n"
            "                         of eos (as CTranslate2's --with_tokens_score)\n"
            "      --batch-size N     pairs scored together (default 32)\n"
            "      --loss-json FILE   also write the training objective on these pairs to FILE:\n"
            "                         {\"tokens\": N, \"loss_sum\": X, \"nll_sum\": Y} (label-smoothed and\n"
            "                         plain cross-entropy summed over target pieces + eos; for comparing\n"
            "                         nmt with tools/bench/torch_reference.py)\n"
            "      --label-smoothing E  epsilon of that loss (default 0.1)\n"
            "      --threads N        threads (default: the CPUs this process may use; alias\n"
            "                         --cpu-threads)\n"
            "  -q, --quiet            accepted: score reports nothing but errors on stderr\n"
            "  -h, --help             show this help\n");
}

enum { WINDOW = 1024 };

/* One side of a window of pairs. */
typedef struct side {
    nmt_lines lines;
    FILE *fp;
    int32_t *ids[WINDOW];
    int count[WINDOW];
} side;

/* Reads and encodes the next line of one side into slot i; 1 = read, 0 = end, -1 = error. */
static int read_side(const nmt_model *model, const nmt_spm *spm, side *s, int i, int target, int32_t **ids,
                     size_t *cap) {
    int r = nmt_lines_next(&s->lines);
    if (r <= 0) return r;
    size_t n = 0;
    if ((target ? nmt_model_dir_encode_target_line : nmt_model_dir_encode_line)(model, spm, &s->lines, ids, cap, &n) < 0)
        return -1;
    free(s->ids[i]);
    s->ids[i] = nmt_malloc((n ? n : 1) * sizeof(int32_t));
    if (!s->ids[i]) return -1;
    if (n) memcpy(s->ids[i], *ids, n * sizeof(int32_t));
    s->count[i] = (int)n;
    return 1;
}

typedef struct score_options {
    const char *model_dir;
    int normalize, tokens, batch_size;
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

static int score_all(const score_options *o, side *src, side *tgt) {
    nmt_model model;
    memset(&model, 0, sizeof model);
    nmt_spm *spm = NULL;
    int32_t *ids = NULL;
    size_t cap = 0;
    double scores[WINDOW];
    static float *tokens[WINDOW];
    char text[64];
    int rc = -1;
    nmt_loss total = {0};
    if (nmt_model_dir_open(o->model_dir, &model, &spm) < 0) goto done;
    nmt_pool_set_threads((int)o->threads);
    for (int eof = 0; !eof;) {
        int n = 0;
        while (n < WINDOW) {
            int a = read_side(&model, spm, src, n, 0, &ids, &cap);
            if (a < 0) goto done;
            int b = read_side(&model, spm, tgt, n, 1, &ids, &cap);
            if (b < 0) goto done;
            if (a != b) {
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
        for (int i = 0; o->tokens && i < n; i++) {
            free(tokens[i]);
            if (!(tokens[i] = nmt_malloc(((size_t)tgt->count[i] + 1) * sizeof(float)))) goto done;
        }
        if (nmt_forced_score_tokens(&model, n, (const int32_t *const *)src->ids, src->count,
                                    (const int32_t *const *)tgt->ids, tgt->count, o->batch_size, scores,
                                    o->tokens ? tokens : NULL) < 0)
            goto done;
        if (o->loss_json) {
            nmt_loss loss;
            if (nmt_forced_loss(&model, n, (const int32_t *const *)src->ids, src->count, (const int32_t *const *)tgt->ids,
                                tgt->count, o->batch_size, o->label_smoothing, &loss) < 0)
                goto done;
            total.loss_sum += loss.loss_sum;
            total.nll_sum += loss.nll_sum;
            total.tokens += loss.tokens;
        }
        for (int i = 0; i < n; i++) {
            double value = o->normalize ? scores[i] / (tgt->count[i] + 1) : scores[i];
            int len = snprintf(text, sizeof text, "%.6f%s", value, o->tokens ? " |||" : "\n");
            if (nmt_io_write(stdout, text, (size_t)len, "<stdout>") < 0) goto done;
            for (int j = 0; o->tokens && j <= tgt->count[i]; j++) {
                len = snprintf(text, sizeof text, " %.6g%s", (double)tokens[i][j], j == tgt->count[i] ? "\n" : "");
                if (nmt_io_write(stdout, text, (size_t)len, "<stdout>") < 0) goto done;
            }
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
    nmt_spm_free(spm);
    nmt_model_free(&model);
    return rc;
}

int nmt_cmd_score(int argc, char **argv) {
    static const struct option options[] = {
        {"model", required_argument, NULL, 'm'},  {"source", required_argument, NULL, 's'},
        {"target", required_argument, NULL, 't'}, {"normalize", no_argument, NULL, 'n'},
        {"batch-size", required_argument, NULL, 'b'}, {"threads", required_argument, NULL, 'T'},
        {"loss-json", required_argument, NULL, 'L'}, {"label-smoothing", required_argument, NULL, 'e'},
        {"quiet", no_argument, NULL, 'q'},        {"cpu-threads", required_argument, NULL, 'T'},
        {"tokens", no_argument, NULL, 'k'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *paths[2] = {NULL, NULL};
    long batch = 32, threads = nmt_cli_threads_default();
    score_options o = {.label_smoothing = 0.1};
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
