/* attention: multi-head scaled dot-product attention, forward and backward, per (batch row, head)
 * as small register-tiled products (scores Q K^T, softmax, weights times values, and the
 * backward's dV, dP, dQ, dK).
 *
 * Allocates nothing. Work is split over the pool's threads by whole batch rows. Every output of a
 * (batch row, head) is computed from that row's own inputs and lengths alone, with sums in a fixed
 * order: over head_dim in simd.h's 16-lane order, over keys or queries one at a time in ascending
 * order, so results do not depend on the thread count, on the other rows of the batch, on how far
 * the batch is padded beyond a row's keys, or on the CPU's vector width.
 */
#ifndef NMT_ATTENTION_H
#define NMT_ATTENTION_H

#include "compute/kernels.h"
#include "compute/kvstore.h"

#include <stdint.h>

/* Multi-head attention operands live inside bigger buffers (the fused q|k|v projection, a decoder's
 * key/value cache): element (b, t, h, j) of a [batch, len, heads, head_dim] operand is
 * data[s * batch_stride + t * row_stride + h * head_dim + j] with s = path[b * path_stride + t]
 * where path is set, else s = slot[b], or b when slot is NULL too. Sentences share blocks through
 * slot (a beam's rows, one sentence's encoder output); a beam decoder's rows share the keys and
 * values of their common prefix through path (each row's key t where the ancestor that fed
 * position t left it), so that a reordered beam moves indices, never cached rows. */
typedef struct nmt_heads {
    float *data;
    long batch_stride;
    long row_stride;
    const int32_t *slot; /* [batch] or NULL */
    const int32_t *path; /* [batch, path_stride] or NULL */
    long path_stride;
} nmt_heads;

typedef struct nmt_attention_dims {
    int batch, heads, head_dim; /* B, H, dh */
    int q_len, k_len;           /* Tq queries and Tk keys per batch row */
    const int32_t *k_lengths;   /* [B]: row b sees keys j < k_lengths[b]; NULL = all Tk */
    const int32_t *q_lengths;   /* [B], the forwards only: row b's queries t < q_lengths[b] are
                                 * computed, the others neither computed nor written (their rows
                                 * may be another row's: an encoder's sentences packed without
                                 * padding); NULL = all Tq */
    int causal;                 /* nonzero: query t also needs j <= t + q_offset */
    int q_offset;               /* position of query 0 among the keys (Tk - Tq for a decoding step) */
    float scale;                /* on the scores, 1/sqrt(dh) */
    nmt_dropout dropout;        /* on the weights; index ((b*H + h)*Tq + t)*Tk + j */
} nmt_attention_dims;

/* out = softmax(scale q k^T, masked) v per (batch row, head). weights[B, H, Tq, Tk] receives the
 * softmax probabilities before dropout, 0 at masked keys (a query with no visible key gets a zero
 * row and a zero output), for the queries computed (q_lengths). out must not overlap q, k or v. A
 * query's output is the same bits whatever the other queries and q_lengths. */
void nmt_attention_forward(nmt_heads out, float *weights, nmt_heads q, nmt_heads k, nmt_heads v,
                           const nmt_attention_dims *dims);
/* Gradients of the forward above: dq, dk, dv overwritten (they must not overlap each other's
 * elements or the inputs). dweights[B, H, Tq, Tk] is scratch. */
void nmt_attention_backward(nmt_heads dq, nmt_heads dk, nmt_heads dv, float *dweights, nmt_heads dout,
                            const float *weights, nmt_heads q, nmt_heads k, nmt_heads v,
                            const nmt_attention_dims *dims);

/* Inference keys or values in a storage format (kvstore.h), read only: element (b, t, h, j) is the
 * stored value at offset s * batch_stride + t * row_stride + h * head_dim + j (s as in nmt_heads:
 * path[b * path_stride + t], slot[b] or b), its I8 factor at that offset / head_dim. */
typedef struct nmt_kv_heads {
    const void *data;
    const float *factor; /* I8 only */
    long batch_stride;
    long row_stride;
    const int32_t *slot; /* [batch] or NULL */
    nmt_kv_format format;
    const int32_t *path; /* [batch, path_stride] or NULL */
    long path_stride;
} nmt_kv_heads;

enum { NMT_ATTENTION_STORED_BLOCK = 4096 }; /* floats of float16 keys or values widened at once; head_dim <= this */

/* nmt_attention_forward (no dropout) with stored keys and values.
 *   NMT_KV_F32, NMT_KV_F16: the values widened to float32 blocks of NMT_ATTENTION_STORED_BLOCK /
 *     head_dim keys on the stack, then the same operations in the same order as
 *     nmt_attention_forward, so the results are its results on the widened values, bit for bit.
 *   NMT_KV_I8: each query row is quantized per head as qgemm.h quantizes a row (int8 values q and
 *     a factor f_q) and its scores are exact integer dot products with the keys' int8 values,
 *     scale * (float)dot * (f_k * f_q) (qgemm's int8 kernels, the same integers on each); the
 *     weighted values are nmt_attention_forward's on the widened values.
 * Either way the results do not depend on the thread count, the batch or the CPU. */
void nmt_attention_forward_stored(nmt_heads out, float *weights, nmt_heads q, nmt_kv_heads k, nmt_kv_heads v,
                                  const nmt_attention_dims *dims);

#endif
