/* Tests of gemm: both sgemms against a double-precision triple loop.
 */
#include "compute/gemm.h"

#include "compute/pool.h"
#include "gradcheck.h"
#include "testing.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* C = alpha op(A) op(B) + beta C against a double-precision triple loop, for every transposition,
 * with shapes big enough that nmt_sgemm splits them over threads by rows and by columns. */
/* Both sgemms (own AVX-512 where the CPU has it, OpenBLAS), every layout, beta 0, 1 and other, and
 * shapes that cross the own kernel's blocks (K > 256, N > 512, M > 96, partial tiles). */
START_TEST(sgemm_matches_naive_product_in_every_layout) {
    nmt_pool_set_threads(2);
    if (nmt_gemm_set_kernel((nmt_gemm_kernel)_i) < 0) return; /* not on this CPU */
    const int shapes[][3] = {{130, 70, 150}, {40, 300, 120}, {5, 3, 7}, {50, 600, 300}, {13, 40, 0}};
    const float betas[] = {2.0f, 0.0f, 1.0f};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
        float *C = malloc(sizeof(float) * M * N), *C0 = malloc(sizeof(float) * M * N);
        gc_fill(A, (long)M * K, 1, 1.0f);
        gc_fill(B, (long)K * N, 2, 1.0f);
        gc_fill(C0, (long)M * N, 3, 1.0f);
        for (int layout = 0; layout < 4 * 3; layout++) {
            const int ta = layout & 1, tb = (layout >> 1) & 1;
            const float beta = betas[layout / 4];
            memcpy(C, C0, sizeof(float) * M * N);
            nmt_sgemm(ta, tb, M, N, K, 0.5f, A, ta ? M : (K ? K : 1), B, tb ? (K ? K : 1) : N, beta, C, N);
            for (int m = 0; m < M; m++)
                for (int n = 0; n < N; n++) {
                    double want = beta * C0[m * N + n];
                    for (int k = 0; k < K; k++)
                        want += 0.5 * (ta ? A[k * M + m] : A[m * K + k]) * (tb ? B[n * K + k] : B[k * N + n]);
                    ck_assert_double_eq_tol(C[m * N + n], want, 1e-4);
                }
        }
        free(A);
        free(B);
        free(C);
        free(C0);
    }
}
END_TEST

static Suite *gemm_suite(void) {
    Suite *s = suite_create("gemm");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, sgemm_matches_naive_product_in_every_layout, 0, 3);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return nmt_test_run(gemm_suite()); }
