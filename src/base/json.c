/* json: the strict pull reader of json.h (RFC 8259) and the string writer. */
#include "base/json.h"
#include "base/utf8.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int nmt_json_init(nmt_json *j, const char *text, size_t len, const char *name, const char *what, long line,
                  size_t offset) {
    *j = (nmt_json){.text = text, .len = len, .name = name, .what = what, .line = line, .offset = offset};
    long bad = nmt_utf8_invalid_at(text, len);
    if (bad < 0) return 0;
    j->pos = (size_t)bad;
    return nmt_json_error(j, "invalid UTF-8");
}

int nmt_json_error(const nmt_json *j, const char *fmt, ...) {
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    if (j->line > 0) return nmt_error_set("%s:%ld:%zu: bad %s: %s", j->name, j->line, j->pos + 1, j->what, message);
    return nmt_error_set("%s: bad %s at byte %zu: %s", j->name, j->what, j->offset + j->pos, message);
}

static int peek(const nmt_json *j) { return j->pos < j->len ? (unsigned char)j->text[j->pos] : EOF; }

static void skip_space(nmt_json *j) {
    for (int c = peek(j); c == ' ' || c == '\t' || c == '\n' || c == '\r'; c = peek(j)) j->pos++;
}

int nmt_json_peek(nmt_json *j) {
    skip_space(j);
    return peek(j);
}

int nmt_json_accept(nmt_json *j, char c) {
    skip_space(j);
    if (peek(j) != (unsigned char)c) return 0;
    j->pos++;
    return 1;
}

int nmt_json_expect(nmt_json *j, char c) {
    if (nmt_json_accept(j, c)) return 0;
    int found = peek(j);
    if (found == EOF) return nmt_json_error(j, "expected '%c', found the end of the input", c);
    if (found < 0x20 || found >= 0x80) return nmt_json_error(j, "expected '%c', found byte 0x%02x", c, found);
    return nmt_json_error(j, "expected '%c', found '%c'", c, found);
}

int nmt_json_accept_word(nmt_json *j, const char *word) {
    skip_space(j);
    size_t n = strlen(word);
    if (j->len - j->pos < n || memcmp(j->text + j->pos, word, n) != 0) return 0;
    j->pos += n;
    return 1;
}

static int hex4(const nmt_json *j, size_t at, unsigned *out) {
    *out = 0;
    for (size_t i = at; i < at + 4; i++) {
        char c = i < j->len ? j->text[i] : '\0';
        unsigned digit = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                         : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                         : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
        if (digit == 16) return -1;
        *out = *out * 16 + digit;
    }
    return 0;
}

/* The position of the closing quote of the string that opens at j->pos (len if there is none). */
static size_t string_end(const nmt_json *j) {
    size_t end = j->pos + 1;
    while (end < j->len && j->text[end] != '"') end += j->text[end] == '\\' ? 2 : 1;
    return end;
}

/* Reads the string from its opening quote at j->pos to its closing quote at `end`, checking every
 * escape; writes the unescaped bytes and a NUL to `out` unless it is NULL (end - j->pos bytes always
 * suffice: no escape is shorter than what it stands for). */
static int decode_string(nmt_json *j, size_t end, char *out) {
    j->pos++;
    while (j->pos < end) {
        unsigned char c = (unsigned char)j->text[j->pos];
        if (c < 0x20) return nmt_json_error(j, "control character 0x%02x in a string", c);
        if (c != '\\') {
            if (out) *out++ = (char)c;
            j->pos++;
            continue;
        }
        char e = j->text[j->pos + 1];
        const char *simple = e ? strchr("\"\\/bfnrt", e) : NULL;
        if (simple) {
            if (out) *out++ = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
            j->pos += 2;
            continue;
        }
        unsigned cp, low;
        if (e != 'u' || hex4(j, j->pos + 2, &cp) < 0) return nmt_json_error(j, "bad escape in a string");
        size_t at = j->pos;
        j->pos += 6;
        if (cp >= 0xdc00 && cp <= 0xdfff) cp = 0; /* a lone low surrogate */
        if (cp >= 0xd800 && cp <= 0xdbff) {
            if (j->pos + 6 <= end && j->text[j->pos] == '\\' && j->text[j->pos + 1] == 'u' &&
                hex4(j, j->pos + 2, &low) == 0 && low >= 0xdc00 && low <= 0xdfff) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                j->pos += 6;
            } else {
                cp = 0;
            }
        }
        if (cp == 0) {
            j->pos = at;
            return nmt_json_error(j, "a string holds \\u0000 or an unpaired surrogate");
        }
        if (out) out += nmt_utf8_encode(cp, out);
    }
    if (out) *out = '\0';
    j->pos = end + 1;
    return 0;
}

/* Skips whitespace and checks that a string starts here and ends before the end of the text. */
static int string_start(nmt_json *j, size_t *end) {
    skip_space(j);
    if (peek(j) != '"') return nmt_json_error(j, "expected a string");
    *end = string_end(j);
    if (*end >= j->len) return nmt_json_error(j, "unterminated string");
    return 0;
}

int nmt_json_string(nmt_json *j, char **out) {
    *out = NULL;
    size_t end = 0;
    if (string_start(j, &end) < 0) return -1;
    char *s = nmt_malloc(end - j->pos);
    if (!s) return -1;
    if (decode_string(j, end, s) < 0) {
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

int nmt_json_count(nmt_json *j, int64_t *out) {
    skip_space(j);
    size_t start = j->pos;
    uint64_t v = 0;
    for (int c = peek(j); c >= '0' && c <= '9'; c = peek(j)) {
        unsigned digit = (unsigned)(c - '0');
        if (v > ((uint64_t)INT64_MAX - digit) / 10) return nmt_json_error(j, "number too large");
        v = v * 10 + digit;
        j->pos++;
    }
    if (j->pos == start) return nmt_json_error(j, "expected a non-negative integer");
    if (j->pos - start > 1 && j->text[start] == '0') return nmt_json_error(j, "a number with a leading zero");
    int c = peek(j);
    if (c == '.' || c == 'e' || c == 'E') return nmt_json_error(j, "expected an integer, found a fraction or exponent");
    *out = (int64_t)v;
    return 0;
}

/* Consumes digits; returns how many. */
static size_t digits(nmt_json *j) {
    size_t start = j->pos;
    for (int c = peek(j); c >= '0' && c <= '9'; c = peek(j)) j->pos++;
    return j->pos - start;
}

int nmt_json_number(nmt_json *j, double *out) {
    skip_space(j);
    size_t start = j->pos;
    if (peek(j) == '-') j->pos++;
    int first = peek(j);
    size_t whole = digits(j);
    if (whole == 0) {
        j->pos = start;
        return nmt_json_error(j, "expected a number");
    }
    if (first == '0' && whole > 1) {
        j->pos = start;
        return nmt_json_error(j, "a number with a leading zero");
    }
    if (peek(j) == '.') {
        j->pos++;
        if (digits(j) == 0) return nmt_json_error(j, "expected a digit after the decimal point");
    }
    if (peek(j) == 'e' || peek(j) == 'E') {
        j->pos++;
        if (peek(j) == '+' || peek(j) == '-') j->pos++;
        if (digits(j) == 0) return nmt_json_error(j, "expected a digit in the exponent");
    }
    /* The grammar is JSON's, so strtod (C locale) reads exactly these characters. */
    char number[128];
    size_t n = j->pos - start;
    if (n >= sizeof number) {
        j->pos = start;
        return nmt_json_error(j, "a number longer than %zu characters", sizeof number - 1);
    }
    memcpy(number, j->text + start, n);
    number[n] = '\0';
    errno = 0;
    double v = strtod(number, NULL);
    if (errno == ERANGE && isinf(v)) {
        j->pos = start;
        return nmt_json_error(j, "number %s is out of range", number);
    }
    *out = v;
    return 0;
}

static int skip_value(nmt_json *j, int depth) {
    skip_space(j);
    int c = peek(j);
    if (c == '"') {
        size_t end = 0;
        return string_start(j, &end) < 0 ? -1 : decode_string(j, end, NULL);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        double ignored;
        return nmt_json_number(j, &ignored);
    }
    if (nmt_json_accept_word(j, "null") || nmt_json_accept_word(j, "true") || nmt_json_accept_word(j, "false")) return 0;
    if (c != '{' && c != '[') return nmt_json_error(j, "expected a JSON value");
    if (depth == NMT_JSON_MAX_DEPTH) return nmt_json_error(j, "nested deeper than %d levels", NMT_JSON_MAX_DEPTH);
    j->pos++;
    char close = c == '{' ? '}' : ']';
    if (nmt_json_accept(j, close)) return 0;
    do {
        if (c == '{') {
            size_t end = 0;
            if (string_start(j, &end) < 0 || decode_string(j, end, NULL) < 0 || nmt_json_expect(j, ':') < 0) return -1;
        }
        if (skip_value(j, depth + 1) < 0) return -1;
    } while (nmt_json_accept(j, ','));
    return nmt_json_expect(j, close);
}

int nmt_json_skip_value(nmt_json *j) { return skip_value(j, 0); }

int nmt_json_end(nmt_json *j) {
    skip_space(j);
    if (j->pos != j->len) return nmt_json_error(j, "unexpected text after the JSON value");
    return 0;
}

/* The JSON form of byte c of a string into buf[8] (itself where it needs no escape). */
static const char *json_escape(unsigned char c, char buf[8]) {
    if (c == '"' || c == '\\') snprintf(buf, 8, "\\%c", c);
    else if (c < 0x20) snprintf(buf, 8, "\\u%04x", c);
    else buf[0] = (char)c, buf[1] = '\0';
    return buf;
}

void nmt_json_write_string(FILE *out, const char *s) {
    char buf[8];
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) fputs(json_escape(*p, buf), out);
    fputc('"', out);
}

void nmt_json_append_string(nmt_strbuf *out, const char *s) {
    char buf[8];
    nmt_strbuf_printf(out, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) nmt_strbuf_printf(out, "%s", json_escape(*p, buf));
    nmt_strbuf_printf(out, "\"");
}
