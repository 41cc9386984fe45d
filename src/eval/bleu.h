/* bleu: corpus and sentence BLEU exactly as sacreBLEU 2.x computes it, and the entry point to nmt's
 * scoring library (BLEU here, chrF in chrf.h, TER in ter.h, significance tests in metric.h).
 *
 * How BLEU is computed (Papineni et al. 2002, as sacreBLEU does it):
 *   1. Each line is lowercased if asked (Python's str.lower), stripped of trailing whitespace and
 *      tokenized (tokenize.h: 13a by default), then split into words on Unicode whitespace.
 *   2. Per segment, for n = 1..4: the hypothesis has total[n] n-grams; correct[n] of them are matched,
 *      each distinct n-gram counting at most as often as it occurs in the reference where it occurs
 *      most. hyp_len is the hypothesis word count; ref_len the length of the reference closest to
 *      it (the shorter one on a tie).
 *   3. These 2 + 2*4 numbers (the segment's "statistics") are summed over the corpus, and
 *          BLEU = BP * exp( sum_n log(p_n) / N ),  p_n = 100 * correct[n] / total[n],
 *          BP   = 1 if hyp_len >= ref_len, else exp(1 - ref_len / hyp_len)  (0 for an empty output).
 *      Smoothing decides p_n when correct[n] is 0: exp (default; 1/2, 1/4, ... of 100/total[n]),
 *      floor (smooth_value, default 0.1, instead of the zero count), add-k (k, default 1, added to
 *      correct and total for n > 1), none (log 0 is taken as -9999999999, so BLEU becomes 0).
 *      With effective_order (used for sentence BLEU) orders without any hypothesis n-gram are left
 *      out of N. A corpus without a single matched unigram..4-gram scores 0.
 *
 * Using it (e.g. validation BLEU in the trainer):
 *
 *     nmt_bleu_options opt = nmt_bleu_options_default();   // 13a, mixed case, exp smoothing, N = 4
 *     nmt_bleu *bleu = nmt_bleu_create(&opt);
 *     for each sentence:
 *         const char *refs[] = {reference};
 *         if (nmt_bleu_add(bleu, hypothesis, refs, 1) < 0) ...nmt_error()...
 *     nmt_bleu_score score;
 *     nmt_bleu_result(bleu, &score);          // score.score is BLEU in [0, 100]
 *     char sig[256];
 *     nmt_bleu_signature(bleu, 0, sig, sizeof sig);  // "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:..."
 *     nmt_bleu_free(bleu);
 *
 * or in one call: nmt_bleu_corpus(&opt, hyps, refs, n, nrefs, &score). Text must be valid UTF-8
 * (the CLI checks it). Nothing here prints; errors are reported through nmt_error().
 */
#ifndef NMT_BLEU_H
#define NMT_BLEU_H

#include "eval/pynum.h"
#include "eval/signature.h"
#include "eval/tokenize.h"

#include <stddef.h>

#define NMT_BLEU_MAX_ORDER 16
/* Statistics per segment: hyp_len, ref_len, correct[order], total[order]. */
#define NMT_BLEU_STATS(order) (2 + 2 * (order))

typedef enum nmt_bleu_smooth {
    NMT_BLEU_SMOOTH_EXP,
    NMT_BLEU_SMOOTH_FLOOR,
    NMT_BLEU_SMOOTH_ADD_K,
    NMT_BLEU_SMOOTH_NONE,
} nmt_bleu_smooth;

typedef struct nmt_bleu_options {
    nmt_tokenizer tokenizer;  /* NMT_TOKENIZE_13A */
    int lowercase;            /* 0: case-sensitive ("case:mixed") */
    nmt_bleu_smooth smooth;   /* NMT_BLEU_SMOOTH_EXP */
    double smooth_value;      /* < 0: the method's default (floor 0.1, add-k 1) */
    int effective_order;      /* 0 for corpus BLEU; sentence BLEU uses 1 */
    int max_order;            /* 4; at most NMT_BLEU_MAX_ORDER */
} nmt_bleu_options;

nmt_bleu_options nmt_bleu_options_default(void);
/* Parses sacreBLEU's smoothing names "exp", "floor", "add-k", "none"; -1 with the error set. */
int nmt_bleu_smooth_parse(const char *name, nmt_bleu_smooth *out);

typedef struct nmt_bleu_score {
    double score;                           /* BLEU, 0..100 */
    double precisions[NMT_BLEU_MAX_ORDER];  /* p_n in percent, as shown in the verbose line */
    double correct[NMT_BLEU_MAX_ORDER];     /* after add-k smoothing, if any */
    double total[NMT_BLEU_MAX_ORDER];
    double bp;                              /* brevity penalty */
    double ratio;                           /* hyp_len / ref_len (0 when ref_len is 0) */
    long hyp_len, ref_len;
    int order;
} nmt_bleu_score;

/* BLEU from summed statistics stats[NMT_BLEU_STATS(options->max_order)] (arith: NMT_PYNUM_PYTHON
 * unless reproducing sacreBLEU's resampling tests, see pynum.h). */
void nmt_bleu_compute(const nmt_bleu_options *options, const double *stats, nmt_pynum_arith arith,
                      nmt_bleu_score *score);

/* sacreBLEU's verbose part: "p1/p2/p3/p4 (BP = 1.000 ratio = 1.000 hyp_len = 7 ref_len = 7)" into
 * out[0..size); returns the length it needs. */
size_t nmt_bleu_verbose(const nmt_bleu_score *score, char *out, size_t size);

typedef struct nmt_bleu nmt_bleu;

/* A BLEU scorer holding its options, scratch buffers and the running corpus sums. NULL when out of
 * memory or when the options are invalid (error set). */
nmt_bleu *nmt_bleu_create(const nmt_bleu_options *options);
void nmt_bleu_free(nmt_bleu *bleu);
const nmt_bleu_options *nmt_bleu_get_options(const nmt_bleu *bleu);

/* The statistics of one segment (texts with explicit lengths) into stats[NMT_BLEU_STATS(order)];
 * does not touch the corpus sums. 0, or -1 when out of memory. */
int nmt_bleu_segment(nmt_bleu *bleu, const char *hyp, size_t hyp_len, const char *const *refs,
                     const size_t *ref_lens, int nrefs, double *stats);

/* Adds one segment (NUL-terminated texts) to the corpus sums. 0 or -1. */
int nmt_bleu_add(nmt_bleu *bleu, const char *hyp, const char *const *refs, int nrefs);
/* The corpus score of everything added so far. */
void nmt_bleu_result(const nmt_bleu *bleu, nmt_bleu_score *score);
/* Forgets the added segments (keeps options and buffers). */
void nmt_bleu_clear(nmt_bleu *bleu);

/* The metric's own signature fields (case, eff, tok, smooth) into fields[4]; returns 4. */
int nmt_bleu_signature_fields(const nmt_bleu_options *options, nmt_signature_field *fields);
/* The signature of the segments added so far ("nrefs:var" when their reference counts differed);
 * short_form abbreviates. Returns the length it needs (see nmt_signature_format). */
size_t nmt_bleu_signature(const nmt_bleu *bleu, int short_form, char *out, size_t size);

/* One call: corpus BLEU of hyps[i] against refs[i][0..nrefs), i < n. 0 or -1. */
int nmt_bleu_corpus(const nmt_bleu_options *options, const char *const *hyps, const char *const *const *refs,
                    size_t n, int nrefs, nmt_bleu_score *score);

#endif
