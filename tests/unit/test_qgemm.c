/* Tests of int8 products (qgemm.h): every kernel this CPU runs against an exact integer reference
 * computed here from the quantized values, bit-identical kernels, rows and thread counts, and the
 * quantization error against the fp32 product.
 *
 * Shapes cover every tile height of both SIMD kernels, K not a multiple of 4 and partial panels.
 */
#include "base/util.h"
#include "compute/gemm.h"
#include "compute/kernels.h"
#include "compute/pool.h"
#include "compute/packed.h"
#include "compute/qgemm.h"

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

static const int shapes[][3] = {{1, 32, 16}, {5, 768, 64}, {12, 40, 33}, {13, 100, 256}, {37, 8, 7}, {64, 97, 130}};
enum { SHAPES = sizeof shapes / sizeof shapes[0] };

/* y from the packed int8 product, with the kernel in use. */
static void product(float *y, const float *x, const nmt_qgemm *w, const float *b, int M) {
    uint32_t *xq = malloc(sizeof(uint32_t) * nmt_qgemm_words(w, M));
    ck_assert_ptr_nonnull(xq);
    nmt_qgemm_quantize(w, xq, x, M);
    nmt_qgemm_columns(y, xq, w, b, M, 0, w->N);
    free(xq);
}

/* Each kernel equals the reference: integer sums of the row-quantized values, then the same float
 * operations; and all of them agree bit for bit. */
START_TEST(kernels_match_reference) {
    const int M = shapes[_i][0], N = shapes[_i][1], K = shapes[_i][2];
    float *x = malloc(sizeof(float) * (size_t)M * K), *w = malloc(sizeof(float) * (size_t)N * K);
    float *b = malloc(sizeof(float) * (size_t)N), *y = malloc(sizeof(float) * (size_t)M * N);
    float *ref = malloc(sizeof(float) * (size_t)M * N), *exact = malloc(sizeof(float) * (size_t)M * N);
    int8_t *qx = malloc((size_t)M * K), *qw = malloc((size_t)N * K);
    float *fx = malloc(sizeof(float) * (size_t)M), *fw = malloc(sizeof(float) * (size_t)N);
    fill(x, (size_t)M * K, 1);
    fill(w, (size_t)N * K, 2);
    fill(b, (size_t)N, 3);
    for (int m = 0; m < M; m++) fx[m] = nmt_qgemm_quantize_row(qx + (size_t)m * K, x + (size_t)m * K, K);
    for (int n = 0; n < N; n++) fw[n] = nmt_qgemm_quantize_row(qw + (size_t)n * K, w + (size_t)n * K, K);
    nmt_qgemm q;
    ck_assert_int_eq(nmt_qgemm_init(&q, w, N, K), 0);
    for (int with_bias = 0; with_bias < 2; with_bias++) {
        nmt_linear_forward(exact, x, w, with_bias ? b : NULL, M, K, N);
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                int32_t s = 0;
                for (int k = 0; k < K; k++) s += (int32_t)qx[(size_t)m * K + k] * qw[(size_t)n * K + k];
                const float scale = fw[n] * fx[m], v = (float)s * scale;
                ref[(size_t)m * N + n] = with_bias ? v + b[n] : v;
            }
        for (int kernel = NMT_QGEMM_C; kernel <= (int)nmt_qgemm_best(); kernel++) {
            ck_assert_int_eq(nmt_qgemm_set_kernel((nmt_qgemm_kernel)kernel), 0);
            memset(y, 0, sizeof(float) * (size_t)M * N);
            product(y, x, &q, with_bias ? b : NULL, M);
            ck_assert_msg(memcmp(y, ref, sizeof(float) * (size_t)M * N) == 0, "kernel %s differs",
                          nmt_qgemm_kernel_name((nmt_qgemm_kernel)kernel));
        }
        /* Quantization error: each factor is off by at most half a step (max / 254). */
        for (size_t i = 0; i < (size_t)M * N; i++)
            ck_assert_msg(fabsf(ref[i] - exact[i]) <= (float)K * 0.5f * 0.5f / 127.0f, "element %zu: %g vs %g", i,
                          ref[i], exact[i]);
    }
    ck_assert_int_eq(nmt_qgemm_set_kernel(nmt_qgemm_best()), 0);
    nmt_qgemm_free(&q);
    free(x), free(w), free(b), free(y), free(ref), free(exact), free(qx), free(qw), free(fx), free(fw);
}
END_TEST

/* Through packed.h: a row's result is the same alone, in any batch, on 1 or 2 threads, and a
 * column range equals the same columns of the whole product. */
START_TEST(int8_rows_are_invariant) {
    enum { M = 29, N = 70, K = 48 };
    static float x[M * K], w[N * K], b[N], all[M * N], one[N], two[M * N], part[M * 38];
    fill(x, M * K, 4);
    fill(w, N * K, 5);
    fill(b, N, 6);
    nmt_packed p;
    ck_assert_int_eq(nmt_packed_init(&p, w, N, K, NMT_PRECISION_INT8), 0);
    ck_assert_int_eq(nmt_packed_fast(&p), 1);
    uint32_t *scratch = malloc(sizeof(uint32_t) * nmt_packed_scratch(&p, M));
    ck_assert_uint_eq(nmt_packed_scratch(&p, M), (size_t)M * (K / 4 + 1));
    nmt_pool_set_threads(1);
    nmt_packed_linear(all, x, &p, b, M, scratch);
    for (int r = 0; r < M; r++) {
        nmt_packed_linear(one, x + (size_t)r * K, &p, b, 1, scratch);
        ck_assert_mem_eq(one, all + (size_t)r * N, sizeof one);
    }
    nmt_pool_set_threads(2);
    nmt_packed_linear(two, x, &p, b, M, scratch);
    ck_assert_mem_eq(two, all, sizeof all);
    nmt_packed_to_pairs(&p, scratch, x, M);
    nmt_packed_linear_columns(part, x, scratch, &p, b, M, 32, 38);
    for (int r = 0; r < M; r++) ck_assert_mem_eq(part + (size_t)r * 38, all + (size_t)r * N + 32, 38 * sizeof(float));
    free(scratch);
    nmt_packed_free(&p);
}
END_TEST

/* Value k of a test row for nmt_qgemm_dots: +-127 (extreme) or drawn from [-127, 127]. */
static int8_t dot_operand(int extreme, int k, uint32_t *state) {
    if (extreme) return (int8_t)((k % 3) ? 127 : -127);
    *state = *state * 1664525u + 1013904223u;
    return (int8_t)((int)(*state >> 24) % 255 - 127);
}

/* Dot products of a row against scattered rows: every kernel gives the plain sums, for lengths
 * around the vector widths (16 and 64 bytes), row counts around 16, and the extremes (+-127
 * everywhere: K * 127 * 127). */
START_TEST(dots_are_exact_on_every_kernel) {
    enum { MAX_K = 300, MAX_N = 40 };
    static int8_t q[MAX_K], rows[MAX_N][MAX_K + 7];
    const int8_t *at[MAX_N];
    int32_t dots[MAX_N + 1], want[MAX_N];
    const int lengths[] = {1, 15, 16, 17, 63, 64, 65, 100, 128, 256, 300}, counts[] = {1, 15, 16, 17, 33, 40};
    uint32_t state = 7;
    for (int extreme = 0; extreme < 2; extreme++)
        for (size_t a = 0; a < sizeof lengths / sizeof lengths[0]; a++)
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                const int K = lengths[a], n = counts[c];
                for (int k = 0; k < K; k++) q[k] = dot_operand(extreme, k, &state);
                for (int j = 0; j < n; j++) {
                    int8_t *row = rows[(j * 7) % MAX_N] + j % 7; /* out of order and unaligned */
                    for (int k = 0; k < K; k++) row[k] = dot_operand(extreme, k, &state);
                    at[j] = row;
                }
                for (int j = 0; j < n; j++) {
                    want[j] = 0;
                    for (int k = 0; k < K; k++) want[j] += (int32_t)q[k] * at[j][k];
                }
                for (int kernel = NMT_QGEMM_C; kernel <= (int)nmt_qgemm_best(); kernel++) {
                    ck_assert_int_eq(nmt_qgemm_set_kernel((nmt_qgemm_kernel)kernel), 0);
                    dots[n] = 12345;
                    nmt_qgemm_dots(dots, q, at, n, K);
                    ck_assert_msg(memcmp(dots, want, sizeof(int32_t) * (size_t)n) == 0, "K %d n %d: kernel %s", K, n,
                                  nmt_qgemm_kernel_name((nmt_qgemm_kernel)kernel));
                    ck_assert_int_eq(dots[n], 12345); /* nothing written past n */
                }
            }
    ck_assert_int_eq(nmt_qgemm_set_kernel(nmt_qgemm_best()), 0);
}
END_TEST

/* Several queries, each against its own part of the rows (a decoding step's heads): every kernel
 * gives each head's plain sums, pair j * heads + h, for head counts that do and do not fill the
 * 16 pairs of a vector, head sizes around the vector widths, the extremes, the most heads the VNNI
 * kernel takes and one more. */
START_TEST(head_dots_are_exact_on_every_kernel) {
    enum { MAX_HK = 2048, MAX_N = 9 };
    static int8_t q[MAX_HK], rows[MAX_N][MAX_HK + 5];
    const int8_t *at[MAX_N];
    static int32_t dots[MAX_N * (NMT_QGEMM_DOT_HEADS + 1) + 1], want[MAX_N * (NMT_QGEMM_DOT_HEADS + 1)];
    const int heads[] = {1, 3, 5, 8, 16, NMT_QGEMM_DOT_HEADS, NMT_QGEMM_DOT_HEADS + 1},
              sizes[] = {1, 17, 24, 32, 64, 100};
    uint32_t state = 11;
    for (int extreme = 0; extreme < 2; extreme++)
        for (size_t a = 0; a < sizeof heads / sizeof heads[0]; a++)
            for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
                const int H = heads[a], K = sizes[c], n = H == 3 ? MAX_N : 7;
                if (H * K > MAX_HK) continue;
                for (int k = 0; k < H * K; k++) q[k] = dot_operand(extreme, k, &state);
                for (int j = 0; j < n; j++) {
                    int8_t *row = rows[(j * 4) % MAX_N] + j % 5; /* out of order and unaligned */
                    for (int k = 0; k < H * K; k++) row[k] = dot_operand(extreme, k, &state);
                    at[j] = row;
                }
                for (int j = 0; j < n; j++)
                    for (int h = 0; h < H; h++) {
                        int32_t sum = 0;
                        for (int k = 0; k < K; k++) sum += (int32_t)q[h * K + k] * at[j][h * K + k];
                        want[j * H + h] = sum;
                    }
                for (int kernel = NMT_QGEMM_C; kernel <= (int)nmt_qgemm_best(); kernel++) {
                    ck_assert_int_eq(nmt_qgemm_set_kernel((nmt_qgemm_kernel)kernel), 0);
                    dots[n * H] = 12345;
                    nmt_qgemm_dots_heads(dots, q, H, at, n, K);
                    ck_assert_msg(memcmp(dots, want, sizeof(int32_t) * (size_t)(n * H)) == 0, "heads %d K %d: kernel %s",
                                  H, K, nmt_qgemm_kernel_name((nmt_qgemm_kernel)kernel));
                    ck_assert_int_eq(dots[n * H], 12345); /* nothing written past the pairs */
                }
            }
    ck_assert_int_eq(nmt_qgemm_set_kernel(nmt_qgemm_best()), 0);
}
END_TEST

/* Extreme rows: zeros give the bias, one large value keeps the others' quantization, and a
 * row of +-max reaches the int32 range the kernels rely on exactly (K * 127 * 127). */
START_TEST(int8_extremes) {
    enum { N = 3, K = 1024 };
    static float w[N * K], x[2 * K], y[2 * N];
    const float b[N] = {1.0f, -2.0f, 0.5f};
    for (int k = 0; k < K; k++) {
        w[k] = 3.0f;
        w[K + k] = (k % 2) ? -1.0f : 1.0f;
        x[K + k] = -7.0f;
    }
    nmt_qgemm q;
    ck_assert_int_eq(nmt_qgemm_init(&q, w, N, K), 0);
    for (int kernel = NMT_QGEMM_C; kernel <= (int)nmt_qgemm_best(); kernel++) {
        ck_assert_int_eq(nmt_qgemm_set_kernel((nmt_qgemm_kernel)kernel), 0);
        product(y, x, &q, b, 2);
        ck_assert(y[0] == 1.0f && y[1] == -2.0f && y[2] == 0.5f); /* x row 0 is all zeros */
        ck_assert_float_eq_tol(y[N + 0], -7.0f * 3.0f * K + 1.0f, 7.0f * 3.0f * K * 1e-4f);
        ck_assert_float_eq_tol(y[N + 1], -2.0f, 1e-6f);
        ck_assert(y[N + 2] == 0.5f); /* weight row 2 is all zeros */
    }
    ck_assert_int_eq(nmt_qgemm_set_kernel(nmt_qgemm_best()), 0);
    nmt_qgemm_free(&q);
}
END_TEST

/* A dequantized row (an int8 model file read back) quantizes to the same values and factor. */
START_TEST(quantization_is_idempotent) {
    enum { K = 300 };
    static float v[K], back[K];
    static int8_t q[K], again[K];
    for (uint32_t seed = 1; seed <= 200; seed++) {
        fill(v, K, seed);
        for (int k = 0; k < K; k++) v[k] *= (float)seed * 0.37f;
        const float factor = nmt_qgemm_quantize_row(q, v, K);
        for (int k = 0; k < K; k++) back[k] = (float)q[k] * factor;
        ck_assert(nmt_qgemm_quantize_row(again, back, K) == factor);
        ck_assert_mem_eq(again, q, sizeof q);
    }
}
END_TEST

/* The factor comes from the largest magnitude wherever it lies: in any of the vector chains, the
 * blocks of 16 or the scalar tail, at every length around those widths; NaNs are skipped and
 * quantize to 0 on every int8 kernel. */
START_TEST(factor_finds_the_maximum_anywhere) {
    static const int lengths[] = {1, 3, 15, 16, 17, 31, 48, 63, 64, 65, 80, 127, 128, 130, 256, 1024};
    static float v[1024];
    static int8_t q[1024];
    for (int kernel = NMT_QGEMM_C; kernel <= (int)nmt_qgemm_best(); kernel++) {
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            ck_assert_int_eq(nmt_qgemm_set_kernel((nmt_qgemm_kernel)kernel), 0);
            const int K = lengths[l];
            for (int at = 0; at < K; at++) {
                for (int k = 0; k < K; k++) v[k] = (float)((k * 7) % 11) * 0.1f - 0.5f; /* |v| <= 0.5 */
                v[at] = at % 2 ? -3.0f : 3.0f;
                if (K > 1) v[(at + 1) % K] = NAN;
                const float factor = nmt_qgemm_quantize_row(q, v, K);
                float expected = 3.0f / 127.0f;
                uint32_t bits;
                memcpy(&bits, &expected, sizeof bits);
                bits = (bits + (1u << 5)) & ~((1u << 6) - 1);
                memcpy(&expected, &bits, sizeof bits);
                ck_assert_msg(factor == expected, "K %d, maximum at %d: factor %a, want %a", K, at, (double)factor,
                              (double)expected);
                ck_assert_int_eq(q[at], at % 2 ? -127 : 127);
                if (K > 1) ck_assert_int_eq(q[(at + 1) % K], 0);
            }
        }
    }
    ck_assert_int_eq(nmt_qgemm_set_kernel(nmt_qgemm_best()), 0);
}
END_TEST

/* Each value is nearbyintf(v / factor), ties to even, whether it falls in a block of 16 or 64 or in
 * the tail, on every int8 kernel (AVX-512's rounding of 64 at a time where VNNI runs): rows whose
 * factor is a power of two, so that halves between integers land exactly on ties. */
START_TEST(values_round_to_nearest_even) {
    static float v[140];
    static int8_t q[140];
    for (int kernel = NMT_QGEMM_C; kernel <= (int)nmt_qgemm_best(); kernel++) {
        for (int K = 1; K <= 140; K++)
            for (uint32_t seed = 1; seed <= 20; seed++) {
                ck_assert_int_eq(nmt_qgemm_set_kernel((nmt_qgemm_kernel)kernel), 0);
                const float unit = ldexpf(1.0f, (int)(seed % 7) - 3); /* the factor: max / 127 */
                uint32_t x = seed * 2654435761u + (uint32_t)K;
                for (int k = 0; k < K; k++) {
                    x = x * 1664525u + 1013904223u;
                    const int step = (int)(x >> 24) - 128; /* -128 .. 127 */
                    const float uniform = (float)(x >> 8) / 16777216.0f * 254.0f - 127.0f; /* -127 .. 127 */
                    v[k] = (k % 3 ? (float)step + 0.5f : uniform) * unit;
                }
                for (int k = 0; k < K; k++) /* the halves past 127 * unit would raise the factor */
                    if (fabsf(v[k]) > 127.0f * unit) v[k] = v[k] > 0 ? 127.0f * unit : -127.0f * unit;
                const int at = (int)((seed * 7) % (uint32_t)K);
                v[at] = seed % 2 ? 127.0f * unit : -127.0f * unit;
                ck_assert(nmt_qgemm_quantize_row(q, v, K) == unit);
                for (int k = 0; k < K; k++) {
                    const int want = (int)nearbyintf(v[k] / unit);
                    ck_assert_msg(q[k] == want, "K %d seed %u value %d (%a): %d, want %d", K, seed, k, (double)v[k], q[k],
                                  want);
                }
            }
    }
    ck_assert_int_eq(nmt_qgemm_set_kernel(nmt_qgemm_best()), 0);
}
END_TEST

/* Bad shapes are refused; an allocation failure is reported and leaves nothing allocated. */
START_TEST(int8_errors) {
    float w[4] = {0};
    nmt_qgemm q;
    ck_assert_int_eq(nmt_qgemm_init(&q, w, 1, 0), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "int8 matrix"));
    for (int fail = 1; fail <= 4; fail++) {
        nmt_alloc_fail_at(fail);
        int rc = nmt_qgemm_init(&q, w, 1, 4);
        nmt_alloc_fail_at(0);
        ck_assert_int_eq(rc, -1);
        ck_assert_ptr_null(q.panels);
    }
    if (nmt_qgemm_best() != NMT_QGEMM_VNNI) {
        ck_assert_int_eq(nmt_qgemm_set_kernel(NMT_QGEMM_VNNI), -1);
        ck_assert_ptr_nonnull(strstr(nmt_error(), "not on this CPU"));
    }
}
END_TEST

int main(void) {
    Suite *s = suite_create("qgemm");
    TCase *tc = tcase_create("qgemm");
    tcase_add_loop_test(tc, kernels_match_reference, 0, SHAPES);
    tcase_add_test(tc, int8_rows_are_invariant);
    tcase_add_test(tc, int8_extremes);
    tcase_add_test(tc, dots_are_exact_on_every_kernel);
    tcase_add_test(tc, head_dots_are_exact_on_every_kernel);
    tcase_add_test(tc, quantization_is_idempotent);
    tcase_add_test(tc, factor_finds_the_maximum_anywhere);
    tcase_add_test(tc, values_round_to_nearest_even);
    tcase_add_test(tc, int8_errors);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
