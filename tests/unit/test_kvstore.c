/* Tests of kvstore: the float16 conversions against F16C's own instructions over every class of
 * value (all 65536 halves back to float; every half, every tie between two halves and the floats
 * next to it, overflow, subnormals, NaN to half), the stored formats' round trips within their
 * error bounds (float16: 2^-11 relative in the normal range; int8: half a factor), and copies.
 */
#include "compute/kvstore.h"

#include "testing.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_F16C_TEST 1
__attribute__((target("avx,f16c"))) static uint16_t f16c_half(float x) {
    return (uint16_t)_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(x), _MM_FROUND_TO_NEAREST_INT), 0);
}
__attribute__((target("avx,f16c"))) static float f16c_float(uint16_t h) {
    return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}
static int cpu_f16c(void) { /* from CPUID: clang's __builtin_cpu_supports does not know "f16c" */
    unsigned eax, ebx, ecx, edx;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
}
#else
#define HAVE_F16C_TEST 0
#endif

static uint32_t bits_of(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float float_of(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

START_TEST(halves_widen_as_f16c_does) {
#if HAVE_F16C_TEST
    if (!cpu_f16c()) return;
    for (uint32_t h = 0; h < 65536; h++)
        ck_assert_msg(bits_of(nmt_kv_half_value((uint16_t)h)) == bits_of(f16c_float((uint16_t)h)), "half %04x", h);
#endif
    /* Worked values, on any CPU. */
    ck_assert(nmt_kv_half_value(0x3c00) == 1.0f && nmt_kv_half_value(0xc000) == -2.0f);
    ck_assert(nmt_kv_half_value(0x7bff) == 65504.0f && nmt_kv_half_value(0x0001) == 0x1p-24f);
    ck_assert(isinf(nmt_kv_half_value(0x7c00)) && isnan(nmt_kv_half_value(0x7e01)));
}
END_TEST

/* The float16 rounding of x by both implementations (and the store path, which takes F16C where
 * the CPU has it). */
static void expect_half(float x) {
    const uint16_t mine = nmt_kv_half_bits(x);
    uint16_t stored;
    nmt_kv_store(NMT_KV_F16, &stored, NULL, 0, &x, 1, 1, 1, 1);
    ck_assert_msg(stored == mine, "%a: store %04x, plain C %04x", (double)x, stored, mine);
#if HAVE_F16C_TEST
    if (cpu_f16c()) ck_assert_msg(mine == f16c_half(x), "%a: %04x, F16C %04x", (double)x, mine, f16c_half(x));
#endif
}

START_TEST(floats_round_to_halves_as_f16c_does) {
    for (uint32_t h = 0; h < 0x7c00; h++) {
        const float a = nmt_kv_half_value((uint16_t)h), b = nmt_kv_half_value((uint16_t)(h + 1));
        const float tie = (float)(((double)a + (double)b) / 2.0); /* exact: halves have 11 bits */
        const float around[] = {a, tie, nextafterf(tie, 0.0f), nextafterf(tie, INFINITY)};
        for (int i = 0; i < 4; i++) {
            expect_half(around[i]);
            expect_half(-around[i]);
        }
    }
    const float specials[] = {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 70000.0f, 1e30f, INFINITY, -INFINITY,
                              0x1p-25f, 0x1.8p-25f, 0x1p-26f, 1e-30f, 0x1p-149f, float_of(0x7fc00001u),
                              float_of(0x7f800001u), float_of(0xffc12345u)};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) expect_half(specials[i]);
    /* Exactly between 1 and the next half, 1 + 2^-11: ties to the even one, 1. */
    ck_assert_int_eq(nmt_kv_half_bits(1.0f + 0x1p-11f), 0x3c00);
    ck_assert_int_eq(nmt_kv_half_bits(1.0f + 0x1.8p-10f), 0x3c02);
    ck_assert_int_eq(nmt_kv_half_bits(65520.0f), 0x7c00);
    ck_assert_int_eq(nmt_kv_half_bits(65519.0f), 0x7bff);
    uint64_t s = 5;
    for (int i = 0; i < 200000; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        expect_half(float_of((uint32_t)(s >> 32)));
    }
}
END_TEST

/* n rows of H heads of dh values, in [-amp, amp]. */
static void random_rows(float *x, int n, unsigned seed, float amp) {
    for (int i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = amp * (float)((seed >> 8) / 8388608.0 - 1.0);
    }
}

START_TEST(stored_rows_round_trip_within_their_bounds) {
    enum { H = 3, DH = 20, W = H * DH, N = 5, STRIDE = W + 7 };
    float rows[N * STRIDE], back[N * W];
    random_rows(rows, N * STRIDE, 3, 40.0f);
    rows[2 * STRIDE + DH] = 0.0f; /* a zero and a large value in one head */
    rows[2 * STRIDE + DH + 1] = 300.0f;
    for (int f = 0; f < 3; f++) {
        const nmt_kv_format format = (nmt_kv_format)f;
        unsigned char data[(N + 1) * W * 4];
        float factor[(N + 1) * H];
        const size_t at = W; /* one row in: offsets are honoured */
        nmt_kv_store(format, data, factor, at, rows, STRIDE, N, H, DH);
        for (int h = 0; h < H; h++)
            nmt_kv_widen(format, back + h * DH, W, data, factor, at + (size_t)h * DH, W, NULL, 0, N, DH, DH);
        for (int i = 0; i < N; i++)
            for (int h = 0; h < H; h++) {
                float max = 0.0f;
                for (int j = 0; j < DH; j++) max = fmaxf(max, fabsf(rows[i * STRIDE + h * DH + j]));
                for (int j = 0; j < DH; j++) {
                    const float x = rows[i * STRIDE + h * DH + j], y = back[i * W + h * DH + j];
                    const double bound = format == NMT_KV_F32 ? 0.0
                                         : format == NMT_KV_F16 ? ldexp(fabs(x), -11)
                                                                : 0.5 * max / 127.0 * (1.0 + 1e-5);
                    ck_assert_msg(fabs((double)y - x) <= bound, "%s row %d head %d: %g -> %g",
                                  nmt_kv_format_name(format), i, h, (double)x, (double)y);
                    if (format == NMT_KV_F16) ck_assert(y == nmt_kv_half_value(nmt_kv_half_bits(x)));
                }
            }
        /* Through a path, row i is stored row path[i] (its factor with it): the rows in reverse. */
        const int32_t path[N] = {N, N - 1, N - 2, N - 3, N - 4};
        float picked[N * W];
        for (int h = 0; h < H; h++)
            nmt_kv_widen(format, picked + h * DH, W, data, factor, (size_t)h * DH, 0, path, W, N, DH, DH);
        for (int i = 0; i < N; i++) ck_assert_mem_eq(picked + i * W, back + (N - 1 - i) * W, sizeof(float) * W);
        ck_assert_uint_eq(nmt_kv_value_bytes(format), format == NMT_KV_F32 ? 4 : format == NMT_KV_F16 ? 2 : 1);
    }
}
END_TEST

int main(void) {
    Suite *s = suite_create("kvstore");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, halves_widen_as_f16c_does);
    tcase_add_test(tc, floats_round_to_halves_as_f16c_does);
    tcase_add_test(tc, stored_rows_round_trip_within_their_bounds);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
