/* glossary: the `glossary` field of a LibreTranslate /translate request (nmt's extension), parsed and
 * bounded.
 *
 * JSON bodies give it as a list of [source term, target term] pairs or as an object {source: target};
 * forms give the same JSON as the field's text. At most NMT_SERVE_MAX_GLOSSARY pairs, each term
 * non-empty, at most NMT_SERVE_MAX_TERM bytes, without a tab or a line break (the engine matches a
 * source term inside one line); a bad entry is refused naming the field and its index from 0
 * ("glossary[3]: the source term is empty"). An empty list or object is no glossary.
 */
#ifndef NMT_SERVE_GLOSSARY_H
#define NMT_SERVE_GLOSSARY_H

#include "base/json.h"

enum { NMT_SERVE_MAX_GLOSSARY = 1000, NMT_SERVE_MAX_TERM = 256 };

typedef struct nmt_serve_glossary {
    char **terms; /* [2 * size]: each pair's source term, then its target term */
    int size;     /* pairs */
    int given;    /* the field was present (a second one is refused) */
} nmt_serve_glossary;

/* Reads the JSON value at j into g (free g with nmt_serve_glossary_free, also after a failure). */
int nmt_serve_glossary_json(nmt_json *j, nmt_serve_glossary *g);
/* The same from a form field's text (len bytes). */
int nmt_serve_glossary_text(const char *text, size_t len, nmt_serve_glossary *g);
void nmt_serve_glossary_free(nmt_serve_glossary *g);

#endif
