/* Tests of score: signatures in sacreBLEU's field order and Python's number formatting
 * (f"{x:.{w}f}" and repr(float), whose values below were printed by Python 3.11). */
#include "eval/score.h"
#include "nmt/version.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

START_TEST(signature_order_and_short_form) {
    nmt_score_field fields[2] = {{"case", "c", "mixed"}, {"tok", "tok", "13a"}};
    nmt_score_signature g = {.nrefs = 2};
    char out[256];
    nmt_score_signature_format(&g, fields, 2, out, sizeof out);
    ck_assert_str_eq(out, "nrefs:2|case:mixed|tok:13a|version:" NMT_VERSION);
    g.bootstrap = 1000;
    g.seed = "12345";
    nmt_score_signature_format(&g, fields, 2, out, sizeof out);
    ck_assert_str_eq(out, "nrefs:2|bs:1000|seed:12345|case:mixed|tok:13a|version:" NMT_VERSION);
    g = (nmt_score_signature){.nrefs = -1, .trials = 10000, .seed = "none", .short_form = 1};
    nmt_score_signature_format(&g, fields, 2, out, sizeof out);
    ck_assert_str_eq(out, "#:var|ar:10000|rs:none|c:mixed|tok:13a|v:" NMT_VERSION);
    /* a short buffer is cut but NUL-terminated, and the needed length is returned */
    char small[8];
    size_t need = nmt_score_signature_format(&g, fields, 2, small, sizeof small);
    ck_assert_uint_eq(need, strlen(out));
    ck_assert_str_eq(small, "#:var|a");
}
END_TEST

START_TEST(python_repr) {
    struct { double x; const char *want; } cases[] = {
        {48.9, "48.9"}, {100.0, "100.0"}, {0.0, "0.0"}, {79.0, "79.0"}, {1e-05, "1e-05"}, {0.0001, "0.0001"},
        {1.5e-07, "1.5e-07"}, {1e16, "1e+16"}, {1234567890123456.0, "1234567890123456.0"},
        {0.1 + 0.2, "0.30000000000000004"}, {48.530827009929865, "48.530827009929865"},
        {0.26732673267326734, "0.26732673267326734"}, {1e22, "1e+22"}, {-2.5, "-2.5"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[40];
        nmt_score_repr(cases[i].x, out);
        ck_assert_str_eq(out, cases[i].want);
    }
}
END_TEST

START_TEST(fixed_and_rounded) {
    char out[64];
    nmt_score_fixed(48.530827009929865, 1, out, sizeof out);
    ck_assert_str_eq(out, "48.5");
    nmt_score_fixed(48.530827009929865, 10, out, sizeof out);
    ck_assert_str_eq(out, "48.5308270099");
    nmt_score_fixed(0.25, 1, out, sizeof out); /* round half to even, as Python */
    ck_assert_str_eq(out, "0.2");
    nmt_score_fixed(79.127, 0, out, sizeof out);
    ck_assert_str_eq(out, "79");
    ck_assert_double_eq(nmt_score_rounded(79.127, 0), 79.0);
    ck_assert_double_eq(nmt_score_rounded(48.530827009929865, 4), 48.5308);
}
END_TEST

int main(void) {
    Suite *s = suite_create("score");
    TCase *tc = tcase_create("score");
    tcase_add_test(tc, signature_order_and_short_form);
    tcase_add_test(tc, python_repr);
    tcase_add_test(tc, fixed_and_rounded);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
