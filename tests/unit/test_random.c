/* Tests of random: splitmix64's reference outputs, and output i as a pure function of (seed, i). */
#include "base/random.h"
#include "testing.h"

#include <check.h>
#include <stdint.h>

START_TEST(reference_outputs) {
    /* the first outputs of Vigna's splitmix64.c seeded with 0 */
    uint64_t state = 0;
    ck_assert_uint_eq(nmt_random_next(&state), 0xE220A8397B1DCDAFull);
    ck_assert_uint_eq(nmt_random_next(&state), 0x6E789E6AA1B965F4ull);
    ck_assert_uint_eq(nmt_random_next(&state), 0x06C45D188009454Full);
    ck_assert_uint_eq(state, 3 * NMT_RANDOM_GAMMA);
}
END_TEST

START_TEST(output_i_is_a_pure_function) {
    uint64_t seed = 12345, state = seed;
    for (uint64_t i = 0; i < 100; i++) ck_assert_uint_eq(nmt_random_at(seed, i), nmt_random_next(&state));
    ck_assert_uint_ne(nmt_random_mix(1), nmt_random_mix(2));
    ck_assert_uint_eq(nmt_random_mix(0), 0);
}
END_TEST

int main(void) {
    Suite *s = suite_create("random");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, reference_outputs);
    tcase_add_test(tc, output_i_is_a_pure_function);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
