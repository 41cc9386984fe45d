/* Tests of model: the tensor table and parameter count, initialisation, configuration checks,
 * gradient checks of the whole model (and the ranges a hooked backward reports final), causality and
 * masking, overfitting, determinism.
 *
 * Gradient tolerances (see gradcheck.h): the model computes in float, so the loss of the tiny
 * batch here moves by float noise of ~1e-6 between perturbed runs; with h = 3e-3 that is ~2e-4 in
 * a derivative, and truncation adds ~1e-4 relative. All checks pass at rtol 5e-3 / atol 5e-4
 * (measured); the test uses rtol 1e-2 / atol 1e-3 for margin. A wrong term in any backward (a
 * missing residual, a dropped mask, a transposed product, a wrong scale) moves a derivative by
 * tens of percent.
 */
#include "compute/gemm.h"
#include "compute/pool.h"
#include "model/activations.h" /* the block an evaluation forward plans */
#include "model/model.h"

#include "gradcheck.h"
#include "testing.h"
#include "tiny_model.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static nmt_model_config tiny_config(void) { return nmt_test_tiny_config(13, 8, 12, 2, 1); }

static const nmt_tensor_info *find_tensor(const nmt_model *m, const char *name) {
    for (int i = 0; i < m->num_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0) return &m->tensors[i];
    return NULL;
}

/* Transformer-base (Vaswani et al., 2017, table 3): d512, h8, ff2048, 6+6 layers. */
static nmt_model_config transformer_base(void) {
    nmt_model_config c = nmt_model_config_default();
    c.d_model = 512;
    c.heads = 8;
    c.ffn = 2048;
    c.encoder_layers = c.decoder_layers = 6;
    return c;
}

/* Transformer-base (d 512, h 8, ff 2048, 6+6, shared vocabulary V, all embeddings tied), counted
 * by hand: one V x d embedding; per encoder layer an attention (4d^2 + 4d), an FFN
 * (2 d ff + ff + d) and two LayerNorms (4d); per decoder layer two attentions (8d^2 + 8d), an FFN
 * and three LayerNorms (6d). */
START_TEST(transformer_base_parameter_count_matches_closed_formula) {
    nmt_model_config c = transformer_base();
    const size_t V = 37000, d = 512, ff = 2048;
    c.vocab_size = (int)V;
    size_t encoder_layer = 4 * d * d + 4 * d + 2 * d * ff + ff + d + 4 * d;
    size_t decoder_layer = 8 * d * d + 8 * d + 2 * d * ff + ff + d + 6 * d;
    size_t want = V * d + 6 * encoder_layer + 6 * decoder_layer;
    ck_assert_uint_eq(nmt_model_param_count(&c), want);
    ck_assert_uint_eq(want, 63082496); /* the paper's "65M" for base, with V = 37000 */
    /* Untied: three V x d matrices; pre-LN: two more LayerNorms; learned positions: two tables. */
    c.tie_embeddings = NMT_TIE_NONE;
    c.norm_position = NMT_NORM_PRE;
    c.positions = NMT_POSITIONS_LEARNED;
    ck_assert_uint_eq(nmt_model_param_count(&c), want + 2 * V * d + 4 * d + 2 * 1024 * d);
}
END_TEST

START_TEST(multi_head_attention_has_4d_squared_weights) {
    nmt_model_config c = transformer_base();
    c.vocab_size = 100;
    c.encoder_layers = c.decoder_layers = 1;
    nmt_model m;
    ck_assert_int_eq(nmt_model_init(&m, &c), 0);
    size_t weights = 0, biases = 0;
    const char *names[] = {"q", "k", "v", "o"};
    for (int i = 0; i < 4; i++) {
        char name[96];
        snprintf(name, sizeof name, "encoder.layers.0.self_attn.%s_proj.weight", names[i]);
        const nmt_tensor_info *w = find_tensor(&m, name);
        ck_assert_ptr_nonnull(w);
        ck_assert_int_eq(w->rank, 2);
        ck_assert_int_eq(w->shape[0], 512);
        ck_assert_int_eq(w->shape[1], 512);
        weights += w->count;
        snprintf(name, sizeof name, "encoder.layers.0.self_attn.%s_proj.bias", names[i]);
        biases += find_tensor(&m, name)->count;
    }
    ck_assert_uint_eq(weights, 1048576); /* 4 d^2 for d = 512, whatever the number of heads (8) */
    ck_assert_uint_eq(biases, 4 * 512);
    nmt_model_free(&m);
}
END_TEST

/* Names, shapes and the packing of the table; q|k|v consecutive; pointers into both buffers. */
START_TEST(tensor_table_names_shapes_and_layout) {
    nmt_model_config c = tiny_config();
    nmt_model m;
    ck_assert_int_eq(nmt_model_init(&m, &c), 0);
    ck_assert_ptr_null(m.grads); /* made by the first nmt_model_zero_grads: translating needs none */
    ck_assert_int_eq(nmt_model_zero_grads(&m), 0);
    /* Packed without gaps, in table order, covering the buffer. */
    size_t offset = 0;
    for (int i = 0; i < m.num_tensors; i++) {
        ck_assert_uint_eq(m.tensors[i].offset, offset);
        size_t n = (size_t)m.tensors[i].shape[0] * (m.tensors[i].rank == 2 ? (size_t)m.tensors[i].shape[1] : 1);
        ck_assert_uint_eq(m.tensors[i].count, n);
        offset += n;
    }
    ck_assert_uint_eq(offset, m.num_params);
    ck_assert_uint_eq(offset, nmt_model_param_count(&c));
    ck_assert_uint_eq((uintptr_t)m.params % 64, 0);
    ck_assert_uint_eq((uintptr_t)m.grads % 64, 0);

    const nmt_tensor_info *t = find_tensor(&m, "embed.weight");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->shape[0], 13);
    ck_assert_int_eq(t->shape[1], 8);
    ck_assert_ptr_eq(m.p.src_embed, m.params + t->offset);
    ck_assert_ptr_eq(m.p.tgt_embed, m.p.src_embed);
    ck_assert_ptr_eq(m.p.output, m.p.src_embed);
    ck_assert_ptr_eq(m.g.output, m.grads + t->offset);
    ck_assert_ptr_null(find_tensor(&m, "src_embed.weight"));
    ck_assert_ptr_null(find_tensor(&m, "encoder.norm.weight"));
    ck_assert_ptr_null(m.p.encoder_norm.weight);

    t = find_tensor(&m, "encoder.layers.1.ffn.fc1.weight");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->shape[0], 12); /* [out, in] = [F, D] */
    ck_assert_int_eq(t->shape[1], 8);
    ck_assert_ptr_eq(m.p.encoder[1].ffn.fc1_weight, m.params + t->offset);
    ck_assert_ptr_eq(m.g.encoder[1].ffn.fc1_weight, m.grads + t->offset);
    t = find_tensor(&m, "decoder.layers.0.cross_attn.v_proj.bias");
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_eq(m.p.decoder[0].cross_attn.v_bias, m.params + t->offset);
    const nmt_attention_params *a = &m.p.decoder[0].cross_attn;
    ck_assert_ptr_eq(a->k_weight, a->q_weight + 64);
    ck_assert_ptr_eq(a->v_weight, a->k_weight + 64);
    ck_assert_ptr_eq(a->k_bias, a->q_bias + 8);
    ck_assert_ptr_eq(a->v_bias, a->k_bias + 8);
    const char *expected[] = {"decoder.layers.0.self_attn_norm.bias", "decoder.layers.0.cross_attn_norm.weight",
                              "decoder.layers.0.ffn.fc2.bias", "decoder.layers.0.ffn_norm.weight",
                              "encoder.layers.0.self_attn.o_proj.weight"};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) ck_assert_ptr_nonnull(find_tensor(&m, expected[i]));
    nmt_model_free(&m);

    /* tie decoder: source and target tables, the output is the target table. */
    c.tie_embeddings = NMT_TIE_DECODER;
    c.norm_position = NMT_NORM_PRE;
    c.positions = NMT_POSITIONS_LEARNED;
    c.max_positions = 20;
    ck_assert_int_eq(nmt_model_init(&m, &c), 0);
    ck_assert_int_eq(nmt_model_zero_grads(&m), 0);
    ck_assert_ptr_null(find_tensor(&m, "embed.weight"));
    ck_assert_ptr_eq(m.p.src_embed, m.params + find_tensor(&m, "src_embed.weight")->offset);
    ck_assert_ptr_eq(m.p.tgt_embed, m.params + find_tensor(&m, "tgt_embed.weight")->offset);
    ck_assert_ptr_eq(m.p.output, m.p.tgt_embed);
    ck_assert_ptr_null(find_tensor(&m, "output.weight"));
    t = find_tensor(&m, "decoder.embed_positions.weight");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->shape[0], 20);
    ck_assert_ptr_eq(m.p.tgt_positions, m.params + t->offset);
    ck_assert_ptr_nonnull(find_tensor(&m, "encoder.embed_positions.weight"));
    ck_assert_ptr_eq(m.p.encoder_norm.weight, m.params + find_tensor(&m, "encoder.norm.weight")->offset);
    ck_assert_ptr_eq(m.g.decoder_norm.bias, m.grads + find_tensor(&m, "decoder.norm.bias")->offset);
    nmt_model_free(&m);

    /* tie none: three tables. */
    c.tie_embeddings = NMT_TIE_NONE;
    ck_assert_int_eq(nmt_model_init(&m, &c), 0);
    ck_assert_ptr_eq(m.p.output, m.params + find_tensor(&m, "output.weight")->offset);
    ck_assert_ptr_ne(m.p.output, m.p.tgt_embed);
    nmt_model_free(&m);
}
END_TEST

START_TEST(init_is_deterministic_and_follows_the_recipe) {
    nmt_model_config c = tiny_config();
    c.d_model = 64;
    c.ffn = 256;
    c.vocab_size = 500;
    nmt_model a, b;
    ck_assert_int_eq(nmt_model_init(&a, &c), 0);
    ck_assert_int_eq(nmt_model_init(&b, &c), 0);
    nmt_model_init_weights(&a, 42);
    nmt_model_init_weights(&b, 42);
    ck_assert_int_eq(memcmp(a.params, b.params, a.num_params * sizeof(float)), 0);
    nmt_model_init_weights(&b, 43);
    ck_assert_int_ne(memcmp(a.params, b.params, a.num_params * sizeof(float)), 0);

    /* Embedding ~ N(0, 1/sqrt(64) = 0.125): sample std of 32000 values within 2%. */
    const nmt_tensor_info *t = find_tensor(&a, "embed.weight");
    double s2 = 0;
    for (size_t i = 0; i < t->count; i++) s2 += (double)a.params[t->offset + i] * a.params[t->offset + i];
    ck_assert_double_eq_tol(sqrt(s2 / t->count), 0.125, 0.0025);
    /* fc1 [256, 64] ~ Xavier U(-a, a), a = sqrt(6 / 320) = 0.1369: bounded by a, variance a^2/3. */
    t = find_tensor(&a, "encoder.layers.0.ffn.fc1.weight");
    double bound = sqrt(6.0 / 320.0);
    s2 = 0;
    for (size_t i = 0; i < t->count; i++) {
        float w = a.params[t->offset + i];
        ck_assert(fabs(w) <= bound);
        s2 += (double)w * w;
    }
    ck_assert_double_eq_tol(s2 / t->count, bound * bound / 3.0, 0.03 * bound * bound / 3.0);
    /* Biases 0, LayerNorm gains 1 and shifts 0. */
    ck_assert_float_eq(a.p.encoder[1].ffn.fc2_bias[3], 0.0f);
    ck_assert_float_eq(a.p.decoder[0].cross_attn_norm.weight[5], 1.0f);
    ck_assert_float_eq(a.p.decoder[0].cross_attn_norm.bias[5], 0.0f);
    nmt_model_free(&a);
    nmt_model_free(&b);
}
END_TEST

START_TEST(config_check_rejects_impossible_values) {
    nmt_model_config good = tiny_config();
    ck_assert_int_eq(nmt_model_config_check(&good), 0);
    nmt_model_config c = good;
    c.heads = 3;
    ck_assert_int_eq(nmt_model_config_check(&c), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "model.heads"));
    c = good;
    c.encoder_layers = 0;
    ck_assert_int_eq(nmt_model_config_check(&c), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "model.encoder_layers"));
    c = good;
    c.dropout = 1.0f;
    ck_assert_int_eq(nmt_model_config_check(&c), -1);
    c = good;
    c.dropout = NAN;
    ck_assert_int_eq(nmt_model_config_check(&c), -1);
    c = good;
    c.d_model = 12;
    c.heads = 4; /* head size 3: odd, impossible for rotary pairs */
    ck_assert_int_eq(nmt_model_config_check(&c), 0);
    c.positions = NMT_POSITIONS_ROPE;
    ck_assert_int_eq(nmt_model_config_check(&c), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "rope"));
    c = good;
    c.vocab_size = 3;
    ck_assert_int_eq(nmt_model_config_check(&c), -1);
    c.vocab_size = 0; /* not known yet: fine for the check, refused by create */
    ck_assert_int_eq(nmt_model_config_check(&c), 0);
    nmt_model m;
    ck_assert_int_eq(nmt_model_init(&m, &c), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "vocab_size"));
}
END_TEST



/* ---------------------------------------------------------------------------------------------- */
/* A tiny padded batch: 3 sentences; source lengths 5, 3, 2 (pieces + eos), targets 4, 2, 3. */

enum { TB = 3, TS = 5, TT = 4 };
static const int32_t tiny_src[TB * TS] = {5, 6, 7, 8, 3, 9, 4, 3, 0, 0, 10, 3, 0, 0, 0};
static const int32_t tiny_tgt_in[TB * TT] = {2, 7, 7, 9, 2, 4, 0, 0, 2, 12, 5, 0};
static const int32_t tiny_tgt_out[TB * TT] = {7, 7, 9, 3, 4, 3, 0, 0, 12, 5, 3, 0};

static nmt_batch tiny_batch(const int32_t *src, const int32_t *tgt_in, const int32_t *tgt_out) {
    nmt_batch b = {TB, TS, TT, src, tgt_in, tgt_out};
    return b;
}

typedef struct model_ctx {
    nmt_model *m;
    nmt_batch batch;
    nmt_forward_options opts;
} model_ctx;

static double model_loss(void *ctx) {
    model_ctx *c = ctx;
    nmt_loss loss;
    ck_assert_int_eq(nmt_model_forward(c->m, &c->batch, &c->opts, &loss), 0);
    return loss.loss_sum;
}

/* A hooked backward's ranges: the gradients of each at its call (they must not change afterwards) and
 * how often each parameter was reported. */
typedef struct hook_log {
    const nmt_model *m;
    float *seen;  /* [num_params]; NULL: only the ranges */
    int *times;   /* [num_params] */
    size_t ranges[64][2];
    int count;
} hook_log;

static void log_range(void *ctx, size_t lo, size_t hi) {
    hook_log *h = ctx;
    ck_assert_uint_lt(lo, hi);
    ck_assert_uint_le(hi, h->m->num_params);
    ck_assert_int_lt(h->count, 64);
    h->ranges[h->count][0] = lo;
    h->ranges[h->count++][1] = hi;
    for (size_t i = lo; h->seen && i < hi; i++) {
        h->seen[i] = h->m->grads[i];
        h->times[i]++;
    }
}

/* The backward reports every parameter once, after its gradient is final, in nmt_model_grad_order's order. */
static void check_backward_hook(nmt_model *m) {
    hook_log got = {m, calloc(m->num_params, sizeof(float)), calloc(m->num_params, sizeof(int)), {{0}}, 0};
    hook_log order = {m, NULL, NULL, {{0}}, 0};
    ck_assert(got.seen && got.times);
    ck_assert_int_eq(nmt_model_backward_hooked(m, 1.0f, &(nmt_grad_hook){log_range, &got}), 0);
    nmt_model_grad_order(m, &(nmt_grad_hook){log_range, &order});
    for (size_t i = 0; i < m->num_params; i++) ck_assert_int_eq(got.times[i], 1);
    ck_assert_mem_eq(got.seen, m->grads, m->num_params * sizeof(float));
    ck_assert_int_eq(got.count, order.count);
    ck_assert_mem_eq(got.ranges, order.ranges, (size_t)got.count * sizeof *got.ranges);
    free(got.seen);
    free(got.times);
}

/* The tiny model of one configuration with the weights the gradient checks use. */
static void checked_model(nmt_model *m, nmt_norm_position norm, nmt_positions positions, nmt_tie tie, float dropout,
                          int layers) {
    nmt_model_config c = tiny_config();
    c.norm_position = norm;
    c.positions = positions;
    c.tie_embeddings = tie;
    c.dropout = dropout;
    c.attention_dropout = dropout;
    c.encoder_layers = c.decoder_layers = layers;
    c.max_positions = 6;
    ck_assert_int_eq(nmt_model_init(m, &c), 0);
    nmt_model_init_weights(m, 7);
    /* Non-trivial LayerNorm gains and biases, so their gradients are exercised fully. */
    uint64_t seed = 99;
    for (int i = 0; i < m->num_tensors; i++)
        if (m->tensors[i].rank == 1)
            for (size_t j = 0; j < m->tensors[i].count; j++)
                m->params[m->tensors[i].offset + j] += 0.2f * (float)((double)(gc_rng(&seed) >> 11) / 9007199254740992.0 - 0.5);
    /* FFN biases of +-2.5 keep every ReLU input about 3 standard deviations from the kink, half of
     * the units on and half off: a central difference across a kink would be wrong by O(h). */
    for (int l = 0; l < layers; l++)
        for (int f = 0; f < c.ffn; f++) {
            m->p.encoder[l].ffn.fc1_bias[f] = f % 2 ? 2.5f : -2.5f;
            m->p.decoder[l].ffn.fc1_bias[f] = f % 2 ? -2.5f : 2.5f;
        }
}

/* The tiny batch twice over, R-Drop's batch: [2 TB, TS] and [2 TB, TT]. */
static int32_t twin_src[2 * TB * TS], twin_tgt_in[2 * TB * TT], twin_tgt_out[2 * TB * TT];

static nmt_batch twin_batch(void) {
    for (int k = 0; k < 2; k++) {
        memcpy(twin_src + k * TB * TS, tiny_src, sizeof tiny_src);
        memcpy(twin_tgt_in + k * TB * TT, tiny_tgt_in, sizeof tiny_tgt_in);
        memcpy(twin_tgt_out + k * TB * TT, tiny_tgt_out, sizeof tiny_tgt_out);
    }
    return (nmt_batch){2 * TB, TS, TT, twin_src, twin_tgt_in, twin_tgt_out};
}

/* Every parameter tensor of the model against central differences, for one configuration; with
 * rdrop_alpha > 0, R-Drop's loss over the tiny batch twice over. */
static void check_model_gradients(nmt_norm_position norm, nmt_positions positions, nmt_tie tie, float dropout,
                                  int layers, float rdrop_alpha) {
    nmt_pool_set_threads(2);
    nmt_model m;
    checked_model(&m, norm, positions, tie, dropout, layers);
    /* With dropout, whole words too: a dropped word's embedding gets no gradient, a kept one's is scaled. */
    const nmt_forward_options opts = {.training = 1, .label_smoothing = 0.1f, .dropout_seed = 1234,
                                      .dropout_src = dropout, .dropout_trg = dropout, .rdrop_alpha = rdrop_alpha};
    model_ctx ctx = {&m, rdrop_alpha > 0 ? twin_batch() : tiny_batch(tiny_src, tiny_tgt_in, tiny_tgt_out), opts};
    nmt_model_zero_grads(&m);
    model_loss(&ctx);
    check_backward_hook(&m);
    float *grads = malloc(m.num_params * sizeof(float));
    memcpy(grads, m.grads, m.num_params * sizeof(float));
    gc_tolerance tol = {4e-3, 1e-2, 1e-3};
    int ok = 1;
    for (int i = 0; i < m.num_tensors; i++) {
        const nmt_tensor_info *t = &m.tensors[i];
        ok &= gc_check(t->name, m.params + t->offset, grads + t->offset, (long)t->count, model_loss, &ctx, tol, 3,
                       (uint64_t)i + 1);
    }
    ck_assert_msg(ok, "gradient check failed (norm %d, positions %d, tie %d, dropout %g, layers %d, R-Drop %g)",
                  norm, positions, tie, (double)dropout, layers, (double)rdrop_alpha);
    free(grads);
    nmt_model_free(&m);
}

START_TEST(gradients_post_ln_sinusoidal_tied) { check_model_gradients(NMT_NORM_POST, NMT_POSITIONS_SINUSOIDAL, NMT_TIE_ALL, 0.0f, 2, 0.0f); }
END_TEST
START_TEST(gradients_pre_ln_sinusoidal_dropout) { check_model_gradients(NMT_NORM_PRE, NMT_POSITIONS_SINUSOIDAL, NMT_TIE_ALL, 0.2f, 1, 4.0f); }
END_TEST
START_TEST(gradients_post_ln_learned_tie_decoder) { check_model_gradients(NMT_NORM_POST, NMT_POSITIONS_LEARNED, NMT_TIE_DECODER, 0.0f, 1, 0.0f); }
END_TEST
START_TEST(gradients_pre_ln_learned_untied) { check_model_gradients(NMT_NORM_PRE, NMT_POSITIONS_LEARNED, NMT_TIE_NONE, 0.0f, 2, 0.0f); }
END_TEST
START_TEST(gradients_post_ln_rope_dropout) { check_model_gradients(NMT_NORM_POST, NMT_POSITIONS_ROPE, NMT_TIE_NONE, 0.2f, 2, 0.0f); }
END_TEST
START_TEST(gradients_pre_ln_rope_tie_decoder) { check_model_gradients(NMT_NORM_PRE, NMT_POSITIONS_ROPE, NMT_TIE_DECODER, 0.0f, 1, 0.0f); }
END_TEST
/* R-Drop: each sentence's two copies see different dropout masks, and the consistency term's gradient
 * reaches every parameter through both. */
START_TEST(gradients_post_ln_rope_rdrop) { check_model_gradients(NMT_NORM_POST, NMT_POSITIONS_ROPE, NMT_TIE_NONE, 0.2f, 2, 2.0f); }
END_TEST
/* The Multi30k recipe's shape: pre-LN, rotary, every embedding tied, dropout, with R-Drop. */
START_TEST(gradients_pre_ln_rope_tied_rdrop) { check_model_gradients(NMT_NORM_PRE, NMT_POSITIONS_ROPE, NMT_TIE_ALL, 0.2f, 1, 2.0f); }
END_TEST

/* bf16 products (train.precision bf16) against fp32 ones: the loss and every gradient tensor agree
 * to what bfloat16's 8-bit significand allows. Each product rounds its two operands by at most
 * u = 2^-8 of their size, so each product's terms are off by at most 2u; the loss passes through
 * ~4 products a layer and side (attention in, out, FFN in, out), the gradients through twice as
 * many, so with 2 layers a side the bound is 2u per product times 8 products forward, 16 backward
 * (the errors of random roundings mostly cancel: this bounds the worst case). Central differences
 * cannot check bf16 itself: the rounded loss is a step function at that scale. */
static void check_bf16_gradients(nmt_norm_position norm, nmt_positions positions, nmt_tie tie) {
    if (nmt_gemm_set_sgemm_bf16(1) < 0) return; /* no AVX512_BF16 here */
    nmt_gemm_set_sgemm_bf16(0);
    nmt_pool_set_threads(2);
    nmt_model m;
    checked_model(&m, norm, positions, tie, 0.0f, 2);
    model_ctx ctx = {&m, tiny_batch(tiny_src, tiny_tgt_in, tiny_tgt_out), {.training = 1, .label_smoothing = 0.1f, .dropout_seed = 1234}};
    float *fp32 = malloc(m.num_params * sizeof(float));
    ck_assert_ptr_nonnull(fp32);
    nmt_model_zero_grads(&m);
    const double loss32 = model_loss(&ctx);
    ck_assert_int_eq(nmt_model_backward(&m, 1.0f), 0);
    memcpy(fp32, m.grads, m.num_params * sizeof(float));
    ck_assert_int_eq(nmt_gemm_set_sgemm_bf16(1), 0);
    nmt_model_zero_grads(&m);
    const double loss16 = model_loss(&ctx);
    ck_assert_int_eq(nmt_model_backward(&m, 1.0f), 0);
    ck_assert_int_eq(nmt_gemm_set_sgemm_bf16(0), 0);
    const double u = 0x1p-8;
    ck_assert_msg(fabs(loss16 - loss32) <= 8 * 2 * u * fabs(loss32), "loss %.9g in bf16, %.9g in fp32", loss16, loss32);
    int differs = loss16 != loss32;
    /* Gradients that are zero in exact arithmetic (the key biases: softmax ignores a shift) are
     * rounding noise in both precisions, bounded against the whole gradient's size instead. */
    double norm_all = 0;
    for (size_t j = 0; j < m.num_params; j++) norm_all += (double)fp32[j] * fp32[j];
    norm_all = sqrt(norm_all);
    for (int i = 0; i < m.num_tensors; i++) {
        const nmt_tensor_info *t = &m.tensors[i];
        double diff = 0, norm32 = 0;
        for (size_t j = 0; j < t->count; j++) {
            const double d = (double)m.grads[t->offset + j] - fp32[t->offset + j];
            diff += d * d;
            norm32 += (double)fp32[t->offset + j] * fp32[t->offset + j];
        }
        ck_assert_msg(sqrt(diff) <= 16 * 2 * u * sqrt(norm32) + 1e-6 * norm_all, "%s: |bf16 - fp32| = %.3g, |fp32| = %.3g",
                      t->name, sqrt(diff), sqrt(norm32));
        differs |= diff > 0;
    }
    ck_assert_msg(differs, "bf16 gradients equal fp32's: the products were not rounded");
    free(fp32);
    nmt_model_free(&m);
}

START_TEST(gradients_bf16_pre_ln_sinusoidal_tied) { check_bf16_gradients(NMT_NORM_PRE, NMT_POSITIONS_SINUSOIDAL, NMT_TIE_ALL); }
END_TEST

START_TEST(gradients_bf16_post_ln_rope_untied) { check_bf16_gradients(NMT_NORM_POST, NMT_POSITIONS_ROPE, NMT_TIE_NONE); }
END_TEST

/* ---------------------------------------------------------------------------------------------- */
/* Causality and masking */

static void logprobs_of(nmt_model *m, const int32_t *src, const int32_t *tgt_in, float *out) {
    nmt_batch b = tiny_batch(src, tgt_in, tiny_tgt_out);
    ck_assert_int_eq(nmt_model_token_logprobs(m, &b, out), 0);
}

START_TEST(decoder_is_causal_and_source_padding_is_masked) {
    nmt_pool_set_threads(2);
    for (int kind = 0; kind < 3; kind++) {
        for (int norm = 0; norm < 2; norm++) {
            nmt_model_config c = tiny_config();
            c.positions = (nmt_positions)kind;
            c.norm_position = (nmt_norm_position)norm;
            c.tie_embeddings = NMT_TIE_NONE;
            nmt_model m;
            ck_assert_int_eq(nmt_model_init(&m, &c), 0);
            nmt_model_init_weights(&m, 3);
            float base[TB * TT], changed[TB * TT];
            logprobs_of(&m, tiny_src, tiny_tgt_in, base);
            /* Change decoder input token t = 2 of sentence 0: positions 0, 1 bit-identical, the
             * other sentences bit-identical, position 2 changed. */
            int32_t tgt[TB * TT];
            memcpy(tgt, tiny_tgt_in, sizeof tgt);
            tgt[2] = 11;
            logprobs_of(&m, tiny_src, tgt, changed);
            ck_assert_int_eq(memcmp(base, changed, 2 * sizeof(float)), 0);
            ck_assert_int_eq(memcmp(base + TT, changed + TT, (TB - 1) * TT * sizeof(float)), 0);
            ck_assert_float_ne(base[2], changed[2]);
            /* The pad embedding row only reaches padded source positions, which every attention
             * masks: changing it changes nothing, bit for bit. */
            for (int d = 0; d < c.d_model; d++) m.p.src_embed[d] += 1.0f;
            logprobs_of(&m, tiny_src, tiny_tgt_in, changed);
            ck_assert_int_eq(memcmp(base, changed, sizeof base), 0);
            /* Sentence 1 alone (no padding: S = 3, T = 2) gives its log-probabilities again. */
            for (int d = 0; d < c.d_model; d++) m.p.src_embed[d] -= 1.0f;
            nmt_batch alone = {1, 3, 2, tiny_src + TS, tiny_tgt_in + TT, tiny_tgt_out + TT};
            float single[2];
            ck_assert_int_eq(nmt_model_token_logprobs(&m, &alone, single), 0);
            ck_assert_float_eq_tol(single[0], base[TT], 1e-5f);
            ck_assert_float_eq_tol(single[1], base[TT + 1], 1e-5f);
            ck_assert_float_eq(base[TT + 2], 0.0f); /* padding gets 0 */
            nmt_model_free(&m);
        }
    }
}
END_TEST

START_TEST(logprobs_loss_and_encoder_agree) {
    nmt_model_config c = tiny_config();
    nmt_model m;
    ck_assert_int_eq(nmt_model_init(&m, &c), 0);
    nmt_model_init_weights(&m, 5);
    nmt_batch b = tiny_batch(tiny_src, tiny_tgt_in, tiny_tgt_out);
    nmt_forward_options eval = {.training = 0};
    nmt_loss loss;
    ck_assert_int_eq(nmt_model_forward(&m, &b, &eval, &loss), 0);
    ck_assert_int_eq(loss.tokens, 9);
    ck_assert_double_eq_tol(loss.loss_sum, loss.nll_sum, 1e-9); /* no smoothing */
    float lp[TB * TT];
    ck_assert_int_eq(nmt_model_token_logprobs(&m, &b, lp), 0);
    double total = 0;
    for (int i = 0; i < TB * TT; i++) total += lp[i];
    ck_assert_double_eq_tol(-total, loss.nll_sum, 1e-4);
    /* Label smoothing changes the loss, not the NLL (the kernel test checks its value). */
    nmt_forward_options smoothed = {.label_smoothing = 0.1f};
    double nll = loss.nll_sum;
    ck_assert_int_eq(nmt_model_forward(&m, &b, &smoothed, &loss), 0);
    ck_assert_double_eq_tol(loss.nll_sum, nll, 1e-9);
    ck_assert_double_ne(loss.loss_sum, loss.nll_sum);
    /* Backward after an evaluation forward is refused. */
    ck_assert_int_eq(nmt_model_backward(&m, 1.0f), -1);
    /* The encoder alone: sentence 2 alone equals its rows in the batch. */
    float enc[TB * TS * 8], enc1[2 * 8];
    ck_assert_int_eq(nmt_model_encode(&m, tiny_src, TB, TS, enc), 0);
    ck_assert_int_eq(nmt_model_encode(&m, tiny_src + 2 * TS, 1, 2, enc1), 0);
    for (int i = 0; i < 16; i++) ck_assert_float_eq_tol(enc1[i], enc[2 * TS * 8 + i], 1e-5f);
    nmt_model_free(&m);
}
END_TEST

/* An evaluation forward (no backward follows) packs the rows without their padding and gives the
 * layers of each stack one set of buffers: the same loss, bit for bit, as a training forward, which
 * keeps the padded rows and every layer's buffers, at the memory of one layer. */
static size_t evaluation_block(nmt_norm_position norm, nmt_positions positions, int layers, nmt_loss *eval,
                               nmt_loss *train) {
    nmt_model_config c = nmt_test_tiny_config(13, 8, 12, layers, layers);
    c.norm_position = norm;
    c.positions = positions;
    c.dropout = 0.0f;
    nmt_model m;
    ck_assert_int_eq(nmt_test_tiny_perturbed(&m, &c, 11), 0);
    nmt_batch b = tiny_batch(tiny_src, tiny_tgt_in, tiny_tgt_out);
    nmt_forward_options evaluation = {.label_smoothing = 0.1f}, training = {.training = 1, .label_smoothing = 0.1f};
    ck_assert_int_eq(nmt_model_forward(&m, &b, &evaluation, eval), 0);
    const size_t block = m.acts->block_capacity;
    ck_assert_int_eq(nmt_model_forward(&m, &b, &training, train), 0);
    ck_assert_int_eq(nmt_model_zero_grads(&m), 0);
    ck_assert_int_eq(nmt_model_backward(&m, 1.0f), 0);
    nmt_loss again;
    ck_assert_int_eq(nmt_model_forward(&m, &b, &evaluation, &again), 0); /* after training's layout */
    ck_assert(again.loss_sum == eval->loss_sum && again.nll_sum == eval->nll_sum);
    nmt_model_free(&m);
    return block;
}

START_TEST(evaluation_packs_rows_and_shares_layer_buffers) {
    static const nmt_positions positions[] = {NMT_POSITIONS_SINUSOIDAL, NMT_POSITIONS_LEARNED, NMT_POSITIONS_ROPE};
    for (int v = 0; v < 6; v++) {
        const nmt_norm_position norm = v % 2 ? NMT_NORM_PRE : NMT_NORM_POST;
        nmt_loss eval, train, eval1, train1;
        const size_t deep = evaluation_block(norm, positions[v / 2], 4, &eval, &train),
                     shallow = evaluation_block(norm, positions[v / 2], 1, &eval1, &train1);
        ck_assert(eval.loss_sum == train.loss_sum && eval.nll_sum == train.nll_sum && eval.tokens == train.tokens);
        ck_assert(eval1.loss_sum == train1.loss_sum);
        ck_assert(eval.nll_sum != eval1.nll_sum); /* the depth matters to the loss, not to the memory */
        ck_assert_uint_eq(deep, shallow);
    }
}
END_TEST

START_TEST(bad_batches_are_refused) {
    nmt_model_config c = tiny_config();
    c.positions = NMT_POSITIONS_LEARNED;
    c.max_positions = 4;
    nmt_model m;
    ck_assert_int_eq(nmt_model_init(&m, &c), 0);
    nmt_forward_options opts = {.training = 1, .label_smoothing = 0.1f, .dropout_seed = 1};
    nmt_loss loss;
    nmt_batch b = tiny_batch(tiny_src, tiny_tgt_in, tiny_tgt_out); /* S = 5 > 4 */
    ck_assert_int_eq(nmt_model_forward(&m, &b, &opts, &loss), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "max_positions"));
    ck_assert_int_eq(nmt_model_backward(&m, 1.0f), -1);
    int32_t bad[TB * TS];
    memcpy(bad, tiny_src, sizeof bad);
    bad[7] = 13; /* vocabulary is 13: ids 0..12 */
    b = (nmt_batch){TB, 4, TT, bad, tiny_tgt_in, tiny_tgt_out};
    ck_assert_int_eq(nmt_model_forward(&m, &b, &opts, &loss), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "id 13"));
    nmt_model_free(&m);
}
END_TEST

/* An imported model's activations and embedding norms run in evaluation; training refuses them by name. */
START_TEST(imported_only_parts_evaluate_but_do_not_train) {
    const nmt_activation kinds[] = {NMT_ACTIVATION_RELU, NMT_ACTIVATION_GELU, NMT_ACTIVATION_GELU_SIGMOID};
    float first = 0.0f;
    for (int i = 0; i < 3; i++) {
        nmt_model_config c = tiny_config();
        c.activation = kinds[i];
        c.embedding_norm = i > 0;
        nmt_model m;
        ck_assert_int_eq(nmt_model_init(&m, &c), 0);
        nmt_model_init_weights(&m, 3);
        ck_assert_int_eq(m.p.src_embed_norm.weight != NULL, c.embedding_norm);
        nmt_batch b = tiny_batch(tiny_src, tiny_tgt_in, tiny_tgt_out);
        nmt_forward_options eval = {0}, train = {.training = 1, .dropout_seed = 1};
        nmt_loss loss;
        ck_assert_msg(nmt_model_forward(&m, &b, &eval, &loss) == 0, "%s", nmt_error());
        ck_assert(isfinite(loss.nll_sum));
        /* Another activation or a norm changes the loss of the same weights' layers. */
        if (i == 0) first = (float)loss.nll_sum;
        else ck_assert_float_ne((float)loss.nll_sum, first);
        ck_assert_int_eq(nmt_model_forward(&m, &b, &train, &loss), i == 0 ? 0 : -1);
        if (i > 0) ck_assert_msg(strstr(nmt_error(), "training does not implement model."), "%s", nmt_error());
        nmt_model_free(&m);
    }
}
END_TEST

/* R-Drop's batch must hold each sentence twice, its second half repeating its first row for row. */
START_TEST(rdrop_batches_must_repeat) {
    nmt_model_config c = tiny_config();
    nmt_model m;
    ck_assert_int_eq(nmt_model_init(&m, &c), 0);
    nmt_model_init_weights(&m, 3);
    nmt_forward_options opts = {.training = 1, .dropout_seed = 1, .rdrop_alpha = 1.0f};
    nmt_loss loss;
    nmt_batch twins = twin_batch();
    ck_assert_int_eq(nmt_model_forward(&m, &twins, &opts, &loss), 0);
    ck_assert_int_eq(loss.tokens, 18);
    nmt_batch odd = tiny_batch(tiny_src, tiny_tgt_in, tiny_tgt_out);
    ck_assert_int_eq(nmt_model_forward(&m, &odd, &opts, &loss), -1);
    ck_assert_str_eq(nmt_error(), "R-Drop: the batch's second half must repeat its first, row for row");
    twin_tgt_out[2 * TB * TT - 2] = 4;
    ck_assert_int_eq(nmt_model_forward(&m, &twins, &opts, &loss), -1);
    /* Evaluation has no twins to compare. */
    opts.training = 0;
    ck_assert_int_eq(nmt_model_forward(&m, &odd, &opts, &loss), 0);
    nmt_model_free(&m);
}
END_TEST

/* ---------------------------------------------------------------------------------------------- */
/* Training behaviour */

/* Plain Adam (beta 0.9, 0.98) on the whole parameter buffer: the test's own optimizer. */
static void adam_step(nmt_model *m, float *mom1, float *mom2, int step, float lr) {
    float b1 = 0.9f, b2 = 0.98f;
    float c1 = 1.0f - powf(b1, (float)step), c2 = 1.0f - powf(b2, (float)step);
    for (size_t i = 0; i < m->num_params; i++) {
        float g = m->grads[i];
        mom1[i] = b1 * mom1[i] + (1 - b1) * g;
        mom2[i] = b2 * mom2[i] + (1 - b2) * g * g;
        m->params[i] -= lr * (mom1[i] / c1) / (sqrtf(mom2[i] / c2) + 1e-8f);
    }
}

/* Trains `steps` full-batch steps; returns the last per-token loss and records each step's loss. */
static double train_steps(nmt_model *m, const nmt_batch *b, int steps, float lr, float smoothing, double *history) {
    float *mom1 = calloc(m->num_params, sizeof(float)), *mom2 = calloc(m->num_params, sizeof(float));
    double last = 0;
    for (int step = 1; step <= steps; step++) {
        nmt_forward_options opts = {.training = 1, .label_smoothing = smoothing, .dropout_seed = (uint64_t)step};
        nmt_loss loss;
        nmt_model_zero_grads(m);
        ck_assert_int_eq(nmt_model_forward(m, b, &opts, &loss), 0);
        ck_assert_int_eq(nmt_model_backward(m, 1.0f / (float)loss.tokens), 0);
        adam_step(m, mom1, mom2, step, lr);
        last = loss.loss_sum / (double)loss.tokens;
        if (history) history[step - 1] = loss.loss_sum;
    }
    free(mom1);
    free(mom2);
    return last;
}

START_TEST(tiny_model_overfits_ten_pairs) {
    nmt_pool_set_threads(2);
    /* Ten pairs of random lengths 2-6 over ids 4..19; the target is a fixed function of the source
     * (reversed, shifted), so a model must really read the source to fit it. */
    enum { PAIRS = 10, S = 7, T = 7 };
    int32_t src[PAIRS * S] = {0}, tin[PAIRS * T] = {0}, tout[PAIRS * T] = {0};
    uint64_t seed = 2024;
    for (int p = 0; p < PAIRS; p++) {
        int n = 2 + (int)(gc_rng(&seed) % 5);
        int32_t words[6];
        for (int i = 0; i < n; i++) words[i] = 4 + (int32_t)(gc_rng(&seed) % 16);
        for (int i = 0; i < n; i++) src[p * S + i] = words[i];
        src[p * S + n] = NMT_EOS;
        tin[p * T] = NMT_BOS;
        for (int i = 0; i < n; i++) {
            int32_t w = 4 + (words[n - 1 - i] - 4 + 3) % 16;
            tout[p * T + i] = w;
            tin[p * T + i + 1] = w;
        }
        tout[p * T + n] = NMT_EOS;
    }
    nmt_model_config c = nmt_model_config_default();
    c.vocab_size = 20;
    c.d_model = 32;
    c.heads = 4;
    c.ffn = 64;
    c.encoder_layers = c.decoder_layers = 2;
    c.dropout = 0.0f;
    nmt_model m;
    ck_assert_int_eq(nmt_model_init(&m, &c), 0);
    nmt_model_init_weights(&m, 1);
    nmt_batch b = {PAIRS, S, T, src, tin, tout};
    double loss = train_steps(&m, &b, 300, 3e-3f, 0.0f, NULL);
    ck_assert_msg(loss < 0.05, "loss per token after 300 steps: %g", loss);
    nmt_model_free(&m);
}
END_TEST

START_TEST(training_is_deterministic) {
    nmt_model_config c = tiny_config();
    c.dropout = 0.3f;
    c.attention_dropout = 0.1f;
    nmt_batch b = tiny_batch(tiny_src, tiny_tgt_in, tiny_tgt_out);
    double runs[3][5];
    for (int run = 0; run < 3; run++) {
        nmt_pool_set_threads(run == 2 ? 1 : 2);
        nmt_model m;
        ck_assert_int_eq(nmt_model_init(&m, &c), 0);
        nmt_model_init_weights(&m, 11);
        train_steps(&m, &b, 5, 1e-2f, 0.1f, runs[run]);
        nmt_model_free(&m);
    }
    /* Same seed, same threads: bit-identical losses. */
    ck_assert_int_eq(memcmp(runs[0], runs[1], sizeof runs[0]), 0);
    /* One thread instead of two: the same masks and the same units of work (products cut by their
     * shape, never by the thread count), so bit-identical losses on either sgemm. */
    for (int i = 0; i < 5; i++) ck_assert_msg(runs[2][i] == runs[0][i], "step %d: %.17g vs %.17g", i, runs[2][i], runs[0][i]);
    /* Dropout really is on: a different step seed changes the first loss. */
    ck_assert_double_ne(runs[0][0], runs[0][1]);
}
END_TEST

/* Word dropout zeroes whole embeddings: at a rate so close to 1 that every word of a side is dropped,
 * the loss no longer depends on that side's tokens (only on its positions and padding), while it
 * does at a rate of 0.5; evaluation ignores both rates. */
START_TEST(word_dropout_drops_whole_words) {
    nmt_model_config c = tiny_config();
    c.dropout = 0.0f;
    c.positions = NMT_POSITIONS_SINUSOIDAL;
    nmt_model m;
    ck_assert_int_eq(nmt_model_init(&m, &c), 0);
    nmt_model_init_weights(&m, 3);
    int32_t other_src[TB * TS], other_tgt_in[TB * TT];
    for (int i = 0; i < TB * TS; i++) other_src[i] = tiny_src[i] == NMT_PAD ? NMT_PAD : 4 + (tiny_src[i] + 1) % 9;
    for (int i = 0; i < TB * TT; i++) other_tgt_in[i] = tiny_tgt_in[i] == NMT_PAD ? NMT_PAD : 4 + (tiny_tgt_in[i] + 3) % 9;
    const nmt_batch given = tiny_batch(tiny_src, tiny_tgt_in, tiny_tgt_out);
    const nmt_batch src_changed = tiny_batch(other_src, tiny_tgt_in, tiny_tgt_out);
    const nmt_batch tgt_changed = tiny_batch(tiny_src, other_tgt_in, tiny_tgt_out);
    const float all = 0.999999f;
    model_ctx ctx = {&m, given, {.training = 1, .dropout_seed = 5, .dropout_src = all}};
    const double src_dropped = model_loss(&ctx);
    ctx.batch = src_changed;
    ck_assert_double_eq(model_loss(&ctx), src_dropped);
    ctx.batch = tgt_changed;
    ck_assert_double_ne(model_loss(&ctx), src_dropped);
    ctx.opts = (nmt_forward_options){.training = 1, .dropout_seed = 5, .dropout_trg = all};
    const double tgt_dropped = model_loss(&ctx);
    ctx.batch = given;
    ck_assert_double_eq(model_loss(&ctx), tgt_dropped);
    ctx.batch = src_changed;
    ck_assert_double_ne(model_loss(&ctx), tgt_dropped);
    /* Half the words: the loss differs from no word dropout in training, and not at all in evaluation. */
    ctx.batch = given;
    ctx.opts = (nmt_forward_options){.training = 1, .dropout_seed = 5};
    const double none = model_loss(&ctx);
    ctx.opts.dropout_src = ctx.opts.dropout_trg = 0.5f;
    ck_assert_double_ne(model_loss(&ctx), none);
    ctx.opts.training = 0;
    const double eval_with = model_loss(&ctx);
    ctx.opts.dropout_src = ctx.opts.dropout_trg = 0.0f;
    ck_assert_double_eq(model_loss(&ctx), eval_with);
    nmt_model_free(&m);
}
END_TEST

/* The d256/h4/ff1024/3+3/8k configuration of configs/multi30k-small.yaml at Multi30k-like lengths (source 13, target
 * 14 pieces): forward+backward is about 45 MFLOP per target token. By hand, per target token:
 * encoder 3 x 6 x (4 D^2 + 2 D F) x 13/14 = 13.1M, decoder 3 x 6 x (6 D^2 + 2 D F) = 16.5M plus
 * cross k|v 3 x 6 x 2 D^2 x 13/14 = 2.2M, output 6 D V = 12.3M, attention ~0.6M: 44.7M. */
START_TEST(flops_per_target_token_of_the_small_config) {
    nmt_model_config c = nmt_model_config_default();
    c.vocab_size = 8000;
    c.d_model = 256;
    c.heads = 4;
    c.ffn = 1024;
    c.encoder_layers = c.decoder_layers = 3;
    enum { B = 4, S = 13, T = 14 };
    int32_t src[B * S], tin[B * T], tout[B * T];
    for (int i = 0; i < B * S; i++) src[i] = 5;
    for (int i = 0; i < B * T; i++) tin[i] = tout[i] = 5;
    nmt_batch b = {B, S, T, src, tin, tout};
    double per_token = nmt_model_flops(&c, &b) / (B * T);
    ck_assert_double_eq_tol(per_token, 44.7e6, 0.5e6);
}
END_TEST
static int create_and_forward(void *context) {
    (void)context;
    nmt_model_config c = tiny_config();
    nmt_model m;
    if (nmt_model_init(&m, &c) < 0) return -1;
    nmt_model_init_weights(&m, 1);
    nmt_batch b = tiny_batch(tiny_src, tiny_tgt_in, tiny_tgt_out);
    nmt_forward_options opts = {.training = 1, .label_smoothing = 0.1f, .dropout_seed = 1};
    nmt_loss loss;
    int rc = nmt_model_zero_grads(&m);
    if (rc == 0) rc = nmt_model_forward(&m, &b, &opts, &loss);
    if (rc == 0) rc = nmt_model_backward(&m, 1.0f);
    nmt_model_free(&m);
    return rc;
}

/* Every allocation of creation and of a training step is checked (and nothing leaks: ASan). */
START_TEST(create_and_forward_survive_every_allocation_failure) {
    nmt_pool_set_threads(1);
    ck_assert_int_ge(nmt_test_alloc_sweep(create_and_forward, NULL), 9);
}
END_TEST

static Suite *model_suite(void) {
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("parameters");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, transformer_base_parameter_count_matches_closed_formula);
    tcase_add_test(tc, multi_head_attention_has_4d_squared_weights);
    tcase_add_test(tc, tensor_table_names_shapes_and_layout);
    tcase_add_test(tc, init_is_deterministic_and_follows_the_recipe);
    tcase_add_test(tc, config_check_rejects_impossible_values);
    
    suite_add_tcase(s, tc);
    TCase *grad = tcase_create("gradients");
    tcase_set_timeout(grad, 120);
    tcase_add_test(grad, gradients_post_ln_sinusoidal_tied);
    tcase_add_test(grad, gradients_pre_ln_sinusoidal_dropout);
    tcase_add_test(grad, gradients_post_ln_learned_tie_decoder);
    tcase_add_test(grad, gradients_pre_ln_learned_untied);
    tcase_add_test(grad, gradients_post_ln_rope_dropout);
    tcase_add_test(grad, gradients_pre_ln_rope_tie_decoder);
    tcase_add_test(grad, gradients_post_ln_rope_rdrop);
    tcase_add_test(grad, gradients_pre_ln_rope_tied_rdrop);
    tcase_add_test(grad, gradients_bf16_pre_ln_sinusoidal_tied);
    tcase_add_test(grad, gradients_bf16_post_ln_rope_untied);
    suite_add_tcase(s, grad);
    TCase *behaviour = tcase_create("behaviour");
    tcase_set_timeout(behaviour, 120);
    tcase_add_test(behaviour, decoder_is_causal_and_source_padding_is_masked);
    tcase_add_test(behaviour, logprobs_loss_and_encoder_agree);
    tcase_add_test(behaviour, evaluation_packs_rows_and_shares_layer_buffers);
    tcase_add_test(behaviour, bad_batches_are_refused);
    tcase_add_test(behaviour, imported_only_parts_evaluate_but_do_not_train);
    tcase_add_test(behaviour, rdrop_batches_must_repeat);
    tcase_add_test(behaviour, tiny_model_overfits_ten_pairs);
    tcase_add_test(behaviour, training_is_deterministic);
    tcase_add_test(behaviour, word_dropout_drops_whole_words);
    tcase_add_test(behaviour, flops_per_target_token_of_the_small_config);
    tcase_add_test(behaviour, create_and_forward_survive_every_allocation_failure);
    suite_add_tcase(s, behaviour);
    return s;
}

int main(void) { return nmt_test_run(model_suite()); }
