/* nmt convert: a model directory rewritten with its matrices in another precision (int8 or fp32). */
#include "cli.h"

#include "base/io.h"
#include "base/util.h"
#include "model/model_dir.h"
#include "model/model_file.h"
#include "text/spm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char nmt_cmd_convert_summary[] = "write a model directory with int8 (or fp32) weights";

/* The files of a model directory besides model.safetensors, copied as they are when present. */
static const char *const companions[] = {"spm.model", "spm.vocab", "config.yaml", "config.resolved.yaml", "shortlist.bin"};

static void usage(FILE *out) {
    fprintf(out,
            "Usage: nmt convert -m MODEL_DIR --precision int8|fp32 -o OUT_DIR\n"
            "\n"
            "Writes OUT_DIR, a model directory like MODEL_DIR whose model.safetensors holds every matrix\n"
            "in the given precision: int8 stores each matrix row as 8-bit integers with one float32\n"
            "factor (I8 tensors and F32 \"<name>.scale\" tensors; about a quarter of the size), fp32\n"
            "turns an int8 directory back into float32. Every subcommand reads either kind; `nmt\n"
            "translate --precision int8` on an fp32 model quantizes the same way when it loads, so both\n"
            "give the same translations. The other files (spm.model, spm.vocab, config.yaml,\n"
            "shortlist.bin) are copied.\n"
            "\n"
            "  -m, --model DIR       the model directory to read\n"
            "  -o, --output DIR      the model directory to write (built beside it and moved into\n"
            "                        place whole; one that holds a model is refused without\n"
            "                        --overwrite, and one whose files link to MODEL_DIR's always)\n"
            "      --precision P     int8 or fp32\n"
            "      --overwrite       replace the model in -o DIR\n"
            "  -q, --quiet           print only errors\n"
            "  -h, --help            show this help\n");
}

static int copy_file(const char *from_dir, const nmt_staged_dir *to_dir, const char *name) {
    char *from = nmt_path_join(from_dir, name), *to = nmt_staged_dir_path(to_dir, name), *data = NULL;
    size_t size = 0;
    int rc = -1;
    if (from && to) rc = !nmt_file_exists(from) ? 0 : nmt_read_regular_file(from, NMT_READ_MAX, "a model directory's file", &data, &size) < 0 ? -1 : nmt_atomic_write(to, data, size);
    free(data);
    free(from);
    free(to);
    return rc;
}

/* OUT built whole beside it and renamed into place: a failure leaves no half-written model. */
static int write_output(const nmt_model *model, const char *model_dir, const char *output, const char *precision) {
    nmt_staged_dir out;
    if (nmt_staged_dir_open(&out, output) < 0) return -1;
    char *path = nmt_staged_dir_path(&out, "model.safetensors");
    int rc = !path ? -1 : strcmp(precision, "int8") == 0 ? nmt_model_save_int8(model, path) : nmt_model_save(model, path);
    for (size_t i = 0; rc == 0 && i < sizeof companions / sizeof companions[0]; i++)
        rc = copy_file(model_dir, &out, companions[i]);
    free(path);
    if (rc == 0) return nmt_staged_dir_commit(&out, "model.safetensors");
    nmt_staged_dir_abort(&out);
    return -1;
}

int nmt_cmd_convert(int argc, char **argv) {
    enum { OPT_PRECISION = 256, OPT_OVERWRITE };
    static const struct option options[] = {
        {"model", required_argument, NULL, 'm'},  {"output", required_argument, NULL, 'o'},
        {"precision", required_argument, NULL, OPT_PRECISION}, {"overwrite", no_argument, NULL, OPT_OVERWRITE},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *model_dir = NULL, *output = NULL, *precision = NULL;
    int quiet = 0, overwrite = 0, c;
    optind = 1;
    while ((c = nmt_cli_getopt("convert", argc, argv, "m:o:qh", options, NULL)) != -1) {
        switch (c) {
        case 'm': model_dir = optarg; break;
        case 'o': output = optarg; break;
        case OPT_PRECISION: precision = optarg; break;
        case OPT_OVERWRITE: overwrite = 1; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return NMT_EXIT_OK;
        default: return NMT_EXIT_USAGE;
        }
    }
    if (optind < argc) return nmt_cli_usage_error("convert", "unexpected argument '%s'", argv[optind]);
    if (!model_dir || !output) return nmt_cli_usage_error("convert", "-m MODEL_DIR and -o OUT_DIR are required");
    if (!precision || (strcmp(precision, "int8") != 0 && strcmp(precision, "fp32") != 0))
        return nmt_cli_usage_error("convert", "--precision: expected int8 or fp32, got '%s'", precision ? precision : "");
    struct stat a, b;
    if (stat(output, &b) == 0 && !S_ISDIR(b.st_mode))
        return nmt_cli_usage_error("convert", "-o %s: not a directory (-o names the model directory to write)", output);
    if (stat(model_dir, &a) == 0 && stat(output, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        return nmt_cli_usage_error("convert", "-o %s is the model directory itself", output);
    if (nmt_cli_model_dir_output("convert", "-o", output, overwrite) < 0) return NMT_EXIT_USAGE;
    /* A file of OUT that is (a link to) one of the model's would be destroyed by writing it. */
    const char *names[sizeof companions / sizeof companions[0] + 2] = {"model.safetensors"};
    char *inputs[sizeof companions / sizeof companions[0] + 2] = {NULL};
    memcpy(names + 1, companions, sizeof companions);
    int refused = 0;
    for (size_t i = 0; names[i] && !refused; i++) refused = !(inputs[i] = nmt_path_join(model_dir, names[i]));
    refused = refused || nmt_output_dir_check_inputs(output, names, (const char *const *)inputs) < 0;
    for (size_t i = 0; inputs[i]; i++) free(inputs[i]);
    if (refused) return nmt_cli_usage_error("convert", "-o %s: %s", output, nmt_error());
    nmt_model model;
    nmt_spm *spm = NULL;
    if (nmt_model_dir_open(model_dir, &model, &spm) < 0) return nmt_cli_fail("convert");
    nmt_spm_free(spm);
    int rc = write_output(&model, model_dir, output, precision);
    if (rc == 0 && !quiet) {
        char *path = nmt_path_join(output, "model.safetensors");
        struct stat st;
        fprintf(stderr, "nmt convert: wrote %s (%s, %.1f MB)\n", path ? path : output, precision,
                path && stat(path, &st) == 0 ? (double)st.st_size / 1e6 : 0.0);
        free(path);
    }
    nmt_model_free(&model);
    return rc == 0 ? NMT_EXIT_OK : nmt_cli_fail("convert");
}
