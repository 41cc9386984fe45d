/* Tests of the server's request parsing and answers (src/serve/request.c): LibreTranslate JSON and
 * form bodies, OpenNMT-py lists, native requests, every refusal naming its field, and answers that
 * are strict JSON of each API's shape. */
#include "serve/request.h"

#include "base/json.h"
#include "testing.h"

static int parse(nmt_serve_api api, const char *type, const char *body, nmt_serve_request *r) {
    return nmt_serve_request_parse(api, type, body, strlen(body), r);
}

/* Parsing fails with a message containing `want`. */
static void refused(nmt_serve_api api, const char *type, const char *body, const char *want) {
    nmt_serve_request r;
    ck_assert_msg(parse(api, type, body, &r) == -1, "accepted: %s", body);
    ck_assert_msg(strstr(nmt_error(), want), "'%s': got '%s', want '%s'", body, nmt_error(), want);
    nmt_serve_request_free(&r);
}

START_TEST(test_libre_json) {
    nmt_serve_request r;
    ck_assert_int_eq(parse(NMT_SERVE_LIBRE, "application/json",
                           "{\"q\": \"Hello\\nworld\", \"source\": \"en\", \"target\": \"de\", \"format\": \"text\","
                           " \"alternatives\": 3, \"api_key\": \"k1\", \"unknown\": {\"a\": [1, 2]}}", &r), 0);
    ck_assert_int_eq(r.count, 1);
    ck_assert_int_eq(r.q_list, 0);
    ck_assert_str_eq(r.q[0], "Hello\nworld");
    ck_assert_str_eq(r.source, "en");
    ck_assert_str_eq(r.target, "de");
    ck_assert_str_eq(r.format, "text");
    ck_assert_str_eq(r.api_key, "k1");
    ck_assert_int_eq(r.alternatives, 3);
    nmt_serve_request_free(&r);
    ck_assert_int_eq(parse(NMT_SERVE_LIBRE, NULL, "{\"q\": [\"a\", \"b\u00e9\", \"\"], \"source\": \"auto\"}", &r), 0);
    ck_assert_int_eq(r.count, 3);
    ck_assert_int_eq(r.q_list, 1);
    ck_assert_str_eq(r.q[1], "b\u00e9");
    ck_assert_ptr_null(r.target);
    nmt_serve_request_free(&r);
    ck_assert_int_eq(parse(NMT_SERVE_LIBRE, NULL, "{\"q\": []}", &r), 0);
    ck_assert_int_eq(r.count, 0);
    ck_assert_int_eq(r.q_list, 1);
    nmt_serve_request_free(&r);
}
END_TEST

START_TEST(test_libre_form) {
    nmt_serve_request r;
    ck_assert_int_eq(parse(NMT_SERVE_LIBRE, "application/x-www-form-urlencoded; charset=UTF-8",
                           "q=the+cat%20sees%0Aa%20dog&source=en&target=de&alternatives=2&api_key=a%2Bb&x=", &r), 0);
    ck_assert_int_eq(r.count, 1);
    ck_assert_str_eq(r.q[0], "the cat sees\na dog");
    ck_assert_str_eq(r.api_key, "a+b");
    ck_assert_int_eq(r.alternatives, 2);
    nmt_serve_request_free(&r);
    ck_assert_int_eq(parse(NMT_SERVE_LIBRE, "Application/X-WWW-Form-Urlencoded", "q=%C3%A9&&source=en", &r), 0);
    ck_assert_str_eq(r.q[0], "\xc3\xa9");
    nmt_serve_request_free(&r);
    const char *form = "application/x-www-form-urlencoded";
    refused(NMT_SERVE_LIBRE, form, "source=en", "q: missing");
    refused(NMT_SERVE_LIBRE, form, "q=a&q=b", "q: given twice");
    refused(NMT_SERVE_LIBRE, form, "q=a%2", "q: bad percent escape at byte 2");
    refused(NMT_SERVE_LIBRE, form, "q=a%zz", "q: bad percent escape");
    refused(NMT_SERVE_LIBRE, form, "q=a%00b", "q: a NUL byte");
    refused(NMT_SERVE_LIBRE, form, "q=%FF", "q: invalid UTF-8 at byte 1");
    refused(NMT_SERVE_LIBRE, form, "q=a&alternatives=x", "alternatives: expected an integer from 0 to 100");
    refused(NMT_SERVE_LIBRE, form, "q=a&alternatives=101", "alternatives: expected an integer");
    refused(NMT_SERVE_LIBRE, form, "q=a&source=en&source=fr", "source: given twice");
}
END_TEST

START_TEST(test_refusals) {
    refused(NMT_SERVE_LIBRE, NULL, "", "empty body");
    refused(NMT_SERVE_LIBRE, NULL, "{\"source\": \"en\"}", "q: missing");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": 5}", "q: expected a string or a list of strings");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": [\"a\", 5]}", "q: expected a list of strings");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"a\", \"q\": \"b\"}", "q: given twice");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"a\", \"source\": 1}", "source: expected a string");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"a\", \"alternatives\": -1}", "alternatives: expected a non-negative integer");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"a\", \"alternatives\": 1.5}", "bad JSON");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"a\",}", "bad JSON");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"a\"} x", "unexpected text after the JSON value");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"\\u0000\"}", "bad JSON");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"\xff\"}", "bad JSON");
    refused(NMT_SERVE_LIBRE, NULL, "[\"q\"]", "expected '{'");
    refused(NMT_SERVE_NATIVE, NULL, "{\"q\": \"a\", \"alignment\": 1}", "alignment: expected true or false");
    refused(NMT_SERVE_NATIVE, NULL, "{\"q\": \"a\", \"n_best\": 1000}", "n_best: 1000 is more than 100");
    refused(NMT_SERVE_OPENNMT, NULL, "{\"src\": \"a\"}", "expected a list of");
    refused(NMT_SERVE_OPENNMT, NULL, "[{\"id\": 1}]", "src: missing in item 1");
    refused(NMT_SERVE_OPENNMT, NULL, "[{\"src\": \"a\", \"id\": \"x\"}]", "id: expected a non-negative integer");
    refused(NMT_SERVE_OPENNMT, NULL, "[{\"src\": \"a\"}, 3]", "expected an object");
    /* Deep nesting in a skipped field stops at the reader's limit. */
    char deep[400] = "{\"q\": \"a\", \"x\": ";
    for (int i = 0; i < 100; i++) strcat(deep, "[");
    refused(NMT_SERVE_LIBRE, NULL, deep, "bad JSON");
}
END_TEST

START_TEST(test_opennmt_and_native) {
    nmt_serve_request r;
    ck_assert_int_eq(parse(NMT_SERVE_OPENNMT, NULL, "[{\"src\": \"a b\", \"id\": 100}, {\"id\": 0, \"src\": \"c\"}]", &r), 0);
    ck_assert_int_eq(r.count, 2);
    ck_assert_str_eq(r.q[1], "c");
    nmt_serve_request_free(&r);
    ck_assert_int_eq(parse(NMT_SERVE_NATIVE, "text/plain",
                           "{\"q\": [\"x\"], \"n_best\": 3, \"alignment\": true, \"alignment_map\": false}", &r), 0);
    ck_assert_int_eq(r.n_best, 3);
    ck_assert_int_eq(r.alignment, 1);
    ck_assert_int_eq(r.alignment_map, 0);
    nmt_serve_request_free(&r);
    /* LibreTranslate's fields mean nothing to the native API: skipped. */
    ck_assert_int_eq(parse(NMT_SERVE_NATIVE, NULL, "{\"q\": \"x\", \"source\": 5}", &r), 0);
    ck_assert_int_eq(r.n_best, 1);
    nmt_serve_request_free(&r);
}
END_TEST

/* Writes the answer of a parsed request with made-up results and returns it (to free). */
static char *answer(nmt_serve_api api, const char *body, const char *map, const char *detected) {
    nmt_serve_request r;
    ck_assert_int_eq(parse(api, NULL, body, &r), 0);
    nmt_serve_hypothesis hyps[2] = {{"best \"one\"\t", -1.5, -2.25}, {"second", -3, -4}};
    int pairs[4] = {0, 0, 1, 1};
    nmt_serve_text texts[4];
    for (int i = 0; i < 4; i++) texts[i] = (nmt_serve_text){hyps, 2, pairs, 2, 2, 2, NULL, NULL};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    nmt_serve_response_write(out, &r, texts, map, detected);
    fclose(out);
    nmt_serve_request_free(&r);
    /* Strict JSON, whole. */
    nmt_json j;
    ck_assert_int_eq(nmt_json_init(&j, text, len, "answer", "JSON", 0, 0), 0);
    ck_assert_msg(nmt_json_skip_value(&j) == 0 && nmt_json_end(&j) == 0, "%s: %s", text, nmt_error());
    return text;
}

START_TEST(test_answers) {
    char *a = answer(NMT_SERVE_LIBRE, "{\"q\": \"x\"}", NULL, NULL);
    ck_assert_str_eq(a, "{\"translatedText\":\"best \\\"one\\\"\\u0009\"}");
    free(a);
    a = answer(NMT_SERVE_LIBRE, "{\"q\": [\"x\", \"y\"], \"alternatives\": 5}", NULL, "en");
    ck_assert_str_eq(a, "{\"translatedText\":[\"best \\\"one\\\"\\u0009\",\"best \\\"one\\\"\\u0009\"],"
                        "\"alternatives\":[[\"second\"],[\"second\"]],"
                        "\"detectedLanguage\":[{\"confidence\":100,\"language\":\"en\"},{\"confidence\":100,\"language\":\"en\"}]}");
    free(a);
    a = answer(NMT_SERVE_LIBRE, "{\"q\": \"x\", \"alternatives\": 1}", NULL, NULL);
    ck_assert_str_eq(a, "{\"translatedText\":\"best \\\"one\\\"\\u0009\",\"alternatives\":[\"second\"]}");
    free(a);
    a = answer(NMT_SERVE_OPENNMT, "[{\"src\": \"x\", \"id\": 1}]", NULL, NULL);
    ck_assert_str_eq(a, "[[{\"src\":\"x\",\"tgt\":\"best \\\"one\\\"\\u0009\",\"n_best\":1,\"pred_score\":-2.25,"
                        "\"align\":\"0-0 1-1\"}]]");
    free(a);
    a = answer(NMT_SERVE_NATIVE, "{\"q\": \"x\", \"n_best\": 2, \"alignment\": true}", "<svg/>", NULL);
    ck_assert_str_eq(a, "{\"translations\":[{\"source\":\"x\",\"translation\":\"best \\\"one\\\"\\u0009\",\"n_best\":"
                        "[{\"text\":\"best \\\"one\\\"\\u0009\",\"score\":-1.5,\"logprob\":-2.25},"
                        "{\"text\":\"second\",\"score\":-3,\"logprob\":-4}],\"alignment\":[[0,0],[1,1]]}],"
                        "\"alignment_map\":\"<svg/>\"}");
    free(a);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    nmt_serve_error_write(out, "q: \"missing\"");
    fclose(out);
    ck_assert_str_eq(text, "{\"error\":\"q: \\\"missing\\\"\"}");
    free(text);
}
END_TEST

int main(void) {
    Suite *s = suite_create("request");
    TCase *tc = tcase_create("request");
    tcase_add_test(tc, test_libre_json);
    tcase_add_test(tc, test_libre_form);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_opennmt_and_native);
    tcase_add_test(tc, test_answers);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
