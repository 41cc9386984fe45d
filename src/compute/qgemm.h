/* qgemm: int8 matrix products for inference, y = x W^T + b on 8-bit weights and activations.
 *
 * A weight W[N, K] is quantized once, symmetrically per output row: q[n, k] = round(W[n, k] *
 * 127 / max_k |W[n, k]|), kept with the row's dequantization factor max |W[n, .]| / 127, and laid
 * out in panels of 32 output columns by groups of 4 consecutive k, [ceil(N/32), ceil(K/4), 32, 4]
 * (k and columns past the matrix are zero). An activation row x[m, .] is quantized the same way at
 * run time, with a factor of its own. The integer sums s[m, n] = sum_k qx[m, k] q[n, k] are exact
 * in int32; y[m, n] = (float)s * (factor_w[n] * factor_x[m]) + b[n].
 *
 *     nmt_qgemm w;
 *     nmt_qgemm_init(&w, weight, N, K);                  // once
 *     nmt_qgemm_quantize(&w, xq, x, M);                 // x[M, K] -> xq, nmt_qgemm_words(&w, M) words
 *     nmt_qgemm_columns(y, xq, &w, bias, M, 0, N);      // y[M, N]
 *     nmt_qgemm_free(&w);
 *
 * Kernels: AVX-512 VNNI (vpdpbusd multiplies unsigned by signed bytes, so x is stored shifted by
 * +128 when quantized for this kernel, and 128 * sum_k q[n, k], precomputed per column, is subtracted from the sums); AVX2 (vpmaddubsw on
 * |qx| and q carrying qx's sign: pairs of products at most 2 * 127 * 127 fit int16 without
 * saturating); or plain C. All three compute the same exact sums and the same float operations
 * after them, so results are bit-identical across kernels, thread counts and batch compositions
 * (a row's output never depends on the other rows).
 */
#ifndef NMT_QGEMM_H
#define NMT_QGEMM_H

#include <stddef.h>
#include <stdint.h>

typedef struct nmt_qgemm {
    int8_t *panels;  /* [ceil(N/32), ceil(K/4), 32, 4] */
    float *factor;   /* [ceil(N/32) * 32] max |W[n, .]| / 127 (0 for a zero row or padding) */
    int32_t *shift;  /* [ceil(N/32) * 32] 128 * sum_k q[n, k], the VNNI kernel's correction */
    int N, K;
} nmt_qgemm;

typedef enum nmt_qgemm_kernel { NMT_QGEMM_C, NMT_QGEMM_AVX2, NMT_QGEMM_VNNI } nmt_qgemm_kernel;

/* The fastest kernel this CPU runs (VNNI needs AVX512F, AVX512BW and AVX512_VNNI). */
nmt_qgemm_kernel nmt_qgemm_best(void);
/* The kernel in use: nmt_qgemm_best() unless set. Setting one the CPU lacks returns -1 (tests
 * compare the kernels this way). */
nmt_qgemm_kernel nmt_qgemm_kernel_used(void);
int nmt_qgemm_set_kernel(nmt_qgemm_kernel kernel);
const char *nmt_qgemm_kernel_name(nmt_qgemm_kernel kernel);

/* Quantizes weight[N, K] (not kept). Returns 0, or -1 with the error set. */
int nmt_qgemm_init(nmt_qgemm *w, const float *weight, int N, int K);
void nmt_qgemm_free(nmt_qgemm *w);
/* Bytes held by the packed matrix. */
size_t nmt_qgemm_bytes(const nmt_qgemm *w);

/* 32-bit words of quantized activations for M rows of w's K: per row ceil(K/4) words of bytes
 * (q + 128 for the VNNI kernel, q for the others), then the row's factor as a float. */
size_t nmt_qgemm_words(const nmt_qgemm *w, int M);
/* xq = x[M, K] quantized per row (rows of x K apart) for the kernel in use, on the pool's threads. */
void nmt_qgemm_quantize(const nmt_qgemm *w, uint32_t *xq, const float *x, int M);
/* y[M, count] (rows count apart) = x W[first : first + count]^T + bias[first : first + count]
 * (bias may be NULL; first a multiple of 32), from xq of nmt_qgemm_quantize, on the pool's threads. */
void nmt_qgemm_columns(float *y, const uint32_t *xq, const nmt_qgemm *w, const float *bias, int M, int first,
                       int count);

/* out[0 .. K) = row n of the matrix as the products see it: its int8 values times its factor
 * (the row nmt_model_quantize_int8 leaves in a model). */
void nmt_qgemm_row(const nmt_qgemm *w, int n, float *out);

/* dots[j] = sum_k q[k] rows[j][k] over K int8 values (each in [-127, 127]), for j < n: exact in
 * int32, so the same integers on every kernel; one thread. A quantized attention query against
 * stored int8 keys (attention.h), rows anywhere in memory. */
void nmt_qgemm_dots(int32_t *dots, const int8_t *q, const int8_t *const *rows, int n, int K);

enum { NMT_QGEMM_DOT_HEADS = 64 }; /* the most queries the VNNI kernel takes at once (more: plain C) */

/* dots[j * heads + h] = sum_k q[h K + k] rows[j][h K + k] for j < n, h < heads:
 * each of `heads` queries (q: heads x K values) against its own part of n rows of heads x K values,
 * every row read whole and in order (a decoding step's query against stored int8 keys, all heads at
 * once); the same integers as nmt_qgemm_dots of each head. */
void nmt_qgemm_dots_heads(int32_t *dots, const int8_t *q, int heads, const int8_t *const *rows, int n, int K);

/* One row quantized as the products do: q[k] = round(v[k] / factor) in [-127, 127] for k < K,
 * returning factor = max |v| / 127 rounded to 17 significant bits (0 when v is all zeros or not
 * finite), so that quantizing the dequantized row q * factor gives q and factor again. Also used
 * to store int8 models. */
float nmt_qgemm_quantize_row(int8_t *q, const float *v, int K);

#endif
