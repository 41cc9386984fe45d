/* nmt shortlist: builds a model directory's vocabulary shortlist (shortlist.h) from a parallel corpus. */
#include "cli.h"

#include "base/io.h"
#include "base/util.h"
#include "infer/shortlist.h"
#include "train/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char nmt_cmd_shortlist_summary[] = "build the vocabulary shortlist of a model directory";

enum { DEFAULT_K = NMT_SHORTLIST_K, DEFAULT_M = NMT_SHORTLIST_M };

static void usage(FILE *out) {
    fprintf(out,
            "Usage: nmt shortlist -m MODEL_DIR [--src FILE --tgt FILE] [-k K] [--frequent M]\n"
            "\n"
            "Writes MODEL_DIR/" NMT_SHORTLIST_FILE ": for each source piece the K target pieces most associated\n"
            "with it in the training corpus (Dice coefficient of sentence co-occurrence), and the M\n"
            "target pieces in the most sentences. `nmt translate --shortlist` and `nmt bench translate\n"
            "--shortlist` then score, for each batch, only the union of its sentences' candidates (and\n"
            "the M frequent pieces) in the output layer. The corpus is the data.train of the run's\n"
            "config, every corpus of it (MODEL_DIR/config.yaml, or config.resolved.yaml beside a\n"
            "config.yaml of your own), or\n"
            "--src/--tgt, encoded with MODEL_DIR/spm.model. `nmt train` writes one with the\n"
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
            "The defaults were tried on Multi30k En-De val with an early checkpoint of the model\n(docs/performance.md):\n"
            "K 50, M 100 and K 20, M 50 changed none of its 1,014 greedy translations.\n",
            DEFAULT_K, DEFAULT_M);
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
    FILE *progress = quiet ? NULL : stderr;
    int rc;
    if (src) {
        rc = nmt_shortlist_build_dir(model_dir, 1, &src, &tgt, (int)k, (int)m, 0, progress);
    } else {
        nmt_config config;
        rc = nmt_config_load_dir(&config, model_dir);
        if (rc < 0) nmt_error_prefix("no --src/--tgt, and the training corpus cannot be found");
        else rc = nmt_cli_shortlist_from_config(model_dir, &config, (int)k, (int)m, 0, progress);
        nmt_config_free(&config); /* a config that failed to load holds nothing, and frees as one */
    }
    return rc == 0 ? NMT_EXIT_OK : nmt_cli_fail("shortlist");
}
