/* pcg64: NumPy's SeedSequence + PCG64 + bounded integers (numpy/random/bit_generator.pyx,
 * src/pcg64/pcg64.h, src/distributions/distributions.c), written from their published algorithms. */
#include "base/pcg64.h"

#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* SeedSequence's hashing constants. */
enum { POOL_SIZE = 4 };
static const uint32_t INIT_A = 0x43b0d7e5, MULT_A = 0x931e8875, INIT_B = 0x8b51f9dd, MULT_B = 0x58f38ded;
static const uint32_t MIX_MULT_L = 0xca01f9dd, MIX_MULT_R = 0x4973f715;

static uint32_t hashmix(uint32_t value, uint32_t *hash_const) {
    value ^= *hash_const;
    *hash_const *= MULT_A;
    value *= *hash_const;
    return value ^ (value >> 16);
}

static uint32_t mix(uint32_t x, uint32_t y) {
    uint32_t result = MIX_MULT_L * x - MIX_MULT_R * y;
    return result ^ (result >> 16);
}

/* SeedSequence(entropy).generate_state(4, uint64) for entropy given as 32-bit words, low first. */
static void seed_sequence(const uint32_t *entropy, int words, uint64_t out[4]) {
    uint32_t pool[POOL_SIZE];
    uint32_t hash_const = INIT_A;
    for (int i = 0; i < POOL_SIZE; i++) pool[i] = hashmix(i < words ? entropy[i] : 0, &hash_const);
    for (int src = 0; src < POOL_SIZE; src++)
        for (int dst = 0; dst < POOL_SIZE; dst++)
            if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src], &hash_const));
    for (int src = POOL_SIZE; src < words; src++)
        for (int dst = 0; dst < POOL_SIZE; dst++) pool[dst] = mix(pool[dst], hashmix(entropy[src], &hash_const));
    uint32_t state[8];
    hash_const = INIT_B;
    for (int i = 0; i < 8; i++) {
        uint32_t v = pool[i % POOL_SIZE];
        v ^= hash_const;
        hash_const *= MULT_B;
        v *= hash_const;
        state[i] = v ^ (v >> 16);
    }
    for (int i = 0; i < 4; i++) out[i] = (uint64_t)state[2 * i] | (uint64_t)state[2 * i + 1] << 32;
}

static const unsigned __int128 MULTIPLIER =
    ((unsigned __int128)2549297995355413924ull << 64) | 4865540595714422341ull;

static void step(nmt_pcg64 *rng) { rng->state = rng->state * MULTIPLIER + rng->inc; }

static void seed_words(nmt_pcg64 *rng, const uint32_t *entropy, int words) {
    uint64_t s[4];
    seed_sequence(entropy, words, s);
    memset(rng, 0, sizeof *rng);
    /* pcg64_set_seed: the first word of each pair is the high half. */
    unsigned __int128 initstate = (unsigned __int128)s[0] << 64 | s[1];
    unsigned __int128 initseq = (unsigned __int128)s[2] << 64 | s[3];
    rng->inc = initseq << 1 | 1;
    step(rng);
    rng->state += initstate;
    step(rng);
}

void nmt_pcg64_seed(nmt_pcg64 *rng, uint64_t seed) {
    uint32_t words[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    seed_words(rng, words, seed >> 32 ? 2 : 1);
}

int nmt_pcg64_seed_random(nmt_pcg64 *rng) {
    uint32_t words[4];
    FILE *fp = fopen("/dev/urandom", "rb");
    if (!fp) return nmt_error_set("/dev/urandom: %s", strerror(errno));
    size_t got = fread(words, sizeof words, 1, fp);
    fclose(fp);
    if (got != 1) return nmt_error_set("/dev/urandom: short read");
    seed_words(rng, words, 4);
    return 0;
}

uint64_t nmt_pcg64_next64(nmt_pcg64 *rng) {
    step(rng);
    uint64_t high = (uint64_t)(rng->state >> 64), low = (uint64_t)rng->state;
    unsigned rot = (unsigned)(rng->state >> 122);
    uint64_t x = high ^ low;
    return (x >> rot) | (x << ((64 - rot) & 63));
}

uint32_t nmt_pcg64_next32(nmt_pcg64 *rng) {
    if (rng->has_buffered) {
        rng->has_buffered = 0;
        return rng->buffered;
    }
    uint64_t next = nmt_pcg64_next64(rng);
    rng->has_buffered = 1;
    rng->buffered = (uint32_t)(next >> 32);
    return (uint32_t)next;
}

uint32_t nmt_pcg64_below(nmt_pcg64 *rng, uint64_t n) {
    if (n <= 1) return 0;
    if (n == (uint64_t)1 << 32) return nmt_pcg64_next32(rng);
    uint32_t bound = (uint32_t)n;
    uint64_t m = (uint64_t)nmt_pcg64_next32(rng) * bound;
    uint32_t leftover = (uint32_t)m;
    if (leftover < bound) {
        uint32_t threshold = (uint32_t)(UINT32_MAX - (bound - 1)) % bound;
        while (leftover < threshold) {
            m = (uint64_t)nmt_pcg64_next32(rng) * bound;
            leftover = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

int nmt_pcg64_bit(nmt_pcg64 *rng) {
    if (rng->bit_count == 0) {
        rng->bits = nmt_pcg64_next32(rng);
        rng->bit_count = 31;
    } else {
        rng->bits >>= 1;
        rng->bit_count--;
    }
    return (int)(rng->bits & 1);
}

void nmt_pcg64_bits_reset(nmt_pcg64 *rng) {
    rng->bits = 0;
    rng->bit_count = 0;
}
