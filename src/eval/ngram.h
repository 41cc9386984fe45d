/* ngram: exact n-gram matching between one hypothesis and its references, for BLEU and chrF.
 *
 * Both metrics ask the same question per segment: for every n-gram order, how many hypothesis
 * n-grams are there, and how many of them are matched by a reference when each n-gram's count is
 * clipped to its count in the reference (chrF: one reference at a time; BLEU: the largest count
 * over all references). Keys are sequences of 32-bit symbols: code points for character n-grams,
 * ids from nmt_ngram_vocab for words. Matching is exact (symbols are compared, hashes only
 * find candidates), so no collision can change a count.
 *
 * Use per segment:
 *     nmt_ngram_table_reset(t, hyp_ngram_count);
 *     nmt_ngram_table_add_hyp(t, hyp, hyp_len, max_order, slot0);          (once per key kind)
 *     for each reference r = 1, 2, ...:
 *         nmt_ngram_table_match_ref(t, ref, ref_len, max_order, slot0, r, mode, matched);
 * A `slot` tells key kinds apart in one table (chrF keeps character orders in slots 0..5 and word
 * orders after them); n-grams of order n go to slot slot0 + n - 1, and `matched[slot]` counts.
 *
 * The clipped count grows by one each time a reference occurrence raises the reference count while
 * it is still at most the hypothesis count, so references are streamed once and never stored:
 *   NMT_NGRAM_PER_REFERENCE  min(hyp count, this reference's count)     (chrF)
 *   NMT_NGRAM_MAX_REFERENCE  min(hyp count, max over references so far) (BLEU)
 * A reference n-gram whose (n-1)-prefix is not in the hypothesis cannot be either, so matching
 * stops extending at the first miss.
 *
 * Layout: hypothesis n-grams form a trie stored in a hash table. An n-gram is the pair (id of its
 * (n-1)-gram prefix, last symbol), one 64-bit key compared exactly, and gets a dense id; counts live
 * in arrays indexed by id. The table of 16-byte entries stays small enough for the L1 cache.
 */
#ifndef NMT_NGRAM_H
#define NMT_NGRAM_H

#include <stddef.h>
#include <stdint.h>

typedef enum nmt_ngram_clip {
    NMT_NGRAM_PER_REFERENCE,
    NMT_NGRAM_MAX_REFERENCE,
} nmt_ngram_clip;

typedef struct nmt_ngram_entry nmt_ngram_entry;

typedef struct nmt_ngram_table {
    nmt_ngram_entry *entries;
    size_t capacity;     /* allocated entries */
    size_t mask;         /* entries in use this segment - 1, a power of two - 1 */
    uint32_t generation; /* entries of other generations are empty: a reset is O(1) */
    /* per n-gram id, for the current segment */
    uint32_t *hyp_count, *ref_count, *ref_number, *ref_max;
    uint16_t *slot;
    size_t ids, ids_cap;
} nmt_ngram_table;

/* Empties the table and sizes it for up to `count` distinct n-grams. 0, or -1 when out of memory. */
int nmt_ngram_table_reset(nmt_ngram_table *table, size_t count);
void nmt_ngram_table_free(nmt_ngram_table *table);

/* Counts every n-gram of orders 1..max_order of seq[0..len). */
void nmt_ngram_table_add_hyp(nmt_ngram_table *table, const uint32_t *seq, size_t len, int max_order, int slot0);

/* Matches the n-grams of one reference; `ref_number` is 1 for the first reference of the segment,
 * 2 for the next, ...; adds the clipped matches of order n to matched[slot0 + n - 1]. */
void nmt_ngram_table_match_ref(nmt_ngram_table *table, const uint32_t *seq, size_t len, int max_order, int slot0,
                               uint32_t ref_number, nmt_ngram_clip clip, long *matched);

/* Number of n-grams of orders 1..max_order in a sequence of `len` symbols. */
size_t nmt_ngram_count(size_t len, int max_order);

/* Interns byte strings (words) as dense ids 0, 1, 2, ...: equal strings get equal ids. */
typedef struct nmt_ngram_vocab {
    uint32_t *slots;  /* hash table of id + 1 (0 = empty) */
    size_t mask;
    char *bytes;      /* the words, back to back */
    size_t bytes_len, bytes_cap;
    struct nmt_ngram_word { uint64_t hash; size_t offset; uint32_t len; } *words;
    size_t count, words_cap;
} nmt_ngram_vocab;

/* Forgets all words (keeps the memory). */
void nmt_ngram_vocab_reset(nmt_ngram_vocab *vocab);
/* The id of s[0..len), adding it when new; -1 when out of memory. */
int nmt_ngram_vocab_id(nmt_ngram_vocab *vocab, const char *s, size_t len, uint32_t *id);
void nmt_ngram_vocab_free(nmt_ngram_vocab *vocab);

#endif
