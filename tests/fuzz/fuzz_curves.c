/* fuzz_curves: the train.log.jsonl reader (nmt_curves_parse) and the curve drawing on arbitrary bytes.
 *
 * Properties checked besides "never crashes, never leaks":
 *   - a refused log leaves *run empty and an error that starts with the log's name and a line number;
 *   - an accepted log gives records whose steps strictly increase within each event, whose values are
 *     finite or NaN (no point), and an unfinished line only as the log's last line;
 *   - every accepted log draws against steps, as well-formed XML; against minutes it draws or is
 *     refused for a record without a time;
 *   - with the 1st, 2nd, ... allocation failing, reading and drawing report "out of memory".
 */
#include "xml_check.h"
#include "fuzz.h"
#include "viz/curves.h"

#include <math.h>

typedef struct input {
    const char *text;
    size_t size;
} input;

static const nmt_curves_metric all_metrics[NMT_CURVES_NUM_METRICS] = {
    NMT_CURVES_TRAIN_LOSS, NMT_CURVES_VAL_LOSS, NMT_CURVES_VAL_PPL, NMT_CURVES_VAL_BLEU, NMT_CURVES_LR, NMT_CURVES_TOKENS_PER_S,
};

static int draw(const nmt_curves_run *run, nmt_curves_axis axis, nmt_strbuf *out) {
    nmt_curves_options options = {.axis = axis, .metrics = all_metrics, .num_metrics = NMT_CURVES_NUM_METRICS, .title = "fuzz"};
    return nmt_curves_svg(out, run, 1, &options);
}

static int parse_and_draw(void *context) {
    const input *in = context;
    nmt_curves_run run;
    int rc = nmt_curves_parse(&run, in->text, in->size, "fuzz.jsonl", "fuzz");
    if (rc < 0) return rc;
    nmt_strbuf out = {0};
    rc = draw(&run, NMT_CURVES_STEPS, &out);
    nmt_strbuf_free(&out);
    nmt_curves_free(&run);
    return rc;
}

static void check_accepted(const nmt_curves_run *run, const input *in) {
    for (int e = 0; e < NMT_CURVES_NUM_EVENTS; e++)
        for (int i = 0; i < run->num_records[e]; i++) {
            const nmt_curves_record *r = &run->records[e][i];
            FUZZ_CHECK(r->step >= 0 && (i == 0 || r->step > run->records[e][i - 1].step), "event %d record %d: step %ld", e,
                       i, r->step);
            for (int m = 0; m < NMT_CURVES_NUM_METRICS; m++)
                FUZZ_CHECK(isnan(r->value[m]) || isfinite(r->value[m]), "record %d: value %d is %g", i, m, r->value[m]);
        }
    if (run->partial_line) {
        long lines = 1;
        for (size_t i = 0; i < in->size; i++) lines += in->text[i] == '\n';
        FUZZ_CHECK(run->partial_line == lines && in->size > 0 && in->text[in->size - 1] != '\n',
                   "line %ld of %ld is called unfinished", run->partial_line, lines);
    }
    nmt_strbuf out = {0};
    FUZZ_CHECK(draw(run, NMT_CURVES_STEPS, &out) == 0, "drawing against steps failed: %s", nmt_error());
    const char *error = nmt_test_xml_error(out.data);
    FUZZ_CHECK(error == NULL, "the SVG is not well-formed: %s", error);
    nmt_strbuf_free(&out);
    if (draw(run, NMT_CURVES_MINUTES, &out) < 0)
        FUZZ_CHECK(strstr(nmt_error(), "has no elapsed_s"), "drawing against minutes failed: %s", nmt_error());
    nmt_strbuf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    input in = {(const char *)data, size};
    nmt_curves_run run;
    nmt_error_clear();
    if (nmt_curves_parse(&run, in.text, in.size, "fuzz.jsonl", "fuzz") < 0) {
        long line;
        FUZZ_CHECK(sscanf(nmt_error(), "fuzz.jsonl:%ld:", &line) == 1 && line >= 1, "the error does not name file:line: '%s'",
                   nmt_error());
        FUZZ_CHECK(run.name == NULL && run.records[0] == NULL && run.records[1] == NULL, "a refused log is not left empty");
        return 0;
    }
    check_accepted(&run, &in);
    long allocations = 64 + 8L * (run.num_records[0] + run.num_records[1]);
    nmt_curves_free(&run);
    fuzz_alloc_sweep(parse_and_draw, &in, allocations);
    return 0;
}
