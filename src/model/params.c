/* params: the Transformer's parameters in one buffer, its tensor table, and their initialisation.
 *
 * The layout is made by one walk over the architecture (layout_walk) that every user shares:
 * counting parameters, naming tensors for the model file, and pointing nmt_params at the parameter
 * and gradient buffers. Tensors are packed without gaps in the order of the table; within an
 * attention block q, k, v weights come first and consecutively, then q, k, v biases, so that the
 * fused projections are single matrices. The forward and backward passes are model.c's.
 */
#include "model/activations.h"
#include "model/model.h"

#include "model/safetensors.h"

#include "base/random.h"
#include "base/util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#endif


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
    p->output_bias = c->output_bias ? layout_add(L, V, 0, "output.bias") : NULL;
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
    memset(&p->src_embed_norm, 0, sizeof p->src_embed_norm);
    memset(&p->tgt_embed_norm, 0, sizeof p->tgt_embed_norm);
    if (c->embedding_norm) {
        layout_norm(L, &p->src_embed_norm, D, "encoder.embed_norm");
        layout_norm(L, &p->tgt_embed_norm, D, "decoder.embed_norm");
    }
}

size_t nmt_model_param_count(const nmt_model_config *config) {
    layout L = {0};
    layout_walk(&L, config, NULL);
    return L.offset;
}


/* A 64-byte aligned block of n floats, for free(). */
static float *aligned_floats(size_t n) {
    size_t bytes;
    if (nmt_size_mul(n, sizeof(float), &bytes, "model parameters") < 0) return NULL;
    return nmt_malloc_aligned(bytes);
}

/* n zeroed floats, 64-byte aligned, for free_params: a big block straight from the system (mmap),
 * whose pages cost no memory until they are written (a deferred load never writes some). */
enum { MAPPED_PARAMS = 1 << 20 }; /* bytes */
static float *zeroed_params(size_t n) {
    float *p;
#if (defined(__unix__) || defined(__APPLE__)) && defined(MAP_ANONYMOUS)
    if (n * sizeof(float) >= MAPPED_PARAMS) {
        p = mmap(NULL, n * sizeof(float), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) return p;
    }
#endif
    if ((p = aligned_floats(n))) memset(p, 0, n * sizeof(float));
    return p;
}

static void free_params(float *p, size_t n) {
#if (defined(__unix__) || defined(__APPLE__)) && defined(MAP_ANONYMOUS)
    if (p && n * sizeof(float) >= MAPPED_PARAMS) {
        munmap(p, n * sizeof(float));
        return;
    }
#endif
    free(p);
}

int nmt_model_init(nmt_model *m, const nmt_model_config *config) {
    memset(m, 0, sizeof *m);
    if (nmt_model_config_check(config) < 0) return -1;
    if (config->vocab_size == 0) return nmt_error_set("model.vocab_size is not set (no vocabulary yet)");
    m->config = *config;
    layout count = {0};
    layout_walk(&count, config, NULL);
    m->num_params = count.offset;
    m->num_tensors = count.count;

    m->acts = nmt_activations_create(config);
    m->tensors = nmt_calloc((size_t)m->num_tensors, sizeof *m->tensors);
    m->p.encoder = nmt_calloc((size_t)config->encoder_layers, sizeof *m->p.encoder);
    m->p.decoder = nmt_calloc((size_t)config->decoder_layers, sizeof *m->p.decoder);
    m->g.encoder = nmt_calloc((size_t)config->encoder_layers, sizeof *m->g.encoder);
    m->g.decoder = nmt_calloc((size_t)config->decoder_layers, sizeof *m->g.decoder);
    if (!m->acts || !m->tensors || !m->p.encoder || !m->p.decoder || !m->g.encoder || !m->g.decoder) goto fail;
    if (nmt_size_mul(m->num_params, sizeof(float), &(size_t){0}, "model parameters") < 0 ||
        !(m->params = zeroed_params(m->num_params)))
        goto fail;

    layout params = {.base = m->params, .table = m->tensors};
    layout_walk(&params, config, &m->p);
    return 0;
fail:
    nmt_error_prefix("creating the model");
    nmt_model_free(m);
    return -1;
}


void nmt_model_free(nmt_model *m) {
    nmt_activations_free(m->acts);
    free_params(m->params, m->num_params);
    if (m->source) nmt_st_free(m->source);
    free(m->source);
    free(m->deferred);
    free(m->grads);
    free(m->tensors);
    free(m->p.encoder);
    free(m->p.decoder);
    free(m->g.encoder);
    free(m->g.decoder);
    memset(m, 0, sizeof *m);
}

int nmt_model_zero_grads(nmt_model *m) {
    if (!m->grads) { /* the first call: a model that only translates never holds gradients */
        if (!(m->grads = aligned_floats(m->num_params))) return nmt_error_prefix("the model's gradients");
        layout grads = {.base = m->grads};
        layout_walk(&grads, &m->config, &m->g);
    }
    memset(m->grads, 0, m->num_params * sizeof(float));
    return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* Initialisation */

/* Uniform in (0, 1): 53 random bits, never 0. */
static double rng_uniform(uint64_t *state) { return ((double)(nmt_random_next(state) >> 11) + 0.5) / 9007199254740992.0; }

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

