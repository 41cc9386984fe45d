/* utf8: validation and code-point decoding of UTF-8 text, and the few Unicode properties that
 * text metrics need, with Python's semantics.
 *
 * Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
 *
 * Unicode properties come from utf8proc (its Unicode version, see nmt_utf8_unicode_version()).
 * They are shaped to reproduce what Python 3 does, because sacreBLEU's numbers are defined by
 * Python's `str` methods and the `regex` module:
 *   nmt_utf8_is_space(cp)    str.isspace(): general category Zs, or bidirectional class WS, B or S
 *                            (so also \x1c..\x1f, \x85, U+2028, U+2029; not U+200B).
 *   nmt_utf8_class(cp)       the major general category: \p{L}, \p{M}, \p{N}, \p{P}, \p{S}, \p{Z}, \p{C}.
 *   nmt_utf8_lower(...)      str.lower(): full lowercase mapping (U+0130 becomes "i" U+0307) and the
 *                            Final_Sigma rule (a capital sigma ending a word becomes U+03C2).
 * Characters newer than utf8proc's Unicode version are unassigned to it (class OTHER, no case).
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

/* Byte length of the sequence led by byte b (1 for ASCII and for bytes that cannot lead one). */
int nmt_utf8_length(unsigned char b);

typedef enum nmt_utf8_major {
    NMT_UTF8_LETTER,    /* L*: Lu Ll Lt Lm Lo */
    NMT_UTF8_MARK,      /* M*: Mn Mc Me */
    NMT_UTF8_NUMBER,    /* N*: Nd Nl No */
    NMT_UTF8_PUNCT,     /* P*: Pc Pd Ps Pe Pi Pf Po */
    NMT_UTF8_SYMBOL,    /* S*: Sm Sc Sk So */
    NMT_UTF8_SEPARATOR, /* Z*: Zs Zl Zp */
    NMT_UTF8_OTHER,     /* C*: Cc Cf Cs Co Cn */
} nmt_utf8_major;

nmt_utf8_major nmt_utf8_class(uint32_t cp);

/* Python's str.isspace() for one code point. */
int nmt_utf8_is_space(uint32_t cp);

/* Bytes that nmt_utf8_lower may write for `len` input bytes (a 2-byte character can lower to 3). */
#define NMT_UTF8_LOWER_MAX(len) ((len) + (len) / 2 + 1)

/* Python's str.lower() of the valid UTF-8 text s[0..len) into out (room for NMT_UTF8_LOWER_MAX(len)
 * bytes; out must not overlap s). Returns the number of bytes written; no NUL is added. */
size_t nmt_utf8_lower(const char *s, size_t len, char *out);

/* The Unicode version of the property tables, e.g. "13.0.0". */
const char *nmt_utf8_unicode_version(void);

#endif
