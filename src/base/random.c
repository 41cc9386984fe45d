/* random: splitmix64, the small generator behind nmt's own reproducible numbers. */
#include "base/random.h"

uint64_t nmt_random_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t nmt_random_next(uint64_t *state) { return nmt_random_mix(*state += NMT_RANDOM_GAMMA); }

uint64_t nmt_random_at(uint64_t seed, uint64_t i) { return nmt_random_mix(seed + NMT_RANDOM_GAMMA * (i + 1)); }
