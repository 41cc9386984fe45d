/* html: the text of an HTML document or fragment found among its markup, decoded for translation,
 * and translations escaped to go back in (LibreTranslate's "format": "html").
 *
 * nmt_serve_html_scan walks the markup as a browser's tokenizer does, tolerantly: tags with their
 * attributes (quoted or not), comments, <!DOCTYPE>, CDATA and processing instructions are markup; a
 * '<' that starts none of them is text; markup left open at the end runs to the end. It reports each
 * stretch of text between two pieces of markup and each piece of markup, telling inline elements'
 * tags (which stay inside a block of text) from the others (which end one). Text is not prose, and
 * goes with the markup around it, inside script, style,
 * textarea and the other raw-text elements, inside the elements that LibreTranslate's HTML translation
 * leaves alone (address, applet, audio, canvas, code, embed, time, video, and also noscript,
 * template, svg, math, kbd, samp, var), and inside any element with translate="no" or the class
 * "notranslate" (HTML5's and Google's conventions). Elements are matched to their end tags on a stack
 * (void elements such as br and img, and "<x/>", open none; an end tag closes the nearest open
 * element of its name, a stray one is ignored). Text inside <pre> keeps its lines.
 */
#ifndef NMT_SERVE_HTML_H
#define NMT_SERVE_HTML_H

#include <stddef.h>

#include "base/strbuf.h"

enum { NMT_SERVE_HTML_MAX_DEPTH = 512 }; /* open elements; deeper nesting is refused */

/* What a piece of an HTML text is. */
typedef enum nmt_serve_html_kind {
    NMT_SERVE_HTML_TEXT,  /* translatable text */
    NMT_SERVE_HTML_OPEN,  /* the start tag of an inline element (a, b, em, span... : phrasing content) */
    NMT_SERVE_HTML_CLOSE, /* an end tag of an inline element's name */
    NMT_SERVE_HTML_POINT, /* a void inline element (img, wbr, input, "<b/>"), or an inline element left
                             untranslated (code, kbd, translate="no"...) from its start tag to its own
                             end tag (one left open, or closed by an ancestor's end tag, is a BREAK) */
    NMT_SERVE_HTML_BREAK, /* any other markup, with the content of elements left untranslated: it ends a
                             block of text */
} nmt_serve_html_kind;

/* Receives html[begin, end), of kind `kind` (`name`: an OPEN's or CLOSE's element name, lowercased). */
typedef void (*nmt_serve_html_event)(void *ctx, nmt_serve_html_kind kind, size_t begin, size_t end, int preformatted,
                                     const char *name);

/* Calls event for each piece of html[0, len), in document order; the pieces cover it. Returns 0, or -1
 * with a message when elements nest deeper than the limit. */
int nmt_serve_html_scan(const char *html, size_t len, nmt_serve_html_event event, void *ctx);

/* Writes src[0, n) as plain text into out (room for n + 1 bytes; it is NUL-terminated): character
 * references (&amp; &#233; &#xE9; and the common named ones) become their characters, unknown ones stay
 * as they are, and unless `preformatted` every run of white space (references to white space included)
 * becomes one space. Returns the
 * length written. */
size_t nmt_serve_html_decode(const char *src, size_t n, int preformatted, char *out);

/* The bytes text takes escaped for HTML text content: & < > as &amp; &lt; &gt;. */
size_t nmt_serve_html_escaped_len(const char *text);
/* Writes text escaped (nmt_serve_html_escaped_len bytes, no NUL) to out; returns that length. */
size_t nmt_serve_html_escape(const char *text, char *out);
/* Appends text[0..n) escaped to b (its result: 0, or -1 once an allocation failed). */
int nmt_serve_html_escape_append(nmt_strbuf *b, const char *text, size_t n);

#endif
