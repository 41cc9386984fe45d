/* Tests of src/text/langcode.c: which codes are language codes, a file suffix read as a language
 * only when it is a listed ISO 639-1 code, and the English names. */
#include "text/langcode.h"

#include "base/util.h"
#include "testing.h"

START_TEST(test_check) {
    const char *const good[] = {"en", "de", "ar", "zt", "eng", "zh-Hans", "pt-BR", "ast", "sr-Latn"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        ck_assert_msg(nmt_langcode_check(good[i], "x") == 0, "%s: %s", good[i], nmt_error());
    const char *const bad[] = {"", "e", "EN", "xx", "engl", "en-", "en-a", "en-abcdefghi", "en_US", "e1", "en-US-x",
                               "auto"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(nmt_langcode_check(bad[i], "data.src_lang") < 0, "'%s' accepted", bad[i]);
        ck_assert_msg(strstr(nmt_error(), "data.src_lang: '") == nmt_error(), "%s", nmt_error());
    }
}
END_TEST

START_TEST(test_paths) {
    char code[NMT_LANGCODE_MAX];
    ck_assert_int_eq(nmt_langcode_of_path("/data/train.en", code), 1);
    ck_assert_str_eq(code, "en");
    ck_assert_int_eq(nmt_langcode_of_path("train.de", code), 1);
    ck_assert_str_eq(code, "de");
    ck_assert_int_eq(nmt_langcode_of_path("/data/train.fr.gz", code), 1);
    ck_assert_str_eq(code, "fr");
    ck_assert_int_eq(nmt_langcode_of_path(".cs", code), 1);
    ck_assert_str_eq(code, "cs");
    const char *const none[] = {"/data/train.src", "train.tgt", "train.txt", "/data.en/train", "train", "train.EN",
                                "train.xx", "train.gz", "train.src.gz", "en", ".gz", "a.gz.gz", "/x.en/", NULL};
    for (int i = 0; none[i]; i++) {
        ck_assert_msg(nmt_langcode_of_path(none[i], code) == 0, "%s read as %s", none[i], code);
        ck_assert_str_eq(code, "");
    }
    ck_assert_int_eq(nmt_langcode_of_path(NULL, code), 0);
    ck_assert(nmt_langcode_is_iso639_1("fr"));
    ck_assert(!nmt_langcode_is_iso639_1("fra"));
}
END_TEST

START_TEST(test_names) {
    ck_assert_str_eq(nmt_langcode_name("en"), "English");
    ck_assert_str_eq(nmt_langcode_name("de"), "German");
    ck_assert_str_eq(nmt_langcode_name("ar"), "Arabic");
    ck_assert_str_eq(nmt_langcode_name("zh-Hans"), "Chinese");
    ck_assert_str_eq(nmt_langcode_name("zt"), "Chinese (traditional)");
    ck_assert_str_eq(nmt_langcode_name("aa"), "Afar");
    ck_assert_str_eq(nmt_langcode_name("zu"), "Zulu");
    ck_assert_str_eq(nmt_langcode_name("eng"), "eng");
}
END_TEST

int main(void) {
    Suite *s = suite_create("langcode");
    TCase *tc = tcase_create("langcode");
    tcase_add_test(tc, test_check);
    tcase_add_test(tc, test_paths);
    tcase_add_test(tc, test_names);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
