/* nmt shortlist: builds a model directory's vocabulary shortlist (shortlist.h) from a parallel corpus. */
#include "cli.h"

#include "base/input.h"
#include "base/io.h"
#include "base/util.h"
#include "infer/shortlist.h"
#include "text/spm.h"
#include "train/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char nmt_cmd_shortlist_summary[] = "build the vocabulary shortlist of a model directory";

enum { DEFAULT_K = NMT_CLI_SHORTLIST_K, DEFAULT_M = NMT_CLI_SHORTLIST_M };

static void usage(FILE *out) {
    fprintf(out,
            "Usage: nmt shortlist -m MODEL_DIR [--src FILE --tgt FILE] [-k K] [--frequent M]\n"
            "\n"
            "Writes MODEL_DIR/" NMT_SHORTLIST_FILE ": for each source piece the K target pieces most associated\n"
            "with it in the training corpus (Dice coefficient of sentence co-occurrence), and the M\n"
            "target pieces in the most sentences. `nmt translate --shortlist` and `nmt bench translate\n"
            "--shortlist` then score, for each batch, only the union of its sentences' candidates (and\n"
            "the M frequent pieces) in the output layer. The corpus is MODEL_DIR/config.yaml's\n"
            "data.train, or --src/--tgt, encoded with MODEL_DIR/spm.model. `nmt train` writes one with the\n"
            "defaults when it finishes.\n"
            "\n"
            "  -m, --model DIR       the model directory\n"
            "      --src FILE        source side of the corpus (with --tgt)\n"
            "      --tgt FILE        target side\n"
            "  -k, --k K             candidates per source piece (default %d)\n"
            "      --frequent M      most frequent target pieces always scored (default %d)\n"
            "  -q, --quiet           print only errors\n"
            "  -h, --help            show this help\n"
            "\n"
            "The defaults were tried on Multi30k En-De val with an early checkpoint of the model (README):\n"
            "K 50, M 100 and K 20, M 50 changed none of its 1,014 greedy translations.\n",
            DEFAULT_K, DEFAULT_M);
}

typedef struct side {
    int32_t **ids; /* [count] */
    int *len;
    long count, cap;
} side;

static void side_free(side *s) {
    for (long i = 0; i < s->count; i++) free(s->ids[i]);
    free(s->ids);
    free(s->len);
}

/* Encodes every line of path (text or gzip, as the trainer reads corpora) into s. */
static int read_side(const nmt_spm *spm, const char *path, side *s) {
    FILE *fp = nmt_input_open(path);
    if (!fp) return -1;
    nmt_lines lines;
    nmt_lines_init(&lines, fp, path);
    int rc, status = 0;
    while ((rc = nmt_lines_next(&lines)) == 1) {
        if (s->count == s->cap) {
            const long cap = s->cap ? s->cap * 2 : 4096;
            int32_t **ids = nmt_realloc(s->ids, (size_t)cap * sizeof *ids);
            if (ids) s->ids = ids;
            int *len = ids ? nmt_realloc(s->len, (size_t)cap * sizeof *len) : NULL;
            if (len) s->len = len;
            if (!ids || !len) {
                status = -1;
                break;
            }
            s->cap = cap;
        }
        int32_t *ids = NULL;
        size_t cap = 0, n = 0;
        if (nmt_spm_encode(spm, lines.line, lines.len, &ids, &cap, &n) < 0) {
            free(ids);
            status = nmt_error_prefix("%s:%ld", path, lines.number);
            break;
        }
        s->ids[s->count] = ids;
        s->len[s->count++] = (int)n;
    }
    if (rc < 0) status = -1;
    nmt_lines_free(&lines);
    if (nmt_input_close(fp, path) < 0) status = -1;
    return status;
}

int nmt_cli_shortlist_build(const char *model_dir, const char *src, const char *tgt, int k, int m, int fit, int quiet) {
    int rc = -1;
    nmt_spm *spm = NULL;
    nmt_shortlist *list = NULL;
    side s = {0}, t = {0};
    char *spm_path = nmt_path_join(model_dir, "spm.model"), *out = nmt_path_join(model_dir, NMT_SHORTLIST_FILE);
    if (!spm_path || !out || nmt_spm_load(&spm, spm_path) < 0) goto done;
    if (read_side(spm, src, &s) < 0 || read_side(spm, tgt, &t) < 0) goto done;
    if (s.count != t.count) {
        nmt_error_set("%s has %ld lines but %s has %ld", src, s.count, tgt, t.count);
        goto done;
    }
    const int V = nmt_spm_vocab_size(spm);
    if (fit) {
        k = k < V ? k : V;
        m = m < V ? m : V;
    }
    if (k > V || m > V) {
        nmt_error_set("-k %d or --frequent %d exceeds the vocabulary of %d pieces", k, m, V);
        goto done;
    }
    if (nmt_shortlist_build(&list, V, k, m, s.count, (const int32_t *const *)s.ids, s.len,
                            (const int32_t *const *)t.ids, t.len) < 0 ||
        nmt_shortlist_save(list, out) < 0)
        goto done;
    if (!quiet)
        fprintf(stderr, "nmt shortlist: wrote %s (K %d, M %d, from %ld sentence pairs of %s)\n", out, k, m, s.count, src);
    rc = 0;
done:
    side_free(&s);
    side_free(&t);
    nmt_shortlist_free(list);
    nmt_spm_free(spm);
    free(spm_path);
    free(out);
    return rc;
}

int nmt_cmd_shortlist(int argc, char **argv) {
    enum { OPT_SRC = 256, OPT_TGT, OPT_FREQUENT };
    static const struct option options[] = {
        {"model", required_argument, NULL, 'm'}, {"src", required_argument, NULL, OPT_SRC},
        {"tgt", required_argument, NULL, OPT_TGT}, {"k", required_argument, NULL, 'k'},
        {"frequent", required_argument, NULL, OPT_FREQUENT}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    const char *model_dir = NULL, *src = NULL, *tgt = NULL;
    long k = DEFAULT_K, m = DEFAULT_M;
    int quiet = 0, c;
    optind = 1;
    while ((c = nmt_cli_getopt("shortlist", argc, argv, "m:k:qh", options, NULL)) != -1) {
        switch (c) {
        case 'm': model_dir = optarg; break;
        case OPT_SRC: src = optarg; break;
        case OPT_TGT: tgt = optarg; break;
        case 'k':
            if (nmt_cli_long("shortlist", "-k", optarg, 1, 100000, &k) < 0) return NMT_EXIT_USAGE;
            break;
        case OPT_FREQUENT:
            if (nmt_cli_long("shortlist", "--frequent", optarg, 0, 100000, &m) < 0) return NMT_EXIT_USAGE;
            break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return NMT_EXIT_OK;
        default: return NMT_EXIT_USAGE;
        }
    }
    if (optind < argc) return nmt_cli_usage_error("shortlist", "unexpected argument '%s'", argv[optind]);
    if (!model_dir) return nmt_cli_usage_error("shortlist", "-m MODEL_DIR is required");
    if (!src != !tgt) return nmt_cli_usage_error("shortlist", "--src and --tgt go together");
    nmt_config config;
    int have_config = 0, rc = -1;
    char *config_path = nmt_path_join(model_dir, "config.yaml");
    if (config_path && !src) {
        if (nmt_config_load(&config, config_path, NULL) < 0) {
            nmt_error_prefix("no --src/--tgt, and the training corpus cannot be found");
        } else {
            have_config = 1;
            src = config.train.src;
            tgt = config.train.tgt;
        }
    }
    if (config_path && src) rc = nmt_cli_shortlist_build(model_dir, src, tgt, (int)k, (int)m, 0, quiet);
    if (have_config) nmt_config_free(&config);
    free(config_path);
    return rc == 0 ? NMT_EXIT_OK : nmt_cli_fail("shortlist");
}
