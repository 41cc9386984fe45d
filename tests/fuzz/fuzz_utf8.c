/* fuzz_utf8: the UTF-8 validator and codec against a reference written from RFC 3629's definition.
 *
 * The reference decodes by the bit patterns of the RFC's table 3 (lead byte 0xxxxxxx, 110xxxxx,
 * 1110xxxx, 11110xxx followed by 10xxxxxx bytes) and then refuses what the RFC's section 3 forbids:
 * overlong forms (a code point that fits in fewer bytes), surrogates U+D800..U+DFFF and anything
 * above U+10FFFF. It shares no code or table with src/utf8.c.
 *
 * Properties: nmt_utf8_invalid_at returns exactly the reference's first bad offset (or -1); on the
 * valid prefix before it, nmt_utf8_next yields the reference's code points and nmt_utf8_encode
 * re-encodes each one to the very same bytes.
 */
#include "fuzz.h"
#include "base/utf8.h"

/* Decodes one sequence at s[i]; returns its length and sets *cp, or 0 when it is not valid UTF-8. */
static int reference_decode(const uint8_t *s, size_t len, size_t i, uint32_t *cp) {
    uint8_t b = s[i];
    int n;
    uint32_t value, min;
    if ((b & 0x80) == 0x00) n = 1, value = b, min = 0;
    else if ((b & 0xE0) == 0xC0) n = 2, value = b & 0x1F, min = 0x80;
    else if ((b & 0xF0) == 0xE0) n = 3, value = b & 0x0F, min = 0x800;
    else if ((b & 0xF8) == 0xF0) n = 4, value = b & 0x07, min = 0x10000;
    else return 0;
    if (len - i < (size_t)n) return 0;
    for (int k = 1; k < n; k++) {
        if ((s[i + k] & 0xC0) != 0x80) return 0;
        value = value << 6 | (s[i + k] & 0x3F);
    }
    if (value < min || (value >= 0xD800 && value <= 0xDFFF) || value > 0x10FFFF) return 0;
    *cp = value;
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* A private copy, so that a read past the end is caught whatever the driver. */
    char *text = calloc(size ? size : 1, 1);
    FUZZ_CHECK(text != NULL, "out of memory");
    if (size) memcpy(text, data, size);
    long bad = nmt_utf8_invalid_at(text, size);
    size_t i = 0;
    while (i < size) {
        uint32_t expected;
        int n = reference_decode(data, size, i, &expected);
        if (n == 0) break;
        FUZZ_CHECK(bad < 0 || (size_t)bad > i, "valid sequence at byte %zu reported invalid (at %ld)", i, bad);
        size_t pos = i;
        uint32_t cp = nmt_utf8_next(text, &pos);
        FUZZ_CHECK(cp == expected && pos == i + (size_t)n, "byte %zu: decoded U+%04X (%zu bytes), expected U+%04X (%d)", i,
                   (unsigned)cp, pos - i, (unsigned)expected, n);
        char encoded[4];
        int m = nmt_utf8_encode(cp, encoded);
        FUZZ_CHECK(m == n && memcmp(encoded, data + i, (size_t)n) == 0, "U+%04X re-encodes differently", (unsigned)cp);
        i += (size_t)n;
    }
    FUZZ_CHECK(i == size ? bad == -1 : bad == (long)i, "first invalid byte: nmt says %ld, the reference %zd", bad,
               i == size ? (ssize_t)-1 : (ssize_t)i);
    free(text);
    return 0;
}
