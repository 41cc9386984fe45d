/* ter: Translation Edit Rate (Snover et al. 2006) exactly as sacreBLEU 2.x computes it.
 *
 * TER = 100 * (edits) / (average reference length), summed over the corpus, where the edits of a
 * segment are the fewest insertions, deletions, substitutions and block shifts that turn the
 * hypothesis into its closest reference. Like tercom (and sacreBLEU's port of it), the shifts are
 * found greedily: repeatedly apply the shift that lowers the edit distance most (ties: the longer
 * block, then the earlier start, then the earlier target), among blocks of up to 10 words that
 * match the reference somewhere within 50 positions and are misaligned at both ends; stop when no
 * shift helps or after 1000 shift candidates per segment. The edit distance is a beam search of
 * width 25 around the length-scaled diagonal, with tercom's preference among equal-cost operations.
 * A segment's statistics are (fewest edits over the references, mean reference length); an empty
 * reference gives (hypothesis words, 0). Lines go through nmt_tokenize_ter() first (lowercased by
 * default).
 */
#ifndef NMT_TER_H
#define NMT_TER_H

#include "eval/pynum.h"
#include "eval/signature.h"
#include "eval/tokenize.h"

#include <stddef.h>
#include <stdint.h>

#define NMT_TER_STATS 2 /* edits, mean reference length */

typedef struct nmt_ter_options {
    int normalized;     /* 0 */
    int no_punct;       /* 0 */
    int asian_support;  /* 0 */
    int case_sensitive; /* 0 */
} nmt_ter_options;

nmt_ter_options nmt_ter_options_default(void);

/* The score from summed statistics (100 * edits / length; 100 for a non-empty hypothesis against
 * empty references, 0 when both are empty). arith: see pynum.h (NMT_PYNUM_FLOAT32 divides in single
 * precision, as sacreBLEU's bootstrap does on float32 arrays). */
double nmt_ter_compute(const double *stats, nmt_pynum_arith arith);

/* The metric's own signature fields (case, tok, norm, punct, asian) into fields[5]; returns 5. */
int nmt_ter_signature_fields(const nmt_ter_options *options, nmt_signature_field *fields);

typedef struct nmt_ter nmt_ter;

nmt_ter *nmt_ter_create(const nmt_ter_options *options);
void nmt_ter_free(nmt_ter *ter);

/* The edits that turn word sequence hyp into ref (words are compared as symbols), as sacreBLEU's
 * translation_edit_rate: shifts plus the final edit distance. -1 when out of memory, or when the
 * beam loses the alignment on a degenerate pair (where sacreBLEU raises an exception). */
long nmt_ter_edits(nmt_ter *ter, const uint32_t *hyp, size_t hyp_len, const uint32_t *ref, size_t ref_len);

/* The statistics of one segment into stats[NMT_TER_STATS]. 0 or -1. */
int nmt_ter_segment(nmt_ter *ter, const char *hyp, size_t hyp_len, const char *const *refs, const size_t *ref_lens,
                    int nrefs, double *stats);

#endif
