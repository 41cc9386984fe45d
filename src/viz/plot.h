/* plot: a tiny SVG canvas (rectangles, lines, polylines, text) and the pictures nmt draws with it:
 * the attention heat map of a translation, in SVG or with Unicode shade blocks for a terminal.
 *
 * Everything is drawn into a growable text buffer; the caller writes it out (atomically for
 * files). A failed allocation is remembered by the buffer, so a picture is checked once, at the end:
 *     nmt_plot_canvas c;
 *     nmt_plot_begin(&c, 400, 300);
 *     nmt_plot_line(&c, 40, 260, 380, 260, NMT_PLOT_BLACK, 1);
 *     nmt_plot_text(&c, 200, 290, 12, NMT_PLOT_MIDDLE, 0, "step");
 *     if (nmt_plot_end(&c) < 0) ...;          // c.out.data, c.out.len: the SVG document
 *     nmt_strbuf_free(&c.out);
 * Coordinates are SVG user units (pixels), y downwards. Text is XML-escaped; control characters
 * that XML cannot carry are replaced by U+FFFD.
 */
#ifndef NMT_PLOT_H
#define NMT_PLOT_H

#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "base/util.h"

/* Appends text with & < > " ' written as XML entities. */
void nmt_plot_escape(nmt_strbuf *b, const char *text);
typedef struct nmt_plot_rgb {
    uint8_t r, g, b;
} nmt_plot_rgb;

#define NMT_PLOT_BLACK ((nmt_plot_rgb){0, 0, 0})
#define NMT_PLOT_GREY ((nmt_plot_rgb){160, 160, 160})

/* Viridis (dark violet -> blue -> green -> yellow) at x in [0, 1] (clamped): luminance rises with x. */
nmt_plot_rgb nmt_plot_colormap(double x);

typedef enum { NMT_PLOT_START, NMT_PLOT_MIDDLE, NMT_PLOT_END } nmt_plot_anchor;

typedef struct nmt_plot_canvas {
    nmt_strbuf out;
    double width, height;
} nmt_plot_canvas;

/* Starts an SVG document of width x height on a white background. */
void nmt_plot_begin(nmt_plot_canvas *c, double width, double height);
/* A filled rectangle; `tooltip` (may be NULL) is shown when the pointer rests on it. */
void nmt_plot_rect(nmt_plot_canvas *c, double x, double y, double w, double h, nmt_plot_rgb fill, const char *tooltip);
void nmt_plot_line(nmt_plot_canvas *c, double x1, double y1, double x2, double y2, nmt_plot_rgb stroke, double width);
/* A line through n points (x[i], y[i]). */
void nmt_plot_polyline(nmt_plot_canvas *c, const double *x, const double *y, int n, nmt_plot_rgb stroke, double width);
/* Text whose anchor point is (x, y) on the baseline, turned by `degrees` (clockwise) around it. */
void nmt_plot_text(nmt_plot_canvas *c, double x, double y, double size, nmt_plot_anchor anchor, double degrees,
                   const char *text);
/* Closes the document. Returns 0, or -1 (error set) if any drawing ran out of memory. */
int nmt_plot_end(nmt_plot_canvas *c);

/* An attention matrix weights[rows, cols] (row r = target piece r, column c = source piece c; each
 * row sums to 1) as a heat map: source pieces label the columns (top), target pieces the rows
 * (left), brighter cells carry more weight; a colour bar shows the scale. Writes a whole SVG
 * document into *out (appending). */
int nmt_plot_alignment_svg(nmt_strbuf *out, const char *title, const char *const *src_pieces, int cols,
                           const char *const *tgt_pieces, int rows, const float *weights);
/* The same matrix for a terminal: each cell two columns of one of " ░▒▓█" (weight rounded to
 * quarters), source pieces written downwards above their columns, target pieces left of their rows. */
int nmt_plot_alignment_text(nmt_strbuf *out, const char *title, const char *const *src_pieces, int cols,
                            const char *const *tgt_pieces, int rows, const float *weights);

#endif
