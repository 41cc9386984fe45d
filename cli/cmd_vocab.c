/* nmt vocab: train a SentencePiece vocabulary with nmt's reserved ids (pad=0, unk=1, bos=2, eos=3). */
#include "cli.h"

#include "base/io.h"
#include "text/spm.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char nmt_cmd_vocab_summary[] = "train a SentencePiece vocabulary (pad=0 unk=1 bos=2 eos=3)";

static void usage(FILE *out) {
    fprintf(out,
            "Usage: nmt vocab --input FILE[,FILE...] --size N --output PREFIX [options]\n"
            "\n"
            "Trains a SentencePiece model on the text files (one sentence a line; give both sides of a\n"
            "corpus for a joint vocabulary) and writes PREFIX.model and PREFIX.vocab.\n"
            "\n"
            "  -i, --input FILE[,FILE...]    training text (repeatable)\n"
            "  -s, --size N                  number of pieces, including the 4 reserved ones\n"
            "  -o, --output PREFIX           output prefix (its directory is created)\n"
            "  -t, --type unigram|bpe        model type (default unigram)\n"
            "      --character-coverage C    share of characters covered, in (0, 1] (default 1.0;\n"
            "                                0.9995 suits languages with large character sets)\n"
            "      --input-sentence-size N   train on a random sample of N sentences (default\n"
            "                                1000000; 0 = all)\n"
            "  -v, --verbose                 show SentencePiece's own log of the training\n"
            "  -q, --quiet                   print only errors\n"
            "  -h, --help                    show this help\n");
}

/* Appends the comma-separated names in `list` to *files (kept NULL-terminated). */
static int add_inputs(char *list, char ***files, int *count) {
    for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
        char **grown = nmt_realloc(*files, (size_t)(*count + 2) * sizeof *grown);
        if (!grown) return -1;
        *files = grown;
        (*files)[(*count)++] = name;
        (*files)[*count] = NULL;
    }
    return 0;
}

/* Creates the directory that PREFIX names files in, if it is missing. */
static int make_parent_dir(const char *prefix) {
    const char *slash = strrchr(prefix, '/');
    if (!slash || slash == prefix) return 0;
    char *dir = nmt_strdup(prefix);
    if (!dir) return -1;
    dir[slash - prefix] = '\0';
    int rc = nmt_mkdirs(dir);
    free(dir);
    return rc;
}

/* 1 when PREFIX.model is the vocabulary of a model: DIR/spm.model beside DIR/model.safetensors. */
static int is_model_vocabulary(const char *prefix) {
    const char *slash = strrchr(prefix, '/'), *base = slash ? slash + 1 : prefix;
    if (strcmp(base, "spm") != 0) return 0;
    char *dir = nmt_strdup(prefix);
    if (!dir) return 0;
    dir[base - prefix] = '\0';
    char *model = nmt_path_join(*dir ? dir : ".", "model.safetensors"), *vocab = nmt_path_join(*dir ? dir : ".", "spm.model");
    const int taken = model && vocab && nmt_file_exists(model) && nmt_file_exists(vocab);
    free(model);
    free(vocab);
    free(dir);
    return taken;
}

/* PREFIX names two files, PREFIX.model and PREFIX.vocab: neither may be empty, a directory or an
 * input, and PREFIX.model not the vocabulary a trained model needs. */
static int check_prefix(const char *prefix, const char *const *inputs) {
    if (nmt_cli_output("vocab", "--output", prefix, NULL, NULL) < 0) return -1;
    if (is_model_vocabulary(prefix))
        return nmt_cli_usage_error("vocab", "--output %s: %s.model is the vocabulary of the model beside it "
                                            "(model.safetensors); another would leave that model unusable: choose "
                                            "another prefix", prefix, prefix), -1;
    static const char *const extensions[] = {".model", ".vocab"};
    for (int i = 0; i < 2; i++) {
        size_t n = strlen(prefix) + 8;
        char *path = nmt_malloc(n);
        if (!path) return nmt_cli_fail("vocab"), -1;
        snprintf(path, n, "%s%s", prefix, extensions[i]);
        int rc = nmt_cli_output("vocab", "--output", path, inputs, "--input");
        free(path);
        if (rc < 0) return -1;
    }
    return 0;
}

int nmt_cmd_vocab(int argc, char **argv) {
    static const struct option options[] = {
        {"input", required_argument, NULL, 'i'},
        {"size", required_argument, NULL, 's'},
        {"output", required_argument, NULL, 'o'},
        {"type", required_argument, NULL, 't'},
        {"character-coverage", required_argument, NULL, 'c'},
        {"input-sentence-size", required_argument, NULL, 'n'},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char **inputs = NULL;
    int num_inputs = 0, rc = NMT_EXIT_USAGE;
    long size = 0, sentences = 1000000;
    /* SentencePiece's log (some 70 lines) only with --verbose. */
    nmt_spm_train_options o = {.model_type = "unigram", .character_coverage = 1.0, .quiet = 1, .size_name = "--size"};
    int quiet = 0;
    static const int repeatable[] = {'i', 0};
    optind = 1;
    int c;
    while ((c = nmt_cli_getopt("vocab", argc, argv, "i:s:o:t:qvh", options, repeatable)) != -1) {
        switch (c) {
        case 'i':
            if (add_inputs(optarg, &inputs, &num_inputs) < 0) {
                rc = nmt_cli_fail("vocab");
                goto done;
            }
            break;
        case 's':
            if (nmt_cli_long("vocab", "--size", optarg, 5, 1 << 24, &size) < 0) goto done;
            break;
        case 'o': o.output_prefix = optarg; break;
        case 't':
            if (strcmp(optarg, "unigram") != 0 && strcmp(optarg, "bpe") != 0) {
                nmt_cli_usage_error("vocab", "--type: expected unigram or bpe, got '%s'", optarg);
                goto done;
            }
            o.model_type = optarg;
            break;
        case 'c':
            if (nmt_cli_double("vocab", "--character-coverage", optarg, 1e-6, 1.0, &o.character_coverage) < 0)
                goto done;
            break;
        case 'n':
            if (nmt_cli_long("vocab", "--input-sentence-size", optarg, 0, 2000000000L, &sentences) < 0) goto done;
            break;
        case 'q': quiet = 1; break;
        case 'v': o.quiet = 0; break;
        case 'h':
            usage(stdout);
            rc = NMT_EXIT_OK;
            goto done;
        default: goto done;
        }
    }
    if (optind < argc) {
        nmt_cli_usage_error("vocab", "unexpected argument '%s'", argv[optind]);
        goto done;
    }
    if (!num_inputs || !size || !o.output_prefix) {
        nmt_cli_usage_error("vocab", "--input, --size and --output are required");
        goto done;
    }
    if (check_prefix(o.output_prefix, (const char *const *)inputs) < 0) goto done;
    o.inputs = (const char *const *)inputs;
    o.num_inputs = num_inputs;
    o.vocab_size = (int)size;
    o.input_sentence_size = sentences;

    if (make_parent_dir(o.output_prefix) < 0 || nmt_spm_train(&o) < 0) {
        rc = nmt_cli_fail("vocab");
        goto done;
    }
    if (!quiet)
        fprintf(stderr, "nmt vocab: wrote %s.model and %s.vocab (%ld pieces, %s)\n", o.output_prefix,
                o.output_prefix, size, o.model_type);
    rc = NMT_EXIT_OK;
done:
    free(inputs);
    return rc;
}
