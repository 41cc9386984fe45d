/* segment: a request's texts cut into the segments the batcher decodes one by one -- lines, and
 * sentences within a line, or for HTML the blocks of text between its block-level markup
 * (serve/html.h) and their lines and sentences -- and the segments' translations put back together.
 *
 * A text is cut at each '\n' (and a '\r' before it) and, with `sentences`, after each sentence end
 * inside a line: '.', '!', '?' or '…', then any closing quotes or brackets, then spaces, then opening
 * quotes or brackets (including ¿ ¡) and an upper-case letter (of any cased script) or a digit -- except
 * after a '.' that ends a nonbreaking prefix of the language (serve/prefixes.h: "Dr.", "z.B.", "No."
 * before a number) or an upper-case acronym ("U.S."), Moses' rule. So "A man sits. A dog runs." becomes
 * two segments while "e.g. this", "Mr. Smith" and "3.5 m" stay whole. Joining puts each line break
 * back as it was ("\n" or "\r\n"; blank lines are empty segments) and one space between sentences.
 *
 * HTML: a block is a run of text and inline elements (b, i, a, span... and void or untranslated inline
 * elements such as img and code) between other markup; an end tag whose start tag came before the
 * block ends it too (it may close elements around the block). Its text (character references decoded, white
 * space collapsed outside <pre>, no space kept at its ends) is cut as above, and its inline tags are
 * recorded at their offsets in it. Joining puts each block's markup before it, then the translation of
 * its text (its segments' translations joined) escaped, with its inline tags placed by
 * serve/inline_tags.h: through the word alignment when each segment brings its piece pairs and the
 * words of its pieces (source_word, target_word: only for the best hypothesis), else by relative place.
 * Markup between blocks, and blocks without a letter or digit, are kept as they were.
 *
 * Hypothesis k of a text is made of the k-th hypothesis of each segment (scores and log-probabilities
 * summed) over the fewest hypotheses a segment has, and alignment pairs are offset by the pieces of the
 * segments before.
 */
#ifndef NMT_SERVE_SEGMENT_H
#define NMT_SERVE_SEGMENT_H

#include "serve/inline_tags.h"
#include "serve/request.h"

/* A block of an HTML text: its text translated as one, its segments' translations joined and its
 * inline tags put back by serve/inline_tags.h. */
typedef struct nmt_serve_block {
    const char *before;               /* the markup before it */
    const char *text;                 /* its text, inline markup taken out, references decoded */
    const nmt_serve_inline_tag *tags; /* [tag_count], offsets into text */
    int tag_count;
    int first;                        /* its first segment; it ends where the next block begins */
} nmt_serve_block;

typedef struct nmt_serve_segments {
    char *copy;            /* the texts cut in place; for HTML their markup and decoded text */
    const char **segments; /* [count] NUL-terminated, pointing into copy */
    const char **glue;     /* [count] what goes before segment s when joined: "" for a text's or a block's
                              first, a line break or " " after another */
    const char **tail;     /* [texts] what follows a text's last segment: "", or the markup after it */
    int *first;            /* [texts + 1]: text i is segments first[i] .. first[i + 1] - 1 (none for
                              HTML that holds no text) */
    int count;
    int html;              /* the texts are HTML: translations are escaped when joined */
    nmt_serve_block *blocks; /* HTML: [block_count] in text order */
    int block_count;
    int *first_block;      /* HTML: [texts + 1]: text i is blocks first_block[i] .. first_block[i + 1] - 1 */
    nmt_serve_inline_tag *tags; /* HTML: the blocks' tags */
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
