/* nmt plot: training curves of one or more model directories as an SVG picture. */
#include "cli.h"

#include "viz/curves.h"
#include "base/io.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char nmt_cmd_plot_summary[] = "draw training curves (loss, BLEU) of model directories as SVG";

static void usage(FILE *out) {
    fprintf(out,
            "Usage: nmt plot [options] -o OUT.svg MODEL_DIR...\n"
            "\n"
            "Draws the training curves logged in each MODEL_DIR/train.log.jsonl (a log file may be given\n"
            "instead of its directory): one panel per metric, stacked, every run in its own colour and\n"
            "named in the legend by its directory's base name.\n"
            "\n"
            "  -o, --output FILE     the SVG file to write, named *.svg ('-' = stdout)\n"
            "  -x, --x AXIS          minutes (training wall-clock time, default) or steps\n"
            "  -m, --metrics LIST    comma-separated panels, top to bottom, from train_loss, val_loss,\n"
            "                        val_ppl, val_bleu, lr, tokens_per_s (default train_loss,val_loss,val_bleu)\n"
            "  -t, --title TEXT      a title above the legend\n"
            "  -q, --quiet           print only errors\n"
            "  -h, --help            show this help\n");
}

int nmt_cmd_plot(int argc, char **argv) {
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'}, {"x", required_argument, NULL, 'x'},
        {"metrics", required_argument, NULL, 'm'}, {"title", required_argument, NULL, 't'},
        {"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    nmt_curves_metric metrics[NMT_CURVES_NUM_METRICS] = {NMT_CURVES_TRAIN_LOSS, NMT_CURVES_VAL_LOSS, NMT_CURVES_VAL_BLEU};
    nmt_curves_options opts = {.axis = NMT_CURVES_MINUTES, .metrics = metrics, .num_metrics = 3};
    const char *output = NULL;
    int quiet = 0, c;
    optind = 1;
    while ((c = nmt_cli_getopt("plot", argc, argv, "o:x:m:t:qh", options, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'x':
            if (strcmp(optarg, "minutes") == 0) opts.axis = NMT_CURVES_MINUTES;
            else if (strcmp(optarg, "steps") == 0) opts.axis = NMT_CURVES_STEPS;
            else return nmt_cli_usage_error("plot", "--x takes minutes or steps, not '%s'", optarg);
            break;
        case 'm':
            if (nmt_curves_metrics_parse(optarg, metrics, &opts.num_metrics) < 0)
                return nmt_cli_usage_error("plot", "--metrics: %s", nmt_error());
            break;
        case 't': opts.title = optarg; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return NMT_EXIT_OK;
        default: return NMT_EXIT_USAGE;
        }
    }
    int num_runs = argc - optind;
    if (!output) return nmt_cli_usage_error("plot", "--output is required");
    if (num_runs < 1) return nmt_cli_usage_error("plot", "no model directories to plot");
    if (strcmp(output, "-") != 0) {
        char **logs = nmt_calloc((size_t)num_runs + 1, sizeof *logs);
        int checked = logs ? 0 : -1;
        for (int i = 0; checked == 0 && i < num_runs; i++)
            if (!(logs[i] = nmt_path_join(argv[optind + i], "train.log.jsonl"))) checked = -1;
        if (checked < 0) checked = nmt_cli_fail("plot");
        else if (nmt_cli_output("plot", "--output", output, (const char *const *)logs, NULL) < 0) checked = NMT_EXIT_USAGE;
        for (int i = 0; logs && i < num_runs; i++) free(logs[i]);
        free(logs);
        if (checked) return checked;
    }
    /* The picture is SVG: a name that says otherwise (x.png) would hold what it does not say. */
    const size_t len = strlen(output);
    if (strcmp(output, "-") != 0 && (len < 4 || strcasecmp(output + len - 4, ".svg") != 0))
        return nmt_cli_usage_error("plot", "--output %s: nmt plot writes SVG; name the file FILE.svg (or '-' for "
                                           "standard output)", output);

    nmt_curves_run *runs = nmt_calloc((size_t)num_runs, sizeof *runs);
    if (!runs) return nmt_cli_fail("plot");
    if (nmt_curves_load(runs, (const char *const *)argv + optind, num_runs) < 0) {
        free(runs);
        return nmt_cli_fail("plot");
    }
    nmt_strbuf svg = {0};
    int rc = nmt_curves_svg(&svg, runs, num_runs, &opts);
    if (rc == 0 && strcmp(output, "-") == 0) {
        if (fwrite(svg.data, 1, svg.len, stdout) != svg.len || fflush(stdout) != 0)
            rc = nmt_error_set("<stdout>: write failed");
    } else if (rc == 0) {
        rc = nmt_atomic_write(output, svg.data, svg.len);
    }
    if (rc == 0 && !quiet) {
        for (int i = 0; i < num_runs; i++) {
            const nmt_curves_run *r = &runs[i];
            fprintf(stderr, "nmt plot: %s: %d train and %d validation records", r->path, r->num_records[NMT_CURVES_TRAIN],
                    r->num_records[NMT_CURVES_VALID]);
            if (r->partial_line) fprintf(stderr, " (line %ld is unfinished, still being written?, and was skipped)", r->partial_line);
            fputc('\n', stderr);
        }
        if (strcmp(output, "-") != 0) fprintf(stderr, "nmt plot: wrote %s\n", output);
    }
    for (int i = 0; i < num_runs; i++) nmt_curves_free(&runs[i]);
    free(runs);
    nmt_strbuf_free(&svg);
    return rc == 0 ? NMT_EXIT_OK : nmt_cli_fail("plot");
}
