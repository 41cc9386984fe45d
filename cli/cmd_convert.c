/* nmt convert: a model rewritten as nmt's own directory (its matrices in int8 or fp32; from nmt's,
 * CTranslate2's or Argos's formats), as a CTranslate2 model directory, or as an Argos Translate
 * package. */
#include "cli.h"

#include "base/io.h"
#include "base/util.h"
#include "model/argos.h"
#include "model/argos_write.h"
#include "model/ct2_write.h"
#include "model/model_dir.h"
#include "model/model_file.h"
#include "text/spm.h"
#include "train/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char nmt_cmd_convert_summary[] = "write a model as nmt's (int8 or fp32), CTranslate2's or Argos's";

/* The files of a model directory besides model.safetensors, copied as they are when present. */
static const char *const companions[] = {"spm.model", "spm.vocab", "config.yaml", "config.resolved.yaml", "shortlist.bin"};

static void usage(FILE *out) {
    fprintf(out,
            "Usage: nmt convert -m MODEL [--precision int8|fp32] -o OUT_DIR [--spm FILE]\n"
            "       nmt convert -m MODEL --to ct2 -o OUT_DIR [--quantization Q]\n"
            "       nmt convert -m MODEL --to argos -o PKG.argosmodel --source-lang CODE --target-lang CODE\n"
            "                   [--quantization Q]\n"
            "\n"
            "Writes OUT_DIR, a model directory like MODEL whose model.safetensors holds every matrix\n"
            "in the given precision: int8 stores each matrix row as 8-bit integers with one float32\n"
            "factor (I8 tensors and F32 \"<name>.scale\" tensors; about a quarter of the size), fp32\n"
            "turns an int8 directory back into float32. Every subcommand reads either kind; `nmt\n"
            "translate --precision int8` on an fp32 model quantizes the same way when it loads, so both\n"
            "give the same translations. The other files (spm.model, spm.vocab, config.yaml,\n"
            "shortlist.bin) are copied. MODEL may also be a CTranslate2 directory or an Argos package\n"
            "whose vocabulary is a SentencePiece model's with nmt's ids (one nmt exported): --spm names\n"
            "that model (an Argos folder's sentencepiece.model by default), written as spm.model.\n"
            "\n"
            "--to ct2 writes a CTranslate2 model directory (model.bin, config.json, vocabularies) that\n"
            "CTranslate2 4.x runs; --to argos an Argos Translate package (a zip: metadata.json, model/,\n"
            "sentencepiece.model) that Argos Translate and LibreTranslate install. See\n"
            "docs/model-formats.md, \"Export\".\n"
            "\n"
            "  -m, --model DIR         the model to read (nmt's directory, CTranslate2's, Argos's)\n"
            "  -o, --output PATH       what to write (built beside it and moved into place whole; one\n"
            "                          that holds a model is refused without --overwrite, and the input\n"
            "                          itself always)\n"
            "      --precision P       int8 or fp32 (nmt's own directory; default: the model's own,\n"
            "                          int8 for int8 weights, else fp32)\n"
            "      --to FORMAT         nmt (the default), ct2 or argos\n"
            "      --quantization Q    float32 (default), int8, int16, float16 or bfloat16 (--to ct2|argos)\n"
            "      --source-lang CODE  the package's source language (--to argos; an Argos input's own\n"
            "                          by default)\n"
            "      --target-lang CODE  the package's target language (likewise)\n"
            "      --spm FILE          the SentencePiece model of a CTranslate2 or Argos input\n"
            "      --overwrite         replace the model at -o\n"
            "  -q, --quiet             print only errors\n"
            "  -h, --help              show this help\n");
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

/* An imported model (a token vocabulary) becomes nmt's own directory only with a SentencePiece model
 * that has its ids: every id's piece the same, on both sides (a source without one: its pad). The
 * model then records that model's fingerprint, as `nmt train` does. */
static int check_pieces(const nmt_spm *imported, const char *spm_file, nmt_model *model) {
    nmt_spm *file;
    if (nmt_spm_load(&file, spm_file) < 0) return -1;
    int rc = 0;
    if (nmt_spm_vocab_size(file) != nmt_spm_vocab_size(imported))
        rc = nmt_error_set("%s has %d pieces but the model's vocabulary %d", spm_file, nmt_spm_vocab_size(file),
                           nmt_spm_vocab_size(imported));
    for (int id = 0; rc == 0 && id < nmt_spm_vocab_size(file); id++) {
        const char *piece = nmt_spm_piece(file, id), *source = nmt_spm_source_piece(imported, id);
        if (strcmp(piece, nmt_spm_piece(imported, id)) != 0 || (*source && strcmp(piece, source) != 0))
            rc = nmt_error_set("%s: id %d is '%s' but the model's vocabulary has '%s' there: not the SentencePiece "
                               "model of this vocabulary (nmt's ids), so the model cannot become nmt's own directory",
                               spm_file, id, piece, nmt_spm_piece(imported, id));
    }
    model->vocab_fingerprint = nmt_spm_fingerprint(file);
    nmt_spm_free(file);
    return rc;
}

/* OUT built whole beside it and renamed into place: a failure leaves no half-written model. spm_file:
 * the SentencePiece model of an imported one, written as spm.model. */
static int write_output(const nmt_model *model, const char *model_dir, const char *output, const char *precision,
                        const char *spm_file) {
    nmt_staged_dir out;
    if (nmt_staged_dir_open(&out, output) < 0) return -1;
    char *path = nmt_staged_dir_path(&out, "model.safetensors"), *spm_out = nmt_staged_dir_path(&out, "spm.model");
    int rc = !path || !spm_out ? -1
             : strcmp(precision, "int8") == 0 ? nmt_model_save_int8(model, path) : nmt_model_save(model, path);
    for (size_t i = 0; rc == 0 && i < sizeof companions / sizeof companions[0]; i++)
        rc = copy_file(model_dir, &out, companions[i]);
    if (rc == 0 && spm_file) rc = nmt_copy_file(spm_file, spm_out);
    free(path);
    free(spm_out);
    if (rc == 0) return nmt_staged_dir_commit(&out, "model.safetensors");
    nmt_staged_dir_abort(&out);
    return -1;
}

/* The CTranslate2 directory built whole beside OUT and renamed into place. */
static int write_ct2(const nmt_model *model, const nmt_spm *spm, const char *output, nmt_ct2_quantization q) {
    nmt_staged_dir out;
    if (nmt_staged_dir_open(&out, output) < 0) return -1;
    if (nmt_ct2_write(out.tmp, model, spm, q) == 0) return nmt_staged_dir_commit(&out, "model.bin");
    nmt_staged_dir_abort(&out);
    return -1;
}

static int parse_word(const char *flag, const char *text, const char *const *words, int *out) {
    for (int i = 0; words[i]; i++)
        if (strcmp(text, words[i]) == 0) return *out = i, 0;
    return nmt_cli_usage_error("convert", "%s: unknown value '%s'", flag, text), -1;
}

/* The SentencePiece model that goes with MODEL: --spm, else nmt's spm.model or an Argos folder's
 * sentencepiece.model; NULL (error set) for a CTranslate2 directory or an archive without --spm. */
static char *spm_file_of(const char *model_dir, const char *spm) {
    if (spm) return nmt_strdup(spm);
    const char *const names[] = {"spm.model", "sentencepiece.model"};
    for (int i = 0; i < 2; i++) {
        char *path = nmt_path_join(model_dir, names[i]);
        if (!path || (nmt_file_exists(path) && (i == 0) == !nmt_model_dir_foreign(model_dir))) return path;
        free(path);
    }
    nmt_error_set("%s holds no SentencePiece model (spm.model, or an Argos folder's sentencepiece.model): give it "
                  "with --spm FILE", model_dir);
    return NULL;
}

/* What one convert does: the flags, and the model read (an Argos archive's folder once unpacked). */
typedef struct job {
    const char *model;      /* -m as given */
    const char *input;      /* what is read */
    const char *output, *precision, *quantization, *spm;
    nmt_argos_package package;
    char *codes[2];         /* an Argos input's own from_code and to_code, or an nmt directory's recorded ones */
    int overwrite, quiet, argos;
} job;

/* --to ct2 or argos. */
static int export_model(job *j) {
    int q = NMT_CT2_QUANT_FLOAT32;
    if (j->quantization && parse_word("--quantization", j->quantization, nmt_ct2_quantization_names, &q) < 0)
        return NMT_EXIT_USAGE;
    struct stat st;
    const char *output = j->output;
    const int exists = stat(output, &st) == 0;
    if (nmt_same_file(j->model, output)) return nmt_cli_usage_error("convert", "-o %s is the model itself", output);
    if (j->argos) {
        const size_t len = strlen(output), n = strlen(".argosmodel");
        if (len <= n || strcmp(output + len - n, ".argosmodel") != 0)
            return nmt_cli_usage_error("convert", "-o %s: an Argos package's name ends in .argosmodel", output);
        if (exists && (S_ISDIR(st.st_mode) || !j->overwrite))
            return nmt_cli_usage_error("convert", "-o %s already exists; choose another name%s", output,
                                       S_ISDIR(st.st_mode) ? "" : ", or add --overwrite to replace it");
    } else {
        char *bin = nmt_path_join(output, "model.bin");
        const int taken = bin && nmt_file_exists(bin);
        free(bin);
        if (exists && !S_ISDIR(st.st_mode))
            return nmt_cli_usage_error("convert", "-o %s: not a directory (-o names the directory to write)", output);
        if (taken && !j->overwrite)
            return nmt_cli_usage_error("convert", "-o %s already holds a CTranslate2 model; choose another directory, "
                                                  "or add --overwrite to replace it", output);
    }
    nmt_model model;
    nmt_spm *spm = NULL;
    if (nmt_model_dir_open(j->input, &model, &spm) < 0) return nmt_cli_fail("convert");
    char *spm_file = j->argos ? spm_file_of(j->input, j->spm) : NULL;
    j->package.spm_path = spm_file;
    j->package.quantization = (nmt_ct2_quantization)q;
    int rc = j->argos && !spm_file ? -1
             : j->argos ? nmt_argos_write(output, &model, spm, &j->package)
                        : write_ct2(&model, spm, output, (nmt_ct2_quantization)q);
    if (rc == 0 && !j->quiet)
        fprintf(stderr, "nmt convert: wrote %s (%s, %s)\n", output, j->argos ? "Argos package" : "CTranslate2 model",
                nmt_ct2_quantization_names[q]);
    free(spm_file);
    nmt_spm_free(spm);
    nmt_model_free(&model);
    return rc == 0 ? NMT_EXIT_OK : nmt_cli_fail("convert");
}

/* nmt's own directory, from any model nmt reads. */
static int import_model(const job *j) {
    const char *output = j->output, *precision = j->precision;
    if (precision && strcmp(precision, "int8") != 0 && strcmp(precision, "fp32") != 0)
        return nmt_cli_usage_error("convert", "--precision: expected int8 or fp32, got '%s'", precision);
    struct stat a, b;
    if (stat(output, &b) == 0 && !S_ISDIR(b.st_mode))
        return nmt_cli_usage_error("convert", "-o %s: not a directory (-o names the model directory to write)", output);
    if (stat(j->model, &a) == 0 && stat(output, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        return nmt_cli_usage_error("convert", "-o %s is the model directory itself", output);
    if (nmt_cli_model_dir_output("convert", "-o", output, j->overwrite) < 0) return NMT_EXIT_USAGE;
    /* A file of OUT that is (a link to) one of the model's would be destroyed by writing it. */
    const char *names[sizeof companions / sizeof companions[0] + 2] = {"model.safetensors"};
    char *inputs[sizeof companions / sizeof companions[0] + 2] = {NULL};
    memcpy(names + 1, companions, sizeof companions);
    int refused = 0;
    for (size_t i = 0; names[i] && !refused; i++) refused = !(inputs[i] = nmt_path_join(j->input, names[i]));
    refused = refused || nmt_output_dir_check_inputs(output, names, (const char *const *)inputs) < 0;
    for (size_t i = 0; inputs[i]; i++) free(inputs[i]);
    if (refused) return nmt_cli_usage_error("convert", "-o %s: %s", output, nmt_error());
    const int foreign = nmt_model_dir_foreign(j->input);
    if (j->spm && !foreign) return nmt_cli_usage_error("convert", "--spm goes with a CTranslate2 or Argos input");
    nmt_model model;
    nmt_spm *spm = NULL;
    if (nmt_model_dir_open(j->input, &model, &spm) < 0) return nmt_cli_fail("convert");
    char *spm_file = foreign ? spm_file_of(j->input, j->spm) : NULL;
    int rc = foreign && (!spm_file || check_pieces(spm, spm_file, &model) < 0) ? -1 : 0;
    nmt_spm_free(spm);
    if (!precision) precision = model.int8_weights ? "int8" : "fp32"; /* the model's own */
    if (rc == 0) rc = write_output(&model, j->input, output, precision, spm_file);
    free(spm_file);
    if (rc == 0 && !j->quiet) {
        char *path = nmt_path_join(output, "model.safetensors");
        struct stat st;
        fprintf(stderr, "nmt convert: wrote %s (%s, %.1f MB)\n", path ? path : output, precision,
                path && stat(path, &st) == 0 ? (double)st.st_size / 1e6 : 0.0);
        free(path);
    }
    nmt_model_free(&model);
    return rc == 0 ? NMT_EXIT_OK : nmt_cli_fail("convert");
}

/* An nmt directory's recorded languages (data.src_lang, data.tgt_lang) where the flags give none: the
 * package's defaults. A directory without a config, or a config without them, leaves the flags alone. */
static int recorded_languages(job *j) {
    nmt_config config;
    if (nmt_config_load_dir(&config, j->model) < 0) {
        nmt_error_clear();
        return 0;
    }
    int rc = 0;
    if (!j->package.from_code && config.src_lang[0] && !(j->package.from_code = j->codes[0] = nmt_strdup(config.src_lang)))
        rc = -1;
    if (!j->package.to_code && config.tgt_lang[0] && !(j->package.to_code = j->codes[1] = nmt_strdup(config.tgt_lang)))
        rc = -1;
    nmt_config_free(&config);
    return rc;
}

/* The flags' combinations that mean nothing are usage errors (NMT_EXIT_USAGE, else 0). */
static int check_flags(const job *j, int to_nmt) {
    if (to_nmt && (j->quantization || j->package.from_code || j->package.to_code))
        return nmt_cli_usage_error("convert", "--quantization, --source-lang and --target-lang go with --to ct2|argos");
    if (!to_nmt && j->precision)
        return nmt_cli_usage_error("convert", "--precision is for nmt's own directory; --to takes --quantization");
    if (!to_nmt && !j->argos && (j->package.from_code || j->package.to_code || j->spm))
        return nmt_cli_usage_error("convert", "--source-lang, --target-lang and --spm go with --to argos (or an import)");
    if (j->argos && (!j->package.from_code || !j->package.to_code) && !nmt_argos_is_package(j->model))
        return nmt_cli_usage_error("convert", "--to argos needs --source-lang CODE and --target-lang CODE (the "
                                              "package's languages; a model trained with data.src_lang and "
                                              "data.tgt_lang records them)");
    return 0;
}

int nmt_cmd_convert(int argc, char **argv) {
    enum { OPT_PRECISION = 256, OPT_OVERWRITE, OPT_TO, OPT_QUANT, OPT_SRC, OPT_TGT, OPT_SPM };
    static const struct option options[] = {
        {"model", required_argument, NULL, 'm'},  {"output", required_argument, NULL, 'o'},
        {"precision", required_argument, NULL, OPT_PRECISION}, {"overwrite", no_argument, NULL, OPT_OVERWRITE},
        {"to", required_argument, NULL, OPT_TO}, {"quantization", required_argument, NULL, OPT_QUANT},
        {"source-lang", required_argument, NULL, OPT_SRC}, {"target-lang", required_argument, NULL, OPT_TGT},
        {"spm", required_argument, NULL, OPT_SPM},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    static const char *const formats[] = {"nmt", "ct2", "argos", NULL};
    enum { TO_NMT, TO_CT2, TO_ARGOS };
    job j = {0};
    int c, to = TO_NMT;
    optind = 1;
    while ((c = nmt_cli_getopt("convert", argc, argv, "m:o:qh", options, NULL)) != -1) {
        switch (c) {
        case 'm': j.model = optarg; break;
        case 'o': j.output = optarg; break;
        case OPT_PRECISION: j.precision = optarg; break;
        case OPT_OVERWRITE: j.overwrite = 1; break;
        case OPT_TO: if (parse_word("--to", optarg, formats, &to) < 0) return NMT_EXIT_USAGE; break;
        case OPT_QUANT: j.quantization = optarg; break;
        case OPT_SRC: j.package.from_code = optarg; break;
        case OPT_TGT: j.package.to_code = optarg; break;
        case OPT_SPM: j.spm = optarg; break;
        case 'q': j.quiet = 1; break;
        case 'h': usage(stdout); return NMT_EXIT_OK;
        default: return NMT_EXIT_USAGE;
        }
    }
    if (optind < argc) return nmt_cli_usage_error("convert", "unexpected argument '%s'", argv[optind]);
    if (!j.model || !j.output) return nmt_cli_usage_error("convert", "-m MODEL and -o OUTPUT are required");
    j.argos = to == TO_ARGOS;
    char *tmp = NULL, *root = NULL;
    if (j.argos && !nmt_argos_is_package(j.model) && recorded_languages(&j) < 0) {
        c = nmt_cli_fail("convert");
        goto done;
    }
    if (check_flags(&j, to == TO_NMT) != 0) {
        c = NMT_EXIT_USAGE;
        goto done;
    }
    /* An Argos archive is unpacked once: its folder gives the model, its SentencePiece model and its
     * languages. */
    if (nmt_argos_is_package(j.model)) {
        if (nmt_argos_unpack(j.model, &tmp, &root) < 0 || nmt_argos_languages(root, &j.codes[0], &j.codes[1]) < 0) {
            c = nmt_cli_fail("convert");
            goto done;
        }
        if (!j.package.from_code) j.package.from_code = j.codes[0];
        if (!j.package.to_code) j.package.to_code = j.codes[1];
    }
    j.input = root ? root : j.model;
    c = to == TO_NMT ? import_model(&j) : export_model(&j);
done:
    if (tmp) nmt_remove_tree(tmp);
    free(tmp);
    free(root);
    free(j.codes[0]);
    free(j.codes[1]);
    return c;
}
