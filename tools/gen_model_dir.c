/* nmt-gen-model-dir: a model directory with random weights, for end-to-end tests of translation.
 *
 *   nmt-gen-model-dir SPM.model OUT_DIR [SEED]
 *
 * Writes OUT_DIR/model.safetensors (vocabulary of the SentencePiece model, d_model 32, 2 heads, ffn
 * 64, one layer per side, weights from nmt_model_init_weights(SEED)) and a copy of SPM.model as
 * OUT_DIR/spm.model: what `nmt translate -m` reads, without training.
 */
#include "nmt/io.h"
#include "nmt/model_file.h"
#include "nmt/spm.h"
#include "nmt/util.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: nmt-gen-model-dir SPM.model OUT_DIR [SEED]\n");
        return 2;
    }
    nmt_spm *spm = NULL;
    char *spm_text = NULL, *model_path = NULL, *spm_path = NULL;
    size_t spm_size = 0;
    nmt_model m = {0};
    int rc = 1;
    if (nmt_spm_load(&spm, argv[1]) < 0 || nmt_read_file(argv[1], &spm_text, &spm_size) < 0) goto done;
    nmt_model_config c = nmt_model_config_default();
    c.vocab_size = nmt_spm_vocab_size(spm);
    c.d_model = 32;
    c.heads = 2;
    c.ffn = 64;
    c.encoder_layers = c.decoder_layers = 1;
    if (nmt_model_create(&m, &c) < 0) goto done;
    nmt_model_init_weights(&m, argc == 4 ? strtoull(argv[3], NULL, 10) : 1);
    model_path = nmt_path_join(argv[2], "model.safetensors");
    spm_path = nmt_path_join(argv[2], "spm.model");
    if (!model_path || !spm_path || nmt_mkdirs(argv[2]) < 0 || nmt_model_save(&m, model_path) < 0 ||
        nmt_atomic_write(spm_path, spm_text, spm_size) < 0)
        goto done;
    rc = 0;
done:
    if (rc) fprintf(stderr, "nmt-gen-model-dir: %s\n", nmt_error());
    nmt_spm_free(spm);
    nmt_model_free(&m);
    free(spm_text);
    free(model_path);
    free(spm_path);
    return rc;
}
