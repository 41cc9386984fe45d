/* Tests of curves: reading train.log.jsonl (records, reruns, times of validations, unfinished lines,
 * errors with file:line:column), tick choice, and the SVG drawn from runs (panels, polylines at the
 * right pixels, legend, well-formed XML). Expected numbers are worked out by hand in the comments. */
#include "viz/curves.h"
#include "base/io.h"
#include "testing.h"
#include "xml_check.h"

#include <float.h>
#include <math.h>
#include <sys/stat.h>

static void parse_ok(nmt_curves_run *run, const char *text) {
    ck_assert_msg(nmt_curves_parse(run, text, strlen(text), "mem.jsonl", "run") == 0, "%s", nmt_error());
}

static void parse_bad(const char *text, const char *error) {
    nmt_curves_run run;
    ck_assert_int_eq(nmt_curves_parse(&run, text, strlen(text), "mem.jsonl", "run"), -1);
    ck_assert_str_eq(nmt_error(), error);
    ck_assert_ptr_null(run.name);
    ck_assert_ptr_null(run.records[NMT_CURVES_TRAIN]);
}

START_TEST(records_are_read) {
    nmt_curves_run run;
    parse_ok(&run,
             "{\"event\":\"start\",\"config\":{\"model\":{\"d_model\":256}},\"note\":[1,null]}\n"
             "{\"event\":\"train\",\"step\":100,\"epoch\":1,\"loss\":7.5,\"lr\":1e-4,\"tokens_per_s\":5000,\"elapsed_s\":60}\n"
             "\n"
             "  {\"loss\":6.25,\"ppl\":518.0,\"bleu\":1.5,\"event\":\"valid\",\"step\":100,\"elapsed_s\":70.5}  \r\n"
             "{\"event\":\"train\",\"step\":300,\"loss\":null,\"elapsed_s\":180,\"extra\":\"x\"}\n"
             "{\"event\":\"valid\",\"step\":200,\"loss\":5,\"bleu\":3}\n"
             "{\"event\":\"valid\",\"step\":400,\"bleu\":4}");
    ck_assert_str_eq(run.name, "run");
    ck_assert_str_eq(run.path, "mem.jsonl");
    ck_assert_int_eq(run.partial_line, 0);
    ck_assert_int_eq(run.num_records[NMT_CURVES_TRAIN], 2);
    ck_assert_int_eq(run.num_records[NMT_CURVES_VALID], 3);
    const nmt_curves_record *t = run.records[NMT_CURVES_TRAIN], *v = run.records[NMT_CURVES_VALID];
    ck_assert(t[0].step == 100 && t[0].elapsed_s == 60 && t[0].value[NMT_CURVES_TRAIN_LOSS] == 7.5);
    ck_assert(t[0].value[NMT_CURVES_LR] == 1e-4 && t[0].value[NMT_CURVES_TOKENS_PER_S] == 5000);
    ck_assert(isnan(t[0].value[NMT_CURVES_VAL_LOSS]) && isnan(t[0].value[NMT_CURVES_VAL_BLEU]));
    ck_assert(t[1].step == 300 && isnan(t[1].value[NMT_CURVES_TRAIN_LOSS]) && isnan(t[1].value[NMT_CURVES_LR]));
    ck_assert(v[0].step == 100 && v[0].elapsed_s == 70.5 && v[0].value[NMT_CURVES_VAL_LOSS] == 6.25);
    ck_assert(v[0].value[NMT_CURVES_VAL_PPL] == 518 && v[0].value[NMT_CURVES_VAL_BLEU] == 1.5);
    ck_assert(isnan(v[0].value[NMT_CURVES_TRAIN_LOSS]));
    /* Without elapsed_s: step 200 lies halfway between the train records of steps 100 (60 s) and
     * 300 (180 s), so 120 s; step 400 is past the last one, so its time, 180 s. */
    ck_assert(v[1].step == 200 && v[1].elapsed_s == 120 && v[1].value[NMT_CURVES_VAL_BLEU] == 3);
    ck_assert(v[2].step == 400 && v[2].elapsed_s == 180 && isnan(v[2].value[NMT_CURVES_VAL_LOSS]));
    nmt_curves_free(&run);
}
END_TEST

START_TEST(a_rerun_replaces_the_records_from_its_step) {
    nmt_curves_run run;
    parse_ok(&run, "{\"event\":\"train\",\"step\":1,\"loss\":9}\n"
                   "{\"event\":\"train\",\"step\":2,\"loss\":8}\n"
                   "{\"event\":\"valid\",\"step\":2,\"bleu\":1}\n"
                   "{\"event\":\"train\",\"step\":3,\"loss\":7}\n"
                   "{\"event\":\"train\",\"step\":2,\"loss\":6.5}\n"
                   "{\"event\":\"train\",\"step\":3,\"loss\":6}\n"
                   "{\"event\":\"valid\",\"step\":2,\"bleu\":2}\n");
    ck_assert_int_eq(run.num_records[NMT_CURVES_TRAIN], 3);
    const nmt_curves_record *t = run.records[NMT_CURVES_TRAIN];
    ck_assert(t[0].value[0] == 9 && t[1].step == 2 && t[1].value[0] == 6.5 && t[2].step == 3 && t[2].value[0] == 6);
    ck_assert_int_eq(run.num_records[NMT_CURVES_VALID], 1);
    ck_assert(run.records[NMT_CURVES_VALID][0].value[NMT_CURVES_VAL_BLEU] == 2);
    nmt_curves_free(&run);
}
END_TEST

START_TEST(an_unfinished_last_line_is_skipped) {
    nmt_curves_run run;
    const char *head = "{\"event\":\"train\",\"step\":1,\"loss\":9,\"elapsed_s\":1}\n";
    char text[256];
    /* Cut anywhere inside the second record (also inside a UTF-8 character), it is skipped. */
    const char *second = "{\"event\":\"valid\",\"note\":\"\xC3\xA9\",\"step\":2,\"bleu\":1}";
    for (size_t cut = 1; cut < strlen(second); cut++) {
        snprintf(text, sizeof text, "%s%.*s", head, (int)cut, second);
        parse_ok(&run, text);
        ck_assert_int_eq(run.partial_line, 2);
        ck_assert_int_eq(run.num_records[NMT_CURVES_TRAIN], 1);
        ck_assert_int_eq(run.num_records[NMT_CURVES_VALID], 0);
        nmt_curves_free(&run);
    }
    /* Whole, it is read even without its newline. */
    snprintf(text, sizeof text, "%s%s", head, second);
    parse_ok(&run, text);
    ck_assert_int_eq(run.partial_line, 0);
    ck_assert_int_eq(run.num_records[NMT_CURVES_VALID], 1);
    nmt_curves_free(&run);
    /* A broken line with its newline is an error, and so is a whole last record that is wrong. */
    parse_bad("{\"event\":\"train\",\"step\":1,\n{\"event\":\"train\",\"step\":2}\n",
              "mem.jsonl:1:27: bad log record: expected a string");
    parse_bad("{\"event\":\"train\",\"step\":1}\n{\"event\":\"train\"}",
              "mem.jsonl:2:1: bad log record: a train record without \"step\"");
}
END_TEST

START_TEST(malformed_lines_name_file_line_and_column) {
    static const struct {
        const char *line, *error;
    } bad[] = {
        {"{\"event\":\"train\",\"step\":1,\"loss\":\"high\"}", "mem.jsonl:2:34: bad log record: expected a number"},
        {"{\"event\":\"train\",\"step\":-1}", "mem.jsonl:2:25: bad log record: expected a non-negative integer"},
        {"{\"event\":\"train\",\"step\":1.5}", "mem.jsonl:2:26: bad log record: expected an integer, found a fraction or exponent"},
        {"{\"event\":\"valid\",\"step\":1,\"bleu\":1,\"bleu\":2}", "mem.jsonl:2:36: bad log record: field \"bleu\" appears twice"},
        {"{\"event\":\"valid\",\"event\":\"train\",\"step\":1}", "mem.jsonl:2:18: bad log record: field \"event\" appears twice"},
        {"{\"step\":1,\"loss\":2}", "mem.jsonl:2:1: bad log record: a record without \"event\""},
        {"{\"event\":\"valid\",\"bleu\":2}", "mem.jsonl:2:1: bad log record: a valid record without \"step\""},
        {"{\"event\":7,\"step\":1}", "mem.jsonl:2:10: bad log record: expected a string"},
        {"{\"event\":\"train\",\"step\":1} {}", "mem.jsonl:2:28: bad log record: unexpected text after the JSON value"},
        {"[\"event\",\"train\"]", "mem.jsonl:2:1: bad log record: expected '{', found '['"},
        {"{\"event\":\"train\",\"step\":1,\"loss\":NaN}", "mem.jsonl:2:34: bad log record: expected a number"},
        {"{\"event\":\"tr\xFFin\",\"step\":1}", "mem.jsonl:2:13: bad log record: invalid UTF-8"},
    };
    char text[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "{\"event\":\"train\",\"step\":1}\n%s\n{\"event\":\"train\",\"step\":3}\n", bad[i].line);
        parse_bad(text, bad[i].error);
    }
}
END_TEST

START_TEST(points_follow_the_axis) {
    nmt_curves_run run;
    parse_ok(&run, "{\"event\":\"train\",\"step\":100,\"loss\":5,\"elapsed_s\":30}\n"
                   "{\"event\":\"train\",\"step\":200,\"loss\":null,\"elapsed_s\":60}\n"
                   "{\"event\":\"train\",\"step\":300,\"loss\":3,\"elapsed_s\":90}\n");
    double *xs, *ys;
    int n;
    ck_assert_int_eq(nmt_curves_points(&run, NMT_CURVES_TRAIN_LOSS, NMT_CURVES_MINUTES, &xs, &ys, &n), 0);
    ck_assert_int_eq(n, 2); /* the null loss has no point */
    ck_assert(xs[0] == 0.5 && ys[0] == 5 && xs[1] == 1.5 && ys[1] == 3);
    free(xs);
    free(ys);
    ck_assert_int_eq(nmt_curves_points(&run, NMT_CURVES_TRAIN_LOSS, NMT_CURVES_STEPS, &xs, &ys, &n), 0);
    ck_assert(n == 2 && xs[0] == 100 && xs[1] == 300);
    free(xs);
    free(ys);
    ck_assert_int_eq(nmt_curves_points(&run, NMT_CURVES_VAL_BLEU, NMT_CURVES_MINUTES, &xs, &ys, &n), 0);
    ck_assert(n == 0 && xs == NULL && ys == NULL);
    nmt_curves_free(&run);
    /* Minutes need times: a validation without one and no train record to take it from is an error. */
    parse_ok(&run, "{\"event\":\"valid\",\"step\":500,\"bleu\":20}\n");
    ck_assert_int_eq(nmt_curves_points(&run, NMT_CURVES_VAL_BLEU, NMT_CURVES_STEPS, &xs, &ys, &n), 0);
    ck_assert(n == 1 && xs[0] == 500 && ys[0] == 20);
    free(xs);
    free(ys);
    ck_assert_int_eq(nmt_curves_points(&run, NMT_CURVES_VAL_BLEU, NMT_CURVES_MINUTES, &xs, &ys, &n), -1);
    ck_assert_str_eq(nmt_error(), "mem.jsonl: the valid record of step 500 has no elapsed_s and no train record gives "
                                  "its time: plot against steps");
    ck_assert(n == 0 && xs == NULL);
    nmt_curves_free(&run);
}
END_TEST

static void check_ticks(double lo, double hi, int max, double first, double step, int count, int decimals) {
    nmt_curves_ticks t;
    nmt_curves_ticks_choose(lo, hi, max, &t);
    ck_assert_msg(fabs(t.first - first) < 1e-12 && fabs(t.step - step) < 1e-15 && t.count == count && t.decimals == decimals,
                  "[%g, %g] max %d: got first %g step %g count %d decimals %d", lo, hi, max, t.first, t.step, t.count,
                  t.decimals);
}

START_TEST(ticks_are_round_numbers) {
    /* BLEU 0..57.3, at most 7 ticks: steps 1, 2, 5 need 59, 30, 13 ticks; 10 needs 7 (0..60). */
    check_ticks(0, 57.3, 7, 0, 10, 7, 0);
    /* Loss 1.93..7.81, at most 6: step 1 spans 1..8 (8 ticks); step 2 spans 0..8 (5 ticks). */
    check_ticks(1.93, 7.81, 6, 0, 2, 5, 0);
    /* A learning rate 1e-4..1e-3, at most 6: 1e-4 needs 10 ticks; 2e-4 spans 0..1e-3 in 6. */
    check_ticks(1e-4, 1e-3, 6, 0, 2e-4, 6, 4);
    /* Ends on ticks despite rounding (0.3 / 0.1 is 2.9999999999999996 in doubles): 0.3..0.7 in 5. */
    check_ticks(0.3, 0.7, 5, 0.3, 0.1, 5, 1);
    /* Negative values: -3.2..12.7 with at most 11: step 1 needs 18, step 2 spans -4..12... 14 in 10. */
    check_ticks(-3.2, 12.7, 11, -4, 2, 10, 0);
    /* Minutes 0..61.7 with at most 11: step 5 needs 14 (0..65); step 10 spans 0..70 in 8. */
    check_ticks(0, 61.7, 11, 0, 10, 8, 0);
    /* A single value is widened by a tenth of itself (4.5..5.5): steps 0.1 and 0.2 need 11 and 7
     * ticks, 0.5 spans 4.5..5.5 in 3; zero is widened to -1..1 (step 0.5, 5 ticks). */
    check_ticks(5, 5, 6, 4.5, 0.5, 3, 1);
    check_ticks(0, 0, 6, -1, 0.5, 5, 1);
    /* Large counts: 4980..5330 tokens/s, at most 6: step 100 spans 4900..5400 in 6. */
    check_ticks(4980, 5330, 6, 4900, 100, 6, 0);
    /* Absurd values do not loop forever or produce NaN. */
    static const double absurd[3][2] = {{-1e308, 1e308}, {1e308, 1e308}, {-DBL_MAX, -DBL_MAX}};
    for (int i = 0; i < 3; i++) {
        nmt_curves_ticks t;
        nmt_curves_ticks_choose(absurd[i][0], absurd[i][1], 6, &t);
        ck_assert(isfinite(t.first) && isfinite(t.step) && t.step > 0 && t.count >= 2 && t.count <= 6);
    }
}
END_TEST

START_TEST(metric_lists_are_parsed) {
    nmt_curves_metric m[NMT_CURVES_NUM_METRICS];
    int n;
    ck_assert_int_eq(nmt_curves_metrics_parse("val_bleu,train_loss,lr", m, &n), 0);
    ck_assert(n == 3 && m[0] == NMT_CURVES_VAL_BLEU && m[1] == NMT_CURVES_TRAIN_LOSS && m[2] == NMT_CURVES_LR);
    ck_assert_str_eq(nmt_curves_metric_name(m[0]), "val_bleu");
    ck_assert_str_eq(nmt_curves_metric_label(m[0]), "validation BLEU");
    ck_assert_int_eq(nmt_curves_metrics_parse("val_bleu,bleu", m, &n), -1);
    ck_assert_str_eq(nmt_error(), "unknown metric 'bleu' (known: train_loss, val_loss, val_ppl, val_bleu, lr, tokens_per_s)");
    ck_assert_int_eq(nmt_curves_metrics_parse("val_loss,val_loss", m, &n), -1);
    ck_assert_str_eq(nmt_error(), "metric 'val_loss' is named twice");
    ck_assert_int_eq(nmt_curves_metrics_parse("", m, &n), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "unknown metric ''"));
    ck_assert_int_eq(nmt_curves_metrics_parse("train_loss,", m, &n), -1);
}
END_TEST

/* Run A: train losses 8, 5, 2 at 0, 5 and 10 minutes, validations at 5 and 10; run B: train only. */
static const char LOG_A[] = "{\"event\":\"train\",\"step\":0,\"loss\":8,\"elapsed_s\":0}\n"
                            "{\"event\":\"train\",\"step\":50,\"loss\":5,\"elapsed_s\":300}\n"
                            "{\"event\":\"valid\",\"step\":50,\"loss\":6,\"bleu\":12.5,\"elapsed_s\":300}\n"
                            "{\"event\":\"train\",\"step\":100,\"loss\":2,\"elapsed_s\":600}\n"
                            "{\"event\":\"valid\",\"step\":100,\"loss\":4,\"bleu\":20,\"elapsed_s\":600}\n";
static const char LOG_B[] = "{\"event\":\"train\",\"step\":40,\"loss\":6,\"elapsed_s\":120}\n"
                            "{\"event\":\"train\",\"step\":80,\"loss\":4,\"elapsed_s\":240}\n";

static void two_runs(nmt_curves_run runs[2]) {
    ck_assert_int_eq(nmt_curves_parse(&runs[0], LOG_A, strlen(LOG_A), "a.jsonl", "base <&> run"), 0);
    ck_assert_int_eq(nmt_curves_parse(&runs[1], LOG_B, strlen(LOG_B), "b.jsonl", "pre-LN"), 0);
}

START_TEST(svg_draws_panels_curves_and_legend) {
    nmt_curves_run runs[2];
    two_runs(runs);
    const nmt_curves_metric metrics[3] = {NMT_CURVES_TRAIN_LOSS, NMT_CURVES_VAL_LOSS, NMT_CURVES_VAL_BLEU};
    nmt_curves_options options = {.axis = NMT_CURVES_MINUTES, .metrics = metrics, .num_metrics = 3, .title = "En\xE2\x86\x92" "De"};
    nmt_strbuf out = {0};
    ck_assert_int_eq(nmt_curves_svg(&out, runs, 2, &options), 0);
    const char *svg = out.data, *err = nmt_test_xml_error(svg);
    ck_assert_msg(err == NULL, "%s in:\n%s", err, svg);
    /* A curve per run and panel where the run has points: train loss 2, validation loss 1, BLEU 1. */
    ck_assert_int_eq(nmt_test_count(svg, "<polyline"), 4);
    /* Legend and title, escaped; a label per panel; the x axis named once. */
    ck_assert_int_eq(nmt_test_count(svg, ">base &lt;&amp;&gt; run</text>"), 1);
    ck_assert_int_eq(nmt_test_count(svg, ">pre-LN</text>"), 1);
    ck_assert_int_eq(nmt_test_count(svg, ">En\xE2\x86\x92" "De</text>"), 1);
    ck_assert_int_eq(nmt_test_count(svg, ">train loss</text>"), 1);
    ck_assert_int_eq(nmt_test_count(svg, ">validation loss</text>"), 1);
    ck_assert_int_eq(nmt_test_count(svg, ">validation BLEU</text>"), 1);
    ck_assert_int_eq(nmt_test_count(svg, ">training time (minutes)</text>"), 1);
    ck_assert_int_eq(nmt_test_count(svg, ">no data</text>"), 0);
    /* Markers (few points): 3 + 2 train points, 2 + 2 validation points, plus the background. */
    ck_assert_int_eq(nmt_test_count(svg, "<rect"), 1 + 5 + 4);
    /* The x axis: 0..10 minutes in steps of 1 (11 ticks at most), labelled on each of 3 panels (the y
     * axes have no tick 10: losses 2..8 and 4.0..6.0, BLEU 12..20). */
    ck_assert_int_eq(nmt_test_count(svg, ">10</text>"), 3);
    /* Run A's train loss: the plot spans x 86..792 and the first panel y 86..266 (title 52, one legend
     * row 20, gap 14); the y ticks are 2..8 in steps of 2, so 8 is the top, 5 the middle, 2 the bottom. */
    ck_assert_ptr_nonnull(strstr(svg, "points=\"86.00,86.00 439.00,176.00 792.00,266.00\""));
    /* Run B: 2 and 4 minutes at x 86 + 706 * 0.2 and 0.4; losses 6 and 4 at y 266 - 180 * 4/6 and 2/6. */
    ck_assert_ptr_nonnull(strstr(svg, "points=\"227.20,146.00 368.40,206.00\""));
    /* Colours: run A blue, run B orange (Tableau 10). */
    ck_assert_int_eq(nmt_test_count(svg, "stroke=\"#1f77b4\" stroke-width=\"1.80\""), 3);
    ck_assert_int_eq(nmt_test_count(svg, "stroke=\"#ff7f0e\" stroke-width=\"1.80\""), 1);
    nmt_strbuf_free(&out);

    /* Against steps, with a panel no run has points for. */
    const nmt_curves_metric lr[2] = {NMT_CURVES_VAL_BLEU, NMT_CURVES_LR};
    options = (nmt_curves_options){.axis = NMT_CURVES_STEPS, .metrics = lr, .num_metrics = 2};
    ck_assert_int_eq(nmt_curves_svg(&out, runs, 2, &options), 0);
    ck_assert_ptr_null(nmt_test_xml_error(out.data));
    ck_assert_int_eq(nmt_test_count(out.data, "<polyline"), 1);
    ck_assert_int_eq(nmt_test_count(out.data, ">no data</text>"), 1);
    ck_assert_int_eq(nmt_test_count(out.data, ">step</text>"), 1);
    ck_assert_int_eq(nmt_test_count(out.data, ">100</text>"), 2); /* steps 0..100 in 10s */
    nmt_strbuf_free(&out);
    for (int i = 0; i < 2; i++) nmt_curves_free(&runs[i]);
}
END_TEST

START_TEST(runs_are_named_by_their_directories) {
    char path[4][256];
    const char *dirs[3] = {"exp1/base", "exp2/base", "prenorm"};
    for (int i = 0; i < 3; i++) {
        snprintf(path[i], sizeof path[i], "%s/%s", nmt_test_tmpdir, dirs[i]);
        ck_assert_int_eq(nmt_mkdirs(path[i]), 0);
        char *log = nmt_path_join(path[i], "train.log.jsonl");
        ck_assert_int_eq(nmt_atomic_write(log, LOG_B, strlen(LOG_B)), 0);
        free(log);
    }
    snprintf(path[2] + strlen(path[2]), sizeof path[2] - strlen(path[2]), "/"); /* a trailing slash */
    snprintf(path[3], sizeof path[3], "%s/prenorm/train.log.jsonl", nmt_test_tmpdir);
    nmt_curves_run runs[4];
    const char *paths[4] = {path[0], path[1], path[2], path[3]};
    ck_assert_msg(nmt_curves_load(runs, paths, 3) == 0, "%s", nmt_error());
    /* Two runs named "base": each is named by its path; the third by its base name. */
    ck_assert_str_eq(runs[0].name, path[0]);
    ck_assert_str_eq(runs[1].name, path[1]);
    ck_assert_str_eq(runs[2].name, "prenorm");
    ck_assert_int_eq(runs[2].num_records[NMT_CURVES_TRAIN], 2);
    for (int i = 0; i < 3; i++) nmt_curves_free(&runs[i]);
    /* A log file is named by its directory. */
    ck_assert_int_eq(nmt_curves_load(runs, paths + 3, 1), 0);
    ck_assert_str_eq(runs[0].name, "prenorm");
    nmt_curves_free(&runs[0]);
    /* A directory without a log: the error names the file, nothing is left allocated. */
    snprintf(path[0], sizeof path[0], "%s/exp1", nmt_test_tmpdir);
    const char *missing[2] = {path[2], path[0]};
    ck_assert_int_eq(nmt_curves_load(runs, missing, 2), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "/exp1/train.log.jsonl: cannot open: No such file or directory"));
}
END_TEST

static int parse_and_draw(void *context) {
    (void)context;
    nmt_curves_run runs[2];
    int rc = nmt_curves_parse(&runs[0], LOG_A, strlen(LOG_A), "a.jsonl", "a");
    if (rc < 0) return rc;
    rc = nmt_curves_parse(&runs[1], LOG_B, strlen(LOG_B), "b.jsonl", "b");
    if (rc < 0) {
        nmt_curves_free(&runs[0]);
        return rc;
    }
    const nmt_curves_metric metrics[2] = {NMT_CURVES_TRAIN_LOSS, NMT_CURVES_VAL_BLEU};
    nmt_curves_options options = {.axis = NMT_CURVES_MINUTES, .metrics = metrics, .num_metrics = 2, .title = "t"};
    nmt_strbuf out = {0};
    rc = nmt_curves_svg(&out, runs, 2, &options);
    nmt_strbuf_free(&out);
    nmt_curves_free(&runs[0]);
    nmt_curves_free(&runs[1]);
    return rc;
}

START_TEST(allocation_failures_are_reported) {
    ck_assert_int_gt(nmt_test_alloc_sweep(parse_and_draw, NULL), 15);
}
END_TEST

int main(void) {
    Suite *s = suite_create("curves");
    TCase *tc = tcase_create("curves");
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, records_are_read);
    tcase_add_test(tc, a_rerun_replaces_the_records_from_its_step);
    tcase_add_test(tc, an_unfinished_last_line_is_skipped);
    tcase_add_test(tc, malformed_lines_name_file_line_and_column);
    tcase_add_test(tc, points_follow_the_axis);
    tcase_add_test(tc, ticks_are_round_numbers);
    tcase_add_test(tc, metric_lists_are_parsed);
    tcase_add_test(tc, svg_draws_panels_curves_and_legend);
    tcase_add_test(tc, runs_are_named_by_their_directories);
    tcase_add_test(tc, allocation_failures_are_reported);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
