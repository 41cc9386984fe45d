/* Tests of the server's request parsing and answers (src/serve/request.c): LibreTranslate JSON and
 * form bodies (urlencoded and multipart, LibreTranslate's files too), OpenNMT-py lists, native requests,
 * every refusal naming its field (in LibreTranslate's words on its endpoints), and answers that are
 * strict JSON of each API's shape (alternatives without repeats). */
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
    /* A form's line breaks become "\n", as LibreTranslate takes a form; a last one is kept. */
    ck_assert_int_eq(parse(NMT_SERVE_LIBRE, "application/x-www-form-urlencoded", "q=a%0D%0Ab%0Dc%0A%0D%0D%0Ad%0D%0A", &r), 0);
    ck_assert_str_eq(r.q[0], "a\nb\nc\n\n\nd\n");
    nmt_serve_request_free(&r);
    ck_assert_int_eq(parse(NMT_SERVE_LIBRE, "Application/X-WWW-Form-Urlencoded", "q=%C3%A9&&source=en", &r), 0);
    ck_assert_str_eq(r.q[0], "\xc3\xa9");
    nmt_serve_request_free(&r);
    const char *form = "application/x-www-form-urlencoded";
    refused(NMT_SERVE_LIBRE, form, "source=en", "Invalid request: missing q parameter");
    refused(NMT_SERVE_LIBRE, form, "q=a&q=b", "q: given twice");
    refused(NMT_SERVE_LIBRE, form, "q=a%2", "q: bad percent escape at byte 2");
    refused(NMT_SERVE_LIBRE, form, "q=a%zz", "q: bad percent escape");
    refused(NMT_SERVE_LIBRE, form, "q=a%00b", "q: a NUL byte");
    refused(NMT_SERVE_LIBRE, form, "q=%FF", "q: invalid UTF-8 at byte 1");
    refused(NMT_SERVE_LIBRE, form, "q=a&alternatives=x", "Invalid request: alternatives parameter is not a number");
    refused(NMT_SERVE_LIBRE, form, "q=a&alternatives=101", "Invalid request: alternatives parameter must be <= 100");
    refused(NMT_SERVE_LIBRE, form, "q=a&source=en&source=fr", "source: given twice");
}
END_TEST

#define CRLF "\r\n"

/* multipart/form-data as LibreTranslate's page and curl -F post it. */
START_TEST(test_multipart) {
    const char *type = "multipart/form-data; boundary=----x1";
    const char *body = "------x1" CRLF "Content-Disposition: form-data; name=\"q\"" CRLF CRLF "the cat" CRLF "sees" CRLF
                       "------x1" CRLF "Content-Disposition: form-data; name=\"source\"" CRLF CRLF "en" CRLF
                       "------x1" CRLF "content-disposition: form-data; name=target" CRLF CRLF "de" CRLF
                       "------x1" CRLF "Content-Disposition: form-data; name=\"alternatives\"" CRLF CRLF "2" CRLF
                       "------x1" CRLF "Content-Disposition: form-data; name=\"secret\"" CRLF CRLF "s" CRLF
                       "------x1--" CRLF;
    nmt_serve_request r;
    ck_assert_msg(parse(NMT_SERVE_LIBRE, type, body, &r) == 0, "%s", nmt_error());
    ck_assert_int_eq(r.count, 1);
    ck_assert_str_eq(r.q[0], "the cat\nsees"); /* a browser's "\r\n", as LibreTranslate takes it */
    ck_assert_str_eq(r.source, "en");
    ck_assert_str_eq(r.target, "de");
    ck_assert_int_eq(r.alternatives, 2);
    nmt_serve_request_free(&r);
    /* A file, its name kept; q is not a file's field. */
    const char *file = "--b" CRLF "Content-Disposition: form-data; name=\"file\"; filename=\"notes.txt\"" CRLF
                       "Content-Type: text/plain" CRLF CRLF "a dog" CRLF "--b" CRLF
                       "Content-Disposition: form-data; name=\"source\"" CRLF CRLF "en" CRLF "--b--";
    ck_assert_msg(parse(NMT_SERVE_FILE, "multipart/form-data; boundary=\"b\"", file, &r) == 0, "%s", nmt_error());
    ck_assert_str_eq(r.q[0], "a dog");
    ck_assert_str_eq(r.filename, "notes.txt");
    ck_assert_uint_eq(r.file_len, 5);
    nmt_serve_request_free(&r);
    /* A file's bytes are any bytes (an archive: NUL bytes, no UTF-8), its length kept; other fields are text. */
    static const char binary[] = "--b" CRLF "Content-Disposition: form-data; name=\"file\"; filename=\"a.docx\"" CRLF CRLF
                                 "PK\3\4\0\xff" CRLF "--b" CRLF "Content-Disposition: form-data; name=\"source\"" CRLF
                                 CRLF "en" CRLF "--b--";
    ck_assert_msg(nmt_serve_request_parse(NMT_SERVE_FILE, "multipart/form-data; boundary=b", binary, sizeof binary - 1,
                                          &r) == 0, "%s", nmt_error());
    ck_assert_uint_eq(r.file_len, 6);
    ck_assert(memcmp(r.q[0], "PK\3\4\0\xff", 6) == 0);
    nmt_serve_request_free(&r);
    static const char nul_source[] = "--b" CRLF "Content-Disposition: form-data; name=\"file\"; filename=\"a.docx\"" CRLF
                                     CRLF "PK" CRLF "--b" CRLF "Content-Disposition: form-data; name=\"source\"" CRLF CRLF
                                     "e\0n" CRLF "--b--";
    ck_assert_int_eq(nmt_serve_request_parse(NMT_SERVE_FILE, "multipart/form-data; boundary=b", nul_source,
                                             sizeof nul_source - 1, &r), -1);
    ck_assert_msg(strstr(nmt_error(), "source: a NUL byte"), "%s", nmt_error());
    nmt_serve_request_free(&r);
    refused(NMT_SERVE_FILE, "application/json", "{}", "expected multipart/form-data");
    refused(NMT_SERVE_FILE, "multipart/form-data; boundary=b", "--b" CRLF "Content-Disposition: form-data; name=\"q\""
            CRLF CRLF "x" CRLF "--b--", "Invalid request: missing file parameter");
    refused(NMT_SERVE_FILE, "multipart/form-data; boundary=b", "--b" CRLF "Content-Disposition: form-data; name=\"file\""
            CRLF CRLF "x" CRLF "--b--", "file: expected a file");
    refused(NMT_SERVE_LIBRE, "multipart/form-data", "--b--", "without a boundary");
    refused(NMT_SERVE_LIBRE, "multipart/form-data; boundary=b", "no boundary here", "no multipart boundary");
    refused(NMT_SERVE_LIBRE, "multipart/form-data; boundary=b", "--b" CRLF "Content-Disposition: form-data; name=\"q\""
            CRLF CRLF "x", "q: the part does not end with the boundary");
    refused(NMT_SERVE_LIBRE, "multipart/form-data; boundary=b", "--b" CRLF "X: y" CRLF CRLF "x" CRLF "--b--",
            "part 1 has no Content-Disposition name");
    refused(NMT_SERVE_LIBRE, "multipart/form-data; boundary=b", "--b" CRLF "Content-Disposition: form-data; name=\"q\""
            CRLF CRLF "x\xff" CRLF "--b--", "q: invalid UTF-8 at byte 2");
    /* A name that is not UTF-8 is refused before any message quotes it (found by fuzzing). */
    refused(NMT_SERVE_LIBRE, "multipart/form-data; boundary=b", "--b" CRLF "Content-Disposition: form-data; name=\"\xd5\x8c\x90\""
            CRLF CRLF "en" CRLF, "a part's name: invalid UTF-8 at byte 3");
    static const char nul[] = "--b" CRLF "Content-Disposition: form-data; name=\"q\"" CRLF CRLF "Q\0x" CRLF "--b--";
    ck_assert_int_eq(nmt_serve_request_parse(NMT_SERVE_LIBRE, "multipart/form-data; boundary=b", nul, sizeof nul - 1, &r), -1);
    ck_assert_msg(strstr(nmt_error(), "q: a NUL byte"), "%s", nmt_error());
    nmt_serve_request_free(&r);
    char many[8192] = "";
    for (int i = 0; i <= NMT_SERVE_MAX_PARTS; i++) strcat(many, "--b" CRLF "Content-Disposition: form-data; name=\"x\"" CRLF CRLF "1" CRLF);
    strcat(many, "--b--");
    refused(NMT_SERVE_LIBRE, "multipart/form-data; boundary=b", many, "more than 64 multipart parts");
}
END_TEST

START_TEST(test_refusals) {
    refused(NMT_SERVE_LIBRE, NULL, "", "empty body");
    refused(NMT_SERVE_LIBRE, NULL, "{\"source\": \"en\"}", "Invalid request: missing q parameter");
    refused(NMT_SERVE_NATIVE, NULL, "{\"n_best\": 1}", "q: missing");
    /* LibreTranslate's `if not q`: an empty text or an empty list is a missing q, in every body */
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"\"}", "Invalid request: missing q parameter");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": []}", "Invalid request: missing q parameter");
    refused(NMT_SERVE_DETECT, NULL, "{\"q\": \"\"}", "Invalid request: missing q parameter");
    refused(NMT_SERVE_LIBRE, "application/x-www-form-urlencoded", "q=&target=de", "Invalid request: missing q parameter");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": 5}", "q: expected a string or a list of strings");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": [\"a\", 5]}", "q: expected a list of strings");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"a\", \"q\": \"b\"}", "q: given twice");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"a\", \"source\": 1}", "source: expected a string");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"a\", \"alternatives\": -1}", "alternatives parameter is not a number");
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
    /* LibreTranslate's other fields mean nothing to the native API: skipped; source and target choose
     * the model and are strings. */
    ck_assert_int_eq(parse(NMT_SERVE_NATIVE, NULL, "{\"q\": \"x\", \"alternatives\": \"5\"}", &r), 0);
    ck_assert_int_eq(r.n_best, 1);
    nmt_serve_request_free(&r);
    refused(NMT_SERVE_NATIVE, NULL, "{\"q\": \"x\", \"source\": 5}", "source: expected a string");
}
END_TEST

/* Writes the answer of a parsed request with made-up results and returns it (to free). */
static char *answer(nmt_serve_api api, const char *body, const char *map, const nmt_serve_detected *detected) {
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

/* The glossary: pairs or an object, in JSON or as a form field's JSON; every bad entry named by index. */
START_TEST(test_glossary) {
    nmt_serve_request r;
    ck_assert_int_eq(parse(NMT_SERVE_LIBRE, NULL, "{\"q\": \"x\", \"glossary\": [[\"cat\", \"Katze\"], [\"red house\", \"blau\"]]}", &r), 0);
    ck_assert_int_eq(r.glossary.size, 2);
    ck_assert_str_eq(r.glossary.terms[0], "cat");
    ck_assert_str_eq(r.glossary.terms[1], "Katze");
    ck_assert_str_eq(r.glossary.terms[3], "blau");
    nmt_serve_request_free(&r);
    ck_assert_int_eq(parse(NMT_SERVE_LIBRE, NULL, "{\"glossary\": {\"cat\": \"Katze\"}, \"q\": \"x\"}", &r), 0);
    ck_assert_int_eq(r.glossary.size, 1);
    ck_assert_str_eq(r.glossary.terms[1], "Katze");
    nmt_serve_request_free(&r);
    ck_assert_int_eq(parse(NMT_SERVE_LIBRE, NULL, "{\"q\": \"x\", \"glossary\": []}", &r), 0);
    ck_assert_int_eq(r.glossary.size, 0);
    nmt_serve_request_free(&r);
    ck_assert_int_eq(parse(NMT_SERVE_LIBRE, "application/x-www-form-urlencoded",
                           "q=x&glossary=%5B%5B%22cat%22%2C%22Katze%22%5D%5D", &r), 0);
    ck_assert_int_eq(r.glossary.size, 1);
    ck_assert_str_eq(r.glossary.terms[0], "cat");
    nmt_serve_request_free(&r);
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"x\", \"glossary\": \"cat\"}", "glossary: expected a list");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"x\", \"glossary\": [[\"a\", \"b\"], [\"c\"]]}", "glossary[1]:");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"x\", \"glossary\": [[\"a\", \"b\", \"c\"]]}", "glossary[0]: expected a pair");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"x\", \"glossary\": [[\"a\", 1]]}", "glossary[0]: expected a string");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"x\", \"glossary\": {\"a\": \"b\", \"\": \"c\"}}",
            "glossary[1]: the source term is empty");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"x\", \"glossary\": [[\"a\", \"b\\tc\"]]}",
            "glossary[0]: the target term holds a tab");
    refused(NMT_SERVE_LIBRE, NULL, "{\"q\": \"x\", \"glossary\": [], \"glossary\": []}", "glossary: given twice");
    refused(NMT_SERVE_LIBRE, "application/x-www-form-urlencoded", "q=x&glossary=cat", "glossary: bad field");
    char body[NMT_SERVE_MAX_TERM + 64];
    snprintf(body, sizeof body, "{\"q\": \"x\", \"glossary\": {\"%0*d\": \"b\"}}", NMT_SERVE_MAX_TERM + 1, 0);
    refused(NMT_SERVE_LIBRE, NULL, body, "glossary[0]: the source term has 257 bytes, more than 256");
    size_t cap = 32 + 10 * (NMT_SERVE_MAX_GLOSSARY + 1), len = 0;
    char *many = malloc(cap);
    ck_assert_ptr_nonnull(many);
    len += (size_t)snprintf(many, cap, "{\"q\": \"x\", \"glossary\": [");
    for (int i = 0; i <= NMT_SERVE_MAX_GLOSSARY; i++) len += (size_t)snprintf(many + len, cap - len, "%s[\"a\",\"b\"]", i ? "," : "");
    snprintf(many + len, cap - len, "]}");
    refused(NMT_SERVE_LIBRE, NULL, many, "glossary: more than 1000 entries");
    free(many);
}
END_TEST

START_TEST(test_answers) {
    char *a = answer(NMT_SERVE_LIBRE, "{\"q\": \"x\"}", NULL, NULL);
    ck_assert_str_eq(a, "{\"translatedText\":\"best \\\"one\\\"\\u0009\"}");
    free(a);
    const nmt_serve_detected en = {"en", 87.5};
    a = answer(NMT_SERVE_LIBRE, "{\"q\": [\"x\", \"y\"], \"alternatives\": 5}", NULL, &en);
    ck_assert_str_eq(a, "{\"translatedText\":[\"best \\\"one\\\"\\u0009\",\"best \\\"one\\\"\\u0009\"],"
                        "\"alternatives\":[[\"second\"],[\"second\"]],"
                        "\"detectedLanguage\":[{\"confidence\":87.5,\"language\":\"en\"},{\"confidence\":87.5,\"language\":\"en\"}]}");
    free(a);
    a = answer(NMT_SERVE_LIBRE, "{\"q\": \"x\", \"source\": \"auto\", \"target\": \"de\"}", NULL, &en);
    ck_assert_str_eq(a, "{\"translatedText\":\"best \\\"one\\\"\\u0009\",\"detectedLanguage\":{\"confidence\":87.5,"
                        "\"language\":\"en\"}}");
    free(a);
    /* /detect: its own shape, q and api_key read as /translate reads them (JSON or a form). */
    nmt_serve_request d;
    ck_assert_int_eq(parse(NMT_SERVE_DETECT, "application/x-www-form-urlencoded", "q=Hallo+Welt&api_key=k", &d), 0);
    ck_assert_int_eq(d.count, 1);
    ck_assert_str_eq(d.q[0], "Hallo Welt");
    ck_assert_str_eq(d.api_key, "k");
    nmt_serve_request_free(&d);
    ck_assert_int_eq(parse(NMT_SERVE_DETECT, NULL, "{\"source\": \"en\"}", &d), -1);
    ck_assert_str_eq(nmt_error(), "Invalid request: missing q parameter");
    nmt_serve_request_free(&d);
    const nmt_serve_detected found[2] = {{"de", 90}, {"en", 4.5}};
    char *json = NULL;
    size_t json_len = 0;
    FILE *json_out = open_memstream(&json, &json_len);
    nmt_serve_detect_write(json_out, found, 2);
    fclose(json_out);
    ck_assert_str_eq(json, "[{\"confidence\":90.0,\"language\":\"de\"},{\"confidence\":4.5,\"language\":\"en\"}]");
    free(json);
    /* OpenNMT-py: the model is the first item's id; native: source and target. */
    ck_assert_int_eq(parse(NMT_SERVE_OPENNMT, NULL, "[{\"src\": \"a\", \"id\": 3}, {\"src\": \"b\", \"id\": 5}]", &d), 0);
    ck_assert_int_eq(d.model, 3);
    nmt_serve_request_free(&d);
    ck_assert_int_eq(parse(NMT_SERVE_OPENNMT, NULL, "[{\"src\": \"a\"}]", &d), 0);
    ck_assert_int_eq(d.model, -1);
    nmt_serve_request_free(&d);
    ck_assert_int_eq(parse(NMT_SERVE_NATIVE, NULL, "{\"q\": \"a\", \"source\": \"de\", \"target\": \"fr\"}", &d), 0);
    ck_assert_str_eq(d.source, "de");
    ck_assert_str_eq(d.target, "fr");
    nmt_serve_request_free(&d);
    a = answer(NMT_SERVE_LIBRE, "{\"q\": \"x\", \"alternatives\": 1}", NULL, NULL);
    ck_assert_str_eq(a, "{\"translatedText\":\"best \\\"one\\\"\\u0009\",\"alternatives\":[\"second\"]}");
    free(a);
    /* Alternatives as LibreTranslate gives them: no repeat of the translation or of each other, no empty
     * one, none for HTML. */
    nmt_serve_request r;
    ck_assert_int_eq(parse(NMT_SERVE_LIBRE, NULL, "{\"q\": \"x\", \"alternatives\": 3}", &r), 0);
    nmt_serve_hypothesis hyps[5] = {{"a", -1, -1}, {"a", -2, -2}, {"", -3, -3}, {"b", -4, -4}, {"b", -5, -5}};
    const nmt_serve_text t = {hyps, 5, NULL, 0, 1, 1, NULL, NULL};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    nmt_serve_response_write(out, &r, &t, NULL, NULL);
    fclose(out);
    ck_assert_str_eq(text, "{\"translatedText\":\"a\",\"alternatives\":[\"b\"]}");
    free(text);
    nmt_serve_request_free(&r);
    ck_assert_int_eq(parse(NMT_SERVE_LIBRE, NULL, "{\"q\": \"x\", \"alternatives\": 3, \"format\": \"html\"}", &r), 0);
    out = open_memstream(&text, &len);
    nmt_serve_response_write(out, &r, &t, NULL, NULL);
    fclose(out);
    ck_assert_str_eq(text, "{\"translatedText\":\"a\",\"alternatives\":[]}");
    free(text);
    nmt_serve_request_free(&r);
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
    out = open_memstream(&text, &len);
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
    tcase_add_test(tc, test_multipart);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_opennmt_and_native);
    tcase_add_test(tc, test_glossary);
    tcase_add_test(tc, test_answers);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
