/* random: splitmix64 (Steele, Lea and Flood, 2014), the small generator behind nmt's own reproducible
 * numbers: weight initialisation, epoch shuffles, dropout masks, synthetic benchmark batches.
 * (Resampling tests use NumPy's generator instead: pcg64.h.)
 *
 * Its state is one word that advances by NMT_RANDOM_GAMMA; an output is that state through
 * nmt_random_mix, a bijective finalizer that is also a good 64-bit hash. Output i of the generator
 * seeded with s is therefore a pure function, nmt_random_at(s, i), which is what counter-based uses
 * (a dropout mask per stream) need.
 */
#ifndef NMT_RANDOM_H
#define NMT_RANDOM_H

#include <stdint.h>

#define NMT_RANDOM_GAMMA 0x9E3779B97F4A7C15ull /* 2^64 / golden ratio, odd */

/* splitmix64's finalizer: every bit of z moves about half of the result's. */
uint64_t nmt_random_mix(uint64_t z);
/* Advances *state and returns the next output. */
uint64_t nmt_random_next(uint64_t *state);
/* The output number i (from 0) of the generator whose state starts at seed. */
uint64_t nmt_random_at(uint64_t seed, uint64_t i);

#endif
