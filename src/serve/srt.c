/* srt: SubRip subtitles read and written, and textwrap's fill (srt.h). */
#include "serve/srt.h"

#include "base/utf8.h"
#include "base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
static int blank(const char *line) {
    while (is_ws(*line)) line++;
    return *line == '\0';
}

int nmt_serve_srt_read(const char *data, size_t len, const char *what, nmt_serve_srt *out) {
    memset(out, 0, sizeof *out);
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) data += 3, len -= 3;
    if (memchr(data, '\0', len)) return nmt_error_set("%s: a NUL byte", what);
    const long bad = nmt_utf8_invalid_at(data, len);
    if (bad >= 0) return nmt_error_set("%s: invalid UTF-8 at byte %ld", what, bad + 1);
    if (!(out->copy = nmt_malloc(len + 1))) return -1;
    memcpy(out->copy, data, len);
    out->copy[len] = '\0';
    const char *first_end = strchr(out->copy, '\n');
    out->crlf = first_end && first_end > out->copy && first_end[-1] == '\r';
    size_t lines = 1;
    for (size_t i = 0; i < len; i++) lines += data[i] == '\n';
    if (!(out->lines = nmt_calloc(lines, sizeof *out->lines)) || !(out->cues = nmt_calloc(lines, sizeof *out->cues)))
        return -1;
    size_t n = 0;
    for (char *at = out->copy; at;) { /* each line, its trailing white space cut (as pysrt does) */
        char *end = strchr(at, '\n');
        if (end) *end = '\0';
        size_t l = strlen(at);
        while (l && is_ws(at[l - 1])) at[--l] = '\0';
        out->lines[n++] = at;
        at = end ? end + 1 : NULL;
    }
    for (size_t i = 0; i < n;) {
        if (blank(out->lines[i])) {
            i++;
            continue;
        }
        size_t j = i, k = i;
        while (j < n && !blank(out->lines[j])) j++; /* the cue is lines i .. j - 1 */
        nmt_serve_srt_cue *c = &out->cues[out->count];
        c->number = strstr(out->lines[i], "-->") ? "" : out->lines[k++];
        if (k == j || !strstr(out->lines[k], "-->"))
            return nmt_error_set("%s: line %zu: expected a timing line (00:00:01,000 --> 00:00:02,500)%s", what, k + 1,
                                 k > i ? " after the cue's number" : "");
        c->timing = out->lines[k++];
        size_t size = 1;
        for (size_t t = k; t < j; t++) size += strlen(out->lines[t]) + 1;
        char *text = nmt_malloc(size);
        if (!text) return -1;
        text[0] = '\0';
        for (size_t t = k, at = 0; t < j; t++) {
            const size_t l = strlen(out->lines[t]);
            if (t > k) text[at++] = ' ';
            memcpy(text + at, out->lines[t], l + 1);
            at += l;
        }
        c->text = text;
        out->count++;
        i = j;
    }
    return 0;
}

void nmt_serve_srt_free(nmt_serve_srt *s) {
    for (int i = 0; i < s->count; i++) free((char *)s->cues[i].text);
    free(s->cues);
    free(s->lines);
    free(s->copy);
    memset(s, 0, sizeof *s);
}

int nmt_serve_srt_write(const nmt_serve_srt *s, const char *const *translations, nmt_strbuf *out) {
    const char *eol = s->crlf ? "\r\n" : "\n";
    nmt_strbuf wrapped = {0};
    for (int i = 0; i < s->count; i++) {
        const nmt_serve_srt_cue *c = &s->cues[i];
        if (c->number[0]) nmt_strbuf_printf(out, "%s%s", c->number, eol);
        nmt_strbuf_printf(out, "%s%s", c->timing, eol);
        wrapped.len = 0;
        if (wrapped.data) wrapped.data[0] = '\0';
        if (nmt_serve_srt_fill(translations[i], 40, &wrapped) < 0) break;
        for (const char *line = wrapped.data; line && *line;) {
            const char *end = strchr(line, '\n');
            const size_t l = end ? (size_t)(end - line) : strlen(line);
            nmt_strbuf_append(out, line, l);
            nmt_strbuf_puts(out, eol);
            line += l + (end != NULL);
        }
        nmt_strbuf_puts(out, eol);
    }
    const int failed = wrapped.failed;
    nmt_strbuf_free(&wrapped);
    return out->failed || failed ? -1 : 0;
}

/* ---- textwrap.fill ---- */

/* textwrap's classes, by byte: ASCII as Python's regular expressions class it; any byte of a non-ASCII
 * character counts as a letter (\w without a digit), as most such characters are. */
static int is_letter(const char *t, size_t i, size_t n) {
    if (i >= n) return 0;
    const unsigned char c = (unsigned char)t[i];
    return c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int is_word(const char *t, size_t i, size_t n) {
    return is_letter(t, i, n) || (i < n && t[i] >= '0' && t[i] <= '9');
}
static int is_word_punct(const char *t, size_t i, size_t n) {
    return is_word(t, i, n) || (i < n && strchr("!\"'&.,?", t[i]) && t[i]);
}
/* An em-dash ("--" or longer) starts at i and a word character follows it. */
static int em_dash_at(const char *t, size_t i, size_t n) {
    if (i + 1 >= n || t[i] != '-' || t[i + 1] != '-') return 0;
    while (i < n && t[i] == '-') i++;
    return is_word(t, i, n);
}

/* Where the chunk starting at t[i] ends (textwrap's wordsep_re). */
static size_t chunk_end(const char *t, size_t i, size_t n) {
    if (t[i] == ' ') {
        while (i < n && t[i] == ' ') i++;
        return i;
    }
    if (i > 0 && is_word_punct(t, i - 1, n) && em_dash_at(t, i, n)) {
        while (i < n && t[i] == '-') i++;
        return i;
    }
    for (size_t e = i + 1;; e++) {
        if (e >= n || t[e] == ' ') return e;
        if (is_word_punct(t, e - 1, n) && em_dash_at(t, e, n)) return e;
        /* a hyphen after two letters (or letter, hyphen, letter), before letter, optional hyphen, letter */
        if (t[e - 1] == '-' && e - 1 > i && e >= 3 &&
            ((is_letter(t, e - 3, n) && is_letter(t, e - 2, n)) ||
             (e >= 4 && is_letter(t, e - 4, n) && t[e - 3] == '-' && is_letter(t, e - 2, n))) &&
            is_letter(t, e, n) && (is_letter(t, e + 1, n) || (e + 1 < n && t[e + 1] == '-' && is_letter(t, e + 2, n))))
            return e;
    }
}

static size_t chars(const char *t, size_t from, size_t to) {
    size_t c = 0;
    for (size_t i = from; i < to; i++) c += ((unsigned char)t[i] & 0xC0) != 0x80;
    return c;
}
/* The byte offset `count` characters after t[from] (at most to). */
static size_t advance(const char *t, size_t from, size_t to, size_t count) {
    size_t i = from;
    for (size_t c = 0; i < to && c < count; c++)
        for (i++; i < to && ((unsigned char)t[i] & 0xC0) == 0x80;) i++;
    return i;
}

int nmt_serve_srt_fill(const char *text, int width, nmt_strbuf *out) {
    size_t n = strlen(text);
    char *t = nmt_malloc(8 * n + 1); /* tabs expanded to the next multiple of 8 columns, as textwrap does */
    if (!t) return -1;
    size_t n_out = 0, column = 0;
    for (size_t i = 0; i < n; i++) {
        if (text[i] == '\t') {
            do t[n_out++] = ' ';
            while (++column % 8);
            continue;
        }
        column = text[i] == '\n' || text[i] == '\r' ? 0 : column + (((unsigned char)text[i] & 0xC0) != 0x80);
        t[n_out++] = is_ws(text[i]) ? ' ' : text[i];
    }
    t[n_out] = '\0';
    n = n_out;
    const size_t w = width > 1 ? (size_t)width : 1;
    size_t at = 0, lines = 0; /* the next chunk starts at t[at]; lines written */
    while (at < n) {
        if (lines && t[at] == ' ') at = chunk_end(t, at, n); /* a line does not start with spaces */
        if (at >= n) break;
        const size_t start = at;
        size_t len = 0, space = SIZE_MAX; /* the line is t[start, at), len characters; its last chunk's
                                             start when that chunk is spaces */
        while (at < n) {
            const size_t e = chunk_end(t, at, n), l = chars(t, at, e);
            if (len + l > w) break;
            space = t[at] == ' ' ? at : SIZE_MAX;
            len += l;
            at = e;
        }
        const size_t e = at < n ? chunk_end(t, at, n) : n;
        if (at < n && chars(t, at, e) > w) { /* a long word fills the room left, cut after a hyphen if it can */
            const size_t limit = advance(t, at, e, w - len);
            size_t cut = limit;
            for (size_t h = limit; h-- > at + 1;)
                if (t[h] == '-') {
                    size_t k = at;
                    while (k < h && t[k] == '-') k++;
                    if (k < h) cut = h + 1;
                    break;
                }
            if (cut > at) space = t[at] == ' ' ? at : SIZE_MAX; /* a cut run of spaces still ends the line */
            at = cut;
        }
        const size_t end = space != SIZE_MAX ? space : at;
        if (end > start) {
            if (lines++) nmt_strbuf_puts(out, "\n");
            nmt_strbuf_append(out, t + start, end - start);
        }
        if (at == start) at = e; /* never stuck */
    }
    free(t);
    return out->failed ? -1 : 0;
}
