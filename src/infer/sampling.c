/* sampling: temperature, top-k and nucleus draws from a row of log-probabilities (sampling.h). */
#include "infer/sampling.h"

#include "base/random.h"
#include "base/util.h"
#include "compute/kernels.h"
#include "text/vocab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

nmt_sampling nmt_sampling_default(void) {
    return (nmt_sampling){.enabled = 0, .top_k = 0, .top_p = 1.0, .temperature = 1.0, .seed = 1};
}

int nmt_sampling_check(const nmt_sampling *s) {
    if (s->top_k < 0) return nmt_error_set("sampling top-k must be >= 0 (0: every token), got %d", s->top_k);
    if (!(s->top_p > 0 && s->top_p <= 1)) return nmt_error_set("sampling top-p must be in (0, 1], got %g", s->top_p);
    if (!isfinite(s->temperature) || !(s->temperature > 0) || s->temperature > 1000)
        return nmt_error_set("sampling temperature must be > 0 and at most 1000, got %g", s->temperature);
    return 0;
}

double nmt_sampling_uniform(uint64_t seed, uint64_t key, int position) {
    const uint64_t stream = nmt_random_mix(seed ^ nmt_random_mix(key + NMT_RANDOM_GAMMA));
    return (double)(nmt_random_at(stream, (uint64_t)position) >> 11) * 0x1p-53;
}

/* Buckets of a quarter binade each, bucket 0 holding probabilities from 2^-0.25 to 1 (more
 * probable tokens in lower buckets); the last takes everything below 2^-63.75. */
enum { BUCKETS = 256 };

static int bucket_of(float p) {
    uint32_t bits;
    memcpy(&bits, &p, sizeof bits);
    if (bits >= 0x3F800000u) return 0; /* 1, or above it by rounding */
    const uint32_t b = (0x3F800000u - bits) >> 21;
    return b < BUCKETS ? (int)b : BUCKETS - 1;
}

static int more_probable_first(const void *a, const void *b) {
    const nmt_sampling_candidate *x = a, *y = b;
    if (x->p != y->p) return x->p > y->p ? -1 : 1;
    return (x->token > y->token) - (x->token < y->token);
}

/* The kept tokens of a restricted draw into c, most probable first; returns how many. */
static int keep(const nmt_sampling *s, const float *p, int V, nmt_sampling_candidate *c) {
    double mass[BUCKETS] = {0}, total = 0;
    int count[BUCKETS] = {0};
    for (int i = 0; i < V; i++)
        if (p[i] > 0) {
            const int b = bucket_of(p[i]);
            mass[b] += p[i];
            count[b]++;
            total += p[i];
        }
    /* The bucket in which the top k end, or (no top-k) the nucleus of the whole distribution. */
    int last = 0;
    double cum = 0;
    for (long seen = 0; last < BUCKETS - 1; last++) {
        seen += count[last];
        cum += mass[last];
        if (s->top_k > 0 ? seen >= s->top_k : cum >= s->top_p * total) break;
    }
    int n = 0;
    for (int i = 0; i < V; i++)
        if (p[i] > 0 && bucket_of(p[i]) <= last) c[n++] = (nmt_sampling_candidate){p[i], i};
    qsort(c, (size_t)n, sizeof *c, more_probable_first);
    if (s->top_k > 0 && n > s->top_k) n = s->top_k;
    double kept_mass = 0;
    for (int i = 0; i < n; i++) kept_mass += c[i].p;
    if (s->top_p < 1) {
        const double want = s->top_p * (s->top_k > 0 ? kept_mass : total);
        double prefix = 0;
        int m = 0;
        while (m < n && prefix < want) prefix += c[m++].p;
        n = m;
    }
    return n;
}

int32_t nmt_sampling_draw(const nmt_sampling *s, const float *logprobs, int V, uint64_t key, int position,
                          nmt_sampling_scratch scratch) {
    float *p = scratch.probs;
    const float inverse_t = (float)(1.0 / s->temperature);
    int finite = 0;
    for (int i = 0; i < V; i++) {
        const int never = i == NMT_PAD || i == NMT_BOS || !isfinite(logprobs[i]);
        p[i] = never ? -INFINITY : logprobs[i] * inverse_t;
        finite |= !never;
    }
    if (!finite) return -1;
    nmt_softmax_rows(p, 1, V);
    const double u = nmt_sampling_uniform(s->seed, key, position);
    if (s->top_k == 0 && s->top_p >= 1) { /* every token, in id order */
        double total = 0, cum = 0;
        int32_t last = -1;
        for (int i = 0; i < V; i++) total += p[i];
        for (int i = 0; i < V; i++) {
            if (!(p[i] > 0)) continue;
            last = i;
            cum += p[i];
            if (cum > u * total) return i;
        }
        return last; /* u * total above the sum by rounding */
    }
    nmt_sampling_candidate *c = scratch.candidates;
    const int n = keep(s, p, V, c);
    if (n == 0) return -1;
    double total = 0, cum = 0;
    for (int i = 0; i < n; i++) total += c[i].p;
    for (int i = 0; i < n; i++) {
        cum += c[i].p;
        if (cum > u * total) return c[i].token;
    }
    return c[n - 1].token;
}
