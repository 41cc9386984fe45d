/* nmt average: the element-wise mean of the parameters of models or checkpoints of one config. */
#include "cli.h"

#include "model/model_file.h"
#include "base/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

const char nmt_cmd_average_summary[] = "average the parameters of models or checkpoints";

static void usage(FILE *out) {
    fprintf(out,
            "Usage: nmt average -o OUT.safetensors MODEL.safetensors...\n"
            "       nmt average -o OUT.safetensors --last N MODEL_DIR\n"
            "\n"
            "Writes a model file whose parameters are the element-wise mean of those of the given model\n"
            "files or checkpoints (which must share one model config; a checkpoint's optimizer state is\n"
            "ignored). With --last N, averages the N latest checkpoints in MODEL_DIR/checkpoints/.\n"
            "\n"
            "  -o, --output FILE    the averaged model file to write\n"
            "  -l, --last N         average the last N checkpoints of MODEL_DIR\n"
            "  -q, --quiet          print only errors\n"
            "  -h, --help           show this help\n");
}

int nmt_cmd_average(int argc, char **argv) {
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'},
        {"last", required_argument, NULL, 'l'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL;
    long last = 0;
    int quiet = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:l:qh", options, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'l':
            if (nmt_cli_long("average", "--last", optarg, 1, 1000000, &last) < 0) return NMT_EXIT_USAGE;
            break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return NMT_EXIT_OK;
        case ':': return nmt_cli_usage_error("average", "%s needs a value", argv[optind - 1]);
        default: return nmt_cli_usage_error("average", "unknown option '%s'", argv[optind - 1]);
        }
    }
    int inputs = argc - optind;
    if (!output) return nmt_cli_usage_error("average", "--output is required");
    if (last && inputs != 1) return nmt_cli_usage_error("average", "--last N takes one model directory");
    if (!last && inputs < 1) return nmt_cli_usage_error("average", "no models to average");

    char **checkpoints = NULL;
    const char *const *paths = (const char *const *)argv + optind;
    int count = inputs;
    if (last) {
        if (nmt_model_checkpoints(argv[optind], &checkpoints, &count) < 0) return nmt_cli_fail("average");
        if (count < last) {
            nmt_model_paths_free(checkpoints);
            nmt_error_set("%s/checkpoints holds %d checkpoint%s, fewer than --last %ld", argv[optind], count,
                          count == 1 ? "" : "s", last);
            return nmt_cli_fail("average");
        }
        paths = (const char *const *)checkpoints + (count - last);
        count = (int)last;
    }
    if (nmt_cli_output("average", "--output", output, paths, NULL) < 0) {
        nmt_model_paths_free(checkpoints);
        return NMT_EXIT_USAGE;
    }
    int rc = nmt_model_average(paths, count, output);
    if (rc == 0 && !quiet) {
        fprintf(stderr, "nmt average: wrote %s, the mean of %d model%s:\n", output, count, count == 1 ? "" : "s");
        for (int i = 0; i < count; i++) fprintf(stderr, "  %s\n", paths[i]);
    }
    nmt_model_paths_free(checkpoints);
    return rc == 0 ? NMT_EXIT_OK : nmt_cli_fail("average");
}
