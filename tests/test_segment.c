/* Tests of src/serve/segment.c: texts cut into lines and sentences where the rules say (and nowhere
 * else), and translations joined back with the separators, summed scores and offset alignments. */
#include "serve/segment.h"

#include "testing.h"

/* Cuts one text and checks the segments, written "a|b|c" with the separator before each: "\n" or " ". */
static void cuts(const char *text, int sentences, const char *want) {
    nmt_serve_segments s;
    ck_assert_int_eq(nmt_serve_segment(&text, 1, sentences, &s), 0);
    char got[512] = "";
    for (int i = 0; i < s.count; i++) {
        if (i) strcat(got, s.separator[i] == '\n' ? "|n|" : "|s|");
        strcat(got, s.segments[i]);
    }
    ck_assert_msg(strcmp(got, want) == 0, "'%s': got '%s', want '%s'", text, got, want);
    ck_assert_int_eq(s.first[0], 0);
    ck_assert_int_eq(s.first[1], s.count);
    nmt_serve_segments_free(&s);
}

START_TEST(test_cuts) {
    cuts("A man sits. A dog runs.", 1, "A man sits.|s|A dog runs.");
    cuts("A man sits. A dog runs.", 0, "A man sits. A dog runs.");
    cuts("Stop!  Who? \"Me,\" he said.", 1, "Stop!|s|Who?|s|\"Me,\" he said.");
    cuts("He said \"go.\" Then 3 left.", 1, "He said \"go.\"|s|Then 3 left.");
    cuts("e.g. this, 3.5 m, and Mr. smith.", 1, "e.g. this, 3.5 m, and Mr. smith.");
    cuts("Wait\xe2\x80\xa6 \xe2\x80\x9cYes\xe2\x80\x9d (sure).", 1, "Wait\xe2\x80\xa6|s|\xe2\x80\x9cYes\xe2\x80\x9d (sure).");
    cuts("one\r\ntwo. Three\n\nfour", 1, "one|n|two.|s|Three|n||n|four");
    cuts("", 1, "");
    cuts("end. ", 1, "end. ");
    cuts(". A", 1, ".|s|A");
    const char *texts[] = {"a. B", "c", "d\ne"};
    nmt_serve_segments s;
    ck_assert_int_eq(nmt_serve_segment(texts, 3, 1, &s), 0);
    ck_assert_int_eq(s.count, 5);
    ck_assert_int_eq(s.first[1], 2);
    ck_assert_int_eq(s.first[2], 3);
    ck_assert_int_eq(s.first[3], 5);
    ck_assert_int_eq(s.separator[2], 0);
    nmt_serve_segments_free(&s);
    /* Too many segments for one request. */
    char *many = malloc(2 * NMT_SERVE_MAX_SEGMENTS + 3);
    for (int i = 0; i < NMT_SERVE_MAX_SEGMENTS + 1; i++) memcpy(many + 2 * i, "a\n", 2);
    many[2 * NMT_SERVE_MAX_SEGMENTS + 2] = '\0';
    const char *one = many;
    ck_assert_int_eq(nmt_serve_segment(&one, 1, 0, &s), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "more than 100000 lines and sentences"));
    nmt_serve_segments_free(&s);
    free(many);
}
END_TEST

START_TEST(test_join) {
    const char *text = "A b. C d\ne";
    nmt_serve_segments s;
    ck_assert_int_eq(nmt_serve_segment(&text, 1, 1, &s), 0);
    ck_assert_int_eq(s.count, 3);
    nmt_serve_hypothesis h0[] = {{"x y", -1, -2}, {"x z", -3, -4}}, h1[] = {{"w", -0.5, -1}, {"v", -2, -2}, {"u", -9, -9}},
                         h2[] = {{"", 0, 0}, {"t", -1, -1}};
    int p0[] = {0, 0, 1, 1}, p1[] = {1, 0};
    nmt_serve_text parts[3] = {{h0, 2, p0, 2, 3, 2}, {h1, 3, p1, 1, 2, 1}, {h2, 2, NULL, 0, 1, 0}};
    nmt_serve_text out;
    ck_assert_int_eq(nmt_serve_join(&s, 1, parts, &out), 0);
    ck_assert_int_eq(out.count, 2);
    ck_assert_str_eq(out.hyps[0].text, "x y w\n");
    ck_assert_str_eq(out.hyps[1].text, "x z v\nt");
    ck_assert_double_eq(out.hyps[0].score, -1.5);
    ck_assert_double_eq(out.hyps[1].logprob, -7);
    ck_assert_ptr_null(out.pairs); /* one part without alignment */
    nmt_serve_text_free(&out);
    parts[2].pairs = p1;
    parts[2].pair_count = 0;
    ck_assert_int_eq(nmt_serve_join(&s, 1, parts, &out), 0);
    ck_assert_int_eq(out.pair_count, 3);
    const int want[] = {0, 0, 1, 1, 4, 2}; /* the second sentence's pair moved by 3 source, 2 target pieces */
    ck_assert_mem_eq(out.pairs, want, sizeof want);
    ck_assert_int_eq(out.source_pieces, 6);
    ck_assert_int_eq(out.target_pieces, 3);
    nmt_serve_text_free(&out);
    nmt_serve_segments_free(&s);
}
END_TEST

typedef struct sweep {
    const char *const *texts;
} sweep;

static int segment_attempt(void *context) {
    sweep *w = context;
    nmt_serve_segments s;
    int rc = nmt_serve_segment(w->texts, 2, 1, &s);
    nmt_serve_segments_free(&s);
    return rc;
}

START_TEST(test_allocation_failures) {
    const char *texts[] = {"A b. C d", "e"};
    sweep w = {texts};
    ck_assert_int_gt(nmt_test_alloc_sweep(segment_attempt, &w), 2);
}
END_TEST

int main(void) {
    Suite *s = suite_create("segment");
    TCase *tc = tcase_create("segment");
    tcase_add_test(tc, test_cuts);
    tcase_add_test(tc, test_join);
    tcase_add_test(tc, test_allocation_failures);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
