/* model: the encoder-decoder Transformer (Vaswani et al., 2017), its parameters in one buffer, and
 * the forward and backward pass of every layer for training.
 *
 * Use:
 *     nmt_model m;
 *     nmt_model_init(&m, &config);          // the parameters, in one buffer
 *     nmt_model_init_weights(&m, seed);
 *     nmt_model_zero_grads(&m);             // the gradients, one buffer, made at the first call
 *     nmt_model_forward(&m, &batch, &opts, &loss);   // keeps the activations of this batch
 *     nmt_model_backward(&m, 1.0f / loss.tokens);    // adds d(loss_sum * scale)/d(param) to m.grads
 *     ... optimizer step on m.params / m.grads (train module) ...
 *     nmt_model_free(&m);
 *
 * Conventions: token ids pad=0, unk=1, bos=2, eos=3. A source row is pieces + eos, a decoder input
 * row bos + pieces, a decoder target row pieces + eos; rows are padded with 0 to the batch's length.
 * Shapes: B sentences, S source length, T target length, D d_model, H heads, F ffn, V vocabulary.
 * Activations are row-major [B*T, D]; attention weights [B, H, T, S]. A Linear weight is stored as
 * PyTorch's, [out, in], so y = x W^T + b.
 *
 * Numerics: embeddings are multiplied by sqrt(D) before positions are added; attention scores are
 * scaled by 1/sqrt(D/H); LayerNorm uses the biased variance and norm_eps; a tied output projection
 * uses the embedding matrix unscaled. The loss is the cross-entropy against
 * q = (1 - eps) onehot(target) + eps / V (PyTorch's label_smoothing), summed over non-pad targets.
 *
 * Masks: a source row's keys end after its last non-pad id (padding is only at the end); every
 * attention over the source masks the rest. Decoder self-attention is causal. Padded rows are
 * computed but never seen, so they change nothing (not even in the last bit).
 *
 * Threads: everything runs on the pool (nmt_pool_set_threads). With the same thread
 * count results are bit-identical from run to run.
 */
#ifndef NMT_MODEL_H
#define NMT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "model/model_config.h"
#include "text/vocab.h"

/* Pointers into the parameter (or gradient) buffer. Names follow the model file's tensor names. */
typedef struct nmt_attention_params {
    /* q, k, v weights are consecutive in memory: together one [3D, D] matrix (and biases one [3D]),
     * so that self-attention projects with one sgemm and cross-attention's k, v with one [2D, D]. */
    float *q_weight, *k_weight, *v_weight; /* [D, D] each */
    float *q_bias, *k_bias, *v_bias;       /* [D] each */
    float *o_weight;                       /* [D, D] */
    float *o_bias;                         /* [D] */
} nmt_attention_params;

typedef struct nmt_norm_params {
    float *weight; /* [D] */
    float *bias;   /* [D] */
} nmt_norm_params;

typedef struct nmt_ffn_params {
    float *fc1_weight; /* [F, D] */
    float *fc1_bias;   /* [F] */
    float *fc2_weight; /* [D, F] */
    float *fc2_bias;   /* [D] */
} nmt_ffn_params;

typedef struct nmt_encoder_layer_params {
    nmt_attention_params self_attn;
    nmt_norm_params self_attn_norm;
    nmt_ffn_params ffn;
    nmt_norm_params ffn_norm;
} nmt_encoder_layer_params;

typedef struct nmt_decoder_layer_params {
    nmt_attention_params self_attn;
    nmt_norm_params self_attn_norm;
    nmt_attention_params cross_attn;
    nmt_norm_params cross_attn_norm;
    nmt_ffn_params ffn;
    nmt_norm_params ffn_norm;
} nmt_decoder_layer_params;

typedef struct nmt_params {
    float *src_embed;        /* [V, D]; with tie all, the same tensor as tgt_embed */
    float *tgt_embed;        /* [V, D] */
    float *output;           /* [V, D]; with tie decoder or all, the same tensor as tgt_embed */
    float *output_bias;      /* [V] with config.output_bias, else NULL */
    float *src_positions;    /* [max_positions, D] with learned positions, else NULL */
    float *tgt_positions;    /* [max_positions, D] with learned positions, else NULL */
    nmt_encoder_layer_params *encoder; /* [encoder_layers] */
    nmt_decoder_layer_params *decoder; /* [decoder_layers] */
    nmt_norm_params encoder_norm;      /* pre-LN only, else NULL pointers */
    nmt_norm_params decoder_norm;      /* pre-LN only, else NULL pointers */
    nmt_norm_params src_embed_norm;    /* with config.embedding_norm (of embeddings + positions), else NULL */
    nmt_norm_params tgt_embed_norm;    /* likewise */
} nmt_params;

/* One named tensor of the model, as it appears in model.safetensors. */
typedef struct nmt_tensor_info {
    char name[96];      /* e.g. "decoder.layers.2.cross_attn.k_proj.weight" */
    int rank;           /* 1 or 2 */
    int shape[2];
    size_t offset;      /* in floats, into the parameter buffer */
    size_t count;       /* floats */
} nmt_tensor_info;

typedef struct nmt_batch {
    int batch;              /* B */
    int src_len;            /* S */
    int tgt_len;            /* T */
    const int32_t *src;     /* [B, S] */
    const int32_t *tgt_in;  /* [B, T] */
    const int32_t *tgt_out; /* [B, T]; only nmt_model_flops takes NULL (it then counts no output layer) */
} nmt_batch;

typedef struct nmt_forward_options {
    int training;          /* 1: dropout on; 0: evaluation */
    float label_smoothing; /* epsilon of the label-smoothed cross-entropy */
    uint64_t dropout_seed; /* dropout masks are a pure function of (seed, site, position in the batch),
                            * so a trainer only needs to derive a seed per step */
    float dropout_src;     /* word dropout (training): the probability that a source token's embedding is
                            * zeroed whole (the rest scaled by 1/(1 - p)); Marian's --dropout-src */
    float dropout_trg;     /* the same for the decoder's input tokens; Marian's --dropout-trg */
    float rdrop_alpha;     /* R-Drop (training; 0 = off): the batch's second half repeats its first row
                            * for row, and each sentence's loss adds alpha/2 times the symmetric KL
                            * divergence of its two copies' output distributions; fairseq's --reg-alpha */
} nmt_forward_options;

typedef struct nmt_loss {
    double loss_sum; /* label-smoothed cross-entropy summed over non-pad target tokens */
    double nll_sum;  /* plain negative log-likelihood summed likewise (for perplexity) */
    long tokens;     /* non-pad target tokens */
} nmt_loss;

typedef struct nmt_activations nmt_activations; /* private to the model layer: activations.h */

/* Where forward and backward spend their time (for `nmt bench train`). */
typedef enum {
    NMT_STAGE_EMBED,     /* embeddings, positions and their dropout */
    NMT_STAGE_ATTENTION, /* q|k|v and output projections, attention itself */
    NMT_STAGE_FFN,       /* fc1, ReLU, fc2 */
    NMT_STAGE_NORM,      /* residual additions, sublayer dropout, LayerNorm */
    NMT_STAGE_OUTPUT,    /* output projection, log-softmax, loss (and, in training, their gradients) */
    NMT_STAGES
} nmt_stage;

typedef struct nmt_model_timing {
    double forward[NMT_STAGES];  /* seconds, accumulated over calls */
    double backward[NMT_STAGES];
} nmt_model_timing;

/* Where a tensor of a model loaded deferred (nmt_model_load_deferred) is. */
typedef enum nmt_tensor_place {
    NMT_TENSOR_IN_PARAMS, /* read into params at load, as nmt_model_load does */
    NMT_TENSOR_MAPPED,    /* not in params: nmt_model_matrix reads the file's floats where they lie */
    NMT_TENSOR_UNREAD,    /* not in params: nmt_model_matrix reads it into them (an int8 file) */
    NMT_TENSOR_READ       /* read into params by nmt_model_matrix, until nmt_model_matrix_done */
} nmt_tensor_place;

typedef struct nmt_model {
    nmt_model_config config;
    size_t num_params;           /* floats in params (tied tensors counted once) */
    float *params;               /* [num_params], 64-byte aligned */
    float *grads;                /* [num_params], 64-byte aligned; NULL until nmt_model_zero_grads */
    nmt_params p;                /* pointers into params */
    nmt_params g;                /* the same pointers into grads (once they exist) */
    nmt_tensor_info *tensors;    /* [num_tensors], in file order */
    int num_tensors;
    nmt_activations *acts;       /* the last forward's activations, reused across batches */
    nmt_model_timing timing;     /* accumulated by forward/backward; the caller resets it */
    uint64_t vocab_fingerprint;  /* nmt_spm_fingerprint of the vocabulary it is trained with (0 = unknown) */
    size_t released;             /* bytes of params given back by nmt_model_release (placement.h) */
    int int8_rounded;            /* nmt_model_quantize_int8 rounded its matrices */
    int int8_weights;            /* its file held matrices as int8 (an int8 model file, a CTranslate2
                                  * int8 model): `nmt convert` keeps that precision */
    struct nmt_st_file *source;  /* nmt_model_load_deferred: the mapped file its deferred matrices stay in */
    const float *source_floats;  /* that file's data where it is laid out like params, else NULL */
    unsigned char *deferred;     /* [num_tensors] nmt_tensor_place, or NULL: all in params */
    int release_marked;          /* nmt_model_release was called, or matrices are deferred
                                  * (nmt_model_load_deferred): the forward passes refuse the model */
} nmt_model;

int nmt_model_init(nmt_model *m, const nmt_model_config *config);
void nmt_model_free(nmt_model *m);
/* Xavier-uniform for weight matrices, N(0, D^-1/2) for embeddings, zeros for biases, ones for
 * LayerNorm gains; deterministic in seed. */
void nmt_model_init_weights(nmt_model *m, uint64_t seed);
/* Zeroes the gradients, making their buffer at the first call (a model that only translates never
 * has one). Training calls it before the first backward. */
int nmt_model_zero_grads(nmt_model *m);
/* Closed-form parameter count for a config (used by tests and `nmt bench`). */
size_t nmt_model_param_count(const nmt_model_config *config);

/* Runs the whole model on a batch and computes the loss; keeps what backward needs. In training
 * mode it also computes the output projection's gradients (held back until backward), so the
 * vocabulary-sized logits are made once, in row chunks, and never stored whole. Batch shapes may
 * change between calls; buffers grow only when a batch is larger than every one before. */
int nmt_model_forward(nmt_model *m, const nmt_batch *batch, const nmt_forward_options *opts, nmt_loss *loss);
/* Backward of the last training forward: adds scale * d(loss_sum)/d(param) into m->grads.
 * An error if the last forward was not in training mode or the gradients were never made. */
int nmt_model_backward(nmt_model *m, float scale);

/* Told by a hooked backward of each parameter range [lo, hi) (offsets into grads) as soon as its
 * gradients are final: a sublayer's weights and LayerNorm, a stack's final LayerNorm, an untied output
 * projection, an embedding table and its positions. The ranges cover the parameters once. */
typedef struct nmt_grad_hook {
    void (*ready)(void *ctx, size_t lo, size_t hi);
    void *ctx;
} nmt_grad_hook;
/* nmt_model_backward, calling hook->ready (hook may be NULL) as ranges become final. */
int nmt_model_backward_hooked(nmt_model *m, float scale, const nmt_grad_hook *hook);
/* The ranges a hooked backward reports, in its order, without computing anything. */
void nmt_model_grad_order(const nmt_model *m, const nmt_grad_hook *hook);
/* Evaluation-mode log-probability of each target token: out[b*T + t] = log p(tgt_out[b,t] | ...),
 * 0 at padding. */
int nmt_model_token_logprobs(nmt_model *m, const nmt_batch *batch, float *out);

/* Evaluation-mode encoder for decoding: enc_out[B*S, D] receives the final encoder states (after
 * encoder.norm in pre-LN). src is [B, S] as in a batch. Reuses the activation buffers (a previous
 * forward can no longer be backpropagated). */
int nmt_model_encode(nmt_model *m, const int32_t *src, int B, int S, float *enc_out);

/* Floating-point operations of the matrix products of one forward+backward on a batch, counted
 * as executed: every padded row of the layers, only the visible (query, key) pairs of attention,
 * only non-pad target rows of the output projection. Elementwise work is not counted. */
double nmt_model_flops(const nmt_model_config *config, const nmt_batch *batch);

#endif
