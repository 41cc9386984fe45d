/* Tests of signature: sacreBLEU's field order, the short form, and cutting to a buffer. */
#include "eval/signature.h"
#include "testing.h"
#include "nmt/version.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

START_TEST(signature_order_and_short_form) {
    nmt_signature_field fields[2] = {{"case", "c", "mixed"}, {"tok", "tok", "13a"}};
    nmt_signature_global g = {.nrefs = 2};
    char out[256];
    nmt_signature_format(&g, fields, 2, out, sizeof out);
    ck_assert_str_eq(out, "nrefs:2|case:mixed|tok:13a|version:nmt-" NMT_VERSION);
    g.bootstrap = 1000;
    g.seed = "12345";
    nmt_signature_format(&g, fields, 2, out, sizeof out);
    ck_assert_str_eq(out, "nrefs:2|bs:1000|seed:12345|case:mixed|tok:13a|version:nmt-" NMT_VERSION);
    g = (nmt_signature_global){.nrefs = -1, .trials = 10000, .seed = "none", .short_form = 1};
    nmt_signature_format(&g, fields, 2, out, sizeof out);
    ck_assert_str_eq(out, "#:var|ar:10000|rs:none|c:mixed|tok:13a|v:nmt-" NMT_VERSION);
    /* a short buffer is cut but NUL-terminated, and the needed length is returned */
    char small[8];
    size_t need = nmt_signature_format(&g, fields, 2, small, sizeof small);
    ck_assert_uint_eq(need, strlen(out));
    ck_assert_str_eq(small, "#:var|a");
}
END_TEST

int main(void) {
    Suite *s = suite_create("signature");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, signature_order_and_short_form);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
