/* model: the forward and backward pass of every layer of the Transformer, and the loss.
 *
 * A forward carves the batch's activations (activations.h) and runs the layers; each layer's forward
 * sits next to its backward. A sublayer is wrapped by the residual/LayerNorm functions (sublayer_*),
 * so post-LN and pre-LN share every layer's code. The parameters and their layout are params.c's.
 *
 * Output. Logits exist for one chunk of non-pad target rows at a time: projection, fused
 * log-softmax + label-smoothed loss, and in training at once the gradients of the decoder output
 * and of the output weight (held unscaled until backward knows the scale).
 */
#include "model/model.h"
#include "model/activations.h"

#include "compute/gemm.h"
#include "compute/pool.h"
#include "compute/attention.h"
#include "compute/kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each layer function adds its wall time to one stage of m->timing: STAGE_START at its top,
 * STAGE_END(direction, stage) at its bottom. */
#define STAGE_START double stage_start_ = nmt_now()
#define STAGE_END(direction, stage) (m->timing.direction[stage] += nmt_now() - stage_start_)

static int post_ln(const nmt_model *m) { return m->config.norm_position == NMT_NORM_POST; }

/* ---------------------------------------------------------------------------------------------- */
/* The batch */

/* Row b of a [B, len] id matrix has padding (id 0) only at its end; its length is one past its
 * last non-pad id. */
static int row_length(const int32_t *row, int len) {
    while (len > 0 && row[len - 1] == NMT_PAD) len--;
    return len;
}

static int check_ids(const int32_t *ids, int B, int len, int V, const char *what) {
    for (long i = 0; i < (long)B * len; i++)
        if (ids[i] < 0 || ids[i] >= V)
            return nmt_error_set("batch: %s id %d at row %ld, position %ld is outside the vocabulary [0, %d)", what,
                                 ids[i], i / len, i % len, V);
    return 0;
}

static int check_batch(const nmt_model *m, const nmt_batch *b, int mode) {
    const nmt_model_config *c = &m->config;
    if (b->batch < 1 || b->src_len < 1 || !b->src)
        return nmt_error_set("batch: needs at least one sentence and a source of length >= 1");
    if (mode != NMT_PASS_ENCODE && (b->tgt_len < 1 || !b->tgt_in || (!b->tgt_out)))
        return nmt_error_set("batch: needs decoder inputs and targets of length >= 1");
    if ((long)b->batch * b->src_len > (1L << 26) || (long)b->batch * b->tgt_len > (1L << 26))
        return nmt_error_set("batch: %d x (%d + %d) tokens is too large", b->batch, b->src_len, b->tgt_len);
    if (c->positions == NMT_POSITIONS_LEARNED) {
        int longest = mode == NMT_PASS_ENCODE || b->src_len > b->tgt_len ? b->src_len : b->tgt_len;
        if (longest > c->max_positions)
            return nmt_error_set("batch: a sentence of %d positions exceeds the learned position table "
                                 "(model.max_positions = %d)",
                                 longest, c->max_positions);
    }
    if (check_ids(b->src, b->batch, b->src_len, c->vocab_size, "source") < 0) return -1;
    if (mode == NMT_PASS_ENCODE) return 0;
    if (check_ids(b->tgt_in, b->batch, b->tgt_len, c->vocab_size, "decoder input") < 0) return -1;
    return check_ids(b->tgt_out, b->batch, b->tgt_len, c->vocab_size, "target");
}

/* The rows of a side whose s->lengths are set: padded, or packed (activations.h). */
static void prepare_side(side *s, const int32_t *ids, int B, int packed) {
    if (!packed) {
        s->start = NULL;
        memcpy(s->tokens, ids, (size_t)s->M * sizeof(int32_t));
        for (int r = 0; r < s->M; r++) s->pos[r] = r % s->len;
        return;
    }
    int r = 0;
    for (int b = 0; b < B; b++) {
        s->start[b] = r;
        for (int t = 0; t < s->lengths[b]; t++, r++) {
            s->tokens[r] = ids[(long)b * s->len + t];
            s->pos[r] = t;
        }
    }
    s->M = r;
}

/* R-Drop's output rows: each target row of the batch's first half, then its twin in the second. */
static int pair_rows(output_acts *o, const nmt_batch *b) {
    long half = (long)b->batch / 2 * b->tgt_len, src_half = (long)b->batch / 2 * b->src_len;
    if (b->batch % 2 || memcmp(b->src, b->src + src_half, (size_t)src_half * sizeof(int32_t)) ||
        memcmp(b->tgt_in, b->tgt_in + half, (size_t)half * sizeof(int32_t)) ||
        memcmp(b->tgt_out, b->tgt_out + half, (size_t)half * sizeof(int32_t)))
        return nmt_error_set("R-Drop: the batch's second half must repeat its first, row for row");
    for (long r = 0; r < half; r++) {
        if (b->tgt_out[r] == NMT_PAD) continue;
        o->rows[o->tokens] = o->places[o->tokens] = (int32_t)r;
        o->rows[o->tokens + 1] = o->places[o->tokens + 1] = (int32_t)(r + half);
        o->targets[o->tokens] = o->targets[o->tokens + 1] = b->tgt_out[r];
        o->tokens += 2;
    }
    return 0;
}

static int prepare(nmt_model *m, const nmt_batch *b, int mode, const nmt_forward_options *opts) {
    if (check_batch(m, b, mode) < 0) return -1;
    int T = mode == NMT_PASS_ENCODE ? 0 : b->tgt_len;
    if (nmt_activations_plan(m->acts, &m->config, b->batch, b->src_len, T, mode) < 0) return -1;
    nmt_activations *A = m->acts;
    const nmt_model_config *c = &m->config;
    A->B = b->batch;
    A->S = b->src_len;
    A->T = T;
    A->H = c->heads;
    A->dh = c->d_model / c->heads;
    A->mode = mode;
    int dropout_on = mode == NMT_PASS_TRAIN && opts && opts->training;
    A->drop = (nmt_dropout){dropout_on ? c->dropout : 0.0f, opts ? opts->dropout_seed : 0, 0};
    A->attention_dropout = dropout_on ? c->attention_dropout : 0.0f;
    A->dropout_src = dropout_on ? opts->dropout_src : 0.0f;
    A->dropout_trg = dropout_on ? opts->dropout_trg : 0.0f;
    A->rdrop_alpha = mode == NMT_PASS_TRAIN ? opts->rdrop_alpha : 0.0f;
    /* Evaluation packs the rows (activations.h); the encoder alone keeps them padded for its caller. */
    const int packed = mode == NMT_PASS_EVAL || mode == NMT_PASS_LOGPROBS;
    for (int i = 0; i < b->batch; i++) A->src.lengths[i] = row_length(b->src + (long)i * b->src_len, b->src_len);
    int longest = b->src_len > T ? b->src_len : T;
    if (c->positions == NMT_POSITIONS_SINUSOIDAL) nmt_sinusoidal_positions(A->positions, longest, c->d_model);
    if (c->positions == NMT_POSITIONS_ROPE) nmt_rope_table(A->positions, longest, A->dh);
    prepare_side(&A->src, b->src, b->batch, packed);
    if (mode == NMT_PASS_ENCODE) return 0;
    for (int i = 0; i < b->batch; i++) {
        const int in = row_length(b->tgt_in + (long)i * T, T), out = row_length(b->tgt_out + (long)i * T, T);
        A->tgt.lengths[i] = in > out ? in : out;
    }
    prepare_side(&A->tgt, b->tgt_in, b->batch, packed);
    output_acts *o = &A->out;
    o->tokens = 0;
    if (A->rdrop_alpha > 0.0f) return pair_rows(o, b);
    for (int i = 0; i < b->batch; i++)
        for (int t = 0; t < A->tgt.lengths[i]; t++) {
            const int place = i * T + t;
            if (b->tgt_out[place] == NMT_PAD) continue;
            o->rows[o->tokens] = packed ? A->tgt.start[i] + t : place;
            o->places[o->tokens] = place;
            o->targets[o->tokens++] = b->tgt_out[place];
        }
    return 0;
}

/* Dropout sites: a stream per (layer, site); layer 0 is the embeddings, then encoder layers, then
 * decoder layers. Layer 0's sites are the two sides' embeddings and their whole words; the layers'
 * sites follow them, so every (layer, site) has a stream of its own. */
enum { SITE_SRC_EMBED, SITE_TGT_EMBED, SITE_SRC_WORDS, SITE_TGT_WORDS };
enum { SITE_SELF = SITE_SRC_WORDS, SITE_SELF_WEIGHTS, SITE_CROSS, SITE_CROSS_WEIGHTS, SITE_FFN, SITES };

static nmt_dropout dropout_at(const nmt_model *m, int layer, int site) {
    const nmt_activations *A = m->acts;
    float rate = A->drop.rate;
    if (layer == 0 && site == SITE_SRC_WORDS) rate = A->dropout_src;
    else if (layer == 0 && site == SITE_TGT_WORDS) rate = A->dropout_trg;
    else if (layer > 0 && (site == SITE_SELF_WEIGHTS || site == SITE_CROSS_WEIGHTS)) rate = A->attention_dropout;
    nmt_dropout d = {rate, A->drop.seed, (uint32_t)(layer * SITES + site)};
    return d;
}

static int encoder_layer_id(int l) { return 1 + l; }
static int decoder_layer_id(const nmt_model *m, int l) { return 1 + m->config.encoder_layers + l; }

/* ---------------------------------------------------------------------------------------------- */
/* Embeddings: x = words(r) table[token] * sqrt(D) + position, then dropout, where words(r) is row r's
 * word-dropout factor (0 for a dropped word, else 1 / (1 - p); 1 outside training): a dropped word
 * keeps its position, as in Marian, so the model still knows where the word it cannot see stands. */

typedef struct embed_task {
    float *x;                /* [M, D] forward output; backward: its gradient */
    float *d_table;          /* [V, D] */
    float *d_positions;      /* [max_positions, D] learned positions, or NULL */
    const float *table;      /* [V, D] */
    const float *positions;  /* [*, D] added per position, or NULL (rope) */
    const int32_t *tokens, *pos;
    int M, D;
    float scale;             /* sqrt(D) */
    nmt_dropout words;       /* whole-row dropout of the table's part */
} embed_task;

/* The factor of row r's table part: scale times its word-dropout factor. */
static float embed_row_scale(const embed_task *t, long r) {
    float keep;
    nmt_dropout_factors(&keep, t->words, (uint64_t)r, 1);
    return t->scale * keep;
}

static void embed_rows(void *ctx, long begin, long end) {
    const embed_task *t = ctx;
    int D = t->D;
    for (long r = begin; r < end; r++) {
        const float *e = t->table + (long)t->tokens[r] * D;
        const float *pe = t->positions ? t->positions + (long)t->pos[r] * D : NULL;
        const float scale = embed_row_scale(t, r);
        float *x = t->x + r * D;
        for (int d = 0; d < D; d++) x[d] = e[d] * scale + (pe ? pe[d] : 0.0f);
    }
}

/* Each thread owns whole columns, so the scatter-add needs no locks and sums in row order. */
static void embed_backward_columns(void *ctx, long begin, long end) {
    const embed_task *t = ctx;
    int D = t->D;
    for (int r = 0; r < t->M; r++) {
        const float *g = t->x + (long)r * D;
        float *dt = t->d_table + (long)t->tokens[r] * D;
        const float scale = embed_row_scale(t, r);
        for (long d = begin; d < end; d++) dt[d] += scale * g[d];
        if (t->d_positions) {
            float *dp = t->d_positions + (long)t->pos[r] * D;
            for (long d = begin; d < end; d++) dp[d] += g[d];
        }
    }
}

static embed_task embed_task_of(const nmt_model *m, const side *s, const float *table, const float *learned,
                                nmt_dropout words) {
    const float *positions = learned;
    if (m->config.positions == NMT_POSITIONS_SINUSOIDAL) positions = m->acts->positions;
    embed_task t = {.x = s->x0, .table = table, .positions = positions, .tokens = s->tokens, .pos = s->pos,
                    .M = s->M, .D = m->config.d_model, .scale = sqrtf((float)m->config.d_model), .words = words};
    return t;
}

/* norm: the embeddings' LayerNorm (imported models, evaluation only; the side's final statistics are
 * its scratch), or NULL pointers. */
static void embed_forward(nmt_model *m, side *s, const float *table, const float *learned, const nmt_norm_params *norm,
                          nmt_dropout words, nmt_dropout drop) {
    STAGE_START;
    embed_task t = embed_task_of(m, s, table, learned, words);
    nmt_pool_work(s->M, t.D, embed_rows, &t);
    if (norm->weight)
        nmt_layernorm_forward(s->x0, s->final.mean, s->final.rstd, s->x0, norm->weight, norm->bias, s->M, t.D,
                              m->config.norm_eps);
    nmt_dropout_add(s->x0, NULL, s->x0, drop, (long)s->M * t.D);
    STAGE_END(forward, NMT_STAGE_EMBED);
}

/* dx [M, D]: the gradient of the embeddings' output (clobbered). */
static void embed_backward(nmt_model *m, side *s, float *d_table, float *d_learned, float *dx, nmt_dropout words,
                           nmt_dropout drop) {
    STAGE_START;
    embed_task t = embed_task_of(m, s, NULL, NULL, words);
    t.x = dx;
    t.d_table = d_table;
    t.d_positions = d_learned;
    nmt_dropout_backward(dx, dx, drop, (long)s->M * t.D, 0);
    nmt_pool_columns(t.D, s->M, embed_backward_columns, &t);
    STAGE_END(backward, NMT_STAGE_EMBED);
}

/* ---------------------------------------------------------------------------------------------- */
/* Residual + LayerNorm around a sublayer f. Forward: input -> f writes into f_out -> finish.
 * Backward: finish_backward gives df (gradient of f's output) and leaves the residual gradient
 * in g->d; f's backward writes its input gradient where f_dinput says; input_backward adds the
 * pre-LN LayerNorm's part. g->d then holds the gradient of the sublayer's input. */

static const float *sublayer_input(nmt_model *m, sublayer_acts *s, const nmt_norm_params *norm, const float *x,
                                   int M) {
    if (post_ln(m)) return x;
    STAGE_START;
    nmt_layernorm_forward(s->normed, s->mean, s->rstd, x, norm->weight, norm->bias, M, m->config.d_model,
                          m->config.norm_eps);
    STAGE_END(forward, NMT_STAGE_NORM);
    return s->normed;
}

/* What f read: x (post-LN) or LN(x) (pre-LN). */
static const float *sublayer_f_input(const nmt_model *m, const sublayer_acts *s, const float *x) {
    return post_ln(m) ? x : s->normed;
}

static float *sublayer_f_out(const nmt_model *m, sublayer_acts *s) { return post_ln(m) ? s->sum : s->out; }

static void sublayer_finish(nmt_model *m, sublayer_acts *s, const nmt_norm_params *norm, const float *x, int M,
                            nmt_dropout drop) {
    STAGE_START;
    float *f = sublayer_f_out(m, s);
    nmt_dropout_add(f, x, f, drop, (long)M * m->config.d_model);
    if (post_ln(m))
        nmt_layernorm_forward(s->normed, s->mean, s->rstd, s->sum, norm->weight, norm->bias, M, m->config.d_model,
                              m->config.norm_eps);
    STAGE_END(forward, NMT_STAGE_NORM);
}

static void swap_floats(float **a, float **b) {
    float *t = *a;
    *a = *b;
    *b = t;
}

static void sublayer_finish_backward(nmt_model *m, grad_acts *g, const sublayer_acts *s,
                                     const nmt_norm_params *norm, nmt_norm_params *dnorm, int M, nmt_dropout drop) {
    STAGE_START;
    int D = m->config.d_model;
    if (post_ln(m)) {
        nmt_layernorm_backward(g->spare, dnorm->weight, dnorm->bias, g->d, s->sum, s->mean, s->rstd, norm->weight, M,
                               D, 0);
        swap_floats(&g->d, &g->spare);
    }
    nmt_dropout_backward(g->df, g->d, drop, (long)M * D, 0);
    STAGE_END(backward, NMT_STAGE_NORM);
}

/* Where f's backward puts its input gradient: added onto the residual gradient (post-LN), or
 * into dfin for the LayerNorm before f (pre-LN). */
static float *sublayer_f_dinput(const nmt_model *m, grad_acts *g, int *accumulate) {
    *accumulate = post_ln(m);
    return post_ln(m) ? g->d : g->dfin;
}

static void sublayer_input_backward(nmt_model *m, grad_acts *g, const sublayer_acts *s,
                                    const nmt_norm_params *norm, nmt_norm_params *dnorm, const float *x, int M) {
    if (post_ln(m)) return;
    STAGE_START;
    nmt_layernorm_backward(g->d, dnorm->weight, dnorm->bias, g->dfin, x, s->mean, s->rstd, norm->weight, M,
                           m->config.d_model, 1);
    STAGE_END(backward, NMT_STAGE_NORM);
}

/* ---------------------------------------------------------------------------------------------- */
/* Attention sublayers */

/* The heads of a side's rows of `row_stride` floats, padded or packed. */
static nmt_heads heads_at(const side *s, float *data, long row_stride) {
    nmt_heads h = {data, s->start ? row_stride : (long)s->len * row_stride, row_stride, s->start, NULL, 0};
    return h;
}

/* Queries of side q against keys of side k: packed queries stop at each sentence's length, keys
 * past a source sentence's length are masked, the decoder's own by causality. */
static nmt_attention_dims attention_dims(const nmt_model *m, const side *q, const side *k, int causal,
                                         nmt_dropout drop) {
    const nmt_activations *A = m->acts;
    nmt_attention_dims d = {.batch = A->B, .heads = A->H, .head_dim = A->dh, .q_len = q->len, .k_len = k->len,
                            .k_lengths = causal ? NULL : k->lengths, .q_lengths = q->start ? q->lengths : NULL,
                            .causal = causal, .scale = 1.0f / sqrtf((float)A->dh), .dropout = drop};
    return d;
}

/* Self-attention of one side: q|k|v = x W^T + b in one product, rope on q and k, attention, o_proj. */
static void self_attention_forward(nmt_model *m, attention_acts *a, const nmt_attention_params *p, const float *x,
                                   const side *s, int causal, nmt_dropout drop, float *f_out) {
    STAGE_START;
    int D = m->config.d_model, M = s->M;
    nmt_linear_forward(a->qkv, x, p->q_weight, p->q_bias, M, D, 3 * D);
    if (m->config.positions == NMT_POSITIONS_ROPE)
        nmt_rope_apply(a->qkv, 3 * D, m->acts->positions, s->pos, M, 2 * m->acts->H, m->acts->dh, 0);
    nmt_attention_dims dims = attention_dims(m, s, s, causal, drop);
    nmt_attention_forward(heads_at(s, a->context, D), a->weights, heads_at(s, a->qkv, 3 * D),
                          heads_at(s, a->qkv + D, 3 * D), heads_at(s, a->qkv + 2 * D, 3 * D), &dims);
    nmt_linear_forward(f_out, a->context, p->o_weight, p->o_bias, M, D, D);
    STAGE_END(forward, NMT_STAGE_ATTENTION);
}

static void self_attention_backward(nmt_model *m, grad_acts *g, const attention_acts *a,
                                    const nmt_attention_params *p, nmt_attention_params *dp, const float *x,
                                    const side *s, int causal, nmt_dropout drop, float *dx, int accumulate) {
    STAGE_START;
    int D = m->config.d_model, M = s->M;
    nmt_linear_backward(g->dctx, dp->o_weight, dp->o_bias, g->df, a->context, p->o_weight, M, D, D, 0);
    nmt_attention_dims dims = attention_dims(m, s, s, causal, drop);
    nmt_attention_backward(heads_at(s, g->dqkv, 3 * D), heads_at(s, g->dqkv + D, 3 * D),
                           heads_at(s, g->dqkv + 2 * D, 3 * D), g->dweights, heads_at(s, g->dctx, D), a->weights,
                           heads_at(s, a->qkv, 3 * D), heads_at(s, a->qkv + D, 3 * D),
                           heads_at(s, a->qkv + 2 * D, 3 * D), &dims);
    if (m->config.positions == NMT_POSITIONS_ROPE)
        nmt_rope_apply(g->dqkv, 3 * D, m->acts->positions, s->pos, M, 2 * m->acts->H, m->acts->dh, 1);
    nmt_linear_backward(dx, dp->q_weight, dp->q_bias, g->dqkv, x, p->q_weight, M, D, 3 * D, accumulate);
    STAGE_END(backward, NMT_STAGE_ATTENTION);
}

/* Cross-attention: queries from the decoder, keys and values from the encoder output (k|v in one
 * product), source padding masked. */
static void cross_attention_forward(nmt_model *m, attention_acts *a, const nmt_attention_params *p, const float *x,
                                    nmt_dropout drop, float *f_out) {
    STAGE_START;
    const nmt_activations *A = m->acts;
    int D = m->config.d_model;
    nmt_linear_forward(a->qkv, x, p->q_weight, p->q_bias, A->tgt.M, D, D);
    nmt_linear_forward(a->kv, A->src.out, p->k_weight, p->k_bias, A->src.M, D, 2 * D);
    const side *q = &A->tgt, *k = &A->src;
    nmt_attention_dims dims = attention_dims(m, q, k, 0, drop);
    nmt_attention_forward(heads_at(q, a->context, D), a->weights, heads_at(q, a->qkv, D), heads_at(k, a->kv, 2 * D),
                          heads_at(k, a->kv + D, 2 * D), &dims);
    nmt_linear_forward(f_out, a->context, p->o_weight, p->o_bias, A->tgt.M, D, D);
    STAGE_END(forward, NMT_STAGE_ATTENTION);
}

static void cross_attention_backward(nmt_model *m, grad_acts *g, const attention_acts *a,
                                     const nmt_attention_params *p, nmt_attention_params *dp, const float *x,
                                     nmt_dropout drop, float *dx, int accumulate) {
    STAGE_START;
    const nmt_activations *A = m->acts;
    int D = m->config.d_model, Mt = A->tgt.M, Ms = A->src.M;
    nmt_linear_backward(g->dctx, dp->o_weight, dp->o_bias, g->df, a->context, p->o_weight, Mt, D, D, 0);
    const side *q = &A->tgt, *k = &A->src;
    nmt_attention_dims dims = attention_dims(m, q, k, 0, drop);
    nmt_attention_backward(heads_at(q, g->dqkv, D), heads_at(k, g->dkv, 2 * D), heads_at(k, g->dkv + D, 2 * D),
                           g->dweights, heads_at(q, g->dctx, D), a->weights, heads_at(q, a->qkv, D),
                           heads_at(k, a->kv, 2 * D), heads_at(k, a->kv + D, 2 * D), &dims);
    nmt_linear_backward(g->denc, dp->k_weight, dp->k_bias, g->dkv, A->src.out, p->k_weight, Ms, D, 2 * D, 1);
    nmt_linear_backward(dx, dp->q_weight, dp->q_bias, g->dqkv, x, p->q_weight, Mt, D, D, accumulate);
    STAGE_END(backward, NMT_STAGE_ATTENTION);
}

/* ---------------------------------------------------------------------------------------------- */
/* Feed-forward: fc2(relu(fc1(x))), or another activation for an imported model (evaluation only) */

static void ffn_forward(nmt_model *m, float *hidden, const nmt_ffn_params *p, const float *x, int M,
                        float *f_out) {
    STAGE_START;
    int D = m->config.d_model, F = m->config.ffn;
    nmt_linear_forward(hidden, x, p->fc1_weight, p->fc1_bias, M, D, F);
    nmt_activation_forward(m->config.activation, hidden, (long)M * F);
    nmt_linear_forward(f_out, hidden, p->fc2_weight, p->fc2_bias, M, F, D);
    STAGE_END(forward, NMT_STAGE_FFN);
}

static void ffn_backward(nmt_model *m, grad_acts *g, const float *hidden, const nmt_ffn_params *p,
                         nmt_ffn_params *dp, const float *x, int M, float *dx, int accumulate) {
    STAGE_START;
    int D = m->config.d_model, F = m->config.ffn;
    nmt_linear_backward(g->dhidden, dp->fc2_weight, dp->fc2_bias, g->df, hidden, p->fc2_weight, M, F, D, 0);
    nmt_relu_backward(g->dhidden, hidden, (long)M * F);
    nmt_linear_backward(dx, dp->fc1_weight, dp->fc1_bias, g->dhidden, x, p->fc1_weight, M, D, F, accumulate);
    STAGE_END(backward, NMT_STAGE_FFN);
}

/* ---------------------------------------------------------------------------------------------- */
/* Encoder and decoder layers */

static const float *encoder_layer_input(const nmt_activations *A, int l) {
    return l == 0 ? A->src.x0 : A->enc[l - 1].ffn_sub.out;
}

static const float *decoder_layer_input(const nmt_activations *A, int l) {
    return l == 0 ? A->tgt.x0 : A->dec[l - 1].ffn_sub.out;
}

static void encoder_layer_forward(nmt_model *m, int l) {
    nmt_activations *A = m->acts;
    encoder_layer_acts *e = &A->enc[l];
    const nmt_encoder_layer_params *p = &m->p.encoder[l];
    int M = A->src.M, id = encoder_layer_id(l);
    const float *x = encoder_layer_input(A, l);
    const float *in = sublayer_input(m, &e->attn_sub, &p->self_attn_norm, x, M);
    self_attention_forward(m, &e->attn, &p->self_attn, in, &A->src, 0, dropout_at(m, id, SITE_SELF_WEIGHTS),
                           sublayer_f_out(m, &e->attn_sub));
    sublayer_finish(m, &e->attn_sub, &p->self_attn_norm, x, M, dropout_at(m, id, SITE_SELF));
    x = e->attn_sub.out;
    in = sublayer_input(m, &e->ffn_sub, &p->ffn_norm, x, M);
    ffn_forward(m, e->hidden, &p->ffn, in, M, sublayer_f_out(m, &e->ffn_sub));
    sublayer_finish(m, &e->ffn_sub, &p->ffn_norm, x, M, dropout_at(m, id, SITE_FFN));
}

/* ---------------------------------------------------------------------------------------------- */
/* Final gradients: the parameter ranges a hooked backward reports as their gradients become final,
 * named by the parameters' tensors (the gradients have the same layout). A sublayer's range runs from
 * its first tensor to the end of its LayerNorm (params.c lays them out so). nmt_model_grad_order lists
 * the same ranges in the order backward reports them. */

static void report(const nmt_model *m, const nmt_grad_hook *h, const float *first, size_t count) {
    if (!h || !first) return;
    size_t lo = (size_t)(first - m->params);
    h->ready(h->ctx, lo, lo + count);
}

static void sublayer_ready(const nmt_model *m, const nmt_grad_hook *h, const float *first, const nmt_norm_params *n) {
    if (h) report(m, h, first, (size_t)(n->bias + m->config.d_model - first));
}

/* The output projection's gradient is final at the top of backward unless it is tied. */
static void output_ready(const nmt_model *m, const nmt_grad_hook *h) {
    if (m->config.tie_embeddings == NMT_TIE_NONE)
        report(m, h, m->p.output, (size_t)m->config.vocab_size * m->config.d_model);
}

static void stack_ready(const nmt_model *m, const nmt_grad_hook *h, const nmt_norm_params *n) {
    report(m, h, n->weight, 2 * (size_t)m->config.d_model); /* weight then bias; none in post-LN */
}

/* After an embedding's backward: its positions, and its table unless the source side still adds to it. */
static void embed_ready(const nmt_model *m, const nmt_grad_hook *h, const float *table, const float *positions,
                        int last) {
    size_t D = (size_t)m->config.d_model;
    report(m, h, positions, (size_t)m->config.max_positions * D);
    if (last || m->config.tie_embeddings != NMT_TIE_ALL) report(m, h, table, (size_t)m->config.vocab_size * D);
}

void nmt_model_grad_order(const nmt_model *m, const nmt_grad_hook *h) {
    const nmt_params *p = &m->p;
    output_ready(m, h);
    stack_ready(m, h, &p->decoder_norm);
    for (int l = m->config.decoder_layers - 1; l >= 0; l--) {
        sublayer_ready(m, h, p->decoder[l].ffn.fc1_weight, &p->decoder[l].ffn_norm);
        sublayer_ready(m, h, p->decoder[l].cross_attn.q_weight, &p->decoder[l].cross_attn_norm);
        sublayer_ready(m, h, p->decoder[l].self_attn.q_weight, &p->decoder[l].self_attn_norm);
    }
    embed_ready(m, h, p->tgt_embed, p->tgt_positions, 0);
    stack_ready(m, h, &p->encoder_norm);
    for (int l = m->config.encoder_layers - 1; l >= 0; l--) {
        sublayer_ready(m, h, p->encoder[l].ffn.fc1_weight, &p->encoder[l].ffn_norm);
        sublayer_ready(m, h, p->encoder[l].self_attn.q_weight, &p->encoder[l].self_attn_norm);
    }
    embed_ready(m, h, p->src_embed, p->src_positions, 1);
}

/* g->d: the gradient of the layer's output in, of its input out. */
static void encoder_layer_backward(nmt_model *m, int l, const nmt_grad_hook *h) {
    nmt_activations *A = m->acts;
    grad_acts *g = &A->g;
    const encoder_layer_acts *e = &A->enc[l];
    const nmt_encoder_layer_params *p = &m->p.encoder[l];
    nmt_encoder_layer_params *dp = &m->g.encoder[l];
    int M = A->src.M, id = encoder_layer_id(l), accumulate;
    const float *x = encoder_layer_input(A, l), *x1 = e->attn_sub.out;
    sublayer_finish_backward(m, g, &e->ffn_sub, &p->ffn_norm, &dp->ffn_norm, M, dropout_at(m, id, SITE_FFN));
    float *dx = sublayer_f_dinput(m, g, &accumulate);
    ffn_backward(m, g, e->hidden, &p->ffn, &dp->ffn, sublayer_f_input(m, &e->ffn_sub, x1), M, dx, accumulate);
    sublayer_input_backward(m, g, &e->ffn_sub, &p->ffn_norm, &dp->ffn_norm, x1, M);
    sublayer_ready(m, h, p->ffn.fc1_weight, &p->ffn_norm);

    sublayer_finish_backward(m, g, &e->attn_sub, &p->self_attn_norm, &dp->self_attn_norm, M,
                             dropout_at(m, id, SITE_SELF));
    dx = sublayer_f_dinput(m, g, &accumulate);
    self_attention_backward(m, g, &e->attn, &p->self_attn, &dp->self_attn, sublayer_f_input(m, &e->attn_sub, x),
                            &A->src, 0, dropout_at(m, id, SITE_SELF_WEIGHTS), dx, accumulate);
    sublayer_input_backward(m, g, &e->attn_sub, &p->self_attn_norm, &dp->self_attn_norm, x, M);
    sublayer_ready(m, h, p->self_attn.q_weight, &p->self_attn_norm);
}

static void decoder_layer_forward(nmt_model *m, int l) {
    nmt_activations *A = m->acts;
    decoder_layer_acts *d = &A->dec[l];
    const nmt_decoder_layer_params *p = &m->p.decoder[l];
    int M = A->tgt.M, id = decoder_layer_id(m, l);
    const float *x = decoder_layer_input(A, l);
    const float *in = sublayer_input(m, &d->self_sub, &p->self_attn_norm, x, M);
    self_attention_forward(m, &d->self, &p->self_attn, in, &A->tgt, 1, dropout_at(m, id, SITE_SELF_WEIGHTS),
                           sublayer_f_out(m, &d->self_sub));
    sublayer_finish(m, &d->self_sub, &p->self_attn_norm, x, M, dropout_at(m, id, SITE_SELF));
    x = d->self_sub.out;
    in = sublayer_input(m, &d->cross_sub, &p->cross_attn_norm, x, M);
    cross_attention_forward(m, &d->cross, &p->cross_attn, in, dropout_at(m, id, SITE_CROSS_WEIGHTS),
                            sublayer_f_out(m, &d->cross_sub));
    sublayer_finish(m, &d->cross_sub, &p->cross_attn_norm, x, M, dropout_at(m, id, SITE_CROSS));
    x = d->cross_sub.out;
    in = sublayer_input(m, &d->ffn_sub, &p->ffn_norm, x, M);
    ffn_forward(m, d->hidden, &p->ffn, in, M, sublayer_f_out(m, &d->ffn_sub));
    sublayer_finish(m, &d->ffn_sub, &p->ffn_norm, x, M, dropout_at(m, id, SITE_FFN));
}

static void decoder_layer_backward(nmt_model *m, int l, const nmt_grad_hook *h) {
    nmt_activations *A = m->acts;
    grad_acts *g = &A->g;
    const decoder_layer_acts *d = &A->dec[l];
    const nmt_decoder_layer_params *p = &m->p.decoder[l];
    nmt_decoder_layer_params *dp = &m->g.decoder[l];
    int M = A->tgt.M, id = decoder_layer_id(m, l), accumulate;
    const float *x = decoder_layer_input(A, l), *x1 = d->self_sub.out, *x2 = d->cross_sub.out;
    sublayer_finish_backward(m, g, &d->ffn_sub, &p->ffn_norm, &dp->ffn_norm, M, dropout_at(m, id, SITE_FFN));
    float *dx = sublayer_f_dinput(m, g, &accumulate);
    ffn_backward(m, g, d->hidden, &p->ffn, &dp->ffn, sublayer_f_input(m, &d->ffn_sub, x2), M, dx, accumulate);
    sublayer_input_backward(m, g, &d->ffn_sub, &p->ffn_norm, &dp->ffn_norm, x2, M);
    sublayer_ready(m, h, p->ffn.fc1_weight, &p->ffn_norm);

    sublayer_finish_backward(m, g, &d->cross_sub, &p->cross_attn_norm, &dp->cross_attn_norm, M,
                             dropout_at(m, id, SITE_CROSS));
    dx = sublayer_f_dinput(m, g, &accumulate);
    cross_attention_backward(m, g, &d->cross, &p->cross_attn, &dp->cross_attn, sublayer_f_input(m, &d->cross_sub, x1),
                             dropout_at(m, id, SITE_CROSS_WEIGHTS), dx, accumulate);
    sublayer_input_backward(m, g, &d->cross_sub, &p->cross_attn_norm, &dp->cross_attn_norm, x1, M);
    sublayer_ready(m, h, p->cross_attn.q_weight, &p->cross_attn_norm);

    sublayer_finish_backward(m, g, &d->self_sub, &p->self_attn_norm, &dp->self_attn_norm, M,
                             dropout_at(m, id, SITE_SELF));
    dx = sublayer_f_dinput(m, g, &accumulate);
    self_attention_backward(m, g, &d->self, &p->self_attn, &dp->self_attn, sublayer_f_input(m, &d->self_sub, x),
                            &A->tgt, 1, dropout_at(m, id, SITE_SELF_WEIGHTS), dx, accumulate);
    sublayer_input_backward(m, g, &d->self_sub, &p->self_attn_norm, &dp->self_attn_norm, x, M);
    sublayer_ready(m, h, p->self_attn.q_weight, &p->self_attn_norm);
}

/* ---------------------------------------------------------------------------------------------- */
/* Stacks */

/* The final LayerNorm of a pre-LN stack, or nothing: sets s->out. */
static void stack_finish(nmt_model *m, side *s, const float *x, const nmt_norm_params *norm) {
    if (post_ln(m)) {
        s->out = (float *)x;
        return;
    }
    STAGE_START;
    nmt_layernorm_forward(s->final.normed, s->final.mean, s->final.rstd, x, norm->weight, norm->bias, s->M,
                          m->config.d_model, m->config.norm_eps);
    s->out = s->final.normed;
    STAGE_END(forward, NMT_STAGE_NORM);
}

static void stack_finish_backward(nmt_model *m, const side *s, const float *x, const nmt_norm_params *norm,
                                  nmt_norm_params *dnorm) {
    if (post_ln(m)) return;
    STAGE_START;
    grad_acts *g = &m->acts->g;
    nmt_layernorm_backward(g->spare, dnorm->weight, dnorm->bias, g->d, x, s->final.mean, s->final.rstd, norm->weight,
                           s->M, m->config.d_model, 0);
    swap_floats(&g->d, &g->spare);
    STAGE_END(backward, NMT_STAGE_NORM);
}

static void encoder_forward(nmt_model *m) {
    nmt_activations *A = m->acts;
    int L = m->config.encoder_layers;
    embed_forward(m, &A->src, m->p.src_embed, m->p.src_positions, &m->p.src_embed_norm, dropout_at(m, 0, SITE_SRC_WORDS),
                  dropout_at(m, 0, SITE_SRC_EMBED));
    for (int l = 0; l < L; l++) encoder_layer_forward(m, l);
    stack_finish(m, &A->src, A->enc[L - 1].ffn_sub.out, &m->p.encoder_norm);
}

/* Starts from g->denc, the gradient of the encoder output summed over the decoder layers. */
static void encoder_backward(nmt_model *m, const nmt_grad_hook *h) {
    nmt_activations *A = m->acts;
    grad_acts *g = &A->g;
    int L = m->config.encoder_layers;
    swap_floats(&g->d, &g->denc);
    stack_finish_backward(m, &A->src, A->enc[L - 1].ffn_sub.out, &m->p.encoder_norm, &m->g.encoder_norm);
    stack_ready(m, h, &m->p.encoder_norm);
    for (int l = L - 1; l >= 0; l--) encoder_layer_backward(m, l, h);
    embed_backward(m, &A->src, m->g.src_embed, m->g.src_positions, g->d, dropout_at(m, 0, SITE_SRC_WORDS),
                   dropout_at(m, 0, SITE_SRC_EMBED));
    embed_ready(m, h, m->p.src_embed, m->p.src_positions, 1);
}

static void decoder_forward(nmt_model *m) {
    nmt_activations *A = m->acts;
    int L = m->config.decoder_layers;
    embed_forward(m, &A->tgt, m->p.tgt_embed, m->p.tgt_positions, &m->p.tgt_embed_norm, dropout_at(m, 0, SITE_TGT_WORDS),
                  dropout_at(m, 0, SITE_TGT_EMBED));
    for (int l = 0; l < L; l++) decoder_layer_forward(m, l);
    stack_finish(m, &A->tgt, A->dec[L - 1].ffn_sub.out, &m->p.decoder_norm);
}

/* Starts from g->d, the gradient of the decoder output. */
static void decoder_backward(nmt_model *m, const nmt_grad_hook *h) {
    nmt_activations *A = m->acts;
    grad_acts *g = &A->g;
    int L = m->config.decoder_layers;
    memset(g->denc, 0, (size_t)A->src.M * m->config.d_model * sizeof(float));
    stack_finish_backward(m, &A->tgt, A->dec[L - 1].ffn_sub.out, &m->p.decoder_norm, &m->g.decoder_norm);
    stack_ready(m, h, &m->p.decoder_norm);
    for (int l = L - 1; l >= 0; l--) decoder_layer_backward(m, l, h);
    embed_backward(m, &A->tgt, m->g.tgt_embed, m->g.tgt_positions, g->d, dropout_at(m, 0, SITE_TGT_WORDS),
                   dropout_at(m, 0, SITE_TGT_EMBED));
    embed_ready(m, h, m->p.tgt_embed, m->p.tgt_positions, 0);
}

/* ---------------------------------------------------------------------------------------------- */
/* Output projection and loss, in chunks of non-pad target rows. In training the gradient of each
 * chunk's logits goes straight into the decoder-output gradient and the (unscaled) weight gradient,
 * so the logits are never needed again. */

static void output_forward(nmt_model *m, float smoothing, nmt_loss *loss, float *logprobs) {
    STAGE_START;
    nmt_activations *A = m->acts;
    output_acts *o = &A->out;
    int D = m->config.d_model, V = m->config.vocab_size, train = A->mode == NMT_PASS_TRAIN;
    const float *x = A->tgt.out, *W = m->p.output;
    if (train) memset(o->d_out, 0, (size_t)A->tgt.M * D * sizeof(float));
    if (train && o->tokens == 0) memset(o->d_weight, 0, (size_t)V * D * sizeof(float));
    double loss_sum = 0.0, nll_sum = 0.0;
    for (long start = 0; start < o->tokens; start += o->chunk) {
        int n = (int)(o->tokens - start < o->chunk ? o->tokens - start : o->chunk);
        const int32_t *rows = o->rows + start;
        for (int i = 0; i < n; i++) memcpy(o->x + (long)i * D, x + (long)rows[i] * D, (size_t)D * sizeof(float));
        if (m->p.output_bias) /* the product adds itself to the bias */
            for (int i = 0; i < n; i++) memcpy(o->logits + (long)i * V, m->p.output_bias, (size_t)V * sizeof(float));
        nmt_sgemm(0, 1, n, V, D, 1.0f, o->x, D, W, D, m->p.output_bias ? 1.0f : 0.0f, o->logits, V);
        if (A->rdrop_alpha > 0.0f)
            nmt_cross_entropy_pairs(o->logits, o->loss, o->nll, o->targets + start, n / 2, V, smoothing,
                                    A->rdrop_alpha, train);
        else
            nmt_cross_entropy_rows(o->logits, o->loss, o->nll, o->targets + start, n, V, smoothing, train);
        for (int i = 0; i < n; i++) {
            loss_sum += o->loss[i];
            nll_sum += o->nll[i];
            if (logprobs) logprobs[o->places[start + i]] = -o->nll[i];
        }
        if (!train) continue;
        nmt_sgemm(0, 0, n, D, V, 1.0f, o->logits, V, W, D, 0.0f, o->dx, D);
        for (int i = 0; i < n; i++)
            memcpy(o->d_out + (long)rows[i] * D, o->dx + (long)i * D, (size_t)D * sizeof(float));
        nmt_sgemm(1, 0, V, D, n, 1.0f, o->logits, V, o->x, D, start == 0 ? 0.0f : 1.0f, o->d_weight, D);
    }
    if (loss) {
        loss->loss_sum = loss_sum;
        loss->nll_sum = nll_sum;
        loss->tokens = o->tokens;
    }
    STAGE_END(forward, NMT_STAGE_OUTPUT);
}

typedef struct scale_task {
    float *y;
    const float *x;
    float scale;
} scale_task;

static void scale_add_range(void *ctx, long begin, long end) {
    const scale_task *t = ctx;
    for (long i = begin; i < end; i++) t->y[i] += t->scale * t->x[i];
}

static void scale_copy_range(void *ctx, long begin, long end) {
    const scale_task *t = ctx;
    for (long i = begin; i < end; i++) t->y[i] = t->scale * t->x[i];
}

/* ---------------------------------------------------------------------------------------------- */
/* Public entry points */

static int forward(nmt_model *m, const nmt_batch *batch, int mode, const nmt_forward_options *opts, nmt_loss *loss,
                   float *logprobs) {
    if (m->release_marked)
        return nmt_error_set("model forward: the model's float32 matrices were given back to the system for an int8 "
                             "translator");
    if (mode == NMT_PASS_TRAIN && m->config.output_bias)
        return nmt_error_set("model forward: training does not implement model.output_bias (an imported model's)");
    if (mode == NMT_PASS_TRAIN && m->config.activation != NMT_ACTIVATION_RELU)
        return nmt_error_set("model forward: training does not implement model.activation %s (an imported model's)",
                             nmt_activation_names[m->config.activation]);
    if (mode == NMT_PASS_TRAIN && m->config.embedding_norm)
        return nmt_error_set("model forward: training does not implement model.embedding_norm (an imported model's)");
    if (prepare(m, batch, mode, opts) < 0) {
        m->acts->mode = NMT_PASS_EVAL;
        return -1;
    }
    encoder_forward(m);
    if (mode == NMT_PASS_ENCODE) return 0;
    decoder_forward(m);
    output_forward(m, mode == NMT_PASS_LOGPROBS || !opts ? 0.0f : opts->label_smoothing, loss, logprobs);
    return 0;
}

int nmt_model_forward(nmt_model *m, const nmt_batch *batch, const nmt_forward_options *opts, nmt_loss *loss) {
    return forward(m, batch, opts->training ? NMT_PASS_TRAIN : NMT_PASS_EVAL, opts, loss, NULL);
}

int nmt_model_backward(nmt_model *m, float scale) { return nmt_model_backward_hooked(m, scale, NULL); }

int nmt_model_backward_hooked(nmt_model *m, float scale, const nmt_grad_hook *hook) {
    nmt_activations *A = m->acts;
    if (A->mode != NMT_PASS_TRAIN) return nmt_error_set("model backward: the last forward was not in training mode");
    if (!m->grads) return nmt_error_set("model backward: no gradients (nmt_model_zero_grads was never called)");
    int D = m->config.d_model;
    STAGE_START;
    scale_task t = {m->g.output, A->out.d_weight, scale};
    nmt_pool_work((long)m->config.vocab_size * D, 1, scale_add_range, &t);
    t = (scale_task){A->g.d, A->out.d_out, scale};
    nmt_pool_work((long)A->tgt.M * D, 1, scale_copy_range, &t);
    STAGE_END(backward, NMT_STAGE_OUTPUT);
    output_ready(m, hook);
    decoder_backward(m, hook);
    encoder_backward(m, hook);
    return 0;
}

int nmt_model_token_logprobs(nmt_model *m, const nmt_batch *batch, float *out) {
    if (batch->batch >= 1 && batch->tgt_len >= 1)
        memset(out, 0, (size_t)batch->batch * batch->tgt_len * sizeof(float));
    return forward(m, batch, NMT_PASS_LOGPROBS, NULL, NULL, out);
}

int nmt_model_encode(nmt_model *m, const int32_t *src, int B, int S, float *enc_out) {
    nmt_batch batch = {.batch = B, .src_len = S, .src = src};
    if (forward(m, &batch, NMT_PASS_ENCODE, NULL, NULL, NULL) < 0) return -1;
    memcpy(enc_out, m->acts->src.out, (size_t)B * S * m->config.d_model * sizeof(float));
    return 0;
}

double nmt_model_flops(const nmt_model_config *c, const nmt_batch *b) {
    double D = c->d_model, F = c->ffn, V = c->vocab_size, B = b->batch, S = b->src_len, T = b->tgt_len;
    double Ms = B * S, Mt = B * T;
    /* A linear layer: forward 2MKN, backward 2MKN for the input and 2MKN for the weight gradient. */
#define LINEAR(M, K, N) (6.0 * (M) * (K) * (N))
    /* Attention per visible (query, key) pair: forward q.k and p v, backward dP, dV, dQ, dK, each
     * 2 dh per head, so 12 D per pair over all heads. */
    double enc_pairs = 0.0, cross_pairs = 0.0, self_pairs = B * T * (T + 1) / 2.0, tokens = 0.0;
    for (int i = 0; i < b->batch; i++) {
        int len = row_length(b->src + (long)i * b->src_len, b->src_len);
        enc_pairs += S * len;
        cross_pairs += T * len;
    }
    if (b->tgt_out)
        for (long i = 0; i < (long)Mt; i++) tokens += b->tgt_out[i] != NMT_PAD;
    double encoder_layer = LINEAR(Ms, D, 3 * D) + LINEAR(Ms, D, D) + LINEAR(Ms, D, F) + LINEAR(Ms, F, D) +
                           12.0 * D * enc_pairs;
    double decoder_layer = LINEAR(Mt, D, 3 * D) + LINEAR(Mt, D, D) + 12.0 * D * self_pairs + LINEAR(Mt, D, D) +
                           LINEAR(Ms, D, 2 * D) + LINEAR(Mt, D, D) + 12.0 * D * cross_pairs + LINEAR(Mt, D, F) +
                           LINEAR(Mt, F, D);
#undef LINEAR
    return c->encoder_layers * encoder_layer + c->decoder_layers * decoder_layer + 6.0 * tokens * D * V;
}

