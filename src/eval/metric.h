/* metric: BLEU, chrF and TER behind one interface, and sacreBLEU's significance tests.
 *
 * A metric turns one segment (a hypothesis and its references) into a short vector of statistics
 * (counts for BLEU and chrF, edits and length for TER); a corpus score is computed from the sum of
 * those vectors. Keeping the per-segment vectors (rows of nmt_metric_stat_count() doubles) is what
 * the resampling tests need:
 *
 *   bootstrap (-ci, --paired-bs)  resample the segments with replacement `samples` times and score
 *       each resample; sacreBLEU draws the indices with numpy.random.default_rng(seed).choice and
 *       sums numpy float32 arrays, and nmt reproduces both (pcg64.h, NMT_PYNUM_FLOAT32), so the same
 *       seed gives the same numbers. (The float32 arithmetic is NumPy 1.x's, checked against 1.24;
 *       NumPy 2 promotes Python scalars differently (NEP 50), which should move sacreBLEU's own
 *       resampled scores around the 7th significant digit; not checked, NumPy 2 was not at hand.)
 *       CI: sort the scores, half the distance between the n//40-th lowest and highest; mean:
 *       Python's exact statistics.mean for -ci, numpy's pairwise mean for the paired test.
 *   paired bootstrap p-value: over the same resamples, d_i = |score_sys - score_base|; the p-value
 *       is (#{d_i - mean(d) > |actual difference|} + 1) / (samples + 1).
 *   approximate randomization (--paired-ar): per trial, swap each segment's statistics between the
 *       two systems with probability 1/2 (numpy's integers(2, dtype=bool) bits); p as above from
 *       |score_a - score_b| of the pseudo systems.
 */
#ifndef NMT_METRIC_H
#define NMT_METRIC_H

#include "eval/bleu.h"
#include "eval/chrf.h"
#include "eval/pynum.h"
#include "eval/signature.h"
#include "eval/ter.h"

#include <stddef.h>
#include <stdint.h>

typedef enum nmt_metric_kind {
    NMT_METRIC_BLEU,
    NMT_METRIC_CHRF,
    NMT_METRIC_TER,
} nmt_metric_kind;

typedef struct nmt_metric_options {
    nmt_bleu_options bleu;
    nmt_chrf_options chrf;
    nmt_ter_options ter;
} nmt_metric_options;

nmt_metric_options nmt_metric_options_default(void);
/* "bleu", "chrf", "ter" (sacreBLEU's -m names); -1 with the error set. */
int nmt_metric_parse(const char *name, nmt_metric_kind *out);

typedef struct nmt_metric nmt_metric;

nmt_metric *nmt_metric_create(nmt_metric_kind kind, const nmt_metric_options *options);
/* Another instance with the same kind and options (an instance is not for two threads at once). */
nmt_metric *nmt_metric_create_like(const nmt_metric *metric);
void nmt_metric_free(nmt_metric *metric);
nmt_metric_kind nmt_metric_kind_of(const nmt_metric *metric);
/* The score's name as sacreBLEU prints it: "BLEU", "chrF2", "chrF2++", "TER". */
const char *nmt_metric_name(const nmt_metric *metric);
int nmt_metric_stat_count(const nmt_metric *metric);

/* One segment's statistics into stats[nmt_metric_stat_count()]. 0 or -1. */
int nmt_metric_segment(nmt_metric *metric, const char *hyp, size_t hyp_len, const char *const *refs,
                       const size_t *ref_lens, int nrefs, double *stats);

/* The score from summed statistics; `verbose` (may be NULL) receives BLEU's verbose part
 * ("" for the others), `size` bytes at most. */
double nmt_metric_compute(const nmt_metric *metric, const double *stats, nmt_pynum_arith arith, char *verbose,
                          size_t size);

/* The metric's own signature fields, at most NMT_METRIC_MAX_FIELDS; returns their count. */
#define NMT_METRIC_MAX_FIELDS 8
int nmt_metric_signature_fields(const nmt_metric *metric, nmt_signature_field *fields);

/* Sums n rows of k statistics in order, as sacreBLEU's sum_of_lists does. */
void nmt_metric_sum(const double *stats, size_t n, int k, double *out);

/* The seed of a resampling test: a fixed integer (sacreBLEU's default 12345, or $SACREBLEU_SEED), or
 * fresh entropy when `random` ("seed:none"). */
typedef struct nmt_metric_seed {
    int random;
    uint64_t value;
} nmt_metric_seed;

/* Reads a seed: text NULL means sacreBLEU's 12345, "none" (any case) fresh entropy, else a
 * non-negative integer. `shown` receives the text the signature shows. 0, or -1 with the error set. */
int nmt_metric_seed_parse(const char *text, nmt_metric_seed *seed, char *shown, size_t size);

/* Bootstrap resampling of `systems` systems over the same n segments: with the indices of
 * numpy.random.default_rng(seed).choice(n, size=(samples, n)), scores[s][i] is the score of system s on
 * resample i (float32 sums, NMT_PYNUM_FLOAT32). stats[s] holds n rows. 0 or -1. */
int nmt_metric_bootstrap(const nmt_metric *metric, const double *const *stats, int systems, size_t n,
                         const nmt_metric_seed *seed, long samples, double *const *scores);

/* Approximate randomization: for each trial, the two pseudo systems mixing base and sys by numpy's
 * random bits; their scores go to a[trial] and b[trial]. 0 or -1. */
int nmt_metric_randomize(const nmt_metric *metric, const double *base, const double *sys, size_t n,
                         const nmt_metric_seed *seed, long trials, double *a, double *b);

/* Sorts scores[0..n) and returns the 95% interval's half width; *mean is Python's statistics.mean
 * (correctly rounded) or, with numpy_mean, numpy's pairwise-summed mean. */
double nmt_metric_ci(double *scores, long n, int numpy_mean, double *mean);

/* numpy's mean of a float64 array (pairwise summation, then division). */
double nmt_metric_numpy_mean(const double *x, long n);

/* sacreBLEU's _compute_p_value: (#{stats[i] > real} + 1) / (n + 1). */
double nmt_metric_p_value(const double *stats, long n, double real);

/* The paired bootstrap test of `sys` against `base` over `samples` resamples: the p-value and the
 * system's bootstrap mean and CI. base_score and sys_score are the actual corpus scores. 0 or -1. */
int nmt_metric_paired_bootstrap(const nmt_metric *metric, const double *base, const double *sys, size_t n,
                                const nmt_metric_seed *seed, long samples, double base_score, double sys_score,
                                double *p_value, double *mean, double *ci);

/* The paired approximate randomization test: its p-value. 0 or -1. */
int nmt_metric_paired_randomization(const nmt_metric *metric, const double *base, const double *sys, size_t n,
                                    const nmt_metric_seed *seed, long trials, double base_score, double sys_score,
                                    double *p_value);

#endif
