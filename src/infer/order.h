/* order: the length order in which the translator and forced scoring batch sentences.
 *
 * Sentences of similar length share a batch, so it wastes little on padding; each entry keeps the
 * sentence's index, so results go back to the input order. Ties go to the smaller index, so the
 * order (and every batch) is deterministic.
 */
#ifndef NMT_ORDER_H
#define NMT_ORDER_H

/* A sentence's place in the length order. */
typedef struct nmt_order_entry {
    int length; /* the sort key: pieces (of one side or of a pair) */
    int index;  /* the sentence's position in the input */
} nmt_order_entry;

/* Sorts entries[count] by length, then index. */
void nmt_order_sort(nmt_order_entry *entries, int count);

#endif
