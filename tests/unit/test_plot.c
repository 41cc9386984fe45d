/* Tests of plot: the SVG canvas is well-formed XML, the heat map has one cell per weight coloured by
 * the colour map, pieces are escaped, and the terminal map matches a hand-drawn picture. */
#include "viz/plot.h"
#include "xml_check.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Relative luminance (WCAG) of an sRGB colour. */
static double luminance(nmt_plot_rgb c) {
    double ch[3] = {c.r / 255.0, c.g / 255.0, c.b / 255.0};
    for (int i = 0; i < 3; i++) ch[i] = ch[i] <= 0.04045 ? ch[i] / 12.92 : pow((ch[i] + 0.055) / 1.055, 2.4);
    return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
}

START_TEST(canvas_is_well_formed) {
    nmt_plot_canvas c;
    nmt_plot_begin(&c, 300, 200);
    const double x[3] = {10, 50, 90}, y[3] = {100, 20, 60};
    nmt_plot_polyline(&c, x, y, 3, NMT_PLOT_BLACK, 1.5);
    nmt_plot_line(&c, 0, 0, 300, 200, NMT_PLOT_GREY, 1);
    nmt_plot_rect(&c, 5, 5, 10, 10, nmt_plot_colormap(0.5), "a <b> & \"c\" 'd'");
    nmt_plot_text(&c, 20, 20, 12, NMT_PLOT_MIDDLE, -90, "x < y && z > 'w' \x01 \xff");
    ck_assert_int_eq(nmt_plot_end(&c), 0);
    const char *err = nmt_test_xml_error(c.out.data);
    ck_assert_msg(err == NULL, "%s in:\n%s", err, c.out.data);
    ck_assert_ptr_nonnull(strstr(c.out.data, "points=\"10.00,100.00 50.00,20.00 90.00,60.00\""));
    ck_assert_ptr_nonnull(strstr(c.out.data, "fill=\"#26828e\"")); /* viridis(0.5) */
    ck_assert_ptr_nonnull(strstr(c.out.data, "x &lt; y &amp;&amp; z &gt; &apos;w&apos; \xEF\xBF\xBD \xEF\xBF\xBD"));
    ck_assert_ptr_nonnull(strstr(c.out.data, "transform=\"rotate(-90.0 20.00 20.00)\""));
    nmt_strbuf_free(&c.out);
}
END_TEST

START_TEST(colormap_brightens_with_weight) {
    nmt_plot_rgb lo = nmt_plot_colormap(0), hi = nmt_plot_colormap(1);
    ck_assert(lo.r == 68 && lo.g == 1 && lo.b == 84);
    ck_assert(hi.r == 253 && hi.g == 231 && hi.b == 37);
    nmt_plot_rgb below = nmt_plot_colormap(-3), above = nmt_plot_colormap(7), nan = nmt_plot_colormap(NAN);
    ck_assert(memcmp(&below, &lo, sizeof lo) == 0 && memcmp(&above, &hi, sizeof hi) == 0 && memcmp(&nan, &lo, sizeof lo) == 0);
    /* Strictly brighter at every step of 1/100 (finer steps meet the 8-bit rounding of channels). */
    double last = -1;
    for (int i = 0; i <= 100; i++) {
        double l = luminance(nmt_plot_colormap(i / 100.0));
        ck_assert_msg(l > last, "luminance does not rise at %g", i / 100.0);
        last = l;
    }
    ck_assert(luminance(hi) > 10 * luminance(lo));
}
END_TEST

/* Parses the fill of the k-th cell (the k-th rect with a tooltip). */
static nmt_plot_rgb cell_fill(const char *svg, int k) {
    const char *p = svg;
    for (int i = 0; i <= k; i++) {
        p = strstr(p, "<title>");
        ck_assert_ptr_nonnull(p);
        p++;
    }
    while (p > svg && strncmp(p, "fill=\"#", 7) != 0) p--;
    unsigned r, g, b;
    ck_assert_int_eq(sscanf(p, "fill=\"#%02x%02x%02x\"", &r, &g, &b), 3);
    return (nmt_plot_rgb){(uint8_t)r, (uint8_t)g, (uint8_t)b};
}

START_TEST(alignment_svg_cells_and_escaping) {
    const char *src[4] = {"\xE2\x96\x81<", "&", "\"q\"", "</s>"};
    const char *tgt[3] = {"\xE2\x96\x81Mann", "'", "</s>"};
    const float w[12] = {0.7f, 0.1f, 0.1f, 0.1f, 0.05f, 0.8f, 0.05f, 0.1f, 0.0f, 0.2f, 0.3f, 0.5f};
    nmt_strbuf out = {0};
    ck_assert_int_eq(nmt_plot_alignment_svg(&out, "line 3: a < b", src, 4, tgt, 3, w), 0);
    const char *err = nmt_test_xml_error(out.data);
    ck_assert_msg(err == NULL, "%s", err);
    ck_assert_int_eq(nmt_test_count(out.data, "<title>"), 12);
    ck_assert_int_eq(nmt_test_count(out.data, "<rect"), 1 + 12 + 20); /* background, cells, colour bar */
    ck_assert_ptr_nonnull(strstr(out.data, ">\xE2\x96\x81&lt;</text>"));
    ck_assert_ptr_nonnull(strstr(out.data, ">&amp;</text>"));
    ck_assert_ptr_nonnull(strstr(out.data, ">&quot;q&quot;</text>"));
    ck_assert_ptr_nonnull(strstr(out.data, ">&lt;/s&gt;</text>"));
    ck_assert_ptr_nonnull(strstr(out.data, "line 3: a &lt; b"));
    ck_assert_ptr_nonnull(strstr(out.data, "<title>&amp; \xE2\x86\x92 \xE2\x96\x81Mann: 0.100</title>"));
    /* Every cell has the colour of its weight; brighter cells carry more weight. */
    for (int i = 0; i < 12; i++) {
        nmt_plot_rgb got = cell_fill(out.data, i), want = nmt_plot_colormap(w[i]);
        ck_assert(memcmp(&got, &want, sizeof got) == 0);
        for (int j = 0; j < 12; j++)
            if (w[i] > w[j]) ck_assert(luminance(got) > luminance(cell_fill(out.data, j)));
    }
    nmt_strbuf_free(&out);
}
END_TEST

START_TEST(alignment_text_matches_the_drawing) {
    const char *src[3] = {"ab", "c", ("\xE2\x96\x81" "d")};
    const char *tgt[2] = {"x", "yz"};
    /* Levels: round(4w) = (4,0,0) and (1,2,1). */
    const float w[6] = {1.0f, 0.0f, 0.0f, 0.3f, 0.5f, 0.2f};
    nmt_strbuf out = {0};
    ck_assert_int_eq(nmt_plot_alignment_text(&out, "t", src, 3, tgt, 2, w), 0);
    ck_assert_str_eq(out.data, "t\n"
                               "   a c \xE2\x96\x81 \n"
                               "   b   d \n"
                               " x \xE2\x96\x88\xE2\x96\x88    \n"
                               "yz \xE2\x96\x91\xE2\x96\x91\xE2\x96\x92\xE2\x96\x92\xE2\x96\x91\xE2\x96\x91\n");
    nmt_strbuf_free(&out);
    /* A control character in a piece is shown as '?', never sent to the terminal. */
    const char *evil_src[1] = {"\x1b[2J"};
    const char *evil_tgt[1] = {"\x1b]0;x\x07"};
    const float one = 1.0f;
    ck_assert_int_eq(nmt_plot_alignment_text(&out, NULL, evil_src, 1, evil_tgt, 1, &one), 0);
    ck_assert_ptr_null(strchr(out.data, '\x1b'));
    ck_assert_ptr_null(strchr(out.data, '\x07'));
    ck_assert_ptr_nonnull(strstr(out.data, "?]0;x? \xE2\x96\x88\xE2\x96\x88\n"));
    nmt_strbuf_free(&out);
}
END_TEST

START_TEST(errors_are_reported) {
    const char *p[1] = {"a"};
    const float nan = NAN;
    nmt_strbuf out = {0};
    ck_assert_int_eq(nmt_plot_alignment_svg(&out, NULL, p, 1, p, 1, &nan), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "non-finite"));
    ck_assert_int_eq(nmt_plot_alignment_text(&out, NULL, p, 0, p, 1, &nan), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "empty"));
    /* Running out of memory anywhere gives an error, not a truncated picture. */
    const float w[4] = {0.5f, 0.5f, 0.25f, 0.75f};
    const char *q[2] = {"a", "b"};
    for (int text = 0; text < 2; text++) {
        long n = 1;
        for (;; n++) {
            nmt_alloc_fail_at(n);
            int rc = text ? nmt_plot_alignment_text(&out, "t", q, 2, q, 2, w) : nmt_plot_alignment_svg(&out, "t", q, 2, q, 2, w);
            nmt_alloc_fail_at(0);
            nmt_strbuf_free(&out);
            if (rc == 0) break;
            ck_assert_ptr_nonnull(strstr(nmt_error(), "out of memory"));
        }
        ck_assert_int_gt(n, text ? 2 : 3); /* the sweep did fail the allocations along the way */
    }
}
END_TEST

int main(void) {
    Suite *s = suite_create("plot");
    TCase *tc = tcase_create("plot");
    tcase_add_test(tc, canvas_is_well_formed);
    tcase_add_test(tc, colormap_brightens_with_weight);
    tcase_add_test(tc, alignment_svg_cells_and_escaping);
    tcase_add_test(tc, alignment_text_matches_the_drawing);
    tcase_add_test(tc, errors_are_reported);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
