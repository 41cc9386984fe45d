/* Tests of bf16: the general product against a double-precision loop over operands rounded to
 * bfloat16 here (an implementation of the rounding of its own), in every layout and at shapes that
 * cross the tiles; that it is not the fp32 product; its invariances (1, 2 or 3 threads, a row alone
 * or in a batch, A read in either layout: the same bits); and nmt_sgemm's bf16 switch. Skipped on a
 * CPU without AVX512_BF16, where the switch must refuse.
 */
#include "compute/bf16.h"

#include "compute/gemm.h"
#include "compute/pool.h"
#include "gradcheck.h"
#include "testing.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* x rounded to bfloat16, ties to even, subnormals to zero (finite x). */
static double bf16_of(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0) return 0.0;
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    float r;
    memcpy(&r, &u, sizeof r);
    return r;
}

static const int shapes[][3] = {{130, 70, 150}, {40, 300, 120}, {5, 3, 7},   {13, 40, 0},
                                {1, 1, 1},      {1, 17, 1},     {7, 15, 301}, {97, 5, 2}, {25, 33, 64}};
enum { SHAPES = sizeof shapes / sizeof shapes[0] };

START_TEST(bf16_gemm_matches_the_rounded_product_in_every_layout) {
    if (!nmt_bf16_available()) return;
    nmt_pool_set_threads(2);
    const float betas[] = {0.0f, 1.0f, -0.5f};
    int differs_from_fp32 = 0;
    for (size_t s = 0; s < SHAPES; s++) {
        const int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2], k1 = K ? K : 1;
        float *A = malloc(sizeof(float) * M * k1), *B = malloc(sizeof(float) * k1 * N);
        float *C = malloc(sizeof(float) * M * N), *C0 = malloc(sizeof(float) * M * N);
        gc_fill(A, (long)M * K, 11, 1.0f);
        gc_fill(B, (long)K * N, 12, 1.0f);
        gc_fill(C0, (long)M * N, 13, 1.0f);
        for (int layout = 0; layout < 4 * 3; layout++) {
            const int ta = layout & 1, tb = (layout >> 1) & 1;
            const float beta = betas[layout / 4];
            memcpy(C, C0, sizeof(float) * M * N);
            ck_assert_int_eq(nmt_bf16_gemm(ta, tb, M, N, K, 0.5f, A, ta ? M : k1, B, tb ? k1 : N, beta, C, N), 0);
            for (int m = 0; m < M; m++)
                for (int n = 0; n < N; n++) {
                    double want = beta * C0[m * N + n], exact = want, size = fabs(want);
                    for (int k = 0; k < K; k++) {
                        const float a = ta ? A[k * M + m] : A[m * K + k], b = tb ? B[n * K + k] : B[k * N + n];
                        want += 0.5 * bf16_of(a) * bf16_of(b);
                        exact += 0.5 * a * b;
                        size += fabs(0.5 * a * b);
                    }
                    /* float32 sums of exact bf16 products: K roundings of at most 2^-24 of the sum's size */
                    const double tolerance = (K + 2) * 0x1p-24 * size + 1e-30;
                    ck_assert_msg(fabs(C[m * N + n] - want) <= tolerance, "%dx%dx%d layout %d: C[%d][%d] = %.9g, want %.9g",
                                  M, N, K, layout, m, n, C[m * N + n], want);
                    differs_from_fp32 |= fabs(C[m * N + n] - exact) > 1e3 * tolerance;
                }
        }
        free(A), free(B), free(C), free(C0);
    }
    ck_assert_msg(differs_from_fp32, "no product differs from fp32's: the operands were not rounded");
}
END_TEST

START_TEST(bf16_gemm_is_thread_and_row_invariant) {
    if (!nmt_bf16_available()) return;
    enum { M = 203, N = 530, K = 301 };
    float *A = malloc(sizeof(float) * M * K), *At = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * N * K);
    float *C1 = malloc(sizeof(float) * M * N), *C = malloc(sizeof(float) * M * N), *row = malloc(sizeof(float) * N);
    gc_fill(A, (long)M * K, 14, 1.0f);
    gc_fill(B, (long)N * K, 15, 1.0f);
    for (int m = 0; m < M; m++)
        for (int k = 0; k < K; k++) At[k * M + m] = A[m * K + k];
    nmt_pool_set_threads(1);
    ck_assert_int_eq(nmt_bf16_gemm(0, 1, M, N, K, 1.0f, A, K, B, K, 0.0f, C1, N), 0);
    for (int threads = 2; threads <= 3; threads++) {
        nmt_pool_set_threads(threads);
        ck_assert_int_eq(nmt_bf16_gemm(0, 1, M, N, K, 1.0f, A, K, B, K, 0.0f, C, N), 0);
        ck_assert_mem_eq(C, C1, sizeof(float) * M * N);
        ck_assert_int_eq(nmt_bf16_gemm(1, 1, M, N, K, 1.0f, At, M, B, K, 0.0f, C, N), 0);
        ck_assert_mem_eq(C, C1, sizeof(float) * M * N);
    }
    for (int m = 0; m < M; m += 17) {
        ck_assert_int_eq(nmt_bf16_gemm(0, 1, 1, N, K, 1.0f, A + (size_t)m * K, K, B, K, 0.0f, row, N), 0);
        ck_assert_msg(memcmp(row, C1 + (size_t)m * N, sizeof(float) * N) == 0, "row %d alone differs", m);
    }
    free(A), free(At), free(B), free(C1), free(C), free(row);
}
END_TEST

/* nmt_sgemm with the switch on gives nmt_bf16_gemm's bits; off, fp32's again. */
START_TEST(sgemm_switches_to_bf16) {
    if (!nmt_bf16_available()) {
        ck_assert_int_eq(nmt_gemm_set_sgemm_bf16(1), -1);
        ck_assert_int_eq(nmt_gemm_sgemm_bf16(), 0);
        return;
    }
    nmt_pool_set_threads(2);
    enum { M = 77, N = 90, K = 65 };
    float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
    float *want = malloc(sizeof(float) * M * N), *got = malloc(sizeof(float) * M * N), *fp32 = malloc(sizeof(float) * M * N);
    gc_fill(A, (long)M * K, 16, 1.0f);
    gc_fill(B, (long)K * N, 17, 1.0f);
    nmt_sgemm(0, 0, M, N, K, 1.0f, A, K, B, N, 0.0f, fp32, N);
    ck_assert_int_eq(nmt_bf16_gemm(0, 0, M, N, K, 1.0f, A, K, B, N, 0.0f, want, N), 0);
    ck_assert_int_eq(nmt_gemm_set_sgemm_bf16(1), 0);
    ck_assert_int_eq(nmt_gemm_sgemm_bf16(), 1);
    nmt_sgemm(0, 0, M, N, K, 1.0f, A, K, B, N, 0.0f, got, N);
    ck_assert_mem_eq(got, want, sizeof(float) * M * N);
    ck_assert_int_eq(nmt_gemm_set_sgemm_bf16(0), 0);
    nmt_sgemm(0, 0, M, N, K, 1.0f, A, K, B, N, 0.0f, got, N);
    ck_assert_mem_eq(got, fp32, sizeof(float) * M * N);
    ck_assert(memcmp(want, fp32, sizeof(float) * M * N) != 0);
    free(A), free(B), free(want), free(got), free(fp32);
}
END_TEST

static Suite *bf16_suite(void) {
    Suite *s = suite_create("bf16");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, bf16_gemm_matches_the_rounded_product_in_every_layout);
    tcase_add_test(tc, bf16_gemm_is_thread_and_row_invariant);
    tcase_add_test(tc, sgemm_switches_to_bf16);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return nmt_test_run(bf16_suite()); }
