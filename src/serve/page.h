/* page: the HTML page `nmt serve` answers at GET / -- one self-contained document (no external
 * assets): a text box (#source), a Translate button (#translate), the language pairs the server
 * translates (#pair, from GET /languages), the translation (#result), the attention heat map SVG of
 * the first line (#map) and errors (#status). It posts to /v1/translate with the chosen pair and
 * alignment_map (asked again without it for a pair translated through English, which has no map),
 * and sends the API key field's value when one is typed.
 */
#ifndef NMT_SERVE_PAGE_H
#define NMT_SERVE_PAGE_H

extern const char nmt_serve_page[];

#endif
