/* segments: hypothesis and reference files read into streams of segments, as sacreBLEU reads them. */
#include "eval/segments.h"

#include "base/io.h"
#include "base/utf8.h"
#include "base/util.h"
#include "eval/tokenize.h"

#include <stdlib.h>
#include <string.h>

int nmt_segments_push(nmt_segments *s, const char *line, size_t len) {
    if (s->count == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        const char **lines = nmt_realloc(s->lines, cap * sizeof *lines);
        if (!lines) return -1;
        s->lines = lines;
        size_t *lens = nmt_realloc(s->lens, cap * sizeof *lens);
        if (!lens) return -1;
        s->lens = lens;
        s->cap = cap;
    }
    s->lines[s->count] = line;
    s->lens[s->count++] = len;
    return 0;
}

long nmt_segments_tokenized_periods(const nmt_segments *s) {
    long count = 0;
    for (size_t i = 0; i < s->count; i++) count += s->lens[i] >= 2 && memcmp(s->lines[i] + s->lens[i] - 2, " .", 2) == 0;
    return count;
}

/* Sizes f->streams to n empty streams named after the file. */
static int make_streams(nmt_segments_file *f, long n) {
    if (!(f->streams = nmt_calloc((size_t)n, sizeof *f->streams))) return -1;
    f->count = (int)n;
    for (int k = 0; k < f->count; k++) f->streams[k].name = f->name;
    return 0;
}

/* A line of tab-separated columns: exactly f->count, split at most count - 1 times. */
static int columns_line(nmt_segments_file *f, char *line, size_t len, long number) {
    char *p = line, *end = line + len;
    for (int k = 0; k < f->count; k++) {
        char *tab = k + 1 < f->count ? memchr(p, '\t', (size_t)(end - p)) : NULL;
        if (!tab && k + 1 < f->count)
            return nmt_error_set("%s:%ld: expected %d tab-separated references, found %d", f->name, number, f->count,
                                 k + 1);
        char *stop = tab ? tab : end;
        *stop = '\0';
        if (nmt_segments_push(&f->streams[k], p, (size_t)(stop - p)) < 0) return -1;
        p = stop + 1;
    }
    return 0;
}

/* A line of standard input: tab-separated systems; the first line fixes their number. sacreBLEU
 * strips each field after the first line, and only the whole first line. */
static int stdin_line(nmt_segments_file *f, char *line, size_t len, long number) {
    int fields = 1;
    for (size_t i = 0; i < len; i++) fields += line[i] == '\t';
    if (number == 1) {
        if (make_streams(f, fields) < 0) return -1;
    } else if (fields != f->count) {
        return nmt_error_set("%s:%ld: the number of tab-separated systems differs from the first line's (%d)", f->name,
                             number, f->count);
    }
    char *p = line;
    for (int k = 0; k < fields; k++) {
        char *tab = memchr(p, '\t', len - (size_t)(p - line));
        char *stop = tab ? tab : line + len;
        *stop = '\0';
        size_t n = (size_t)(stop - p);
        if (number > 1) p[n = nmt_tokenize_rstrip(p, n)] = '\0';
        if (nmt_segments_push(&f->streams[k], p, n) < 0) return -1;
        p = stop + 1;
    }
    return 0;
}

/* Splits f->text[0..size) into lines (at '\n', and at '\r' too for standard input), checks each for
 * UTF-8, strips its trailing whitespace and hands it to the mode's line rule. */
static int split_lines(nmt_segments_file *f, size_t size, nmt_segments_mode mode) {
    char *data = f->text;
    int universal_newlines = mode == NMT_SEGMENTS_STDIN;
    long number = 0;
    size_t start = 0;
    while (start < size) {
        const char *nl = memchr(data + start, '\n', size - start);
        size_t end = nl ? (size_t)(nl - data) : size;
        if (universal_newlines) {
            const char *cr = memchr(data + start, '\r', end - start);
            if (cr) end = (size_t)(cr - data);
        }
        size_t next = end + 1;
        if (universal_newlines && end < size && data[end] == '\r' && end + 1 < size && data[end + 1] == '\n') next++;
        number++;
        long bad = nmt_utf8_invalid_at(data + start, end - start);
        if (bad >= 0) return nmt_error_set("%s:%ld: invalid UTF-8 at byte %ld", f->name, number, bad + 1);
        data[end < size ? end : size] = '\0';
        size_t len = nmt_tokenize_rstrip(data + start, end - start);
        data[start + len] = '\0';
        int rc = mode == NMT_SEGMENTS_STDIN ? stdin_line(f, data + start, len, number)
                 : mode == NMT_SEGMENTS_COLUMNS ? columns_line(f, data + start, len, number)
                                                : nmt_segments_push(&f->streams[0], data + start, len);
        if (rc < 0) return -1;
        start = next;
    }
    if (mode == NMT_SEGMENTS_STDIN && f->count == 0) /* empty input: sacreBLEU reads one empty line */
        if (make_streams(f, 1) < 0 || nmt_segments_push(&f->streams[0], "", 0) < 0) return -1;
    return 0;
}

int nmt_segments_file_read(nmt_segments_file *f, const char *path, const char *name, nmt_segments_mode mode,
                           long columns) {
    memset(f, 0, sizeof *f);
    size_t n = strlen(path), size;
    if (n > 3 && strcmp(path + n - 3, ".gz") == 0)
        return nmt_error_set("%s: compressed files are not supported; decompress it first (gunzip -k)", path);
    if (mode == NMT_SEGMENTS_COLUMNS && columns < 1) return nmt_error_set("%s: %ld columns", name, columns);
    if (!(f->name = nmt_strdup(name)) || nmt_read_file(path, &f->text, &size) < 0 ||
        (mode != NMT_SEGMENTS_STDIN && make_streams(f, mode == NMT_SEGMENTS_COLUMNS ? columns : 1) < 0) ||
        split_lines(f, size, mode) < 0) {
        nmt_segments_file_free(f);
        return -1;
    }
    return 0;
}

void nmt_segments_file_free(nmt_segments_file *f) {
    for (int k = 0; k < f->count; k++) {
        free(f->streams[k].lines);
        free(f->streams[k].lens);
    }
    free(f->streams);
    free(f->text);
    free(f->name);
    memset(f, 0, sizeof *f);
}
