/* page: the HTML page `nmt serve` answers at GET / -- one self-contained document (no external
 * assets): a text box (#source), a Translate button (#translate), the language pairs the server
 * translates (#pair, from GET /languages), the translation (#result), the attention heat map SVG of
 * the first line (#map) and errors (#status). It posts to /translate with the chosen pair and
 * `Accept: text/event-stream`, showing the words in #result as the events bring them (data-state
 * "streaming", then "done" with data-pieces, the number of pieces), then asks /v1/translate for the
 * map (none for a pair translated through English), and sends the API key field's value when one is
 * typed.
 */
#ifndef NMT_SERVE_PAGE_H
#define NMT_SERVE_PAGE_H

extern const char nmt_serve_page[];

#endif
