/* kernels: the numerical building blocks of the model, on OpenBLAS and fused C loops.
 *
 * Every function works on row-major float arrays and allocates nothing (the thread pool is made
 * once, by nmt_kernels_set_threads or at the first parallel call). Each *_backward takes the
 * forward's inputs (or saved statistics) and ADDS into weight and bias gradients; input gradients
 * are overwritten, or added to when the `accumulate` argument is nonzero.
 *
 * Products. nmt_sgemm runs nmt's own AVX-512 kernel where the CPU has AVX-512 (about twice the
 * speed of the AVX2 kernels Debian's OpenBLAS picks on AMD Zen 4 and 5, and row-invariant), and
 * OpenBLAS's sgemm otherwise or with NMT_GEMM=openblas in the environment.
 *
 * Threads. One pool of `threads` threads (the caller plus threads-1 workers) runs everything:
 * OpenBLAS is set to one thread and nmt_sgemm splits each product into row (or column) blocks, one
 * per pool thread, so OpenBLAS's own threads never spin against the elementwise work. Work is split
 * into fixed contiguous ranges, so with the same thread count every result is bit-identical from
 * run to run; reductions never depend on the thread count except inside nmt_sgemm's blocks.
 *
 * Dropout. A mask is a pure function of (seed, stream, element index): keep(i) is decided by a
 * counter-based hash, so masks do not depend on threads or call order and backward recomputes them
 * instead of storing them. rate 0 turns dropout off.
 */
#ifndef NMT_KERNELS_H
#define NMT_KERNELS_H

#include <stdint.h>

/* Sets the pool size (1 = everything on the caller's thread). Not to be called from a pool task. */
int nmt_kernels_set_threads(int threads);
int nmt_kernels_threads(void);

/* The OpenBLAS kernel set in use, e.g. "Haswell" or "SkylakeX". */
const char *nmt_kernels_blas_core(void);
/* "SkylakeX" when this CPU has AVX-512 (F, BW, DQ, VL) but OpenBLAS chose its AVX2 kernels, as
 * OpenBLAS 0.3.21 does on AMD Zen 4 and 5: there OPENBLAS_CORETYPE=SkylakeX in the environment of
 * a new process makes sgemm about 1.8x faster. NULL when there is nothing to gain. */
const char *nmt_kernels_blas_core_advice(void);

/* Runs fn(ctx, begin, end) over [0, count) split into one contiguous range per pool thread (fewer
 * when count is small); returns when all are done. Calls made from inside a task run inline. */
typedef void (*nmt_parallel_fn)(void *ctx, long begin, long end);
void nmt_parallel_for(long count, nmt_parallel_fn fn, void *ctx);
/* The same, but small work (count * cost_per_item under ~32k element operations) stays on the
 * caller's thread, where waking the pool would cost more than it saves. */
void nmt_parallel_work(long count, long cost_per_item, nmt_parallel_fn fn, void *ctx);

/* 1 when products run on nmt's own AVX-512 kernels (the CPU has AVX-512F and NMT_GEMM is not
 * "openblas" in the environment), 0 when on OpenBLAS's. Decided once, at the first call. */
int nmt_kernels_own_gemm(void);
/* Chooses for the products from now on (1: own, which needs AVX-512; 0: OpenBLAS), e.g. to measure
 * both in one run. Not while products run. */
int nmt_kernels_set_own_gemm(int on);
/* y[M, N] (rows ldy apart) = x[M, K] W^T, or += with accumulate, for W packed as 32-column panels
 * [ceil(N/32), K, 32] (packed.h), on this thread only. Needs nmt_kernels_own_gemm(). */
void nmt_gemm_panels(float *y, int ldy, const float *x, int M, int K, const float *panels, int N, int accumulate);

/* C[M,N] = alpha op(A) op(B) + beta C, row-major, op(X) = X or X^T, on all pool threads. */
void nmt_sgemm(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
               const float *B, int ldb, float beta, float *C, int ldc);

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

/* x = max(x, 0) over n values, in place. */
void nmt_relu_forward(float *x, long n);
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

/* pe[pos, D] for pos in [0, positions): PE(pos,2i) = sin(pos/10000^(2i/D)), PE(pos,2i+1) = cos(...). */
void nmt_sinusoidal_positions(float *pe, int positions, int D);

/* Rotary positions. table[pos, head_dim/2, 2] holds (cos, sin) of pos * 10000^(-2i/head_dim) for
 * each pair i; nmt_rope_apply turns each pair (x[2i], x[2i+1]) of every head of row r by the angle
 * of position pos[r] (inverse=1 turns back: the backward of a rotation). Row r starts at
 * x + r * row_stride and holds heads * head_dim values; head_dim is even. */
void nmt_rope_table(float *table, int positions, int head_dim);
void nmt_rope_apply(float *x, long row_stride, const float *table, const int32_t *pos, int rows, int heads,
                    int head_dim, int inverse);

/* Multi-head attention operands live inside bigger buffers (the fused q|k|v projection, a decoder's
 * key/value cache): element (b, t, h, j) of a [batch, len, heads, head_dim] operand is
 * data[s * batch_stride + t * row_stride + h * head_dim + j], s = slot[b], or b when slot is NULL
 * (a beam decoder's rows share cache blocks through it instead of copying them). */
typedef struct nmt_heads {
    float *data;
    long batch_stride;
    long row_stride;
    const int32_t *slot; /* [batch] or NULL */
} nmt_heads;

typedef struct nmt_attention_dims {
    int batch, heads, head_dim; /* B, H, dh */
    int q_len, k_len;           /* Tq queries and Tk keys per batch row */
    const int32_t *k_lengths;   /* [B]: row b sees keys j < k_lengths[b]; NULL = all Tk */
    int causal;                 /* nonzero: query t also needs j <= t + q_offset */
    int q_offset;               /* position of query 0 among the keys (Tk - Tq for a decoding step) */
    float scale;                /* on the scores, 1/sqrt(dh) */
    nmt_dropout dropout;        /* on the weights; index ((b*H + h)*Tq + t)*Tk + j */
} nmt_attention_dims;

/* out = softmax(scale q k^T, masked) v per (batch row, head). weights[B, H, Tq, Tk] receives the
 * softmax probabilities before dropout, 0 at masked keys (a query with no visible key gets a zero
 * row and a zero output). out must not overlap q, k or v. */
void nmt_attention_forward(nmt_heads out, float *weights, nmt_heads q, nmt_heads k, nmt_heads v,
                           const nmt_attention_dims *dims);
/* Gradients of the forward above: dq, dk, dv overwritten (they must not overlap each other's
 * elements or the inputs). dweights[B, H, Tq, Tk] is scratch. */
void nmt_attention_backward(nmt_heads dq, nmt_heads dk, nmt_heads dv, float *dweights, nmt_heads dout,
                            const float *weights, nmt_heads q, nmt_heads k, nmt_heads v,
                            const nmt_attention_dims *dims);

#endif
