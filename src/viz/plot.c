/* plot: the SVG canvas and the attention heat maps (SVG and terminal). */
#include "viz/plot.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ---- text buffer ---- */

void nmt_plot_escape(nmt_strbuf *b, const char *text) {
    const utf8proc_uint8_t *s = (const utf8proc_uint8_t *)text;
    utf8proc_ssize_t left = (utf8proc_ssize_t)strlen(text);
    while (left > 0) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t n = utf8proc_iterate(s, left, &cp);
        if (n < 1) n = 1, cp = -1; /* an invalid byte: skip it alone */
        switch (cp) {
        case '&': nmt_strbuf_append(b, "&amp;", 5); break;
        case '<': nmt_strbuf_append(b, "&lt;", 4); break;
        case '>': nmt_strbuf_append(b, "&gt;", 4); break;
        case '"': nmt_strbuf_append(b, "&quot;", 6); break;
        case '\'': nmt_strbuf_append(b, "&apos;", 6); break;
        default:
            if (cp < 0 || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xFFFE || cp == 0xFFFF)
                nmt_strbuf_append(b, "\xEF\xBF\xBD", 3); /* U+FFFD: XML 1.0 cannot carry these */
            else
                nmt_strbuf_append(b, (const char *)s, (size_t)n);
        }
        s += n;
        left -= n;
    }
}

/* ---- colours ---- */

nmt_plot_rgb nmt_plot_colormap(double x) {
    /* matplotlib's viridis sampled at 0, 1/8, ..., 1; linear in between. */
    static const uint8_t stops[9][3] = {
        {68, 1, 84},    {72, 40, 120},  {62, 73, 137},  {49, 104, 142}, {38, 130, 142},
        {31, 158, 137}, {53, 183, 121}, {110, 206, 88}, {253, 231, 37},
    };
    if (!(x > 0)) x = 0; /* also NaN */
    if (x > 1) x = 1;
    double at = x * 8;
    int i = at >= 8 ? 7 : (int)at;
    double f = at - i;
    nmt_plot_rgb c;
    c.r = (uint8_t)lround(stops[i][0] + f * (stops[i + 1][0] - stops[i][0]));
    c.g = (uint8_t)lround(stops[i][1] + f * (stops[i + 1][1] - stops[i][1]));
    c.b = (uint8_t)lround(stops[i][2] + f * (stops[i + 1][2] - stops[i][2]));
    return c;
}

/* ---- SVG canvas ---- */

static const char *anchor_name(nmt_plot_anchor a) {
    return a == NMT_PLOT_MIDDLE ? "middle" : a == NMT_PLOT_END ? "end" : "start";
}

void nmt_plot_begin(nmt_plot_canvas *c, double width, double height) {
    memset(c, 0, sizeof *c);
    c->width = width;
    c->height = height;
    nmt_strbuf_printf(&c->out,
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                    "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
                    "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n",
                    width, height, width, height, width, height);
}

void nmt_plot_rect(nmt_plot_canvas *c, double x, double y, double w, double h, nmt_plot_rgb fill, const char *tooltip) {
    nmt_strbuf_printf(&c->out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#%02x%02x%02x\"", x, y, w,
                    h, fill.r, fill.g, fill.b);
    if (!tooltip) {
        nmt_strbuf_printf(&c->out, "/>\n");
        return;
    }
    nmt_strbuf_printf(&c->out, "><title>");
    nmt_plot_escape(&c->out, tooltip);
    nmt_strbuf_printf(&c->out, "</title></rect>\n");
}

void nmt_plot_line(nmt_plot_canvas *c, double x1, double y1, double x2, double y2, nmt_plot_rgb stroke, double width) {
    nmt_strbuf_printf(&c->out,
                    "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#%02x%02x%02x\" stroke-width=\"%.2f\"/>\n",
                    x1, y1, x2, y2, stroke.r, stroke.g, stroke.b, width);
}

void nmt_plot_polyline(nmt_plot_canvas *c, const double *x, const double *y, int n, nmt_plot_rgb stroke, double width) {
    nmt_strbuf_printf(&c->out, "<polyline fill=\"none\" stroke=\"#%02x%02x%02x\" stroke-width=\"%.2f\" points=\"", stroke.r,
                    stroke.g, stroke.b, width);
    for (int i = 0; i < n; i++) nmt_strbuf_printf(&c->out, "%s%.2f,%.2f", i ? " " : "", x[i], y[i]);
    nmt_strbuf_printf(&c->out, "\"/>\n");
}

void nmt_plot_text(nmt_plot_canvas *c, double x, double y, double size, nmt_plot_anchor anchor, double degrees,
                   const char *text) {
    nmt_strbuf_printf(&c->out, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.1f\" text-anchor=\"%s\"", x, y, size,
                    anchor_name(anchor));
    if (degrees != 0) nmt_strbuf_printf(&c->out, " transform=\"rotate(%.1f %.2f %.2f)\"", degrees, x, y);
    nmt_strbuf_printf(&c->out, " xml:space=\"preserve\">");
    nmt_plot_escape(&c->out, text);
    nmt_strbuf_printf(&c->out, "</text>\n");
}

int nmt_plot_end(nmt_plot_canvas *c) {
    nmt_strbuf_printf(&c->out, "</svg>\n");
    if (c->out.failed) return nmt_error_set("out of memory drawing an SVG picture");
    return 0;
}

/* ---- attention maps ---- */

/* Appends (when out is not NULL) the code point of `text` at byte *pos and advances *pos; an
 * invalid byte or a control or unassigned code point (which could drive a terminal) becomes '?'.
 * Returns the terminal columns it takes (0 at the end of the text, and for combining marks). */
static int append_terminal_char(nmt_strbuf *out, const char *text, size_t *pos) {
    const utf8proc_uint8_t *s = (const utf8proc_uint8_t *)text + *pos;
    utf8proc_ssize_t left = (utf8proc_ssize_t)strlen(text + *pos);
    if (left == 0) return 0;
    utf8proc_int32_t cp;
    utf8proc_ssize_t n = utf8proc_iterate(s, left, &cp);
    *pos += n < 1 ? 1 : (size_t)n;
    utf8proc_category_t cat = n < 1 ? UTF8PROC_CATEGORY_CN : utf8proc_category(cp);
    if (cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CS || cat == UTF8PROC_CATEGORY_CN) {
        if (out) nmt_strbuf_append(out, "?", 1);
        return 1;
    }
    if (out) nmt_strbuf_append(out, (const char *)s, (size_t)n);
    int width = utf8proc_charwidth(cp);
    return width > 0 ? width : 0;
}

/* Display width of text in terminal columns, as append_terminal_char shows it. */
static int display_width(const char *text) {
    int width = 0;
    for (size_t at = 0; text[at];) width += append_terminal_char(NULL, text, &at);
    return width;
}

static int check_matrix(int cols, int rows, const float *weights) {
    if (cols < 1 || rows < 1) return nmt_error_set("attention map: empty matrix (%d x %d)", rows, cols);
    for (size_t i = 0; i < (size_t)rows * (size_t)cols; i++)
        if (!isfinite(weights[i])) return nmt_error_set("attention map: non-finite weight at %zu", i);
    return 0;
}

enum { CELL = 22, FONT = 12, BAR_STEPS = 20 };
static const double GLYPH_WIDTH = 0.62 * FONT; /* a generous estimate of a sans-serif glyph's advance */

int nmt_plot_alignment_svg(nmt_strbuf *out, const char *title, const char *const *src_pieces, int cols,
                           const char *const *tgt_pieces, int rows, const float *weights) {
    if (check_matrix(cols, rows, weights) < 0) return -1;
    int src_chars = 1, tgt_chars = 1;
    for (int c = 0; c < cols; c++) {
        int w = display_width(src_pieces[c]);
        if (w > src_chars) src_chars = w;
    }
    for (int r = 0; r < rows; r++) {
        int w = display_width(tgt_pieces[r]);
        if (w > tgt_chars) tgt_chars = w;
    }
    const double left = 12 + tgt_chars * GLYPH_WIDTH + 8;
    const double top = (title ? 30 : 10) + src_chars * GLYPH_WIDTH + 8;
    const double grid_w = (double)cols * CELL, grid_h = (double)rows * CELL;
    const double bar_x = left + grid_w + 16, bar_h = grid_h > 100 ? grid_h : 100;
    nmt_plot_canvas c;
    nmt_plot_begin(&c, bar_x + 14 + 40, top + bar_h + 12);
    if (title) nmt_plot_text(&c, 12, 20, 14, NMT_PLOT_START, 0, title);
    for (int col = 0; col < cols; col++)
        nmt_plot_text(&c, left + (col + 0.5) * CELL + FONT * 0.35, top - 6, FONT, NMT_PLOT_START, -90, src_pieces[col]);
    nmt_strbuf tip = {0};
    for (int r = 0; r < rows; r++) {
        nmt_plot_text(&c, left - 6, top + (r + 0.5) * CELL + FONT * 0.35, FONT, NMT_PLOT_END, 0, tgt_pieces[r]);
        for (int col = 0; col < cols; col++) {
            double w = weights[(size_t)r * (size_t)cols + (size_t)col];
            tip.len = 0;
            nmt_strbuf_printf(&tip, "%s \xE2\x86\x92 %s: %.3f", src_pieces[col], tgt_pieces[r], w); /* "→" */
            nmt_plot_rect(&c, left + col * CELL, top + r * CELL, CELL, CELL, nmt_plot_colormap(w),
                          tip.failed ? NULL : tip.data);
        }
    }
    int tip_failed = tip.failed;
    nmt_strbuf_free(&tip);
    /* The colour bar: weight 1 at the top, 0 at the bottom. */
    for (int i = 0; i < BAR_STEPS; i++)
        nmt_plot_rect(&c, bar_x, top + bar_h * i / BAR_STEPS, 14, bar_h / BAR_STEPS + 0.5,
                      nmt_plot_colormap(1.0 - (i + 0.5) / BAR_STEPS), NULL);
    nmt_plot_text(&c, bar_x + 18, top + FONT * 0.8, FONT - 2, NMT_PLOT_START, 0, "1");
    nmt_plot_text(&c, bar_x + 18, top + bar_h, FONT - 2, NMT_PLOT_START, 0, "0");
    int rc = nmt_plot_end(&c);
    if (rc == 0 && tip_failed) rc = nmt_error_set("out of memory drawing an SVG picture");
    if (rc == 0) {
        nmt_strbuf_printf(out, "%s", c.out.data);
        if (out->failed) rc = nmt_error_set("out of memory drawing an SVG picture");
    }
    nmt_strbuf_free(&c.out);
    return rc;
}

static int code_points(const char *text) {
    int count = 0;
    for (const unsigned char *s = (const unsigned char *)text; *s; s++) count += (*s & 0xC0) != 0x80;
    return count;
}

enum { MAX_HEADER_LINES = 16 };

int nmt_plot_alignment_text(nmt_strbuf *out, const char *title, const char *const *src_pieces, int cols,
                            const char *const *tgt_pieces, int rows, const float *weights) {
    static const char *const shades[5] = {"  ", "\xE2\x96\x91\xE2\x96\x91", "\xE2\x96\x92\xE2\x96\x92",
                                          "\xE2\x96\x93\xE2\x96\x93", "\xE2\x96\x88\xE2\x96\x88"}; /* ░ ▒ ▓ █ */
    if (check_matrix(cols, rows, weights) < 0) return -1;
    size_t *pos = nmt_calloc((size_t)cols, sizeof *pos);
    if (!pos) return -1;
    int label = 1, header = 1;
    for (int r = 0; r < rows; r++) {
        int w = display_width(tgt_pieces[r]);
        if (w > label) label = w;
    }
    for (int c = 0; c < cols; c++) {
        int n = code_points(src_pieces[c]);
        if (n > header) header = n;
    }
    if (header > MAX_HEADER_LINES) header = MAX_HEADER_LINES;
    if (title) {
        for (size_t at = 0; title[at];) append_terminal_char(out, title, &at);
        nmt_strbuf_printf(out, "\n");
    }
    /* Source pieces run downwards, one character per line, each column two terminal cells wide. */
    for (int line = 0; line < header; line++) {
        nmt_strbuf_printf(out, "%*s ", label, "");
        for (int c = 0; c < cols; c++) {
            int used = append_terminal_char(out, src_pieces[c], &pos[c]);
            nmt_strbuf_printf(out, "%*s", used < 2 ? 2 - used : 0, "");
        }
        nmt_strbuf_printf(out, "\n");
    }
    free(pos);
    for (int r = 0; r < rows; r++) {
        nmt_strbuf_printf(out, "%*s", label - display_width(tgt_pieces[r]), "");
        for (size_t at = 0; tgt_pieces[r][at];) append_terminal_char(out, tgt_pieces[r], &at);
        nmt_strbuf_printf(out, " ");
        for (int c = 0; c < cols; c++) {
            long level = lround(weights[(size_t)r * (size_t)cols + (size_t)c] * 4);
            nmt_strbuf_printf(out, "%s", shades[level < 0 ? 0 : level > 4 ? 4 : level]);
        }
        nmt_strbuf_printf(out, "\n");
    }
    if (out->failed) return nmt_error_set("out of memory drawing an attention map");
    return 0;
}
