/* guide: a line's target prefix and constraint phrases from text, and glossaries that turn the terms
 * found in a source line into constraints (what `nmt translate --prefix`, `--constraints` and
 * `--glossary` pass the search: search.h's nmt_decode_guide).
 *
 * Target text is encoded with the target tokenizer, each field on its own: a prefix as the start of
 * a translation, a phrase as SentencePiece encodes text at the start of a word (so a phrase matches
 * where it starts a word of the translation, not only after a space piece). A glossary is a TSV file
 * of `source term<TAB>target term` lines; a term occurs in a source line where it is found between
 * word boundaries (a boundary: the line's start or end, or a character that is neither an ASCII
 * letter or digit nor part of a non-ASCII character), after both are lowercased as Python's
 * str.lower() does unless the case is to match.
 */
#ifndef NMT_GUIDE_H
#define NMT_GUIDE_H

#include <stddef.h>
#include <stdint.h>

#include "infer/pipeline.h"
#include "infer/search.h"

/* One line's guide: its pieces (the prefix's, then each phrase's) and the views the search reads. */
typedef struct nmt_guide {
    int32_t *pieces;
    size_t count, cap;
    int prefix_length;
    int phrase_count;
    int sentences; /* of the source, nmt_guide_set_source's (0: one) */
    int lengths[NMT_CONSTRAINT_MAX];
    nmt_decode_phrase phrases[NMT_CONSTRAINT_MAX]; /* set by nmt_guide_finish */
    nmt_decode_guide guide;                        /* set by nmt_guide_finish */
    int32_t *scratch;                              /* one field's pieces */
    size_t scratch_cap;
} nmt_guide;

/* Empties g for the next line (its buffers are kept). */
void nmt_guide_reset(nmt_guide *g);
void nmt_guide_free(nmt_guide *g);
/* Encodes text[0..len) (valid UTF-8) as the prefix (g must hold nothing yet); empty text: none. */
int nmt_guide_set_prefix(nmt_guide *g, const nmt_tokenizer *target, const char *text, size_t len);
/* Encodes text[0..len) as one more phrase; empty text (or text of no pieces) adds nothing. More than
 * NMT_CONSTRAINT_MAX phrases is an error. */
int nmt_guide_add_phrase(nmt_guide *g, const nmt_tokenizer *target, const char *text, size_t len);
/* Ends line[0..*len) at its first tab (a NUL there): *fields is what follows the tab, *n its bytes, and
 * *len the source's; without a tab *fields is NULL and the line stays whole. */
void nmt_guide_split_line(char *line, size_t *len, const char **fields, size_t *n);
/* Reads a line's target fields, fields[0..len) after its first tab: with `prefix`, the first field is
 * the prefix; with `constraints`, each (further) field a phrase. Errors say which field. */
int nmt_guide_parse(nmt_guide *g, const nmt_tokenizer *target, int prefix, int constraints, const char *fields,
                    size_t len);
/* Counts the sentences of the source line text[0..len) for the search (search.h: a constrained
 * hypothesis's length penalty stops at as many sentence ends): runs of . ! ? that end the text or
 * stand before a space after two bytes of a word (so initials such as "J.P." end none), at least 1. */
void nmt_guide_set_source(nmt_guide *g, const char *text, size_t len);
/* Points g->guide at g's pieces (valid until g changes); returns 1 when g guides anything, else 0. */
int nmt_guide_finish(nmt_guide *g);
/* The pieces a guide forces: prefix and phrases. */
size_t nmt_guide_pieces(const nmt_guide *g);

typedef struct nmt_glossary nmt_glossary;

/* Reads the glossary at `path` (a bad line is an error naming PATH:LINE). */
int nmt_glossary_load(nmt_glossary **out, const char *path, int match_case);
/* The same from entries in memory: entry i is the source term terms[2i] and the target term
 * terms[2i + 1], for i < count (an entry that a line of the file could not hold, such as an empty
 * term or one with a tab, is an error naming "glossary entry I"). */
int nmt_glossary_create(nmt_glossary **out, size_t count, const char *const *terms, int match_case);
void nmt_glossary_free(nmt_glossary *glossary);
/* Entries in the file. */
size_t nmt_glossary_size(const nmt_glossary *glossary);
/* Adds to g, as phrases, the target term of each entry whose source term occurs in text[0..len)
 * (valid UTF-8), in the file's order, each distinct target term once. */
int nmt_glossary_apply(nmt_glossary *glossary, const char *text, size_t len, nmt_guide *g, const nmt_tokenizer *target);

#endif
