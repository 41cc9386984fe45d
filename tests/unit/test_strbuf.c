/* Tests of strbuf: appends keep the string NUL-terminated, growth keeps the contents, and a failed
 * allocation makes every later append fail until the buffer is freed. */
#include "base/strbuf.h"
#include "base/util.h"
#include "testing.h"

#include <check.h>
#include <string.h>

START_TEST(appends) {
    nmt_strbuf b = {0};
    ck_assert_int_eq(nmt_strbuf_puts(&b, "ab"), 0);
    ck_assert_int_eq(nmt_strbuf_append(&b, "cdef", 2), 0);
    ck_assert_int_eq(nmt_strbuf_printf(&b, "-%d-%s", 42, "x"), 0);
    ck_assert_str_eq(b.data, "abcd-42-x");
    ck_assert_uint_eq(b.len, 9);
    for (int i = 0; i < 1000; i++) ck_assert_int_eq(nmt_strbuf_append(&b, "0123456789", 10), 0);
    ck_assert_uint_eq(b.len, 10009);
    ck_assert_int_eq(memcmp(b.data, "abcd-42-x0123456789", 19), 0);
    ck_assert_uint_ge(b.cap, b.len + 1);
    ck_assert_int_eq(b.data[b.len], '\0');
    ck_assert_int_eq(nmt_strbuf_reserve(&b, 10), 0); /* never shrinks */
    ck_assert_uint_eq(b.len, 10009);
    nmt_strbuf_free(&b);
    ck_assert_ptr_null(b.data);
    ck_assert_uint_eq(b.cap, 0);
}
END_TEST

START_TEST(failure_is_remembered) {
    nmt_strbuf b = {0};
    ck_assert_int_eq(nmt_strbuf_puts(&b, "kept"), 0);
    nmt_alloc_fail_at(1);
    ck_assert_int_eq(nmt_strbuf_reserve(&b, 1 << 20), -1);
    nmt_alloc_fail_at(0);
    ck_assert(b.failed);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "out of memory"));
    ck_assert_int_eq(nmt_strbuf_puts(&b, "more"), -1);
    ck_assert_int_eq(nmt_strbuf_printf(&b, "%d", 1), -1);
    ck_assert_str_eq(b.data, "kept");
    nmt_strbuf_free(&b);
    ck_assert_int_eq(b.failed, 0);
    ck_assert_int_eq(nmt_strbuf_puts(&b, "again"), 0);
    ck_assert_str_eq(b.data, "again");
    nmt_strbuf_free(&b);
}
END_TEST

int main(void) {
    Suite *s = suite_create("strbuf");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, appends);
    tcase_add_test(tc, failure_is_remembered);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
