/* simd: the vector types and helpers that compute's fused loops share (a header only).
 *
 * Hot loops are compiled three times (AVX-512, AVX2+FMA, baseline x86-64) and the best is chosen
 * at load time (NMT_HOT); all three perform the same float operations in the same order (C11 mode
 * turns FMA contraction off), so results do not depend on the CPU's vector width. Lane-wise
 * arithmetic is the same at any width; reductions go through a 16-lane accumulator summed in one
 * fixed order (v16_sum), whether it is held as one v16 or as two v8 halves.
 *
 * NMT_HOT goes on static functions only: clang before 16 names a multiversioned function's
 * dispatcher NAME.ifunc, which no other file can call, so an exported hot function is a plain
 * function calling its static, multiversioned body.
 */
#ifndef NMT_SIMD_H
#define NMT_SIMD_H

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define NMT_HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NMT_HOT
#endif

typedef float v16 __attribute__((vector_size(64)));
typedef float v8 __attribute__((vector_size(32)));
/* No vector ever crosses a function call: loads are macros and the helpers take vectors by
 * pointer and are always inlined, even at -O0. A v16 passed or returned by value would need
 * AVX-512's calling convention (a v8 AVX's), which the baseline clone of a multiversioned loop
 * does not have (GCC warns and disagrees with the other clones about where the value lives; clang
 * refuses). */
#define NMT_INLINE static inline __attribute__((always_inline))
#define NMT_VECTOR_LOAD(type, p)                     \
    __extension__({                                  \
        type vector_load_;                           \
        memcpy(&vector_load_, (p), sizeof vector_load_); \
        vector_load_;                                \
    })
#define V16_LOAD(p) NMT_VECTOR_LOAD(v16, p)
#define V8_LOAD(p) NMT_VECTOR_LOAD(v8, p)

/* The lanes summed as a tree (halves, quarters, ...): a fixed order, and a short dependency chain
 * where a lane-by-lane sum would wait on 15 additions in a row. */
NMT_INLINE float v16_sum(const v16 *pv) {
    typedef float v4 __attribute__((vector_size(16)));
    const v16 v = *pv;
    v8 h = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) + __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    v4 q = __builtin_shufflevector(h, h, 0, 1, 2, 3) + __builtin_shufflevector(h, h, 4, 5, 6, 7);
    return (q[0] + q[2]) + (q[1] + q[3]);
}

#endif
