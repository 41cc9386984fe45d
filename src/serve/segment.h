/* segment: a request's texts cut into the segments the batcher decodes one by one -- lines, and
 * sentences within a line, or for HTML the stretches of text between its markup (serve/html.h) and
 * their sentences -- and the segments' translations put back together.
 *
 * A text is cut at each '\n' (and a '\r' before it) and, with `sentences`, after each sentence end
 * inside a line: '.', '!', '?' or '…', then any closing quotes or brackets, then spaces, then opening
 * quotes or brackets (including ¿ ¡) and an upper-case letter (of any cased script) or a digit -- except
 * after a '.' that ends a nonbreaking prefix of the language (serve/prefixes.h: "Dr.", "z.B.", "No."
 * before a number) or an upper-case acronym ("U.S."), Moses' rule. So "A man sits. A dog runs." becomes
 * two segments while "e.g. this", "Mr. Smith" and "3.5 m" stay whole. Joining puts each line break
 * back as it was ("\n" or "\r\n"; blank lines are empty segments) and one space between sentences; in HTML each stretch of text is decoded first (character references, white
 * space) and its translation is escaped and put back between the markup it came from, unchanged; hypothesis k of a text is made of the k-th hypothesis of each segment (scores and
 * log-probabilities summed) over the fewest hypotheses a segment has, and alignment pairs are offset
 * by the pieces of the segments before.
 */
#ifndef NMT_SERVE_SEGMENT_H
#define NMT_SERVE_SEGMENT_H

#include "serve/request.h"

typedef struct nmt_serve_segments {
    char *copy;            /* the texts cut in place; for HTML their markup and decoded text */
    const char **segments; /* [count] NUL-terminated, pointing into copy */
    const char **glue;     /* [count] what goes before segment s when joined: "" for a text's first, "\n" or
                              " " after another, or for HTML the markup before it */
    const char **tail;     /* [texts] what follows a text's last segment: "", or the markup after it */
    int *first;            /* [texts + 1]: text i is segments first[i] .. first[i + 1] - 1 (none for
                              HTML that holds no text) */
    int count;
    int html;              /* the texts are HTML: translations are escaped when joined */
} nmt_serve_segments;

enum { NMT_SERVE_MAX_SEGMENTS = 100000 };

/* Cuts texts[0..n) (HTML when `html`), into sentences too when `sentences`, by the rules of language
 * `lang` (a code such as "en"; NULL or unknown: English's, serve/prefixes.h); fails with a message beyond NMT_SERVE_MAX_SEGMENTS segments or
 * NMT_SERVE_HTML_MAX_DEPTH nested elements. */
int nmt_serve_segment(const char *const *texts, int n, int sentences, int html, const char *lang,
                      nmt_serve_segments *out);
void nmt_serve_segments_free(nmt_serve_segments *s);
/* Joins parts[0..s->count) (the segments' translations) into out[0..n) (free each with
 * nmt_serve_text_free). */
int nmt_serve_join(const nmt_serve_segments *s, int n, const nmt_serve_text *parts, nmt_serve_text *out);
void nmt_serve_text_free(nmt_serve_text *t);

#endif
