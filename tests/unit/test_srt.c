/* Tests of src/serve/srt.c: SubRip files read into their cues' texts (lines joined, numbers and timings
 * kept, CRLF or LF, a byte-order mark dropped), written back with the translations wrapped at 40
 * columns; bad files refused with the line named; textwrap.fill's wrapping, case by case as Python 3.11
 * gives it. */
#include "serve/srt.h"

#include "testing.h"

#include <stdlib.h>
#include <string.h>

/* Each text and what textwrap.fill(text, width=40) gives for it (printed by Python 3.11). */
static const char *const fill_cases[][2] = {
    {"A man sits on a bench in the park and reads a newspaper while the sun goes down.",
     "A man sits on a bench in the park and\nreads a newspaper while the sun goes\ndown."},
    {"short", "short"},
    {"", ""},
    {"  leading spaces and a well-known fact about state-of-the-art systems that is quite long indeed",
     "  leading spaces and a well-known fact\nabout state-of-the-art systems that is\nquite long indeed"},
    {"Supercalifragilisticexpialidocious-and-more-words-glued-together-for-fun yes",
     "Supercalifragilisticexpialidocious-and-\nmore-words-glued-together-for-fun yes"},
    {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nxxxxxxxxxxxxxxx"},
    {"aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll",
     "aaaa bbbb cccc dddd eeee ffff gggg hhhh\niiii jjjj kkkk llll"},
    {"Il était une fois — dans un pays lointain — une très jolie princesse à Zürich.",
     "Il était une fois — dans un pays\nlointain — une très jolie princesse à\nZürich."},
    {"word--dash and an em--dash here and there and everywhere oh yes",
     "word--dash and an em--dash here and\nthere and everywhere oh yes"},
    {"tab\there\nnewline and   many    spaces  between the words of this line ok",
     "tab     here newline and   many\nspaces  between the words of this line\nok"},
    {"1234567890123456789012345678901234567 abcdefghijklmnopqrstuvwxyzabcdefghijklmnopq",
     "1234567890123456789012345678901234567 ab\ncdefghijklmnopqrstuvwxyzabcdefghijklmnop\nq"},
    {"a --------------------------------------------- b", "a --------------------------------------\n------- b"},
    {"abc xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx---yyyyyyyyyyyyyyy", "abc xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx---\nyyyyyyyyyyyyyyy"},
    {"0123456789012345678901234567890123456789 next", "0123456789012345678901234567890123456789\nnext"},
    {"ääääääääääääääääääääääääääääääääääääääääääää", "ääääääääääääääääääääääääääääääääääääääää\nääää"},
    {"                                         ZZZZ^ZZ.ZZ w:rPr", " ZZZZ^ZZ.ZZ w:rPr"},
    {"ab                                              cd", "ab\ncd"},
    {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx                                                  y",
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\ny"},
};

START_TEST(fill_wraps_as_textwrap) {
    for (size_t i = 0; i < sizeof fill_cases / sizeof fill_cases[0]; i++) {
        nmt_strbuf b = {0};
        ck_assert_int_eq(nmt_serve_srt_fill(fill_cases[i][0], 40, &b), 0);
        ck_assert_msg(strcmp(b.data ? b.data : "", fill_cases[i][1]) == 0, "'%s': got '%s', want '%s'",
                      fill_cases[i][0], b.data ? b.data : "", fill_cases[i][1]);
        nmt_strbuf_free(&b);
    }
}
END_TEST

/* Reads file, checks the cues' texts ("|"-separated), writes it back with translations and compares. */
static void round_trip(const char *file, const char *texts, const char *const *translations, const char *want) {
    nmt_serve_srt s;
    ck_assert_msg(nmt_serve_srt_read(file, strlen(file), "a.srt", &s) == 0, "%s", nmt_error());
    char got[1024] = "";
    for (int i = 0; i < s.count; i++) {
        if (i) strcat(got, "|");
        strcat(got, s.cues[i].text);
    }
    ck_assert_str_eq(got, texts);
    nmt_strbuf b = {0};
    ck_assert_int_eq(nmt_serve_srt_write(&s, translations, &b), 0);
    ck_assert_str_eq(b.data ? b.data : "", want);
    nmt_strbuf_free(&b);
    nmt_serve_srt_free(&s);
}

START_TEST(cues_are_read_and_written_back) {
    const char *const two[] = {"One two three four five six seven eight nine ten.", "Bye."};
    round_trip("1\n00:00:01,000 --> 00:00:02,500\nEins zwei drei\nvier.  \n\n"
               "2\n00:00:03,000 --> 00:00:04,000 X1:10\n<i>Tschüss.</i>\n",
               "Eins zwei drei vier.|<i>Tschüss.</i>", two,
               "1\n00:00:01,000 --> 00:00:02,500\nOne two three four five six seven eight\nnine ten.\n\n"
               "2\n00:00:03,000 --> 00:00:04,000 X1:10\nBye.\n\n");
    /* CRLF, a byte-order mark, blank lines of spaces, a cue without a number or text, no final line end */
    const char *const three[] = {"Hello.", "", "World."};
    round_trip("\xEF\xBB\xBF\r\n1\r\n00:00:01,000 --> 00:00:02,000\r\nHallo.\r\n  \r\n \r\n"
               "00:00:03,000 --> 00:00:04,000\r\n\r\n3\r\n00:00:05,000 --> 00:00:06,000\r\nWelt.",
               "Hallo.||Welt.", three,
               "1\r\n00:00:01,000 --> 00:00:02,000\r\nHello.\r\n\r\n00:00:03,000 --> 00:00:04,000\r\n\r\n"
               "3\r\n00:00:05,000 --> 00:00:06,000\r\nWorld.\r\n\r\n");
    round_trip("", "", NULL, "");
}
END_TEST

static void refused(const char *file, size_t len, const char *want) {
    nmt_serve_srt s;
    ck_assert_int_eq(nmt_serve_srt_read(file, len, "a.srt", &s), -1);
    ck_assert_msg(strstr(nmt_error(), want), "'%s' lacks '%s'", nmt_error(), want);
    nmt_serve_srt_free(&s);
}

START_TEST(bad_files_are_refused_by_line) {
    refused("1\n00:00:01,000 --> 00:00:02,000\nHallo\n\n2\nno timing\ntext\n", 52,
            "a.srt: line 6: expected a timing line (00:00:01,000 --> 00:00:02,500) after the cue's number");
    refused("just some text\n", 15, "a.srt: line 2: expected a timing line");
    refused("1\n", 2, "a.srt: line 2: expected a timing line");
    refused("1\n00:00:01,000 --> 00:00:02,000\n\xC3(\n", 35, "a.srt: invalid UTF-8 at byte 33");
    refused("1\n\0", 3, "a.srt: a NUL byte");
}
END_TEST

int main(void) {
    Suite *s = suite_create("srt");
    TCase *tc = tcase_create("srt");
    tcase_add_test(tc, fill_wraps_as_textwrap);
    tcase_add_test(tc, cues_are_read_and_written_back);
    tcase_add_test(tc, bad_files_are_refused_by_line);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
