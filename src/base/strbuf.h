/* strbuf: a growable byte string, for text built piece by piece (reports, SVG, terminal pictures,
 * tokenized segments).
 *
 * Zero-initialise it; release it with nmt_strbuf_free. Appends keep data NUL-terminated; len excludes
 * the NUL. A failed allocation is remembered (failed): every later append does nothing and returns
 * -1, so a long run of appends may be checked once, at the end. nmt_strbuf_reserve alone leaves the
 * contents as they are, for code that writes into data directly (and sets len itself).
 */
#ifndef NMT_STRBUF_H
#define NMT_STRBUF_H

#include <stddef.h>

#include "base/util.h"

typedef struct nmt_strbuf {
    char *data;
    size_t len;
    size_t cap;
    int failed; /* an allocation failed; data holds what came before */
} nmt_strbuf;

/* Makes room for `cap` bytes in all (keeps the contents). 0, or -1 with the error set. */
int nmt_strbuf_reserve(nmt_strbuf *b, size_t cap);
/* Appends s[0..n). 0 or -1. */
int nmt_strbuf_append(nmt_strbuf *b, const char *s, size_t n);
/* Appends a NUL-terminated string. */
int nmt_strbuf_puts(nmt_strbuf *b, const char *s);
int nmt_strbuf_printf(nmt_strbuf *b, const char *fmt, ...) NMT_PRINTF(2, 3);
void nmt_strbuf_free(nmt_strbuf *b);

#endif
