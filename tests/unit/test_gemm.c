/* Tests of gemm: every sgemm (OpenBLAS and each own kernel this CPU has) against a double-precision
 * triple loop, the own kernels' invariances (a row alone or in a batch, 1, 2 or 3 threads, panels
 * of either width, AVX2 against AVX-512: the same bits), and the choice of kernel. A kernel this
 * CPU lacks is skipped (nmt_gemm_set_kernel refuses it).
 */
#include "compute/gemm.h"

#include "compute/pool.h"
#include "gradcheck.h"
#include "testing.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Both layouts of each operand, beta 0, 1 and other, and shapes that cross the own kernels' blocks
 * (K > 256, N > 256 and 512, M > 96) and tiles (M, N, K not multiples of 6, 12, 16, 32; K = 1,
 * N < 16, M = 1), big enough that nmt_sgemm splits some over threads by rows and by columns. */
static const int sgemm_shapes[][3] = {{130, 70, 150}, {40, 300, 120}, {5, 3, 7},  {50, 600, 300}, {13, 40, 0},
                                      {1, 1, 1},      {1, 17, 1},     {7, 15, 300}, {1, 600, 257}, {97, 5, 1},
                                      {200, 9, 33}};
enum { SGEMM_SHAPES = sizeof sgemm_shapes / sizeof sgemm_shapes[0] };

/* C = alpha op(A) op(B) + beta C against the triple loop in double, on kernel _i. */
START_TEST(sgemm_matches_naive_product_in_every_layout) {
    nmt_pool_set_threads(2);
    if (nmt_gemm_set_sgemm_kernel((nmt_gemm_kernel)_i) < 0) return; /* not on this CPU */
    ck_assert_int_eq(nmt_gemm_own(), _i != NMT_GEMM_OPENBLAS);
    const float betas[] = {2.0f, 0.0f, 1.0f};
    for (size_t s = 0; s < SGEMM_SHAPES; s++) {
        int M = sgemm_shapes[s][0], N = sgemm_shapes[s][1], K = sgemm_shapes[s][2];
        float *A = malloc(sizeof(float) * M * (K ? K : 1)), *B = malloc(sizeof(float) * (K ? K : 1) * N);
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
                    ck_assert_msg(fabs(C[m * N + n] - want) <= 1e-4, "%dx%dx%d layout %d: C[%d][%d] = %.7g, want %.7g",
                                  M, N, K, layout, m, n, C[m * N + n], want);
                }
        }
        free(A);
        free(B);
        free(C);
        free(C0);
    }
}
END_TEST

/* C = A B^T of one shape on the own kernel k with T threads (A [M, K], B [N, K]). */
static void product_on(nmt_gemm_kernel k, int threads, int ta, int M, int N, int K, const float *A, const float *B,
                       float *C) {
    nmt_pool_set_threads(threads);
    ck_assert_int_eq(nmt_gemm_set_sgemm_kernel(k), 0);
    nmt_sgemm(ta, 1, M, N, K, 1.0f, A, ta ? M : K, B, K, 0.0f, C, N);
}

/* On each own kernel a product is the same bits on 1, 2 and 3 threads, and each row of it is the
 * same bits computed alone (M = 1) as in the batch, A read in either layout. */
START_TEST(own_sgemm_is_thread_and_row_invariant) {
    const nmt_gemm_kernel k = _i ? NMT_GEMM_AVX512 : NMT_GEMM_AVX2;
    if (nmt_gemm_best() < k) return; /* not on this CPU */
    enum { M = 203, N = 530, K = 300 };
    float *A = malloc(sizeof(float) * M * K), *At = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * N * K);
    float *C1 = malloc(sizeof(float) * M * N), *C = malloc(sizeof(float) * M * N), *row = malloc(sizeof(float) * N);
    gc_fill(A, (long)M * K, 4, 1.0f);
    gc_fill(B, (long)N * K, 5, 1.0f);
    for (int m = 0; m < M; m++)
        for (int kk = 0; kk < K; kk++) At[kk * M + m] = A[m * K + kk];
    product_on(k, 1, 0, M, N, K, A, B, C1);
    for (int threads = 2; threads <= 3; threads++) {
        product_on(k, threads, 0, M, N, K, A, B, C);
        ck_assert_mem_eq(C, C1, sizeof(float) * M * N);
        product_on(k, threads, 1, M, N, K, At, B, C);
        ck_assert_mem_eq(C, C1, sizeof(float) * M * N);
    }
    for (int m = 0; m < M; m += 17) {
        product_on(k, 2, 0, 1, N, K, A + (size_t)m * K, B, row);
        ck_assert_msg(memcmp(row, C1 + (size_t)m * N, sizeof(float) * N) == 0, "row %d alone differs", m);
    }
    free(A), free(At), free(B), free(C1), free(C), free(row);
}
END_TEST

/* W [N, K] into panels of `width` columns (columns past N zero), as packed.h lays them out
 * (64-byte aligned). */
static float *panels_of(const float *W, int N, int K, int width) {
    const int columns = (N + 31) / 32 * 32;
    float *p = nmt_malloc_aligned(sizeof(float) * (size_t)columns * K);
    ck_assert_ptr_nonnull(p);
    memset(p, 0, sizeof(float) * (size_t)columns * K);
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++) p[((size_t)(n / width) * K + k) * width + n % width] = W[(size_t)n * K + k];
    return p;
}

/* nmt_gemm_panels against the double loop at odd shapes, with and without accumulating, from panels
 * of 16 and of 32 columns: the same bits from either width, and (where the CPU has AVX-512) the
 * same bits on the AVX2 and the AVX-512 kernel; and the same bits as nmt_sgemm on the own kernel. */
START_TEST(panels_match_naive_product_on_every_own_kernel) {
    if (nmt_gemm_best() < NMT_GEMM_AVX2) return; /* no own kernel on this CPU */
    static const int shapes[][3] = {{1, 1, 1}, {1, 5, 1}, {7, 15, 3}, {6, 16, 256}, {13, 33, 257}, {97, 70, 600}, {5, 300, 40}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        float *x = malloc(sizeof(float) * M * K), *W = malloc(sizeof(float) * N * K), *y0 = malloc(sizeof(float) * M * N);
        float *y[2][2], *ref = malloc(sizeof(float) * M * N);
        gc_fill(x, (long)M * K, 6, 1.0f);
        gc_fill(W, (long)N * K, 7, 1.0f);
        gc_fill(y0, (long)M * N, 8, 1.0f);
        float *p16 = panels_of(W, N, K, 16), *p32 = panels_of(W, N, K, 32);
        for (int accumulate = 0; accumulate < 2; accumulate++) {
            for (int kernel = NMT_GEMM_AVX2; kernel <= (int)nmt_gemm_best(); kernel++) {
                ck_assert_int_eq(nmt_gemm_set_kernel((nmt_gemm_kernel)kernel), 0);
                for (int w = 0; w < 2; w++) {
                    float *out = y[kernel - NMT_GEMM_AVX2][w] = malloc(sizeof(float) * M * N);
                    memcpy(out, y0, sizeof(float) * M * N);
                    nmt_gemm_panels(out, N, x, M, K, w ? p32 : p16, w ? 32 : 16, N, accumulate);
                }
                ck_assert_mem_eq(y[kernel - NMT_GEMM_AVX2][0], y[kernel - NMT_GEMM_AVX2][1], sizeof(float) * M * N);
            }
            if (nmt_gemm_best() == NMT_GEMM_AVX512) {
                ck_assert_mem_eq(y[0][0], y[1][0], sizeof(float) * M * N);
                free(y[1][0]), free(y[1][1]);
            }
            for (int m = 0; m < M; m++)
                for (int n = 0; n < N; n++) {
                    double want = accumulate ? y0[m * N + n] : 0.0;
                    for (int k = 0; k < K; k++) want += (double)x[m * K + k] * W[n * K + k];
                    ck_assert_msg(fabs(y[0][0][m * N + n] - want) <= 1e-4, "%dx%dx%d: y[%d][%d] = %.7g, want %.7g", M,
                                  N, K, m, n, y[0][0][m * N + n], want);
                }
            ck_assert_int_eq(nmt_gemm_set_sgemm_kernel(NMT_GEMM_AVX2), 0);
            memcpy(ref, y0, sizeof(float) * M * N);
            nmt_pool_set_threads(1);
            nmt_sgemm(0, 1, M, N, K, 1.0f, x, K, W, K, accumulate ? 1.0f : 0.0f, ref, N);
            ck_assert_mem_eq(ref, y[0][0], sizeof(float) * M * N);
            free(y[0][0]), free(y[0][1]);
        }
        free(x), free(W), free(y0), free(ref), free(p16), free(p32);
    }
}
END_TEST

/* The kernels follow the CPU's features; NMT_GEMM (read at the first call: Check runs each test in
 * a fresh process) moves both onto one kernel where the CPU has it; a kernel the CPU lacks is
 * refused. */
START_TEST(kernel_choice_follows_the_cpu) {
    const char *env[] = {NULL, "openblas", "avx2", "avx512", "nonsense"};
    if (env[_i]) setenv("NMT_GEMM", env[_i], 1);
    else unsetenv("NMT_GEMM"); /* the default, also when the suite runs under NMT_GEMM=openblas */
    nmt_gemm_kernel best = NMT_GEMM_OPENBLAS;
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx512f")) best = NMT_GEMM_AVX512;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) best = NMT_GEMM_AVX2;
#endif
    ck_assert_int_eq(nmt_gemm_best(), best);
    /* The default: packed products on the best kernel; nmt_sgemm on AVX-512 only (gemm.h). */
    nmt_gemm_kernel packed = best, sgemm = best == NMT_GEMM_AVX512 ? NMT_GEMM_AVX512 : NMT_GEMM_OPENBLAS;
    if (_i >= 1 && _i <= 3 && (nmt_gemm_kernel)(_i - 1) <= best) packed = sgemm = (nmt_gemm_kernel)(_i - 1);
    ck_assert_int_eq(nmt_gemm_kernel_used(), packed);
    ck_assert_int_eq(nmt_gemm_sgemm_kernel(), sgemm);
    ck_assert_int_eq(nmt_gemm_own(), sgemm != NMT_GEMM_OPENBLAS);
    if (best != NMT_GEMM_OPENBLAS)
        ck_assert_int_eq(nmt_gemm_panel_width(), best == NMT_GEMM_AVX512 && packed != NMT_GEMM_AVX2 ? 32 : 16);
    if (best < NMT_GEMM_AVX512) {
        ck_assert_int_eq(nmt_gemm_set_kernel(NMT_GEMM_AVX512), -1);
        ck_assert_ptr_nonnull(strstr(nmt_error(), "AVX-512: not on this CPU"));
        ck_assert_int_eq(nmt_gemm_set_sgemm_kernel(NMT_GEMM_AVX512), -1);
        ck_assert_int_eq(nmt_gemm_kernel_used(), packed);
    }
    ck_assert_int_eq(nmt_gemm_set_sgemm_kernel(best), 0);
    ck_assert_int_eq(nmt_gemm_sgemm_kernel(), best);
    ck_assert_int_eq(nmt_gemm_kernel_used(), packed);
    ck_assert_str_eq(nmt_gemm_kernel_name(NMT_GEMM_AVX2), "AVX2+FMA");
}
END_TEST

static Suite *gemm_suite(void) {
    Suite *s = suite_create("gemm");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, sgemm_matches_naive_product_in_every_layout, NMT_GEMM_OPENBLAS, NMT_GEMM_AVX512 + 1);
    tcase_add_loop_test(tc, own_sgemm_is_thread_and_row_invariant, 0, 2);
    tcase_add_test(tc, panels_match_naive_product_on_every_own_kernel);
    tcase_add_loop_test(tc, kernel_choice_follows_the_cpu, 0, 5);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return nmt_test_run(gemm_suite()); }
