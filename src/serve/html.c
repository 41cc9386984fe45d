/* html: a tolerant tokenizer that finds an HTML text's translatable stretches, character references
 * decoded, and the escaping of what goes back in (rules in html.h). */
#include "serve/html.h"

#include "base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { NAME_MAX_BYTES = 16 }; /* longer tag names are kept cut: no element the rules name is as long */

typedef struct element {
    char name[NAME_MAX_BYTES]; /* lowercased */
    unsigned char skipped;     /* it or an ancestor holds no translatable text */
    unsigned char preformatted;
} element;

typedef struct scanner {
    const char *s;
    size_t len, at;
    element stack[NMT_SERVE_HTML_MAX_DEPTH];
    int depth;
    int region;        /* inside a skipped region: the depth its first element made (0: none) */
    int region_inline; /* that element is inline */
    int terminated;    /* the last tag read ended with its '>' (else it ran to the end) */
} scanner;

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

static int in_list(const char *name, const char *const *list) {
    for (; *list; list++)
        if (strcmp(name, *list) == 0) return 1;
    return 0;
}

static const char *const void_elements[] = {"area", "base", "br", "col", "embed", "hr", "img", "input", "keygen",
                                            "link", "meta", "param", "source", "track", "wbr", NULL};
/* Elements whose content is raw text up to their end tag, never markup (and never translated). */
static const char *const raw_text_elements[] = {"script", "style", "textarea", "xmp", "iframe", "noembed",
                                                "noframes", "plaintext", NULL};
/* Phrasing elements: inside a block of text they carry their words along (inline_tags.h). */
static const char *const inline_elements[] = {"a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "del",
                                              "dfn", "em", "font", "i", "ins", "kbd", "label", "mark", "q", "s",
                                              "samp", "small", "span", "strike", "strong", "sub", "sup", "time",
                                              "tt", "u", "var", NULL};
static const char *const void_inline_elements[] = {"img", "wbr", "input", NULL};
static const char *const untranslated_elements[] = {"address", "applet", "audio", "canvas", "code", "embed",
                                                    "time", "video", "noscript", "template", "svg", "math",
                                                    "kbd", "samp", "var", NULL};

/* Offset just past the first `what` at or after `from`, or len when there is none. */
static size_t past(const scanner *sc, size_t from, const char *what) {
    const size_t n = strlen(what);
    for (size_t i = from; i + n <= sc->len; i++)
        if (memcmp(sc->s + i, what, n) == 0) return i + n;
    return sc->len;
}

/* Reads a tag name at sc->at (lowercased, cut to the buffer) and moves past it. */
static void read_name(scanner *sc, char name[NAME_MAX_BYTES]) {
    int n = 0;
    while (sc->at < sc->len && !is_space(sc->s[sc->at]) && sc->s[sc->at] != '>' && sc->s[sc->at] != '/') {
        if (n < NAME_MAX_BYTES - 1) name[n++] = lower(sc->s[sc->at]);
        sc->at++;
    }
    name[n] = '\0';
}

/* Whether the attribute value s[0, n) says the element is not to be translated. */
static int says_no(const char *attr, size_t attr_len, const char *v, size_t n) {
    if (attr_len == 9 && strncmp(attr, "translate", 9) == 0) return n == 2 && lower(v[0]) == 'n' && lower(v[1]) == 'o';
    if (attr_len != 5 || strncmp(attr, "class", 5) != 0) return 0;
    for (size_t i = 0; i < n;) { /* the class list, one token at a time */
        while (i < n && is_space(v[i])) i++;
        size_t start = i;
        while (i < n && !is_space(v[i])) i++;
        if (i - start == 11 && strncmp(v + start, "notranslate", 11) == 0) return 1;
    }
    return 0;
}

/* Reads a start tag's attributes up to and past its '>'; returns whether one says "do not translate";
 * *self_closing tells "<x/>". */
static int read_attributes(scanner *sc, int *self_closing) {
    int no = 0;
    *self_closing = 0;
    sc->terminated = 0;
    while (sc->at < sc->len) {
        char c = sc->s[sc->at];
        if (c == '>') {
            sc->at++;
            sc->terminated = 1;
            return no;
        }
        if (is_space(c) || c == '/') {
            *self_closing = c == '/';
            sc->at++;
            continue;
        }
        *self_closing = 0;
        char attr[NAME_MAX_BYTES];
        size_t attr_len = 0;
        while (sc->at < sc->len && !is_space(sc->s[sc->at]) && sc->s[sc->at] != '=' && sc->s[sc->at] != '>' &&
               sc->s[sc->at] != '/') {
            if (attr_len < sizeof attr) attr[attr_len++] = lower(sc->s[sc->at]);
            sc->at++;
        }
        while (sc->at < sc->len && is_space(sc->s[sc->at])) sc->at++;
        if (sc->at >= sc->len || sc->s[sc->at] != '=') continue;
        sc->at++;
        while (sc->at < sc->len && is_space(sc->s[sc->at])) sc->at++;
        size_t v = sc->at, vend;
        if (sc->at < sc->len && (sc->s[sc->at] == '"' || sc->s[sc->at] == '\'')) {
            const char quote = sc->s[sc->at++];
            v = sc->at;
            while (sc->at < sc->len && sc->s[sc->at] != quote) sc->at++;
            vend = sc->at;
            if (sc->at < sc->len) sc->at++;
        } else {
            while (sc->at < sc->len && !is_space(sc->s[sc->at]) && sc->s[sc->at] != '>') sc->at++;
            vend = sc->at;
        }
        no |= says_no(attr, attr_len, sc->s + v, vend - v);
    }
    return no;
}

static const element *top(const scanner *sc) { return sc->depth ? &sc->stack[sc->depth - 1] : NULL; }

/* A start tag at sc->at (just past '<'): what it is (an inline element's start, a void inline
 * element, or a break) and its name. A start tag that opens an element left untranslated inside
 * translated text opens a skipped region (sc->region) instead. */
static int start_tag(scanner *sc, nmt_serve_html_kind *kind, char name[NAME_MAX_BYTES]) {
    read_name(sc, name);
    int self_closing;
    const int no = read_attributes(sc, &self_closing);
    const int inline_name = in_list(name, inline_elements);
    *kind = NMT_SERVE_HTML_BREAK;
    if (in_list(name, raw_text_elements)) { /* its content up to "</name" is skipped whole */
        char end[NAME_MAX_BYTES + 2] = "</";
        strcat(end, name);
        for (size_t i = sc->at; i < sc->len; i++) {
            size_t k = 0;
            while (end[k] && i + k < sc->len && lower(sc->s[i + k]) == end[k]) k++;
            if (!end[k]) {
                sc->at = past(sc, i, ">");
                return 0;
            }
        }
        sc->at = sc->len;
        return 0;
    }
    if (self_closing || in_list(name, void_elements)) {
        if (inline_name || in_list(name, void_inline_elements)) *kind = NMT_SERVE_HTML_POINT;
        return 0;
    }
    if (sc->depth == NMT_SERVE_HTML_MAX_DEPTH)
        return nmt_error_set("q: HTML elements nested deeper than %d", NMT_SERVE_HTML_MAX_DEPTH);
    const element *parent = top(sc);
    element *e = &sc->stack[sc->depth++];
    memcpy(e->name, name, sizeof e->name);
    e->skipped = (unsigned char)((parent && parent->skipped) || no || in_list(name, untranslated_elements));
    e->preformatted = (unsigned char)((parent && parent->preformatted) || strcmp(name, "pre") == 0);
    if (e->skipped && !(parent && parent->skipped)) { /* a skipped region starts here */
        sc->region = sc->depth;
        sc->region_inline = inline_name;
        return 0;
    }
    if (inline_name) *kind = NMT_SERVE_HTML_OPEN;
    return 0;
}

/* An end tag at sc->at (just past "</"): closes the nearest open element of its name. */
static void end_tag(scanner *sc, nmt_serve_html_kind *kind, char name[NAME_MAX_BYTES]) {
    read_name(sc, name);
    sc->at = past(sc, sc->at, ">");
    sc->terminated = sc->s[sc->at - 1] == '>';
    *kind = in_list(name, inline_elements) ? NMT_SERVE_HTML_CLOSE : NMT_SERVE_HTML_BREAK;
    for (int d = sc->depth - 1; d >= 0; d--)
        if (strcmp(sc->stack[d].name, name) == 0) {
            sc->depth = d;
            return;
        }
}

/* Markup starting at the '<' at sc->at: moves past it and tells its kind and name; 0 when the '<'
 * starts no markup (it is text). */
static int markup(scanner *sc, int *failed, nmt_serve_html_kind *kind, char name[NAME_MAX_BYTES]) {
    const char *p = sc->s + sc->at;
    const size_t left = sc->len - sc->at;
    *kind = NMT_SERVE_HTML_BREAK;
    name[0] = '\0';
    if (left >= 2 && is_alpha(p[1])) {
        sc->at++;
        *failed = start_tag(sc, kind, name) < 0;
    } else if (left >= 3 && p[1] == '/' && is_alpha(p[2])) {
        sc->at += 2;
        end_tag(sc, kind, name);
    } else if (left >= 4 && memcmp(p, "<!--", 4) == 0) {
        sc->at = past(sc, sc->at + 4, "-->");
    } else if (left >= 9 && memcmp(p, "<![CDATA[", 9) == 0) {
        sc->at = past(sc, sc->at + 9, "]]>");
    } else if (left >= 2 && (p[1] == '!' || p[1] == '?' || p[1] == '/')) {
        sc->at = past(sc, sc->at + 2, ">"); /* doctype, processing instruction, "</" + junk */
    } else {
        return 0;
    }
    return 1;
}

int nmt_serve_html_scan(const char *html, size_t len, nmt_serve_html_event event, void *ctx) {
    scanner *sc = nmt_malloc(sizeof *sc);
    if (!sc) return -1;
    sc->s = html;
    sc->len = len;
    sc->at = 0;
    sc->depth = 0;
    sc->region = 0;
    size_t run = 0, region_from = 0; /* where the current stretch of text, and skipped region, began */
    int failed = 0;
    while (sc->at < len && !failed) {
        if (html[sc->at] != '<') {
            sc->at++;
            continue;
        }
        const size_t lt = sc->at;
        const element *e = top(sc);
        const int skipped = e && e->skipped, preformatted = e && e->preformatted;
        nmt_serve_html_kind kind;
        char name[NAME_MAX_BYTES];
        sc->terminated = 1;
        if (!markup(sc, &failed, &kind, name)) {
            sc->at++;
            continue;
        }
        if (!sc->terminated) kind = NMT_SERVE_HTML_BREAK; /* a tag that runs to the end stays there */
        if (!skipped) {
            if (lt > run) event(ctx, NMT_SERVE_HTML_TEXT, run, lt, preformatted, "");
            if (sc->region && sc->depth >= sc->region) region_from = lt; /* it opened one */
            else event(ctx, kind, lt, sc->at, preformatted, name);
        } else if (sc->depth < sc->region) { /* the region ends: with its own end tag or an ancestor's */
            /* An inline region closed by its own end tag may move with the words; one that an
             * ancestor's end tag closed holds unclosed markup, which would swallow what it moved past. */
            const int own = sc->depth == sc->region - 1;
            const nmt_serve_html_kind as = sc->region_inline && own ? NMT_SERVE_HTML_POINT : NMT_SERVE_HTML_BREAK;
            event(ctx, as, region_from, own ? sc->at : lt, preformatted, "");
            if (!own) event(ctx, kind, lt, sc->at, top(sc) && top(sc)->preformatted, name);
            sc->region = 0;
        }
        run = sc->at;
    }
    const element *e = top(sc);
    if (!failed && sc->region) event(ctx, NMT_SERVE_HTML_BREAK, region_from, len, 0, ""); /* left open */
    else if (!failed && len > run) event(ctx, NMT_SERVE_HTML_TEXT, run, len, e && e->preformatted, "");
    free(sc);
    return failed ? -1 : 0;
}

/* ---- character references ---- */

static const struct {
    const char *name;
    uint32_t code;
} named[] = {
    {"amp", '&'},      {"lt", '<'},        {"gt", '>'},       {"quot", '"'},     {"apos", '\''},
    {"nbsp", 0xA0},    {"copy", 0xA9},     {"reg", 0xAE},     {"trade", 0x2122}, {"hellip", 0x2026},
    {"mdash", 0x2014}, {"ndash", 0x2013},  {"lsquo", 0x2018}, {"rsquo", 0x2019}, {"ldquo", 0x201C},
    {"rdquo", 0x201D}, {"laquo", 0xAB},    {"raquo", 0xBB},   {"bdquo", 0x201E}, {"euro", 0x20AC},
    {"pound", 0xA3},   {"yen", 0xA5},      {"cent", 0xA2},    {"sect", 0xA7},    {"deg", 0xB0},
    {"middot", 0xB7},  {"times", 0xD7},    {"divide", 0xF7},  {"auml", 0xE4},    {"ouml", 0xF6},
    {"uuml", 0xFC},    {"Auml", 0xC4},     {"Ouml", 0xD6},    {"Uuml", 0xDC},    {"szlig", 0xDF},
    {"eacute", 0xE9},  {"egrave", 0xE8},   {"ecirc", 0xEA},   {"agrave", 0xE0},  {"acirc", 0xE2},
    {"ccedil", 0xE7},  {"icirc", 0xEE},    {"ocirc", 0xF4},   {"ugrave", 0xF9},  {"Eacute", 0xC9},
};

static size_t put_utf8(uint32_t c, char *out) {
    if (c == 0 || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xC0 | c >> 6);
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | c >> 12);
        out[1] = (char)(0x80 | (c >> 6 & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | c >> 18);
    out[1] = (char)(0x80 | (c >> 12 & 0x3F));
    out[2] = (char)(0x80 | (c >> 6 & 0x3F));
    out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

static int digit_value(char c, int hex) {
    if (c >= '0' && c <= '9') return c - '0';
    if (hex && lower(c) >= 'a' && lower(c) <= 'f') return lower(c) - 'a' + 10;
    return -1;
}

/* The character reference at src[0] == '&' (within n bytes): its code and length, or 0 if none. A
 * reference's UTF-8 is never longer than the reference, so decoding never grows the text. */
static size_t reference(const char *src, size_t n, uint32_t *code) {
    if (n >= 3 && src[1] == '#') {
        const int hex = lower(src[2]) == 'x';
        size_t i = hex ? 3 : 2;
        uint32_t c = 0;
        int digits = 0;
        for (int d; i < n && (d = digit_value(src[i], hex)) >= 0; i++, digits++)
            if (c <= 0x10FFFF) c = c * (hex ? 16u : 10u) + (uint32_t)d;
        if (!digits || i >= n || src[i] != ';') return 0;
        *code = c;
        return i + 1;
    }
    for (size_t k = 0; k < sizeof named / sizeof named[0]; k++) {
        const size_t len = strlen(named[k].name);
        if (len + 2 <= n && memcmp(src + 1, named[k].name, len) == 0 && src[len + 1] == ';') {
            *code = named[k].code;
            return len + 2;
        }
    }
    return 0;
}

size_t nmt_serve_html_decode(const char *src, size_t n, int preformatted, char *out) {
    size_t at = 0;
    for (size_t i = 0; i < n;) {
        uint32_t code;
        size_t used;
        if (!preformatted && is_space(src[i])) {
            while (i < n && is_space(src[i])) i++;
            if (at == 0 || out[at - 1] != ' ') out[at++] = ' ';
        } else if (src[i] == '&' && (used = reference(src + i, n - i, &code)) > 0) {
            /* a reference to white space (&#9;, &#32;) is white space like any other */
            if (!preformatted && code < 0x80 && is_space((char)code)) {
                if (at == 0 || out[at - 1] != ' ') out[at++] = ' ';
            } else {
                at += put_utf8(code, out + at);
            }
            i += used;
        } else {
            out[at++] = src[i++];
        }
    }
    out[at] = '\0';
    return at;
}

static const char *escape_of(char c) { return c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : NULL; }

size_t nmt_serve_html_escaped_len(const char *text) {
    size_t n = 0;
    for (; *text; text++) n += escape_of(*text) ? strlen(escape_of(*text)) : 1;
    return n;
}

size_t nmt_serve_html_escape(const char *text, char *out) {
    size_t at = 0;
    for (; *text; text++) {
        const char *e = escape_of(*text);
        if (!e) {
            out[at++] = *text;
            continue;
        }
        const size_t len = strlen(e);
        memcpy(out + at, e, len);
        at += len;
    }
    return at;
}

int nmt_serve_html_escape_append(nmt_strbuf *b, const char *text, size_t n) {
    for (size_t i = 0; i < n;) {
        size_t run = i;
        while (run < n && !escape_of(text[run])) run++;
        nmt_strbuf_append(b, text + i, run - i);
        if (run < n) nmt_strbuf_puts(b, escape_of(text[run]));
        i = run + 1;
    }
    return b->failed ? -1 : 0;
}
