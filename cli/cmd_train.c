/* nmt train: train a model from a YAML config (see nmt/train.h for the model directory it makes). */
#include "cli.h"

#include "base/comm.h"
#include "infer/shortlist.h"
#include "train/config.h"
#include "train/train.h"
#include "base/util.h"

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
            "Under `mpirun -np N nmt train CONFIG.yaml` the N processes train one model together: each computes\n"
            "its share of every step's update_freq x train.batch_pieces pieces and the parameters are bit for bit\n"
            "those of one process (rank 0 writes the output directory; N may be at most the pieces of a step).\n"
            "\n"
            "Fine-tuning: `train.init_from: MODEL_DIR` starts a fresh run (new schedule, new data) from that\n"
            "model's weights and vocabulary; another architecture or vocabulary is refused.\n"
            "\n"
            "Precision: `train.precision: bf16` multiplies in bfloat16 with float32 sums (master weights,\n"
            "gradients, Adam, norms, softmax and loss stay float32), only where this CPU's bf16 products\n"
            "measure at least 1.3x fp32's (AMD Zen 4: 2-2.8x, Zen 5: 1.5x; Intel Xeons without AMX: 0.65x,\n"
            "refused with the rates); `auto` takes bf16 where it pays and fp32 elsewhere; fp32 is the default.\n"
            "The measurement wants a quiet machine: other processes' load can flip it, and the choice says\n"
            "when the machine was busy. Under `auto` a resumed run keeps the precision it started in.\n"
            "\n"
            "Options:\n"
            "      --set KEY=VALUE  override a config key, e.g. --set train.optimizer.lr=5e-4 (repeatable)\n"
            "      --threads N      threads for the kernels (default: the CPUs this process may use;\n"
            "                       alias --cpu-threads)\n"
            "      --overwrite      start again from step 0, even over a trained model or checkpoints:\n"
            "                       the old run's model, vocabulary, shortlist and checkpoints are\n"
            "                       deleted (without it, a directory holding a model or checkpoints but\n"
            "                       no usable one is refused; one with checkpoints resumes)\n"
            "  -q, --quiet          print only errors\n"
            "  -h, --help           show this help\n"
            "\n"
            "SIGINT or SIGTERM finishes the current step, writes a checkpoint and exits with 130 (SIGINT)\n"
            "or 143 (SIGTERM), as a shell reports a signal, so `nmt train c.yaml && next` does not go on\n"
            "with a half-trained model (a second signal stops at once; the last checkpoint is kept).\n"
            "train.log.jsonl records start, resume and stop events, the stop with its reason (max_steps,\n"
            "max_epochs, max_minutes, patience, signal, error). A closed progress pipe never ends a run.\n"
            "\n"
            "Exit status: 0 finished, 1 failure, 2 usage error, 130/143 interrupted (resumable).\n");
}

static volatile sig_atomic_t stop_requested; /* the signal that asked to stop, 0: none */

static void on_signal(int sig) { stop_requested = sig; }

int nmt_cmd_train(int argc, char **argv) {
    static const struct option longopts[] = {
        {"set", required_argument, NULL, 's'},
        {"threads", required_argument, NULL, 't'},
        {"cpu-threads", required_argument, NULL, 't'},
        {"quiet", no_argument, NULL, 'q'},
        {"overwrite", no_argument, NULL, 'O'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char **overrides = nmt_calloc((size_t)argc + 1, sizeof *overrides);
    if (!overrides) return nmt_cli_fail("train");
    int num_overrides = 0, quiet = 0, overwrite = 0, status = NMT_EXIT_USAGE;
    long threads = nmt_cli_threads_default();
    static const int repeatable[] = {'s', 0};
    int c;
    optind = 1;
    while ((c = nmt_cli_getopt("train", argc, argv, "qh", longopts, repeatable)) != -1) {
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
        default: goto done;
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
    nmt_comm comm;
    if (nmt_comm_init(&comm) < 0) {
        status = nmt_cli_fail("train");
        nmt_config_free(&config);
        goto done;
    }
    nmt_train_options options = {
        .threads = (int)threads,
        .progress = quiet || comm.rank > 0 ? NULL : stderr, /* rank 0 speaks for the run */
        .warnings = comm.rank > 0 ? NULL : stderr,
        .stop = &stop_requested,
        .comm = &comm,
        .overwrite = overwrite,
    };
    nmt_train_result result;
    status = nmt_train(&config, &options, &result) < 0 ? NMT_EXIT_FAILURE : NMT_EXIT_OK;
    const int interrupted = status == NMT_EXIT_OK && strcmp(result.stopped_by, "signal") == 0;
    /* The vocabulary shortlist of the trained model (`nmt shortlist`), by rank 0, unless stopped by a signal. */
    if (status == NMT_EXIT_OK && !interrupted && comm.rank == 0 &&
        nmt_cli_shortlist_from_config(config.output, &config, NMT_SHORTLIST_K, NMT_SHORTLIST_M, 1,
                                      quiet ? NULL : stderr) < 0)
        status = NMT_EXIT_FAILURE;
    nmt_config_free(&config);
    if (status != NMT_EXIT_OK && comm.size > 1) {
        /* The others may be waiting for this rank in a collective: end them all. */
        fprintf(stderr, "nmt train: rank %d of %d on host %s: %s\n", comm.rank, comm.size, comm.host, nmt_error());
        fflush(stderr);
        free(overrides);
        nmt_comm_abort(&comm, NMT_EXIT_FAILURE);
    }
    if (status != NMT_EXIT_OK) nmt_cli_fail("train");
    nmt_comm_finalize(&comm);
    /* As a shell reports the signal; a rank that only heard of it from rank 0 reports SIGTERM. */
    if (interrupted) status = 128 + (stop_requested ? (int)stop_requested : SIGTERM);
done:
    free(overrides);
    return status;
}
