/* Tests of guide.h: a line's target fields read into a prefix and phrases (empty phrases skipped,
 * the phrase bound), and glossaries (whole-word and case-insensitive matching, the case kept with
 * match_case, each target term once, a bad line named by file and line), over a tokenizer whose
 * pieces are the text's bytes.
 */
#include "infer/guide.h"
#include "base/util.h"
#include "testing.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bytes_encode(const void *state, const char *text, size_t len, int32_t **ids, size_t *cap, size_t *count) {
    (void)state;
    if (len > *cap) {
        int32_t *grown = realloc(*ids, len * sizeof *grown);
        if (!grown) return nmt_error_set("out of memory");
        *ids = grown;
        *cap = len;
    }
    for (size_t i = 0; i < len; i++) (*ids)[i] = (unsigned char)text[i];
    *count = len;
    return 0;
}

static const nmt_tokenizer bytes = {.encode = bytes_encode};

/* The phrases of g as "abc|de|..." into out. */
static void phrases_text(const nmt_guide *g, char *out) {
    size_t n = 0;
    for (int c = 0; c < g->guide.constraint_count; c++) {
        const nmt_decode_phrase *p = &g->guide.constraints[c];
        for (int i = 0; i < p->length; i++) out[n++] = (char)p->pieces[i];
        if (c + 1 < g->guide.constraint_count) out[n++] = '|';
    }
    out[n] = '\0';
}

START_TEST(fields_give_prefix_and_phrases) {
    nmt_guide g = {0};
    const char fields[] = "ab\tc\t\tde";
    ck_assert_int_eq(nmt_guide_parse(&g, &bytes, 1, 1, fields, strlen(fields)), 0);
    ck_assert_int_eq(nmt_guide_finish(&g), 1);
    ck_assert_int_eq(g.guide.prefix_length, 2);
    ck_assert(g.guide.prefix[0] == 'a' && g.guide.prefix[1] == 'b');
    char text[64];
    phrases_text(&g, text);
    ck_assert_str_eq(text, "c|de");
    nmt_guide_reset(&g);
    ck_assert_int_eq(nmt_guide_parse(&g, &bytes, 1, 0, "ab\tc", 4), -1); /* a phrase without --constraints */
    nmt_guide_reset(&g);
    ck_assert_int_eq(nmt_guide_parse(&g, &bytes, 0, 1, "", 0), 0);
    ck_assert_int_eq(nmt_guide_finish(&g), 0);
    for (int i = 0; i < NMT_CONSTRAINT_MAX; i++) ck_assert_int_eq(nmt_guide_add_phrase(&g, &bytes, "x", 1), 0);
    ck_assert_int_eq(nmt_guide_add_phrase(&g, &bytes, "y", 1), -1);
    ck_assert_int_eq(nmt_guide_add_phrase(&g, &bytes, "", 0), 0); /* an empty phrase adds nothing, even then */
    nmt_guide_free(&g);
}
END_TEST

static nmt_glossary *glossary(const char *text, int match_case) {
    char path[] = "/tmp/test_guide_XXXXXX";
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *fp = fdopen(fd, "w");
    fputs(text, fp);
    fclose(fp);
    nmt_glossary *gl = NULL;
    const int rc = nmt_glossary_load(&gl, path, match_case);
    if (rc < 0) ck_assert_ptr_nonnull(strstr(nmt_error(), path));
    remove(path);
    return gl;
}

/* The phrases the glossary gives `line`. */
static void apply(nmt_glossary *gl, const char *line, char *out) {
    nmt_guide g = {0};
    ck_assert_int_eq(nmt_glossary_apply(gl, line, strlen(line), &g, &bytes), 0);
    nmt_guide_finish(&g);
    phrases_text(&g, out);
    nmt_guide_free(&g);
}

/* A source's sentences: runs of . ! ? before a space or at the end, at least one; reset forgets them. */
START_TEST(sources_count_their_sentences) {
    nmt_guide g = {0};
    const char *const lines[] = {"Two men. One dog! Fine", "Wait... what?", "3.5 m", "", "A dog.", "says E.S.E. Electronics.",
                                 "Zwei Männer. Ein Hund."};
    const int want[] = {2, 2, 1, 1, 1, 1, 2};
    for (int i = 0; i < 7; i++) {
        nmt_guide_set_source(&g, lines[i], strlen(lines[i]));
        ck_assert_int_eq(nmt_guide_add_phrase(&g, &bytes, "x", 1), 0);
        nmt_guide_finish(&g);
        ck_assert_int_eq(g.guide.sentences, want[i]);
        nmt_guide_reset(&g);
        ck_assert_int_eq(g.sentences, 0);
    }
    nmt_guide_free(&g);
}
END_TEST

START_TEST(glossary_matches_whole_words) {
    nmt_glossary *gl = glossary("cat\tK\n\nred house\tRH\nHaus\tH\nkatze\tK\n-x\tX\n", 0);
    ck_assert_ptr_nonnull(gl);
    ck_assert_int_eq(nmt_glossary_size(gl), 5);
    char out[64];
    apply(gl, "The CAT sees a Red House", out);
    ck_assert_str_eq(out, "K|RH");
    apply(gl, "cattle, a bobcat", out);
    ck_assert_str_eq(out, "");
    apply(gl, "ein HAUS, eine Katze.", out); /* K once, though two entries give it */
    ck_assert_str_eq(out, "H|K");
    apply(gl, "Hausmeister über-x", out);
    ck_assert_str_eq(out, "X");
    nmt_glossary_free(gl);
    gl = glossary("cat\tK\n", 1);
    apply(gl, "The Cat", out);
    ck_assert_str_eq(out, "");
    apply(gl, "the cat", out);
    ck_assert_str_eq(out, "K");
    nmt_glossary_free(gl);
}
END_TEST

START_TEST(glossary_refuses_bad_lines) {
    ck_assert_ptr_null(glossary("cat\tK\nno tab\n", 0));
    ck_assert_ptr_nonnull(strstr(nmt_error(), ":2:"));
    ck_assert_ptr_null(glossary("\tK\n", 0));
    ck_assert_ptr_null(glossary("cat\t\n", 0));
    ck_assert_ptr_null(glossary("a\tb\tc\n", 0));
    ck_assert_ptr_null(glossary("a\t\xff\n", 0));
}
END_TEST

static Suite *guide_suite(void) {
    Suite *suite = suite_create("guide");
    TCase *tc = tcase_create("guide");
    tcase_add_test(tc, fields_give_prefix_and_phrases);
    tcase_add_test(tc, sources_count_their_sentences);
    tcase_add_test(tc, glossary_matches_whole_words);
    tcase_add_test(tc, glossary_refuses_bad_lines);
    suite_add_tcase(suite, tc);
    return suite;
}

int main(void) { return nmt_test_run(guide_suite()); }
