/* inline_tags: the inline markup of a translated block of HTML put back around the target words that
 * translate the source words it wrapped, through the word alignment (as Bergamot does for Firefox).
 *
 * A block's text is translated as one text; its inline elements (b, i, a, span...) are recorded as
 * tags at byte offsets of the source text. Words are the runs of non-space bytes of each text (so
 * word k is the k-th space-separated word, as SentencePiece's words are, serve's join counts them over
 * the block's sentences). An alignment pair (s, t) says target word t translates source word s.
 *
 * Each tag covers the source words its content overlaps; on the target side it covers from the first
 * to the last target word aligned to any of them. Punctuation that leads or trails a word stays
 * outside the tag in the target when it was outside in the source: a tag that starts after a word's
 * leading punctuation (or at a word that has none) starts after the target word's leading punctuation,
 * and one that ends before a word's trailing punctuation ("<b>tea</b>.", or "<b>car</b>" when the
 * target word is "Auto.") ends before the target word's. A tag whose words align to nothing, or that
 * wraps no word (<img>, <b></b>, an element left untranslated), stands right after the target words of
 * the nearest aligned source word before it (or before those of the nearest one after it, or at the
 * start). Then the tree is made consistent, parents first: a child is clamped into its parent, and
 * siblings that would overlap are moved, in target order, to start where the one before ends. So every
 * tag of the input appears exactly once in the output, children inside their parents, siblings
 * disjoint: the output is properly nested whenever the input was, and nothing is dropped or
 * duplicated. Without alignment pairs, target word t is taken to translate source word t * m / n (m
 * source and n target words): the tags keep their relative places.
 */
#ifndef NMT_SERVE_INLINE_TAGS_H
#define NMT_SERVE_INLINE_TAGS_H

#include <stddef.h>

#include "base/strbuf.h"

typedef struct nmt_serve_inline_tag {
    size_t begin, end;      /* the content's bytes in the source text: the start tag stands at begin, the
                               end tag at end (begin == end: it wraps nothing) */
    const char *open;       /* the start tag's markup, or the whole of a void or untranslated element */
    size_t open_len;        /* 0: no start tag in this block (it opened before) */
    const char *close;      /* the end tag's markup */
    size_t close_len;       /* 0: no end tag in this block (unclosed, or a void element) */
    int parent;             /* the enclosing tag's index, or -1; a parent comes before its children and
                               its [begin, end) holds theirs */
} nmt_serve_inline_tag;

/* Appends to out the target text (plain text, escaped for HTML: & < >) with tags[0..n) of the source
 * text placed by the word alignment pairs[0..2 * pair_count) (source word, target word; NULL: none, the
 * proportional placement; pairs naming no word are skipped). Returns 0, or -1 when memory ran out. */
int nmt_serve_inline_tags(const char *source, const nmt_serve_inline_tag *tags, int n, const char *target,
                          const int *pairs, int pair_count, nmt_strbuf *out);

/* word[p] = the word of SentencePiece piece p of pieces[0..n) (a piece that starts with U+2581, and the
 * first, starts a new word: the words of the detokenized text split at spaces); returns the number of
 * words. What a server gives segment's join as source_word and target_word. */
int nmt_serve_inline_piece_words(const char *const *pieces, int n, int *word);

#endif
