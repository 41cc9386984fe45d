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

/* Packs weight[N, K] of the model (read where nmt_model_matrix finds it, its pages let go again
 * once a packed copy holds the weights whole; the fallback keeps reading them). */
static int pack(nmt_packed *pk, const nmt_model *model, const float *weight, int N, int K, nmt_precision precision) {
    const size_t count = (size_t)N * (size_t)K;
    const int rc = nmt_packed_init(pk, nmt_model_matrix(model, weight, count), N, K, precision);
    if (nmt_packed_self_contained(precision)) nmt_model_matrix_done(model, weight, count);
    return rc;
}

/* The matrices every layer has: self-attention (q, k and v weights are consecutive: one [3D, D]
 * matrix) and the feed-forward pair. */
static int pack_layer(nmt_packed *pk, const nmt_model *model, const nmt_attention_params *self_attn,
                      const nmt_ffn_params *ffn, int D, int F, nmt_precision precision) {
    return pack(&pk[NMT_WEIGHT_QKV], model, self_attn->q_weight, 3 * D, D, precision) < 0 ||
                   pack(&pk[NMT_WEIGHT_O], model, self_attn->o_weight, D, D, precision) < 0 ||
                   pack(&pk[NMT_WEIGHT_FC1], model, ffn->fc1_weight, F, D, precision) < 0 ||
                   pack(&pk[NMT_WEIGHT_FC2], model, ffn->fc2_weight, D, F, precision) < 0
               ? -1
               : 0;
}

int nmt_incremental_weights_create(nmt_incremental_weights **out, const nmt_model *model, nmt_precision precision) {
    *out = NULL;
    const nmt_model_config *c = &model->config;
    if (nmt_model_config_check(c) < 0) return -1;
    const int D = c->d_model, F = c->ffn;
    nmt_incremental_weights *w = nmt_calloc(1, sizeof *w);
    if (!w) return -1;
    w->model = model;
    w->precision = precision;
    w->cache_format = precision == NMT_PRECISION_INT8 ? NMT_INCREMENTAL_INT8_CACHE : NMT_KV_F32;
    if (D / c->heads > NMT_ATTENTION_STORED_BLOCK) w->cache_format = NMT_KV_F32;
    /* A deferred output matrix is not in params: int8 reads its rows from the packed copy. */
    w->released = nmt_packed_self_contained(precision) && nmt_model_matrix_deferred(model, model->p.output);
    w->encoder = nmt_calloc((size_t)c->encoder_layers * NMT_WEIGHTS_PER_LAYER, sizeof(nmt_packed));
    w->decoder = nmt_calloc((size_t)c->decoder_layers * NMT_WEIGHTS_PER_LAYER, sizeof(nmt_packed));
    if (!w->encoder || !w->decoder) goto fail;
    for (int l = 0; l < c->encoder_layers; l++) {
        const nmt_encoder_layer_params *e = &model->p.encoder[l];
        if (pack_layer(w->encoder + (size_t)l * NMT_WEIGHTS_PER_LAYER, model, &e->self_attn, &e->ffn, D, F, precision) < 0)
            goto fail;
    }
    for (int l = 0; l < c->decoder_layers; l++) {
        const nmt_decoder_layer_params *d = &model->p.decoder[l];
        nmt_packed *pk = w->decoder + (size_t)l * NMT_WEIGHTS_PER_LAYER;
        if (pack_layer(pk, model, &d->self_attn, &d->ffn, D, F, precision) < 0 ||
            pack(&pk[NMT_WEIGHT_CROSS_Q], model, d->cross_attn.q_weight, D, D, precision) < 0 ||
            pack(&pk[NMT_WEIGHT_CROSS_KV], model, d->cross_attn.k_weight, 2 * D, D, precision) < 0 ||
            pack(&pk[NMT_WEIGHT_CROSS_O], model, d->cross_attn.o_weight, D, D, precision) < 0)
            goto fail;
    }
    if (pack(&w->output, model, model->p.output, c->vocab_size, D, precision) < 0) goto fail;
    *out = w;
    return 0;
fail:
    nmt_incremental_weights_free(w);
    return -1;
}

void nmt_incremental_weights_set_cache_format(nmt_incremental_weights *w, nmt_kv_format format) {
    const nmt_model_config *c = &w->model->config;
    w->cache_format = c->d_model / c->heads > NMT_ATTENTION_STORED_BLOCK ? NMT_KV_F32 : format;
}

nmt_kv_format nmt_incremental_weights_cache_format(const nmt_incremental_weights *w) { return w->cache_format; }

size_t nmt_incremental_weights_release(nmt_incremental_weights *w, nmt_model *model) {
    if (model != w->model || !nmt_packed_fast(&w->output) || !nmt_packed_self_contained(w->precision)) return 0;
    const nmt_model_config *c = &model->config;
    /* Each packed matrix's source (a deferred one's is in the file: nothing in params to give). */
    size_t bytes = nmt_model_release(model, w->output.weight, (size_t)w->output.N * (size_t)w->output.K);
    for (int i = 0; i < (c->encoder_layers + c->decoder_layers) * NMT_WEIGHTS_PER_LAYER; i++) {
        const nmt_packed *pk = i < c->encoder_layers * NMT_WEIGHTS_PER_LAYER ? &w->encoder[i] : &w->decoder[i - c->encoder_layers * NMT_WEIGHTS_PER_LAYER];
        if (pk->weight) bytes += nmt_model_release(model, pk->weight, (size_t)pk->N * (size_t)pk->K);
    }
    w->released = 1;
    return bytes;
}

void nmt_incremental_weights_set_shortlist(nmt_incremental_weights *w, const nmt_shortlist *shortlist) {
    w->shortlist = shortlist;
}

