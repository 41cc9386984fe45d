/* strbuf: a growable byte string. */
#include "base/strbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nmt_strbuf_reserve(nmt_strbuf *b, size_t cap) {
    if (cap <= b->cap) return 0;
    size_t grown = b->cap ? b->cap : 64;
    while (grown < cap) grown = grown > SIZE_MAX / 2 ? cap : grown * 2;
    char *data = nmt_realloc(b->data, grown);
    if (!data) {
        b->failed = 1;
        return -1;
    }
    b->data = data;
    b->cap = grown;
    return 0;
}

/* Room for n more bytes and the NUL. */
static int make_room(nmt_strbuf *b, size_t n) {
    if (b->failed) return -1;
    if (n >= SIZE_MAX - b->len) {
        b->failed = 1;
        return nmt_error_set("out of memory: a string of more than %zu bytes", b->len);
    }
    return nmt_strbuf_reserve(b, b->len + n + 1);
}

int nmt_strbuf_append(nmt_strbuf *b, const char *s, size_t n) {
    if (make_room(b, n) < 0) return -1;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int nmt_strbuf_puts(nmt_strbuf *b, const char *s) { return nmt_strbuf_append(b, s, strlen(s)); }

int nmt_strbuf_printf(nmt_strbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return nmt_error_set("a format that vsnprintf refuses: %s", fmt);
    if (make_room(b, (size_t)n) < 0) return -1;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

void nmt_strbuf_free(nmt_strbuf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}
