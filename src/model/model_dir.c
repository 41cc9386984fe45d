/* model_dir: a model directory's two files loaded and checked together, and line encoding
 * (model_dir.h). */
#include "model/model_dir.h"

#include "model/argos.h"
#include "model/ct2.h"
#include "model/marian.h"
#include "model/model_file.h"
#include "model/placement.h"
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
    if (stat(dir, &st) != 0)
        return nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot open the model directory: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return nmt_error_set_kind(NMT_ERROR_IO, "%s: not a model directory (expected the directory `nmt train` wrote, "
                                  "a CTranslate2 model directory, an Argos Translate package or a Marian model)", dir);
    char *model_path = nmt_path_join(dir, "model.safetensors"), *spm_path = nmt_path_join(dir, "spm.model");
    int rc = -1;
    if (!model_path || !spm_path) goto done;
    const int present = nmt_file_present(model_path);
    if (present <= 0) {
        if (present == 0)
            nmt_error_set_kind(NMT_ERROR_IO, "%s: missing (is %s a model directory written by `nmt train`?)",
                               model_path, dir);
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

/* Another toolkit's model: a CTranslate2 directory, an Argos Translate package or a Marian model (1),
 * else 0. */
int nmt_model_dir_foreign(const char *path) {
    return nmt_ct2_is_model_dir(path) || nmt_argos_is_package(path) || nmt_marian_is_model(path);
}

static int open_foreign(const char *dir, nmt_model *model, nmt_spm **spm) {
    if (nmt_ct2_is_model_dir(dir)) return nmt_ct2_open(dir, NULL, model, spm);
    return nmt_argos_is_package(dir) ? nmt_argos_open(dir, model, spm) : nmt_marian_open(dir, model, spm);
}

int nmt_model_dir_open(const char *dir, nmt_model *model, nmt_spm **spm) {
    return nmt_model_dir_foreign(dir) ? open_foreign(dir, model, spm) : open_dir(dir, model, spm, 0);
}

int nmt_model_dir_open_for(const char *dir, nmt_precision precision, nmt_model *model, nmt_spm **spm) {
    const int ct2 = nmt_model_dir_foreign(dir);
    if ((ct2 ? open_foreign(dir, model, spm) : open_dir(dir, model, spm, nmt_packed_products_self_contained(precision))) < 0)
        return -1;
    if (precision != NMT_PRECISION_INT8) return 0;
    if ((ct2 ? nmt_model_quantize_int8_weights(model) : nmt_model_quantize_int8(model)) == 0) return 0;
    nmt_spm_free(*spm);
    *spm = NULL;
    nmt_model_free(model);
    return -1;
}
