/* packed: inference products with weights laid out once for the CPU's widest vectors.
 *
 * Decoding multiplies small row blocks (the live beam rows of one step) by the same weights
 * thousands of times. OpenBLAS repacks the weight matrix on every call and, as Debian ships it,
 * may pick AVX2 kernels on AVX-512 CPUs (it does on AMD Zen 4 and 5). A packed matrix is the weight
 * W[N, K] of y = x W^T + b rearranged once into panels of 32 output columns, [ceil(N/32), K, 32]
 * (columns past N are zero), which an AVX-512 kernel streams without further copying:
 *
 *     nmt_packed w;
 *     nmt_packed_init(&w, weight, N, K);      // once, e.g. when a translator is made
 *     nmt_packed_linear(y, x, &w, bias, M);   // y[M, N] = x[M, K] W^T + bias, every step
 *     nmt_packed_free(&w);
 *
 * Each output element is one dot product summed over k in order, independent of M and of the
 * threads, so a row's result is the same alone or in any batch. Without AVX-512 (or with
 * NMT_PACKED=0 in the environment) nothing is packed and the product is nmt_linear_forward's.
 * Products are split over the pool's threads (kernels.h) by column panels.
 */
#ifndef NMT_PACKED_H
#define NMT_PACKED_H

typedef struct nmt_packed {
    const float *weight; /* [N, K] the original, for the fallback */
    float *panels;       /* [ceil(N/32), K, 32], or NULL on the fallback */
    int N, K;
} nmt_packed;

/* Packs weight[N, K] (which must outlive the packed copy). Returns 0, or -1 with the error set. */
int nmt_packed_init(nmt_packed *p, const float *weight, int N, int K);
void nmt_packed_free(nmt_packed *p);
/* 1 when products use the AVX-512 kernel. */
int nmt_packed_fast(const nmt_packed *p);
/* 1 when matrices packed now would use it (the CPU has AVX-512 and NMT_PACKED is not 0). */
int nmt_packed_available(void);

/* y[M, N] = x[M, K] W^T + bias[N] (bias may be NULL); x rows are K apart, y rows N apart. */
void nmt_packed_linear(float *y, const float *x, const nmt_packed *p, const float *bias, int M);
/* Columns first .. first + count - 1 of that product only (first a multiple of 32):
 * y[M, count] = x W[first : first + count]^T + bias[first : first + count]. */
void nmt_packed_linear_columns(float *y, const float *x, const nmt_packed *p, const float *bias, int M, int first,
                               int count);

#endif
