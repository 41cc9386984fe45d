/* nmt-gen-model: writes a tiny model file whose every parameter is one value, for end-to-end tests.
 *
 *   nmt-gen-model OUT.safetensors VALUE [HEADS]
 *
 * The model: vocabulary 20, d_model 8, HEADS heads (default 2), ffn 16, one layer per side, the other
 * settings at their defaults.
 */
#include "model/model_file.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: nmt-gen-model OUT.safetensors VALUE [HEADS]\n");
        return 2;
    }
    nmt_model_config c = nmt_model_config_default();
    c.vocab_size = 20;
    c.d_model = 8;
    c.heads = argc == 4 ? atoi(argv[3]) : 2;
    c.ffn = 16;
    c.encoder_layers = c.decoder_layers = 1;
    nmt_model m;
    if (nmt_model_init(&m, &c) < 0) {
        fprintf(stderr, "nmt-gen-model: %s\n", nmt_error());
        return 1;
    }
    float value = strtof(argv[2], NULL);
    for (size_t i = 0; i < m.num_params; i++) m.params[i] = value;
    int rc = nmt_model_save(&m, argv[1]);
    if (rc < 0) fprintf(stderr, "nmt-gen-model: %s\n", nmt_error());
    nmt_model_free(&m);
    return rc < 0 ? 1 : 0;
}
