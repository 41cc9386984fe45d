/* nmt train: train a model from a YAML config (see nmt/train.h for the model directory it makes). */
#include "cli.h"

#include "train/config.h"
#include "train/train.h"
#include "base/util.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char nmt_cmd_train_summary[] = "train a model from a YAML config (resumes an interrupted run)";

static void usage(FILE *out) {
    fprintf(out,
            "Usage: nmt train CONFIG.yaml [--set section.key=value ...] [--threads N] [--overwrite] [--quiet]\n"
            "\n"
            "Trains the Transformer described by CONFIG.yaml into its output directory, a model directory\n"
            "for `nmt translate -m DIR`: model.safetensors (best by validation BLEU), spm.model, config.yaml,\n"
            "train.log.jsonl and checkpoints/. Running it again on the same output directory resumes from the\n"
            "newest checkpoint, exactly as if training had never stopped.\n"
            "\n"
            "Options:\n"
            "  --set KEY=VALUE  override a config key, e.g. --set train.optimizer.lr=5e-4 (repeatable)\n"
            "  --threads N      threads for the kernels (default 2)\n"
            "  --overwrite      start again from step 0 in an output directory that holds a trained model\n"
            "                   but no usable checkpoint (refused without it)\n"
            "  --quiet          print only errors\n"
            "  --help           show this help\n"
            "\n"
            "SIGINT or SIGTERM finishes the current step, writes a checkpoint and exits 0 (a second one\n"
            "stops at once; the last checkpoint is kept).\n");
}

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

int nmt_cmd_train(int argc, char **argv) {
    static const struct option longopts[] = {
        {"set", required_argument, NULL, 's'},
        {"threads", required_argument, NULL, 't'},
        {"quiet", no_argument, NULL, 'q'},
        {"overwrite", no_argument, NULL, 'O'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char **overrides = nmt_calloc((size_t)argc + 1, sizeof *overrides);
    if (!overrides) return nmt_cli_fail("train");
    int num_overrides = 0, quiet = 0, overwrite = 0, status = NMT_EXIT_USAGE;
    long threads = 2;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (!strchr(optarg, '=')) {
                nmt_cli_usage_error("train", "--set expects section.key=value, got '%s'", optarg);
                goto done;
            }
            overrides[num_overrides++] = optarg;
            break;
        case 't':
            if (nmt_cli_long("train", "--threads", optarg, 1, 256, &threads) < 0) goto done;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'O':
            overwrite = 1;
            break;
        case 'h':
            usage(stdout);
            status = NMT_EXIT_OK;
            goto done;
        default:
            nmt_cli_usage_error("train", "unknown or incomplete option '%s'", argv[optind - 1]);
            goto done;
        }
    }
    if (optind != argc - 1) {
        if (optind == argc) nmt_cli_usage_error("train", "missing CONFIG.yaml");
        else nmt_cli_usage_error("train", "expected one config file, got %d", argc - optind);
        goto done;
    }
    nmt_config config;
    int loaded = nmt_config_load(&config, argv[optind], overrides);
    if (loaded == NMT_CONFIG_BAD_OVERRIDE) {
        nmt_cli_usage_error("train", "%s", nmt_error());
        goto done;
    }
    if (loaded < 0) {
        status = nmt_cli_fail("train");
        goto done;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND; /* a second signal takes the default action: stop at once */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a closed progress pipe (`| head`) must not kill hours of training */
    nmt_train_options options = {
        .threads = (int)threads,
        .progress = quiet ? NULL : stderr,
        .warnings = stderr,
        .stop = &stop_requested,
        .overwrite = overwrite,
    };
    nmt_train_result result;
    status = nmt_train(&config, &options, &result) < 0 ? nmt_cli_fail("train") : NMT_EXIT_OK;
    /* The vocabulary shortlist of the trained model (`nmt shortlist`), unless stopped by a signal. */
    if (status == NMT_EXIT_OK && !stop_requested &&
        nmt_cli_shortlist_build(config.output, config.train.src, config.train.tgt, NMT_CLI_SHORTLIST_K,
                                NMT_CLI_SHORTLIST_M, 1, quiet) < 0)
        status = nmt_cli_fail("train");
    nmt_config_free(&config);
done:
    free(overrides);
    return status;
}
