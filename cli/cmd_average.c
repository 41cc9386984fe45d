/* nmt average: the element-wise mean of the parameters of models or checkpoints of one config,
 * written as a model directory (or, for OUT.safetensors, as a bare weights file). */
#include "cli.h"

#include "base/io.h"
#include "model/model_file.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char nmt_cmd_average_summary[] = "average the parameters of models or checkpoints into a model directory";

static void usage(FILE *out) {
    fprintf(out,
            "Usage: nmt average [--ema] -o OUT_DIR MODEL...\n"
            "       nmt average -o OUT_DIR --last N [--ema] MODEL_DIR\n"
            "\n"
            "Writes a model directory whose parameters are the element-wise mean of those of the given\n"
            "models (model directories, their model.safetensors, or checkpoints in DIR/checkpoints/; all\n"
            "of one model config; a checkpoint's optimizer state is ignored). OUT_DIR gets\n"
            "model.safetensors, and the spm.model and config.yaml of the first input's model directory,\n"
            "so `nmt translate -m OUT_DIR` and every other subcommand take it. The inputs must share that\n"
            "vocabulary. With --last N, averages the N latest checkpoints in MODEL_DIR/checkpoints/.\n"
            "With --ema, averages the checkpoints' moving averages of the weights (train.ema_decay's,\n"
            "which model.safetensors holds) instead of their trained weights.\n"
            "\n"
            "  -o, --output DIR     the model directory to write (built beside it and moved into place\n"
            "                       whole; one that holds a model is refused without --overwrite, one\n"
            "                       whose files link to an input always; OUT.safetensors writes only\n"
            "                       the averaged weights file)\n"
            "  -l, --last N         average the last N checkpoints of MODEL_DIR\n"
            "      --ema            average the checkpoints' moving averages (their ema.* tensors)\n"
            "      --overwrite      replace the model in -o DIR\n"
            "  -q, --quiet          print only errors\n"
            "  -h, --help           show this help\n");
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The model directory a weights file belongs to: its directory, or the one above checkpoints/. */
static char *model_dir_of(const char *file) {
    char *dir = nmt_strdup(file);
    if (!dir) return NULL;
    char *slash = strrchr(dir, '/');
    if (!slash) return strcpy(dir, "."), dir;
    *slash = '\0';
    if (slash == dir) return strcpy(dir, "/"), dir;
    const char *base = strrchr(dir, '/');
    base = base ? base + 1 : dir;
    if (strcmp(base, "checkpoints") == 0) {
        char *up = strrchr(dir, '/');
        if (up) *up = '\0';
        else strcpy(dir, ".");
    }
    return dir;
}

/* Copies NAME from the model directory of paths[0] into the directory being written. The vocabulary
 * (`shared`) must be there and hold the same bytes in every input's model directory; another file is
 * copied when present. */
static int copy_shared(const char *const *paths, int count, const char *name, const nmt_staged_dir *out, int shared) {
    char *first_dir = model_dir_of(paths[0]), *from = first_dir ? nmt_path_join(first_dir, name) : NULL;
    char *to = nmt_staged_dir_path(out, name), *data = NULL, *other = NULL;
    size_t size = 0, other_size = 0;
    int rc = -1;
    if (!from || !to) goto done;
    if (!nmt_file_exists(from)) {
        rc = shared ? nmt_error_set("%s: missing, so %s is not in a model directory (use -o FILE.safetensors for the "
                                    "weights alone)", from, paths[0])
                    : 0;
        goto done;
    }
    if (nmt_read_file(from, &data, &size) < 0) goto done;
    for (int k = 1; shared && k < count; k++) {
        char *dir = model_dir_of(paths[k]), *path = dir ? nmt_path_join(dir, name) : NULL;
        int differs = 0, ok = path && (!nmt_file_exists(path) || nmt_read_file(path, &other, &other_size) == 0);
        if (ok && other) differs = other_size != size || memcmp(other, data, size) != 0;
        free(other);
        other = NULL;
        if (ok && differs) nmt_error_set("%s differs from %s: the models do not share one vocabulary", path, from);
        free(dir);
        free(path);
        if (!ok || differs) goto done;
    }
    rc = nmt_atomic_write(to, data, size);
done:
    free(first_dir);
    free(from);
    free(to);
    free(data);
    return rc;
}

/* The files of the model directory written, model.safetensors first. */
static const char *const written[] = {"model.safetensors", "spm.model", "config.yaml", "config.resolved.yaml", NULL};

/* Averages into OUT_DIR/model.safetensors with the vocabulary and config beside it, the directory
 * built whole beside OUT_DIR and renamed into place (a failure leaves no half-written model). */
static int write_model_dir(const char *const *paths, int count, const char *prefix, const char *out_dir) {
    nmt_staged_dir out;
    if (nmt_staged_dir_open(&out, out_dir) < 0) return -1;
    char *weights = nmt_staged_dir_path(&out, written[0]);
    int rc = weights ? 0 : -1;
    for (int i = 1; written[i] && rc == 0; i++) rc = copy_shared(paths, count, written[i], &out, i == 1);
    if (rc == 0) rc = nmt_model_average(paths, count, prefix, weights);
    free(weights);
    if (rc == 0) return nmt_staged_dir_commit(&out, written[0]);
    nmt_staged_dir_abort(&out);
    return -1;
}

int nmt_cmd_average(int argc, char **argv) {
    enum { OPT_OVERWRITE = 256, OPT_EMA };
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'},
        {"last", required_argument, NULL, 'l'},
        {"overwrite", no_argument, NULL, OPT_OVERWRITE},
        {"ema", no_argument, NULL, OPT_EMA},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL;
    long last = 0;
    int quiet = 0, overwrite = 0, ema = 0, c;
    optind = 1;
    while ((c = nmt_cli_getopt("average", argc, argv, "o:l:qh", options, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'l':
            if (nmt_cli_long("average", "--last", optarg, 1, 1000000, &last) < 0) return NMT_EXIT_USAGE;
            break;
        case OPT_OVERWRITE: overwrite = 1; break;
        case OPT_EMA: ema = 1; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return NMT_EXIT_OK;
        default: return NMT_EXIT_USAGE;
        }
    }
    int inputs = argc - optind;
    if (!output) return nmt_cli_usage_error("average", "--output is required");
    if (last && inputs != 1) return nmt_cli_usage_error("average", "--last N takes one model directory");
    if (!last && inputs < 1) return nmt_cli_usage_error("average", "no models to average");

    char **checkpoints = NULL, **files = nmt_calloc((size_t)inputs + 1, sizeof *files);
    if (!files) return nmt_cli_fail("average");
    const char *const *paths = (const char *const *)files;
    int count = inputs, rc = -1, usage = 0;
    if (last) {
        if (nmt_model_checkpoints(argv[optind], &checkpoints, &count) < 0) goto done;
        if (count < last) {
            nmt_error_set("%s/checkpoints holds %d checkpoint%s, fewer than --last %ld", argv[optind], count,
                          count == 1 ? "" : "s", last);
            goto done;
        }
        paths = (const char *const *)checkpoints + (count - last);
        count = (int)last;
    } else {
        for (int i = 0; i < inputs; i++) {
            const char *p = argv[optind + i];
            files[i] = is_dir(p) ? nmt_path_join(p, "model.safetensors") : nmt_strdup(p);
            if (!files[i]) goto done;
        }
    }
    /* A model directory is created; a bare weights file must not overwrite an input. */
    const int bare = ends_with(output, ".safetensors");
    if (bare ? nmt_cli_output("average", "--output", output, paths, NULL) < 0
             : nmt_cli_model_dir_output("average", "--output", output, overwrite) < 0) {
        usage = 1;
        goto done;
    }
    /* A file of the directory that is (a link to) an input would be destroyed by writing it. */
    if (!bare && nmt_output_dir_check_inputs(output, written, paths) < 0) {
        usage = nmt_cli_usage_error("average", "--output %s: %s", output, nmt_error());
        goto done;
    }
    const char *prefix = ema ? "ema." : "";
    rc = bare ? nmt_model_average(paths, count, prefix, output) : write_model_dir(paths, count, prefix, output);
    if (rc == 0 && !quiet) {
        fprintf(stderr, "nmt average: wrote %s, the mean of %s%d model%s:\n", output,
                ema ? "the moving averages of " : "", count, count == 1 ? "" : "s");
        for (int i = 0; i < count; i++) fprintf(stderr, "  %s\n", paths[i]);
    }
done:
    nmt_model_paths_free(checkpoints);
    for (int i = 0; i < inputs; i++) free(files[i]);
    free(files);
    if (usage) return NMT_EXIT_USAGE;
    return rc == 0 ? NMT_EXIT_OK : nmt_cli_fail("average");
}
