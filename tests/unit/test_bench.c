/* Tests of what `nmt bench` measures (src/api/bench.c) on a tiny model: translating a file counts
 * the sentences and pieces that translating it through the pipeline gives, over a positive time;
 * synthetic training steps are measured and counted; a product's GFLOP/s is positive. */
#include "api/bench.h"

#include "base/io.h"
#include "compute/pool.h"
#include "tiny_model.h"
#include "testing.h"

static const char *const lines[] = {"the cat sees a dog", "", "big red house and a small tree", "bird"};
enum { LINES = 4 };

START_TEST(test_translate) {
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_pool_set_threads(1);
    char *input = nmt_path_join(nmt_test_tmpdir, "in.txt");
    ck_assert_ptr_nonnull(input);
    FILE *fp = fopen(input, "w");
    ck_assert_ptr_nonnull(fp);
    for (int i = 0; i < LINES; i++) fprintf(fp, "%s\n", lines[i]);
    ck_assert_int_eq(fclose(fp), 0);
    nmt_pipeline_options o = nmt_pipeline_options_default();
    o.decode.beam_size = 3;
    nmt_bench_translate_result r;
    ck_assert_msg(nmt_bench_translate(nmt_test_tmpdir, input, &o, 0, NULL, &r) == 0, "%s", nmt_error());
    ck_assert_int_eq(r.sentences, LINES);
    ck_assert(r.seconds > 0);
    ck_assert_int_eq(r.precision, NMT_PRECISION_FP32);
    ck_assert_int_eq(r.shortlist_k, 0);

    /* The same lines through the pipeline: the same pieces in and out. */
    nmt_pipeline *p;
    ck_assert_int_eq(nmt_pipeline_open(&p, nmt_test_tmpdir, &o), 0);
    long source = 0, target = 0;
    for (int i = 0; i < LINES; i++) {
        nmt_lines in = {.name = "t", .line = (char *)lines[i], .len = strlen(lines[i]), .number = i + 1};
        int32_t *ids = NULL;
        size_t cap = 0, n = 0, pieces = 0;
        ck_assert_int_eq(nmt_pipeline_encode(p, &in, &ids, &cap, &n, &pieces), 0);
        const int32_t *src[1] = {ids};
        const int len[1] = {(int)n};
        nmt_translation out;
        ck_assert_int_eq(nmt_pipeline_translate(p, 0, 1, src, len, &out), 0);
        source += (long)n + 1;
        target += out.hyps[0].length + 1;
        nmt_translation_free(&out);
        free(ids);
    }
    ck_assert_int_eq(r.source_tokens, source);
    ck_assert_int_eq(r.target_tokens, target);
    nmt_pipeline_free(p);

    /* A missing input is an error naming it. */
    ck_assert_int_eq(nmt_bench_translate(nmt_test_tmpdir, "/nonexistent/in.txt", &o, 0, NULL, &r), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "/nonexistent/in.txt"));
    free(input);
}
END_TEST

/* With constraints, a line's phrases follow its first tab: they are counted, and its source alone is
 * encoded (the same source pieces as the plain lines). */
START_TEST(test_translate_constraints) {
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_pool_set_threads(1);
    static const char *const phrases[LINES] = {"\thouse", "", "\tcat\tbird", ""};
    char *plain = nmt_path_join(nmt_test_tmpdir, "plain.txt"), *guided = nmt_path_join(nmt_test_tmpdir, "guided.txt");
    ck_assert(plain && guided);
    FILE *a = fopen(plain, "w"), *b = fopen(guided, "w");
    ck_assert(a && b);
    for (int i = 0; i < LINES; i++) {
        fprintf(a, "%s\n", lines[i]);
        fprintf(b, "%s%s\n", lines[i], phrases[i]);
    }
    ck_assert(fclose(a) == 0 && fclose(b) == 0);
    nmt_pipeline_options o = nmt_pipeline_options_default();
    o.decode.beam_size = 3;
    nmt_bench_translate_result r, q;
    ck_assert_msg(nmt_bench_translate(nmt_test_tmpdir, plain, &o, 0, NULL, &r) == 0, "%s", nmt_error());
    ck_assert_msg(nmt_bench_translate(nmt_test_tmpdir, guided, &o, 1, NULL, &q) == 0, "%s", nmt_error());
    ck_assert_int_eq(q.sentences, LINES);
    ck_assert_int_eq(q.phrases, 3);
    ck_assert_int_eq(r.phrases, 0);
    ck_assert_int_eq(q.source_tokens, r.source_tokens);
    /* Without the flag the tabs are part of the source. */
    ck_assert_msg(nmt_bench_translate(nmt_test_tmpdir, guided, &o, 0, NULL, &q) == 0, "%s", nmt_error());
    ck_assert_int_eq(q.phrases, 0);
    free(plain);
    free(guided);
}
END_TEST

START_TEST(test_train_synthetic) {
    nmt_pool_set_threads(1);
    nmt_model_config c = nmt_model_config_default();
    c.d_model = 16, c.heads = 2, c.ffn = 32, c.encoder_layers = c.decoder_layers = 1, c.vocab_size = 40;
    nmt_train_bench_result r;
    ck_assert_msg(nmt_bench_train_synthetic(&c, 64, 6, 7, 1, 2, NULL, &r) == 0, "%s", nmt_error());
    ck_assert_int_eq(r.steps, 2);
    ck_assert_int_eq(r.sentences, 2 * (64 / 7));
    ck_assert(r.seconds > 0 && r.flops > 0 && r.target_tokens > 0 && r.source_tokens > 0);
    ck_assert(r.optimizer_s < 0);
    ck_assert(r.first_loss > 0 && r.last_loss > 0);
    c.vocab_size = 4;
    ck_assert_int_eq(nmt_bench_train_synthetic(&c, 64, 6, 7, 0, 1, NULL, &r), -1);
}
END_TEST

START_TEST(test_gemm_gflops) {
    nmt_pool_set_threads(1);
    ck_assert(nmt_bench_gemm_gflops(32, 48, 16, 0) > 0);
    ck_assert(nmt_bench_peak_rss_gib() > 0);
}
END_TEST

int main(void) {
    Suite *s = suite_create("bench");
    TCase *tc = tcase_create("bench");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, test_translate);
    tcase_add_test(tc, test_translate_constraints);
    tcase_add_test(tc, test_train_synthetic);
    tcase_add_test(tc, test_gemm_gflops);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
