/* pcg64: NumPy's default random generator, bit for bit, so that resampling tests reproduce
 * sacreBLEU's numbers.
 *
 * sacreBLEU draws its bootstrap samples with numpy.random.default_rng(seed).choice(n, size=(S, n))
 * and its randomization masks with .integers(2, size=(S, n), dtype=bool). That generator is PCG64
 * (O'Neill's 128-bit LCG with the XSL-RR output), seeded through numpy.random.SeedSequence, and
 * bounded integers come from Lemire's multiply-and-reject method on buffered 32-bit halves of the
 * 64-bit outputs (low half first). This module reimplements exactly that, so index k of draw j is the
 * same number NumPy (1.17 and later) gives.
 */
#ifndef NMT_PCG64_H
#define NMT_PCG64_H

#include <stdint.h>

typedef struct nmt_pcg64 {
    unsigned __int128 state;
    unsigned __int128 inc;
    uint32_t buffered;  /* the high half of the last 64-bit output, not yet used */
    int has_buffered;
    uint32_t bits;      /* bool generation: remaining bits of a 32-bit draw */
    int bit_count;
} nmt_pcg64;

/* numpy.random.default_rng(seed) for a non-negative integer seed. */
void nmt_pcg64_seed(nmt_pcg64 *rng, uint64_t seed);
/* Seeds from the operating system's entropy (default_rng(None)). 0, or -1 with the error set. */
int nmt_pcg64_seed_random(nmt_pcg64 *rng);

uint64_t nmt_pcg64_next64(nmt_pcg64 *rng);
uint32_t nmt_pcg64_next32(nmt_pcg64 *rng);

/* One draw of Generator.integers(0, n) (n >= 1, n <= 2^32), i.e. one element of choice(n, ...). */
uint32_t nmt_pcg64_below(nmt_pcg64 *rng, uint64_t n);

/* One element of Generator.integers(2, dtype=bool): 0 or 1, 32 per 32-bit draw. A fill of an array
 * keeps its bit buffer across elements; call nmt_pcg64_bits_reset() before each new fill. */
int nmt_pcg64_bit(nmt_pcg64 *rng);
void nmt_pcg64_bits_reset(nmt_pcg64 *rng);

#endif
