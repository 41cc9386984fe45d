/* kernels: the numerical building blocks of the model, on OpenBLAS and fused C loops.
 *
 * Every function works on row-major float arrays and allocates nothing. Matrix products go to
 * cblas_sgemm; the elementwise work is fused and spread over the threads set with
 * nmt_kernels_set_threads() (OpenBLAS is given the same count; the two never run at once).
 * Each *_backward takes the forward's inputs (or saved statistics) and ADDS into weight and bias
 * gradients; input gradients are overwritten unless the comment says otherwise.
 */
#ifndef NMT_KERNELS_H
#define NMT_KERNELS_H

#include <stdint.h>

void nmt_kernels_set_threads(int threads);
int nmt_kernels_threads(void);

/* y[M,N] = x[M,K] w[N,K]^T + b[N] (b may be NULL). */
void nmt_linear_forward(float *y, const float *x, const float *w, const float *b, int M, int K, int N);
/* dx[M,K] = dy w (overwritten; dx may be NULL); dw[N,K] += dy^T x; db[N] += column sums of dy
 * (db may be NULL). */
void nmt_linear_backward(float *dx, float *dw, float *db, const float *dy, const float *x, const float *w,
                         int M, int K, int N);

/* y = (x - mean) * rstd * w + b per row of D; saves mean[M] and rstd[M] for backward. */
void nmt_layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *w, const float *b,
                           int M, int D, float eps);
/* dx[M,D] overwritten; dw, db accumulated. */
void nmt_layernorm_backward(float *dx, float *dw, float *db, const float *dy, const float *x, const float *mean,
                            const float *rstd, const float *w, int M, int D);

/* In-place softmax of each row of n values. */
void nmt_softmax_rows(float *x, int rows, int n);

/* pe[pos, D] for pos in [0, positions): PE(pos,2i) = sin(pos/10000^(2i/D)), PE(pos,2i+1) = cos(...). */
void nmt_sinusoidal_positions(float *pe, int positions, int D);

/* Rotary positions: turns each pair (x[2i], x[2i+1]) of every head_dim-sized head of row r by angle
 * pos[r] * 10000^(-2i/head_dim). rows x [heads*head_dim]. inverse=1 turns back (for backward). */
void nmt_rope_apply(float *x, const int32_t *pos, int rows, int heads, int head_dim, int inverse);

#endif
