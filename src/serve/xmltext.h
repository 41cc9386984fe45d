/* xmltext: the paragraphs of an office document's XML part (Word's word/document.xml, PowerPoint's
 * slides, OpenDocument's content.xml) found among their markup, each as one text to translate, and
 * their translations put back into the same markup.
 *
 * The part is read as XML 1.0, strictly enough that what it writes back is well-formed: the
 * declaration, comments, processing instructions, CDATA sections and a DOCTYPE are kept as they are;
 * start and end tags must match (names with their prefixes, such as w:t); attribute values are quoted;
 * '&' starts one of the five predefined entities or a character reference; nesting is bounded
 * (NMT_SERVE_XMLTEXT_MAX_DEPTH). What breaks these rules is refused with the part's name and line.
 *
 * A dialect names its paragraph elements (w:p, a:p, text:p and text:h), the elements whose character
 * data is the text (w:t and a:t; none named: all character data inside a paragraph, as OpenDocument
 * writes it, among inline elements such as text:span and text:a), the empty elements that stand between
 * two words (w:tab, w:br, a:br, text:s, text:tab, text:line-break) and the elements whose content is
 * never translated (text:note-citation, text:tracked-changes...). Text belongs to the innermost open
 * paragraph, so a paragraph nested in another (a footnote, a text box) is a paragraph of its own.
 * Character data inside other elements (w:instrText's field codes included) is never touched.
 *
 * A paragraph's text is its chunks of character data, references decoded, with a space for each space
 * element, white space collapsed to single spaces and cut at the ends; one without a letter or digit is
 * left as it is. Its translation's words are shared out among the chunks in proportion to the source
 * words that start in each (in order, none dropped or repeated), so that runs keep their formatting
 * where the words keep their places; a chunk where no source word starts (the end of a word cut by a
 * formatting change) is left empty; chunks are separated by one space unless a space element stands
 * between them. The rest of the part is written as it came, byte for byte; with `preserve_space` a
 * text element that gets text and lacks xml:space gets xml:space="preserve" (Word drops spaces at the
 * ends of a w:t otherwise).
 */
#ifndef NMT_SERVE_XMLTEXT_H
#define NMT_SERVE_XMLTEXT_H

#include <stddef.h>

#include "base/strbuf.h"

enum { NMT_SERVE_XMLTEXT_MAX_DEPTH = 512, NMT_SERVE_XMLTEXT_MAX_NAME = 128 };

typedef struct nmt_serve_xmltext_dialect {
    const char *const *paragraphs; /* NULL-terminated element names */
    const char *const *text;       /* NULL-terminated, or NULL: all character data in a paragraph */
    const char *const *spaces;     /* NULL-terminated */
    const char *const *skipped;    /* NULL-terminated */
    int preserve_space;
} nmt_serve_xmltext_dialect;

typedef struct nmt_serve_xmltext nmt_serve_xmltext;

/* Reads xml[0, len) (the caller keeps it alive until nmt_serve_xmltext_free); errors begin with `what`. */
int nmt_serve_xmltext_read(const char *xml, size_t len, const nmt_serve_xmltext_dialect *d, const char *what,
                           nmt_serve_xmltext **out);
/* The number of paragraphs to translate, and paragraph i's text. */
int nmt_serve_xmltext_count(const nmt_serve_xmltext *x);
const char *nmt_serve_xmltext_paragraph(const nmt_serve_xmltext *x, int i);
/* Appends the part with paragraph i translated as translations[i] to out (0, or -1: out of memory). */
int nmt_serve_xmltext_write(const nmt_serve_xmltext *x, const char *const *translations, nmt_strbuf *out);
void nmt_serve_xmltext_free(nmt_serve_xmltext *x);

#endif
