/* align: the hard alignment of a translation as pairs of source and target positions, counted in
 * SentencePiece pieces or in words (what `nmt translate --print-alignment` writes).
 *
 * Words are the pieces merged at SentencePiece's word boundaries: a piece that begins with U+2581
 * ("▁", the marker of a preceding space) starts a new word, and so does the first piece. The words
 * are then those of the detokenized text split at spaces. A pair (s, t) says that target position t
 * attends most to source position s (nmt_hypothesis_alignment); for words, every such piece pair
 * gives the pair of their words, once. Positions are 0-based.
 */
#ifndef NMT_ALIGN_H
#define NMT_ALIGN_H

#include <stdint.h>

#include "infer/search.h"
#include "text/spm.h"

/* word[i] = the word of piece i (0-based) for i < n; returns the number of words. */
int nmt_align_words(const nmt_spm *spm, const int32_t *ids, int n, int *word);

/* The alignment of hypothesis h (with attention) of the source src[src_len] as pairs[2k] = source,
 * pairs[2k + 1] = target, sorted by target then source, no pair twice; in pieces, or in words when
 * `words` (spm needed then). pairs holds room for 2 * h->length ints. Returns the number of pairs, or
 * -1 when memory runs out. */
int nmt_align_pairs(const nmt_hypothesis *h, const int32_t *src, int src_len, const nmt_spm *spm, int words,
                    int *pairs);

#endif
