/* Tests of model_file: save -> load gives the same parameters and config for every layout (tying,
 * learned positions, pre-LN); the file's names, shapes and metadata; refusal of truncated, foreign,
 * mismatched and checkpoint files with the tensor or key named; prefixed buffers for checkpoints;
 * averaging of files with known values; the checkpoint directory listing. */
#include "base/io.h"
#include "model/model_file.h"
#include "model/safetensors.h"
#include "base/util.h"
#include "testing.h"
#include "tiny_model.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* V=20, D=8, H=2, F=16, one layer each side: small enough to compare every float. */
static nmt_model_config tiny_config(void) {
    nmt_model_config c = nmt_test_tiny_config(20, 8, 16, 1, 1);
    c.max_positions = 12;
    return c;
}

static char *temp_path(const char *name) { return nmt_path_join(nmt_test_tmpdir, name); }

/* A model whose every parameter is value(i) for its index i in the buffer. */
static void make_model(nmt_model *m, const nmt_model_config *c, float scale, float shift) {
    ck_assert_msg(nmt_model_init(m, c) == 0 && nmt_model_zero_grads(m) == 0, "%s", nmt_error());
    for (size_t i = 0; i < m->num_params; i++) m->params[i] = scale * (float)(i % 1000) + shift;
}

static void expect_load_error(const char *path, const char *want) {
    nmt_model m;
    ck_assert_msg(nmt_model_load(&m, path) == -1, "%s loaded; want '%s'", path, want);
    ck_assert_msg(strstr(nmt_error(), path) && strstr(nmt_error(), want), "error '%s' lacks '%s'", nmt_error(), want);
    ck_assert_ptr_null(m.params);
}

START_TEST(save_load_round_trip_in_every_layout) {
    nmt_model_config layouts[4];
    for (int i = 0; i < 4; i++) layouts[i] = tiny_config();
    layouts[1].tie_embeddings = NMT_TIE_NONE;
    layouts[1].positions = NMT_POSITIONS_LEARNED;
    layouts[2].tie_embeddings = NMT_TIE_DECODER;
    layouts[2].norm_position = NMT_NORM_PRE;
    layouts[2].dropout = 0.3f;
    layouts[3].positions = NMT_POSITIONS_ROPE;
    layouts[3].norm_eps = 1e-6f;
    layouts[3].attention_dropout = 0.05f;
    char *path = temp_path("model.safetensors");
    for (int i = 0; i < 4; i++) {
        nmt_model a, b;
        ck_assert_int_eq(nmt_model_init(&a, &layouts[i]), 0);
        nmt_model_init_weights(&a, 42 + (uint64_t)i);
        ck_assert_int_eq(nmt_model_save(&a, path), 0);
        ck_assert_msg(nmt_model_load(&b, path) == 0, "%s", nmt_error());
        ck_assert_mem_eq(&a.config, &b.config, sizeof a.config);
        ck_assert_uint_eq(a.num_params, b.num_params);
        ck_assert_mem_eq(a.params, b.params, a.num_params * sizeof(float));
        nmt_model_free(&a);
        nmt_model_free(&b);
    }
    free(path);
}
END_TEST

START_TEST(file_has_names_shapes_and_metadata) {
    nmt_model_config c = tiny_config();
    c.norm_position = NMT_NORM_PRE;
    c.dropout = 0.1f;
    nmt_model m;
    make_model(&m, &c, 1.0f, 0.0f);
    char *path = temp_path("model.safetensors");
    ck_assert_int_eq(nmt_model_save(&m, path), 0);
    nmt_st_file f;
    ck_assert_int_eq(nmt_st_read(&f, path), 0);
    ck_assert_int_eq(f.num_tensors, m.num_tensors);
    ck_assert_int_eq(f.num_metadata, NMT_MODEL_METADATA);
    const char *expected_meta[][2] = {{"format", "nmt-model-1"}, {"vocab_size", "20"}, {"d_model", "8"},
                                      {"heads", "2"}, {"ffn", "16"}, {"encoder_layers", "1"},
                                      {"decoder_layers", "1"}, {"dropout", "0.1"}, {"attention_dropout", "0"},
                                      {"norm_position", "pre"}, {"positions", "sinusoidal"},
                                      {"max_positions", "12"}, {"norm_eps", "1e-05"}, {"tie_embeddings", "all"},
                                      {"output_bias", "0"}, {"source_eos", "1"}, {"activation", "relu"},
                                      {"embedding_norm", "0"}};
    for (int i = 0; i < NMT_MODEL_METADATA; i++)
        ck_assert_str_eq(nmt_st_meta(&f, expected_meta[i][0]), expected_meta[i][1]);
    /* PyTorch-style names and [out, in] shapes, as a PyTorch state dict of the same model has them. */
    const struct {
        const char *name;
        int rank;
        int64_t shape[2];
    } expected[] = {{"embed.weight", 2, {20, 8}},
                    {"encoder.layers.0.self_attn.q_proj.weight", 2, {8, 8}},
                    {"encoder.layers.0.self_attn.o_proj.bias", 1, {8}},
                    {"encoder.layers.0.ffn.fc1.weight", 2, {16, 8}},
                    {"encoder.layers.0.ffn.fc2.weight", 2, {8, 16}},
                    {"encoder.layers.0.ffn_norm.weight", 1, {8}},
                    {"decoder.layers.0.cross_attn.k_proj.weight", 2, {8, 8}},
                    {"decoder.layers.0.cross_attn_norm.bias", 1, {8}},
                    {"encoder.norm.weight", 1, {8}},
                    {"decoder.norm.bias", 1, {8}}};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        const nmt_st_tensor *t = nmt_st_find(&f, expected[i].name);
        ck_assert_msg(t != NULL, "no tensor %s", expected[i].name);
        ck_assert_int_eq(t->dtype, NMT_ST_F32);
        ck_assert_int_eq(t->rank, expected[i].rank);
        for (int d = 0; d < t->rank; d++) ck_assert_int_eq(t->shape[d], expected[i].shape[d]);
    }
    /* The tensors appear in the model's order, and tied tensors once. */
    for (int i = 0; i < m.num_tensors; i++) ck_assert_str_eq(f.tensors[i].name, m.tensors[i].name);
    ck_assert_ptr_null(nmt_st_find(&f, "output.weight"));
    nmt_st_free(&f);
    nmt_model_free(&m);
    free(path);
}
END_TEST

/* Writes the first `count` tensors of m's parameters with metadata md to path, plus, with extra_prefix,
 * m's gradient buffer under that prefix (as a checkpoint holds its Adam moments). */
static void write_variant(const char *path, const nmt_model *m, int count, const nmt_st_metadata *md, int num_md,
                          const char *extra_prefix) {
    nmt_st_tensor *plain, *extra = NULL;
    ck_assert_int_eq(nmt_model_tensor_list(m, m->params, "", &plain), 0);
    int total = count;
    nmt_st_tensor *all = malloc((size_t)(2 * m->num_tensors) * sizeof *all);
    memcpy(all, plain, (size_t)count * sizeof *all);
    if (extra_prefix) {
        ck_assert_int_eq(nmt_model_tensor_list(m, m->grads, extra_prefix, &extra), 0);
        memcpy(all + count, extra, (size_t)m->num_tensors * sizeof *all);
        total += m->num_tensors;
    }
    ck_assert_msg(nmt_st_write(path, all, total, md, num_md) == 0, "%s", nmt_error());
    free(all);
    free(plain);
    free(extra);
}

START_TEST(bad_files_are_refused_by_name) {
    nmt_model_config c = tiny_config();
    nmt_model m;
    make_model(&m, &c, 1.0f, 0.0f);
    nmt_model_metadata md;
    nmt_model_metadata_init(&md, &c);
    char *path = temp_path("bad.safetensors");

    /* Truncated and foreign files. */
    ck_assert_int_eq(nmt_model_save(&m, path), 0);
    ck_assert_int_eq(truncate(path, 1000), 0);
    expect_load_error(path, "the header length");
    ck_assert_int_eq(nmt_model_save(&m, path), 0);
    char *bytes;
    size_t size;
    ck_assert_int_eq(nmt_read_file(path, &bytes, &size), 0);
    ck_assert_int_eq(truncate(path, (off_t)size - 4), 0);
    expect_load_error(path, "past the end of the data");
    free(bytes);
    const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
    ck_assert_int_eq(nmt_atomic_write(path, png, sizeof png), 0);
    expect_load_error(path, "not a safetensors file");
    expect_load_error("/nonexistent/model.safetensors", "cannot open");

    /* A missing tensor, a checkpoint's extra tensors. */
    write_variant(path, &m, m.num_tensors - 1, md.entries, NMT_MODEL_METADATA, NULL);
    char want[160];
    snprintf(want, sizeof want, "tensor '%s' is missing", m.tensors[m.num_tensors - 1].name);
    expect_load_error(path, want);
    write_variant(path, &m, m.num_tensors, md.entries, NMT_MODEL_METADATA, "adam_m.");
    expect_load_error(path, "tensor 'adam_m.embed.weight' is not part of the model");

    /* Metadata: none, another format, a bad value, an impossible config. */
    write_variant(path, &m, m.num_tensors, NULL, 0, NULL);
    expect_load_error(path, "no \"format\" in the metadata: not a model written by nmt");
    nmt_model_metadata bad;
    nmt_model_metadata_init(&bad, &c);
    snprintf(bad.text[0][1], sizeof bad.text[0][1], "nmt-model-9");
    write_variant(path, &m, m.num_tensors, bad.entries, NMT_MODEL_METADATA, NULL);
    expect_load_error(path, "format 'nmt-model-9' is not 'nmt-model-1'");
    nmt_model_metadata_init(&bad, &c);
    snprintf(bad.text[3][1], sizeof bad.text[3][1], "two"); /* heads */
    write_variant(path, &m, m.num_tensors, bad.entries, NMT_MODEL_METADATA, NULL);
    expect_load_error(path, "metadata heads='two' is not a count");
    nmt_model_metadata_init(&bad, &c);
    snprintf(bad.text[3][1], sizeof bad.text[3][1], "3");
    write_variant(path, &m, m.num_tensors, bad.entries, NMT_MODEL_METADATA, NULL);
    expect_load_error(path, ": metadata: model.heads (3)");
    nmt_model_metadata_init(&bad, &c);
    snprintf(bad.text[9][1], sizeof bad.text[9][1], "middle"); /* norm_position */
    write_variant(path, &m, m.num_tensors, bad.entries, NMT_MODEL_METADATA, NULL);
    expect_load_error(path, "metadata norm_position='middle' is not a known value");
    write_variant(path, &m, m.num_tensors, md.entries, NMT_MODEL_METADATA - 5, NULL); /* no tie_embeddings */
    expect_load_error(path, "the metadata lacks the model's tie_embeddings");
    /* A file from before output_bias, source_eos, activation and embedding_norm reads their defaults. */
    write_variant(path, &m, m.num_tensors, md.entries, NMT_MODEL_METADATA - 4, NULL);
    nmt_model old;
    ck_assert_msg(nmt_model_load(&old, path) == 0, "%s", nmt_error());
    ck_assert_int_eq(old.config.output_bias, 0);
    ck_assert_int_eq(old.config.source_eos, 1);
    ck_assert_int_eq(old.config.activation, NMT_ACTIVATION_RELU);
    ck_assert_int_eq(old.config.embedding_norm, 0);
    nmt_model_free(&old);

    /* Tensors that do not fit the config: another d_model, another dtype. */
    nmt_model_metadata_init(&bad, &c);
    snprintf(bad.text[2][1], sizeof bad.text[2][1], "16");
    write_variant(path, &m, m.num_tensors, bad.entries, NMT_MODEL_METADATA, NULL);
    expect_load_error(path, "tensor 'embed.weight' has shape [20, 8], but the model's config needs [20, 16]");
    nmt_st_tensor *list;
    ck_assert_int_eq(nmt_model_tensor_list(&m, m.params, "", &list), 0);
    int64_t *wide = calloc(m.tensors[0].count, sizeof *wide);
    list[0].dtype = NMT_ST_I64;
    list[0].data = wide;
    list[0].size = m.tensors[0].count * sizeof *wide;
    ck_assert_int_eq(nmt_st_write(path, list, m.num_tensors, md.entries, NMT_MODEL_METADATA), 0);
    expect_load_error(path, "tensor 'embed.weight' is I64, not F32");
    free(wide);
    free(list);
    nmt_model_free(&m);
    free(path);
}
END_TEST

/* An int8 row factor that is not finite, or so large that 127 times it overflows, is refused. */
START_TEST(int8_factors_that_overflow_are_refused) {
    nmt_model_config c = tiny_config();
    nmt_model m;
    make_model(&m, &c, 1e-3f, 0.0f);
    char *path = temp_path("int8.safetensors"), *patched = temp_path("int8-patched.safetensors");
    ck_assert_int_eq(nmt_model_save_int8(&m, path), 0);
    const float bad[] = {3e38f, INFINITY};
    for (int b = 0; b < 2; b++) {
        nmt_st_file f;
        ck_assert_int_eq(nmt_st_read(&f, path), 0);
        int scale = -1;
        for (int i = 0; i < f.num_tensors && scale < 0; i++)
            if (strstr(f.tensors[i].name, ".scale")) scale = i;
        ck_assert_int_ge(scale, 0);
        nmt_st_tensor *tensors = malloc((size_t)f.num_tensors * sizeof *tensors);
        float *factors = malloc(f.tensors[scale].size);
        ck_assert(tensors && factors);
        memcpy(tensors, f.tensors, (size_t)f.num_tensors * sizeof *tensors);
        memcpy(factors, f.tensors[scale].data, f.tensors[scale].size);
        factors[0] = bad[b];
        tensors[scale].data = factors;
        int n = 0; /* the metadata less the writer's own checksum */
        nmt_st_metadata meta[64];
        for (int i = 0; i < f.num_metadata && n < 64; i++)
            if (strcmp(f.metadata[i].key, "data_checksum") != 0) meta[n++] = f.metadata[i];
        ck_assert_int_eq(nmt_st_write(patched, tensors, f.num_tensors, meta, n), 0);
        nmt_st_free(&f);
        free(tensors);
        free(factors);
        expect_load_error(patched, "row 0: factor");
        ck_assert_ptr_nonnull(strstr(nmt_error(), "is refused: a factor is >= 0 and 127 times it a finite float"));
    }
    nmt_model_free(&m);
    free(path);
    free(patched);
}
END_TEST

START_TEST(prefixed_buffers_round_trip) {
    /* What a checkpoint does: parameters plus a second buffer of the same layout under a prefix. */
    nmt_model_config c = tiny_config();
    nmt_model m;
    make_model(&m, &c, 0.5f, 1.0f);
    for (size_t i = 0; i < m.num_params; i++) m.grads[i] = -(float)i;
    char *path = temp_path("step.safetensors");
    nmt_model_metadata md;
    nmt_model_metadata_init(&md, &c);
    write_variant(path, &m, m.num_tensors, md.entries, NMT_MODEL_METADATA, "adam_m.");
    nmt_st_file f;
    ck_assert_int_eq(nmt_st_read(&f, path), 0);
    nmt_model_config back;
    ck_assert_int_eq(nmt_model_metadata_read(&back, &f, path), 0);
    ck_assert_mem_eq(&back, &c, sizeof c);
    float *params = calloc(m.num_params, sizeof *params), *moments = calloc(m.num_params, sizeof *moments);
    ck_assert_int_eq(nmt_model_tensor_read(&m, params, "", &f, path), 0);
    ck_assert_int_eq(nmt_model_tensor_read(&m, moments, "adam_m.", &f, path), 0);
    ck_assert_mem_eq(params, m.params, m.num_params * sizeof(float));
    ck_assert_mem_eq(moments, m.grads, m.num_params * sizeof(float));
    ck_assert_int_eq(nmt_model_tensor_read(&m, moments, "adam_v.", &f, path), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "tensor 'adam_v.embed.weight' is missing"));
    free(params);
    free(moments);
    nmt_st_free(&f);
    nmt_model_free(&m);
    free(path);
}
END_TEST

START_TEST(average_of_known_models) {
    /* Model a holds p(i) = i % 1000, b holds 3 p(i) + 2, checkpoint c holds -p(i) + 4 (and Adam
     * moments, which are ignored): the mean is (3 p(i) + 6) / 3 = p(i) + 2. */
    nmt_model_config c = tiny_config();
    nmt_model a, b, ck;
    make_model(&a, &c, 1.0f, 0.0f);
    make_model(&b, &c, 3.0f, 2.0f);
    make_model(&ck, &c, -1.0f, 4.0f);
    for (size_t i = 0; i < ck.num_params; i++) ck.grads[i] = 1e6f;
    char *pa = temp_path("a.safetensors"), *pb = temp_path("b.safetensors"), *pc = temp_path("c.safetensors");
    char *out = temp_path("avg.safetensors");
    ck_assert_int_eq(nmt_model_save(&a, pa), 0);
    ck_assert_int_eq(nmt_model_save(&b, pb), 0);
    nmt_model_metadata md;
    nmt_model_metadata_init(&md, &c);
    write_variant(pc, &ck, ck.num_tensors, md.entries, NMT_MODEL_METADATA, "adam_m.");
    const char *paths[] = {pa, pb, pc};
    ck_assert_msg(nmt_model_average(paths, 3, "", out) == 0, "%s", nmt_error());
    nmt_model avg;
    ck_assert_int_eq(nmt_model_load(&avg, out), 0);
    for (size_t i = 0; i < avg.num_params; i++) ck_assert_float_eq(avg.params[i], (float)(i % 1000) + 2.0f);
    nmt_model_free(&avg);
    /* Two models: (p + 3p + 2) / 2 = 2p + 1. One model: itself. */
    ck_assert_int_eq(nmt_model_average(paths, 2, "", out), 0);
    ck_assert_int_eq(nmt_model_load(&avg, out), 0);
    for (size_t i = 0; i < avg.num_params; i++) ck_assert_float_eq(avg.params[i], 2.0f * (float)(i % 1000) + 1.0f);
    nmt_model_free(&avg);
    ck_assert_int_eq(nmt_model_average(paths + 1, 1, "", out), 0);
    ck_assert_int_eq(nmt_model_load(&avg, out), 0);
    ck_assert_mem_eq(avg.params, b.params, b.num_params * sizeof(float));
    nmt_model_free(&avg);

    /* The moving averages: checkpoints c and e hold q(i) = i % 7 and q(i) + 2 as "ema." tensors
     * beside their weights, so their mean is q(i) + 1; a model file without them is refused. */
    char *pe = temp_path("e.safetensors");
    for (size_t i = 0; i < ck.num_params; i++) ck.grads[i] = (float)(i % 7);
    write_variant(pc, &ck, ck.num_tensors, md.entries, NMT_MODEL_METADATA, "ema.");
    for (size_t i = 0; i < ck.num_params; i++) ck.grads[i] += 2.0f;
    write_variant(pe, &ck, ck.num_tensors, md.entries, NMT_MODEL_METADATA, "ema.");
    const char *emas[] = {pc, pe, pa};
    ck_assert_msg(nmt_model_average(emas, 2, "ema.", out) == 0, "%s", nmt_error());
    ck_assert_int_eq(nmt_model_load(&avg, out), 0);
    for (size_t i = 0; i < avg.num_params; i++) ck_assert_float_eq(avg.params[i], (float)(i % 7) + 1.0f);
    nmt_model_free(&avg);
    ck_assert_int_eq(nmt_model_average(emas, 3, "ema.", out), -1);
    char no_ema[300];
    snprintf(no_ema, sizeof no_ema, "%s: no ema.* tensors (a checkpoint of a run without train.ema_decay, or not a checkpoint)", pa);
    ck_assert_str_eq(nmt_error(), no_ema);
    free(pe);

    /* Models of different configs are not averaged. */
    nmt_model_config other = c;
    other.heads = 4;
    nmt_model d;
    make_model(&d, &other, 1.0f, 0.0f);
    ck_assert_int_eq(nmt_model_save(&d, pb), 0);
    ck_assert_int_eq(nmt_model_average(paths, 2, "", out), -1);
    char want[300];
    snprintf(want, sizeof want, "%s: its model differs from %s's (heads: 4, not 2)", pb, pa);
    ck_assert_str_eq(nmt_error(), want);
    ck_assert_int_eq(nmt_model_average(paths, 0, "", out), -1);
    nmt_model_free(&a);
    nmt_model_free(&b);
    nmt_model_free(&ck);
    nmt_model_free(&d);
    free(pa);
    free(pb);
    free(pc);
    free(out);
}
END_TEST

START_TEST(the_vocabulary_fingerprint_travels_with_the_model) {
    nmt_model_config c = tiny_config();
    nmt_model a, b, back;
    make_model(&a, &c, 1.0f, 0.0f);
    make_model(&b, &c, 2.0f, 0.0f);
    a.vocab_fingerprint = 0x0123456789abcdefull;
    char *pa = temp_path("fa.safetensors"), *pb = temp_path("fb.safetensors"), *out = temp_path("favg.safetensors");
    ck_assert_int_eq(nmt_model_save(&a, pa), 0);
    ck_assert_int_eq(nmt_model_save(&b, pb), 0); /* b knows no fingerprint: none is written */
    ck_assert_int_eq(nmt_model_load(&back, pa), 0);
    ck_assert_uint_eq(back.vocab_fingerprint, 0x0123456789abcdefull);
    ck_assert_int_eq(nmt_model_check_vocab(back.vocab_fingerprint, pa, 0x0123456789abcdefull, "spm.model"), 0);
    nmt_model_free(&back);
    ck_assert_int_eq(nmt_model_check_vocab(0x0123456789abcdefull, "m.safetensors", 0x1111111111111111ull, "spm.model"), -1);
    ck_assert_str_eq(nmt_error(), "spm.model is not the vocabulary m.safetensors was trained with (fingerprint "
                                  "1111111111111111, the model records 0123456789abcdef): put back the spm.model of that "
                                  "training run");
    ck_assert_int_eq(nmt_model_check_vocab(0, "old.safetensors", 0x1111111111111111ull, "spm.model"), 0); /* unrecorded */
    const char *both[] = {pa, pb};
    ck_assert_int_eq(nmt_model_average(both, 2, "", out), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "trained with another vocabulary than"));
    nmt_model_free(&a);
    nmt_model_free(&b);
    free(pa), free(pb), free(out);
}
END_TEST

START_TEST(checkpoint_directory_listing) {
    char **paths;
    int count;
    ck_assert_int_eq(nmt_model_checkpoints(nmt_test_tmpdir, &paths, &count), 0); /* no checkpoints/ yet */
    ck_assert_int_eq(count, 0);
    ck_assert_ptr_null(paths[0]);
    nmt_model_paths_free(paths);
    long steps[] = {2, 10, 1, 123456789};
    for (int i = 0; i < 4; i++) {
        char *p = nmt_model_checkpoint_path(nmt_test_tmpdir, steps[i]);
        if (i == 0) {
            char want[128];
            snprintf(want, sizeof want, "%s/checkpoints/step-00000002.safetensors", nmt_test_tmpdir);
            ck_assert_str_eq(p, want);
            ck_assert_int_eq(nmt_mkdirs(strcat(strcpy(want, nmt_test_tmpdir), "/checkpoints")), 0);
        }
        ck_assert_int_eq(nmt_atomic_write(p, "x", 1), 0);
        free(p);
    }
    const char *others[] = {"step-00000003.safetensors.tmp.4242", "step-.safetensors", "notes.txt", "step-7x.safetensors"};
    for (int i = 0; i < 4; i++) {
        char name[128];
        snprintf(name, sizeof name, "%s/checkpoints/%s", nmt_test_tmpdir, others[i]);
        ck_assert_int_eq(nmt_atomic_write(name, "x", 1), 0);
    }
    ck_assert_int_eq(nmt_model_checkpoints(nmt_test_tmpdir, &paths, &count), 0);
    ck_assert_int_eq(count, 4);
    const char *order[] = {"step-00000001", "step-00000002", "step-00000010", "step-123456789"};
    for (int i = 0; i < 4; i++) ck_assert_ptr_nonnull(strstr(paths[i], order[i]));
    ck_assert_ptr_null(paths[4]);
    nmt_model_paths_free(paths);
}
END_TEST

/* Loads the model file and averages it with itself. */
static int load_and_average(void *path) {
    char *out = temp_path("avg.safetensors");
    const char *paths[] = {path, path};
    nmt_model back;
    int rc = out ? nmt_model_load(&back, path) : -1;
    if (rc == 0) {
        nmt_model_free(&back);
        rc = nmt_model_average(paths, 2, "", out);
    }
    free(out);
    return rc;
}

START_TEST(every_allocation_failure_is_reported) {
    nmt_model_config c = tiny_config();
    nmt_model m;
    make_model(&m, &c, 1.0f, 0.0f);
    char *path = temp_path("m.safetensors");
    ck_assert_int_eq(nmt_model_save(&m, path), 0);
    ck_assert_int_gt(nmt_test_alloc_sweep(load_and_average, path), 5);
    nmt_model_free(&m);
    free(path);
}
END_TEST

int main(void) {
    Suite *s = suite_create("model_file");
    TCase *tc = tcase_create("model_file");
    tcase_set_timeout(tc, 60); /* the allocation sweep takes seconds under ASan on a loaded machine */
    tcase_add_test(tc, save_load_round_trip_in_every_layout);
    tcase_add_test(tc, file_has_names_shapes_and_metadata);
    tcase_add_test(tc, bad_files_are_refused_by_name);
    tcase_add_test(tc, prefixed_buffers_round_trip);
    tcase_add_test(tc, average_of_known_models);
    tcase_add_test(tc, the_vocabulary_fingerprint_travels_with_the_model);
    tcase_add_test(tc, checkpoint_directory_listing);
    tcase_add_test(tc, every_allocation_failure_is_reported);
    tcase_add_test(tc, int8_factors_that_overflow_are_refused);
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
