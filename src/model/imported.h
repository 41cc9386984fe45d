/* imported: what the readers of other toolkits' models share (ct2.h, marian.h): the token vocabulary
 * of a model whose ids were renumbered to nmt's, and giving back what a failed read left.
 *
 * A reader renumbers each side's vocabulary so that the specials sit at vocab.h's ids (the other
 * pieces after them in their order); from[id] names the toolkit's id each nmt id takes its rows from.
 */
#ifndef NMT_IMPORTED_H
#define NMT_IMPORTED_H

#include <stdint.h>

#include "model/model.h"
#include "text/spm.h"

/* One side of an imported vocabulary. */
typedef struct nmt_imported_side {
    char *const *pieces;  /* the toolkit's pieces, by its ids */
    const int32_t *from;  /* [count]: the toolkit's id of each nmt id, -1 for none */
    int count;            /* nmt ids of this side */
} nmt_imported_side;

/* The token vocabulary of the model's vocab_size ids (nmt_spm_tokens_sides with source_spm and
 * target_spm, NULL: pieces separated by spaces): each id's pieces on each side, "" where a side has
 * none; the source's pad never matches input, so that no input piece reads as padding. The model
 * records it as its vocabulary (vocab_fingerprint). */
int nmt_imported_spm(const nmt_imported_side *source, const nmt_imported_side *target, const char *source_spm,
                     const char *target_spm, nmt_model *model, nmt_spm **spm);
/* Frees what a failed read left in *model and *spm, and clears both. */
void nmt_imported_release(nmt_model *model, nmt_spm **spm);

#endif
