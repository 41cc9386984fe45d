/* page: the HTML page `nmt serve` answers at GET / -- one self-contained document (no external
 * assets): a text box (#source), a Translate button (#translate), the translation (#result), the
 * attention heat map SVG of the first line (#map) and errors (#status). It posts to /v1/translate
 * with alignment_map, and sends the API key field's value when one is typed.
 */
#ifndef NMT_SERVE_PAGE_H
#define NMT_SERVE_PAGE_H

extern const char nmt_serve_page[];

#endif
