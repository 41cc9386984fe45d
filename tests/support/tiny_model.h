/* tiny_model: a tiny model directory for the tests of the translation API and the server.
 *
 * nmt_test_model_dir(dir) writes into an existing directory what `nmt train` would leave there:
 * spm.model (a SentencePiece model of 36 pieces trained on a generated English corpus),
 * model.safetensors (a 1+1-layer Transformer, d_model 16, randomly initialised with a fixed seed, so
 * translations are deterministic nonsense of varied lengths) and config.yaml (naming the corpus files
 * train.en and train.hi, which records the pair en -> hi). Decoding it costs milliseconds.
 */
#ifndef NMT_TEST_TINY_MODEL_H
#define NMT_TEST_TINY_MODEL_H

#include "base/io.h"
#include "base/util.h"
#include "model/model.h"
#include "model/model_file.h"
#include "text/spm.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

static inline void nmt_test_model_dir(const char *dir) {
    static const char *const words[] = {"the", "cat", "dog", "sees", "likes", "a", "big", "small", "red", "house",
                                        "tree", "runs", "and", "blue", "bird", "sleeps"};
    char *corpus = nmt_path_join(dir, "train.en"), *prefix = nmt_path_join(dir, "spm");
    char *config = nmt_path_join(dir, "config.yaml"), *model = nmt_path_join(dir, "model.safetensors");
    ck_assert_ptr_nonnull(corpus);
    FILE *fp = fopen(corpus, "w");
    ck_assert_ptr_nonnull(fp);
    unsigned state = 11;
    for (int i = 0; i < 300; i++) {
        int n = 2 + (int)((state = state * 1664525u + 1013904223u) >> 16) % 6;
        for (int w = 0; w < n; w++)
            fprintf(fp, "%s%s", w ? " " : "", words[((state = state * 1664525u + 1013904223u) >> 16) % 16]);
        fputc('\n', fp);
    }
    ck_assert_int_eq(fclose(fp), 0);
    const char *inputs[] = {corpus};
    nmt_spm_train_options so = {.inputs = inputs, .num_inputs = 1, .vocab_size = 36, .model_type = "unigram",
                                .character_coverage = 1.0, .output_prefix = prefix, .quiet = 1};
    ck_assert_msg(nmt_spm_train(&so) == 0, "%s", nmt_error());
    nmt_model_config c = nmt_model_config_default();
    c.vocab_size = 36;
    c.d_model = 16;
    c.heads = 2;
    c.ffn = 32;
    c.encoder_layers = c.decoder_layers = 1;
    nmt_model m;
    ck_assert_msg(nmt_model_init(&m, &c) == 0, "%s", nmt_error());
    nmt_model_init_weights(&m, 3);
    ck_assert_msg(nmt_model_save(&m, model) == 0, "%s", nmt_error());
    nmt_model_free(&m);
    static const char yaml[] = "data:\n  train: {src: train.en, tgt: train.hi}\n";
    ck_assert_int_eq(nmt_atomic_write(config, yaml, sizeof yaml - 1), 0);
    free(corpus);
    free(prefix);
    free(config);
    free(model);
}

#endif
