/* Tests of utf8: validation of well-formed and ill-formed sequences, decoding and encoding. */
#include "base/utf8.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

START_TEST(valid_text_passes) {
    const char *ok[] = {"", "plain ascii", "मैं चाय पीता हूँ", "Grüße", "\xF0\x9F\x98\x80", "\xEF\xBF\xBF"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) ck_assert_int_eq(nmt_utf8_invalid_at(ok[i], strlen(ok[i])), -1);
}
END_TEST

START_TEST(invalid_sequences_are_located) {
    struct { const char *s; long at; } bad[] = {
        {"ab\x80", 2},              /* lone continuation byte */
        {"\xC0\xAF", 0},            /* overlong '/' */
        {"x\xE0\x80\xAF", 1},       /* overlong 3-byte */
        {"\xED\xA0\x80", 0},        /* surrogate U+D800 */
        {"\xF4\x90\x80\x80", 0},    /* above U+10FFFF */
        {"ok\xE2\x82", 2},          /* truncated at the end */
        {"\xFF", 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_int_eq(nmt_utf8_invalid_at(bad[i].s, strlen(bad[i].s)), bad[i].at);
}
END_TEST

START_TEST(decode_encode_round_trip) {
    const char *s = "aé€😀";
    size_t pos = 0;
    uint32_t want[] = {0x61, 0xE9, 0x20AC, 0x1F600};
    for (int i = 0; i < 4; i++) {
        size_t start = pos;
        uint32_t cp = nmt_utf8_next(s, &pos);
        ck_assert_uint_eq(cp, want[i]);
        char buf[4];
        int n = nmt_utf8_encode(cp, buf);
        ck_assert_int_eq(n, (int)(pos - start));
        ck_assert(memcmp(buf, s + start, (size_t)n) == 0);
    }
    ck_assert_uint_eq(pos, strlen(s));
}
END_TEST

/* Unicode properties with Python's semantics (expected values: Python 3.11's str methods and the
 * regex module's \p{..} classes). */
START_TEST(python_properties) {
    ck_assert(nmt_utf8_is_space(' ') && nmt_utf8_is_space('\t') && nmt_utf8_is_space(0x1C) && nmt_utf8_is_space(0x85) &&
              nmt_utf8_is_space(0xA0) && nmt_utf8_is_space(0x2028) && nmt_utf8_is_space(0x3000));
    ck_assert(!nmt_utf8_is_space('a') && !nmt_utf8_is_space(0x200B) && !nmt_utf8_is_space(0x180E));
    ck_assert_int_eq(nmt_utf8_class(','), NMT_UTF8_PUNCT);
    ck_assert_int_eq(nmt_utf8_class(0x00AB), NMT_UTF8_PUNCT);  /* « */
    ck_assert_int_eq(nmt_utf8_class('$'), NMT_UTF8_SYMBOL);
    ck_assert_int_eq(nmt_utf8_class(0x1F600), NMT_UTF8_SYMBOL); /* emoji: So */
    ck_assert_int_eq(nmt_utf8_class(0x0663), NMT_UTF8_NUMBER);  /* Arabic-Indic three */
    ck_assert_int_eq(nmt_utf8_class(0x00BD), NMT_UTF8_NUMBER);  /* ½ */
    ck_assert_int_eq(nmt_utf8_class(0x4E2D), NMT_UTF8_LETTER);
    ck_assert_int_eq(nmt_utf8_class(0x0301), NMT_UTF8_MARK);
    ck_assert_ptr_nonnull(nmt_utf8_unicode_version());
}
END_TEST

START_TEST(python_lowercase) {
    struct { const char *in, *want; } cases[] = {
        {"ABC Ärger", "abc ärger"}, {"\xC4\xB0", "i\xCC\x87"}, {"ΣΑΣ", "σας"}, {"ΑΣ'Β", "ασ'β"},
        {"Ⱥ", "ⱥ"}, {"K", "k"}, {"ǅ", "ǆ"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[64];
        size_t len = strlen(cases[i].in);
        ck_assert_uint_le(NMT_UTF8_LOWER_MAX(len), sizeof out);
        size_t n = nmt_utf8_lower(cases[i].in, len, out);
        ck_assert_uint_le(n, NMT_UTF8_LOWER_MAX(len));
        ck_assert_uint_eq(n, strlen(cases[i].want));
        ck_assert(memcmp(out, cases[i].want, n) == 0);
    }
    ck_assert_int_eq(nmt_utf8_length(0xE4), 3);
    ck_assert_int_eq(nmt_utf8_length('a'), 1);
}
END_TEST

int main(void) {
    Suite *s = suite_create("utf8");
    TCase *tc = tcase_create("utf8");
    tcase_add_test(tc, valid_text_passes);
    tcase_add_test(tc, invalid_sequences_are_located);
    tcase_add_test(tc, decode_encode_round_trip);
    tcase_add_test(tc, python_properties);
    tcase_add_test(tc, python_lowercase);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
