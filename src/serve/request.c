/* request: strict parsing of the server's request bodies (JSON and form-encoded) and the JSON of its
 * answers; see request.h for the three shapes. */
#include "serve/request.h"

#include "base/json.h"
#include "base/utf8.h"
#include "base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void nmt_serve_request_free(nmt_serve_request *r) {
    for (int i = 0; i < r->count; i++) free(r->q[i]);
    free(r->q);
    free(r->source);
    free(r->target);
    free(r->format);
    free(r->api_key);
    memset(r, 0, sizeof *r);
}

/* Appends a text to r->q (it takes the string). */
static int add_text(nmt_serve_request *r, char *text) {
    if (r->count >= NMT_SERVE_MAX_TEXTS) {
        free(text);
        return nmt_error_set("q: more than %d texts", NMT_SERVE_MAX_TEXTS);
    }
    char **q = nmt_realloc(r->q, ((size_t)r->count + 1) * sizeof *q);
    if (!q) {
        free(text);
        return -1;
    }
    r->q = q;
    r->q[r->count++] = text;
    return 0;
}

/* A JSON string into a field that must not be set yet. */
static int json_string_field(nmt_json *j, const char *name, char **field) {
    if (*field) return nmt_error_set("%s: given twice", name);
    if (nmt_json_peek(j) != '"') return nmt_json_error(j, "%s: expected a string", name);
    return nmt_json_string(j, field);
}

/* q: a string, or a list of strings. */
static int json_q(nmt_json *j, nmt_serve_request *r, int *seen) {
    if ((*seen)++) return nmt_error_set("q: given twice");
    char *text;
    if (nmt_json_peek(j) == '"') {
        if (nmt_json_string(j, &text) < 0) return -1;
        return add_text(r, text);
    }
    if (!nmt_json_accept(j, '[')) return nmt_json_error(j, "q: expected a string or a list of strings");
    r->q_list = 1;
    if (nmt_json_accept(j, ']')) return 0;
    do {
        if (nmt_json_peek(j) != '"') return nmt_json_error(j, "q: expected a list of strings");
        if (nmt_json_string(j, &text) < 0 || add_text(r, text) < 0) return -1;
    } while (nmt_json_accept(j, ','));
    return nmt_json_expect(j, ']');
}

/* A count in [0, max]; integers written as JSON numbers, or as strings of digits (form fields). */
static int json_count_field(nmt_json *j, const char *name, long max, long *out, int *seen) {
    if ((*seen)++) return nmt_error_set("%s: given twice", name);
    int64_t v;
    const int c = nmt_json_peek(j);
    if (c < '0' || c > '9') return nmt_json_error(j, "%s: expected a non-negative integer", name);
    if (nmt_json_count(j, &v) < 0) return -1;
    if (v > max) return nmt_error_set("%s: %lld is more than %ld", name, (long long)v, max);
    *out = (long)v;
    return 0;
}

static int json_bool_field(nmt_json *j, const char *name, int *out, int *seen) {
    if ((*seen)++) return nmt_error_set("%s: given twice", name);
    if (nmt_json_accept_word(j, "true")) *out = 1;
    else if (nmt_json_accept_word(j, "false")) *out = 0;
    else return nmt_json_error(j, "%s: expected true or false", name);
    return 0;
}

/* LibreTranslate's and the native object. */
static int json_object(nmt_json *j, nmt_serve_request *r) {
    int seen_q = 0, seen_alt = 0, seen_n = 0, seen_align = 0, seen_map = 0;
    if (nmt_json_expect(j, '{') < 0) return -1;
    if (!nmt_json_accept(j, '}')) do {
            char *key;
            if (nmt_json_peek(j) != '"') return nmt_json_error(j, "expected a field name");
            if (nmt_json_string(j, &key) < 0) return -1;
            int rc = nmt_json_expect(j, ':');
            if (rc == 0) {
                if (strcmp(key, "q") == 0) rc = json_q(j, r, &seen_q);
                else if (strcmp(key, "api_key") == 0) rc = json_string_field(j, key, &r->api_key);
                else if (r->api == NMT_SERVE_LIBRE && strcmp(key, "source") == 0) rc = json_string_field(j, key, &r->source);
                else if (r->api == NMT_SERVE_LIBRE && strcmp(key, "target") == 0) rc = json_string_field(j, key, &r->target);
                else if (r->api == NMT_SERVE_LIBRE && strcmp(key, "format") == 0) rc = json_string_field(j, key, &r->format);
                else if (r->api == NMT_SERVE_LIBRE && strcmp(key, "alternatives") == 0)
                    rc = json_count_field(j, key, 100, &r->alternatives, &seen_alt);
                else if (r->api == NMT_SERVE_NATIVE && strcmp(key, "n_best") == 0)
                    rc = json_count_field(j, key, 100, &r->n_best, &seen_n);
                else if (r->api == NMT_SERVE_NATIVE && strcmp(key, "alignment") == 0)
                    rc = json_bool_field(j, key, &r->alignment, &seen_align);
                else if (r->api == NMT_SERVE_NATIVE && strcmp(key, "alignment_map") == 0)
                    rc = json_bool_field(j, key, &r->alignment_map, &seen_map);
                else rc = nmt_json_skip_value(j);
            }
            free(key);
            if (rc < 0) return -1;
        } while (nmt_json_accept(j, ','));
    if (nmt_json_expect(j, '}') < 0) return -1;
    if (!seen_q) return nmt_error_set("q: missing");
    return 0;
}

/* OpenNMT-py's list of {"src": string, "id": integer}. */
static int json_opennmt(nmt_json *j, nmt_serve_request *r) {
    r->q_list = 1;
    if (nmt_json_peek(j) != '[') return nmt_json_error(j, "expected a list of {\"src\": ..., \"id\": ...} objects");
    nmt_json_expect(j, '[');
    if (nmt_json_accept(j, ']')) return 0;
    do {
        char *src = NULL;
        int seen_id = 0;
        if (nmt_json_peek(j) != '{') return nmt_json_error(j, "expected an object {\"src\": ..., \"id\": ...}");
        nmt_json_expect(j, '{');
        int rc = 0;
        if (!nmt_json_accept(j, '}')) do {
                char *key;
                if (nmt_json_peek(j) != '"') rc = nmt_json_error(j, "expected a field name");
                else if ((rc = nmt_json_string(j, &key)) == 0) {
                    rc = nmt_json_expect(j, ':');
                    if (rc == 0 && strcmp(key, "src") == 0) rc = json_string_field(j, "src", &src);
                    else if (rc == 0 && strcmp(key, "id") == 0) {
                        long id;
                        rc = json_count_field(j, "id", INT32_MAX, &id, &seen_id);
                    } else if (rc == 0) rc = nmt_json_skip_value(j);
                    free(key);
                }
            } while (rc == 0 && nmt_json_accept(j, ','));
        if (rc == 0) rc = nmt_json_expect(j, '}');
        if (rc == 0 && !src) rc = nmt_error_set("src: missing in item %d", r->count + 1);
        if (rc < 0) {
            free(src);
            return -1;
        }
        if (add_text(r, src) < 0) return -1;
    } while (nmt_json_accept(j, ','));
    return nmt_json_expect(j, ']');
}

static int hex_digit(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Percent-decodes s[0, len) ('+' is a space) into a new string; refuses bad escapes, NUL bytes and
 * invalid UTF-8. */
static char *form_decode(const char *s, size_t len, const char *what) {
    char *out = nmt_malloc(len + 1);
    if (!out) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        int c = (unsigned char)s[i];
        if (c == '+') c = ' ';
        else if (c == '%') {
            if (i + 2 >= len || hex_digit(s[i + 1]) < 0 || hex_digit(s[i + 2]) < 0) {
                free(out);
                nmt_error_set("%s: bad percent escape at byte %zu", what, i + 1);
                return NULL;
            }
            c = hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]);
            i += 2;
        }
        if (c == 0) {
            free(out);
            nmt_error_set("%s: a NUL byte", what);
            return NULL;
        }
        out[n++] = (char)c;
    }
    out[n] = '\0';
    const long bad = nmt_utf8_invalid_at(out, n);
    if (bad >= 0) {
        free(out);
        nmt_error_set("%s: invalid UTF-8 at byte %ld", what, bad + 1);
        return NULL;
    }
    return out;
}

/* One form field into a string field that must not be set yet. */
static int form_string(const char *name, char *value, char **field) {
    if (*field) {
        free(value);
        return nmt_error_set("%s: given twice", name);
    }
    *field = value;
    return 0;
}

static int form_count(const char *name, char *value, long max, long *out) {
    char *end;
    const long v = value[0] >= '0' && value[0] <= '9' ? strtol(value, &end, 10) : -1;
    const int ok = v >= 0 && *end == '\0' && v <= max;
    free(value);
    return ok ? (*out = v, 0) : nmt_error_set("%s: expected an integer from 0 to %ld", name, max);
}

/* application/x-www-form-urlencoded LibreTranslate fields. */
static int form_body(const char *body, size_t len, nmt_serve_request *r) {
    int seen_alt = 0;
    for (size_t at = 0; at < len;) {
        const char *field = body + at, *amp = memchr(field, '&', len - at);
        const size_t n = amp ? (size_t)(amp - field) : len - at;
        at += n + 1;
        if (n == 0) continue;
        const char *eq = memchr(field, '=', n);
        const size_t key_len = eq ? (size_t)(eq - field) : n;
        char *key = form_decode(field, key_len, "field name");
        if (!key) return -1;
        char *value = form_decode(eq ? eq + 1 : field + n, eq ? n - key_len - 1 : 0, key);
        if (!value) {
            free(key);
            return -1;
        }
        int rc = 0;
        if (strcmp(key, "q") == 0) rc = r->count ? (free(value), nmt_error_set("q: given twice")) : add_text(r, value);
        else if (strcmp(key, "source") == 0) rc = form_string(key, value, &r->source);
        else if (strcmp(key, "target") == 0) rc = form_string(key, value, &r->target);
        else if (strcmp(key, "format") == 0) rc = form_string(key, value, &r->format);
        else if (strcmp(key, "api_key") == 0) rc = form_string(key, value, &r->api_key);
        else if (strcmp(key, "alternatives") == 0)
            rc = seen_alt++ ? (free(value), nmt_error_set("alternatives: given twice"))
                            : form_count(key, value, 100, &r->alternatives);
        else free(value);
        free(key);
        if (rc < 0) return -1;
    }
    if (r->count == 0) return nmt_error_set("q: missing");
    return 0;
}

/* Whether the media type of a Content-Type header (before any ';') is `type`. */
static int media_type_is(const char *content_type, const char *type) {
    const size_t n = strlen(type);
    if (strncasecmp(content_type, type, n) != 0) return 0;
    const char c = content_type[n];
    return c == '\0' || c == ';' || c == ' ' || c == '\t';
}

int nmt_serve_request_parse(nmt_serve_api api, const char *content_type, const char *body, size_t len,
                            nmt_serve_request *out) {
    memset(out, 0, sizeof *out);
    out->api = api;
    out->n_best = 1;
    if (api == NMT_SERVE_LIBRE && content_type && media_type_is(content_type, "application/x-www-form-urlencoded"))
        return form_body(body, len, out);
    nmt_json j;
    if (nmt_json_init(&j, body, len, "body", "JSON", 0, 0) < 0) return -1;
    if (nmt_json_peek(&j) == -1) return nmt_error_set("empty body: expected JSON");
    const int rc = api == NMT_SERVE_OPENNMT ? json_opennmt(&j, out) : json_object(&j, out);
    if (rc < 0) return -1;
    return nmt_json_end(&j);
}

/* Writes pairs as OpenNMT's "i-j i-j" string (null without alignment). */
static void write_align_string(FILE *out, const nmt_serve_text *t) {
    if (!t->pairs) {
        fputs("null", out);
        return;
    }
    fputc('"', out);
    for (int p = 0; p < t->pair_count; p++) fprintf(out, "%s%d-%d", p ? " " : "", t->pairs[2 * p], t->pairs[2 * p + 1]);
    fputc('"', out);
}

/* A double as JSON (non-finite scores cannot be JSON numbers: null). */
static void write_number(FILE *out, double x) {
    if (x == x && x - x == 0) fprintf(out, "%.17g", x);
    else fputs("null", out);
}

static void write_libre(FILE *out, const nmt_serve_request *r, const nmt_serve_text *texts, const char *source) {
    fputs("{\"translatedText\":", out);
    if (r->q_list) fputc('[', out);
    for (int i = 0; i < r->count; i++) {
        if (i) fputc(',', out);
        nmt_json_write_string(out, texts[i].hyps[0].text);
    }
    if (r->q_list) fputc(']', out);
    if (r->alternatives > 0) {
        fputs(",\"alternatives\":", out);
        if (r->q_list) fputc('[', out);
        for (int i = 0; i < r->count; i++) {
            fputs(i ? ",[" : "[", out);
            for (int k = 1; k < texts[i].count && k <= r->alternatives; k++) {
                if (k > 1) fputc(',', out);
                nmt_json_write_string(out, texts[i].hyps[k].text);
            }
            fputc(']', out);
        }
        if (r->q_list) fputc(']', out);
    }
    if (source) {
        fputs(",\"detectedLanguage\":", out);
        if (r->q_list) fputc('[', out);
        for (int i = 0; i < (r->q_list ? r->count : 1); i++) {
            fprintf(out, "%s{\"confidence\":100,\"language\":", i ? "," : "");
            nmt_json_write_string(out, source);
            fputc('}', out);
        }
        if (r->q_list) fputc(']', out);
    }
    fputc('}', out);
}

static void write_opennmt(FILE *out, const nmt_serve_request *r, const nmt_serve_text *texts) {
    fputs("[[", out);
    for (int i = 0; i < r->count; i++) {
        fputs(i ? ",{\"src\":" : "{\"src\":", out);
        nmt_json_write_string(out, r->q[i]);
        fputs(",\"tgt\":", out);
        nmt_json_write_string(out, texts[i].hyps[0].text);
        fputs(",\"n_best\":1,\"pred_score\":", out);
        write_number(out, texts[i].hyps[0].logprob);
        fputs(",\"align\":", out);
        write_align_string(out, &texts[i]);
        fputc('}', out);
    }
    fputs("]]", out);
}

static void write_native(FILE *out, const nmt_serve_request *r, const nmt_serve_text *texts, const char *map) {
    fputs("{\"translations\":[", out);
    for (int i = 0; i < r->count; i++) {
        const nmt_serve_text *t = &texts[i];
        fputs(i ? ",{\"source\":" : "{\"source\":", out);
        nmt_json_write_string(out, r->q[i]);
        fputs(",\"translation\":", out);
        nmt_json_write_string(out, t->hyps[0].text);
        fputs(",\"n_best\":[", out);
        for (int k = 0; k < t->count && k < r->n_best; k++) {
            fputs(k ? ",{\"text\":" : "{\"text\":", out);
            nmt_json_write_string(out, t->hyps[k].text);
            fputs(",\"score\":", out);
            write_number(out, t->hyps[k].score);
            fputs(",\"logprob\":", out);
            write_number(out, t->hyps[k].logprob);
            fputc('}', out);
        }
        fputc(']', out);
        if (r->alignment && t->pairs) {
            fputs(",\"alignment\":[", out);
            for (int p = 0; p < t->pair_count; p++)
                fprintf(out, "%s[%d,%d]", p ? "," : "", t->pairs[2 * p], t->pairs[2 * p + 1]);
            fputc(']', out);
        }
        fputc('}', out);
    }
    fputc(']', out);
    if (map) {
        fputs(",\"alignment_map\":", out);
        nmt_json_write_string(out, map);
    }
    fputc('}', out);
}

void nmt_serve_response_write(FILE *out, const nmt_serve_request *r, const nmt_serve_text *texts,
                              const char *alignment_map, const char *source) {
    switch (r->api) {
    case NMT_SERVE_LIBRE: write_libre(out, r, texts, source); break;
    case NMT_SERVE_OPENNMT: write_opennmt(out, r, texts); break;
    case NMT_SERVE_NATIVE: write_native(out, r, texts, alignment_map); break;
    }
}

void nmt_serve_error_write(FILE *out, const char *message) {
    fputs("{\"error\":", out);
    nmt_json_write_string(out, message);
    fputc('}', out);
}
