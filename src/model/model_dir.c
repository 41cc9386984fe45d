/* model_dir: a model directory's two files loaded and checked together, and line encoding
 * (model_dir.h). */
#include "model/model_dir.h"

#include "model/model_file.h"
#include "base/utf8.h"
#include "base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* nmt_model_dir_open, the matrices deferred or not. */
static int open_dir(const char *dir, nmt_model *model, nmt_spm **spm, int deferred) {
    memset(model, 0, sizeof *model);
    *spm = NULL;
    struct stat st;
    if (stat(dir, &st) != 0) return nmt_error_set("%s: cannot open the model directory: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return nmt_error_set("%s: not a model directory (expected the directory `nmt train` wrote)", dir);
    char *model_path = nmt_path_join(dir, "model.safetensors"), *spm_path = nmt_path_join(dir, "spm.model");
    int rc = -1;
    if (!model_path || !spm_path) goto done;
    const int present = nmt_file_present(model_path);
    if (present <= 0) {
        if (present == 0) nmt_error_set("%s: missing (is %s a model directory written by `nmt train`?)", model_path, dir);
        goto done;
    }
    if ((deferred ? nmt_model_load_deferred(model, model_path) : nmt_model_load(model, model_path)) < 0) goto done;
    if (nmt_spm_load(spm, spm_path) < 0) goto done;
    if (nmt_spm_vocab_size(*spm) != model->config.vocab_size) {
        nmt_error_set("%s has %d pieces but %s has a vocabulary of %d", spm_path, nmt_spm_vocab_size(*spm), model_path,
                      model->config.vocab_size);
        goto done;
    }
    if (nmt_model_check_vocab(model->vocab_fingerprint, model_path, nmt_spm_fingerprint(*spm), spm_path) < 0) goto done;
    rc = 0;
done:
    if (rc < 0) {
        nmt_spm_free(*spm);
        *spm = NULL;
        nmt_model_free(model);
        memset(model, 0, sizeof *model);
    }
    free(model_path);
    free(spm_path);
    return rc;
}

int nmt_model_dir_open(const char *dir, nmt_model *model, nmt_spm **spm) { return open_dir(dir, model, spm, 0); }

int nmt_model_dir_open_for(const char *dir, nmt_precision precision, nmt_model *model, nmt_spm **spm) {
    if (open_dir(dir, model, spm, nmt_packed_self_contained(precision)) < 0) return -1;
    if (precision != NMT_PRECISION_INT8 || nmt_model_quantize_int8(model) == 0) return 0;
    nmt_spm_free(*spm);
    *spm = NULL;
    nmt_model_free(model);
    return -1;
}

int nmt_model_dir_encode_line(const nmt_model *model, const nmt_spm *spm, const nmt_lines *lines, int32_t **ids,
                              size_t *cap, size_t *count) {
    *count = 0;
    long bad = nmt_utf8_invalid_at(lines->line, lines->len);
    if (bad >= 0) {
        nmt_error_set("%s:%ld: invalid UTF-8 at byte %ld", lines->name, lines->number, bad + 1);
        return NMT_MODEL_DIR_INVALID_UTF8;
    }
    if (nmt_spm_encode(spm, lines->line, lines->len, ids, cap, count) < 0)
        return nmt_error_prefix("%s:%ld", lines->name, lines->number);
    const nmt_model_config *c = &model->config;
    if (c->positions == NMT_POSITIONS_LEARNED && *count + 1 > (size_t)c->max_positions)
        return nmt_error_set("%s:%ld: %zu pieces; the model's learned positions allow at most %d", lines->name,
                             lines->number, *count, c->max_positions - 1);
    return 0;
}
