/* kernels: the numerical building blocks of the model's layers (linear, LayerNorm, ReLU, dropout,
 * softmax, cross-entropy, positions) as fused C loops; attention is attention.h.
 *
 * Every function works on row-major float arrays and allocates nothing. Each *_backward takes the
 * forward's inputs (or saved statistics) and ADDS into weight and bias gradients; input gradients
 * are overwritten, or added to when the `accumulate` argument is nonzero.
 *
 * Threads. Loops run on the pool's threads (pool.h), products on gemm.h's nmt_sgemm. Every element
 * (or row) is computed by one thread from its own inputs, and no reduction crosses the pool's
 * ranges, so results do not depend on the thread count.
 *
 * Dropout. A mask is a pure function of (seed, stream, element index): keep(i) is decided by a
 * counter-based hash, so masks do not depend on threads or call order and backward recomputes them
 * instead of storing them. rate 0 turns dropout off.
 */
#ifndef NMT_KERNELS_H
#define NMT_KERNELS_H

#include <stdint.h>

/* y[M,N] = x[M,K] w[N,K]^T + b[N] (b may be NULL). */
void nmt_linear_forward(float *y, const float *x, const float *w, const float *b, int M, int K, int N);
/* dx[M,K] = dy w (or += when accumulate_dx; dx may be NULL); dw[N,K] += dy^T x (dw may be NULL);
 * db[N] += column sums of dy (db may be NULL). */
void nmt_linear_backward(float *dx, float *dw, float *db, const float *dy, const float *x, const float *w,
                         int M, int K, int N, int accumulate_dx);

/* y = (x - mean) * rstd * w + b per row of D (biased variance); saves mean[M] and rstd[M]. */
void nmt_layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *w, const float *b,
                           int M, int D, float eps);
/* dx[M,D] = (or += when accumulate_dx) the input gradient; dw[D], db[D] accumulated. */
void nmt_layernorm_backward(float *dx, float *dw, float *db, const float *dy, const float *x, const float *mean,
                            const float *rstd, const float *w, int M, int D, int accumulate_dx);

/* The feed-forward activations: relu max(x, 0) (the one training implements, with
 * nmt_relu_backward); swish x*sigmoid(x) (SiLU); gelu x*Phi(x), Phi the normal distribution's
 * (erf); gelu_tanh, its tanh approximation 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))); gelu_sigmoid
 * x*sigmoid(1.702x) (Marian's gelu). Models' YAML words: model_config.h. */
typedef enum {
    NMT_ACTIVATION_RELU,
    NMT_ACTIVATION_SWISH,
    NMT_ACTIVATION_GELU,
    NMT_ACTIVATION_GELU_TANH,
    NMT_ACTIVATION_GELU_SIGMOID
} nmt_activation;

/* x = activation(x) over n values, in place. */
void nmt_activation_forward(nmt_activation kind, float *x, long n);
/* dx[i] = 0 where the forward's output y[i] was 0 (in place on dx). */
void nmt_relu_backward(float *dx, const float *y, long n);

typedef struct nmt_dropout {
    float rate;      /* probability of dropping an element; 0 = off */
    uint64_t seed;
    uint32_t stream; /* one per dropout site, so sites get independent masks */
} nmt_dropout;

/* 1 if element `index` is kept. */
int nmt_dropout_keep(nmt_dropout drop, uint64_t index);
/* out[i] = x[i] + keep(i) * delta[i] / (1 - rate); x may be NULL (no residual); out may alias
 * x or delta. */
void nmt_dropout_add(float *out, const float *x, const float *delta, nmt_dropout drop, long n);
/* d_delta[i] = keep(i) * d_out[i] / (1 - rate), or += when accumulate; may alias d_out when not
 * accumulating. */
void nmt_dropout_backward(float *d_delta, const float *d_out, nmt_dropout drop, long n, int accumulate);
/* factors[i] = the factor of element first + i under `drop`: 1 / (1 - rate) if kept, else 0 (all 1
 * when dropout is off), the same factors nmt_dropout_add applies. */
void nmt_dropout_factors(float *factors, nmt_dropout drop, uint64_t first, int n);

/* In-place softmax of each row of n values (max subtracted first, so large scores are safe). */
void nmt_softmax_rows(float *x, int rows, int n);
/* In-place log-softmax of each row of n values (the decoder's log-probabilities). */
void nmt_log_softmax_rows(float *x, int rows, int n);

/* The log-sum-exp of a row of scores seen a chunk at a time (a decoder's output layer never holds
 * a whole row): start from {-INFINITY, 0}; after each chunk, max is the largest score so far and
 * sum the sum of exp(score - max) over the scores so far. A NaN score makes the value NaN. */
typedef struct nmt_logsumexp {
    float max, sum;
} nmt_logsumexp;
void nmt_logsumexp_add(nmt_logsumexp *s, const float *x, int n);
float nmt_logsumexp_value(nmt_logsumexp s);

/* The index of the first of x[0..n) greater than threshold, or n (NaNs are never greater). */
int nmt_first_above(const float *x, int n, float threshold);

/* Fused log-softmax and label-smoothed cross-entropy over rows of V logits, with the target
 * distribution q = (1 - smoothing) onehot(target) + smoothing / V (PyTorch's label_smoothing):
 * loss[r] = -sum_j q_j log p_j and nll[r] = -log p_target, each row's target in [0, V).
 * The logits are clobbered; with want_grad they become d loss[r] / d logits = p - q. */
void nmt_cross_entropy_rows(float *logits, float *loss, float *nll, const int32_t *targets, int rows, int V,
                            float smoothing, int want_grad);
/* nmt_cross_entropy_rows over twin rows 2k and 2k + 1 (one sentence's target under two dropout
 * draws) plus R-Drop's consistency term (Liang et al. 2021; fairseq's rdrop criterion): each row's
 * loss adds alpha/4 (KL(p_2k || p_2k+1) + KL(p_2k+1 || p_2k)), so a pair's adds alpha/2 of the
 * symmetric divergence. The logits become log-probabilities, or with want_grad the gradient of the
 * pair's loss by each row's logits. */
void nmt_cross_entropy_pairs(float *logits, float *loss, float *nll, const int32_t *targets, int pairs, int V,
                             float smoothing, float alpha, int want_grad);

/* pe[pos, D] for pos in [0, positions): PE(pos,2i) = sin(pos/10000^(2i/D)), PE(pos,2i+1) = cos(...). */
void nmt_sinusoidal_positions(float *pe, int positions, int D);

/* Rotary positions. table[pos, head_dim/2, 2] holds (cos, sin) of pos * 10000^(-2i/head_dim) for
 * each pair i; nmt_rope_apply turns each pair (x[2i], x[2i+1]) of every head of row r by the angle
 * of position pos[r] (inverse=1 turns back: the backward of a rotation). Row r starts at
 * x + r * row_stride and holds heads * head_dim values; head_dim is even. */
void nmt_rope_table(float *table, int positions, int head_dim);
void nmt_rope_apply(float *x, long row_stride, const float *table, const int32_t *pos, int rows, int heads,
                    int head_dim, int inverse);

#endif
