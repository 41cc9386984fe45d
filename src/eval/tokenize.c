/* tokenize: sacreBLEU's tokenizers as passes over UTF-8 bytes.
 *
 * Each regular-expression substitution of the Python original is one pass here, run in the same
 * order, with the same leftmost, non-overlapping matching: after a match the scan resumes behind
 * the matched characters, which decides cases such as "a.,b" or "1..2". A pass writes into a buffer
 * reserved up front for its worst case (every character gaining two spaces), so the loops never
 * check for room. Patterns that only name ASCII characters are matched on bytes: a multi-byte
 * character never contains an ASCII byte, and "any character but a digit" followed by an ASCII
 * character is the same test on the last byte of that character as on the whole character.
 */
#include "eval/tokenize.h"

#include "base/utf8.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

void nmt_tokenize_scratch_free(nmt_tokenize_scratch *scratch) {
    nmt_strbuf_free(&scratch->a);
    nmt_strbuf_free(&scratch->b);
}

static const char *const tokenizer_names[] = {"none", "13a", "intl", "char", "zh"};

int nmt_tokenize_parse(const char *name, nmt_tokenizer *out) {
    for (size_t i = 0; i < sizeof tokenizer_names / sizeof *tokenizer_names; i++)
        if (strcmp(name, tokenizer_names[i]) == 0) {
            *out = (nmt_tokenizer)i;
            return 0;
        }
    static const char *const external[] = {"ja-mecab", "ko-mecab", "spm", "flores101", "flores200", "spBLEU-1K"};
    for (size_t i = 0; i < sizeof external / sizeof *external; i++)
        if (strcmp(name, external[i]) == 0)
            return nmt_error_set("tokenizer '%s' needs an external model (MeCab or a SentencePiece model "
                                 "downloaded by sacreBLEU), which nmt does not provide; use sacreBLEU for it",
                                 name);
    return nmt_error_set("unknown tokenizer '%s' (choose from none, 13a, intl, char, zh)", name);
}

const char *nmt_tokenize_name(nmt_tokenizer tokenizer) { return tokenizer_names[tokenizer]; }

/* ASCII whitespace for Python: \t \n \v \f \r, \x1c..\x1f and space. */
static const unsigned char ascii_space[128] = {
    ['\t'] = 1, ['\n'] = 1, ['\v'] = 1, ['\f'] = 1, ['\r'] = 1, [0x1C] = 1, [0x1D] = 1, [0x1E] = 1, [0x1F] = 1, [' '] = 1,
};

/* Byte length of the Python whitespace character at s[i], or 0 when s[i] does not start one. */
static inline size_t space_at(const char *s, size_t len, size_t i) {
    unsigned char b = (unsigned char)s[i];
    if (b < 0x80) return ascii_space[b];
    /* Every non-ASCII whitespace character starts with one of these bytes (U+0085, U+00A0, U+1680,
     * U+2000..U+205F, U+3000); skip the decoding for all others. */
    if (b != 0xC2 && b != 0xE1 && b != 0xE2 && b != 0xE3) return 0;
    size_t pos = i;
    if (i + (size_t)nmt_utf8_length(b) > len) return 0;
    uint32_t cp = nmt_utf8_next(s, &pos);
    return nmt_utf8_is_space(cp) ? pos - i : 0;
}


/* True when the non-ASCII character starting at s[i] is whitespace. */
static inline int wide_space_at(const char *s, size_t len, size_t i, unsigned char b) {
    return (b == 0xC2 || (b >= 0xE1 && b <= 0xE3)) && space_at(s, len, i);
}

int nmt_tokenize_split(const char *s, size_t len, nmt_tokenize_spans *spans) {
    spans->count = 0;
    size_t i = 0;
    while (i < len) {
        unsigned char b = (unsigned char)s[i];
        if (b < 0x80 ? ascii_space[b] : wide_space_at(s, len, i, b)) {
            i += b < 0x80 ? 1 : space_at(s, len, i);
            continue;
        }
        size_t start = i;
        while (i < len) {
            b = (unsigned char)s[i];
            if (b < 0x80) {
                if (ascii_space[b]) break;
                i++;
            } else {
                if (wide_space_at(s, len, i, b)) break;
                i += (size_t)nmt_utf8_length(b);
            }
        }
        if (i > len) i = len;
        if (spans->count == spans->cap) {
            size_t cap = spans->cap ? spans->cap * 2 : 32;
            nmt_tokenize_span *items = nmt_realloc(spans->items, cap * sizeof *items);
            if (!items) return -1;
            spans->items = items;
            spans->cap = cap;
        }
        spans->items[spans->count++] = (nmt_tokenize_span){(uint32_t)start, (uint32_t)(i - start)};
    }
    return 0;
}

void nmt_tokenize_spans_free(nmt_tokenize_spans *spans) {
    free(spans->items);
    memset(spans, 0, sizeof *spans);
}

size_t nmt_tokenize_rstrip(const char *s, size_t len) {
    while (len > 0) {
        size_t start = len - 1;
        while (start > 0 && ((unsigned char)s[start] & 0xC0) == 0x80) start--;
        if (!space_at(s, len, start)) break;
        len = start;
    }
    return len;
}

/* Python's str.strip(): the span without leading and trailing whitespace. */
static void strip(const char **s, size_t *len) {
    size_t w;
    while (*len > 0 && (w = space_at(*s, *len, 0))) {
        *s += w;
        *len -= w;
    }
    *len = nmt_tokenize_rstrip(*s, *len);
}

int nmt_tokenize_lower(const char *s, size_t len, nmt_strbuf *out) {
    if (nmt_strbuf_reserve(out, NMT_UTF8_LOWER_MAX(len)) < 0) return -1;
    out->len = nmt_utf8_lower(s, len, out->data);
    return 0;
}

/* ' '.join(s.split()): words separated by single spaces. Never longer than the input. */
static int join_words(const char *s, size_t len, nmt_strbuf *out) {
    if (nmt_strbuf_reserve(out, len + 1) < 0) return -1;
    size_t n = 0, i = 0;
    while (i < len) {
        size_t w = space_at(s, len, i);
        if (w) {
            i += w;
            continue;
        }
        if (n) out->data[n++] = ' ';
        while (i < len && !space_at(s, len, i)) out->data[n++] = s[i++];
    }
    out->len = n;
    return 0;
}

/* str.replace(pattern, replacement) for a replacement no longer than the pattern. */
static int replace_all(const char *s, size_t len, const char *pattern, const char *replacement,
                       nmt_strbuf *out) {
    size_t plen = strlen(pattern), rlen = strlen(replacement);
    if (nmt_strbuf_reserve(out, len + 1) < 0) return -1;
    size_t n = 0, i = 0;
    while (i < len) {
        if (s[i] == pattern[0] && len - i >= plen && memcmp(s + i, pattern, plen) == 0) {
            memcpy(out->data + n, replacement, rlen);
            n += rlen;
            i += plen;
        } else {
            out->data[n++] = s[i++];
        }
    }
    out->len = n;
    return 0;
}

/* Runs a pass from *in into the spare buffer and swaps, so that *in always holds the latest text. */
typedef int (*pass_fn)(const char *s, size_t len, nmt_strbuf *out);
static int run_pass(pass_fn pass, nmt_strbuf **in, nmt_strbuf **spare) {
    if (pass((*in)->data, (*in)->len, *spare) < 0) return -1;
    nmt_strbuf *t = *in;
    *in = *spare;
    *spare = t;
    return 0;
}

/* What the 13a passes look for, per ASCII byte. PUNCT is the punctuation that mteval-v13a splits off,
 * [{-~[-` -&(-+:-@/]: all of ASCII's except the apostrophe, comma, hyphen and period, which have
 * their own rules. */
enum { PUNCT = 1, PERIOD = 2 /* . or , */, DASH = 4, DIGIT = 8, LESS = 16, NEWLINE = 32, AMPERSAND = 64 };
static const unsigned char ascii_class[128] = {
    ['\n'] = NEWLINE, [' '] = PUNCT, ['!'] = PUNCT, ['"'] = PUNCT, ['#'] = PUNCT, ['$'] = PUNCT, ['%'] = PUNCT,
    ['&'] = PUNCT | AMPERSAND, ['('] = PUNCT, [')'] = PUNCT, ['*'] = PUNCT, ['+'] = PUNCT, [','] = PERIOD,
    ['-'] = DASH, ['.'] = PERIOD, ['/'] = PUNCT, ['0'] = DIGIT, ['1'] = DIGIT, ['2'] = DIGIT, ['3'] = DIGIT,
    ['4'] = DIGIT, ['5'] = DIGIT, ['6'] = DIGIT, ['7'] = DIGIT, ['8'] = DIGIT, ['9'] = DIGIT, [':'] = PUNCT,
    [';'] = PUNCT, ['<'] = PUNCT | LESS, ['='] = PUNCT, ['>'] = PUNCT, ['?'] = PUNCT, ['@'] = PUNCT, ['['] = PUNCT,
    ['\\'] = PUNCT, [']'] = PUNCT, ['^'] = PUNCT, ['_'] = PUNCT, ['`'] = PUNCT, ['{'] = PUNCT, ['|'] = PUNCT,
    ['}'] = PUNCT, ['~'] = PUNCT,
};

static inline unsigned class_of(char c) {
    unsigned char b = (unsigned char)c;
    return b < 0x80 ? ascii_class[b] : 0;
}

/* The union of the classes of s's bytes. */
static unsigned classes_in(const char *s, size_t len) {
    unsigned seen = 0;
    for (size_t i = 0; i < len; i++) seen |= class_of(s[i]);
    return seen;
}

/* re.sub(r'([{-~[-` -&(-+:-@/])', r' \1 '); *seen gets the classes of the input's bytes. */
static int punct_pass(const char *s, size_t len, nmt_strbuf *out, unsigned *seen) {
    if (nmt_strbuf_reserve(out, 3 * len + 1) < 0) return -1;
    char *o = out->data;
    unsigned classes = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned c = class_of(s[i]);
        classes |= c;
        if (c & PUNCT) {
            *o++ = ' ';
            *o++ = s[i];
            *o++ = ' ';
        } else {
            *o++ = s[i];
        }
    }
    out->len = (size_t)(o - out->data);
    *seen = classes;
    return 0;
}

static int pass_punct(const char *s, size_t len, nmt_strbuf *out) {
    unsigned seen;
    return punct_pass(s, len, out, &seen);
}

/* Copies s[from, to) to *o and advances it. */
static inline void copy_run(char **o, const char *s, size_t from, size_t to) {
    memcpy(*o, s + from, to - from);
    *o += to - from;
}

/* First position at or after `from` whose byte has class `c` (len when none). */
static inline size_t find_class(const char *s, size_t len, size_t from, unsigned c) {
    while (from < len && !(class_of(s[from]) & c)) from++;
    return from;
}

/* re.sub(r'(X)(Y)', r'\1 \2 ') where Y is the one-byte class `second` and X is a digit (when
 * first_digit) or any character but a digit. A match can only end at a Y, so the scan jumps from one
 * to the next; a Y that does not complete a match may still start the next one itself. Serves
 * r'([^0-9])([\.,])' and r'([0-9])(-)'. */
static int split_pair(const char *s, size_t len, nmt_strbuf *out, unsigned second, int first_digit) {
    if (nmt_strbuf_reserve(out, 2 * len + 1) < 0) return -1;
    char *o = out->data;
    size_t i = 0;
    while (i < len) {
        size_t p = find_class(s, len, i + 1, second);
        if (p >= len) {
            copy_run(&o, s, i, len);
            break;
        }
        copy_run(&o, s, i, p);
        if (((class_of(s[p - 1]) & DIGIT) != 0) != first_digit) {
            i = p;
            continue;
        }
        *o++ = ' ';
        *o++ = s[p];
        *o++ = ' ';
        i = p + 1;
    }
    out->len = (size_t)(o - out->data);
    return 0;
}

static int pass_period_after_nondigit(const char *s, size_t len, nmt_strbuf *out) {
    return split_pair(s, len, out, PERIOD, 0);
}

static int pass_dash_after_digit(const char *s, size_t len, nmt_strbuf *out) {
    return split_pair(s, len, out, DASH, 1);
}

/* re.sub(r'([\.,])([^0-9])', r' \1 \2'); the character after the period is consumed whole. */
static int pass_period_before_nondigit(const char *s, size_t len, nmt_strbuf *out) {
    if (nmt_strbuf_reserve(out, 2 * len + 1) < 0) return -1;
    char *o = out->data;
    size_t i = 0;
    while (i < len) {
        size_t p = find_class(s, len, i, PERIOD);
        if (p + 1 >= len) { /* no period, or one with nothing after it */
            copy_run(&o, s, i, len);
            break;
        }
        copy_run(&o, s, i, p);
        if (class_of(s[p + 1]) & DIGIT) {
            *o++ = s[p];
            i = p + 1;
            continue;
        }
        size_t next = (size_t)nmt_utf8_length((unsigned char)s[p + 1]);
        if (p + 1 + next > len) next = len - p - 1;
        *o++ = ' ';
        *o++ = s[p];
        *o++ = ' ';
        copy_run(&o, s, p + 1, p + 1 + next);
        i = p + 1 + next;
    }
    out->len = (size_t)(o - out->data);
    return 0;
}

static int contains(const char *s, size_t len, char c) { return len > 0 && memchr(s, c, len) != NULL; }

/* sacreBLEU's TokenizerRegexp, shared by 13a and zh: the four substitutions (word joining is left to
 * the caller). A substitution whose pattern needs a character that the text lacks is skipped. */
static int regexp_passes(nmt_strbuf **in, nmt_strbuf **spare) {
    unsigned seen;
    if (punct_pass((*in)->data, (*in)->len, *spare, &seen) < 0) return -1;
    nmt_strbuf *t = *in;
    *in = *spare;
    *spare = t;
    if ((seen & PERIOD) &&
        (run_pass(pass_period_after_nondigit, in, spare) < 0 || run_pass(pass_period_before_nondigit, in, spare) < 0))
        return -1;
    if ((seen & DASH) && run_pass(pass_dash_after_digit, in, spare) < 0) return -1;
    return 0;
}

static int copy_into(nmt_strbuf *out, const char *s, size_t len) {
    if (nmt_strbuf_reserve(out, len + 1) < 0) return -1;
    memcpy(out->data, s, len);
    out->len = len;
    return 0;
}

/* Runs str.replace(pattern, replacement) from *in into the spare buffer and swaps. */
static int replace_step(nmt_strbuf **in, nmt_strbuf **spare, const char *pattern, const char *replacement) {
    if (replace_all((*in)->data, (*in)->len, pattern, replacement, *spare) < 0) return -1;
    nmt_strbuf *t = *in;
    *in = *spare;
    *spare = t;
    return 0;
}

/* The XML unescaping of 13a and tercom, in sacreBLEU's order (so "&amp;lt;" becomes "<"). */
static int unescape_xml(nmt_strbuf **in, nmt_strbuf **spare) {
    if (!contains((*in)->data, (*in)->len, '&')) return 0;
    if (replace_step(in, spare, "&quot;", "\"") < 0 || replace_step(in, spare, "&amp;", "&") < 0 ||
        replace_step(in, spare, "&lt;", "<") < 0 || replace_step(in, spare, "&gt;", ">") < 0)
        return -1;
    return 0;
}

/* Tokenizer13a: the language-independent replacements, then " line " through TokenizerRegexp. The
 * leading space is put in first: no replaced pattern starts with a space, so it changes nothing. */
static int tokenize_13a(const char *s, size_t len, nmt_tokenize_scratch *scratch, const nmt_strbuf **text) {
    nmt_strbuf *in = &scratch->a, *spare = &scratch->b;
    if (nmt_strbuf_reserve(in, len + 2) < 0) return -1;
    in->data[0] = ' ';
    memcpy(in->data + 1, s, len);
    in->len = len + 1;
    unsigned seen = classes_in(s, len);
    if ((seen & LESS) && replace_step(&in, &spare, "<skipped>", "") < 0) return -1;
    if ((seen & NEWLINE) &&
        (replace_step(&in, &spare, "-\n", "") < 0 || replace_step(&in, &spare, "\n", " ") < 0))
        return -1;
    if ((seen & AMPERSAND) && unescape_xml(&in, &spare) < 0) return -1;
    in->data[in->len++] = ' '; /* every pass above reserved one byte beyond its output */
    if (regexp_passes(&in, &spare) < 0) return -1;
    *text = in;
    return 0;
}

/* The character classes that the international tokenizer's regexes name. */
static int is_punct_cp(uint32_t cp) { return nmt_utf8_class(cp) == NMT_UTF8_PUNCT; }
static int is_number_cp(uint32_t cp) { return nmt_utf8_class(cp) == NMT_UTF8_NUMBER; }

/* re.sub(r'(\P{N})(\p{P})', r'\1 \2 ') when punct_second, else re.sub(r'(\p{P})(\P{N})', r' \1 \2'). */
static int intl_pair_pass(const char *s, size_t len, nmt_strbuf *out, int punct_second) {
    if (nmt_strbuf_reserve(out, 2 * len + 1) < 0) return -1;
    char *o = out->data;
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        uint32_t first = nmt_utf8_next(s, &j);
        if (j < len) {
            size_t k = j;
            uint32_t second = nmt_utf8_next(s, &k);
            int match = punct_second ? !is_number_cp(first) && is_punct_cp(second)
                                     : is_punct_cp(first) && !is_number_cp(second);
            if (match) {
                if (!punct_second) *o++ = ' ';
                memcpy(o, s + i, j - i);
                o += j - i;
                *o++ = ' ';
                memcpy(o, s + j, k - j);
                o += k - j;
                if (punct_second) *o++ = ' ';
                i = k;
                continue;
            }
        }
        memcpy(o, s + i, j - i);
        o += j - i;
        i = j;
    }
    out->len = (size_t)(o - out->data);
    return 0;
}

static int pass_intl_punct_after(const char *s, size_t len, nmt_strbuf *out) {
    return intl_pair_pass(s, len, out, 1);
}
static int pass_intl_punct_before(const char *s, size_t len, nmt_strbuf *out) {
    return intl_pair_pass(s, len, out, 0);
}

/* Puts a space on both sides of every character for which `pick` is true. */
static int space_around(const char *s, size_t len, nmt_strbuf *out, int (*pick)(uint32_t cp)) {
    if (nmt_strbuf_reserve(out, 3 * len + 1) < 0) return -1;
    char *o = out->data;
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        uint32_t cp = nmt_utf8_next(s, &j);
        int picked = pick(cp);
        if (picked) *o++ = ' ';
        memcpy(o, s + i, j - i);
        o += j - i;
        if (picked) *o++ = ' ';
        i = j;
    }
    out->len = (size_t)(o - out->data);
    return 0;
}

static int is_symbol_cp(uint32_t cp) { return nmt_utf8_class(cp) == NMT_UTF8_SYMBOL; }
static int pass_intl_symbols(const char *s, size_t len, nmt_strbuf *out) {
    return space_around(s, len, out, is_symbol_cp);
}

static int tokenize_intl(const char *s, size_t len, nmt_tokenize_scratch *scratch, const nmt_strbuf **text) {
    nmt_strbuf *in = &scratch->a, *spare = &scratch->b;
    if (copy_into(in, s, len) < 0) return -1;
    if (run_pass(pass_intl_punct_after, &in, &spare) < 0 || run_pass(pass_intl_punct_before, &in, &spare) < 0 ||
        run_pass(pass_intl_symbols, &in, &spare) < 0)
        return -1;
    *text = in;
    return 0;
}

/* TokenizerChar: " ".join(line), every code point (spaces included) separated by a space. */
static int tokenize_char(const char *s, size_t len, nmt_strbuf *out) {
    if (nmt_strbuf_reserve(out, 2 * len + 1) < 0) return -1;
    char *o = out->data;
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        nmt_utf8_next(s, &j);
        if (i) *o++ = ' ';
        memcpy(o, s + i, j - i);
        o += j - i;
        i = j;
    }
    out->len = (size_t)(o - out->data);
    return 0;
}

/* TokenizerZh._is_chinese_char, with the ranges as Python's string comparison applies them (see
 * the header: two entries of sacreBLEU's table are two-character strings). */
static int is_zh_char(uint32_t cp) {
    static const uint32_t ranges[][2] = {
        {0x3400, 0x4DB5}, {0x4E00, 0x9FA5}, {0x9FA6, 0x9FBB}, {0xF900, 0xFA2D}, {0xFA30, 0xFA6A},
        {0xFA70, 0xFAD9}, {0x2001, 0x2A6D}, {0x2F81, 0x2FA1}, {0xFF00, 0xFFEF}, {0x2E80, 0x2EFF},
        {0x3000, 0x303F}, {0x31C0, 0x31EF}, {0x2F00, 0x2FDF}, {0x2FF0, 0x2FFF}, {0x3100, 0x312F},
        {0x31A0, 0x31BF}, {0xFE10, 0xFE1F}, {0xFE30, 0xFE4F}, {0x2600, 0x26FF}, {0x2700, 0x27BF},
        {0x3200, 0x32FF}, {0x3300, 0x33FF},
    };
    if (cp < 0x2001) return 0;
    for (size_t i = 0; i < sizeof ranges / sizeof *ranges; i++)
        if (cp >= ranges[i][0] && cp <= ranges[i][1]) return 1;
    return 0;
}

static int tokenize_zh(const char *s, size_t len, nmt_tokenize_scratch *scratch, const nmt_strbuf **text) {
    nmt_strbuf *in = &scratch->a, *spare = &scratch->b;
    strip(&s, &len);
    if (space_around(s, len, in, is_zh_char) < 0) return -1;
    if (regexp_passes(&in, &spare) < 0) return -1;
    *text = in;
    return 0;
}

/* The text before the final word joining (the joining and nmt_tokenize_split give the same words). */
static int unjoined(nmt_tokenizer tokenizer, const char *s, size_t len, nmt_tokenize_scratch *scratch,
                    const char **text, size_t *text_len) {
    const nmt_strbuf *buf = NULL;
    int rc = 0;
    switch (tokenizer) {
    case NMT_TOKENIZE_13A: rc = tokenize_13a(s, len, scratch, &buf); break;
    case NMT_TOKENIZE_INTL: rc = tokenize_intl(s, len, scratch, &buf); break;
    case NMT_TOKENIZE_ZH: rc = tokenize_zh(s, len, scratch, &buf); break;
    case NMT_TOKENIZE_CHAR:
        rc = tokenize_char(s, len, &scratch->a);
        buf = &scratch->a;
        break;
    case NMT_TOKENIZE_NONE: break;
    }
    *text = buf ? buf->data : s;
    *text_len = buf ? buf->len : len;
    return rc;
}

int nmt_tokenize(nmt_tokenizer tokenizer, const char *s, size_t len, nmt_strbuf *out,
                 nmt_tokenize_scratch *scratch) {
    if (tokenizer == NMT_TOKENIZE_NONE) return copy_into(out, s, len);
    if (tokenizer == NMT_TOKENIZE_CHAR) return tokenize_char(s, len, out);
    const char *text;
    size_t text_len;
    if (unjoined(tokenizer, s, len, scratch, &text, &text_len) < 0) return -1;
    return join_words(text, text_len, out);
}

int nmt_tokenize_words(nmt_tokenizer tokenizer, const char *s, size_t len, nmt_tokenize_scratch *scratch,
                       const char **text, nmt_tokenize_spans *words) {
    size_t text_len;
    if (unjoined(tokenizer, s, len, scratch, text, &text_len) < 0) return -1;
    return nmt_tokenize_split(*text, text_len, words);
}

/* --- TER ------------------------------------------------------------------------------------ */

/* re.sub(r"'s ", r" 's "): tercom's possessive split. Its second rule, "'s$", never matches here:
 * the text is padded with spaces by then. */
static int pass_possessive(const char *s, size_t len, nmt_strbuf *out) {
    if (nmt_strbuf_reserve(out, 2 * len + 1) < 0) return -1;
    char *o = out->data;
    size_t i = 0;
    while (i < len) {
        if (s[i] == '\'' && i + 2 < len && s[i + 1] == 's' && s[i + 2] == ' ') {
            memcpy(o, " 's ", 4);
            o += 4;
            i += 3;
        } else {
            *o++ = s[i++];
        }
    }
    out->len = (size_t)(o - out->data);
    return 0;
}

/* The CJK ranges of tercom's _normalize_asian that get spaces around each character. The
 * Hiragana/Katakana rules of the original are anchored at the start of the (space-padded) text and
 * never match, so they are left out. */
static int is_ter_cjk(uint32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x31C0 && cp <= 0x31EF) ||
           (cp >= 0x2E80 && cp <= 0x2EFF) || (cp >= 0x3300 && cp <= 0x33FF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
           (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0x3200 && cp <= 0x3F22);
}

/* TercomTokenizer.ASIAN_PUNCT and FULL_WIDTH_PUNCT. */
static int is_ter_asian_punct(uint32_t cp) {
    return cp == 0x3001 || cp == 0x3002 || (cp >= 0x3008 && cp <= 0x3011) || (cp >= 0x3014 && cp <= 0x301F) ||
           (cp >= 0xFF61 && cp <= 0xFF65) || cp == 0x30FB || cp == 0xFF0E || cp == 0xFF0C || cp == 0xFF1F ||
           cp == 0xFF1A || cp == 0xFF1B || cp == 0xFF01 || cp == 0xFF02 || cp == 0xFF08 || cp == 0xFF09;
}

static int pass_ter_cjk(const char *s, size_t len, nmt_strbuf *out) {
    return space_around(s, len, out, is_ter_cjk);
}
static int pass_ter_asian_punct(const char *s, size_t len, nmt_strbuf *out) {
    return space_around(s, len, out, is_ter_asian_punct);
}

/* Removes every character for which `drop` is true. */
static int remove_chars(const char *s, size_t len, nmt_strbuf *out, int (*drop)(uint32_t cp)) {
    if (nmt_strbuf_reserve(out, len + 1) < 0) return -1;
    char *o = out->data;
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        uint32_t cp = nmt_utf8_next(s, &j);
        if (!drop(cp)) {
            memcpy(o, s + i, j - i);
            o += j - i;
        }
        i = j;
    }
    out->len = (size_t)(o - out->data);
    return 0;
}

static int is_ter_punct(uint32_t cp) { return cp != 0 && cp < 0x80 && strchr(".,?:;!\"()", (int)cp); }
static int pass_remove_punct(const char *s, size_t len, nmt_strbuf *out) {
    return remove_chars(s, len, out, is_ter_punct);
}
static int pass_remove_asian_punct(const char *s, size_t len, nmt_strbuf *out) {
    return remove_chars(s, len, out, is_ter_asian_punct);
}

/* TercomTokenizer up to its final word joining. */
static int ter_unjoined(const nmt_tokenize_tercom *options, const char *s, size_t len, nmt_tokenize_scratch *scratch,
                        const nmt_strbuf **text) {
    nmt_strbuf *in = &scratch->a, *spare = &scratch->b;
    if (options->case_sensitive ? copy_into(in, s, len) : nmt_tokenize_lower(s, len, in)) return -1;
    if (options->normalized) {
        if (contains(in->data, in->len, '\n') &&
            (replace_step(&in, &spare, "\n-", "") < 0 || replace_step(&in, &spare, "\n", " ") < 0))
            return -1;
        if (unescape_xml(&in, &spare) < 0) return -1;
        if (nmt_strbuf_reserve(spare, in->len + 3) < 0) return -1;
        spare->data[0] = ' ';
        memcpy(spare->data + 1, in->data, in->len);
        spare->data[in->len + 1] = ' ';
        spare->len = in->len + 2;
        nmt_strbuf *t = in;
        in = spare;
        spare = t;
        if (run_pass(pass_punct, &in, &spare) < 0 || run_pass(pass_possessive, &in, &spare) < 0 ||
            run_pass(pass_period_after_nondigit, &in, &spare) < 0 ||
            run_pass(pass_period_before_nondigit, &in, &spare) < 0 || run_pass(pass_dash_after_digit, &in, &spare) < 0)
            return -1;
        if (options->asian_support &&
            (run_pass(pass_ter_cjk, &in, &spare) < 0 || run_pass(pass_ter_asian_punct, &in, &spare) < 0))
            return -1;
    }
    if (options->no_punct) {
        if (run_pass(pass_remove_punct, &in, &spare) < 0) return -1;
        if (options->asian_support && run_pass(pass_remove_asian_punct, &in, &spare) < 0) return -1;
    }
    *text = in;
    return 0;
}

int nmt_tokenize_ter(const nmt_tokenize_tercom *options, const char *s, size_t len, nmt_strbuf *out,
                     nmt_tokenize_scratch *scratch) {
    const nmt_strbuf *text;
    if (ter_unjoined(options, s, len, scratch, &text) < 0) return -1;
    return join_words(text->data, text->len, out);
}

int nmt_tokenize_ter_words(const nmt_tokenize_tercom *options, const char *s, size_t len,
                           nmt_tokenize_scratch *scratch, const char **text, nmt_tokenize_spans *words) {
    const nmt_strbuf *buf;
    if (ter_unjoined(options, s, len, scratch, &buf) < 0) return -1;
    *text = buf->data;
    return nmt_tokenize_split(buf->data, buf->len, words);
}
