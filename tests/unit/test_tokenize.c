/* Tests of tokenize: each of sacreBLEU's tokenizers on cases where its rules decide, Python's
 * lower/split/rstrip semantics, and the TER normaliser. Expected strings are worked out from the
 * rules in sacreBLEU 2.6's source (quoted in tokenize.h) and were confirmed by running it. */
#include "eval/tokenize.h"
#include "base/util.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static nmt_strbuf out;
static nmt_tokenize_scratch scratch;

static const char *tok(nmt_tokenizer t, const char *s) {
    ck_assert_int_eq(nmt_tokenize(t, s, strlen(s), &out, &scratch), 0);
    ck_assert_int_eq(nmt_strbuf_reserve(&out, out.len + 1), 0);
    out.data[out.len] = '\0';
    return out.data;
}

static const char *ter(int normalized, int no_punct, int asian, int case_sensitive, const char *s) {
    nmt_tokenize_tercom o = {normalized, no_punct, asian, case_sensitive};
    ck_assert_int_eq(nmt_tokenize_ter(&o, s, strlen(s), &out, &scratch), 0);
    ck_assert_int_eq(nmt_strbuf_reserve(&out, out.len + 1), 0);
    out.data[out.len] = '\0';
    return out.data;
}

static void teardown(void) {
    nmt_strbuf_free(&out);
    nmt_tokenize_scratch_free(&scratch);
}

START_TEST(tokenizer_13a) {
    /* ASCII punctuation split off; ' - kept inside words; "." and "," split unless next to digits. */
    ck_assert_str_eq(tok(NMT_TOKENIZE_13A, "Hello, world! It's a well-known fact."),
                     "Hello , world ! It's a well-known fact .");
    ck_assert_str_eq(tok(NMT_TOKENIZE_13A, "Pay $1,000.50 (or 3.14) by 2020-2021."),
                     "Pay $ 1,000.50 ( or 3.14 ) by 2020 - 2021 .");
    /* 13a pads the line with spaces, so a final "10." loses its period (zh below does not). */
    ck_assert_str_eq(tok(NMT_TOKENIZE_13A, "in 10."), "in 10 .");
    /* Unescaping in sacreBLEU's order: "&amp;lt;" becomes "&lt;" and then "<". */
    ck_assert_str_eq(tok(NMT_TOKENIZE_13A, "&quot;a&quot; &amp;lt;b&gt; AT&amp;T"), "\" a \" < b > AT & T");
    ck_assert_str_eq(tok(NMT_TOKENIZE_13A, "x<skipped>y &apos;"), "xy & apos ;");
    /* Leftmost, non-overlapping matches: "a.,b" and "1..2". */
    ck_assert_str_eq(tok(NMT_TOKENIZE_13A, "a.,b 1..2"), "a . , b 1 . . 2");
    /* Non-ASCII punctuation is not 13a's business. */
    ck_assert_str_eq(tok(NMT_TOKENIZE_13A, "«Grüße» – ja…"), "«Grüße» – ja…");
    ck_assert_str_eq(tok(NMT_TOKENIZE_13A, ""), "");
}
END_TEST

START_TEST(tokenizer_intl) {
    ck_assert_str_eq(tok(NMT_TOKENIZE_INTL, "«Grüße», sagte er… $5 ©2020"), "« Grüße » , sagte er … $ 5 © 2020");
    /* Punctuation between digits stays; a number's final period stays too (mteval-v14's quirk). */
    ck_assert_str_eq(tok(NMT_TOKENIZE_INTL, "1,000.50 in 1990."), "1,000.50 in 1990.");
    ck_assert_str_eq(tok(NMT_TOKENIZE_INTL, "你好，世界！"), "你好 ， 世界 ！");
}
END_TEST

START_TEST(tokenizer_char_and_none) {
    ck_assert_str_eq(tok(NMT_TOKENIZE_CHAR, "ab c😀"), "a b   c 😀");
    ck_assert_str_eq(tok(NMT_TOKENIZE_NONE, " a  b "), " a  b ");
}
END_TEST

START_TEST(tokenizer_zh) {
    ck_assert_str_eq(tok(NMT_TOKENIZE_ZH, "我爱你。Hello, world"), "我 爱 你 。 Hello , world");
    /* sacreBLEU's range table compares two-character strings: U+2001..U+2A6D count as Chinese, so
     * curly quotes and dashes are split off; an astral CJK character (U+20000) is not. */
    ck_assert_str_eq(tok(NMT_TOKENIZE_ZH, "a“b”c–d 𠀀x"), "a “ b ” c – d 𠀀x");
    ck_assert_str_eq(tok(NMT_TOKENIZE_ZH, "in 10."), "in 10.");
}
END_TEST

START_TEST(tokenizer_names) {
    nmt_tokenizer t;
    ck_assert_int_eq(nmt_tokenize_parse("intl", &t), 0);
    ck_assert_int_eq(t, NMT_TOKENIZE_INTL);
    ck_assert_str_eq(nmt_tokenize_name(NMT_TOKENIZE_13A), "13a");
    ck_assert_int_eq(nmt_tokenize_parse("ja-mecab", &t), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "external model"));
    ck_assert_int_eq(nmt_tokenize_parse("13b", &t), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "unknown tokenizer"));
}
END_TEST

START_TEST(python_lower) {
    nmt_strbuf low = {0};
    struct { const char *in, *want; } cases[] = {
        {"ÄÖÜ Straße ẞ", "äöü straße ß"},
        {"İstanbul", "i\xCC\x87stanbul"},       /* U+0130 lowers to i + U+0307 */
        {"ΟΔΥΣΣΕΥΣ", "οδυσσευς"},                /* final sigma at the end of a word */
        {"ΑΣ.Β ΑΣ. ΑΣ:Β", "ασ.β ας. ασ:β"},      /* '.' and ':' are case-ignorable */
        {"Σ ªΣ ⅫΣ", "σ ªς ⅻς"},                 /* ª and Roman numerals are cased */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ck_assert_int_eq(nmt_tokenize_lower(cases[i].in, strlen(cases[i].in), &low), 0);
        ck_assert_int_eq((int)low.len, (int)strlen(cases[i].want));
        ck_assert(memcmp(low.data, cases[i].want, low.len) == 0);
    }
    nmt_strbuf_free(&low);
}
END_TEST

START_TEST(python_split_and_rstrip) {
    nmt_tokenize_spans spans = {0};
    /* Python's whitespace: NBSP, U+2028, \x1c and \x85 separate words; U+200B does not. */
    const char *s = " a\xC2\xA0" "b\xE2\x80\xA8" "c\x1c" "d\xC2\x85" "e\xE2\x80\x8B" "f\t";
    ck_assert_int_eq(nmt_tokenize_split(s, strlen(s), &spans), 0);
    ck_assert_int_eq((int)spans.count, 5);
    ck_assert_int_eq((int)spans.items[0].start, 1);
    ck_assert_int_eq((int)spans.items[4].len, 5); /* "e" U+200B "f" */
    ck_assert_int_eq((int)nmt_tokenize_rstrip(s, strlen(s)), (int)strlen(s) - 1);
    const char *t = "x \xE3\x80\x80\r";
    ck_assert_int_eq((int)nmt_tokenize_rstrip(t, strlen(t)), 1);
    ck_assert_int_eq(nmt_tokenize_split("", 0, &spans), 0);
    ck_assert_int_eq((int)spans.count, 0);
    nmt_tokenize_spans_free(&spans);
}
END_TEST

START_TEST(tercom) {
    /* Default TER: lowercase and collapse whitespace only. */
    ck_assert_str_eq(ter(0, 0, 0, 0, "Hello,  World's END."), "hello, world's end.");
    ck_assert_str_eq(ter(0, 0, 0, 1, "Hello,  World"), "Hello, World");
    /* Normalized: 13a-like splitting plus the possessive 's. */
    ck_assert_str_eq(ter(1, 0, 0, 0, "Hello, World's end. &quot;3.5&quot;"), "hello , world 's end . \" 3.5 \"");
    /* No punctuation: .,?:;!"() removed (others, like '-', stay). */
    ck_assert_str_eq(ter(0, 1, 0, 0, "a.b, (c)? d-e!"), "ab c d-e");
    /* Asian support splits CJK characters when normalizing and removes CJK punctuation. */
    ck_assert_str_eq(ter(1, 0, 1, 0, "我爱你。"), "我 爱 你 。");
    ck_assert_str_eq(ter(0, 1, 1, 0, "我爱你。！"), "我爱你");
    ck_assert_str_eq(ter(1, 1, 1, 1, ""), "");
}
END_TEST

int main(void) {
    Suite *s = suite_create("tokenize");
    TCase *tc = tcase_create("tokenize");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, tokenizer_13a);
    tcase_add_test(tc, tokenizer_intl);
    tcase_add_test(tc, tokenizer_char_and_none);
    tcase_add_test(tc, tokenizer_zh);
    tcase_add_test(tc, tokenizer_names);
    tcase_add_test(tc, python_lower);
    tcase_add_test(tc, python_split_and_rstrip);
    tcase_add_test(tc, tercom);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
