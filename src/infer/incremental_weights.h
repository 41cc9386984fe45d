/* incremental_weights: a model's matrices packed once for the incremental decoder's products
 * (packed.h), in one precision, with what every decoder on them shares: the format of their
 * key/value caches (kvstore.h) and the vocabulary shortlist. Read-only once made, so the decoders
 * of several threads share one; the model must outlive it. incremental.c reads the fields below.
 */
#ifndef NMT_INCREMENTAL_WEIGHTS_H
#define NMT_INCREMENTAL_WEIGHTS_H

#include <stddef.h>

#include "compute/kvstore.h"
#include "compute/packed.h"
#include "infer/shortlist.h"
#include "model/model.h"

/* The keys and values an int8 translator's decoders keep (kvstore.h); fp32 and bf16 keep float32. */
#define NMT_INCREMENTAL_INT8_CACHE NMT_KV_I8

/* A layer's matrices (encoder layers have the first four). */
enum {
    NMT_WEIGHT_QKV,      /* [3D, D]: q, k and v weights are consecutive in the model */
    NMT_WEIGHT_O,        /* [D, D] */
    NMT_WEIGHT_FC1,      /* [F, D] */
    NMT_WEIGHT_FC2,      /* [D, F] */
    NMT_WEIGHT_CROSS_Q,  /* [D, D] */
    NMT_WEIGHT_CROSS_KV, /* [2D, D]: k and v of the cross-attention */
    NMT_WEIGHT_CROSS_O,  /* [D, D] */
    NMT_WEIGHTS_PER_LAYER
};

typedef struct nmt_incremental_weights {
    const nmt_model *model; /* whose matrices these are (it must outlive them) */
    nmt_packed *encoder; /* [encoder_layers * NMT_WEIGHTS_PER_LAYER] */
    nmt_packed *decoder; /* [decoder_layers * NMT_WEIGHTS_PER_LAYER] */
    nmt_packed output;   /* [V, D] */
    nmt_precision precision;
    nmt_kv_format cache_format;     /* of the decoders' keys and values */
    int released;                   /* the model's float32 matrices are gone: rows of the output
                                     * matrix (tied embeddings, shortlists) come from its packed copy */
    const nmt_shortlist *shortlist; /* or NULL: the output layer scores the whole vocabulary */
} nmt_incremental_weights;

/* The model's matrices packed in this precision. Returns 0, or -1 with the error set. */
int nmt_incremental_weights_create(nmt_incremental_weights **weights, const nmt_model *model, nmt_precision precision);
void nmt_incremental_weights_free(nmt_incremental_weights *weights);
/* The format of the keys and values that decoders created from now on keep (kvstore.h): float32
 * by default, NMT_INCREMENTAL_INT8_CACHE for int8 weights; float32 whatever is asked when a head
 * is wider than NMT_ATTENTION_STORED_BLOCK. */
void nmt_incremental_weights_set_cache_format(nmt_incremental_weights *weights, nmt_kv_format format);
nmt_kv_format nmt_incremental_weights_cache_format(const nmt_incremental_weights *weights);
/* nmt_incremental_weights_create for weights that own the model's use: where packed matrices hold
 * their weights whole (nmt_packed_self_contained: int8, and fp32 on a packed kernel), each float32
 * matrix's memory goes back to the system right after it is packed (nmt_model_release), so that the
 * model and its packed copy are never both whole in memory; rows of the output matrix (the
 * embeddings tied to it, shortlist candidates) are then read from its packed copy: the very floats
 * for fp32, the same values for a model rounded by nmt_model_quantize_int8. bf16, whose products
 * alone read only their packed copies (nmt_packed_products_self_contained), gives back every matrix
 * but the output matrix, whose rows it reads in float32. Embedding tables of their own stay float32.
 * *released gets the bytes given back: 0, and nothing changes, for other precisions. The model then
 * serves these weights only (the forward passes refuse it); after a failure it serves nothing (free
 * it). */
int nmt_incremental_weights_create_releasing(nmt_incremental_weights **weights, nmt_model *model, nmt_precision precision,
                                             size_t *released);
/* From the next batch on, the top lists of nmt_incremental_step_best score only the batch's
 * shortlist candidates (shortlist.h; the shortlist must outlive the weights), NULL: the whole
 * vocabulary again. Log-probabilities are then normalized over the candidates, and a sentence's
 * result can depend on the other sentences of its batch. */
void nmt_incremental_weights_set_shortlist(nmt_incremental_weights *weights, const nmt_shortlist *shortlist);

#endif
