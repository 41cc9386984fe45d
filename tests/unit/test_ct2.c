/* Tests of ct2 and ct2_file: a tiny CTranslate2 model written here (binary version 6, revision 7)
 * loads with its ids renumbered around nmt's specials and every row moved with its token; damaged
 * files and variants nmt does not implement are refused with the file and the variable named. */
#include "model/ct2.h"
#include "base/io.h"
#include "base/util.h"
#include "text/spm.h"
#include "text/vocab.h"
#include "testing.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { D = 4, F = 8, VS = 5, VT = 6 }; /* VT: 5 target tokens + the <unk> the reader appends */

typedef struct writer {
    unsigned char buf[1 << 15];
    size_t at;
} writer;

static void put(writer *w, const void *p, size_t n) {
    ck_assert_uint_le(w->at + n, sizeof w->buf);
    memcpy(w->buf + w->at, p, n);
    w->at += n;
}
static void put_u32(writer *w, uint32_t v) { put(w, &v, 4); }
static void put_string(writer *w, const char *s) {
    uint16_t n = (uint16_t)(strlen(s) + 1);
    put(w, &n, 2);
    put(w, s, n);
}

/* A float32 variable whose element i is base + i / 100, or a scalar of `bytes` bytes (type id). */
static void put_var(writer *w, const char *name, int rank, const uint32_t *dims, float base) {
    put_string(w, name);
    unsigned char r = (unsigned char)rank, type = 0;
    put(w, &r, 1);
    uint32_t n = 1;
    for (int d = 0; d < rank; d++) put_u32(w, dims[d]), n *= dims[d];
    put(w, &type, 1);
    put_u32(w, 4 * n);
    for (uint32_t i = 0; i < n; i++) {
        float v = base + (float)i / 100.0f;
        put(w, &v, 4);
    }
}

static void put_scalar(writer *w, const char *name, int8_t value) {
    put_string(w, name);
    unsigned char zero = 0, type = 1;
    put(w, &zero, 1);
    put(w, &type, 1);
    put_u32(w, 1);
    put(w, &value, 1);
}

static int variables; /* counted while writing, patched in at the end */

static void linear(writer *w, const char *prefix, uint32_t out, uint32_t in, float base) {
    char name[160];
    uint32_t dims[2] = {out, in};
    snprintf(name, sizeof name, "%s/weight", prefix);
    put_var(w, name, 2, dims, base);
    snprintf(name, sizeof name, "%s/bias", prefix);
    put_var(w, name, 1, dims, base / 2);
    variables += 2;
}

static void norm(writer *w, const char *prefix) {
    char name[160];
    uint32_t dims[1] = {D};
    snprintf(name, sizeof name, "%s/gamma", prefix);
    put_var(w, name, 1, dims, 1.0f);
    snprintf(name, sizeof name, "%s/beta", prefix);
    put_var(w, name, 1, dims, 0.0f);
    variables += 2;
}

/* Writes DIR/model.bin (with `extra` scalar attribute, or NULL) and the vocabularies. */
static void write_model(const char *dir, int version, const char *extra, int8_t extra_value) {
    writer *w = calloc(1, sizeof *w);
    ck_assert_ptr_nonnull(w);
    variables = 0;
    put_u32(w, (uint32_t)version);
    put_string(w, "TransformerSpec");
    put_u32(w, 7);
    const size_t count_at = w->at;
    put_u32(w, 0);
    uint32_t src[2] = {VS, D}, tgt[2] = {VT, D};
    put_var(w, "encoder/embeddings_0/weight", 2, src, 0.1f);
    put_var(w, "decoder/embeddings/weight", 2, tgt, 0.2f);
    variables += 2;
    linear(w, "decoder/projection", VT, D, 0.3f);
    for (int s = 0; s < 2; s++) {
        const char *scope = s ? "decoder" : "encoder";
        char name[128];
        snprintf(name, sizeof name, "%s/layer_0/self_attention/linear_0", scope);
        linear(w, name, 3 * D, D, 0.01f);
        snprintf(name, sizeof name, "%s/layer_0/self_attention/linear_1", scope);
        linear(w, name, D, D, 0.02f);
        snprintf(name, sizeof name, "%s/layer_0/self_attention/layer_norm", scope);
        norm(w, name);
        snprintf(name, sizeof name, "%s/layer_0/ffn/linear_0", scope);
        linear(w, name, F, D, 0.03f);
        snprintf(name, sizeof name, "%s/layer_0/ffn/linear_1", scope);
        linear(w, name, D, F, 0.04f);
        snprintf(name, sizeof name, "%s/layer_0/ffn/layer_norm", scope);
        norm(w, name);
        snprintf(name, sizeof name, "%s/layer_norm", scope);
        norm(w, name);
        snprintf(name, sizeof name, "%s/num_heads", scope);
        put_scalar(w, name, 2);
        variables++;
    }
    linear(w, "decoder/layer_0/attention/linear_0", D, D, 0.05f);
    linear(w, "decoder/layer_0/attention/linear_1", 2 * D, D, 0.06f);
    linear(w, "decoder/layer_0/attention/linear_2", D, D, 0.07f);
    norm(w, "decoder/layer_0/attention/layer_norm");
    if (extra) {
        put_scalar(w, extra, extra_value);
        variables++;
    }
    memcpy(w->buf + count_at, &(uint32_t){(uint32_t)variables}, 4);
    put_u32(w, 0); /* aliases */
    ck_assert_int_eq(nmt_mkdirs(dir), 0);
    char *path = nmt_path_join(dir, "model.bin");
    ck_assert_int_eq(nmt_atomic_write(path, w->buf, w->at), 0);
    free(path);
    free(w);
    path = nmt_path_join(dir, "source_vocabulary.txt");
    const char *source = "<blank>\n<s>\n</s>\n<unk>\na\n";
    ck_assert_int_eq(nmt_atomic_write(path, source, strlen(source)), 0);
    free(path);
    path = nmt_path_join(dir, "target_vocabulary.json");
    const char *json = "[\"<blank>\", \"<s>\", \"</s>\", \"x\", \"y\"]";
    ck_assert_int_eq(nmt_atomic_write(path, json, strlen(json)), 0);
    free(path);
}

static char *model_dir(const char *name) { return nmt_path_join(nmt_test_tmpdir, name); }

START_TEST(a_model_loads_with_its_rows_moved_to_nmt_ids) {
    char *dir = model_dir("good");
    write_model(dir, 6, NULL, 0);
    ck_assert_int_eq(nmt_ct2_is_model_dir(dir), 1);
    nmt_model m;
    nmt_spm *spm;
    ck_assert_msg(nmt_ct2_open(dir, NULL, &m, &spm) == 0, "%s", nmt_error());
    const nmt_model_config *c = &m.config;
    ck_assert_int_eq(c->vocab_size, VT);
    ck_assert_int_eq(c->d_model, D);
    ck_assert_int_eq(c->heads, 2);
    ck_assert_int_eq(c->ffn, F);
    ck_assert_int_eq(c->output_bias, 1);
    ck_assert_int_eq(c->source_eos, 0);
    ck_assert_int_eq(c->norm_position, NMT_NORM_PRE);
    ck_assert_int_eq(c->positions, NMT_POSITIONS_LEARNED);
    /* Target ids: <blank> 0, <unk> (appended, CTranslate2 id 5) 1, <s> 2, </s> 3, x 4, y 5. */
    int32_t *ids = NULL;
    size_t cap = 0, n;
    ck_assert_int_eq(nmt_spm_encode_target(spm, "y x  zz", 7, &ids, &cap, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(ids[0], 5);
    ck_assert_int_eq(ids[1], 4);
    ck_assert_int_eq(ids[2], NMT_UNK);
    /* Source: <blank> is padding, never read from input; <unk> (id 3) to 1, a (id 4) to 4. */
    ck_assert_int_eq(nmt_spm_encode(spm, "a <blank> <s>", 13, &ids, &cap, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(ids[0], 4);
    ck_assert_int_eq(ids[1], NMT_UNK);
    ck_assert_int_eq(ids[2], NMT_BOS);
    const int32_t out[] = {NMT_BOS, 5, 4, NMT_EOS};
    char *text = nmt_spm_decode(spm, out, 4);
    ck_assert_str_eq(text, "y x");
    free(text);
    free(ids);
    /* Rows: embeddings and projection follow their tokens (element i of a table is base + i / 100). */
    ck_assert_float_eq_tol(m.p.tgt_embed[4 * D], 0.2f + (float)(3 * D) / 100.0f, 1e-6f); /* x: id 3 */
    ck_assert_float_eq_tol(m.p.tgt_embed[1 * D], 0.2f + (float)(5 * D) / 100.0f, 1e-6f); /* <unk>: id 5 */
    ck_assert_float_eq_tol(m.p.output[2 * D + 1], 0.3f + (float)(1 * D + 1) / 100.0f, 1e-6f); /* <s>: id 1 */
    ck_assert_float_eq_tol(m.p.output_bias[3], 0.15f + 2.0f / 100.0f, 1e-6f); /* </s>: id 2 */
    ck_assert_float_eq_tol(m.p.src_embed[1 * D], 0.1f + (float)(3 * D) / 100.0f, 1e-6f);   /* <unk>: id 3 */
    /* CTranslate2's sinusoids, counted from 1: position 0 is sin(1), ..., cos(1 * 10000^-(j/(D/2-1))). */
    ck_assert_float_eq_tol(m.p.src_positions[0], sinf(1.0f), 1e-6f);
    ck_assert_float_eq_tol(m.p.src_positions[D / 2], cosf(1.0f), 1e-6f);
    ck_assert_float_eq_tol(m.p.tgt_positions[D + 1], sinf(2.0f / 10000.0f), 1e-6f);
    nmt_spm_free(spm);
    nmt_model_free(&m);
    free(dir);
}
END_TEST

/* CTranslate2 4.x's TransformerEncoderSpec always writes encoder/multi_query_attention (false unless the
 * converter asked for it): a model that has it false loads, one that has it true is refused. */
START_TEST(multi_query_attention_false_loads) {
    char *dir = model_dir("mqa");
    write_model(dir, 6, "encoder/multi_query_attention", 0);
    nmt_model m;
    nmt_spm *spm;
    ck_assert_msg(nmt_ct2_open(dir, NULL, &m, &spm) == 0, "%s", nmt_error());
    ck_assert_int_eq(m.config.heads, 2);
    nmt_spm_free(spm);
    nmt_model_free(&m);
    free(dir);
}
END_TEST

static void expect_refused(const char *dir, const char *want) {
    nmt_model m;
    nmt_spm *spm;
    ck_assert_int_eq(nmt_ct2_open(dir, NULL, &m, &spm), -1);
    ck_assert_msg(strstr(nmt_error(), want), "'%s' lacks '%s'", nmt_error(), want);
    ck_assert_ptr_null(m.params);
    ck_assert_ptr_null(spm);
}

START_TEST(damaged_files_and_other_variants_are_refused_by_name) {
    char *dir = model_dir("bad");
    write_model(dir, 7, NULL, 0);
    expect_refused(dir, "bad/model.bin: binary version 7: nmt reads CTranslate2 models of versions 1 to 6");
    write_model(dir, 6, "encoder/activation", 5);
    expect_refused(dir, "bad/model.bin: encoder/activation 5: nmt's feed-forward layers use ReLU (0), GELUTanh (1), "
                        "Swish (2), GELU (3) or GELUSigmoid (4)");
    write_model(dir, 6, "encoder/activation", 3);
    expect_refused(dir, "bad/model.bin: the encoder and the decoder differ in activation");
    write_model(dir, 6, "decoder/layer_0/attention/rotary_dim", 0);
    expect_refused(dir, "decoder/layer_0/attention/rotary_dim: rotary cross-attention: nmt does not implement it");
    write_model(dir, 6, "encoder/layer_0/self_attention/rotary_dim", 0);
    expect_refused(dir, "rotary_dim in 1 of");
    write_model(dir, 6, "encoder/multi_query_attention", 1);
    expect_refused(dir, "bad/model.bin: encoder/multi_query_attention: nmt does not implement it");
    write_model(dir, 6, "decoder/alibi", 1);
    expect_refused(dir, "decoder/alibi: nmt does not implement it");
    write_model(dir, 6, "decoder/relative_position_keys", 1);
    expect_refused(dir, "variable decoder/relative_position_keys: nmt does not implement what it is for");
    /* A payload that does not match its shape, and a file cut short. */
    write_model(dir, 6, NULL, 0);
    char *path = nmt_path_join(dir, "model.bin"), *data;
    size_t size;
    ck_assert_int_eq(nmt_read_file(path, &data, &size), 0);
    const size_t first = 4 + 2 + strlen("TransformerSpec") + 1 + 4 + 4; /* the first variable */
    const size_t bytes_at = first + 2 + strlen("encoder/embeddings_0/weight") + 1 + 1 + 8 + 1;
    data[bytes_at] ^= 4;
    ck_assert_int_eq(nmt_atomic_write(path, data, size), 0);
    expect_refused(dir, "variable encoder/embeddings_0/weight holds 84 bytes, not the 80 of its shape");
    data[bytes_at] ^= 4;
    ck_assert_int_eq(nmt_atomic_write(path, data, size / 2), 0);
    expect_refused(dir, "bad/model.bin: ");
    free(data);
    free(path);
    write_model(dir, 6, NULL, 0);
    path = nmt_path_join(dir, "target_vocabulary.json");
    ck_assert_int_eq(nmt_atomic_write(path, "[\"x\"]", 5), 0);
    expect_refused(dir, "target_vocabulary.json: the target vocabulary has no end token '</s>'");
    ck_assert_int_eq(remove(path), 0);
    expect_refused(dir, "no target_vocabulary (.txt or .json)");
    free(path);
    free(dir);
}
END_TEST

int main(void) {
    Suite *s = suite_create("ct2");
    TCase *tc = tcase_create("ct2");
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, a_model_loads_with_its_rows_moved_to_nmt_ids);
    tcase_add_test(tc, multi_query_attention_false_loads);
    tcase_add_test(tc, damaged_files_and_other_variants_are_refused_by_name);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
