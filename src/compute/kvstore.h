/* kvstore: the storage formats of a decoder's attention keys and values (its inference caches).
 *
 * A cached key or value row holds the D = heads * head_dim floats of one position. It is stored
 * once, when it is written, and read many times by the decode attention (attention.h), which
 * widens it back to float32 (int8 values in its kernels' registers, float16 a block at a time;
 * int8 keys go into integer dot products with quantized queries):
 *   NMT_KV_F32  the floats themselves (4 bytes a value);
 *   NMT_KV_F16  IEEE binary16, rounded to nearest even (2 bytes; 11 significant bits, a relative
 *               error of at most 2^-11 in the normal range), F16C instructions where the CPU has
 *               them, else plain C giving the same bits;
 *   NMT_KV_I8   int8 per head: each head's head_dim values q = round(v / f) in [-127, 127] with
 *               one float factor f = max |v| / 127 per (row, head), as qgemm.h quantizes (1 byte
 *               a value, plus 4 per head_dim values); the error is at most f / 2 a value.
 * Widening is exact (F16) or one multiplication q * f (I8), the same on every CPU, so attention on
 * stored rows is bit-identical across threads, batches and CPUs like attention on floats.
 */
#ifndef NMT_KVSTORE_H
#define NMT_KVSTORE_H

#include <stddef.h>
#include <stdint.h>

typedef enum nmt_kv_format { NMT_KV_F32, NMT_KV_F16, NMT_KV_I8 } nmt_kv_format;

/* Bytes of one stored value. */
size_t nmt_kv_value_bytes(nmt_kv_format format);
/* "f32", "f16" or "i8". */
const char *nmt_kv_format_name(nmt_kv_format format);

/* Stores rows[n, heads * head_dim] (rows `stride` floats apart) as n consecutive stored rows at
 * dst (value offset `at` of the format's array: element at + i * heads * head_dim + c); I8 also
 * writes factor[at / head_dim + i * heads + h]. */
void nmt_kv_store(nmt_kv_format format, void *dst, float *factor, size_t at, const float *rows, long stride, int n,
                  int heads, int head_dim);
/* out[i * out_stride + c] = stored element e_i + c as a float, for c < count and i < n, where
 * e_i = at + i * row_stride, plus path[i] * jump where path is not NULL (a row of its own block:
 * nmt_kv_heads' path) (I8: at, row_stride and jump multiples of head_dim, count <= head_dim:
 * within one head, whose factor is factor[e_i / head_dim]). */
void nmt_kv_widen(nmt_kv_format format, float *out, long out_stride, const void *src, const float *factor, size_t at,
                  long row_stride, const int32_t *path, long jump, int n, int count, int head_dim);

/* The binary16 bits of x (round to nearest even; overflow to infinity, NaN stays a quiet NaN) and
 * back: plain C, the same bits as F16C's conversions (tests compare them). */
uint16_t nmt_kv_half_bits(float x);
float nmt_kv_half_value(uint16_t h);

#endif
