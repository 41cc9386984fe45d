/* Tests of report: sacreBLEU's layouts, with expected text copied from sacreBLEU 2.6's output for the
 * README example (r0 r1 -i h1 [h2]; numbers from its JSON output at full precision). */
#include "eval/report.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static const char *sig = "nrefs:2|bs:100|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0";
static const char *verbose = "82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)";

static char *format_score(const nmt_report_score *s, int width, int score_only, int json) {
    nmt_strbuf out = {0};
    ck_assert_int_eq(nmt_report_score_format(s, width, score_only, json, &out), 0);
    return out.data;
}

START_TEST(score_lines) {
    nmt_report_score s = {"BLEU", 48.530827009929865, 1, 48.93847065301487, 46.754996737202504, verbose, sig};
    char *text = format_score(&s, 1, 0, 0);
    ck_assert_str_eq(text, "BLEU|nrefs:2|bs:100|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0 = 48.5 "
                           "(μ = 48.9 ± 46.8) 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)");
    free(text);
    text = format_score(&s, 1, 1, 1); /* -b keeps the CI, even in JSON mode */
    ck_assert_str_eq(text, "48.5 (μ = 48.9 ± 46.8)");
    free(text);
    text = format_score(&s, 1, 0, 1);
    ck_assert_str_eq(text, "{\n \"name\": \"BLEU\",\n \"score\": 48.5,\n \"signature\": \"nrefs:2|bs:100|seed:12345|case:"
                           "mixed|eff:no|tok:13a|smooth:exp|version:2.6.0\",\n \"confidence_mean\": 48.9,\n"
                           " \"confidence_var\": 46.8,\n \"confidence\": \"μ = 48.9 ± 46.8\",\n \"verbose_score\": "
                           "\"82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)\",\n"
                           " \"nrefs\": \"2\",\n \"bs\": \"100\",\n \"seed\": \"12345\",\n \"case\": \"mixed\",\n"
                           " \"eff\": \"no\",\n \"tok\": \"13a\",\n \"smooth\": \"exp\",\n \"version\": \"2.6.0\"\n}");
    free(text);
    s.mean = 0; /* sacreBLEU hides a CI whose mean is 0 */
    text = format_score(&s, 0, 1, 0);
    ck_assert_str_eq(text, "49");
    free(text);
}
END_TEST

START_TEST(single_results_alignment) {
    const char *lines[] = {"BLEU|a:1 = 1.0", "chrF2|bb:22 = 2.0", "TER|c = 3.0"};
    nmt_strbuf out = {0};
    ck_assert_int_eq(nmt_report_single(lines, 3, 0, &out), 0);
    ck_assert_str_eq(out.data, "   BLEU|a:1 = 1.0\nchrF2|bb:22 = 2.0\n      TER|c = 3.0\n");
    out.len = 0;
    const char *numbers[] = {"79.1", "96.9"};
    ck_assert_int_eq(nmt_report_single(numbers, 2, 1, &out), 0);
    ck_assert_str_eq(out.data, "[\n79.1,\n96.9\n]\n");
    out.len = 0;
    ck_assert_int_eq(nmt_report_single(numbers, 2, 0, &out), 0);
    ck_assert_str_eq(out.data, "79.1\n96.9\n");
    nmt_strbuf_free(&out);
}
END_TEST

static const char *names[] = {"Baseline: h1", "h2"}, *metrics[] = {"BLEU", "TER"};
static const char *sigs[] = {"s1", "s2"};

START_TEST(paired_table) {
    nmt_report_cell cells[] = {
        {48.530827009929865, 0, 0, 1, 48.93847065301487, 46.754996737202504},
        {40.0, 0, 0, 1, 39.465657368302345, 37.5},
        {35.827636937885366, 1, 0.26732673267326734, 1, 35.543573788576644, 16.40012659300429},
        {33.33333333333333, 1, 0.27722772277227725, 1, 33.218855768442154, 15.909090638160706},
    };
    nmt_report_table t = {2, 2, names, metrics, sigs, cells, NMT_REPORT_PAIRED_BOOTSTRAP, 100};
    nmt_strbuf out = {0};
    ck_assert_int_eq(nmt_report_table_format(&t, NMT_REPORT_TEXT, 1, &out), 0);
    const char *want =
        "╒══════════════╤═════════════════════╤════════════════════╕\n"
        "│       System │  BLEU (μ ± 95% CI)  │  TER (μ ± 95% CI)  │\n"
        "╞══════════════╪═════════════════════╪════════════════════╡\n"
        "│ Baseline: h1 │ 48.5 (48.9 ± 46.8)  │ 40.0 (39.5 ± 37.5) │\n"
        "├──────────────┼─────────────────────┼────────────────────┤\n"
        "│           h2 │ 35.8 (35.5 ± 16.4)  │ 33.3 (33.2 ± 15.9) │\n"
        "│              │    (p = 0.2673)     │    (p = 0.2772)    │\n"
        "╘══════════════╧═════════════════════╧════════════════════╛\n"
        "\n"
        "-----------------------------------------------------------\n"
        "Paired bootstrap resampling test with 100 resampling trials\n"
        "-----------------------------------------------------------\n"
        " - Each system is pairwise compared to Baseline: h1.\n";
    ck_assert(strncmp(out.data, want, strlen(want)) == 0);
    ck_assert_ptr_nonnull(strstr(out.data, "-----------------\nMetric signatures\n-----------------\n"
                                           " - BLEU       s1\n - TER        s2\n"));
    out.len = 0;
    ck_assert_int_eq(nmt_report_table_format(&t, NMT_REPORT_JSON, 1, &out), 0);
    ck_assert_ptr_nonnull(strstr(out.data, "[\n    {\n        \"system\": \"Baseline: h1\",\n        \"BLEU\": {\n"
                                           "            \"score\": 48.530827009929865,\n            \"p_value\": null,\n"));
    ck_assert_ptr_nonnull(strstr(out.data, "\"p_value\": 0.27722772277227725,"));
    nmt_strbuf_free(&out);
}
END_TEST

START_TEST(plain_tables) {
    const char *plain[] = {"h1", "h2"};
    nmt_report_cell cells[] = {{48.530827009929865, 0, 0, 0, 0, 0}, {40.0, 0, 0, 0, 0, 0},
                               {35.827636937885366, 0, 0, 0, 0, 0}, {33.33333333333333, 0, 0, 0, 0, 0}};
    nmt_report_table t = {2, 2, plain, metrics, sigs, cells, NMT_REPORT_NO_TEST, 0};
    nmt_strbuf out = {0};
    ck_assert_int_eq(nmt_report_table_format(&t, NMT_REPORT_LATEX, 1, &out), 0);
    ck_assert(strncmp(out.data,
                      "\\begin{tabular}{rcc}\n\\toprule\n   System &  BLEU  &  TER  \\\\\n\\midrule\n"
                      "       h1 &  48.5  & 40.0  \\\\\n       h2 &  35.8  & 33.3  \\\\\n\\bottomrule\n\\end{tabular}\n\n",
                      strlen("\\begin{tabular}{rcc}\n\\toprule\n   System &  BLEU  &  TER  \\\\\n\\midrule\n"
                             "       h1 &  48.5  & 40.0  \\\\\n       h2 &  35.8  & 33.3  \\\\\n\\bottomrule\n"
                             "\\end{tabular}\n\n")) == 0);
    out.len = 0;
    ck_assert_int_eq(nmt_report_table_format(&t, NMT_REPORT_JSON, 1, &out), 0);
    ck_assert_str_eq(out.data, "[\n    {\n        \"system\": \"h1\",\n        \"BLEU\": \"48.5\",\n        \"TER\": \"40.0\"\n"
                               "    },\n    {\n        \"system\": \"h2\",\n        \"BLEU\": \"35.8\",\n"
                               "        \"TER\": \"33.3\"\n    }\n]\n");
    nmt_strbuf_free(&out);
}
END_TEST

int main(void) {
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_add_test(tc, score_lines);
    tcase_add_test(tc, single_results_alignment);
    tcase_add_test(tc, paired_table);
    tcase_add_test(tc, plain_tables);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
