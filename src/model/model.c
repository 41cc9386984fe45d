/* model: the Transformer's parameters in one buffer, its tensor table, and the forward and
 * backward pass of every layer.
 *
 * Parameters. The layout is made by one walk over the architecture (layout_walk) that every user
 * shares: counting parameters, naming tensors for the model file, and pointing nmt_params at the
 * parameter and gradient buffers. Tensors are packed without gaps in the order of the table; within
 * an attention block q, k, v weights come first and consecutively, then q, k, v biases, so that the
 * fused projections are single matrices.
 *
 * Activations. One block, carved by plan() for the batch's shape (measured first, then cut), holds
 * everything a forward keeps for backward plus backward's scratch; it grows only when a batch
 * needs more. Each layer's forward sits next to its backward. A sublayer is wrapped by the
 * residual/LayerNorm functions (sublayer_*), so post-LN and pre-LN share every layer's code.
 *
 * Output. Logits exist for one chunk of non-pad target rows at a time: projection, fused
 * log-softmax + label-smoothed loss, and in training at once the gradients of the decoder output
 * and of the output weight (held unscaled until backward knows the scale).
 */
#include "model/model.h"

#include "compute/gemm.h"
#include "compute/pool.h"
#include "compute/kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each layer function adds its wall time to one stage of m->timing: STAGE_START at its top,
 * STAGE_END(direction, stage) at its bottom. */
#define STAGE_START double stage_start_ = nmt_now()
#define STAGE_END(direction, stage) (m->timing.direction[stage] += nmt_now() - stage_start_)

/* The residual connection and LayerNorm around one sublayer f. Post-LN: out = LN(x + dropout(f(x)));
 * pre-LN: out = x + dropout(f(LN(x))). M rows: source or target positions of the batch. */
typedef struct sublayer_acts {
    float *sum;         /* [M, D] post-LN: x + dropout(f(x)), the LayerNorm's input; pre-LN: unused */
    float *normed;      /* [M, D] post-LN: LN(sum), the output; pre-LN: LN(x), the input of f */
    float *out;         /* [M, D] the sublayer's output: post-LN the same as normed */
    float *mean, *rstd; /* [M] LayerNorm statistics */
} sublayer_acts;

typedef struct attention_acts {
    float *qkv;     /* self: [M, 3D] q|k|v projections (q, k turned by rope); cross: [Mt, D] q only */
    float *kv;      /* cross: [Ms, 2D] k|v projections of the encoder output; self: unused */
    float *weights; /* [B, H, Tq, Tk] softmax probabilities before dropout */
    float *context; /* [M, D] the heads' outputs side by side: the input of o_proj */
} attention_acts;

typedef struct encoder_layer_acts {
    attention_acts attn;
    sublayer_acts attn_sub;
    float *hidden; /* [Ms, F] relu(fc1(x)) */
    sublayer_acts ffn_sub;
} encoder_layer_acts;

typedef struct decoder_layer_acts {
    attention_acts self, cross;
    sublayer_acts self_sub, cross_sub;
    float *hidden; /* [Mt, F] */
    sublayer_acts ffn_sub;
} decoder_layer_acts;

/* One side of the batch: the source (encoder) or the decoder input. */
typedef struct side {
    int M;                /* B * len rows */
    int len;              /* S or T */
    int32_t *tokens;      /* [M] a copy of the batch's ids */
    int32_t *pos;         /* [M] position of each row in its sentence (row % len) */
    float *x0;            /* [M, D] embeddings * sqrt(D) + positions, after dropout */
    sublayer_acts final;  /* pre-LN: the stack's final LayerNorm (normed = its output) */
    float *out;           /* [M, D] the stack's output */
} side;

/* Gradient buffers of backward; the stream of gradients with respect to the residual path moves
 * between d and spare. */
typedef struct grad_acts {
    float *d, *spare;  /* [max(Ms, Mt), D] */
    float *df;         /* [max(Ms, Mt), D] gradient of a sublayer's output f, before dropout */
    float *dfin;       /* [max(Ms, Mt), D] pre-LN: gradient of the input of f */
    float *dctx;       /* [max(Ms, Mt), D] gradient of the attention context */
    float *dqkv;       /* [max(Ms, Mt), 3D] */
    float *dkv;        /* [Ms, 2D] cross-attention k|v gradient */
    float *denc;       /* [Ms, D] gradient of the encoder output, summed over decoder layers */
    float *dhidden;    /* [max(Ms, Mt), F] */
    float *dweights;   /* [B, H, max(S,T), max(S,T)] attention backward scratch */
} grad_acts;

/* Output layer: non-pad target rows in chunks of `chunk` rows; logits exist for one chunk at a time. */
typedef struct output_acts {
    long tokens;             /* non-pad target rows */
    int32_t *rows;           /* [tokens] their indices in [0, Mt) */
    int32_t *targets;        /* [tokens] their target ids */
    int chunk;               /* rows per chunk */
    float *x;                /* [chunk, D] gathered decoder outputs */
    float *logits;           /* [chunk, V] logits, then their gradient */
    float *dx;               /* [chunk, D] */
    float *loss, *nll;       /* [chunk] per row */
    float *d_out;            /* [Mt, D] d loss_sum / d decoder output, unscaled (training) */
    float *d_weight;         /* [V, D] d loss_sum / d output.weight, unscaled, until backward adds it */
} output_acts;

enum { MODE_TRAIN, MODE_EVAL, MODE_LOGPROBS, MODE_ENCODE };

struct nmt_activations {
    void *param_block;        /* the allocations behind m->params and m->grads (aligned inside) */
    void *grad_block;
    void *block;              /* every per-batch buffer below, carved from one allocation */
    float *block_base;        /* its 64-byte aligned start */
    size_t block_capacity;    /* bytes usable from block_base */
    int B, S, T, H, dh;       /* the last forward's batch and head shape */
    int mode;                 /* of the last forward */
    nmt_dropout drop;         /* residual dropout of the last forward (rate 0 in evaluation) */
    float attention_dropout;  /* likewise for attention weights */
    int32_t *src_lengths;     /* [B] source row b's keys are [0, src_lengths[b]) */
    float *positions;         /* sinusoidal: [max(S,T), D]; rope: [max(S,T), dh/2, 2]; else unused */
    side src, tgt;
    encoder_layer_acts *enc;  /* [encoder_layers] */
    decoder_layer_acts *dec;  /* [decoder_layers] */
    output_acts out;
    grad_acts g;
};

nmt_model_config nmt_model_config_default(void) {
    nmt_model_config c = {
        .vocab_size = 0,
        .d_model = 256,
        .heads = 4,
        .ffn = 1024,
        .encoder_layers = 3,
        .decoder_layers = 3,
        .dropout = 0.1f,
        .attention_dropout = 0.0f,
        .norm_position = NMT_NORM_POST,
        .positions = NMT_POSITIONS_SINUSOIDAL,
        .max_positions = 1024,
        .norm_eps = 1e-5f,
        .tie_embeddings = NMT_TIE_ALL,
    };
    return c;
}

enum { MAX_DIM = 1 << 16, MAX_VOCAB = 1 << 24, MAX_LAYERS = 256 };

int nmt_model_config_check(const nmt_model_config *c) {
    if (c->vocab_size != 0 && (c->vocab_size <= NMT_EOS || c->vocab_size > MAX_VOCAB))
        return nmt_error_set("model.vocab_size must be between %d and %d (the ids 0-3 are pad, unk, bos, eos), not %d",
                             NMT_EOS + 1, MAX_VOCAB, c->vocab_size);
    if (c->d_model < 2 || c->d_model > MAX_DIM || c->d_model % 2 != 0)
        return nmt_error_set("model.d_model must be an even number between 2 and %d, not %d", MAX_DIM, c->d_model);
    if (c->heads < 1 || c->d_model % c->heads != 0)
        return nmt_error_set("model.heads (%d) must be at least 1 and divide model.d_model (%d)", c->heads,
                             c->d_model);
    if (c->positions == NMT_POSITIONS_ROPE && (c->d_model / c->heads) % 2 != 0)
        return nmt_error_set("model.positions rope needs an even head size, but d_model/heads = %d",
                             c->d_model / c->heads);
    if (c->ffn < 1 || c->ffn > MAX_DIM) return nmt_error_set("model.ffn must be between 1 and %d, not %d", MAX_DIM, c->ffn);
    if (c->encoder_layers < 1 || c->encoder_layers > MAX_LAYERS)
        return nmt_error_set("model.encoder_layers must be between 1 and %d, not %d", MAX_LAYERS, c->encoder_layers);
    if (c->decoder_layers < 1 || c->decoder_layers > MAX_LAYERS)
        return nmt_error_set("model.decoder_layers must be between 1 and %d, not %d", MAX_LAYERS, c->decoder_layers);
    if (!(c->dropout >= 0.0f && c->dropout < 1.0f))
        return nmt_error_set("model.dropout must be in [0, 1), not %g", (double)c->dropout);
    if (!(c->attention_dropout >= 0.0f && c->attention_dropout < 1.0f))
        return nmt_error_set("model.attention_dropout must be in [0, 1), not %g", (double)c->attention_dropout);
    if (c->norm_position != NMT_NORM_POST && c->norm_position != NMT_NORM_PRE)
        return nmt_error_set("model.norm_position must be post or pre");
    if (c->positions != NMT_POSITIONS_SINUSOIDAL && c->positions != NMT_POSITIONS_LEARNED &&
        c->positions != NMT_POSITIONS_ROPE)
        return nmt_error_set("model.positions must be sinusoidal, learned or rope");
    if (c->max_positions < 1 || c->max_positions > MAX_DIM)
        return nmt_error_set("model.max_positions must be between 1 and %d, not %d", MAX_DIM, c->max_positions);
    if (!(c->norm_eps > 0.0f && c->norm_eps < 1.0f))
        return nmt_error_set("model.norm_eps must be in (0, 1), not %g", (double)c->norm_eps);
    if (c->tie_embeddings != NMT_TIE_NONE && c->tie_embeddings != NMT_TIE_DECODER &&
        c->tie_embeddings != NMT_TIE_ALL)
        return nmt_error_set("model.tie_embeddings must be none, decoder or all");
    return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* Layout */

typedef struct layout {
    float *base;             /* parameter or gradient buffer; NULL when only counting */
    nmt_tensor_info *table;  /* receives names and shapes; NULL when not wanted */
    size_t offset;           /* floats so far */
    int count;               /* tensors so far */
} layout;

/* Claims the next rows x cols floats (cols 0: a vector of rows) under a printf-formatted name. */
NMT_PRINTF(4, 5) static float *layout_add(layout *L, int rows, int cols, const char *fmt, ...) {
    size_t n = (size_t)rows * (size_t)(cols ? cols : 1);
    if (L->table) {
        nmt_tensor_info *t = &L->table[L->count];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(t->name, sizeof t->name, fmt, ap);
        va_end(ap);
        t->rank = cols ? 2 : 1;
        t->shape[0] = rows;
        t->shape[1] = cols;
        t->offset = L->offset;
        t->count = n;
    }
    float *p = L->base ? L->base + L->offset : NULL;
    L->offset += n;
    L->count++;
    return p;
}

static void layout_attention(layout *L, nmt_attention_params *a, int D, const char *prefix) {
    a->q_weight = layout_add(L, D, D, "%s.q_proj.weight", prefix);
    a->k_weight = layout_add(L, D, D, "%s.k_proj.weight", prefix);
    a->v_weight = layout_add(L, D, D, "%s.v_proj.weight", prefix);
    a->q_bias = layout_add(L, D, 0, "%s.q_proj.bias", prefix);
    a->k_bias = layout_add(L, D, 0, "%s.k_proj.bias", prefix);
    a->v_bias = layout_add(L, D, 0, "%s.v_proj.bias", prefix);
    a->o_weight = layout_add(L, D, D, "%s.o_proj.weight", prefix);
    a->o_bias = layout_add(L, D, 0, "%s.o_proj.bias", prefix);
}

static void layout_norm(layout *L, nmt_norm_params *n, int D, const char *prefix) {
    n->weight = layout_add(L, D, 0, "%s.weight", prefix);
    n->bias = layout_add(L, D, 0, "%s.bias", prefix);
}

static void layout_ffn(layout *L, nmt_ffn_params *f, int D, int F, const char *prefix) {
    f->fc1_weight = layout_add(L, F, D, "%s.fc1.weight", prefix);
    f->fc1_bias = layout_add(L, F, 0, "%s.fc1.bias", prefix);
    f->fc2_weight = layout_add(L, D, F, "%s.fc2.weight", prefix);
    f->fc2_bias = layout_add(L, D, 0, "%s.fc2.bias", prefix);
}

/* Walks the architecture in file order. p may be NULL (counting only); its layer arrays must be
 * allocated by the caller otherwise. */
static void layout_walk(layout *L, const nmt_model_config *c, nmt_params *p) {
    nmt_params scratch_params;
    nmt_encoder_layer_params enc;
    nmt_decoder_layer_params dec;
    if (!p) {
        memset(&scratch_params, 0, sizeof scratch_params);
        p = &scratch_params;
    }
    int V = c->vocab_size, D = c->d_model, F = c->ffn;
    char prefix[64];
    if (c->tie_embeddings == NMT_TIE_ALL) {
        p->src_embed = p->tgt_embed = p->output = layout_add(L, V, D, "embed.weight");
    } else {
        p->src_embed = layout_add(L, V, D, "src_embed.weight");
        p->tgt_embed = layout_add(L, V, D, "tgt_embed.weight");
        p->output = c->tie_embeddings == NMT_TIE_DECODER ? p->tgt_embed : layout_add(L, V, D, "output.weight");
    }
    p->src_positions = p->tgt_positions = NULL;
    if (c->positions == NMT_POSITIONS_LEARNED) {
        p->src_positions = layout_add(L, c->max_positions, D, "encoder.embed_positions.weight");
        p->tgt_positions = layout_add(L, c->max_positions, D, "decoder.embed_positions.weight");
    }
    for (int i = 0; i < c->encoder_layers; i++) {
        nmt_encoder_layer_params *e = p->encoder ? &p->encoder[i] : &enc;
        snprintf(prefix, sizeof prefix, "encoder.layers.%d.self_attn", i);
        layout_attention(L, &e->self_attn, D, prefix);
        snprintf(prefix, sizeof prefix, "encoder.layers.%d.self_attn_norm", i);
        layout_norm(L, &e->self_attn_norm, D, prefix);
        snprintf(prefix, sizeof prefix, "encoder.layers.%d.ffn", i);
        layout_ffn(L, &e->ffn, D, F, prefix);
        snprintf(prefix, sizeof prefix, "encoder.layers.%d.ffn_norm", i);
        layout_norm(L, &e->ffn_norm, D, prefix);
    }
    for (int i = 0; i < c->decoder_layers; i++) {
        nmt_decoder_layer_params *d = p->decoder ? &p->decoder[i] : &dec;
        snprintf(prefix, sizeof prefix, "decoder.layers.%d.self_attn", i);
        layout_attention(L, &d->self_attn, D, prefix);
        snprintf(prefix, sizeof prefix, "decoder.layers.%d.self_attn_norm", i);
        layout_norm(L, &d->self_attn_norm, D, prefix);
        snprintf(prefix, sizeof prefix, "decoder.layers.%d.cross_attn", i);
        layout_attention(L, &d->cross_attn, D, prefix);
        snprintf(prefix, sizeof prefix, "decoder.layers.%d.cross_attn_norm", i);
        layout_norm(L, &d->cross_attn_norm, D, prefix);
        snprintf(prefix, sizeof prefix, "decoder.layers.%d.ffn", i);
        layout_ffn(L, &d->ffn, D, F, prefix);
        snprintf(prefix, sizeof prefix, "decoder.layers.%d.ffn_norm", i);
        layout_norm(L, &d->ffn_norm, D, prefix);
    }
    memset(&p->encoder_norm, 0, sizeof p->encoder_norm);
    memset(&p->decoder_norm, 0, sizeof p->decoder_norm);
    if (c->norm_position == NMT_NORM_PRE) {
        layout_norm(L, &p->encoder_norm, D, "encoder.norm");
        layout_norm(L, &p->decoder_norm, D, "decoder.norm");
    }
}

size_t nmt_model_param_count(const nmt_model_config *config) {
    layout L = {0};
    layout_walk(&L, config, NULL);
    return L.offset;
}

/* A 64-byte aligned block of n floats; *block receives what to free. */
static float *aligned_floats(size_t n, void **block) {
    size_t bytes;
    if (nmt_size_mul(n, sizeof(float), &bytes, "model parameters") < 0) return NULL;
    unsigned char *raw = nmt_malloc(bytes + 64);
    *block = raw;
    if (!raw) return NULL;
    return (float *)(raw + (64 - (uintptr_t)raw % 64));
}

int nmt_model_create(nmt_model *m, const nmt_model_config *config) {
    memset(m, 0, sizeof *m);
    if (nmt_model_config_check(config) < 0) return -1;
    if (config->vocab_size == 0) return nmt_error_set("model.vocab_size is not set (no vocabulary yet)");
    m->config = *config;
    layout count = {0};
    layout_walk(&count, config, NULL);
    m->num_params = count.offset;
    m->num_tensors = count.count;

    m->acts = nmt_calloc(1, sizeof *m->acts);
    m->tensors = nmt_calloc((size_t)m->num_tensors, sizeof *m->tensors);
    m->p.encoder = nmt_calloc((size_t)config->encoder_layers, sizeof *m->p.encoder);
    m->p.decoder = nmt_calloc((size_t)config->decoder_layers, sizeof *m->p.decoder);
    m->g.encoder = nmt_calloc((size_t)config->encoder_layers, sizeof *m->g.encoder);
    m->g.decoder = nmt_calloc((size_t)config->decoder_layers, sizeof *m->g.decoder);
    if (!m->acts || !m->tensors || !m->p.encoder || !m->p.decoder || !m->g.encoder || !m->g.decoder) goto fail;
    m->acts->enc = nmt_calloc((size_t)config->encoder_layers, sizeof *m->acts->enc);
    m->acts->dec = nmt_calloc((size_t)config->decoder_layers, sizeof *m->acts->dec);
    if (!m->acts->enc || !m->acts->dec) goto fail;
    m->acts->mode = MODE_EVAL;
    m->params = aligned_floats(m->num_params, &m->acts->param_block);
    if (!m->params) goto fail;
    m->grads = aligned_floats(m->num_params, &m->acts->grad_block);
    if (!m->grads) goto fail;
    memset(m->params, 0, m->num_params * sizeof(float));
    memset(m->grads, 0, m->num_params * sizeof(float));

    layout params = {.base = m->params, .table = m->tensors};
    layout_walk(&params, config, &m->p);
    layout grads = {.base = m->grads};
    layout_walk(&grads, config, &m->g);
    return 0;
fail:
    nmt_error_prefix("creating the model");
    nmt_model_free(m);
    return -1;
}

void nmt_model_free(nmt_model *m) {
    if (m->acts) {
        free(m->acts->param_block);
        free(m->acts->grad_block);
        free(m->acts->block);
        free(m->acts->enc);
        free(m->acts->dec);
        free(m->acts);
    }
    free(m->tensors);
    free(m->p.encoder);
    free(m->p.decoder);
    free(m->g.encoder);
    free(m->g.decoder);
    memset(m, 0, sizeof *m);
}

void nmt_model_zero_grads(nmt_model *m) { memset(m->grads, 0, m->num_params * sizeof(float)); }

/* ---------------------------------------------------------------------------------------------- */
/* Initialisation */

/* splitmix64: a small, well-mixed generator; the state is the seed. */
static uint64_t rng_next(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1): 53 random bits, never 0. */
static double rng_uniform(uint64_t *state) { return ((double)(rng_next(state) >> 11) + 0.5) / 9007199254740992.0; }

static double rng_normal(uint64_t *state) {
    double u1 = rng_uniform(state), u2 = rng_uniform(state);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* A tensor is a norm gain if its name ends in "norm.weight", an embedding or position table if its
 * name contains "embed" or is the output projection, a bias if rank 1; else a Linear weight. */
static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

void nmt_model_init_weights(nmt_model *m, uint64_t seed) {
    uint64_t state = seed;
    double embed_std = 1.0 / sqrt((double)m->config.d_model);
    for (int i = 0; i < m->num_tensors; i++) {
        const nmt_tensor_info *t = &m->tensors[i];
        float *x = m->params + t->offset;
        if (t->rank == 1) {
            float value = ends_with(t->name, "norm.weight") ? 1.0f : 0.0f;
            for (size_t j = 0; j < t->count; j++) x[j] = value;
        } else if (strstr(t->name, "embed") || strcmp(t->name, "output.weight") == 0) {
            for (size_t j = 0; j < t->count; j++) x[j] = (float)(embed_std * rng_normal(&state));
        } else {
            /* Xavier (Glorot) uniform: U(-a, a) with a = sqrt(6 / (fan_in + fan_out)). */
            double a = sqrt(6.0 / (t->shape[0] + t->shape[1]));
            for (size_t j = 0; j < t->count; j++) x[j] = (float)(a * (2.0 * rng_uniform(&state) - 1.0));
        }
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Per-batch buffers: planned by one walk that first measures (base NULL) and then carves. */

typedef struct carver {
    unsigned char *base; /* NULL while measuring */
    size_t used;         /* bytes */
} carver;

static void *carve(carver *c, size_t bytes) {
    void *p = c->base ? c->base + c->used : NULL;
    c->used += (bytes + 63) & ~(size_t)63;
    return p;
}

static float *carve_floats(carver *c, size_t n) { return carve(c, n * sizeof(float)); }
static int32_t *carve_ints(carver *c, size_t n) { return carve(c, n * sizeof(int32_t)); }

static int post_ln(const nmt_model *m) { return m->config.norm_position == NMT_NORM_POST; }

static void plan_sublayer(carver *c, const nmt_model *m, sublayer_acts *s, size_t M) {
    size_t D = (size_t)m->config.d_model;
    s->sum = post_ln(m) ? carve_floats(c, M * D) : NULL;
    s->normed = carve_floats(c, M * D);
    s->out = post_ln(m) ? s->normed : carve_floats(c, M * D);
    s->mean = carve_floats(c, M);
    s->rstd = carve_floats(c, M);
}

static void plan_side(carver *c, const nmt_model *m, side *s, int B, int len) {
    size_t M = (size_t)B * len, D = (size_t)m->config.d_model;
    s->M = (int)M;
    s->len = len;
    s->tokens = carve_ints(c, M);
    s->pos = carve_ints(c, M);
    s->x0 = carve_floats(c, M * D);
    s->final.normed = carve_floats(c, M * D);
    s->final.mean = carve_floats(c, M);
    s->final.rstd = carve_floats(c, M);
}

static void plan_attention(carver *c, attention_acts *a, size_t B, size_t H, size_t Tq, size_t Tk, size_t D,
                           int cross) {
    a->qkv = carve_floats(c, B * Tq * (cross ? D : 3 * D));
    a->kv = cross ? carve_floats(c, B * Tk * 2 * D) : NULL;
    a->weights = carve_floats(c, B * H * Tq * Tk);
    a->context = carve_floats(c, B * Tq * D);
}

/* T = 0 plans the encoder only. */
static void plan(carver *c, nmt_model *m, int B, int S, int T, int mode) {
    nmt_activations *A = m->acts;
    const nmt_model_config *cf = &m->config;
    size_t D = (size_t)cf->d_model, F = (size_t)cf->ffn, V = (size_t)cf->vocab_size, H = (size_t)cf->heads;
    size_t Ms = (size_t)B * S, Mt = (size_t)B * T, Mmax = Ms > Mt ? Ms : Mt, L = (size_t)(S > T ? S : T);
    A->src_lengths = carve_ints(c, (size_t)B);
    A->positions = carve_floats(c, L * D);
    plan_side(c, m, &A->src, B, S);
    for (int l = 0; l < cf->encoder_layers; l++) {
        encoder_layer_acts *e = &A->enc[l];
        plan_attention(c, &e->attn, (size_t)B, H, (size_t)S, (size_t)S, D, 0);
        plan_sublayer(c, m, &e->attn_sub, Ms);
        e->hidden = carve_floats(c, Ms * F);
        plan_sublayer(c, m, &e->ffn_sub, Ms);
    }
    if (mode == MODE_ENCODE) return;
    plan_side(c, m, &A->tgt, B, T);
    for (int l = 0; l < cf->decoder_layers; l++) {
        decoder_layer_acts *d = &A->dec[l];
        plan_attention(c, &d->self, (size_t)B, H, (size_t)T, (size_t)T, D, 0);
        plan_sublayer(c, m, &d->self_sub, Mt);
        plan_attention(c, &d->cross, (size_t)B, H, (size_t)T, (size_t)S, D, 1);
        plan_sublayer(c, m, &d->cross_sub, Mt);
        d->hidden = carve_floats(c, Mt * F);
        plan_sublayer(c, m, &d->ffn_sub, Mt);
    }
    output_acts *o = &A->out;
    o->rows = carve_ints(c, Mt);
    o->targets = carve_ints(c, Mt);
    /* Chunks of about 4M logits (16 MB): big enough for efficient products, small enough for cache-
     * friendly loss passes and a bounded footprint at any vocabulary size. */
    size_t chunk = ((size_t)1 << 22) / V;
    o->chunk = (int)(chunk < 32 ? 32 : chunk > 2048 ? 2048 : chunk);
    o->x = carve_floats(c, (size_t)o->chunk * D);
    o->logits = carve_floats(c, (size_t)o->chunk * V);
    o->dx = carve_floats(c, (size_t)o->chunk * D);
    o->loss = carve_floats(c, (size_t)o->chunk);
    o->nll = carve_floats(c, (size_t)o->chunk);
    if (mode != MODE_TRAIN) return;
    o->d_out = carve_floats(c, Mt * D);
    o->d_weight = carve_floats(c, V * D);
    grad_acts *g = &A->g;
    g->d = carve_floats(c, Mmax * D);
    g->spare = carve_floats(c, Mmax * D);
    g->denc = carve_floats(c, Mmax * D); /* Mmax, not Ms: it trades places with d in backward */
    g->df = carve_floats(c, Mmax * D);
    g->dfin = carve_floats(c, Mmax * D);
    g->dctx = carve_floats(c, Mmax * D);
    g->dqkv = carve_floats(c, Mmax * 3 * D);
    g->dkv = carve_floats(c, Ms * 2 * D);
    g->dhidden = carve_floats(c, Mmax * F);
    g->dweights = carve_floats(c, (size_t)B * H * L * L);
}

/* Makes every per-batch buffer for this shape, growing the block only when it is too small. */
static int plan_buffers(nmt_model *m, int B, int S, int T, int mode) {
    nmt_activations *A = m->acts;
    carver measure = {0};
    plan(&measure, m, B, S, T, mode);
    if (measure.used > A->block_capacity) {
        free(A->block);
        A->block = NULL;
        A->block_capacity = 0;
        size_t capacity = measure.used + measure.used / 4; /* headroom for slightly larger batches */
        float *base = aligned_floats(capacity / sizeof(float) + 1, &A->block);
        if (!base) return nmt_error_prefix("activations for a batch of %d x (%d + %d) tokens", B, S, T);
        A->block_capacity = capacity;
        A->block_base = base;
    }
    carver c = {(unsigned char *)A->block_base, 0};
    plan(&c, m, B, S, T, mode);
    return 0;
}

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
    if (mode != MODE_ENCODE && (b->tgt_len < 1 || !b->tgt_in || (!b->tgt_out)))
        return nmt_error_set("batch: needs decoder inputs and targets of length >= 1");
    if ((long)b->batch * b->src_len > (1L << 26) || (long)b->batch * b->tgt_len > (1L << 26))
        return nmt_error_set("batch: %d x (%d + %d) tokens is too large", b->batch, b->src_len, b->tgt_len);
    if (c->positions == NMT_POSITIONS_LEARNED) {
        int longest = mode == MODE_ENCODE || b->src_len > b->tgt_len ? b->src_len : b->tgt_len;
        if (longest > c->max_positions)
            return nmt_error_set("batch: a sentence of %d positions exceeds the learned position table "
                                 "(model.max_positions = %d)",
                                 longest, c->max_positions);
    }
    if (check_ids(b->src, b->batch, b->src_len, c->vocab_size, "source") < 0) return -1;
    if (mode == MODE_ENCODE) return 0;
    if (check_ids(b->tgt_in, b->batch, b->tgt_len, c->vocab_size, "decoder input") < 0) return -1;
    return check_ids(b->tgt_out, b->batch, b->tgt_len, c->vocab_size, "target");
}

static void prepare_side(side *s, const int32_t *ids) {
    memcpy(s->tokens, ids, (size_t)s->M * sizeof(int32_t));
    for (int r = 0; r < s->M; r++) s->pos[r] = r % s->len;
}

static int prepare(nmt_model *m, const nmt_batch *b, int mode, const nmt_forward_options *opts) {
    if (check_batch(m, b, mode) < 0) return -1;
    int T = mode == MODE_ENCODE ? 0 : b->tgt_len;
    if (plan_buffers(m, b->batch, b->src_len, T, mode) < 0) return -1;
    nmt_activations *A = m->acts;
    const nmt_model_config *c = &m->config;
    A->B = b->batch;
    A->S = b->src_len;
    A->T = T;
    A->H = c->heads;
    A->dh = c->d_model / c->heads;
    A->mode = mode;
    int dropout_on = mode == MODE_TRAIN && opts && opts->training;
    A->drop = (nmt_dropout){dropout_on ? c->dropout : 0.0f, opts ? opts->dropout_seed : 0, 0};
    A->attention_dropout = dropout_on ? c->attention_dropout : 0.0f;
    for (int i = 0; i < b->batch; i++) A->src_lengths[i] = row_length(b->src + (long)i * b->src_len, b->src_len);
    int longest = b->src_len > T ? b->src_len : T;
    if (c->positions == NMT_POSITIONS_SINUSOIDAL) nmt_sinusoidal_positions(A->positions, longest, c->d_model);
    if (c->positions == NMT_POSITIONS_ROPE) nmt_rope_table(A->positions, longest, A->dh);
    prepare_side(&A->src, b->src);
    if (mode == MODE_ENCODE) return 0;
    prepare_side(&A->tgt, b->tgt_in);
    output_acts *o = &A->out;
    o->tokens = 0;
    for (int r = 0; r < A->tgt.M; r++) {
        if (b->tgt_out[r] == NMT_PAD) continue;
        o->rows[o->tokens] = r;
        o->targets[o->tokens++] = b->tgt_out[r];
    }
    return 0;
}

/* Dropout sites: a stream per (layer, site); layer 0 is the embeddings, then encoder layers, then
 * decoder layers. */
enum { SITE_SRC_EMBED, SITE_TGT_EMBED, SITE_SELF, SITE_SELF_WEIGHTS, SITE_CROSS, SITE_CROSS_WEIGHTS, SITE_FFN,
       SITES };

static nmt_dropout dropout_at(const nmt_model *m, int layer, int site) {
    const nmt_activations *A = m->acts;
    int weights = site == SITE_SELF_WEIGHTS || site == SITE_CROSS_WEIGHTS;
    nmt_dropout d = {weights ? A->attention_dropout : A->drop.rate, A->drop.seed, (uint32_t)(layer * SITES + site)};
    return d;
}

static int encoder_layer_id(int l) { return 1 + l; }
static int decoder_layer_id(const nmt_model *m, int l) { return 1 + m->config.encoder_layers + l; }

/* ---------------------------------------------------------------------------------------------- */
/* Embeddings: x = table[token] * sqrt(D) + position, then dropout. */

typedef struct embed_task {
    float *x;                /* [M, D] forward output; backward: its gradient */
    float *d_table;          /* [V, D] */
    float *d_positions;      /* [max_positions, D] learned positions, or NULL */
    const float *table;      /* [V, D] */
    const float *positions;  /* [*, D] added per position, or NULL (rope) */
    const int32_t *tokens, *pos;
    int M, D;
    float scale;
} embed_task;

static void embed_rows(void *ctx, long begin, long end) {
    const embed_task *t = ctx;
    int D = t->D;
    for (long r = begin; r < end; r++) {
        const float *e = t->table + (long)t->tokens[r] * D;
        const float *pe = t->positions ? t->positions + (long)t->pos[r] * D : NULL;
        float *x = t->x + r * D;
        for (int d = 0; d < D; d++) x[d] = e[d] * t->scale + (pe ? pe[d] : 0.0f);
    }
}

/* Each thread owns whole columns, so the scatter-add needs no locks and sums in row order. */
static void embed_backward_columns(void *ctx, long begin, long end) {
    const embed_task *t = ctx;
    int D = t->D;
    for (int r = 0; r < t->M; r++) {
        const float *g = t->x + (long)r * D;
        float *dt = t->d_table + (long)t->tokens[r] * D;
        for (long d = begin; d < end; d++) dt[d] += t->scale * g[d];
        if (t->d_positions) {
            float *dp = t->d_positions + (long)t->pos[r] * D;
            for (long d = begin; d < end; d++) dp[d] += g[d];
        }
    }
}

static embed_task embed_task_of(const nmt_model *m, const side *s, const float *table, const float *learned) {
    const float *positions = learned;
    if (m->config.positions == NMT_POSITIONS_SINUSOIDAL) positions = m->acts->positions;
    embed_task t = {.x = s->x0, .table = table, .positions = positions, .tokens = s->tokens, .pos = s->pos,
                    .M = s->M, .D = m->config.d_model, .scale = sqrtf((float)m->config.d_model)};
    return t;
}

static void embed_forward(nmt_model *m, side *s, const float *table, const float *learned, nmt_dropout drop) {
    STAGE_START;
    embed_task t = embed_task_of(m, s, table, learned);
    nmt_pool_work(s->M, t.D, embed_rows, &t);
    nmt_dropout_add(s->x0, NULL, s->x0, drop, (long)s->M * t.D);
    STAGE_END(forward, NMT_STAGE_EMBED);
}

/* dx [M, D]: the gradient of the embeddings' output (clobbered). */
static void embed_backward(nmt_model *m, side *s, float *d_table, float *d_learned, float *dx, nmt_dropout drop) {
    STAGE_START;
    embed_task t = embed_task_of(m, s, NULL, NULL);
    t.x = dx;
    t.d_table = d_table;
    t.d_positions = d_learned;
    nmt_dropout_backward(dx, dx, drop, (long)s->M * t.D, 0);
    nmt_pool_work(t.D, s->M, embed_backward_columns, &t);
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

static nmt_heads heads_at(float *data, int len, long row_stride) {
    nmt_heads h = {data, (long)len * row_stride, row_stride, NULL};
    return h;
}

static nmt_attention_dims attention_dims(const nmt_model *m, int Tq, int Tk, int causal, nmt_dropout drop) {
    const nmt_activations *A = m->acts;
    nmt_attention_dims d = {.batch = A->B, .heads = A->H, .head_dim = A->dh, .q_len = Tq, .k_len = Tk,
                            .k_lengths = causal ? NULL : A->src_lengths, .causal = causal,
                            .scale = 1.0f / sqrtf((float)A->dh), .dropout = drop};
    return d;
}

/* Self-attention of one side: q|k|v = x W^T + b in one product, rope on q and k, attention, o_proj. */
static void self_attention_forward(nmt_model *m, attention_acts *a, const nmt_attention_params *p, const float *x,
                                   const side *s, int causal, nmt_dropout drop, float *f_out) {
    STAGE_START;
    int D = m->config.d_model, M = s->M, T = s->len;
    nmt_linear_forward(a->qkv, x, p->q_weight, p->q_bias, M, D, 3 * D);
    if (m->config.positions == NMT_POSITIONS_ROPE)
        nmt_rope_apply(a->qkv, 3 * D, m->acts->positions, s->pos, M, 2 * m->acts->H, m->acts->dh, 0);
    nmt_attention_dims dims = attention_dims(m, T, T, causal, drop);
    nmt_attention_forward(heads_at(a->context, T, D), a->weights, heads_at(a->qkv, T, 3 * D),
                          heads_at(a->qkv + D, T, 3 * D), heads_at(a->qkv + 2 * D, T, 3 * D), &dims);
    nmt_linear_forward(f_out, a->context, p->o_weight, p->o_bias, M, D, D);
    STAGE_END(forward, NMT_STAGE_ATTENTION);
}

static void self_attention_backward(nmt_model *m, grad_acts *g, const attention_acts *a,
                                    const nmt_attention_params *p, nmt_attention_params *dp, const float *x,
                                    const side *s, int causal, nmt_dropout drop, float *dx, int accumulate) {
    STAGE_START;
    int D = m->config.d_model, M = s->M, T = s->len;
    nmt_linear_backward(g->dctx, dp->o_weight, dp->o_bias, g->df, a->context, p->o_weight, M, D, D, 0);
    nmt_attention_dims dims = attention_dims(m, T, T, causal, drop);
    nmt_attention_backward(heads_at(g->dqkv, T, 3 * D), heads_at(g->dqkv + D, T, 3 * D),
                           heads_at(g->dqkv + 2 * D, T, 3 * D), g->dweights, heads_at(g->dctx, T, D), a->weights,
                           heads_at(a->qkv, T, 3 * D), heads_at(a->qkv + D, T, 3 * D),
                           heads_at(a->qkv + 2 * D, T, 3 * D), &dims);
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
    int D = m->config.d_model, S = A->S, T = A->T;
    nmt_linear_forward(a->qkv, x, p->q_weight, p->q_bias, A->tgt.M, D, D);
    nmt_linear_forward(a->kv, A->src.out, p->k_weight, p->k_bias, A->src.M, D, 2 * D);
    nmt_attention_dims dims = attention_dims(m, T, S, 0, drop);
    nmt_attention_forward(heads_at(a->context, T, D), a->weights, heads_at(a->qkv, T, D), heads_at(a->kv, S, 2 * D),
                          heads_at(a->kv + D, S, 2 * D), &dims);
    nmt_linear_forward(f_out, a->context, p->o_weight, p->o_bias, A->tgt.M, D, D);
    STAGE_END(forward, NMT_STAGE_ATTENTION);
}

static void cross_attention_backward(nmt_model *m, grad_acts *g, const attention_acts *a,
                                     const nmt_attention_params *p, nmt_attention_params *dp, const float *x,
                                     nmt_dropout drop, float *dx, int accumulate) {
    STAGE_START;
    const nmt_activations *A = m->acts;
    int D = m->config.d_model, S = A->S, T = A->T, Mt = A->tgt.M, Ms = A->src.M;
    nmt_linear_backward(g->dctx, dp->o_weight, dp->o_bias, g->df, a->context, p->o_weight, Mt, D, D, 0);
    nmt_attention_dims dims = attention_dims(m, T, S, 0, drop);
    nmt_attention_backward(heads_at(g->dqkv, T, D), heads_at(g->dkv, S, 2 * D), heads_at(g->dkv + D, S, 2 * D),
                           g->dweights, heads_at(g->dctx, T, D), a->weights, heads_at(a->qkv, T, D),
                           heads_at(a->kv, S, 2 * D), heads_at(a->kv + D, S, 2 * D), &dims);
    nmt_linear_backward(g->denc, dp->k_weight, dp->k_bias, g->dkv, A->src.out, p->k_weight, Ms, D, 2 * D, 1);
    nmt_linear_backward(dx, dp->q_weight, dp->q_bias, g->dqkv, x, p->q_weight, Mt, D, D, accumulate);
    STAGE_END(backward, NMT_STAGE_ATTENTION);
}

/* ---------------------------------------------------------------------------------------------- */
/* Feed-forward: fc2(relu(fc1(x))) */

static void ffn_forward(nmt_model *m, float *hidden, const nmt_ffn_params *p, const float *x, int M,
                        float *f_out) {
    STAGE_START;
    int D = m->config.d_model, F = m->config.ffn;
    nmt_linear_forward(hidden, x, p->fc1_weight, p->fc1_bias, M, D, F);
    nmt_relu_forward(hidden, (long)M * F);
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

/* g->d: the gradient of the layer's output in, of its input out. */
static void encoder_layer_backward(nmt_model *m, int l) {
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

    sublayer_finish_backward(m, g, &e->attn_sub, &p->self_attn_norm, &dp->self_attn_norm, M,
                             dropout_at(m, id, SITE_SELF));
    dx = sublayer_f_dinput(m, g, &accumulate);
    self_attention_backward(m, g, &e->attn, &p->self_attn, &dp->self_attn, sublayer_f_input(m, &e->attn_sub, x),
                            &A->src, 0, dropout_at(m, id, SITE_SELF_WEIGHTS), dx, accumulate);
    sublayer_input_backward(m, g, &e->attn_sub, &p->self_attn_norm, &dp->self_attn_norm, x, M);
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

static void decoder_layer_backward(nmt_model *m, int l) {
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

    sublayer_finish_backward(m, g, &d->cross_sub, &p->cross_attn_norm, &dp->cross_attn_norm, M,
                             dropout_at(m, id, SITE_CROSS));
    dx = sublayer_f_dinput(m, g, &accumulate);
    cross_attention_backward(m, g, &d->cross, &p->cross_attn, &dp->cross_attn, sublayer_f_input(m, &d->cross_sub, x1),
                             dropout_at(m, id, SITE_CROSS_WEIGHTS), dx, accumulate);
    sublayer_input_backward(m, g, &d->cross_sub, &p->cross_attn_norm, &dp->cross_attn_norm, x1, M);

    sublayer_finish_backward(m, g, &d->self_sub, &p->self_attn_norm, &dp->self_attn_norm, M,
                             dropout_at(m, id, SITE_SELF));
    dx = sublayer_f_dinput(m, g, &accumulate);
    self_attention_backward(m, g, &d->self, &p->self_attn, &dp->self_attn, sublayer_f_input(m, &d->self_sub, x),
                            &A->tgt, 1, dropout_at(m, id, SITE_SELF_WEIGHTS), dx, accumulate);
    sublayer_input_backward(m, g, &d->self_sub, &p->self_attn_norm, &dp->self_attn_norm, x, M);
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
    embed_forward(m, &A->src, m->p.src_embed, m->p.src_positions, dropout_at(m, 0, SITE_SRC_EMBED));
    for (int l = 0; l < L; l++) encoder_layer_forward(m, l);
    stack_finish(m, &A->src, A->enc[L - 1].ffn_sub.out, &m->p.encoder_norm);
}

/* Starts from g->denc, the gradient of the encoder output summed over the decoder layers. */
static void encoder_backward(nmt_model *m) {
    nmt_activations *A = m->acts;
    grad_acts *g = &A->g;
    int L = m->config.encoder_layers;
    swap_floats(&g->d, &g->denc);
    stack_finish_backward(m, &A->src, A->enc[L - 1].ffn_sub.out, &m->p.encoder_norm, &m->g.encoder_norm);
    for (int l = L - 1; l >= 0; l--) encoder_layer_backward(m, l);
    embed_backward(m, &A->src, m->g.src_embed, m->g.src_positions, g->d, dropout_at(m, 0, SITE_SRC_EMBED));
}

static void decoder_forward(nmt_model *m) {
    nmt_activations *A = m->acts;
    int L = m->config.decoder_layers;
    embed_forward(m, &A->tgt, m->p.tgt_embed, m->p.tgt_positions, dropout_at(m, 0, SITE_TGT_EMBED));
    for (int l = 0; l < L; l++) decoder_layer_forward(m, l);
    stack_finish(m, &A->tgt, A->dec[L - 1].ffn_sub.out, &m->p.decoder_norm);
}

/* Starts from g->d, the gradient of the decoder output. */
static void decoder_backward(nmt_model *m) {
    nmt_activations *A = m->acts;
    grad_acts *g = &A->g;
    int L = m->config.decoder_layers;
    memset(g->denc, 0, (size_t)A->src.M * m->config.d_model * sizeof(float));
    stack_finish_backward(m, &A->tgt, A->dec[L - 1].ffn_sub.out, &m->p.decoder_norm, &m->g.decoder_norm);
    for (int l = L - 1; l >= 0; l--) decoder_layer_backward(m, l);
    embed_backward(m, &A->tgt, m->g.tgt_embed, m->g.tgt_positions, g->d, dropout_at(m, 0, SITE_TGT_EMBED));
}

/* ---------------------------------------------------------------------------------------------- */
/* Output projection and loss, in chunks of non-pad target rows. In training the gradient of each
 * chunk's logits goes straight into the decoder-output gradient and the (unscaled) weight gradient,
 * so the logits are never needed again. */

static void output_forward(nmt_model *m, float smoothing, nmt_loss *loss, float *logprobs) {
    STAGE_START;
    nmt_activations *A = m->acts;
    output_acts *o = &A->out;
    int D = m->config.d_model, V = m->config.vocab_size, train = A->mode == MODE_TRAIN;
    const float *x = A->tgt.out, *W = m->p.output;
    if (train) memset(o->d_out, 0, (size_t)A->tgt.M * D * sizeof(float));
    if (train && o->tokens == 0) memset(o->d_weight, 0, (size_t)V * D * sizeof(float));
    double loss_sum = 0.0, nll_sum = 0.0;
    for (long start = 0; start < o->tokens; start += o->chunk) {
        int n = (int)(o->tokens - start < o->chunk ? o->tokens - start : o->chunk);
        const int32_t *rows = o->rows + start;
        for (int i = 0; i < n; i++) memcpy(o->x + (long)i * D, x + (long)rows[i] * D, (size_t)D * sizeof(float));
        nmt_sgemm(0, 1, n, V, D, 1.0f, o->x, D, W, D, 0.0f, o->logits, V);
        nmt_cross_entropy_rows(o->logits, o->loss, o->nll, o->targets + start, n, V, smoothing, train);
        for (int i = 0; i < n; i++) {
            loss_sum += o->loss[i];
            nll_sum += o->nll[i];
            if (logprobs) logprobs[rows[i]] = -o->nll[i];
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
    if (prepare(m, batch, mode, opts) < 0) {
        m->acts->mode = MODE_EVAL;
        return -1;
    }
    encoder_forward(m);
    if (mode == MODE_ENCODE) return 0;
    decoder_forward(m);
    output_forward(m, mode == MODE_LOGPROBS || !opts ? 0.0f : opts->label_smoothing, loss, logprobs);
    return 0;
}

int nmt_model_forward(nmt_model *m, const nmt_batch *batch, const nmt_forward_options *opts, nmt_loss *loss) {
    return forward(m, batch, opts->training ? MODE_TRAIN : MODE_EVAL, opts, loss, NULL);
}

int nmt_model_backward(nmt_model *m, float scale) {
    nmt_activations *A = m->acts;
    if (A->mode != MODE_TRAIN) return nmt_error_set("model backward: the last forward was not in training mode");
    int D = m->config.d_model;
    STAGE_START;
    scale_task t = {m->g.output, A->out.d_weight, scale};
    nmt_pool_work((long)m->config.vocab_size * D, 1, scale_add_range, &t);
    t = (scale_task){A->g.d, A->out.d_out, scale};
    nmt_pool_work((long)A->tgt.M * D, 1, scale_copy_range, &t);
    STAGE_END(backward, NMT_STAGE_OUTPUT);
    decoder_backward(m);
    encoder_backward(m);
    return 0;
}

int nmt_model_token_logprobs(nmt_model *m, const nmt_batch *batch, float *out) {
    if (batch->batch >= 1 && batch->tgt_len >= 1)
        memset(out, 0, (size_t)batch->batch * batch->tgt_len * sizeof(float));
    return forward(m, batch, MODE_LOGPROBS, NULL, NULL, out);
}

int nmt_model_encode(nmt_model *m, const int32_t *src, int B, int S, float *enc_out) {
    nmt_batch batch = {.batch = B, .src_len = S, .src = src};
    if (forward(m, &batch, MODE_ENCODE, NULL, NULL, NULL) < 0) return -1;
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
