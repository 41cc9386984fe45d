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

/* ---- HTML: blocks of text with their inline tags; the markup between blocks becomes glue ---- */

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

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

/* A block or tag while the texts are read: strings as offsets into the arena, which still grows. */
typedef struct block_at {
    size_t before, text, cut; /* the markup before it, its text, the copy of its text cut into segments */
    int first_tag, tags;
} block_at;

typedef struct tag_at {
    nmt_serve_inline_tag tag; /* open and close unset */
    size_t open, close;       /* arena offsets of the markup (when its length is not 0) */
} tag_at;

typedef struct builder {
    nmt_strbuf arena;          /* markup and texts, each NUL-terminated */
    block_at *blocks;
    int block_count, block_room;
    tag_at *tags;
    int tag_count, tag_room;
    const char *src;           /* the text being read */
    size_t glue_from;          /* where its markup not yet given to a block begins */
    /* the block being read */
    int active;
    size_t begin, end;         /* its bytes in src (end: after its last word or tag) */
    nmt_strbuf text;           /* its text */
    size_t kept;               /* the length of its text at `end` */
    int first_tag;
    int open[NMT_SERVE_HTML_MAX_DEPTH]; /* its inline elements open now: their tags and names */
    char names[NMT_SERVE_HTML_MAX_DEPTH][16];
    int depth;
    char *scratch;             /* room to decode one stretch */
    int failed;
} builder;

/* Appends src[0..n) and a NUL to the arena; returns its offset. */
static size_t keep(builder *b, const char *src, size_t n) {
    const size_t at = b->arena.len;
    nmt_strbuf_append(&b->arena, src, n);
    nmt_strbuf_append(&b->arena, "", 1);
    return at;
}

/* Makes room for one more of *count items of `size` bytes in *items. */
static int grow(void **items, int *room, int count, size_t size) {
    if (count < *room) return 0;
    if (count >= NMT_SERVE_MAX_SEGMENTS * 4)
        return nmt_error_set("q: more than %d HTML elements", 4 * NMT_SERVE_MAX_SEGMENTS);
    const int more = *room ? 2 * *room : 16;
    void *p = nmt_realloc(*items, (size_t)more * size);
    if (!p) return -1;
    *items = p;
    *room = more;
    return 0;
}

static void start_block(builder *b, size_t at) {
    if (b->active) return;
    b->active = 1;
    b->begin = b->end = at;
    b->text.len = 0;
    b->kept = 0;
    b->first_tag = b->tag_count;
    b->depth = 0;
}

/* Ends the block being read: kept when it holds words, else left to the markup around it. */
static void finish_block(builder *b) {
    if (!b->active) return;
    b->active = 0;
    nmt_strbuf_append(&b->text, "", 0); /* a text that got nothing still needs its NUL */
    if (b->text.failed) {
        b->failed = 1;
        return;
    }
    /* No white space at its ends (after tags that start it, before tags that end it: <pre> keeps it) */
    size_t lead = 0;
    while (b->kept > 0 && is_space(b->text.data[b->kept - 1])) b->kept--;
    while (lead < b->kept && is_space(b->text.data[lead])) lead++;
    memmove(b->text.data, b->text.data + lead, b->kept - lead);
    b->kept -= lead;
    b->text.len = b->kept;
    b->text.data[b->kept] = '\0';
    for (int d = 0; d < b->depth; d++) b->tags[b->open[d]].tag.end = b->kept + lead; /* unclosed */
    for (int t = b->first_tag; t < b->tag_count; t++) {
        nmt_serve_inline_tag *tag = &b->tags[t].tag;
        tag->begin = tag->begin > lead ? tag->begin - lead : 0;
        tag->end = tag->end > lead ? tag->end - lead : 0;
        tag->end = tag->end < b->kept ? tag->end : b->kept;
        tag->begin = tag->begin < tag->end ? tag->begin : tag->end;
    }
    if (!has_words((const unsigned char *)b->text.data)) {
        b->tag_count = b->first_tag;
        return;
    }
    if (grow((void **)&b->blocks, &b->block_room, b->block_count, sizeof *b->blocks) < 0) {
        b->failed = 1;
        return;
    }
    block_at *k = &b->blocks[b->block_count++];
    k->before = keep(b, b->src + b->glue_from, b->begin - b->glue_from);
    k->text = keep(b, b->text.data, b->kept);
    k->cut = keep(b, b->text.data, b->kept);
    k->first_tag = b->first_tag;
    k->tags = b->tag_count - b->first_tag;
    b->glue_from = b->end;
}

/* Appends decoded text to the block, white space collapsed across stretches unless preformatted. */
static void add_text(builder *b, const char *src, size_t n, int preformatted) {
    size_t len = nmt_serve_html_decode(src, n, preformatted, b->scratch);
    const char *t = b->scratch;
    if (!preformatted && *t == ' ' && (b->text.len == 0 || b->text.data[b->text.len - 1] == ' ')) t++, len--;
    nmt_strbuf_append(&b->text, t, len);
}

/* A new tag of the block, its markup src[begin, end) kept as its start tag. */
static tag_at *add_tag(builder *b, size_t begin, size_t end) {
    if (grow((void **)&b->tags, &b->tag_room, b->tag_count, sizeof *b->tags) < 0) {
        b->failed = 1;
        return NULL;
    }
    tag_at *t = &b->tags[b->tag_count++];
    memset(t, 0, sizeof *t);
    t->tag.begin = t->tag.end = b->text.len;
    t->tag.parent = b->depth ? b->open[b->depth - 1] - b->first_tag : -1;
    t->open = keep(b, b->src + begin, end - begin);
    t->tag.open_len = end - begin;
    return t;
}

static void on_piece(void *ctx, nmt_serve_html_kind kind, size_t begin, size_t end, int preformatted,
                     const char *name) {
    builder *b = ctx;
    if (b->failed) return;
    int d = b->active ? b->depth - 1 : -1; /* an end tag closes the nearest open element of its name */
    while (kind == NMT_SERVE_HTML_CLOSE && d >= 0 && strcmp(b->names[d], name) != 0) d--;
    /* An end tag whose start tag came before the block may close elements around the block (a <pre>):
     * it stays where it is, between blocks. */
    if (kind == NMT_SERVE_HTML_BREAK || (kind == NMT_SERVE_HTML_CLOSE && d < 0)) {
        finish_block(b);
        return;
    }
    if (kind == NMT_SERVE_HTML_TEXT) {
        size_t first = begin, last = end;
        while (first < end && is_space(b->src[first])) first++;
        while (last > first && is_space(b->src[last - 1])) last--;
        if (!b->active) {
            if (first == end) return; /* white space between blocks stays in the markup */
            start_block(b, first);
            begin = first;
        }
        if (last == first) { /* white space inside the block */
            add_text(b, b->src + begin, end - begin, preformatted);
            return;
        }
        add_text(b, b->src + begin, last - begin, preformatted);
        b->end = last;
        b->kept = b->text.len;
        add_text(b, b->src + last, end - last, preformatted); /* kept only if more of the block follows */
        return;
    }
    start_block(b, begin);
    b->end = end;
    b->kept = b->text.len;
    if (kind == NMT_SERVE_HTML_POINT) {
        add_tag(b, begin, end);
        return;
    }
    if (kind == NMT_SERVE_HTML_CLOSE) {
        for (int e = d; e < b->depth; e++) b->tags[b->open[e]].tag.end = b->text.len;
        tag_at *t = &b->tags[b->open[d]];
        t->close = keep(b, b->src + begin, end - begin);
        t->tag.close_len = end - begin;
        b->depth = d;
        return;
    }
    tag_at *t = add_tag(b, begin, end); /* a start tag or a void element */
    if (t && kind == NMT_SERVE_HTML_OPEN && b->depth < NMT_SERVE_HTML_MAX_DEPTH) {
        b->open[b->depth] = b->tag_count - 1;
        snprintf(b->names[b->depth++], sizeof b->names[0], "%s", name);
    }
}

/* Reads html text i into the builder's blocks; its markup after the last block is kept as its tail. */
static int read_html(builder *b, const char *text, size_t *tail) {
    const size_t len = strlen(text);
    b->src = text;
    b->glue_from = 0;
    b->active = 0;
    if (nmt_serve_html_scan(text, len, on_piece, b) < 0) return -1;
    finish_block(b);
    *tail = keep(b, text + b->glue_from, len - b->glue_from);
    return b->failed || b->arena.failed ? -1 : 0;
}

/* Cuts HTML texts: blocks of text (their inline tags recorded), each cut into lines and sentences. */
static int segment_html(const char *const *texts, int n, const nmt_serve_prefixes *lists, nmt_serve_segments *out) {
    builder *b = nmt_calloc(1, sizeof *b);
    size_t longest = 0, *tail = nmt_malloc(((size_t)n + 1) * sizeof *tail);
    int *blocks_of = nmt_malloc(((size_t)n + 1) * sizeof *blocks_of), rc = -1;
    for (int i = 0; i < n; i++) longest = strlen(texts[i]) > longest ? strlen(texts[i]) : longest;
    if (!b || !tail || !blocks_of || !(b->scratch = nmt_malloc(longest + 1))) goto done;
    for (int i = 0; i < n; i++) {
        blocks_of[i] = b->block_count;
        if (read_html(b, texts[i], &tail[i]) < 0) goto done;
    }
    blocks_of[n] = b->block_count;
    long count = 0;
    for (int k = 0; k < b->block_count && count <= NMT_SERVE_MAX_SEGMENTS; k++)
        count += cut_text(b->arena.data + b->blocks[k].cut, lists, NULL, NULL);
    if (count > NMT_SERVE_MAX_SEGMENTS) {
        nmt_error_set("q: more than %d lines and sentences", NMT_SERVE_MAX_SEGMENTS);
        goto done;
    }
    out->segments = nmt_malloc(((size_t)count + 1) * sizeof *out->segments);
    out->glue = nmt_malloc(((size_t)count + 1) * sizeof *out->glue);
    out->blocks = nmt_malloc(((size_t)b->block_count + 1) * sizeof *out->blocks);
    out->tags = nmt_malloc(((size_t)b->tag_count + 1) * sizeof *out->tags);
    out->first_block = nmt_malloc(((size_t)n + 1) * sizeof *out->first_block);
    if (!out->segments || !out->glue || !out->blocks || !out->tags || !out->first_block) goto done;
    /* The arena is whole: offsets become pointers. */
    char *arena = b->arena.data;
    for (int t = 0; t < b->tag_count; t++) {
        out->tags[t] = b->tags[t].tag;
        out->tags[t].open = arena + b->tags[t].open;
        out->tags[t].close = arena + b->tags[t].close;
    }
    for (int k = 0; k < b->block_count; k++) {
        const block_at *a = &b->blocks[k];
        out->blocks[k] = (nmt_serve_block){arena + a->before, arena + a->text, out->tags + a->first_tag, a->tags,
                                           out->count};
        cut_text(arena + a->cut, lists, out, no_glue);
    }
    out->block_count = b->block_count;
    for (int i = 0; i <= n; i++) {
        out->first_block[i] = blocks_of[i];
        out->first[i] = blocks_of[i] < b->block_count ? out->blocks[blocks_of[i]].first : out->count;
        if (i < n) out->tail[i] = arena + tail[i];
    }
    out->copy = arena;
    b->arena.data = NULL;
    rc = 0;
done:
    if (b) {
        nmt_strbuf_free(&b->arena);
        nmt_strbuf_free(&b->text);
        free(b->blocks);
        free(b->tags);
        free(b->scratch);
    }
    free(b);
    free(tail);
    free(blocks_of);
    return rc;
}

/* ---- plain text: copied, then cut in place ---- */

static int segment_plain(const char *const *texts, int n, const nmt_serve_prefixes *lists, nmt_serve_segments *out) {
    size_t bytes = 1;
    for (int i = 0; i < n; i++) bytes += strlen(texts[i]) + 1;
    if (!(out->copy = nmt_malloc(bytes))) return -1;
    long count = 0;
    char *at = out->copy;
    for (int i = 0; i < n && count <= NMT_SERVE_MAX_SEGMENTS; i++) {
        const size_t len = strlen(texts[i]);
        memcpy(at, texts[i], len + 1); /* counted on the copy, not cut yet */
        count += cut_text(at, lists, NULL, NULL);
        at += len + 1;
    }
    if (count > NMT_SERVE_MAX_SEGMENTS)
        return nmt_error_set("q: more than %d lines and sentences", NMT_SERVE_MAX_SEGMENTS);
    out->segments = nmt_malloc(((size_t)count + 1) * sizeof *out->segments);
    out->glue = nmt_malloc(((size_t)count + 1) * sizeof *out->glue);
    if (!out->segments || !out->glue) return -1;
    at = out->copy;
    for (int i = 0; i < n; i++) {
        out->first[i] = out->count;
        const size_t len = strlen(at);
        cut_text(at, lists, out, no_glue);
        out->tail[i] = no_glue;
        at += len + 1;
    }
    out->first[n] = out->count;
    return 0;
}

int nmt_serve_segment(const char *const *texts, int n, int sentences, int html, const char *lang,
                      nmt_serve_segments *out) {
    memset(out, 0, sizeof *out);
    out->html = html;
    const nmt_serve_prefixes *lists = sentences ? nmt_serve_prefixes_of(lang) : NULL;
    out->first = nmt_malloc(((size_t)n + 1) * sizeof *out->first);
    out->tail = nmt_malloc(((size_t)n + 1) * sizeof *out->tail);
    if (!out->first || !out->tail) return -1;
    return html ? segment_html(texts, n, lists, out) : segment_plain(texts, n, lists, out);
}

void nmt_serve_segments_free(nmt_serve_segments *s) {
    free(s->copy);
    free(s->segments);
    free(s->glue);
    free(s->tail);
    free(s->first);
    free(s->blocks);
    free(s->tags);
    free(s->first_block);
    memset(s, 0, sizeof *s);
}

void nmt_serve_text_free(nmt_serve_text *t) {
    for (int k = 0; k < t->count; k++) free(t->hyps[k].text);
    free(t->hyps);
    free(t->pairs);
    free(t->source_word);
    free(t->target_word);
    memset(t, 0, sizeof *t);
}

/* The number of words (runs of non-space bytes) of text. */
static int count_words(const char *text) {
    int n = 0;
    for (const char *p = text; *p; p++)
        if (!is_space(*p) && (p == text || is_space(p[-1]))) n++;
    return n;
}

/* The word alignment of block k's best translation from its segments' piece alignments and the words
 * of their pieces, words counted over the block; -1 when a segment has none (or memory ran out), else
 * the number of pairs in *pairs (to free). */
static int block_word_pairs(const nmt_serve_segments *s, int k, const nmt_serve_text *parts, int **pairs) {
    const int a = s->blocks[k].first, b = k + 1 < s->block_count ? s->blocks[k + 1].first : s->count;
    size_t room = 1;
    for (int l = a; l < b; l++) {
        if (!parts[l].pairs || !parts[l].source_word || !parts[l].target_word || parts[l].count < 1) return -1;
        room += (size_t)parts[l].pair_count;
    }
    if (!(*pairs = nmt_malloc(2 * room * sizeof **pairs))) return -1;
    int n = 0, source_words = 0, target_words = 0;
    for (int l = a; l < b; l++) {
        const nmt_serve_text *p = &parts[l];
        const int sw = count_words(s->segments[l]), tw = count_words(p->hyps[0].text);
        for (int q = 0; q < p->pair_count; q++) {
            const int sp = p->pairs[2 * q], tp = p->pairs[2 * q + 1];
            if (sp < 0 || sp >= p->source_pieces || tp < 0 || tp >= p->target_pieces) continue;
            if (p->source_word[sp] >= sw || p->target_word[tp] >= tw) continue; /* words the text does not have */
            (*pairs)[2 * n] = p->source_word[sp] + source_words;
            (*pairs)[2 * n + 1] = p->target_word[tp] + target_words;
            n++;
        }
        source_words += sw;
        target_words += tw;
    }
    return n;
}

/* Appends hypothesis k of HTML text i: each block's markup before it, its translation (its segments'
 * translations joined) with its inline tags placed, then the text's tail. */
static int join_html(const nmt_serve_segments *s, int i, const nmt_serve_text *parts, int k, nmt_strbuf *out,
                     nmt_strbuf *target) {
    for (int bk = s->first_block[i]; bk < s->first_block[i + 1]; bk++) {
        const nmt_serve_block *block = &s->blocks[bk];
        const int a = block->first, b = bk + 1 < s->block_count ? s->blocks[bk + 1].first : s->count;
        target->len = 0;
        for (int l = a; l < b; l++) {
            if (l > a) nmt_strbuf_puts(target, s->glue[l]);
            nmt_strbuf_puts(target, parts[l].hyps[k].text);
        }
        int *pairs = NULL;
        const int n = k == 0 ? block_word_pairs(s, bk, parts, &pairs) : -1;
        nmt_strbuf_puts(out, block->before);
        const int rc = target->failed ? -1
                                      : nmt_serve_inline_tags(block->text, block->tags, block->tag_count, target->data,
                                                              n >= 0 ? pairs : NULL, n, out);
        free(pairs);
        if (rc < 0) return -1;
    }
    nmt_strbuf_puts(out, s->tail[i]);
    return out->failed ? -1 : 0;
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
    nmt_strbuf text = {0}, target = {0};
    for (int k = 0; k < hyps; k++) {
        text.len = 0;
        if (s->html) {
            join_html(s, i, parts, k, &text, &target);
        } else {
            for (int l = a; l < b; l++) {
                nmt_strbuf_puts(&text, s->glue[l]);
                nmt_strbuf_puts(&text, parts[l].hyps[k].text);
            }
            nmt_strbuf_puts(&text, s->tail[i]);
        }
        if (text.failed || !(t->hyps[k].text = nmt_malloc(text.len + 1))) break;
        memcpy(t->hyps[k].text, text.data, text.len + 1);
        for (int l = a; l < b; l++) {
            t->hyps[k].score += parts[l].hyps[k].score;
            t->hyps[k].logprob += parts[l].hyps[k].logprob;
        }
    }
    const int failed = text.failed || target.failed || (hyps && !t->hyps[hyps - 1].text);
    nmt_strbuf_free(&text);
    nmt_strbuf_free(&target);
    if (failed) return -1;
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
