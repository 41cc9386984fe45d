/* Tests of the per-call controls of the public API (nmt_engine_translate_with, include/nmt/nmt.h) and
 * of streaming (api/stream): a call without controls is bit-identical to nmt_engine_translate, also
 * after calls with their own options; a call's options give what an engine opened with them gives;
 * every n-best hypothesis of a line keeps its target prefix and holds its constraint phrases, and a
 * glossary term found in a line is one more constraint; the lines without controls translate as
 * without; streamed texts joined are the final translation, with one final call a line; bad controls
 * are errors naming the line; a call's options leave the pipeline's own parts as they were; every
 * allocation is checked. */
#include "nmt/nmt.h"

#include "infer/pipeline.h"
#include "tiny_model.h"
#include "testing.h"

#include <string.h>

static const char *const lines[] = {"the cat sees a dog", "", "big red house and a small tree", "bird",
                                    "the dog likes the blue bird and the cat runs"};
enum { LINES = 5 };

static nmt_engine *open_engine(int beam_size, int n_best) {
    nmt_engine_options o = nmt_engine_options_default();
    o.threads = 1;
    o.beam_size = beam_size;
    o.n_best = n_best;
    o.max_batch = 2;
    nmt_engine *e;
    ck_assert_msg(nmt_engine_open(&e, nmt_test_tmpdir, &o) == 0, "%s", nmt_last_error());
    return e;
}

/* Line i of a and line j of b have the same hypotheses, texts and scores bit for bit. */
static void same_line(const nmt_result *a, int i, const nmt_result *b, int j) {
    ck_assert_int_eq(nmt_result_hypotheses(a, i), nmt_result_hypotheses(b, j));
    for (int k = 0; k < nmt_result_hypotheses(a, i); k++) {
        ck_assert_str_eq(nmt_result_hypothesis(a, i, k), nmt_result_hypothesis(b, j, k));
        ck_assert(nmt_result_score(a, i, k) == nmt_result_score(b, j, k));
        ck_assert(nmt_result_logprob(a, i, k) == nmt_result_logprob(b, j, k));
    }
}

static void same_result(const nmt_result *a, const nmt_result *b) {
    ck_assert_int_eq(nmt_result_count(a), nmt_result_count(b));
    for (int i = 0; i < nmt_result_count(a); i++) same_line(a, i, b, i);
}

static nmt_result *translate(nmt_engine *e, const nmt_translate_options *call) {
    nmt_result *r;
    ck_assert_msg(nmt_engine_translate_with(e, LINES, lines, call, &r) == 0, "%s", nmt_last_error());
    return r;
}

START_TEST(test_without_controls) {
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_engine *e = open_engine(4, 2);
    nmt_result *plain;
    ck_assert_int_eq(nmt_engine_translate(e, LINES, lines, &plain), 0);
    nmt_result *none = translate(e, NULL);
    same_result(plain, none);
    nmt_result_free(none);
    /* A call with options of its own, then a plain call: the engine's search is back. */
    nmt_engine_options o = *nmt_engine_get_options(e);
    o.beam_size = 2;
    o.n_best = 1;
    o.length_penalty = 0;
    nmt_translate_options call = nmt_translate_options_default();
    call.options = &o;
    nmt_result *own = translate(e, &call);
    nmt_result *again;
    ck_assert_int_eq(nmt_engine_translate(e, LINES, lines, &again), 0);
    same_result(plain, again);
    nmt_result_free(again);
    nmt_engine_close(e);
    /* The call's options give what an engine opened with them gives. */
    nmt_engine_options opened = nmt_engine_options_default();
    opened.threads = 1;
    opened.max_batch = 2;
    opened.beam_size = 2;
    opened.length_penalty = 0;
    ck_assert_int_eq(nmt_engine_open(&e, nmt_test_tmpdir, &opened), 0);
    nmt_result *want;
    ck_assert_int_eq(nmt_engine_translate(e, LINES, lines, &want), 0);
    same_result(own, want);
    nmt_result_free(want);
    nmt_result_free(own);
    nmt_result_free(plain);
    nmt_engine_close(e);
}
END_TEST

START_TEST(test_prefix_and_constraints) {
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_engine *e = open_engine(4, 3);
    nmt_result *plain;
    ck_assert_int_eq(nmt_engine_translate(e, LINES, lines, &plain), 0);
    const char *prefixes[LINES] = {"the big", NULL, "", NULL, "bird"};
    const char *phrases0[] = {"red house", NULL}, *phrases3[] = {"sleeps", "blue tree", NULL};
    const char *const *constraints[LINES] = {phrases0, NULL, NULL, phrases3, NULL};
    nmt_translate_options call = nmt_translate_options_default();
    call.target_prefix = prefixes;
    call.constraints = constraints;
    nmt_result *r = translate(e, &call);
    for (int k = 0; k < nmt_result_hypotheses(r, 0); k++) {
        const char *h = nmt_result_hypothesis(r, 0, k);
        ck_assert_msg(strncmp(h, "the big", 7) == 0 && strstr(h + 7, "red house"), "%s", h);
    }
    for (int k = 0; k < nmt_result_hypotheses(r, 3); k++) {
        const char *h = nmt_result_hypothesis(r, 3, k);
        ck_assert_msg(strstr(h, "sleeps") && strstr(h, "blue tree"), "%s", h);
    }
    for (int k = 0; k < nmt_result_hypotheses(r, 4); k++)
        ck_assert_msg(strncmp(nmt_result_hypothesis(r, 4, k), "bird", 4) == 0, "%s", nmt_result_hypothesis(r, 4, k));
    same_line(plain, 1, r, 1); /* an empty line stays empty */
    same_line(plain, 2, r, 2); /* "": no prefix */
    /* A glossary term in line 2's source ("house" -> "sleeps") is one more constraint of that line. */
    const char *glossary[] = {"house", "sleeps", "lion", "dog dog"};
    nmt_translate_options terms = nmt_translate_options_default();
    terms.glossary = glossary;
    terms.glossary_size = 2;
    nmt_result *g = translate(e, &terms);
    for (int k = 0; k < nmt_result_hypotheses(g, 2); k++)
        ck_assert_msg(strstr(nmt_result_hypothesis(g, 2, k), "sleeps"), "%s", nmt_result_hypothesis(g, 2, k));
    for (int i = 0; i < LINES; i++)
        if (i != 2) same_line(plain, i, g, i);
    nmt_result_free(g);
    nmt_result_free(r);
    nmt_result_free(plain);
    nmt_engine_close(e);
}
END_TEST

typedef struct streamed {
    char text[LINES][512];
    int finals[LINES];
    int after_final; /* calls for a line after its final one */
} streamed;

static void collect(void *user, int line, const char *text, int final) {
    streamed *s = user;
    ck_assert(line >= 0 && line < LINES);
    if (s->finals[line]) s->after_final++;
    ck_assert_uint_lt(strlen(s->text[line]) + strlen(text), sizeof s->text[line]);
    strcat(s->text[line], text);
    s->finals[line] += final;
}

/* Streams the lines with greedy and beam search, with and without a prefix: each line's texts
 * joined are its translation, which is what the call without a stream gives. */
START_TEST(test_streaming) {
    nmt_test_model_dir(nmt_test_tmpdir);
    for (int beam = 1; beam <= 4; beam += 3)
        for (int prefixed = 0; prefixed < 2; prefixed++) {
            nmt_engine *e = open_engine(beam, 1);
            const char *prefixes[LINES] = {"the big", "house", NULL, "a", NULL};
            nmt_translate_options call = nmt_translate_options_default();
            call.first_line = 7;
            if (prefixed) call.target_prefix = prefixes;
            nmt_result *want = translate(e, &call);
            streamed s = {0};
            call.stream = collect;
            call.stream_user = &s;
            nmt_result *r = translate(e, &call);
            same_result(want, r);
            for (int i = 0; i < LINES; i++) {
                ck_assert_int_eq(s.finals[i], 1);
                ck_assert_str_eq(s.text[i], nmt_result_text(r, i));
            }
            ck_assert_int_eq(s.after_final, 0);
            nmt_result_free(r);
            nmt_result_free(want);
            nmt_engine_close(e);
        }
}
END_TEST

START_TEST(test_errors) {
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_engine *e = open_engine(4, 1);
    nmt_result *r;
    const char *prefixes[LINES] = {NULL, NULL, "a \xff", NULL, NULL};
    nmt_translate_options call = nmt_translate_options_default();
    call.target_prefix = prefixes;
    ck_assert_int_eq(nmt_engine_translate_with(e, LINES, lines, &call, &r), -1);
    ck_assert_ptr_null(r);
    ck_assert_str_eq(nmt_last_error(), "line 3: target prefix: invalid UTF-8 at byte 3");
    const char *glossary[] = {"house", ""};
    call = nmt_translate_options_default();
    call.glossary = glossary;
    call.glossary_size = 1;
    ck_assert_int_eq(nmt_engine_translate_with(e, LINES, lines, &call, &r), -1);
    ck_assert_ptr_nonnull(strstr(nmt_last_error(), "glossary entry:1"));
    call.glossary_size = -1;
    ck_assert_int_eq(nmt_engine_translate_with(e, LINES, lines, &call, &r), -1);
    ck_assert_ptr_nonnull(strstr(nmt_last_error(), "glossary_size"));
    nmt_engine_options o = *nmt_engine_get_options(e);
    o.sampling = 1;
    call = nmt_translate_options_default();
    call.options = &o;
    call.glossary = glossary;
    call.glossary_size = 0;
    const char *phrases[] = {"red", NULL};
    const char *const *constraints[LINES] = {phrases, NULL, NULL, NULL, NULL};
    call.constraints = constraints;
    ck_assert_int_eq(nmt_engine_translate_with(e, LINES, lines, &call, &r), -1);
    ck_assert_ptr_nonnull(strstr(nmt_last_error(), "not with sampling"));
    call.constraints = NULL;
    o.n_best = 2;
    streamed s = {0};
    call.stream = collect;
    call.stream_user = &s;
    ck_assert_int_eq(nmt_engine_translate_with(e, LINES, lines, &call, &r), -1);
    ck_assert_ptr_nonnull(strstr(nmt_last_error(), "streaming"));
    o = *nmt_engine_get_options(e);
    o.beam_size = 0;
    call = nmt_translate_options_default();
    call.options = &o;
    ck_assert_int_eq(nmt_engine_translate_with(e, LINES, lines, &call, &r), -1);
    ck_assert_ptr_nonnull(strstr(nmt_last_error(), "beam"));
    /* A bad call leaves the engine as it was. */
    nmt_result *plain, *after;
    ck_assert_int_eq(nmt_engine_translate(e, LINES, lines, &plain), 0);
    nmt_engine_close(e);
    e = open_engine(4, 1);
    ck_assert_int_eq(nmt_engine_translate(e, LINES, lines, &after), 0);
    same_result(plain, after);
    nmt_result_free(plain);
    nmt_result_free(after);
    nmt_engine_close(e);
}
END_TEST

/* A call's own options change the search, never what the pipeline made for its model: the precision,
 * the shortlist, the batch size, the target vocabulary's word joins (constraints as whole words). */
START_TEST(test_pipeline_keeps_its_own) {
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_pipeline_options o = nmt_pipeline_options_default();
    o.decode.batch_size = 3;
    nmt_pipeline *p;
    ck_assert_msg(nmt_pipeline_open(&p, nmt_test_tmpdir, &o) == 0, "%s", nmt_error());
    const nmt_decode_options before = nmt_pipeline_get_options(p)->decode;
    ck_assert_ptr_nonnull(before.word_joins);
    nmt_decode_options d = nmt_pipeline_options_default().decode;
    d.beam_size = 2;
    ck_assert_int_eq(nmt_pipeline_set_decode(p, &d), 0);
    const nmt_decode_options *after = &nmt_pipeline_get_options(p)->decode;
    ck_assert_int_eq(after->beam_size, 2);
    ck_assert_ptr_eq(after->word_joins, before.word_joins);
    ck_assert_ptr_eq(after->shortlist, before.shortlist);
    ck_assert_int_eq(after->batch_size, 3);
    ck_assert_int_eq(after->precision, before.precision);
    d.beam_size = 0; /* refused: the options stay */
    ck_assert_int_eq(nmt_pipeline_set_decode(p, &d), -1);
    ck_assert_int_eq(nmt_pipeline_get_options(p)->decode.beam_size, 2);
    nmt_pipeline_free(p);
}
END_TEST

static int guided_attempt(void *context) {
    nmt_engine *e = context;
    const char *prefixes[LINES] = {"the big", NULL, NULL, NULL, "bird"};
    const char *phrases[] = {"red house", NULL};
    const char *const *constraints[LINES] = {NULL, NULL, NULL, phrases, NULL};
    const char *glossary[] = {"house", "sleeps"};
    nmt_engine_options o = *nmt_engine_get_options(e);
    o.beam_size = 3;
    streamed s = {0};
    nmt_translate_options call = {.options = &o, .target_prefix = prefixes, .constraints = constraints,
                                  .glossary = glossary, .glossary_size = 1, .stream = collect, .stream_user = &s};
    nmt_result *r;
    if (nmt_engine_translate_with(e, LINES, lines, &call, &r) < 0) return -1;
    nmt_result_free(r);
    return 0;
}

START_TEST(test_allocation_failures) {
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_engine *e = open_engine(4, 2);
    ck_assert_int_gt(nmt_test_alloc_sweep(guided_attempt, e), 10);
    nmt_engine_close(e);
}
END_TEST

int main(void) {
    Suite *s = suite_create("stream");
    TCase *tc = tcase_create("controls");
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, test_without_controls);
    tcase_add_test(tc, test_prefix_and_constraints);
    tcase_add_test(tc, test_streaming);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_pipeline_keeps_its_own);
    tcase_add_test(tc, test_allocation_failures);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
