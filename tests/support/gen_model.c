/* nmt-gen-model: writes a tiny model file whose every parameter is one value, for end-to-end tests.
 *
 *   nmt-gen-model OUT.safetensors VALUE [HEADS]
 *
 * The model is tiny_model.h's nmt_test_tiny_constant: vocabulary 20, d_model 8, HEADS heads (default
 * 2), ffn 16, one layer per side, the other settings at their defaults.
 */
#include "tiny_model.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: nmt-gen-model OUT.safetensors VALUE [HEADS]\n");
        return 2;
    }
    if (nmt_test_tiny_constant(argv[1], strtof(argv[2], NULL), argc == 4 ? atoi(argv[3]) : 2) < 0) {
        fprintf(stderr, "nmt-gen-model: %s\n", nmt_error());
        return 1;
    }
    return 0;
}
