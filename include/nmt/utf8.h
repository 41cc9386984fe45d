/* utf8: validation and code-point decoding of UTF-8 text.
 *
 * Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
 */
#ifndef NMT_UTF8_H
#define NMT_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Returns -1 if `s[0..len)` is valid UTF-8, else the byte offset of the first invalid sequence. */
long nmt_utf8_invalid_at(const char *s, size_t len);

/* Decodes the code point at s[*pos] (which must be valid UTF-8) and advances *pos past it. */
uint32_t nmt_utf8_next(const char *s, size_t *pos);

/* Writes code point cp as UTF-8 into out (room for 4 bytes); returns the byte count. */
int nmt_utf8_encode(uint32_t cp, char *out);

#endif
