/* tiny_model: the one maker of the tiny models that the C tests and nmt-gen-model build.
 *
 * Every tiny model starts from nmt_test_tiny_config(vocab, d_model, ffn, encoder_layers,
 * decoder_layers): the default config with those sizes and 2 heads. The variants the tests need are
 * its parameters and the functions' below, not copies:
 *   nmt_test_tiny_constant(path, value, heads)  a model file (vocabulary 20, d_model 8, ffn 16, one
 *       layer a side, `heads` heads) whose every parameter is `value` (nmt-gen-model writes it for
 *       the end-to-end tests of `nmt average`);
 *   nmt_test_tiny_perturbed(m, c, seed)  initialises m from c with nmt_model_init_weights(seed), then
 *       perturbs every parameter (biases and LayerNorm gains too) so that all of them matter, and
 *       makes eos likely enough for hypotheses to end before the length limit (the decoding tests);
 *   nmt_test_tiny_dir(dir)  writes into an existing directory what `nmt train` would leave there:
 *       spm.model (a SentencePiece model of 36 pieces trained on a generated English corpus),
 *       model.safetensors (1+1 layers, d_model 16, ffn 32, nmt_model_init_weights(3), so translations
 *       are deterministic nonsense of varied lengths) and config.yaml (naming the corpus files
 *       train.en and train.hi, which records the pair en -> hi). Decoding it costs milliseconds.
 * Each returns 0, or -1 with nmt_error() set (nmt-gen-model is no Check test); in a Check test,
 * nmt_test_model_dir(dir) is nmt_test_tiny_dir that fails the test with the reason.
 * The end-to-end tests' trained toy model and corpora come from tests/support/tiny_model.sh.
 */
#ifndef NMT_TEST_TINY_MODEL_H
#define NMT_TEST_TINY_MODEL_H

#include "base/io.h"
#include "base/random.h"
#include "base/util.h"
#include "model/model.h"
#include "model/model_file.h"
#include "text/spm.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

static inline nmt_model_config nmt_test_tiny_config(int vocab, int d_model, int ffn, int encoder_layers,
                                                    int decoder_layers) {
    nmt_model_config c = nmt_model_config_default();
    c.vocab_size = vocab;
    c.d_model = d_model;
    c.heads = 2;
    c.ffn = ffn;
    c.encoder_layers = encoder_layers;
    c.decoder_layers = decoder_layers;
    return c;
}

static inline int nmt_test_tiny_constant(const char *path, float value, int heads) {
    nmt_model_config c = nmt_test_tiny_config(20, 8, 16, 1, 1);
    c.heads = heads;
    nmt_model m;
    if (nmt_model_init(&m, &c) < 0) return -1;
    for (size_t i = 0; i < m.num_params; i++) m.params[i] = value;
    int rc = nmt_model_save(&m, path);
    nmt_model_free(&m);
    return rc;
}

static inline int nmt_test_tiny_perturbed(nmt_model *m, const nmt_model_config *c, uint64_t seed) {
    if (nmt_model_init(m, c) < 0) return -1;
    nmt_model_init_weights(m, seed);
    uint64_t s = seed;
    for (size_t i = 0; i < m->num_params; i++)
        m->params[i] += 0.1f * ((float)(nmt_random_next(&s) >> 40) / 16777216.0f - 0.5f);
    for (int j = 0; j < c->d_model; j++) m->p.output[NMT_EOS * c->d_model + j] *= 4.0f;
    return 0;
}

/* The English side of the directory's corpus: 300 lines of 2 .. 7 words from a fixed generator. */
static inline int nmt_test_tiny_corpus(const char *path) {
    static const char *const words[] = {"the", "cat", "dog", "sees", "likes", "a", "big", "small", "red", "house",
                                        "tree", "runs", "and", "blue", "bird", "sleeps"};
    FILE *fp = fopen(path, "w");
    if (!fp) return nmt_error_set("%s: cannot create", path);
    unsigned state = 11;
    for (int i = 0; i < 300; i++) {
        int n = 2 + (int)((state = state * 1664525u + 1013904223u) >> 16) % 6;
        for (int w = 0; w < n; w++)
            fprintf(fp, "%s%s", w ? " " : "", words[((state = state * 1664525u + 1013904223u) >> 16) % 16]);
        fputc('\n', fp);
    }
    return fclose(fp) == 0 ? 0 : nmt_error_set("%s: cannot write", path);
}

static inline int nmt_test_tiny_dir(const char *dir) {
    char *corpus = nmt_path_join(dir, "train.en"), *prefix = nmt_path_join(dir, "spm");
    char *config = nmt_path_join(dir, "config.yaml"), *model = nmt_path_join(dir, "model.safetensors");
    int rc = corpus && prefix && config && model ? 0 : nmt_error_set("out of memory");
    if (rc == 0) rc = nmt_test_tiny_corpus(corpus);
    const char *inputs[] = {corpus};
    nmt_spm_train_options so = {.inputs = inputs, .num_inputs = 1, .vocab_size = 36, .model_type = "unigram",
                                .character_coverage = 1.0, .output_prefix = prefix, .quiet = 1};
    if (rc == 0) rc = nmt_spm_train(&so);
    nmt_model_config c = nmt_test_tiny_config(36, 16, 32, 1, 1);
    nmt_model m;
    if (rc == 0) rc = nmt_model_init(&m, &c);
    if (rc == 0) {
        nmt_model_init_weights(&m, 3);
        rc = nmt_model_save(&m, model);
        nmt_model_free(&m);
    }
    static const char yaml[] = "data:\n  train: {src: train.en, tgt: train.hi}\n";
    if (rc == 0) rc = nmt_atomic_write(config, yaml, sizeof yaml - 1);
    free(corpus);
    free(prefix);
    free(config);
    free(model);
    return rc < 0 ? -1 : 0;
}

static inline void nmt_test_model_dir(const char *dir) {
    ck_assert_msg(nmt_test_tiny_dir(dir) == 0, "%s", nmt_error());
}

#endif
