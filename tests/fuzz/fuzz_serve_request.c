/* fuzz_serve_request: the server's request parsing (nmt_serve_request_parse) and answer writing on
 * arbitrary bytes.
 *
 * Input: the first byte picks the API (LibreTranslate, OpenNMT-py, native) and the Content-Type
 * (JSON, none, form-encoded), or from 240 on a multipart body (boundary "b") for LibreTranslate's
 * /translate or /translate_file; the rest is the body. Properties besides "never crashes, never leaks":
 *   - a refused body comes with a message, and freeing the request leaves it empty;
 *   - an accepted body has 0..NMT_SERVE_MAX_TEXTS texts, each valid UTF-8 without NUL, and a q list
 *     unless it holds exactly one text (or is OpenNMT's);
 *   - the answer to an accepted request, with every text echoed as its own translation, is strict
 *     JSON (it reads back with the project's reader), and so is the error object of a refused one.
 */
#include "base/json.h"
#include "base/utf8.h"
#include "fuzz.h"
#include "serve/request.h"

static void check_json(const char *text, size_t len, const char *what) {
    nmt_json j;
    FUZZ_CHECK(nmt_json_init(&j, text, len, "answer", "JSON", 0, 0) == 0, "%s: %s", what, nmt_error());
    FUZZ_CHECK(nmt_json_skip_value(&j) == 0 && nmt_json_end(&j) == 0, "%s is not JSON: %s (%.200s)", what, nmt_error(),
               text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    static const nmt_serve_api apis[3] = {NMT_SERVE_LIBRE, NMT_SERVE_OPENNMT, NMT_SERVE_NATIVE};
    static const char *const types[3] = {"application/json", NULL, "application/x-www-form-urlencoded"};
    const int multipart = data[0] >= 240;
    const nmt_serve_api api = multipart ? (data[0] & 1 ? NMT_SERVE_FILE : NMT_SERVE_LIBRE) : apis[data[0] % 3];
    const char *type = multipart ? "multipart/form-data; boundary=b" : types[(data[0] / 3) % 3];
    const char *body = (const char *)data + 1;
    const size_t len = size - 1;
    nmt_serve_request r;
    char *text = NULL;
    size_t text_len = 0;
    FILE *out = open_memstream(&text, &text_len);
    FUZZ_CHECK(out != NULL, "open_memstream");
    if (nmt_serve_request_parse(api, type, body, len, &r) < 0) {
        FUZZ_CHECK(nmt_error()[0] != '\0', "a refusal without a message");
        nmt_serve_request_free(&r);
        FUZZ_CHECK(r.count == 0 && !r.q, "freed request not empty");
        nmt_serve_error_write(out, nmt_error());
        FUZZ_CHECK(fclose(out) == 0, "fclose");
        check_json(text, text_len, "the error");
        free(text);
        return 0;
    }
    FUZZ_CHECK(r.count >= 0 && r.count <= NMT_SERVE_MAX_TEXTS, "%d texts", r.count);
    FUZZ_CHECK(r.q_list || r.count == 1, "a single text must be %d", r.count);
    FUZZ_CHECK((api == NMT_SERVE_FILE) == (r.filename != NULL), "a file's name, and only a file's");
    nmt_serve_text *texts = calloc((size_t)r.count + 1, sizeof *texts);
    nmt_serve_hypothesis *hyps = calloc((size_t)r.count + 1, sizeof *hyps);
    FUZZ_CHECK(texts && hyps, "calloc");
    for (int i = 0; i < r.count; i++) {
        const size_t n = strlen(r.q[i]);
        FUZZ_CHECK(nmt_utf8_invalid_at(r.q[i], n) < 0, "text %d is not UTF-8", i);
        hyps[i] = (nmt_serve_hypothesis){r.q[i], -1.0 * i, -2.0 * i};
        texts[i] = (nmt_serve_text){&hyps[i], 1, NULL, 0, 0, 0, NULL, NULL};
    }
    const nmt_serve_detected detected = {.language = r.source, .confidence = 12.5};
    nmt_serve_response_write(out, &r, texts, r.count ? r.q[0] : NULL, r.source ? &detected : NULL);
    FUZZ_CHECK(fclose(out) == 0, "fclose");
    check_json(text, text_len, "the answer");
    free(text);
    free(texts);
    free(hyps);
    nmt_serve_request_free(&r);
    return 0;
}
