/* prefixes: the nonbreaking prefixes of a language -- the words that, written with a final '.', do not
 * end a sentence (Moses' sentence splitter's rule, with nmt's own lists).
 *
 * Each language has two lists: prefixes that never end a sentence (titles such as "Dr" and "Mrs",
 * common abbreviations such as "e.g" or "z.B", month abbreviations, and for every language the single
 * capital letters A-Z of initials), and prefixes that do not end one only when a number follows
 * ("No. 5", "S. 12", "Art. 3"). Lists exist for en, de, fr, cs, es, it, pt and nl; any other code
 * (or none) gets English's. A code is matched on its primary subtag, case-insensitively ("en-GB",
 * "DE"). Words are matched case-sensitively, as written before the '.', and also with their first
 * letter lowered, for a lower-case abbreviation that starts a sentence ("Bijv.").
 */
#ifndef NMT_SERVE_PREFIXES_H
#define NMT_SERVE_PREFIXES_H

#include <stddef.h>

typedef enum nmt_serve_prefix {
    NMT_SERVE_PREFIX_NONE = 0,    /* not a prefix: its '.' may end a sentence */
    NMT_SERVE_PREFIX_ALWAYS = 1,  /* never ends a sentence */
    NMT_SERVE_PREFIX_NUMERIC = 2, /* does not end one before a number */
} nmt_serve_prefix;

typedef struct nmt_serve_prefixes nmt_serve_prefixes; /* one language's lists (static, never freed) */

/* The lists of language `lang` (NULL, "", or an unknown code: English's). */
const nmt_serve_prefixes *nmt_serve_prefixes_of(const char *lang);
/* The language code whose lists these are ("en"). */
const char *nmt_serve_prefixes_language(const nmt_serve_prefixes *p);
/* What word[0..n) (without its final '.') is in p. */
nmt_serve_prefix nmt_serve_prefixes_find(const nmt_serve_prefixes *p, const char *word, size_t n);

#endif
