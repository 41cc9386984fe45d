/* kvstore: stored key/value rows in float32, float16 or int8 and their widening (kvstore.h).
 *
 * float16: F16C's vcvtps2ph (rounding to nearest even) and vcvtph2ps, 8 values at a time, where
 * the CPU has F16C; the plain-C conversions below otherwise and for the tails (they give the same
 * bits: the tests compare every class of value). int8: qgemm.h's row quantization per head.
 */
#include "compute/kvstore.h"

#include "compute/qgemm.h"
#include "compute/simd.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define KV_F16C 1
#else
#define KV_F16C 0
#endif

size_t nmt_kv_value_bytes(nmt_kv_format format) {
    return format == NMT_KV_F32 ? sizeof(float) : format == NMT_KV_F16 ? sizeof(uint16_t) : 1;
}

const char *nmt_kv_format_name(nmt_kv_format format) {
    return format == NMT_KV_F32 ? "f32" : format == NMT_KV_F16 ? "f16" : "i8";
}

/* Round to nearest even through the float unit (F. Giesen's float_to_half_fast3_rtne), NaN payloads
 * kept and quieted as vcvtps2ph does. */
uint16_t nmt_kv_half_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    const uint32_t sign = (u >> 16) & 0x8000u;
    u &= 0x7fffffffu;
    if (u > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((u >> 13) & 0x3ffu));
    if (u >= 0x47800000u) return (uint16_t)(sign | 0x7c00u); /* >= 2^16: infinity */
    if (u < 0x38800000u) { /* below 2^-14: a subnormal half or zero, rounded by one float addition */
        const uint32_t magic_bits = (uint32_t)((127 - 15) + (23 - 10) + 1) << 23;
        float f, magic;
        memcpy(&f, &u, sizeof f);
        memcpy(&magic, &magic_bits, sizeof magic);
        f += magic;
        memcpy(&u, &f, sizeof u);
        return (uint16_t)(sign | (u - magic_bits));
    }
    const uint32_t odd = (u >> 13) & 1u;
    u += ((uint32_t)(15 - 127) << 23) + 0xfffu + odd; /* may carry into infinity: 65520 and up */
    return (uint16_t)(sign | (u >> 13));
}

float nmt_kv_half_value(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    uint32_t u;
    if (e == 0x1f) {
        u = sign | 0x7f800000u | m << 13 | (m ? 0x400000u : 0u); /* a NaN comes out quiet */
    } else if (e == 0) {
        const float v = (float)m * 0x1p-24f; /* exact: m < 2^10 */
        memcpy(&u, &v, sizeof u);
        u |= sign;
    } else {
        u = sign | (e + 112u) << 23 | m << 13;
    }
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

#if KV_F16C
__attribute__((target("avx,f16c"))) static void halves_from_f16c(uint16_t *dst, const float *src, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) dst[i] = nmt_kv_half_bits(src[i]);
}

__attribute__((target("avx,f16c"))) static void floats_from_f16c(float *dst, const uint16_t *src, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    for (; i < n; i++) dst[i] = nmt_kv_half_value(src[i]);
}
#endif

static int has_f16c(void) {
#if KV_F16C
    /* F16C from CPUID itself: clang's __builtin_cpu_supports does not know the name (AVX's test
     * covers the OS saving the ymm registers). Asked once: CPUID traps to the hypervisor in a virtual
     * machine (microseconds), and rows are converted a few dozen values at a time. Threads racing on
     * the first call store the same answer. */
    static int known = -1;
    int answer = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (answer < 0) {
        unsigned eax, ebx, ecx, edx;
        answer = __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
        __atomic_store_n(&known, answer, __ATOMIC_RELAXED);
    }
    return answer;
#else
    return 0;
#endif
}

static void halves_from(uint16_t *dst, const float *src, int n) {
#if KV_F16C
    if (has_f16c()) {
        halves_from_f16c(dst, src, n);
        return;
    }
#endif
    for (int i = 0; i < n; i++) dst[i] = nmt_kv_half_bits(src[i]);
}

static void floats_from(float *dst, const uint16_t *src, int n) {
#if KV_F16C
    if (has_f16c()) {
        floats_from_f16c(dst, src, n);
        return;
    }
#endif
    for (int i = 0; i < n; i++) dst[i] = nmt_kv_half_value(src[i]);
}

void nmt_kv_store(nmt_kv_format format, void *dst, float *factor, size_t at, const float *rows, long stride, int n,
                  int heads, int head_dim) {
    const size_t width = (size_t)heads * (size_t)head_dim;
    for (int i = 0; i < n; i++) {
        const float *src = rows + (size_t)i * (size_t)stride;
        const size_t e = at + (size_t)i * width;
        if (format == NMT_KV_F32) {
            memcpy((float *)dst + e, src, width * sizeof(float));
        } else if (format == NMT_KV_F16) {
            halves_from((uint16_t *)dst + e, src, (int)width);
        } else {
            for (int h = 0; h < heads; h++)
                factor[e / (size_t)head_dim + (size_t)h] =
                    nmt_qgemm_quantize_row((int8_t *)dst + e + (size_t)h * (size_t)head_dim, src + (size_t)h * (size_t)head_dim,
                                           head_dim);
        }
    }
}

/* Element e_i of nmt_kv_widen. */
static inline size_t widen_at(size_t at, long row_stride, const int32_t *path, long jump, int i) {
    return at + (size_t)i * (size_t)row_stride + (path ? (size_t)path[i] * (size_t)jump : 0);
}

/* Rows of o = q * f, each row with its own factor, vectorized per CPU clone (an exact conversion
 * and one product: the same everywhere); one call for all the rows, so that a row of a head's few
 * values does not pay for a call through the clones' dispatch. */
NMT_HOT static void widen_i8(float *out, long out_stride, const int8_t *data, const float *factor, size_t at,
                             long row_stride, const int32_t *path, long jump, int n, int count, int head_dim) {
    for (int i = 0; i < n; i++) {
        const size_t e = widen_at(at, row_stride, path, jump, i);
        const int8_t *q = data + e;
        const float f = factor[e / (size_t)head_dim];
        float *o = out + (size_t)i * (size_t)out_stride;
        for (int c = 0; c < count; c++) o[c] = (float)q[c] * f;
    }
}

void nmt_kv_widen(nmt_kv_format format, float *out, long out_stride, const void *src, const float *factor, size_t at,
                  long row_stride, const int32_t *path, long jump, int n, int count, int head_dim) {
    if (format == NMT_KV_I8) {
        widen_i8(out, out_stride, src, factor, at, row_stride, path, jump, n, count, head_dim);
        return;
    }
    for (int i = 0; i < n; i++) {
        const size_t e = widen_at(at, row_stride, path, jump, i);
        float *o = out + (size_t)i * (size_t)out_stride;
        if (format == NMT_KV_F32) {
            memcpy(o, (const float *)src + e, (size_t)count * sizeof(float));
        } else {
            floats_from(o, (const uint16_t *)src + e, count);
        }
    }
}
