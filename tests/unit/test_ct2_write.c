/* Tests of ct2_write: models of every variant CTranslate2 can express are written and read back by
 * ct2.c with every parameter bit-identical (float32) or within half an int8 step (int8); tied
 * matrices and equal position tables become aliases; a vocabulary whose sides differ is written as
 * two; rotary positions are refused naming the field. */
#include "model/ct2_write.h"
#include "model/ct2.h"
#include "model/ct2_file.h"
#include "base/io.h"
#include "base/util.h"
#include "compute/kernels.h"
#include "testing.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { V = 10, D = 8 };

static nmt_spm *vocabulary(int source_pad) {
    const char *target[V] = {"<pad>", "<unk>", "<s>", "</s>", "a", "b", "c", "d", "e", "f"};
    const char *source[V];
    memcpy(source, target, sizeof source);
    if (!source_pad) source[0] = ""; /* as an imported model's: no input reads as padding */
    nmt_spm *spm = NULL;
    ck_assert_int_eq(nmt_spm_tokens(&spm, source, target, V, NULL), 0);
    return spm;
}

static void make_model(nmt_model *m, nmt_norm_position norm, nmt_positions positions, nmt_tie tie, int bias,
                       int source_eos, int embedding_norm) {
    nmt_model_config c = nmt_model_config_default();
    c.vocab_size = V;
    c.d_model = D;
    c.heads = 2;
    c.ffn = 16;
    c.encoder_layers = 2;
    c.decoder_layers = 1;
    c.max_positions = 32;
    c.norm_position = norm;
    c.positions = positions;
    c.tie_embeddings = tie;
    c.output_bias = bias;
    c.source_eos = source_eos;
    c.embedding_norm = embedding_norm;
    c.norm_eps = 1e-6f;
    ck_assert_int_eq(nmt_model_init(m, &c), 0);
    nmt_model_init_weights(m, 7);
    /* Norms and biases away from their initial ones and zeros, so that a swap would show. */
    for (size_t i = 0; i < m->num_params; i++) m->params[i] += 0.001f * (float)(i % 97);
}

/* A model of one variant, its vocabulary and the directory it is written to. */
typedef struct fixture {
    nmt_model m;
    nmt_spm *spm;
    char *dir, *bin;
} fixture;

static void fixture_open(fixture *f, nmt_norm_position norm, nmt_positions positions, nmt_tie tie, int bias,
                         int source_eos, int source_pad, int embedding_norm) {
    make_model(&f->m, norm, positions, tie, bias, source_eos, embedding_norm);
    f->spm = vocabulary(source_pad);
    f->dir = nmt_path_join(nmt_test_tmpdir, "ct2");
    ck_assert_ptr_nonnull(f->dir);
    ck_assert_int_eq(nmt_mkdirs(f->dir), 0);
    f->bin = nmt_path_join(f->dir, "model.bin");
}

static void fixture_close(fixture *f) {
    nmt_spm_free(f->spm);
    nmt_model_free(&f->m);
    free(f->dir);
    free(f->bin);
}

/* Compares every part of the layers (the layout both sides walk). */
typedef struct pair {
    const nmt_model *other;
    float tolerance_per_row; /* 0: bitwise */
    int parts;
} pair;

static void same(const float *a, const float *b, size_t rows, size_t cols, float tolerance_per_row, const char *what) {
    for (size_t r = 0; r < rows; r++) {
        float amax = 0;
        for (size_t i = 0; i < cols; i++) amax = fmaxf(amax, fabsf(a[r * cols + i]));
        for (size_t i = 0; i < cols; i++) {
            const float x = a[r * cols + i], y = b[r * cols + i];
            if (tolerance_per_row == 0) ck_assert_msg(memcmp(&x, &y, 4) == 0, "%s[%zu][%zu]: %g became %g", what, r, i, x, y);
            else ck_assert_msg(fabsf(x - y) <= tolerance_per_row * amax, "%s[%zu][%zu]: %g became %g", what, r, i, x, y);
        }
    }
}

/* The other model's part of the same name: found by walking it again. */
typedef struct find {
    const char *name;
    nmt_ct2_part part;
} find;

static int find_part(void *ctx, const nmt_ct2_part *part) {
    find *f = ctx;
    if (strcmp(f->name, part->name) == 0) f->part = *part;
    return 0;
}

static int compare_part(void *ctx, const nmt_ct2_part *part) {
    pair *p = ctx;
    find f = {.name = part->name};
    nmt_ct2_layout_layers(&p->other->config, &p->other->p, find_part, &f);
    ck_assert_ptr_nonnull(f.part.data);
    const size_t cols = (size_t)(part->cols ? part->cols : 1);
    same(part->data, f.part.data, (size_t)part->rows, cols, part->kind == NMT_CT2_PART_WEIGHT ? p->tolerance_per_row : 0,
         part->name);
    if (part->kind == NMT_CT2_PART_NORM) same(part->beta, f.part.beta, (size_t)part->rows, 1, 0, part->name);
    p->parts++;
    return 0;
}

static void compare(const nmt_model *a, const nmt_model *b, float tolerance) {
    ck_assert_int_eq(b->config.vocab_size, V);
    ck_assert_int_eq(b->config.d_model, D);
    ck_assert_int_eq(b->config.encoder_layers, a->config.encoder_layers);
    ck_assert_int_eq(b->config.decoder_layers, a->config.decoder_layers);
    ck_assert_int_eq(b->config.heads, a->config.heads);
    ck_assert_int_eq(b->config.norm_position, a->config.norm_position);
    ck_assert_int_eq(b->config.activation, a->config.activation);
    ck_assert_int_eq(b->config.embedding_norm, a->config.embedding_norm);
    ck_assert_int_eq(b->config.source_eos, a->config.source_eos);
    ck_assert_float_eq(b->config.norm_eps, a->config.norm_eps);
    pair p = {.other = b, .tolerance_per_row = tolerance};
    ck_assert_int_eq(nmt_ct2_layout_layers(&a->config, &a->p, compare_part, &p), 0);
    ck_assert_int_ge(p.parts, 10);
    same(a->p.src_embed, b->p.src_embed, V, D, tolerance, "src_embed");
    same(a->p.tgt_embed, b->p.tgt_embed, V, D, tolerance, "tgt_embed");
    same(a->p.output, b->p.output, V, D, tolerance, "output");
    float zeros[V] = {0};
    same(a->p.output_bias ? a->p.output_bias : zeros, b->p.output_bias, V, 1, 0, "output_bias");
    /* Rotary positions have no tables; CTranslate2 records no bound, so the reader takes nmt's default. */
    ck_assert_int_eq(b->config.positions, a->config.positions == NMT_POSITIONS_ROPE ? NMT_POSITIONS_ROPE : NMT_POSITIONS_LEARNED);
    if (a->config.positions == NMT_POSITIONS_ROPE) {
        ck_assert(!b->p.src_positions && !b->p.tgt_positions);
        return;
    }
    const int P = a->config.max_positions;
    ck_assert_int_eq(b->config.max_positions, P);
    float *table = malloc((size_t)P * D * sizeof *table);
    ck_assert_ptr_nonnull(table);
    nmt_sinusoidal_positions(table, P, D);
    const int learned = a->config.positions == NMT_POSITIONS_LEARNED;
    same(learned ? a->p.src_positions : table, b->p.src_positions, (size_t)P, D, 0, "src_positions");
    same(learned ? a->p.tgt_positions : table, b->p.tgt_positions, (size_t)P, D, 0, "tgt_positions");
    free(table);
}

static void round_trip(nmt_norm_position norm, nmt_positions positions, nmt_tie tie, int bias, int source_eos,
                       nmt_activation activation, int embedding_norm, nmt_ct2_quantization q, float tolerance) {
    fixture f;
    nmt_model back;
    nmt_spm *spm_back = NULL;
    fixture_open(&f, norm, positions, tie, bias, source_eos, 1, embedding_norm);
    f.m.config.activation = activation;
    ck_assert_msg(nmt_ct2_write(f.dir, &f.m, f.spm, q) == 0, "%s", nmt_error());
    ck_assert_msg(nmt_ct2_open(f.dir, NULL, &back, &spm_back) == 0, "%s", nmt_error());
    compare(&f.m, &back, tolerance);
    for (int id = 0; id < V; id++) ck_assert_str_eq(nmt_spm_piece(spm_back, id), nmt_spm_piece(f.spm, id));
    nmt_model_free(&back);
    nmt_spm_free(spm_back);
    fixture_close(&f);
}

START_TEST(every_variant_reads_back_bit_identically) {
    round_trip(NMT_NORM_POST, NMT_POSITIONS_SINUSOIDAL, NMT_TIE_ALL, 0, 1, NMT_ACTIVATION_RELU, 0, NMT_CT2_QUANT_FLOAT32, 0);
    round_trip(NMT_NORM_PRE, NMT_POSITIONS_LEARNED, NMT_TIE_NONE, 1, 0, NMT_ACTIVATION_RELU, 0, NMT_CT2_QUANT_FLOAT32, 0);
    round_trip(NMT_NORM_PRE, NMT_POSITIONS_SINUSOIDAL, NMT_TIE_DECODER, 1, 1, NMT_ACTIVATION_RELU, 0, NMT_CT2_QUANT_FLOAT32, 0);
    round_trip(NMT_NORM_POST, NMT_POSITIONS_SINUSOIDAL, NMT_TIE_ALL, 0, 1, NMT_ACTIVATION_SWISH, 0, NMT_CT2_QUANT_FLOAT32, 0);
    /* Every activation, and the embeddings' norms (a part of the layout walk compare() goes over). */
    round_trip(NMT_NORM_PRE, NMT_POSITIONS_SINUSOIDAL, NMT_TIE_ALL, 0, 1, NMT_ACTIVATION_GELU, 1, NMT_CT2_QUANT_FLOAT32, 0);
    round_trip(NMT_NORM_POST, NMT_POSITIONS_LEARNED, NMT_TIE_NONE, 1, 1, NMT_ACTIVATION_GELU_TANH, 1, NMT_CT2_QUANT_FLOAT32, 0);
    round_trip(NMT_NORM_POST, NMT_POSITIONS_SINUSOIDAL, NMT_TIE_ALL, 0, 1, NMT_ACTIVATION_GELU_SIGMOID, 0, NMT_CT2_QUANT_FLOAT32, 0);
}
END_TEST

START_TEST(int8_weights_are_within_half_a_step) {
    /* q = round(x * 127 / max|row|) read back as q / scale: at most half a step, max|row| / 254. */
    round_trip(NMT_NORM_POST, NMT_POSITIONS_SINUSOIDAL, NMT_TIE_NONE, 0, 1, NMT_ACTIVATION_RELU, 0, NMT_CT2_QUANT_INT8, 0.5f / 127.0f * 1.0001f);
}
END_TEST

START_TEST(tied_matrices_and_equal_tables_are_aliases) {
    fixture x;
    fixture_open(&x, NMT_NORM_POST, NMT_POSITIONS_SINUSOIDAL, NMT_TIE_ALL, 0, 1, 1, 0);
    ck_assert_int_eq(nmt_ct2_write(x.dir, &x.m, x.spm, NMT_CT2_QUANT_INT8), 0);
    nmt_ct2_file f;
    ck_assert_int_eq(nmt_ct2_file_open(&f, x.bin), 0);
    ck_assert_int_eq(f.version, NMT_CT2_BINARY_VERSION);
    ck_assert_int_eq(f.revision, NMT_CT2_REVISION);
    ck_assert_str_eq(f.spec, "TransformerSpec");
    ck_assert_int_eq(f.alias_count, 3);
    ck_assert_str_eq(f.aliases[0].name, "decoder/projection/weight");
    ck_assert_str_eq(f.aliases[0].target, "decoder/embeddings/weight");
    ck_assert_str_eq(f.aliases[2].name, "encoder/position_encodings/encodings");
    /* Sorted by name, one scale per row of the kept matrix, none for an alias. */
    for (int i = 1; i < f.count; i++) ck_assert_int_lt(strcmp(f.vars[i - 1].name, f.vars[i].name), 0);
    nmt_ct2_var *scale = nmt_ct2_file_find(&f, "decoder/embeddings/weight_scale");
    ck_assert_ptr_nonnull(scale);
    ck_assert_int_eq(scale->shape[0], V);
    ck_assert_int_eq(nmt_ct2_file_find(&f, "decoder/embeddings/weight")->dtype, NMT_CT2_I8);
    ck_assert_int_eq(nmt_ct2_file_find(&f, "decoder/position_encodings/encodings")->dtype, NMT_CT2_F32);
    ck_assert_ptr_null(nmt_ct2_file_find(&f, "decoder/projection/weight_scale"));
    nmt_ct2_file_close(&f);
    fixture_close(&x);
}
END_TEST

START_TEST(sides_that_differ_get_two_vocabularies) {
    fixture f;
    nmt_model back;
    nmt_spm *spm_back = NULL;
    fixture_open(&f, NMT_NORM_POST, NMT_POSITIONS_LEARNED, NMT_TIE_NONE, 1, 1, 0, 0);
    char *src = nmt_path_join(f.dir, "source_vocabulary.json"), *text = NULL;
    ck_assert_int_eq(nmt_ct2_write(f.dir, &f.m, f.spm, NMT_CT2_QUANT_FLOAT32), 0);
    size_t len;
    ck_assert_int_eq(nmt_read_file(src, &text, &len), 0);
    ck_assert_ptr_nonnull(strstr(text, "[\n  \"<blank>\",\n  \"<unk>\""));
    ck_assert_int_eq(nmt_ct2_open(f.dir, NULL, &back, &spm_back), 0);
    compare(&f.m, &back, 0);
    for (int id = 0; id < V; id++) ck_assert_str_eq(nmt_spm_source_piece(spm_back, id), nmt_spm_source_piece(f.spm, id));
    nmt_model_free(&back);
    nmt_spm_free(spm_back);
    free(text);
    free(src);
    fixture_close(&f);
}
END_TEST

/* Rotary positions go out as each self-attention's rotary_dim 0, interleaved, base 10000 (no tables)
 * and read back as rope (test_ct2 has the rotary forms refused). */
START_TEST(rotary_positions_read_back) {
    round_trip(NMT_NORM_POST, NMT_POSITIONS_ROPE, NMT_TIE_ALL, 0, 1, NMT_ACTIVATION_RELU, 0, NMT_CT2_QUANT_FLOAT32, 0);
    round_trip(NMT_NORM_PRE, NMT_POSITIONS_ROPE, NMT_TIE_NONE, 1, 0, NMT_ACTIVATION_RELU, 0, NMT_CT2_QUANT_FLOAT32, 0);
}
END_TEST

/* Every variable read a few bytes at a time (chunks that split rows and their scales) or in ranges
 * is what one read of it gives, bit for bit, in every quantization. */
START_TEST(variables_read_in_chunks_are_the_same) {
    for (int q = NMT_CT2_QUANT_FLOAT32; q <= NMT_CT2_QUANT_BFLOAT16; q++) {
        fixture x;
        fixture_open(&x, NMT_NORM_PRE, NMT_POSITIONS_LEARNED, NMT_TIE_NONE, 1, 1, 1, 0);
        ck_assert_int_eq(nmt_ct2_write(x.dir, &x.m, x.spm, (nmt_ct2_quantization)q), 0);
        nmt_ct2_file whole, part;
        ck_assert_int_eq(nmt_ct2_file_open(&whole, x.bin), 0);
        ck_assert_int_eq(nmt_ct2_file_open(&part, x.bin), 0);
        int compared = 0;
        for (int i = 0; i < whole.count; i++) {
            nmt_ct2_var *v = &whole.vars[i], *w = &part.vars[i];
            const size_t n = nmt_ct2_var_elements(v);
            if (v->dtype == NMT_CT2_I32 || n < 8 || strstr(v->name, "_scale")) continue;
            float *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
            ck_assert(want && got);
            ck_assert_msg(nmt_ct2_file_floats(&whole, v, want) == 0, "%s", nmt_error());
            for (size_t chunk = 1; chunk <= 9; chunk += 4) {
                part.chunk = chunk;
                memset(got, 0xff, n * sizeof *got);
                ck_assert_msg(nmt_ct2_file_floats(&part, w, got) == 0, "%s", nmt_error());
                ck_assert_msg(memcmp(want, got, n * sizeof *got) == 0, "%s, %zu bytes at a time", v->name, chunk);
                ck_assert_int_eq(nmt_ct2_file_floats_range(&part, w, 3, n - 5, got), 0);
                ck_assert_msg(memcmp(want + 3, got, (n - 5) * sizeof *got) == 0, "%s from 3", v->name);
            }
            ck_assert_int_eq(nmt_ct2_file_floats_range(&part, w, 4, n - 3, got), -1); /* past its end */
            ck_assert_ptr_nonnull(strstr(nmt_error(), v->name));
            free(want);
            free(got);
            compared++;
        }
        ck_assert_int_ge(compared, 10);
        nmt_ct2_file_close(&whole);
        nmt_ct2_file_close(&part);
        fixture_close(&x);
    }
}
END_TEST

/* Tables of more rows than the reader converts at once (NMT_CT2_CHUNK bytes) read back whole. */
START_TEST(tables_larger_than_a_chunk_read_back) {
    enum { BIG = NMT_CT2_CHUNK / (16 * 4) + 77, W = 16 };
    nmt_model_config c = nmt_model_config_default();
    c.vocab_size = BIG;
    c.d_model = W;
    c.heads = 2;
    c.ffn = 16;
    c.encoder_layers = c.decoder_layers = 1;
    c.max_positions = 16;
    c.output_bias = 1;
    nmt_model m, back;
    ck_assert_int_eq(nmt_model_init(&m, &c), 0);
    nmt_model_init_weights(&m, 5);
    for (size_t i = 0; i < m.num_params; i++) m.params[i] += 0.001f * (float)(i % 97);
    char **names = malloc(BIG * sizeof *names);
    ck_assert_ptr_nonnull(names);
    static const char *const specials[4] = {"<pad>", "<unk>", "<s>", "</s>"};
    for (int i = 0; i < BIG; i++) {
        names[i] = malloc(16);
        ck_assert_ptr_nonnull(names[i]);
        if (i < 4) snprintf(names[i], 16, "%s", specials[i]);
        else snprintf(names[i], 16, "p%d", i);
    }
    nmt_spm *spm = NULL, *spm_back = NULL;
    ck_assert_int_eq(nmt_spm_tokens(&spm, (const char *const *)names, (const char *const *)names, BIG, NULL), 0);
    char *dir = nmt_path_join(nmt_test_tmpdir, "big");
    ck_assert_int_eq(nmt_mkdirs(dir), 0);
    ck_assert_msg(nmt_ct2_write(dir, &m, spm, NMT_CT2_QUANT_FLOAT32) == 0, "%s", nmt_error());
    ck_assert_msg(nmt_ct2_open(dir, NULL, &back, &spm_back) == 0, "%s", nmt_error());
    const size_t table = (size_t)BIG * W;
    ck_assert(memcmp(m.p.src_embed, back.p.src_embed, table * sizeof(float)) == 0);
    ck_assert(memcmp(m.p.tgt_embed, back.p.tgt_embed, table * sizeof(float)) == 0);
    ck_assert(memcmp(m.p.output, back.p.output, table * sizeof(float)) == 0);
    ck_assert(memcmp(m.p.output_bias, back.p.output_bias, BIG * sizeof(float)) == 0);
    nmt_model_free(&back);
    nmt_model_free(&m);
    nmt_spm_free(spm_back);
    nmt_spm_free(spm);
    for (int i = 0; i < BIG; i++) free(names[i]);
    free(names);
    free(dir);
}
END_TEST

int main(void) {
    Suite *s = suite_create("ct2_write");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, every_variant_reads_back_bit_identically);
    tcase_add_test(tc, int8_weights_are_within_half_a_step);
    tcase_add_test(tc, tied_matrices_and_equal_tables_are_aliases);
    tcase_add_test(tc, sides_that_differ_get_two_vocabularies);
    tcase_add_test(tc, rotary_positions_read_back);
    tcase_add_test(tc, variables_read_in_chunks_are_the_same);
    tcase_add_test(tc, tables_larger_than_a_chunk_read_back);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
