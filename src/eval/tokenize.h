/* tokenize: sacreBLEU's tokenizers, reproduced byte for byte.
 *
 * A metric's numbers depend on how a line is cut into tokens, so each tokenizer here gives exactly
 * the string that sacreBLEU 2.x gives for the same line (its Python source is the specification):
 *
 *   none   the line as it is.
 *   13a    mteval-v13a: drops "<skipped>", joins "-\n" and "\n", unescapes &quot; &amp; &lt; &gt;
 *          (in that order, when the line holds a '&'), then splits ASCII punctuation off, "." and ","
 *          unless next to a digit, and "-" after a digit.
 *   intl   mteval-v14 international: splits Unicode punctuation \p{P} off unless it sits between
 *          digits \p{N} on the relevant side, and every symbol \p{S}.
 *   char   every code point separated by a space.
 *   zh     spaces around each "Chinese" character, then the 13a punctuation rules (without 13a's
 *          unescaping and padding). The ranges are sacreBLEU's table read as Python compares
 *          strings: its entries '\u20000'..'\u2a6d6' and '\u2f800'..'\u2fa1d' are two-character
 *          strings, so they cover U+2001..U+2A6D and U+2F81..U+2FA1, and no astral character.
 *   tercom TER's normaliser (lowercasing, optional punctuation/CJK handling), see below.
 *
 * The output is the tokens joined by single spaces, without leading or trailing space (except
 * `none`, which returns the input). Words are then found with nmt_tokenize_split(), which is Python's
 * str.split(): runs of any Unicode whitespace (nmt_utf8_is_space) separate words.
 *
 * Input must be valid UTF-8 without NUL bytes being significant (lengths are explicit). Output goes
 * to a growable buffer that the caller reuses across lines, so steady-state tokenizing allocates
 * nothing.
 */
#ifndef NMT_TOKENIZE_H
#define NMT_TOKENIZE_H

#include "base/strbuf.h"

#include <stddef.h>
#include <stdint.h>

typedef enum nmt_tokenizer {
    NMT_TOKENIZE_NONE,
    NMT_TOKENIZE_13A,
    NMT_TOKENIZE_INTL,
    NMT_TOKENIZE_CHAR,
    NMT_TOKENIZE_ZH,
} nmt_tokenizer;

/* Parses a tokenizer name as sacreBLEU's -tok spells it. The names of tokenizers that need external
 * models (ja-mecab, ko-mecab, spm, flores101, flores200, spBLEU-1K) and unknown names give -1 with a
 * message saying why. */
int nmt_tokenize_parse(const char *name, nmt_tokenizer *out);
/* The name used in signatures: "none", "13a", "intl", "char", "zh". */
const char *nmt_tokenize_name(nmt_tokenizer tokenizer);

/* One word of a line: bytes [start, start + len). */
typedef struct nmt_tokenize_span {
    uint32_t start;
    uint32_t len;
} nmt_tokenize_span;

/* A growable array of spans; zero-initialise, release with nmt_tokenize_spans_free. */
typedef struct nmt_tokenize_spans {
    nmt_tokenize_span *items;
    size_t count;
    size_t cap;
} nmt_tokenize_spans;

/* Two scratch buffers for the tokenizers' intermediate passes. */
typedef struct nmt_tokenize_scratch {
    nmt_strbuf a, b;
} nmt_tokenize_scratch;
void nmt_tokenize_scratch_free(nmt_tokenize_scratch *scratch);

/* Tokenizes s[0..len) with `tokenizer` into out (replacing its contents). Returns 0 or -1 (memory). */
int nmt_tokenize(nmt_tokenizer tokenizer, const char *s, size_t len, nmt_strbuf *out,
                 nmt_tokenize_scratch *scratch);

/* The words that nmt_tokenize's output splits into, found without building that output: spans into
 * *text, which points into scratch (or into s). Faster when only the words are needed. 0 or -1. */
int nmt_tokenize_words(nmt_tokenizer tokenizer, const char *s, size_t len, nmt_tokenize_scratch *scratch,
                       const char **text, nmt_tokenize_spans *words);

/* TER's tokenizer (sacreBLEU's TercomTokenizer): lowercases unless case_sensitive; `normalized`
 * applies the western normalisation (unescaping, punctuation splitting, possessive 's) and, with
 * asian_support, splits CJK characters; `no_punct` removes .,?:;!"() (and CJK punctuation with
 * asian_support); finally whitespace is collapsed. */
typedef struct nmt_tokenize_tercom {
    int normalized;
    int no_punct;
    int asian_support;
    int case_sensitive;
} nmt_tokenize_tercom;

int nmt_tokenize_ter(const nmt_tokenize_tercom *options, const char *s, size_t len, nmt_strbuf *out,
                     nmt_tokenize_scratch *scratch);
/* Its words, as nmt_tokenize_words gives them. */
int nmt_tokenize_ter_words(const nmt_tokenize_tercom *options, const char *s, size_t len,
                           nmt_tokenize_scratch *scratch, const char **text, nmt_tokenize_spans *words);

/* Python's str.lower() into out; 0 or -1 (memory). */
int nmt_tokenize_lower(const char *s, size_t len, nmt_strbuf *out);

/* Length of s[0..len) without trailing Unicode whitespace (Python's str.rstrip()). */
size_t nmt_tokenize_rstrip(const char *s, size_t len);

/* Python's str.split() of s[0..len) (len < 4 GiB) into spans (replacing its contents). 0 or -1. */
int nmt_tokenize_split(const char *s, size_t len, nmt_tokenize_spans *spans);
void nmt_tokenize_spans_free(nmt_tokenize_spans *spans);

#endif
