/* incremental_weights: the model's matrices packed once for decoding (incremental_weights.h). */
#include "infer/incremental_weights.h"

#include "compute/attention.h"
#include "model/placement.h"
#include "base/util.h"

#include <stdlib.h>

void nmt_incremental_weights_free(nmt_incremental_weights *w) {
    if (!w) return;
    const nmt_model_config *c = &w->model->config;
    for (int i = 0; w->encoder && i < c->encoder_layers * NMT_WEIGHTS_PER_LAYER; i++) nmt_packed_free(&w->encoder[i]);
    for (int i = 0; w->decoder && i < c->decoder_layers * NMT_WEIGHTS_PER_LAYER; i++) nmt_packed_free(&w->decoder[i]);
    nmt_packed_free(&w->output);
    free(w->encoder);
    free(w->decoder);
    free(w);
}

/* Where the packing happens: the model read, the one whose matrices are given back as they are
 * packed (NULL: none), and the bytes given back so far. */
typedef struct packing {
    const nmt_model *model;
    nmt_model *release;
    nmt_precision precision;
    size_t released;
} packing;

/* Packs weight[N, K] of the model (read where nmt_model_matrix finds it). Once a packed copy holds
 * all that is read of the weights (their products, and with `rows` the rows read back: the output
 * matrix's, for the embeddings tied to it and the shortlist), the float32 matrix is not read again:
 * its pages go back (a deferred one's pages of the file, and with release the params' own), so that
 * the model and its packed copy are never both whole in memory. */
static int pack_read(packing *g, nmt_packed *pk, const float *weight, int N, int K, int rows) {
    const size_t count = (size_t)N * (size_t)K;
    const int rc = nmt_packed_init(pk, nmt_model_matrix(g->model, weight, count), N, K, g->precision);
    if (!(rows ? nmt_packed_self_contained(g->precision) : nmt_packed_products_self_contained(g->precision))) return rc;
    if (g->release) g->released += nmt_model_release(g->release, weight, count);
    else nmt_model_matrix_done(g->model, weight, count);
    return rc;
}

/* A matrix that is only multiplied. */
static int pack(packing *g, nmt_packed *pk, const float *weight, int N, int K) { return pack_read(g, pk, weight, N, K, 0); }

/* The matrices every layer has: self-attention (q, k and v weights are consecutive: one [3D, D]
 * matrix) and the feed-forward pair. */
static int pack_layer(packing *g, nmt_packed *pk, const nmt_attention_params *self_attn, const nmt_ffn_params *ffn,
                      int D, int F) {
    return pack(g, &pk[NMT_WEIGHT_QKV], self_attn->q_weight, 3 * D, D) < 0 ||
                   pack(g, &pk[NMT_WEIGHT_O], self_attn->o_weight, D, D) < 0 ||
                   pack(g, &pk[NMT_WEIGHT_FC1], ffn->fc1_weight, F, D) < 0 ||
                   pack(g, &pk[NMT_WEIGHT_FC2], ffn->fc2_weight, D, F) < 0
               ? -1
               : 0;
}

static int create(nmt_incremental_weights **out, packing *g) {
    *out = NULL;
    const nmt_model *model = g->model;
    const nmt_model_config *c = &model->config;
    if (nmt_model_config_check(c) < 0) return -1;
    const int D = c->d_model, F = c->ffn;
    nmt_incremental_weights *w = nmt_calloc(1, sizeof *w);
    if (!w) return -1;
    w->model = model;
    w->precision = g->precision;
    w->cache_format = g->precision == NMT_PRECISION_INT8 ? NMT_INCREMENTAL_INT8_CACHE : NMT_KV_F32;
    if (D / c->heads > NMT_ATTENTION_STORED_BLOCK) w->cache_format = NMT_KV_F32;
    /* A released or deferred output matrix is not in params: rows come from the packed copy. */
    w->released = nmt_packed_self_contained(g->precision) && (g->release || nmt_model_matrix_deferred(model, model->p.output));
    w->encoder = nmt_calloc((size_t)c->encoder_layers * NMT_WEIGHTS_PER_LAYER, sizeof(nmt_packed));
    w->decoder = nmt_calloc((size_t)c->decoder_layers * NMT_WEIGHTS_PER_LAYER, sizeof(nmt_packed));
    if (!w->encoder || !w->decoder) goto fail;
    for (int l = 0; l < c->encoder_layers; l++) {
        const nmt_encoder_layer_params *e = &model->p.encoder[l];
        if (pack_layer(g, w->encoder + (size_t)l * NMT_WEIGHTS_PER_LAYER, &e->self_attn, &e->ffn, D, F) < 0) goto fail;
    }
    for (int l = 0; l < c->decoder_layers; l++) {
        const nmt_decoder_layer_params *d = &model->p.decoder[l];
        nmt_packed *pk = w->decoder + (size_t)l * NMT_WEIGHTS_PER_LAYER;
        if (pack_layer(g, pk, &d->self_attn, &d->ffn, D, F) < 0 || pack(g, &pk[NMT_WEIGHT_CROSS_Q], d->cross_attn.q_weight, D, D) < 0 ||
            pack(g, &pk[NMT_WEIGHT_CROSS_KV], d->cross_attn.k_weight, 2 * D, D) < 0 ||
            pack(g, &pk[NMT_WEIGHT_CROSS_O], d->cross_attn.o_weight, D, D) < 0)
            goto fail;
    }
    if (pack_read(g, &w->output, model->p.output, c->vocab_size, D, 1) < 0) goto fail;
    *out = w;
    return 0;
fail:
    nmt_incremental_weights_free(w);
    return -1;
}

int nmt_incremental_weights_create(nmt_incremental_weights **out, const nmt_model *model, nmt_precision precision) {
    packing g = {.model = model, .precision = precision};
    return create(out, &g);
}

int nmt_incremental_weights_create_releasing(nmt_incremental_weights **out, nmt_model *model, nmt_precision precision,
                                             size_t *released) {
    packing g = {.model = model, .release = model, .precision = precision};
    const int rc = create(out, &g);
    *released = g.released;
    return rc;
}

void nmt_incremental_weights_set_cache_format(nmt_incremental_weights *w, nmt_kv_format format) {
    const nmt_model_config *c = &w->model->config;
    w->cache_format = c->d_model / c->heads > NMT_ATTENTION_STORED_BLOCK ? NMT_KV_F32 : format;
}

nmt_kv_format nmt_incremental_weights_cache_format(const nmt_incremental_weights *w) { return w->cache_format; }

void nmt_incremental_weights_set_shortlist(nmt_incremental_weights *w, const nmt_shortlist *shortlist) {
    w->shortlist = shortlist;
}

