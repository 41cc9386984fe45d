/* fuzz_model_file: loading a model file from elsewhere (nmt_model_load, as `nmt translate -m` does) and
 * averaging it (nmt_model_average, as `nmt average` reads checkpoints).
 *
 * A model file is a safetensors file (fuzz_safetensors covers the format) whose metadata describes the
 * model and whose tensors must be exactly the model's. The metadata decides how much memory the model
 * takes, so a small damaged or hostile file must not make nmt allocate what the file cannot fill.
 *
 * Properties:
 *   - a refused file gives an error that starts with the file's name, and leaves nothing to free;
 *   - an accepted model has a config that passes nmt_model_config_check, and its parameters are the
 *     file's: saved again (nmt_model_save) and reloaded they are bit-identical, under the same config;
 *   - the average of the file alone succeeds exactly when the file loads, and equals it (as values:
 *     the sum turns -0 into +0);
 *   - with the 1st, 2nd, ... allocation failing, loading reports "out of memory".
 *
 * Seeds: three tiny models (vocabulary 6, d_model 4, one layer a side) in each norm position,
 * position kind and tying, written by nmt_model_save; metadata-only files that claim huge models.
 */
#include "fuzz.h"
#include "model/model_file.h"

#include <math.h>

static int load_and_free(void *context) {
    nmt_model m;
    int rc = nmt_model_load(&m, context);
    if (rc == 0) nmt_model_free(&m);
    return rc;
}

/* Same config and parameters: bit for bit, or (bitwise = 0, for an average, where 0 + -0 is +0) as
 * values, NaN matching NaN. */
static void check_same_model(const nmt_model *a, const nmt_model *b, int bitwise, const char *what) {
    FUZZ_CHECK(memcmp(&a->config, &b->config, sizeof a->config) == 0, "%s: another config", what);
    FUZZ_CHECK(a->num_params == b->num_params, "%s: %zu parameters, not %zu", what, b->num_params, a->num_params);
    if (bitwise) {
        FUZZ_CHECK(memcmp(a->params, b->params, a->num_params * sizeof *a->params) == 0, "%s: other parameters", what);
        return;
    }
    for (size_t i = 0; i < a->num_params; i++)
        FUZZ_CHECK(a->params[i] == b->params[i] || (isnan(a->params[i]) && isnan(b->params[i])),
                   "%s: parameter %zu is %g, not %g", what, i, (double)b->params[i], (double)a->params[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file(0, "model.safetensors", data, size);
    nmt_model m;
    int rc = nmt_model_load(&m, path);
    const char *out = fuzz_file(1, "average.safetensors", "", 0);
    const char *paths[] = {path};
    int averaged = nmt_model_average(paths, 1, "", out);
    if (rc < 0) {
        FUZZ_CHECK(averaged < 0 || nmt_model_load(&m, path) < 0, "averaged a file that does not load");
        FUZZ_CHECK(strncmp(nmt_error(), path, strlen(path)) == 0 || strstr(nmt_error(), "out of memory"),
                   "the error does not name the file: '%s'", nmt_error());
        return 0;
    }
    FUZZ_CHECK(nmt_model_config_check(&m.config) == 0, "a loaded config fails its check: %s", nmt_error());
    const char *copy = fuzz_file(2, "saved.safetensors", "", 0);
    FUZZ_CHECK(nmt_model_save(&m, copy) == 0, "%s", nmt_error());
    nmt_model again;
    FUZZ_CHECK(nmt_model_load(&again, copy) == 0, "a saved model does not load: %s", nmt_error());
    check_same_model(&m, &again, 1, "saved and reloaded");
    nmt_model_free(&again);
    FUZZ_CHECK(averaged == 0, "the average of a loadable file failed: %s", nmt_error());
    FUZZ_CHECK(nmt_model_load(&again, out) == 0, "the average does not load: %s", nmt_error());
    check_same_model(&m, &again, 0, "the average of one file");
    nmt_model_free(&again);
    nmt_model_free(&m);
    fuzz_alloc_sweep(load_and_free, (void *)path, 64);
    return 0;
}
