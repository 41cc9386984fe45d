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
    free(r->filename);
    nmt_serve_glossary_free(&r->glossary);
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

/* A count in [0, max] written as a JSON number. */
static int json_count_field(nmt_json *j, const char *name, long max, long *out, int *seen) {
    if ((*seen)++) return nmt_error_set("%s: given twice", name);
    int64_t v;
    const int c = nmt_json_peek(j);
    if (c < '0' || c > '9') {
        if (strcmp(name, "alternatives") == 0) /* LibreTranslate's words */
            return nmt_json_error(j, "Invalid request: alternatives parameter is not a number");
        return nmt_json_error(j, "%s: expected a non-negative integer", name);
    }
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
                else if (r->api != NMT_SERVE_DETECT && strcmp(key, "source") == 0)
                    rc = json_string_field(j, key, &r->source);
                else if (r->api != NMT_SERVE_DETECT && strcmp(key, "target") == 0)
                    rc = json_string_field(j, key, &r->target);
                else if (r->api == NMT_SERVE_LIBRE && strcmp(key, "format") == 0) rc = json_string_field(j, key, &r->format);
                else if (r->api == NMT_SERVE_LIBRE && strcmp(key, "glossary") == 0)
                    rc = nmt_serve_glossary_json(j, &r->glossary);
                else if (r->api == NMT_SERVE_LIBRE && strcmp(key, "alternatives") == 0)
                    rc = json_count_field(j, key, NMT_SERVE_MAX_ALTERNATIVES, &r->alternatives, &seen_alt);
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
    if (!seen_q) return r->api != NMT_SERVE_NATIVE ? nmt_error_set("Invalid request: missing q parameter") : nmt_error_set("q: missing");
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
                        if (rc == 0 && r->count == 0) r->model = id;
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

/* A form field's value must be text: no NUL byte, valid UTF-8. */
static int check_text(const char *s, size_t n, const char *what) {
    const char *nul = memchr(s, '\0', n);
    if (nul) return nmt_error_set("%s: a NUL byte", what);
    const long bad = nmt_utf8_invalid_at(s, n);
    if (bad >= 0) return nmt_error_set("%s: invalid UTF-8 at byte %ld", what, bad + 1);
    return 0;
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
        out[n++] = (char)c;
    }
    out[n] = '\0';
    if (check_text(out, n, what) < 0) {
        free(out);
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
    const int number = v >= 0 && *end == '\0';
    free(value);
    if (!number) return nmt_error_set("Invalid request: %s parameter is not a number", name);
    if (v > max) return nmt_error_set("Invalid request: %s parameter must be <= %ld", name, max);
    *out = v;
    return 0;
}

/* A form's q with its line breaks as "\n" ("\r\n" and a lone "\r" too), as LibreTranslate's /translate
 * takes a form (browsers send a textarea's line breaks in a form as "\r\n"), so that the translation's
 * line breaks are "\n" as there. Unlike LibreTranslate's str.splitlines, a last line break is kept. */
static void form_line_breaks(char *text) {
    char *to = text;
    for (const char *p = text; *p; p++) {
        const char c = *p; /* read before *to (which may be *p) is written */
        if (c == '\r' && p[1] == '\n') p++;
        *to++ = c == '\r' ? '\n' : c;
    }
    *to = '\0';
}

/* One field of a LibreTranslate form (it takes the value); `filename`: the part was a file. */
static int form_field(nmt_serve_request *r, const char *key, char *value, const char *filename, int *seen_alt) {
    const int file = r->api == NMT_SERVE_FILE;
    if (file && strcmp(key, "file") == 0) {
        if (r->count) {
            free(value);
            return nmt_error_set("file: given twice");
        }
        if (!filename) {
            free(value);
            return nmt_error_set("file: expected a file (a part with a filename)");
        }
        if (!(r->filename = nmt_strdup(filename))) {
            free(value);
            return -1;
        }
        return add_text(r, value);
    }
    if (!file && strcmp(key, "q") == 0) {
        if (r->count) return free(value), nmt_error_set("q: given twice");
        form_line_breaks(value);
        return add_text(r, value);
    }
    if (strcmp(key, "source") == 0) return form_string(key, value, &r->source);
    if (strcmp(key, "target") == 0) return form_string(key, value, &r->target);
    if (strcmp(key, "api_key") == 0) return form_string(key, value, &r->api_key);
    if (!file && strcmp(key, "format") == 0) return form_string(key, value, &r->format);
    if (strcmp(key, "glossary") == 0) {
        const int rc = nmt_serve_glossary_text(value, strlen(value), &r->glossary);
        free(value);
        return rc;
    }
    if (!file && strcmp(key, "alternatives") == 0)
        return (*seen_alt)++ ? (free(value), nmt_error_set("alternatives: given twice"))
                             : form_count(key, value, NMT_SERVE_MAX_ALTERNATIVES, &r->alternatives);
    free(value);
    return 0;
}

/* After the last field: q (or the file) is required. */
static int form_end(const nmt_serve_request *r) {
    if (r->count == 0)
        return nmt_error_set("Invalid request: missing %s parameter", r->api == NMT_SERVE_FILE ? "file" : "q");
    return 0;
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
        const int rc = form_field(r, key, value, NULL, &seen_alt);
        free(key);
        if (rc < 0) return -1;
    }
    return form_end(r);
}

/* The first occurrence of needle[0, n) in s[0, len), or NULL. */
static const char *find(const char *s, size_t len, const char *needle, size_t n) {
    for (const char *p = s; n <= len && (p = memchr(p, needle[0], len - n + 1 - (size_t)(p - s))); p++)
        if (memcmp(p, needle, n) == 0) return p;
    return NULL;
}

/* The value of parameter `name` (name="value" or name=value) in a header's parameters text[0, len),
 * copied into out[size]; 0, or -1 when absent or too long. */
static int header_param(const char *text, size_t len, const char *name, char *out, size_t size) {
    const size_t n = strlen(name);
    for (size_t at = 0; at < len; at++) {
        if (at && text[at - 1] != ';' && text[at - 1] != ' ' && text[at - 1] != '\t') continue;
        if (len - at <= n || strncasecmp(text + at, name, n) != 0 || text[at + n] != '=') continue;
        const char *v = text + at + n + 1, *end = text + len;
        const int quoted = v < end && *v == '"';
        if (quoted) v++;
        size_t k = 0;
        while (v + k < end && (quoted ? v[k] != '"' : v[k] != ';' && v[k] != ' ' && v[k] != '\r')) k++;
        if (k >= size) return -1;
        memcpy(out, v, k);
        out[k] = '\0';
        return 0;
    }
    return -1;
}

/* multipart/form-data (RFC 7578): parts separated by "--boundary" lines, each with a
 * Content-Disposition header naming its field (and a filename for a file), the value after a blank
 * line. Each value must be text (check_text). */
static int multipart_body(const char *content_type, const char *body, size_t len, nmt_serve_request *r) {
    char delim[2 + 70 + 3] = "\r\n--";  /* RFC 2046: a boundary has 1 to 70 characters */
    const char *semi = strchr(content_type, ';');
    if (!semi || header_param(semi + 1, strlen(semi + 1), "boundary", delim + 4, 71) < 0 || !delim[4])
        return nmt_error_set("Content-Type: multipart/form-data without a boundary of 1 to 70 characters");
    const size_t dn = strlen(delim);
    /* The first delimiter may open the body (no CRLF before it) or follow a preamble. */
    const char *at = len >= dn - 2 && memcmp(body, delim + 2, dn - 2) == 0 ? body + dn - 2 : NULL;
    if (!at && (at = find(body, len, delim, dn))) at += dn;
    if (!at) return nmt_error_set("body: no multipart boundary");
    const char *end = body + len;
    int parts = 0, seen_alt = 0;
    for (;;) {
        if (end - at >= 2 && at[0] == '-' && at[1] == '-') break; /* the closing delimiter */
        if (end - at < 2 || at[0] != '\r' || at[1] != '\n')
            return nmt_error_set("body: a multipart boundary not followed by a line end at byte %zu", (size_t)(at - body) + 1);
        if (++parts > NMT_SERVE_MAX_PARTS) return nmt_error_set("body: more than %d multipart parts", NMT_SERVE_MAX_PARTS);
        const char *head = at + 2, *blank = find(at, (size_t)(end - at), "\r\n\r\n", 4);
        if (!blank) return nmt_error_set("body: part %d has no blank line after its headers", parts);
        char name[128] = "", filename[256] = "";
        int named = 0, has_file = 0;
        for (const char *line = head; line < blank + 2;) {
            const char *eol = find(line, (size_t)(blank + 2 - line), "\r\n", 2);
            static const char cd[] = "Content-Disposition:";
            if ((size_t)(eol - line) > sizeof cd - 1 && strncasecmp(line, cd, sizeof cd - 1) == 0) {
                const char *p = line + sizeof cd - 1;
                named = header_param(p, (size_t)(eol - p), "name", name, sizeof name) == 0;
                has_file = header_param(p, (size_t)(eol - p), "filename", filename, sizeof filename) == 0;
            }
            line = eol + 2;
        }
        if (!named) return nmt_error_set("body: part %d has no Content-Disposition name (of at most 127 bytes)", parts);
        /* The name is checked before any message quotes it. */
        if (check_text(name, strlen(name), "a part's name") < 0 ||
            (has_file && check_text(filename, strlen(filename), "filename") < 0))
            return -1;
        const char *value = blank + 4, *next = find(value, (size_t)(end - value), delim, dn);
        if (!next) return nmt_error_set("%s: the part does not end with the boundary", name);
        const size_t n = (size_t)(next - value);
        const int file = r->api == NMT_SERVE_FILE && has_file && strcmp(name, "file") == 0;
        if (!file && check_text(value, n, name) < 0) return -1; /* a file is checked by its format */
        if (file) r->file_len = n;
        char *copy = nmt_malloc(n + 1);
        if (!copy) return -1;
        memcpy(copy, value, n);
        copy[n] = '\0';
        if (form_field(r, name, copy, has_file ? filename : NULL, &seen_alt) < 0) return -1;
        at = next + dn;
    }
    return form_end(r);
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
    out->model = -1;
    const int multipart = content_type && media_type_is(content_type, "multipart/form-data");
    if (api == NMT_SERVE_FILE && !multipart)
        return nmt_error_set("Content-Type: expected multipart/form-data with a file, got %.64s",
                             content_type ? content_type : "none");
    int rc;
    if ((api == NMT_SERVE_LIBRE || api == NMT_SERVE_FILE || api == NMT_SERVE_DETECT) && multipart)
        rc = multipart_body(content_type, body, len, out);
    else if ((api == NMT_SERVE_LIBRE || api == NMT_SERVE_DETECT) && content_type &&
             media_type_is(content_type, "application/x-www-form-urlencoded"))
        rc = form_body(body, len, out);
    else {
        nmt_json j;
        if (nmt_json_init(&j, body, len, "body", "JSON", 0, 0) < 0) return -1;
        if (nmt_json_peek(&j) == -1) return nmt_error_set("empty body: expected JSON");
        rc = api == NMT_SERVE_OPENNMT ? json_opennmt(&j, out) : json_object(&j, out);
        if (rc == 0) rc = nmt_json_end(&j);
    }
    if (rc < 0) return -1;
    /* LibreTranslate refuses a q that is empty (its `if not q`): "", [] */
    if ((api == NMT_SERVE_LIBRE || api == NMT_SERVE_DETECT) && (out->count == 0 || (!out->q_list && !out->q[0][0])))
        return nmt_error_set("Invalid request: missing q parameter");
    return 0;
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

/* LibreTranslate's alternatives of a text: its other hypotheses, best first, without the empty ones,
 * the translation itself or repeats, at most r->alternatives; none for HTML (as LibreTranslate). */
static void write_alternatives(FILE *out, const nmt_serve_request *r, const nmt_serve_text *t) {
    if (r->format && strcmp(r->format, "html") == 0) return;
    long written = 0;
    for (int k = 1; k < t->count && written < r->alternatives; k++) {
        int repeat = !t->hyps[k].text[0];
        for (int e = 0; e < k && !repeat; e++) repeat = strcmp(t->hyps[k].text, t->hyps[e].text) == 0;
        if (repeat) continue;
        if (written++) fputc(',', out);
        nmt_json_write_string(out, t->hyps[k].text);
    }
}

/* x as Python writes a float, which LibreTranslate's confidences are: "90.0", never "90". */
static void write_float(FILE *out, double x) {
    if (!(x == x && x - x == 0)) return write_number(out, x);
    char text[40];
    snprintf(text, sizeof text, "%.17g", x);
    fputs(text, out);
    if (!strpbrk(text, ".e")) fputs(".0", out);
}

/* One {"confidence", "language"} object. */
static void write_detected(FILE *out, const nmt_serve_detected *d) {
    fputs("{\"confidence\":", out);
    write_float(out, d->confidence);
    fputs(",\"language\":", out);
    nmt_json_write_string(out, d->language);
    fputc('}', out);
}

static void write_libre(FILE *out, const nmt_serve_request *r, const nmt_serve_text *texts,
                        const nmt_serve_detected *detected) {
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
            write_alternatives(out, r, &texts[i]);
            fputc(']', out);
        }
        if (r->q_list) fputc(']', out);
    }
    if (detected) {
        fputs(",\"detectedLanguage\":", out);
        if (r->q_list) fputc('[', out);
        for (int i = 0; i < (r->q_list ? r->count : 1); i++) {
            if (i) fputc(',', out);
            write_detected(out, detected);
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
                              const char *alignment_map, const nmt_serve_detected *detected) {
    switch (r->api) {
    case NMT_SERVE_DETECT: break;
    case NMT_SERVE_LIBRE:
    case NMT_SERVE_FILE: write_libre(out, r, texts, detected); break;
    case NMT_SERVE_OPENNMT: write_opennmt(out, r, texts); break;
    case NMT_SERVE_NATIVE: write_native(out, r, texts, alignment_map); break;
    }
}

void nmt_serve_detect_write(FILE *out, const nmt_serve_detected *guesses, int n) {
    fputc('[', out);
    for (int i = 0; i < n; i++) {
        if (i) fputc(',', out);
        write_detected(out, &guesses[i]);
    }
    fputc(']', out);
}

void nmt_serve_error_write(FILE *out, const char *message) {
    fputs("{\"error\":", out);
    nmt_json_write_string(out, message);
    fputc('}', out);
}
