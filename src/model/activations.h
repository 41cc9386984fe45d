/* activations: what one batch's forward keeps for backward, and backward's scratch, in one block.
 *
 * The model layer's private header (model.c and params.c include it; nothing above the model does;
 * it needs the config, not the model).
 * One block, carved by nmt_activations_plan for the batch's shape (measured first, then cut), holds
 * every buffer below; it grows only when a batch needs more, so steady training allocates nothing.
 * Training keeps every layer's buffers for backward; evaluation (no backward) gives all the layers of
 * a stack the buffers of its first, so its memory does not grow with depth.
 * Shapes: B sentences, S source and T target positions, Ms = B*S and Mt = B*T rows, D d_model,
 * H heads, F ffn, V vocabulary.
 */
#ifndef NMT_ACTIVATIONS_H
#define NMT_ACTIVATIONS_H

#include "compute/kernels.h"
#include "model/model_config.h"

#include <stddef.h>
#include <stdint.h>

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

/* One side of the batch: the source (encoder) or the decoder input. Training lays its rows out
 * padded, sentence b's position t at row b * len + t. Evaluation packs them: each sentence's
 * positions up to its length (its trailing padding left out), one sentence after another from row
 * start[b], so no product or LayerNorm runs on padding; every row's result is the same bits
 * either way (the products are row-invariant, attention sees the same keys). */
typedef struct side {
    int M;                /* rows: B * len padded, the sum of the lengths packed */
    int len;              /* S or T */
    int32_t *lengths;     /* [B] positions of each sentence: len less its trailing padding */
    int32_t *start;       /* [B] packed: each sentence's first row; NULL when padded */
    int32_t *tokens;      /* [M] a copy of the batch's ids */
    int32_t *pos;         /* [M] position of each row in its sentence */
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
    int32_t *rows;           /* [tokens] their rows in [0, tgt.M) */
    int32_t *places;         /* [tokens] their indices b * T + t in the batch's target */
    int32_t *targets;        /* [tokens] their target ids */
    int chunk;               /* rows per chunk */
    float *x;                /* [chunk, D] gathered decoder outputs */
    float *logits;           /* [chunk, V] logits, then their gradient */
    float *dx;               /* [chunk, D] */
    float *loss, *nll;       /* [chunk] per row */
    float *d_out;            /* [Mt, D] d loss_sum / d decoder output, unscaled (training) */
    float *d_weight;         /* [V, D] d loss_sum / d output.weight, unscaled, until backward adds it */
} output_acts;

enum { NMT_PASS_TRAIN, NMT_PASS_EVAL, NMT_PASS_LOGPROBS, NMT_PASS_ENCODE };

typedef struct nmt_activations nmt_activations; /* also named by model.h, which holds a pointer */
struct nmt_activations {
    float *block;             /* every per-batch buffer below, carved from one 64-byte aligned allocation */
    size_t block_capacity;    /* its bytes */
    int B, S, T, H, dh;       /* the last forward's batch and head shape */
    int mode;                 /* of the last forward */
    nmt_dropout drop;         /* residual dropout of the last forward (rate 0 in evaluation) */
    float attention_dropout;  /* likewise for attention weights */
    float dropout_src, dropout_trg; /* likewise for whole source / decoder-input words */
    float rdrop_alpha;        /* of the last forward in training (else 0); out.rows then come in twin pairs */
    float *positions;         /* sinusoidal: [max(S,T), D]; rope: [max(S,T), dh/2, 2]; else unused */
    side src, tgt;
    encoder_layer_acts *enc;  /* [encoder_layers] */
    decoder_layer_acts *dec;  /* [decoder_layers] */
    output_acts out;
    grad_acts g;
};

/* The per-layer arrays for c's depth, and the mode of no forward yet (evaluation); NULL on failure. */
nmt_activations *nmt_activations_create(const nmt_model_config *c);
void nmt_activations_free(nmt_activations *A);
/* Makes every per-batch buffer of A for a model of config c and this shape (T = 0: the encoder only),
 * growing the block only when it is too small. */
int nmt_activations_plan(nmt_activations *A, const nmt_model_config *c, int B, int S, int T, int mode);

#endif
