/* Tests of pynum: Python's number formatting (f"{x:.{w}f}" and repr(float), whose values below were
 * printed by Python 3.11). */
#include "eval/pynum.h"
#include "testing.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

START_TEST(python_repr) {
    struct { double x; const char *want; } cases[] = {
        {48.9, "48.9"}, {100.0, "100.0"}, {0.0, "0.0"}, {79.0, "79.0"}, {1e-05, "1e-05"}, {0.0001, "0.0001"},
        {1.5e-07, "1.5e-07"}, {1e16, "1e+16"}, {1234567890123456.0, "1234567890123456.0"},
        {0.1 + 0.2, "0.30000000000000004"}, {48.530827009929865, "48.530827009929865"},
        {0.26732673267326734, "0.26732673267326734"}, {1e22, "1e+22"}, {-2.5, "-2.5"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[40];
        nmt_pynum_repr(cases[i].x, out);
        ck_assert_str_eq(out, cases[i].want);
    }
}
END_TEST

START_TEST(fixed_and_rounded) {
    char out[64];
    nmt_pynum_fixed(48.530827009929865, 1, out, sizeof out);
    ck_assert_str_eq(out, "48.5");
    nmt_pynum_fixed(48.530827009929865, 10, out, sizeof out);
    ck_assert_str_eq(out, "48.5308270099");
    nmt_pynum_fixed(0.25, 1, out, sizeof out); /* round half to even, as Python */
    ck_assert_str_eq(out, "0.2");
    nmt_pynum_fixed(79.127, 0, out, sizeof out);
    ck_assert_str_eq(out, "79");
    ck_assert_double_eq(nmt_pynum_rounded(79.127, 0), 79.0);
    ck_assert_double_eq(nmt_pynum_rounded(48.530827009929865, 4), 48.5308);
}
END_TEST

int main(void) {
    Suite *s = suite_create("pynum");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, python_repr);
    tcase_add_test(tc, fixed_and_rounded);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
