/* Tests of util: error messages, allocation fault injection, arenas. */
#include "base/util.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

START_TEST(error_set_and_prefix) {
    ck_assert_int_eq(nmt_error_set("line %d: bad", 12), -1);
    ck_assert_str_eq(nmt_error(), "line 12: bad");
    nmt_error_prefix("%s", "train.en");
    ck_assert_str_eq(nmt_error(), "train.en: line 12: bad");
    nmt_error_clear();
    ck_assert_str_eq(nmt_error(), "");
}
END_TEST

START_TEST(alloc_fault_injection_fails_exactly_the_nth) {
    nmt_alloc_fail_at(2);
    void *a = nmt_malloc(16);
    ck_assert_ptr_nonnull(a);
    void *b = nmt_malloc(16);
    ck_assert_ptr_null(b);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "out of memory"));
    void *c = nmt_malloc(16);
    ck_assert_ptr_nonnull(c);
    free(a);
    free(c);
}
END_TEST

START_TEST(size_mul_detects_overflow) {
    size_t out;
    ck_assert_int_eq(nmt_size_mul(SIZE_MAX / 2, 3, &out, "tensor"), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "tensor"));
    ck_assert_int_eq(nmt_size_mul(1000, 1000, &out, "tensor"), 0);
    ck_assert_uint_eq(out, 1000000);
}
END_TEST

START_TEST(arena_aligns_and_reuses_chunks) {
    nmt_arena arena;
    nmt_arena_init(&arena, 1024);
    void *first[8];
    for (int i = 0; i < 8; i++) {
        first[i] = nmt_arena_alloc(&arena, 300 + (size_t)i * 100);
        ck_assert_ptr_nonnull(first[i]);
        ck_assert_uint_eq((uintptr_t)first[i] % 64, 0);
        memset(first[i], 0xAB, 300 + (size_t)i * 100);
    }
    size_t high = arena.high_water;
    /* The same sequence after a reset lands on the same addresses and allocates nothing new. */
    nmt_alloc_fail_at(1);
    nmt_arena_reset(&arena);
    for (int i = 0; i < 8; i++) ck_assert_ptr_eq(nmt_arena_alloc(&arena, 300 + (size_t)i * 100), first[i]);
    nmt_alloc_fail_at(0);
    ck_assert_uint_eq(arena.high_water, high);
    float *zeros = nmt_arena_floats(&arena, 5000);
    ck_assert_ptr_nonnull(zeros);
    for (int i = 0; i < 5000; i++) ck_assert(zeros[i] == 0.0f);
    nmt_arena_free(&arena);
}
END_TEST

START_TEST(arena_reports_out_of_memory) {
    nmt_arena arena;
    nmt_arena_init(&arena, 1024);
    nmt_alloc_fail_at(1);
    ck_assert_ptr_null(nmt_arena_alloc(&arena, 10));
    ck_assert_ptr_nonnull(strstr(nmt_error(), "out of memory"));
    nmt_arena_free(&arena);
}
END_TEST

START_TEST(scratch_grows_by_at_least_half) {
    nmt_scratch s = {0};
    ck_assert_int_eq(nmt_scratch_reserve(&s, 0), 0);
    ck_assert_ptr_null(s.data);
    ck_assert_int_eq(nmt_scratch_reserve(&s, 1000), 0);
    ck_assert_uint_eq(s.cap, 1000);
    ck_assert_uint_eq((uintptr_t)s.data % 64, 0);
    void *first = s.data;
    ck_assert_int_eq(nmt_scratch_reserve(&s, 900), 0); /* enough room: nothing moves */
    ck_assert_ptr_eq(s.data, first);
    ck_assert_int_eq(nmt_scratch_reserve(&s, 1001), 0); /* a little more: half as much again */
    ck_assert_uint_eq(s.cap, 1500);
    ck_assert_int_eq(nmt_scratch_reserve(&s, 4000), 0); /* much more: exactly that */
    ck_assert_uint_eq(s.cap, 4000);
    nmt_alloc_fail_at(1);
    ck_assert_int_eq(nmt_scratch_reserve(&s, 5000), -1);
    nmt_alloc_fail_at(0);
    ck_assert_ptr_null(s.data);
    ck_assert_uint_eq(s.cap, 0);
    free(s.data);
}
END_TEST

int main(void) {
    Suite *s = suite_create("util");
    TCase *tc = tcase_create("util");
    tcase_add_test(tc, error_set_and_prefix);
    tcase_add_test(tc, alloc_fault_injection_fails_exactly_the_nth);
    tcase_add_test(tc, size_mul_detects_overflow);
    tcase_add_test(tc, arena_aligns_and_reuses_chunks);
    tcase_add_test(tc, arena_reports_out_of_memory);
    tcase_add_test(tc, scratch_grows_by_at_least_half);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
