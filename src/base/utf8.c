/* utf8: strict validation and decoding, and Python-compatible Unicode properties via utf8proc. */
#include "base/utf8.h"

#include <utf8proc.h>

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

int nmt_utf8_length(unsigned char b) {
    int n = sequence_length(b);
    return n ? n : 1;
}

nmt_utf8_major nmt_utf8_class(uint32_t cp) {
    switch (utf8proc_category((utf8proc_int32_t)cp)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
        return NMT_UTF8_LETTER;
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
        return NMT_UTF8_MARK;
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
        return NMT_UTF8_NUMBER;
    case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE: case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
        return NMT_UTF8_PUNCT;
    case UTF8PROC_CATEGORY_SM: case UTF8PROC_CATEGORY_SC: case UTF8PROC_CATEGORY_SK:
    case UTF8PROC_CATEGORY_SO:
        return NMT_UTF8_SYMBOL;
    case UTF8PROC_CATEGORY_ZS: case UTF8PROC_CATEGORY_ZL: case UTF8PROC_CATEGORY_ZP:
        return NMT_UTF8_SEPARATOR;
    default:
        return NMT_UTF8_OTHER;
    }
}

int nmt_utf8_is_space(uint32_t cp) {
    if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F);
    const utf8proc_property_t *p = utf8proc_get_property((utf8proc_int32_t)cp);
    return p->category == UTF8PROC_CATEGORY_ZS || p->bidi_class == UTF8PROC_BIDI_CLASS_WS ||
           p->bidi_class == UTF8PROC_BIDI_CLASS_B || p->bidi_class == UTF8PROC_BIDI_CLASS_S;
}

/* Unicode's Case_Ignorable (DerivedCoreProperties.txt): categories Mn Me Cf Lm Sk, plus the
 * characters whose Word_Break is MidLetter, MidNumLet or Single_Quote, which utf8proc does not
 * expose; those few are listed from WordBreakProperty.txt. */
static int is_case_ignorable(uint32_t cp) {
    static const uint32_t word_break_mid[] = {
        0x0027, 0x002E, 0x003A, 0x00B7, 0x0387, 0x055F, 0x05F4, 0x2018, 0x2019,
        0x2024, 0x2027, 0xFE13, 0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A,
    };
    switch (utf8proc_category((utf8proc_int32_t)cp)) {
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_ME: case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_SK:
        return 1;
    default:
        break;
    }
    for (size_t i = 0; i < sizeof word_break_mid / sizeof *word_break_mid; i++)
        if (word_break_mid[i] == cp) return 1;
    return 0;
}

/* Unicode's Cased: Lu, Ll, Lt, Other_Lowercase or Other_Uppercase. A case mapping covers most of
 * the Other_ ones (Roman numerals, circled letters); the rest that are not Case_Ignorable anyway
 * (PropList.txt: the ordinal indicators and the squared/negative Latin capitals) are listed. */
static int is_cased(uint32_t cp) {
    utf8proc_category_t c = utf8proc_category((utf8proc_int32_t)cp);
    if (c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT) return 1;
    if (cp == 0xAA || cp == 0xBA || (cp >= 0x1F130 && cp <= 0x1F149) || (cp >= 0x1F150 && cp <= 0x1F169) ||
        (cp >= 0x1F170 && cp <= 0x1F189))
        return 1;
    utf8proc_int32_t i = (utf8proc_int32_t)cp;
    return utf8proc_tolower(i) != i || utf8proc_toupper(i) != i || utf8proc_totitle(i) != i;
}

/* Start of the code point that ends just before byte `pos`. */
static size_t previous_start(const char *s, size_t pos) {
    do pos--; while (pos > 0 && ((unsigned char)s[pos] & 0xC0) == 0x80);
    return pos;
}

/* Python's Final_Sigma test for the capital sigma at s[at..at+2): preceded by a cased letter
 * (skipping case-ignorable ones) and not followed by one. */
static int is_final_sigma(const char *s, size_t len, size_t at) {
    size_t pos = at;
    int cased_before = 0;
    while (pos > 0) {
        pos = previous_start(s, pos);
        size_t p = pos;
        uint32_t cp = nmt_utf8_next(s, &p);
        if (is_case_ignorable(cp)) continue;
        cased_before = is_cased(cp);
        break;
    }
    if (!cased_before) return 0;
    pos = at + 2;
    while (pos < len) {
        uint32_t cp = nmt_utf8_next(s, &pos);
        if (is_case_ignorable(cp)) continue;
        return !is_cased(cp);
    }
    return 1;
}

size_t nmt_utf8_lower(const char *s, size_t len, char *out) {
    size_t pos = 0, n = 0;
    while (pos < len) {
        unsigned char b = (unsigned char)s[pos];
        if (b < 0x80) {
            out[n++] = (char)(b >= 'A' && b <= 'Z' ? b + 32 : b);
            pos++;
            continue;
        }
        size_t at = pos;
        uint32_t cp = nmt_utf8_next(s, &pos);
        if (cp == 0x130) { /* the one unconditional multi-character lowercase mapping */
            out[n++] = 'i';
            n += (size_t)nmt_utf8_encode(0x307, out + n);
        } else if (cp == 0x3A3) {
            n += (size_t)nmt_utf8_encode(is_final_sigma(s, len, at) ? 0x3C2 : 0x3C3, out + n);
        } else {
            n += (size_t)nmt_utf8_encode((uint32_t)utf8proc_tolower((utf8proc_int32_t)cp), out + n);
        }
    }
    return n;
}

const char *nmt_utf8_unicode_version(void) { return utf8proc_unicode_version(); }
