/* Tests of pcg64: the raw outputs, bounded draws and random bits of
 * numpy.random.default_rng(seed), as printed by NumPy 1.24 (bit_generator.random_raw(),
 * choice(n, size), integers(2, dtype=bool)). */
#include "base/pcg64.h"

#include <check.h>
#include <stdlib.h>

START_TEST(raw_outputs) {
    nmt_pcg64 rng;
    nmt_pcg64_seed(&rng, 12345);
    ck_assert_uint_eq(nmt_pcg64_next64(&rng), 4193609425186963869ull);
    ck_assert_uint_eq(nmt_pcg64_next64(&rng), 5843160025838961886ull);
    ck_assert_uint_eq(nmt_pcg64_next64(&rng), 14708796524633321433ull);
}
END_TEST

START_TEST(choice_indices) {
    nmt_pcg64 rng;
    nmt_pcg64_seed(&rng, 12345); /* choice(7, size=(2, 10)), row by row */
    const uint32_t want[] = {4, 1, 5, 2, 1, 5, 4, 4, 6, 2, 5, 2, 3, 4, 1, 1, 1, 4, 4, 6};
    for (int i = 0; i < 20; i++) ck_assert_uint_eq(nmt_pcg64_below(&rng, 7), want[i]);
    nmt_pcg64_seed(&rng, 0); /* choice(1000, size=8) */
    const uint32_t want0[] = {850, 636, 511, 269, 307, 40, 75, 16};
    for (int i = 0; i < 8; i++) ck_assert_uint_eq(nmt_pcg64_below(&rng, 1000), want0[i]);
    ck_assert_uint_eq(nmt_pcg64_below(&rng, 1), 0);
}
END_TEST

START_TEST(random_bits) {
    nmt_pcg64 rng;
    nmt_pcg64_seed(&rng, 12345);
    nmt_pcg64_bits_reset(&rng);
    const char *want = "1011100110000011111111110100110110110001";
    for (int i = 0; want[i]; i++) ck_assert_int_eq(nmt_pcg64_bit(&rng), want[i] - '0');
}
END_TEST

START_TEST(random_seed_differs) {
    nmt_pcg64 a, b;
    ck_assert_int_eq(nmt_pcg64_seed_random(&a), 0);
    ck_assert_int_eq(nmt_pcg64_seed_random(&b), 0);
    ck_assert(nmt_pcg64_next64(&a) != nmt_pcg64_next64(&b));
}
END_TEST

int main(void) {
    Suite *s = suite_create("pcg64");
    TCase *tc = tcase_create("pcg64");
    tcase_add_test(tc, raw_outputs);
    tcase_add_test(tc, choice_indices);
    tcase_add_test(tc, random_bits);
    tcase_add_test(tc, random_seed_differs);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
