/* chrf: chrF and chrF++ (Popović 2015, 2017) exactly as sacreBLEU 2.x computes them.
 *
 * Per segment and per reference, for character n-grams of orders 1..char_order (6) and, for chrF++,
 * word n-grams of orders 1..word_order (2): the hypothesis n-gram count, the reference n-gram count and
 * the matches (each n-gram clipped to its reference count). Characters are code points of the line
 * with all whitespace removed (kept with `whitespace`); words are the whitespace-separated words with
 * one ASCII punctuation mark split off their end (or else their start), as chrF++.py does. A
 * hypothesis count is reported as 0 for an order where the reference has no n-gram.
 * The segment keeps the statistics of the reference with the best sentence chrF (the first on a
 * tie). The corpus statistics are the sums, and
 *     P_n = matches / hyp,  R_n = matches / ref,
 *     P, R = averages over the orders where both counts are non-zero (the "effective order"),
 *     chrF = 100 * (1 + beta^2) P R / (beta^2 P + R).
 * With eps_smoothing, each order's F_n is computed with 1e-16 for missing counts and chrF is
 * 100 * mean(F_n), as chrF++.py, NLTK and Moses do.
 */
#ifndef NMT_CHRF_H
#define NMT_CHRF_H

#include "eval/pynum.h"
#include "eval/signature.h"

#include <stddef.h>

#define NMT_CHRF_MAX_ORDER 64 /* char_order + word_order */

typedef struct nmt_chrf_options {
    int char_order;    /* 6 */
    int word_order;    /* 0 (2 for chrF++) */
    int beta;          /* 2 */
    int lowercase;     /* 0 */
    int whitespace;    /* 0: whitespace is not part of character n-grams */
    int eps_smoothing; /* 0 */
} nmt_chrf_options;

nmt_chrf_options nmt_chrf_options_default(void);

/* Statistics per segment: (hyp, ref, matches) for each order. */
static inline int nmt_chrf_stat_count(const nmt_chrf_options *options) {
    return 3 * (options->char_order + options->word_order);
}

/* The score (0..100) from summed statistics (arith: see pynum.h; with NMT_PYNUM_FLOAT32, P_n and R_n
 * are single-precision quotients, as numpy 1.x gives them in sacreBLEU's bootstrap). */
double nmt_chrf_compute(const nmt_chrf_options *options, const double *stats, nmt_pynum_arith arith);

/* The metric's name: "chrF2", "chrF2++" (one '+' per word order), into out (room for 32 bytes). */
void nmt_chrf_name(const nmt_chrf_options *options, char *out);

/* The metric's own signature fields (case, eff, nc, nw, space) into fields[5]; returns 5. */
int nmt_chrf_signature_fields(const nmt_chrf_options *options, nmt_signature_field *fields);

typedef struct nmt_chrf nmt_chrf;

/* NULL when out of memory or when the options are invalid (error set). */
nmt_chrf *nmt_chrf_create(const nmt_chrf_options *options);
void nmt_chrf_free(nmt_chrf *chrf);

/* The statistics of one segment into stats[nmt_chrf_stat_count()]. 0, or -1 when out of memory. */
int nmt_chrf_segment(nmt_chrf *chrf, const char *hyp, size_t hyp_len, const char *const *refs,
                     const size_t *ref_lens, int nrefs, double *stats);

#endif
