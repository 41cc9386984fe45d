/* Tests of json: the strict pull reader (numbers, strings, skipping, error places) and the string
 * writer. Expected values are from RFC 8259's grammar and hand-counted byte positions. */
#include "base/json.h"
#include "testing.h"

#include <math.h>

static nmt_json reader(const char *text) {
    nmt_json j;
    ck_assert_int_eq(nmt_json_init(&j, text, strlen(text), "t.json", "test text", 0, 0), 0);
    return j;
}

static double number(const char *text) {
    nmt_json j = reader(text);
    double v = -12345;
    ck_assert_msg(nmt_json_number(&j, &v) == 0, "'%s': %s", text, nmt_error());
    ck_assert_int_eq(nmt_json_end(&j), 0);
    return v;
}

/* The text is refused with an error containing `want`. */
static void bad_number(const char *text, const char *want) {
    nmt_json j = reader(text);
    double v;
    int rc = nmt_json_number(&j, &v);
    if (rc == 0) rc = nmt_json_end(&j);
    ck_assert_msg(rc == -1 && strstr(nmt_error(), want), "'%s': got '%s', want '%s'", text, nmt_error(), want);
}

START_TEST(numbers_follow_the_grammar) {
    ck_assert(number("0") == 0 && !signbit(number("0")));
    ck_assert(number("-0") == 0 && signbit(number("-0")));
    ck_assert(number("  12.5e-3 ") == 0.0125);
    ck_assert(number("1E+2") == 100);
    ck_assert(number("-3.25") == -3.25);
    ck_assert(number("0.1") == 0.1); /* the nearest double, as strtod gives it */
    ck_assert(number("1e-400") == 0);  /* underflow is fine: it is the nearest double */
    bad_number("01", "a number with a leading zero");
    bad_number("-01.5", "a number with a leading zero");
    bad_number("+1", "expected a number");
    bad_number(".5", "expected a number");
    bad_number("-", "expected a number");
    bad_number("1.", "expected a digit after the decimal point");
    bad_number("1e", "expected a digit in the exponent");
    bad_number("1e+", "expected a digit in the exponent");
    bad_number("NaN", "expected a number");
    bad_number("Infinity", "expected a number");
    bad_number("1e999", "number 1e999 is out of range");
    bad_number("1.5x", "unexpected text after the JSON value");
    char longer[200];
    memset(longer, '1', 150);
    longer[150] = '\0';
    bad_number(longer, "a number longer than 127 characters");
}
END_TEST

START_TEST(counts_are_non_negative_integers) {
    int64_t v;
    nmt_json j = reader("[0, 9223372036854775807, 9223372036854775808]");
    ck_assert_int_eq(nmt_json_expect(&j, '['), 0);
    ck_assert_int_eq(nmt_json_count(&j, &v), 0);
    ck_assert_int_eq(v, 0);
    ck_assert_int_eq(nmt_json_expect(&j, ','), 0);
    ck_assert_int_eq(nmt_json_count(&j, &v), 0);
    ck_assert(v == INT64_MAX);
    ck_assert_int_eq(nmt_json_expect(&j, ','), 0);
    ck_assert_int_eq(nmt_json_count(&j, &v), -1);
    /* INT64_MAX + 1 starts at byte 25; its 19th digit (byte 43) is the one that does not fit. */
    ck_assert_str_eq(nmt_error(), "t.json: bad test text at byte 43: number too large");
    j = reader("2.0");
    ck_assert_int_eq(nmt_json_count(&j, &v), -1);
    ck_assert_str_eq(nmt_error(), "t.json: bad test text at byte 1: expected an integer, found a fraction or exponent");
}
END_TEST

START_TEST(strings_are_unescaped_and_checked) {
    char *s;
    /* \u00e9 is é (C3 A9), the surrogate pair \ud83d\ude00 is U+1F600 (F0 9F 98 80). */
    nmt_json j = reader(" \"a\\\"b\\\\c\\/\\n\\t\\u00e9\\ud83d\\ude00\xC3\xBC\" ");
    ck_assert_int_eq(nmt_json_string(&j, &s), 0);
    ck_assert_str_eq(s, "a\"b\\c/\n\t\xC3\xA9\xF0\x9F\x98\x80\xC3\xBC");
    free(s);
    ck_assert_int_eq(nmt_json_end(&j), 0);
    static const struct {
        const char *text, *error;
    } bad[] = {
        {"\"a\x01\"", "t.json: bad test text at byte 2: control character 0x01 in a string"},
        {"\"a\\u0000\"", "t.json: bad test text at byte 2: a string holds \\u0000 or an unpaired surrogate"},
        {"\"\\ud800x\"", "t.json: bad test text at byte 1: a string holds \\u0000 or an unpaired surrogate"},
        {"\"\\udc00\"", "t.json: bad test text at byte 1: a string holds \\u0000 or an unpaired surrogate"},
        {"\"\\x\"", "t.json: bad test text at byte 1: bad escape in a string"},
        {"\"\\u12g4\"", "t.json: bad test text at byte 1: bad escape in a string"},
        {"\"abc", "t.json: bad test text at byte 0: unterminated string"},
        {"abc", "t.json: bad test text at byte 0: expected a string"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        j = reader(bad[i].text);
        ck_assert_int_eq(nmt_json_string(&j, &s), -1);
        ck_assert_ptr_null(s);
        ck_assert_str_eq(nmt_error(), bad[i].error);
    }
}
END_TEST

START_TEST(values_are_skipped_whole) {
    nmt_json j = reader("{\"a\": [1, {\"b\": null, \"c\": [true, false, \"x\\u0041\"]}, -2.5e3], \"d\": {}} 7");
    ck_assert_int_eq(nmt_json_skip_value(&j), 0);
    double v;
    ck_assert_int_eq(nmt_json_number(&j, &v), 0);
    ck_assert(v == 7);
    ck_assert_int_eq(nmt_json_end(&j), 0);
    static const struct {
        const char *text, *error;
    } bad[] = {
        {"[1,]", "t.json: bad test text at byte 3: expected a JSON value"},
        {"{\"a\" 1}", "t.json: bad test text at byte 5: expected ':', found '1'"},
        {"{\"a\":1,}", "t.json: bad test text at byte 7: expected a string"},
        {"[1 2]", "t.json: bad test text at byte 3: expected ']', found '2'"},
        {"[nul]", "t.json: bad test text at byte 1: expected a JSON value"},
        {"{\"a\":[1}", "t.json: bad test text at byte 7: expected ']', found '}'"},
        {"[", "t.json: bad test text at byte 1: expected a JSON value"},
        {"{", "t.json: bad test text at byte 1: expected a string"},
        {"", "t.json: bad test text at byte 0: expected a JSON value"},
        {"// no comments", "t.json: bad test text at byte 0: expected a JSON value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        j = reader(bad[i].text);
        ck_assert_int_eq(nmt_json_skip_value(&j), -1);
        ck_assert_str_eq(nmt_error(), bad[i].error);
    }
    /* Nesting: NMT_JSON_MAX_DEPTH levels are read, one more is refused (no unbounded recursion). */
    char deep[2 * NMT_JSON_MAX_DEPTH + 3];
    for (int depth = NMT_JSON_MAX_DEPTH; depth <= NMT_JSON_MAX_DEPTH + 1; depth++) {
        memset(deep, '[', (size_t)depth);
        memset(deep + depth, ']', (size_t)depth);
        deep[2 * depth] = '\0';
        j = reader(deep);
        ck_assert_int_eq(nmt_json_skip_value(&j), depth > NMT_JSON_MAX_DEPTH ? -1 : 0);
    }
    ck_assert_ptr_nonnull(strstr(nmt_error(), "nested deeper than 64 levels"));
}
END_TEST

START_TEST(messages_name_the_place) {
    /* A line of a JSON Lines file: name:line:column (from 1). */
    nmt_json j;
    ck_assert_int_eq(nmt_json_init(&j, "{\"a\" 1}", 7, "run/train.log.jsonl", "log record", 12, 0), 0);
    ck_assert_int_eq(nmt_json_skip_value(&j), -1);
    ck_assert_str_eq(nmt_error(), "run/train.log.jsonl:12:6: bad log record: expected ':', found '1'");
    /* A text at an offset in its file: bytes count from the start of the file. */
    ck_assert_int_eq(nmt_json_init(&j, "{]", 2, "m.st", "safetensors header", 0, 8), 0);
    ck_assert_int_eq(nmt_json_skip_value(&j), -1);
    ck_assert_str_eq(nmt_error(), "m.st: bad safetensors header at byte 9: expected a string");
    /* Invalid UTF-8 is found by init, at its byte; an end of input and odd bytes are named. */
    ck_assert_int_eq(nmt_json_init(&j, "[\"ab\xC3(\"]", 8, "x.jsonl", "log record", 3, 0), -1);
    ck_assert_str_eq(nmt_error(), "x.jsonl:3:5: bad log record: invalid UTF-8");
    j = reader("[1");
    ck_assert_int_eq(nmt_json_skip_value(&j), -1);
    ck_assert_str_eq(nmt_error(), "t.json: bad test text at byte 2: expected ']', found the end of the input");
    j = reader("[1\t\x7f");
    ck_assert_int_eq(nmt_json_skip_value(&j), -1);
    ck_assert_str_eq(nmt_error(), "t.json: bad test text at byte 3: expected ']', found '\x7f'");
    ck_assert_int_eq(nmt_json_init(&j, "[1\0]", 4, "t.json", "test text", 0, 0), 0);
    ck_assert_int_eq(nmt_json_skip_value(&j), -1);
    ck_assert_str_eq(nmt_error(), "t.json: bad test text at byte 2: expected ']', found byte 0x00");
    /* Words are whole literals. */
    j = reader(" null");
    ck_assert_int_eq(nmt_json_accept_word(&j, "true"), 0);
    ck_assert_int_eq(nmt_json_accept_word(&j, "null"), 1);
    ck_assert_int_eq(nmt_json_end(&j), 0);
}
END_TEST

/* Peeking skips whitespace and consumes nothing; -1 at the end. */
START_TEST(peek_looks_without_reading) {
    nmt_json j = reader(" \n\t [\"a\"] ");
    ck_assert_int_eq(nmt_json_peek(&j), '[');
    ck_assert_int_eq(nmt_json_peek(&j), '[');
    ck_assert_int_eq(nmt_json_expect(&j, '['), 0);
    ck_assert_int_eq(nmt_json_peek(&j), '"');
    char *s;
    ck_assert_int_eq(nmt_json_string(&j, &s), 0);
    free(s);
    ck_assert_int_eq(nmt_json_expect(&j, ']'), 0);
    ck_assert_int_eq(nmt_json_peek(&j), -1);
    j = reader("\xc3\xa9");
    ck_assert_int_eq(nmt_json_peek(&j), 0xc3); /* a byte, never a negative char */
}
END_TEST

START_TEST(written_strings_read_back) {
    const char *original = "q\"b\\s\x01\x1f/\xC3\xA9";
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    ck_assert_ptr_nonnull(out);
    nmt_json_write_string(out, original);
    ck_assert_int_eq(fclose(out), 0);
    ck_assert_str_eq(text, "\"q\\\"b\\\\s\\u0001\\u001f/\xC3\xA9\"");
    nmt_json j = reader(text);
    char *back;
    ck_assert_int_eq(nmt_json_string(&j, &back), 0);
    ck_assert_str_eq(back, original);
    free(back);
    free(text);
}
END_TEST

static int read_string(void *context) {
    nmt_json j = reader(context);
    char *s;
    int rc = nmt_json_string(&j, &s);
    free(s);
    return rc;
}

START_TEST(allocation_failures_are_reported) {
    ck_assert_int_eq(nmt_test_alloc_sweep(read_string, "\"abc\""), 1);
}
END_TEST

int main(void) {
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("json");
    tcase_add_test(tc, numbers_follow_the_grammar);
    tcase_add_test(tc, counts_are_non_negative_integers);
    tcase_add_test(tc, strings_are_unescaped_and_checked);
    tcase_add_test(tc, values_are_skipped_whole);
    tcase_add_test(tc, messages_name_the_place);
    tcase_add_test(tc, peek_looks_without_reading);
    tcase_add_test(tc, written_strings_read_back);
    tcase_add_test(tc, allocation_failures_are_reported);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
