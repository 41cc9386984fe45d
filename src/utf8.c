/* utf8: strict validation and decoding. */
#include "nmt/utf8.h"

/* Length of a sequence led by byte b, or 0 for a byte that cannot lead one. */
static int sequence_length(unsigned char b) {
    if (b < 0x80) return 1;
    if (b >= 0xC2 && b <= 0xDF) return 2;
    if (b >= 0xE0 && b <= 0xEF) return 3;
    if (b >= 0xF0 && b <= 0xF4) return 4;
    return 0;
}

long nmt_utf8_invalid_at(const char *s, size_t len) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        if (u[i] < 0x80) { i++; continue; }
        int n = sequence_length(u[i]);
        if (n == 0 || i + (size_t)n > len) return (long)i;
        for (int k = 1; k < n; k++)
            if ((u[i + k] & 0xC0) != 0x80) return (long)i;
        /* Second-byte limits rule out overlong forms, surrogates and code points above U+10FFFF. */
        if ((u[i] == 0xE0 && u[i + 1] < 0xA0) || (u[i] == 0xED && u[i + 1] > 0x9F) ||
            (u[i] == 0xF0 && u[i + 1] < 0x90) || (u[i] == 0xF4 && u[i + 1] > 0x8F))
            return (long)i;
        i += (size_t)n;
    }
    return -1;
}

uint32_t nmt_utf8_next(const char *s, size_t *pos) {
    const unsigned char *u = (const unsigned char *)s + *pos;
    int n = sequence_length(u[0]);
    if (n <= 1) { *pos += 1; return u[0]; }
    uint32_t cp = u[0] & (0x7F >> n);
    for (int k = 1; k < n; k++) cp = (cp << 6) | (u[k] & 0x3F);
    *pos += (size_t)n;
    return cp;
}

int nmt_utf8_encode(uint32_t cp, char *out) {
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) { o[0] = (unsigned char)cp; return 1; }
    if (cp < 0x800) { o[0] = (unsigned char)(0xC0 | cp >> 6); o[1] = (unsigned char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | cp >> 18);
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}
