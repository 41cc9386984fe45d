/* segment: texts into lines and sentences and back (see segment.h for the rules). */
#include "serve/segment.h"

#include "serve/html.h"
#include "serve/prefixes.h"
#include "base/utf8.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of a closing quote or bracket at p (0 if none). */
static int closing(const unsigned char *p) {
    if (*p == '"' || *p == '\'' || *p == ')' || *p == ']') return 1;
    /* ” ’ » */
    if (p[0] == 0xE2 && p[1] == 0x80 && (p[2] == 0x9D || p[2] == 0x99)) return 3;
    if (p[0] == 0xC2 && p[1] == 0xBB) return 2;
    return 0;
}

/* Bytes of an opening quote or bracket at p (0 if none): " ' ( [ “ ‘ « ¿ ¡ */
static int opening(const unsigned char *p) {
    if (*p == '"' || *p == '\'' || *p == '(' || *p == '[') return 1;
    if (p[0] == 0xE2 && p[1] == 0x80 && (p[2] == 0x9C || p[2] == 0x98)) return 3;
    return p[0] == 0xC2 && (p[1] == 0xAB || p[1] == 0xBF || p[1] == 0xA1) ? 2 : 0;
}

/* Whether the character at p is an upper-case letter (any script whose letters have case). */
static int upper(const unsigned char *p) {
    if (*p < 0x80) return *p >= 'A' && *p <= 'Z';
    const int n = nmt_utf8_length(*p);
    if (n < 2 || memchr(p, '\0', (size_t)n) || nmt_utf8_invalid_at((const char *)p, (size_t)n) >= 0) return 0;
    size_t at = 0;
    if (nmt_utf8_class(nmt_utf8_next((const char *)p, &at)) != NMT_UTF8_LETTER) return 0;
    char low[NMT_UTF8_LOWER_MAX(4)];
    const size_t len = nmt_utf8_lower((const char *)p, (size_t)n, low);
    return len != (size_t)n || memcmp(low, p, len) != 0;
}

/* Whether a sentence may start at p: opening quotes or brackets, then an upper-case letter or a digit;
 * *digit tells whether it is a digit. */
static int sentence_start(const unsigned char *p, int *digit) {
    for (int n; (n = opening(p)) > 0;) p += n;
    while (*p == ' ') p++;
    *digit = *p >= '0' && *p <= '9';
    return *digit || upper(p);
}

/* Whether byte c may be part of a prefix (Moses' [\w.-], non-ASCII letters included). */
static int prefix_byte(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
           c >= 0x80;
}

/* Whether the '.' at p, which ends the token that starts at `token`, is part of an abbreviation that
 * does not end a sentence before the next word (`digit`: it starts with a digit). */
static int nonbreaking(const char *token, const char *p, int digit, const nmt_serve_prefixes *lists) {
    const char *dots = p;
    while (dots > token && dots[-1] == '.') dots--;
    const char *word = dots;
    while (word > token && prefix_byte((unsigned char)word[-1])) word--;
    /* A closing quote before the dots (`Dr”.`) makes it no prefix (ASCII ones already stop `word`). */
    const int quoted = (dots - word >= 3 && closing((const unsigned char *)dots - 3) == 3) ||
                       (dots - word >= 2 && closing((const unsigned char *)dots - 2) == 2);
    if (word < dots && !quoted) {
        const nmt_serve_prefix kind = nmt_serve_prefixes_find(lists, word, (size_t)(dots - word));
        if (kind == NMT_SERVE_PREFIX_ALWAYS || (kind == NMT_SERVE_PREFIX_NUMERIC && digit)) return 1;
    }
    /* An upper-case acronym: "U.S." */
    const char *caps = dots;
    while (caps > word && ((caps[-1] >= 'A' && caps[-1] <= 'Z') || caps[-1] == '-')) caps--;
    return caps < dots && caps > word && caps[-1] == '.';
}

/* If a sentence ends at p (its final mark) in the line that starts at `line`, the position of the
 * space after it, else NULL. */
static char *sentence_end(const char *line, char *p, const nmt_serve_prefixes *lists) {
    unsigned char *q = (unsigned char *)p;
    if (*q == '.' || *q == '!' || *q == '?') q++;
    else if (q[0] == 0xE2 && q[1] == 0x80 && q[2] == 0xA6) q += 3; /* … */
    else return NULL;
    for (int n; (n = closing(q)) > 0;) q += n;
    if (*q != ' ') return NULL;
    unsigned char *next = q;
    while (*next == ' ') next++;
    int digit;
    if (!sentence_start(next, &digit)) return NULL;
    if (*p == '.' && (char *)q == p + 1) {
        const char *token = p;
        while (token > line && token[-1] != ' ' && token[-1] != '\0') token--; /* '\0': a cut before */
        if (nonbreaking(token, p, digit, lists)) return NULL;
    }
    return (char *)q;
}

static const char no_glue[] = "", line_glue[] = "\n", crlf_glue[] = "\r\n", sentence_glue[] = " ";

/* Adds a segment (the arrays have room: they are sized by a first counting pass). */
static void add(nmt_serve_segments *s, const char *text, const char *glue) {
    s->segments[s->count] = text;
    s->glue[s->count] = glue;
    s->count++;
}

/* Cuts one line in place into sentences by `lists`' rules (none when NULL), or only counts them when s
 * is NULL. */
static long cut_line(char *line, const nmt_serve_prefixes *lists, nmt_serve_segments *s, const char *glue) {
    long n = 1;
    if (s) add(s, line, glue);
    for (char *p = line; lists && *p; p++) {
        char *space = sentence_end(line, p, lists);
        if (!space) continue;
        char *next = space;
        while (*next == ' ') next++;
        if (s) {
            *space = '\0';
            add(s, next, sentence_glue);
        }
        n++;
        p = next - 1;
    }
    return n;
}

/* Cuts a text in place into lines and sentences (or counts them when s is NULL); `glue` goes before
 * its first segment, and each line's own break ("\n" or "\r\n") before the line after it. */
static long cut_text(char *text, const nmt_serve_prefixes *lists, nmt_serve_segments *s, const char *glue) {
    long n = 0;
    for (char *line = text;;) {
        char *nl = strchr(line, '\n');
        const int crlf = nl && nl > line && nl[-1] == '\r';
        if (nl && s) {
            *nl = '\0';
            if (crlf) nl[-1] = '\0';
        }
        n += cut_line(line, s ? lists : NULL, s, glue);
        if (!s && lists) { /* count the sentence ends of this line */
            for (char *p = line; *p && p != nl; p++)
                if (sentence_end(line, p, lists)) n++;
        }
        if (!nl) break;
        glue = crlf ? crlf_glue : line_glue;
        line = nl + 1;
    }
    return n;
}

/* ---- HTML: each stretch of text is cut, the markup between becomes glue ---- */

typedef struct html_cut {
    nmt_serve_segments *s; /* NULL while counting */
    const char *src;
    char *arena;           /* filling: the next free byte of s->copy */
    char *scratch;         /* counting: room to decode one stretch */
    size_t glue_from;      /* where the markup not yet given to a segment begins */
    long count;            /* counting: segments */
    size_t bytes;          /* counting: arena bytes */
    const nmt_serve_prefixes *lists; /* sentence rules, NULL: lines only */
} html_cut;

/* Whether decoded text holds anything to translate: a letter or digit, or a non-ASCII character
 * other than a no-break space. */
static int has_words(const unsigned char *t) {
    while (*t) {
        if (t[0] == 0xC2 && t[1] == 0xA0) {
            t += 2;
            continue;
        }
        if ((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || (*t >= '0' && *t <= '9') || *t >= 0x80) return 1;
        t++;
    }
    return 0;
}

static void html_text(void *ctx, size_t begin, size_t end, int preformatted) {
    html_cut *h = ctx;
    while (begin < end && strchr(" \t\n\r\f", h->src[begin])) begin++;
    while (end > begin && strchr(" \t\n\r\f", h->src[end - 1])) end--;
    if (begin == end) return;
    const size_t glue_len = begin - h->glue_from;
    char *text = h->s ? h->arena + glue_len + 1 : h->scratch; /* decoded after the room for its glue */
    const size_t len = nmt_serve_html_decode(h->src + begin, end - begin, preformatted, text);
    if (!has_words((const unsigned char *)text)) return; /* stays in the markup around it */
    if (h->s) {
        memcpy(h->arena, h->src + h->glue_from, glue_len);
        h->arena[glue_len] = '\0';
        cut_text(text, h->lists, h->s, h->arena);
        h->arena = text + len + 1;
    } else {
        h->count += cut_text(text, h->lists, NULL, NULL);
        h->bytes += glue_len + len + 2;
    }
    h->glue_from = end;
}

/* Cuts html text i (counting when h->s is NULL); the markup after its last stretch becomes its tail. */
static int html_cut_text(html_cut *h, const char *text, int i) {
    const size_t len = strlen(text);
    h->src = text;
    h->glue_from = 0;
    if (nmt_serve_html_scan(text, len, html_text, h) < 0) return -1;
    if (!h->s) {
        h->bytes += len - h->glue_from + 1;
        return 0;
    }
    memcpy(h->arena, text + h->glue_from, len - h->glue_from);
    h->arena[len - h->glue_from] = '\0';
    h->s->tail[i] = h->arena;
    h->arena += len - h->glue_from + 1;
    return 0;
}

/* Sizes the arrays and the arena of n texts: plain texts are copied and cut in place, HTML gets
 * its glue and decoded stretches. */
static int count_segments(const char *const *texts, int n, const nmt_serve_prefixes *lists, int html, nmt_serve_segments *out,
                          long *count) {
    size_t bytes = 1, longest = 0;
    for (int i = 0; i < n; i++) {
        const size_t len = strlen(texts[i]);
        bytes += len + 1;
        longest = len > longest ? len : longest;
    }
    html_cut h = {.lists = lists, .scratch = html ? nmt_malloc(longest + 1) : NULL};
    if (html && !h.scratch) return -1;
    out->copy = html ? NULL : nmt_malloc(bytes);
    if (!html && !out->copy) return -1;
    *count = 0;
    char *at = out->copy;
    for (int i = 0; i < n && *count + h.count <= NMT_SERVE_MAX_SEGMENTS; i++) {
        const size_t len = strlen(texts[i]);
        if (html) {
            if (html_cut_text(&h, texts[i], i) < 0) {
                free(h.scratch);
                return -1;
            }
            continue;
        }
        memcpy(at, texts[i], len + 1); /* counted on the copy, not cut yet */
        *count += cut_text(at, lists, NULL, NULL);
        at += len + 1;
    }
    free(h.scratch);
    *count += h.count;
    if (*count > NMT_SERVE_MAX_SEGMENTS)
        return nmt_error_set("q: more than %d lines and sentences", NMT_SERVE_MAX_SEGMENTS);
    if (html && !(out->copy = nmt_malloc(h.bytes + 1))) return -1;
    return 0;
}

int nmt_serve_segment(const char *const *texts, int n, int sentences, int html, const char *lang,
                      nmt_serve_segments *out) {
    const nmt_serve_prefixes *lists = sentences ? nmt_serve_prefixes_of(lang) : NULL;
    memset(out, 0, sizeof *out);
    out->html = html;
    long count;
    out->first = nmt_malloc(((size_t)n + 1) * sizeof *out->first);
    out->tail = nmt_malloc(((size_t)n + 1) * sizeof *out->tail);
    if (!out->first || !out->tail || count_segments(texts, n, lists, html, out, &count) < 0) return -1;
    out->segments = nmt_malloc(((size_t)count + 1) * sizeof *out->segments);
    out->glue = nmt_malloc(((size_t)count + 1) * sizeof *out->glue);
    if (!out->segments || !out->glue) return -1;
    html_cut h = {.s = out, .arena = out->copy, .lists = lists};
    char *at = out->copy;
    for (int i = 0; i < n; i++) {
        out->first[i] = out->count;
        if (html) {
            if (html_cut_text(&h, texts[i], i) < 0) return -1;
            continue;
        }
        const size_t len = strlen(at);
        cut_text(at, lists, out, no_glue);
        out->tail[i] = no_glue;
        at += len + 1;
    }
    out->first[n] = out->count;
    return 0;
}

void nmt_serve_segments_free(nmt_serve_segments *s) {
    free(s->copy);
    free(s->segments);
    free(s->glue);
    free(s->tail);
    free(s->first);
    memset(s, 0, sizeof *s);
}

void nmt_serve_text_free(nmt_serve_text *t) {
    for (int k = 0; k < t->count; k++) free(t->hyps[k].text);
    free(t->hyps);
    free(t->pairs);
    memset(t, 0, sizeof *t);
}

/* The bytes a segment's translation takes in the joined text. */
static size_t joined_len(const nmt_serve_segments *s, const char *text) {
    return s->html ? nmt_serve_html_escaped_len(text) : strlen(text);
}

/* Joins the segments a..b-1 of text i into t (a text without segments, HTML with no text in it,
 * becomes its markup). */
static int join_one(const nmt_serve_segments *s, int i, const nmt_serve_text *parts, nmt_serve_text *t) {
    const int a = s->first[i], b = s->first[i + 1];
    int hyps = a < b ? parts[a].count : 1, pairs = 0, aligned = a < b;
    for (int l = a; l < b; l++) {
        if (parts[l].count < hyps) hyps = parts[l].count;
        pairs += parts[l].pair_count;
        aligned &= parts[l].pairs != NULL;
    }
    t->hyps = nmt_calloc((size_t)hyps + 1, sizeof *t->hyps);
    if (!t->hyps) return -1;
    t->count = hyps;
    for (int k = 0; k < hyps; k++) {
        size_t bytes = strlen(s->tail[i]) + 1;
        for (int l = a; l < b; l++) bytes += strlen(s->glue[l]) + joined_len(s, parts[l].hyps[k].text);
        char *text = t->hyps[k].text = nmt_malloc(bytes);
        if (!text) return -1;
        size_t at = 0;
        for (int l = a; l < b; l++) {
            const nmt_serve_hypothesis *h = &parts[l].hyps[k];
            const size_t glue = strlen(s->glue[l]), n = strlen(h->text);
            memcpy(text + at, s->glue[l], glue);
            at += glue;
            if (s->html) {
                at += nmt_serve_html_escape(h->text, text + at);
            } else {
                memcpy(text + at, h->text, n);
                at += n;
            }
            t->hyps[k].score += h->score;
            t->hyps[k].logprob += h->logprob;
        }
        strcpy(text + at, s->tail[i]);
    }
    if (!aligned) return 0;
    t->pairs = nmt_malloc((2 * (size_t)pairs + 1) * sizeof(int));
    if (!t->pairs) return -1;
    for (int l = a; l < b; l++) {
        for (int p = 0; p < parts[l].pair_count; p++) {
            t->pairs[2 * t->pair_count] = parts[l].pairs[2 * p] + t->source_pieces;
            t->pairs[2 * t->pair_count + 1] = parts[l].pairs[2 * p + 1] + t->target_pieces;
            t->pair_count++;
        }
        t->source_pieces += parts[l].source_pieces;
        t->target_pieces += parts[l].target_pieces;
    }
    return 0;
}

int nmt_serve_join(const nmt_serve_segments *s, int n, const nmt_serve_text *parts, nmt_serve_text *out) {
    memset(out, 0, (size_t)n * sizeof *out);
    for (int i = 0; i < n; i++)
        if (join_one(s, i, parts, &out[i]) < 0) {
            for (int j = 0; j <= i; j++) nmt_serve_text_free(&out[j]);
            return -1;
        }
    return 0;
}
