/* Tests of packed inference products (packed.h) against nmt_linear_forward (OpenBLAS).
 *
 * Shapes cover every tile height (1..12 rows and more), partial panels (N not a multiple of 16 or
 * 32, N < 16), K = 1, M = 1, and both with and without a bias. On each own kernel the CPU has
 * (AVX2+FMA, AVX-512) the products are checked to be row-invariant bit for bit (a row alone equals
 * the same row inside any batch) and the same on 1, 2 and 3 threads, and a CPU with AVX2 must pack
 * (no OpenBLAS fallback); NMT_GEMM=openblas forces the fallback, which must be exactly
 * nmt_linear_forward. bf16 products are checked exactly where bfloat16 is exact, and within its
 * rounding elsewhere.
 */
#include "compute/gemm.h"
#include "compute/pool.h"
#include "compute/kernels.h"
#include "compute/packed.h"
#include "base/util.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void fill(float *x, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
    }
}

static const int shapes[][3] = {{1, 32, 16}, {5, 768, 64}, {12, 40, 33}, {13, 100, 256}, {37, 8, 7}, {64, 97, 130},
                                {1, 5, 1},   {7, 15, 3},   {6, 17, 1},   {100, 300, 600}};
enum { SHAPES = sizeof shapes / sizeof shapes[0] };

/* y from packed and from OpenBLAS agree to float rounding of a K-term dot product. */
START_TEST(packed_matches_blas) {
    const int M = shapes[_i][0], N = shapes[_i][1], K = shapes[_i][2];
    float *x = malloc(sizeof(float) * (size_t)M * K), *w = malloc(sizeof(float) * (size_t)N * K);
    float *b = malloc(sizeof(float) * (size_t)N), *y = malloc(sizeof(float) * (size_t)M * N);
    float *ref = malloc(sizeof(float) * (size_t)M * N);
    fill(x, (size_t)M * K, 1);
    fill(w, (size_t)N * K, 2);
    fill(b, (size_t)N, 3);
    nmt_packed p;
    ck_assert_int_eq(nmt_packed_init(&p, w, N, K, NMT_PRECISION_FP32), 0);
    for (int with_bias = 0; with_bias < 2; with_bias++) {
        nmt_linear_forward(ref, x, w, with_bias ? b : NULL, M, K, N);
        nmt_packed_linear(y, x, &p, with_bias ? b : NULL, M, NULL);
        for (size_t i = 0; i < (size_t)M * N; i++)
            ck_assert_msg(fabsf(y[i] - ref[i]) <= 1e-5f * sqrtf((float)K), "element %zu: %g vs %g", i, y[i], ref[i]);
    }
    nmt_packed_free(&p);
    free(x), free(w), free(b), free(y), free(ref);
}
END_TEST

/* On own kernel _i (AVX2, AVX-512): each row's result is the same alone, in any batch, on 1, 2 or
 * 3 threads; a CPU with an own kernel packs. */
START_TEST(packed_rows_are_invariant) {
    enum { M = 29, N = 270, K = 300 };
    static float x[M * K], w[N * K], b[N], all[M * N], one[N], more[M * N];
    fill(x, M * K, 4);
    fill(w, N * K, 5);
    fill(b, N, 6);
    const nmt_gemm_kernel kernel = _i ? NMT_GEMM_AVX512 : NMT_GEMM_AVX2;
    unsetenv("NMT_GEMM"); /* the CPU's kernels, also when the suite runs under NMT_GEMM=openblas */
    nmt_packed p;
    if (nmt_gemm_best() < kernel) { /* not on this CPU */
        ck_assert_int_eq(nmt_packed_init(&p, w, N, K, NMT_PRECISION_FP32), 0);
        ck_assert_int_eq(nmt_packed_fast(&p), nmt_gemm_best() != NMT_GEMM_OPENBLAS);
        nmt_packed_free(&p);
        return;
    }
    ck_assert_int_eq(nmt_gemm_set_kernel(kernel), 0);
    ck_assert_int_eq(nmt_packed_init(&p, w, N, K, NMT_PRECISION_FP32), 0);
    ck_assert_int_eq(nmt_packed_fast(&p), 1);
    ck_assert_int_eq(p.width, kernel == NMT_GEMM_AVX512 ? 32 : 16);
    nmt_pool_set_threads(1);
    nmt_packed_linear(all, x, &p, b, M, NULL);
    for (int r = 0; r < M; r++) {
        nmt_packed_linear(one, x + (size_t)r * K, &p, b, 1, NULL);
        ck_assert_msg(memcmp(one, all + (size_t)r * N, sizeof one) == 0, "row %d alone differs", r);
    }
    for (int threads = 2; threads <= 3; threads++) {
        nmt_pool_set_threads(threads);
        nmt_packed_linear(more, x, &p, b, M, NULL);
        ck_assert_msg(memcmp(more, all, sizeof all) == 0, "%d threads differ", threads);
    }
    nmt_packed_free(&p);
}
END_TEST

/* NMT_GEMM=openblas (read at the first product: Check runs each test in a fresh process) packs
 * nothing, computes exactly what nmt_linear_forward does, and refuses bf16 rather than fake it. */
START_TEST(packed_fallback_is_blas) {
    enum { M = 9, N = 33, K = 20 };
    static float x[M * K], w[N * K], b[N], y[M * N], ref[M * N];
    fill(x, M * K, 7);
    fill(w, N * K, 8);
    fill(b, N, 9);
    setenv("NMT_GEMM", "openblas", 1);
    ck_assert_int_eq(nmt_gemm_own(), 0);
    nmt_packed p;
    ck_assert_int_eq(nmt_packed_init(&p, w, N, K, NMT_PRECISION_BF16), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "AVX512_BF16"));
    ck_assert_int_eq(nmt_packed_init(&p, w, N, K, NMT_PRECISION_FP32), 0);
    ck_assert_int_eq(nmt_packed_fast(&p), 0);
    nmt_packed_linear(y, x, &p, b, M, NULL);
    nmt_linear_forward(ref, x, w, b, M, K, N);
    ck_assert_mem_eq(y, ref, sizeof y);
    nmt_packed_free(&p);
}
END_TEST

/* bf16 products: on values bfloat16 holds exactly (multiples of 1/4 up to 8) every product and sum is
 * exact in float32, so the bf16 kernel must equal the fp32 one bit for bit, odd K and partial
 * panels included; on arbitrary values it is within bf16's rounding (2^-8 relative per factor). */
START_TEST(bf16_products) {
    if (!nmt_packed_available(NMT_PRECISION_BF16)) return; /* no AVX512_BF16 on this CPU */
    const int M = shapes[_i][0], N = shapes[_i][1], K = shapes[_i][2];
    float *x = malloc(sizeof(float) * (size_t)M * K), *w = malloc(sizeof(float) * (size_t)N * K);
    float *b = malloc(sizeof(float) * (size_t)N), *y = malloc(sizeof(float) * (size_t)M * N);
    float *ref = malloc(sizeof(float) * (size_t)M * N);
    uint32_t *scratch = NULL;
    for (int exact = 1; exact >= 0; exact--) {
        fill(x, (size_t)M * K, 11);
        fill(w, (size_t)N * K, 12);
        fill(b, (size_t)N, 13);
        if (exact) {
            for (size_t i = 0; i < (size_t)M * K; i++) x[i] = roundf(x[i] * 16.0f) / 4.0f;
            for (size_t i = 0; i < (size_t)N * K; i++) w[i] = roundf(w[i] * 16.0f) / 4.0f;
            for (size_t i = 0; i < (size_t)N; i++) b[i] = roundf(b[i] * 16.0f) / 4.0f;
        }
        nmt_packed fp32, bf16;
        ck_assert_int_eq(nmt_packed_init(&fp32, w, N, K, NMT_PRECISION_FP32), 0);
        ck_assert_msg(nmt_packed_init(&bf16, w, N, K, NMT_PRECISION_BF16) == 0, "%s", nmt_error());
        ck_assert_uint_eq(nmt_packed_scratch(&bf16, M), (size_t)M * (size_t)((K + 1) / 2));
        ck_assert_uint_eq(nmt_packed_scratch(&fp32, M), 0);
        scratch = realloc(scratch, sizeof(uint32_t) * nmt_packed_scratch(&bf16, M));
        nmt_packed_linear(ref, x, &fp32, b, M, NULL);
        nmt_packed_linear(y, x, &bf16, b, M, scratch);
        for (size_t i = 0; i < (size_t)M * N; i++) {
            if (exact) {
                ck_assert_msg(y[i] == ref[i], "element %zu: %g vs %g", i, y[i], ref[i]);
            } else {
                /* |x|, |w| <= 0.5: each of K products is off by at most 2^-8 * 0.25 * 2. */
                ck_assert_msg(fabsf(y[i] - ref[i]) <= (float)K * 2e-3f, "element %zu: %g vs %g", i, y[i], ref[i]);
            }
        }
        nmt_packed_free(&fp32);
        nmt_packed_free(&bf16);
    }
    free(scratch);
    free(x), free(w), free(b), free(y), free(ref);
}
END_TEST

/* Rates come back in the order asked, one a precision however often it is asked for: positive for
 * every precision this CPU runs, -1 for the others; the fastest is one that runs here. */
START_TEST(rates_are_measured_for_each_precision) {
    static const nmt_precision asked[] = {NMT_PRECISION_INT8, NMT_PRECISION_FP32, NMT_PRECISION_BF16,
                                          NMT_PRECISION_FP32};
    double rates[4];
    nmt_packed_rates(asked, 4, 8, 64, 32, 2, 0.0, rates);
    for (int i = 0; i < 4; i++) {
        const int here = asked[i] == NMT_PRECISION_FP32 || nmt_packed_available(asked[i]);
        ck_assert_msg(here ? rates[i] > 0 : rates[i] == -1.0, "%s: %g GOP/s", nmt_packed_precision_name(asked[i]),
                      rates[i]);
    }
    double all[3];
    const nmt_precision best = nmt_packed_fastest(8, 64, 32, 0.0, all);
    ck_assert(best == NMT_PRECISION_FP32 || nmt_packed_available(best));
    ck_assert(all[best] >= all[NMT_PRECISION_FP32]);
}
END_TEST

/* Bad shapes are refused; an allocation failure while packing is reported. */
START_TEST(packed_errors) {
    float w[4] = {0};
    nmt_packed p;
    ck_assert_int_eq(nmt_packed_init(&p, w, 0, 4, NMT_PRECISION_FP32), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "packed matrix"));
    nmt_alloc_fail_at(1);
    int rc = nmt_packed_init(&p, w, 1, 4, NMT_PRECISION_FP32);
    nmt_alloc_fail_at(0);
    if (rc == 0) { /* no own kernel: nothing was allocated */
        ck_assert_int_eq(nmt_packed_fast(&p), 0);
    } else {
        ck_assert_ptr_nonnull(strstr(nmt_error(), "injected fault"));
    }
    nmt_packed_free(&p);
}
END_TEST

int main(void) {
    Suite *s = suite_create("packed");
    TCase *tc = tcase_create("packed");
    tcase_add_loop_test(tc, packed_matches_blas, 0, SHAPES);
    tcase_add_loop_test(tc, packed_rows_are_invariant, 0, 2);
    tcase_add_test(tc, packed_fallback_is_blas);
    tcase_add_loop_test(tc, bf16_products, 0, SHAPES);
    tcase_add_test(tc, rates_are_measured_for_each_precision);
    tcase_add_test(tc, packed_errors);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
