/* fuzz_plot: the attention-map writers (SVG and terminal) on arbitrary pieces and weights.
 *
 * Pieces come from a model's vocabulary and from the user's input, so they may hold anything: markup
 * characters, control characters, invalid UTF-8. Input: byte 0: rows - 1 (mod 12), byte 1: cols - 1
 * (mod 12), then one byte a weight (each row normalised to sum to 1, as attention rows do; an all-zero
 * row stays zero), then NUL-separated strings: the title, the cols source pieces, the rows target
 * pieces (missing ones are empty).
 *
 * Properties:
 *   - the SVG is well-formed XML (tests/support/xml_check.h: valid UTF-8, every tag closed in order, one root
 *     element, markup characters only as entities) without a character XML 1.0 forbids;
 *   - the terminal picture is valid UTF-8 without any control character but '\n' (an escape sequence
 *     in a piece must not reach the terminal), and every line of the grid below the title is as wide
 *     (in terminal columns) as every other;
 *   - with the 1st, 2nd, ... allocation failing, both report "out of memory".
 */
#include "xml_check.h"
#include "fuzz.h"
#include "viz/plot.h"
#include "base/utf8.h"

#include <utf8proc.h>

enum { MAX_SIDE = 12 };

typedef struct picture {
    const char *title;
    const char *src[MAX_SIDE], *tgt[MAX_SIDE];
    int rows, cols;
    float weights[MAX_SIDE * MAX_SIDE];
} picture;

/* ---- the SVG: well-formed (tests/support/xml_check.h) and only characters XML 1.0 allows ---- */

static void check_xml(const char *s, size_t len) {
    const char *wrong = nmt_test_xml_error(s);
    FUZZ_CHECK(wrong == NULL, "the SVG is not well-formed: %s", wrong);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        FUZZ_CHECK(c >= 0x20 || c == '\t' || c == '\n' || c == '\r', "control byte 0x%02x at %zu", c, i);
    }
    FUZZ_CHECK(!memmem(s, len, "\xEF\xBF\xBE", 3) && !memmem(s, len, "\xEF\xBF\xBF", 3), "U+FFFE or U+FFFF in the SVG");
}

/* ---- the terminal picture ---- */

static int display_columns(const char *s, size_t len) {
    int width = 0;
    for (size_t at = 0; at < len;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t n = utf8proc_iterate((const utf8proc_uint8_t *)s + at, (utf8proc_ssize_t)(len - at), &cp);
        FUZZ_CHECK(n > 0, "invalid UTF-8 at %zu", at);
        width += utf8proc_charwidth(cp);
        at += (size_t)n;
    }
    return width;
}

static void check_text(const char *s, size_t len, const picture *p) {
    FUZZ_CHECK(nmt_utf8_invalid_at(s, len) < 0, "the picture is not UTF-8 at byte %ld", nmt_utf8_invalid_at(s, len));
    for (size_t at = 0; at < len;) {
        size_t start = at;
        uint32_t cp = nmt_utf8_next(s, &at);
        FUZZ_CHECK(cp == '\n' || (cp >= 0x20 && cp != 0x7F && !(cp >= 0x80 && cp < 0xA0)),
                   "control character U+%04X at byte %zu", (unsigned)cp, start);
    }
    const char *line = s, *end = s + len;
    if (p->title) line = memchr(line, '\n', len) + 1;
    int width = -1;
    while (line < end) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        FUZZ_CHECK(eol != NULL, "the picture's last line has no newline");
        int w = display_columns(line, (size_t)(eol - line));
        FUZZ_CHECK(width < 0 || w == width, "a line of %d columns among lines of %d", w, width);
        width = w;
        line = eol + 1;
    }
}

/* ---- the harness ---- */

static int draw_svg(void *context) {
    const picture *p = context;
    nmt_strbuf out = {0};
    int rc = nmt_plot_alignment_svg(&out, p->title, p->src, p->cols, p->tgt, p->rows, p->weights);
    nmt_strbuf_free(&out);
    return rc;
}

static int draw_text(void *context) {
    const picture *p = context;
    nmt_strbuf out = {0};
    int rc = nmt_plot_alignment_text(&out, p->title, p->src, p->cols, p->tgt, p->rows, p->weights);
    nmt_strbuf_free(&out);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    picture p = {.rows = data[0] % MAX_SIDE + 1, .cols = data[1] % MAX_SIDE + 1};
    size_t at = 2;
    for (int r = 0; r < p.rows; r++) {
        float sum = 0;
        for (int c = 0; c < p.cols; c++) sum += p.weights[r * p.cols + c] = at < size ? data[at++] : 1;
        for (int c = 0; c < p.cols && sum > 0; c++) p.weights[r * p.cols + c] /= sum;
    }
    /* The strings: a NUL-terminated copy of the rest, cut at each NUL. */
    char *strings = malloc(size - (at < size ? at : size) + 1);
    FUZZ_CHECK(strings != NULL, "out of memory");
    size_t n = at < size ? size - at : 0;
    if (n) memcpy(strings, data + at, n);
    strings[n] = '\0';
    const char *next = strings, *stop = strings + n;
    const char **slots[1 + 2 * MAX_SIDE];
    int num_slots = 0;
    slots[num_slots++] = &p.title;
    for (int c = 0; c < p.cols; c++) slots[num_slots++] = &p.src[c];
    for (int r = 0; r < p.rows; r++) slots[num_slots++] = &p.tgt[r];
    for (int i = 0; i < num_slots; i++) {
        *slots[i] = next <= stop ? next : "";
        if (next <= stop) next += strlen(next) + 1;
    }
    if (p.title[0] == '\0') p.title = NULL; /* no title is allowed too */

    nmt_strbuf svg = {0}, text = {0};
    FUZZ_CHECK(nmt_plot_alignment_svg(&svg, p.title, p.src, p.cols, p.tgt, p.rows, p.weights) == 0, "%s", nmt_error());
    check_xml(svg.data, svg.len);
    FUZZ_CHECK(nmt_plot_alignment_text(&text, p.title, p.src, p.cols, p.tgt, p.rows, p.weights) == 0, "%s",
               nmt_error());
    check_text(text.data, text.len, &p);
    nmt_strbuf_free(&svg);
    nmt_strbuf_free(&text);
    fuzz_alloc_sweep(draw_svg, &p, 64);
    fuzz_alloc_sweep(draw_text, &p, 64);
    free(strings);
    return 0;
}
