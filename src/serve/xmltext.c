/* xmltext: an office document's XML part read strictly, its paragraphs' text found in their runs, and
 * translations shared out among the runs (xmltext.h). */
#include "serve/xmltext.h"

#include "base/utf8.h"
#include "base/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct chunk {
    size_t begin, end; /* its character data in the part */
    size_t gt;         /* the '>' of its text element's start tag, where xml:space goes (SIZE_MAX: none) */
    int paragraph;
    int words;  /* source words that start in it */
    int spaced; /* a space element stands between it and its paragraph's chunk before */
} chunk;

typedef struct paragraph {
    nmt_strbuf raw;  /* its chunks decoded, a space for each space element */
    char *text;      /* raw with white space collapsed */
    int words;       /* in all */
    int index;       /* its place among the paragraphs to translate, or -1 */
    int after_space; /* raw ends with white space (or is empty): the next non-space starts a word */
    int spaced;      /* a space element came since its last chunk */
} paragraph;

typedef struct open_element {
    size_t name, name_len; /* in the part */
    size_t gt;             /* its start tag's '>' */
    int paragraph;         /* the innermost paragraph open inside it (-1: none) */
    int text, skipped;     /* its character data is text; it or an ancestor is skipped */
} open_element;

struct nmt_serve_xmltext {
    const char *xml;
    size_t len;
    const nmt_serve_xmltext_dialect *d;
    chunk *chunks;
    int chunk_count, chunk_cap;
    paragraph *paragraphs;
    int paragraph_count, paragraph_cap;
    int *translated; /* [count] the paragraphs to translate */
    int count;
    open_element stack[NMT_SERVE_XMLTEXT_MAX_DEPTH];
    int depth;
    const char *what;
};

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static int named(const char *name, size_t n, const char *const *list) {
    for (; list && *list; list++)
        if (strlen(*list) == n && memcmp(*list, name, n) == 0) return 1;
    return 0;
}

/* Fails with the part's name and the line of offset at. */
static int fail_at(const nmt_serve_xmltext *x, size_t at, const char *message) {
    long line = 1;
    for (size_t i = 0; i < at && i < x->len; i++) line += x->xml[i] == '\n';
    return nmt_error_set("%s: line %ld: %s", x->what, line, message);
}

/* Offset just past the first `what` at or after from, or SIZE_MAX. */
static size_t past(const nmt_serve_xmltext *x, size_t from, const char *what) {
    const size_t n = strlen(what);
    for (size_t i = from; i + n <= x->len; i++)
        if (memcmp(x->xml + i, what, n) == 0) return i + n;
    return SIZE_MAX;
}

/* The reference at xml[at] == '&': its code point and length, or 0 when it is none XML knows. */
static size_t reference(const char *s, size_t n, uint32_t *code) {
    static const struct {
        const char *name;
        char c;
    } predefined[] = {{"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''}};
    for (size_t k = 0; k < 5; k++) {
        const size_t l = strlen(predefined[k].name);
        if (l + 1 <= n && memcmp(s + 1, predefined[k].name, l) == 0) return *code = (uint32_t)predefined[k].c, l + 1;
    }
    if (n < 4 || s[1] != '#') return 0;
    const int hex = s[2] == 'x';
    uint32_t c = 0;
    size_t i = hex ? 3 : 2;
    for (; i < n && i < 12; i++) {
        const char d = s[i];
        const int v = d >= '0' && d <= '9'          ? d - '0'
                      : hex && d >= 'a' && d <= 'f' ? d - 'a' + 10
                      : hex && d >= 'A' && d <= 'F' ? d - 'A' + 10
                                                    : -1;
        if (v < 0) break;
        c = c * (hex ? 16u : 10u) + (uint32_t)v;
    }
    if (i == (hex ? 3u : 2u) || i >= n || s[i] != ';' || c == 0 || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF) ||
        (c < 0x20 && !is_ws((char)c)))
        return 0;
    *code = c;
    return i + 1;
}

static int grow(void **items, int *cap, int count, size_t size) {
    if (count < *cap) return 0;
    const int cap2 = *cap ? *cap * 2 : 64;
    void *p = nmt_realloc(*items, (size_t)cap2 * size);
    if (!p) return -1;
    *items = p;
    *cap = cap2;
    return 0;
}

/* Character data xml[from, to) (references checked); a chunk of its paragraph when it is text. */
static int character_data(nmt_serve_xmltext *x, size_t from, size_t to) {
    const open_element *top = x->depth ? &x->stack[x->depth - 1] : NULL;
    const int text = top && top->paragraph >= 0 && !top->skipped && (top->text || !x->d->text);
    paragraph *p = text ? &x->paragraphs[top->paragraph] : NULL;
    int words = 0;
    for (size_t i = from; i < to;) {
        uint32_t code = (unsigned char)x->xml[i];
        size_t used = 1;
        if (x->xml[i] == '&' && !(used = reference(x->xml + i, to - i, &code)))
            return fail_at(x, i, "'&' starts no entity XML knows (&amp; &lt; &gt; &quot; &apos; &#...;)");
        if (x->xml[i] == '>' && i >= from + 2 && x->xml[i - 1] == ']' && x->xml[i - 2] == ']')
            return fail_at(x, i, "\"]]>\" in character data");
        if (p) {
            char utf8[4];
            const int n = code < 0x80 ? (utf8[0] = (char)code, 1) : nmt_utf8_encode(code, utf8);
            if (code >= 0x80 && used == 1) { /* a raw multibyte character: copy its bytes */
                nmt_strbuf_append(&p->raw, x->xml + i, (size_t)nmt_utf8_length((unsigned char)x->xml[i]));
                used = (size_t)nmt_utf8_length((unsigned char)x->xml[i]);
            } else {
                nmt_strbuf_append(&p->raw, utf8, (size_t)n);
            }
            const int space = code < 0x80 && is_ws((char)code);
            words += !space && p->after_space;
            p->after_space = space;
        }
        i += used;
    }
    if (!p || from == to) return 0;
    if (grow((void **)&x->chunks, &x->chunk_cap, x->chunk_count, sizeof *x->chunks) < 0) return -1;
    chunk *c = &x->chunks[x->chunk_count++];
    *c = (chunk){from, to, SIZE_MAX, top->paragraph, words, p->spaced};
    p->spaced = 0;
    p->words += words;
    if (x->d->preserve_space && top->text) {
        const char *tag = x->xml + top->name - 1, *gt = x->xml + top->gt; /* "<name ...>" */
        int has = 0;
        for (const char *s = tag; s + 9 <= gt && !has; s++) has = memcmp(s, "xml:space", 9) == 0;
        if (!has && (x->chunk_count == 1 || x->chunks[x->chunk_count - 2].gt != top->gt)) c->gt = top->gt;
    }
    return p->raw.failed ? -1 : 0;
}

/* A start tag at xml[at] == '<': its name and attributes checked; returns the offset past it. */
static size_t start_tag(nmt_serve_xmltext *x, size_t at, int *failed) {
    size_t i = at + 1;
    const size_t name = i;
    while (i < x->len && !is_ws(x->xml[i]) && x->xml[i] != '>' && x->xml[i] != '/' && x->xml[i] != '=' &&
           x->xml[i] != '<')
        i++;
    const size_t name_len = i - name;
    if (name_len == 0 || name_len > NMT_SERVE_XMLTEXT_MAX_NAME)
        return *failed = fail_at(x, at, "a tag without a name, or with one longer than 128 bytes"), 0;
    for (;;) {
        while (i < x->len && is_ws(x->xml[i])) i++;
        if (i >= x->len) return *failed = fail_at(x, at, "a start tag that never ends"), 0;
        if (x->xml[i] == '>' || (x->xml[i] == '/' && i + 1 < x->len && x->xml[i + 1] == '>')) break;
        const size_t attr = i;
        while (i < x->len && !is_ws(x->xml[i]) && x->xml[i] != '=' && x->xml[i] != '>' && x->xml[i] != '/' &&
               x->xml[i] != '<')
            i++;
        while (i < x->len && is_ws(x->xml[i])) i++;
        if (i == attr || i >= x->len || x->xml[i] != '=')
            return *failed = fail_at(x, attr, "an attribute without '=' and a value"), 0;
        for (i++; i < x->len && is_ws(x->xml[i]);) i++;
        if (i >= x->len || (x->xml[i] != '"' && x->xml[i] != '\''))
            return *failed = fail_at(x, attr, "an attribute value without quotes"), 0;
        const char quote = x->xml[i++];
        while (i < x->len && x->xml[i] != quote && x->xml[i] != '<') i++;
        if (i >= x->len || x->xml[i] != quote)
            return *failed = fail_at(x, attr, "an attribute value that never ends"), 0;
        i++;
        if (i < x->len && !is_ws(x->xml[i]) && x->xml[i] != '>' && x->xml[i] != '/')
            return *failed = fail_at(x, i, "no space between attributes"), 0;
    }
    const int empty = x->xml[i] == '/';
    const size_t end = i + (empty ? 2 : 1);
    const char *n = x->xml + name;
    paragraph *p =
        x->depth && x->stack[x->depth - 1].paragraph >= 0 ? &x->paragraphs[x->stack[x->depth - 1].paragraph] : NULL;
    if (named(n, name_len, x->d->spaces) && p && !x->stack[x->depth - 1].skipped) {
        nmt_strbuf_append(&p->raw, " ", 1);
        p->after_space = 1;
        p->spaced = 1;
    }
    if (empty) return end;
    if (x->depth == NMT_SERVE_XMLTEXT_MAX_DEPTH) {
        *failed = fail_at(x, at, "elements nested too deep");
        return 0;
    }
    const open_element *parent = x->depth ? &x->stack[x->depth - 1] : NULL;
    open_element *e = &x->stack[x->depth++];
    *e = (open_element){name,
                        name_len,
                        i,
                        parent ? parent->paragraph : -1,
                        named(n, name_len, x->d->text),
                        (parent && parent->skipped) || named(n, name_len, x->d->skipped)};
    if (named(n, name_len, x->d->paragraphs) && !e->skipped) {
        if (grow((void **)&x->paragraphs, &x->paragraph_cap, x->paragraph_count, sizeof *x->paragraphs) < 0) {
            *failed = -1;
            return 0;
        }
        x->paragraphs[x->paragraph_count] = (paragraph){.index = -1, .after_space = 1};
        e->paragraph = x->paragraph_count++;
    }
    return end;
}

/* An end tag at xml[at] ("</"): it must close the element open last. */
static size_t end_tag(nmt_serve_xmltext *x, size_t at, int *failed) {
    size_t i = at + 2;
    const size_t name = i;
    while (i < x->len && !is_ws(x->xml[i]) && x->xml[i] != '>') i++;
    const size_t name_len = i - name;
    while (i < x->len && is_ws(x->xml[i])) i++;
    if (i >= x->len || x->xml[i] != '>') return *failed = fail_at(x, at, "an end tag that never ends"), 0;
    const open_element *top = x->depth ? &x->stack[x->depth - 1] : NULL;
    if (!top || top->name_len != name_len || memcmp(x->xml + top->name, x->xml + name, name_len) != 0) {
        char message[2 * NMT_SERVE_XMLTEXT_MAX_NAME + 64];
        snprintf(message, sizeof message, "</%.*s> closes %s%.*s%s", (int)(name_len < 128 ? name_len : 128),
                 x->xml + name, top ? "<" : "no element", top ? (int)top->name_len : 0, top ? x->xml + top->name : "",
                 top ? ">" : "");
        return *failed = fail_at(x, at, message), 0;
    }
    x->depth--;
    return i + 1;
}

static int parse(nmt_serve_xmltext *x) {
    size_t i = 0, text = 0;
    int failed = 0, elements = 0;
    if (x->len >= 3 && memcmp(x->xml, "\xEF\xBB\xBF", 3) == 0) i = text = 3;
    while (i < x->len && !failed) {
        if (x->xml[i] != '<') {
            i++;
            continue;
        }
        if (character_data(x, text, i) < 0) return -1;
        if (x->depth == 0)
            for (size_t k = text; k < i; k++)
                if (!is_ws(x->xml[k])) return fail_at(x, k, "text outside the root element");
        const char *s = x->xml + i;
        const size_t left = x->len - i;
        size_t next;
        if (left >= 4 && memcmp(s, "<!--", 4) == 0)
            next = past(x, i + 4, "-->");
        else if (left >= 9 && memcmp(s, "<![CDATA[", 9) == 0)
            next = x->depth ? past(x, i + 9, "]]>") : SIZE_MAX;
        else if (left >= 2 && s[1] == '?')
            next = past(x, i + 2, "?>");
        else if (left >= 9 && memcmp(s, "<!DOCTYPE", 9) == 0 && !elements) { /* with an internal subset in [ ] */
            size_t k = i;
            while (k < x->len && x->xml[k] != '[' && x->xml[k] != '>') k++;
            next = k < x->len && x->xml[k] == '[' ? past(x, k, "]") : k;
            if (next != SIZE_MAX) next = past(x, next, ">");
        } else if (left >= 2 && s[1] == '/')
            next = end_tag(x, i, &failed);
        else if (x->depth == 0 && elements)
            return fail_at(x, i, "a second root element");
        else
            next = (elements++, start_tag(x, i, &failed));
        if (failed) return -1;
        if (next == SIZE_MAX) return fail_at(x, i, "markup that never ends");
        i = text = next;
    }
    if (character_data(x, text, x->len) < 0) return -1;
    if (x->depth) return fail_at(x, x->len, "the document ends inside an element");
    if (!elements) return fail_at(x, 0, "no element");
    for (size_t k = text; k < x->len; k++)
        if (!is_ws(x->xml[k])) return fail_at(x, k, "text outside the root element");
    return 0;
}

/* Whether text holds a letter or a digit. */
static int has_letter_or_digit(const char *text) {
    for (size_t i = 0; text[i];) {
        const uint32_t c = nmt_utf8_next(text, &i);
        const nmt_utf8_major m = nmt_utf8_class(c);
        if (m == NMT_UTF8_LETTER || m == NMT_UTF8_NUMBER) return 1;
    }
    return 0;
}

/* p's text: raw with white space collapsed to single spaces and cut at the ends. */
static int collapse(paragraph *p) {
    const char *raw = p->raw.data ? p->raw.data : "";
    if (!(p->text = nmt_malloc(p->raw.len + 1))) return -1;
    size_t n = 0;
    for (size_t i = 0; raw[i]; i++) {
        if (!is_ws(raw[i]))
            p->text[n++] = raw[i];
        else if (n && p->text[n - 1] != ' ')
            p->text[n++] = ' ';
    }
    if (n && p->text[n - 1] == ' ') n--;
    p->text[n] = '\0';
    return 0;
}

int nmt_serve_xmltext_read(const char *xml, size_t len, const nmt_serve_xmltext_dialect *d, const char *what,
                           nmt_serve_xmltext **out) {
    nmt_serve_xmltext *x = nmt_calloc(1, sizeof *x);
    *out = x;
    if (!x) return -1;
    x->xml = xml;
    x->len = len;
    x->d = d;
    x->what = what;
    if (memchr(xml, '\0', len)) return nmt_error_set("%s: a NUL byte (not UTF-8 XML)", what);
    const long bad = nmt_utf8_invalid_at(xml, len);
    if (bad >= 0) return nmt_error_set("%s: invalid UTF-8 at byte %ld", what, bad + 1);
    if (parse(x) < 0) return -1;
    if (!(x->translated = nmt_calloc(x->paragraph_count ? (size_t)x->paragraph_count : 1, sizeof *x->translated)))
        return -1;
    for (int i = 0; i < x->paragraph_count; i++) {
        paragraph *p = &x->paragraphs[i];
        if (p->raw.failed || collapse(p) < 0) return -1;
        if (p->words > 0 && has_letter_or_digit(p->text)) {
            p->index = x->count;
            x->translated[x->count++] = i;
        }
    }
    return 0;
}

int nmt_serve_xmltext_count(const nmt_serve_xmltext *x) { return x->count; }
const char *nmt_serve_xmltext_paragraph(const nmt_serve_xmltext *x, int i) {
    return x->paragraphs[x->translated[i]].text;
}

/* The target words of a paragraph: offsets of each word's start and end in its translation. */
typedef struct target {
    const char *text;
    size_t *begin, *end;
    int count;
    int source_before; /* source words in the chunks written so far */
    int written;       /* target words written so far */
} target;

static int split_words(const char *text, target *t) {
    const size_t n = strlen(text);
    t->text = text;
    t->count = 0;
    if (!(t->begin = nmt_malloc((n / 2 + 1) * sizeof *t->begin)) ||
        !(t->end = nmt_malloc((n / 2 + 1) * sizeof *t->end)))
        return -1;
    for (size_t i = 0; i < n;) {
        while (i < n && is_ws(text[i])) i++;
        if (i == n) break;
        t->begin[t->count] = i;
        while (i < n && !is_ws(text[i])) i++;
        t->end[t->count++] = i;
    }
    return 0;
}

/* Appends text[0, n) escaped for XML character data. */
static void escape(nmt_strbuf *out, const char *text, size_t n) {
    for (size_t i = 0; i < n;) {
        size_t run = i;
        while (run < n && text[run] != '&' && text[run] != '<' && text[run] != '>') run++;
        nmt_strbuf_append(out, text + i, run - i);
        if (run < n) nmt_strbuf_puts(out, text[run] == '&' ? "&amp;" : text[run] == '<' ? "&lt;" : "&gt;");
        i = run + 1;
    }
}

int nmt_serve_xmltext_write(const nmt_serve_xmltext *x, const char *const *translations, nmt_strbuf *out) {
    target *targets = nmt_calloc(x->count ? (size_t)x->count : 1, sizeof *targets);
    int rc = -1;
    if (!targets) return -1;
    for (int i = 0; i < x->count; i++)
        if (split_words(translations[i], &targets[i]) < 0) goto done;
    size_t at = 0; /* written up to xml[at] */
    for (int k = 0; k < x->chunk_count; k++) {
        const chunk *c = &x->chunks[k];
        const paragraph *p = &x->paragraphs[c->paragraph];
        if (p->index < 0) continue;
        target *t = &targets[p->index];
        /* its share: the target words from where the source words before it fall, rounded, to where
         * the source words up to its end fall */
        const long from = t->written, to = ((long)t->count * (t->source_before + c->words) + p->words / 2) / p->words;
        t->source_before += c->words;
        const int gets = to > from;
        if (gets && c->gt != SIZE_MAX) {
            nmt_strbuf_append(out, x->xml + at, c->gt - at);
            nmt_strbuf_puts(out, " xml:space=\"preserve\"");
            at = c->gt;
        }
        nmt_strbuf_append(out, x->xml + at, c->begin - at);
        at = c->end;
        if (!gets) continue;
        if (from > 0 && !c->spaced) nmt_strbuf_puts(out, " ");
        escape(out, t->text + t->begin[from], t->end[to - 1] - t->begin[from]);
        t->written = (int)to;
    }
    nmt_strbuf_append(out, x->xml + at, x->len - at);
    rc = out->failed ? -1 : 0;
done:
    for (int i = 0; i < x->count; i++) {
        free(targets[i].begin);
        free(targets[i].end);
    }
    free(targets);
    return rc;
}

void nmt_serve_xmltext_free(nmt_serve_xmltext *x) {
    if (!x) return;
    for (int i = 0; i < x->paragraph_count; i++) {
        nmt_strbuf_free(&x->paragraphs[i].raw);
        free(x->paragraphs[i].text);
    }
    free(x->paragraphs);
    free(x->chunks);
    free(x->translated);
    free(x);
}
