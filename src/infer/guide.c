/* guide: target prefixes, constraint phrases and glossaries from text (guide.h).
 *
 * A glossary keeps each entry's source term (lowercased unless the case is to match) and target
 * term; matching lowercases the line once into a buffer kept between lines, then looks for each
 * term between word boundaries.
 */
#include "infer/guide.h"

#include "base/input.h"
#include "base/io.h"
#include "base/utf8.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nmt_guide_reset(nmt_guide *g) {
    g->count = 0;
    g->prefix_length = g->phrase_count = g->sentences = 0;
    g->guide = (nmt_decode_guide){0};
}

void nmt_guide_split_line(char *line, size_t *len, const char **fields, size_t *n) {
    *fields = NULL;
    *n = 0;
    char *tab = memchr(line, '\t', *len);
    if (!tab) return;
    *tab = '\0';
    *fields = tab + 1;
    *n = *len - (size_t)(tab + 1 - line);
    *len = (size_t)(tab - line);
}

void nmt_guide_free(nmt_guide *g) {
    free(g->pieces);
    free(g->scratch);
    memset(g, 0, sizeof *g);
}

/* Encodes text into g->scratch and appends it to g->pieces; *n = its pieces. */
static int append(nmt_guide *g, const nmt_tokenizer *target, const char *text, size_t len, size_t *n) {
    *n = 0;
    if (len == 0) return 0;
    if (target->encode(target->state, text, len, &g->scratch, &g->scratch_cap, n) < 0) return -1;
    if (*n > (size_t)NMT_PIPELINE_MAX_INPUT)
        return nmt_error_set("%zu target pieces, more than %d", *n, NMT_PIPELINE_MAX_INPUT);
    if (g->count + *n > g->cap) {
        size_t cap = (g->count + *n) * 2;
        int32_t *grown = nmt_realloc(g->pieces, cap * sizeof *grown);
        if (!grown) return -1;
        g->pieces = grown;
        g->cap = cap;
    }
    memcpy(g->pieces + g->count, g->scratch, *n * sizeof *g->scratch);
    g->count += *n;
    return 0;
}

int nmt_guide_set_prefix(nmt_guide *g, const nmt_tokenizer *target, const char *text, size_t len) {
    if (g->count) return nmt_error_set("the target prefix comes before the phrases");
    size_t n;
    if (append(g, target, text, len, &n) < 0) return -1;
    g->prefix_length = (int)n;
    return 0;
}

int nmt_guide_add_phrase(nmt_guide *g, const nmt_tokenizer *target, const char *text, size_t len) {
    if (g->phrase_count == NMT_CONSTRAINT_MAX && len > 0)
        return nmt_error_set("more than %d constraint phrases", NMT_CONSTRAINT_MAX);
    size_t n;
    if (append(g, target, text, len, &n) < 0) return -1;
    if (n > 0) g->lengths[g->phrase_count++] = (int)n;
    return 0;
}

int nmt_guide_parse(nmt_guide *g, const nmt_tokenizer *target, int prefix, int constraints, const char *fields,
                    size_t len) {
    const char *end = fields + len;
    for (int field = 1; fields <= end; field++) {
        const char *tab = memchr(fields, '\t', (size_t)(end - fields));
        const size_t n = (size_t)((tab ? tab : end) - fields);
        if (prefix && field == 1) {
            if (nmt_guide_set_prefix(g, target, fields, n) < 0) return nmt_error_prefix("the target prefix");
        } else if (!constraints) {
            return nmt_error_set("a tab after the target prefix (--constraints reads phrases there)");
        } else if (nmt_guide_add_phrase(g, target, fields, n) < 0) {
            return nmt_error_prefix("constraint phrase %d", field - (prefix ? 1 : 0));
        }
        if (!tab) break;
        fields = tab + 1;
    }
    return 0;
}

int nmt_guide_finish(nmt_guide *g) {
    size_t at = (size_t)g->prefix_length;
    for (int c = 0; c < g->phrase_count; c++) {
        g->phrases[c] = (nmt_decode_phrase){g->pieces + at, g->lengths[c]};
        at += (size_t)g->lengths[c];
    }
    g->guide = (nmt_decode_guide){.prefix = g->prefix_length ? g->pieces : NULL,
                                  .prefix_length = g->prefix_length,
                                  .constraints = g->phrase_count ? g->phrases : NULL,
                                  .constraint_count = g->phrase_count,
                                  .sentences = g->sentences};
    return g->count > 0;
}

size_t nmt_guide_pieces(const nmt_guide *g) { return g->count; }

typedef struct glossary_entry {
    char *source; /* lowercased unless match_case */
    size_t source_len;
    char *target;
} glossary_entry;

struct nmt_glossary {
    glossary_entry *entries;
    size_t count;
    int match_case;
    char *lowered; /* the current line, lowercased */
    size_t lowered_cap;
    int used[NMT_CONSTRAINT_MAX]; /* the entries added to the current line */
};

void nmt_glossary_free(nmt_glossary *gl) {
    if (!gl) return;
    for (size_t i = 0; i < gl->count; i++) {
        free(gl->entries[i].source);
        free(gl->entries[i].target);
    }
    free(gl->entries);
    free(gl->lowered);
    free(gl);
}

size_t nmt_glossary_size(const nmt_glossary *gl) { return gl->count; }

/* A copy of s[0..len), lowercased unless match_case (NUL-terminated; *out_len its length). */
static char *term_copy(const char *s, size_t len, int match_case, size_t *out_len) {
    char *out = nmt_malloc(match_case ? len + 1 : NMT_UTF8_LOWER_MAX(len) + 1);
    if (!out) return NULL;
    if (match_case) memcpy(out, s, len);
    else len = nmt_utf8_lower(s, len, out);
    out[len] = '\0';
    *out_len = len;
    return out;
}

/* Checks one line of the file and adds its entry. */
static int glossary_add(nmt_glossary *gl, const nmt_lines *in, size_t *cap) {
    const char *line = in->line, *tab = memchr(line, '\t', in->len);
    long bad = nmt_utf8_invalid_at(line, in->len);
    if (bad >= 0) return nmt_error_set("%s:%ld: invalid UTF-8 at byte %ld", in->name, in->number, bad + 1);
    if (!tab || tab == line || tab + 1 == line + in->len || memchr(tab + 1, '\t', in->len - (size_t)(tab + 1 - line)))
        return nmt_error_set("%s:%ld: expected `source term<TAB>target term` (two non-empty fields)", in->name,
                             in->number);
    if (gl->count == *cap) {
        size_t grown_cap = *cap ? *cap * 2 : 64;
        glossary_entry *grown = nmt_realloc(gl->entries, grown_cap * sizeof *grown);
        if (!grown) return -1;
        gl->entries = grown;
        *cap = grown_cap;
    }
    glossary_entry *e = &gl->entries[gl->count];
    size_t target_len;
    e->source = term_copy(line, (size_t)(tab - line), gl->match_case, &e->source_len);
    e->target = term_copy(tab + 1, in->len - (size_t)(tab + 1 - line), 1, &target_len);
    if (!e->source || !e->target) {
        free(e->source);
        free(e->target);
        return -1;
    }
    gl->count++;
    return 0;
}

int nmt_glossary_load(nmt_glossary **out, const char *path, int match_case) {
    *out = NULL;
    nmt_glossary *gl = nmt_calloc(1, sizeof *gl);
    FILE *fp = nmt_input_open(path);
    nmt_lines lines;
    size_t cap = 0;
    int rc = -1, r;
    if (!gl || !fp) goto done;
    gl->match_case = match_case;
    nmt_lines_init(&lines, fp, path);
    while ((r = nmt_lines_next(&lines)) > 0)
        if (lines.len > 0 && glossary_add(gl, &lines, &cap) < 0) break;
    nmt_lines_free(&lines);
    if (r == 0) rc = 0;
done:
    if (fp && nmt_input_close(fp, path) < 0) rc = -1;
    if (rc < 0) nmt_glossary_free(gl);
    else *out = gl;
    return rc;
}

int nmt_glossary_create(nmt_glossary **out, size_t count, const char *const *terms, int match_case) {
    *out = NULL;
    nmt_glossary *gl = nmt_calloc(1, sizeof *gl);
    char *line = NULL; /* "source<TAB>target", the file's line of each entry */
    size_t cap = 0, longest = 0;
    int rc = -1;
    if (!gl) return -1;
    gl->match_case = match_case;
    for (size_t i = 0; i < count; i++) {
        if (!terms[2 * i] || !terms[2 * i + 1]) {
            nmt_error_set("glossary entry %zu: NULL instead of a term", i + 1);
            goto done;
        }
        const size_t n = strlen(terms[2 * i]) + 1 + strlen(terms[2 * i + 1]);
        if (n > longest) longest = n;
    }
    if (count && !(line = nmt_malloc(longest + 1))) goto done;
    for (size_t i = 0; i < count; i++) {
        const size_t a = strlen(terms[2 * i]), b = strlen(terms[2 * i + 1]);
        memcpy(line, terms[2 * i], a);
        line[a] = '\t';
        memcpy(line + a + 1, terms[2 * i + 1], b + 1);
        const nmt_lines entry = {.name = "glossary entry", .line = line, .len = a + 1 + b, .number = (long)i + 1};
        if (glossary_add(gl, &entry, &cap) < 0) goto done;
    }
    rc = 0;
done:
    free(line);
    if (rc < 0) nmt_glossary_free(gl);
    else *out = gl;
    return rc;
}

/* A byte that continues a word: an ASCII letter or digit, or part of a non-ASCII character. */
static int word_byte(unsigned char c) {
    return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int sentence_mark(char c) { return c == '.' || c == '!' || c == '?'; }

void nmt_guide_set_source(nmt_guide *g, const char *text, size_t len) {
    int n = 0;
    for (size_t i = 0; i < len; i++) {
        if (!sentence_mark(text[i]) || (i + 1 < len && text[i + 1] != ' ' && text[i + 1] != '\t')) continue;
        size_t j = i; /* the run of marks starts at j; initials ("E.S.E.", "J.P.") end no sentence */
        while (j > 0 && sentence_mark(text[j - 1])) j--;
        n += j >= 2 && word_byte((unsigned char)text[j - 1]) && word_byte((unsigned char)text[j - 2]);
    }
    g->sentences = n > 1 ? n : 1;
}

/* Whether term[0..n) occurs in s[0..len) between word boundaries. */
static int occurs(const char *s, size_t len, const char *term, size_t n) {
    for (const char *p = s; n && (size_t)(s + len - p) >= n;) {
        const char *hit = memchr(p, term[0], (size_t)(s + len - p) - n + 1);
        if (!hit) return 0;
        if (memcmp(hit, term, n) == 0 && (hit == s || !word_byte((unsigned char)hit[-1]) || !word_byte((unsigned char)term[0])) &&
            (hit + n == s + len || !word_byte((unsigned char)hit[n]) || !word_byte((unsigned char)term[n - 1])))
            return 1;
        p = hit + 1;
    }
    return 0;
}

int nmt_glossary_apply(nmt_glossary *gl, const char *text, size_t len, nmt_guide *g, const nmt_tokenizer *target) {
    const char *line = text;
    if (!gl->match_case) {
        if (NMT_UTF8_LOWER_MAX(len) > gl->lowered_cap) {
            char *grown = nmt_realloc(gl->lowered, NMT_UTF8_LOWER_MAX(len));
            if (!grown) return -1;
            gl->lowered = grown;
            gl->lowered_cap = NMT_UTF8_LOWER_MAX(len);
        }
        len = nmt_utf8_lower(text, len, gl->lowered);
        line = gl->lowered;
    }
    int used = 0;
    for (size_t i = 0; i < gl->count; i++) {
        const glossary_entry *e = &gl->entries[i];
        if (!occurs(line, len, e->source, e->source_len)) continue;
        int seen = 0;
        for (int j = 0; j < used && !seen; j++) seen = strcmp(gl->entries[gl->used[j]].target, e->target) == 0;
        if (seen) continue;
        if (used == NMT_CONSTRAINT_MAX)
            return nmt_error_set("more than %d glossary terms in one line", NMT_CONSTRAINT_MAX);
        if (nmt_guide_add_phrase(g, target, e->target, strlen(e->target)) < 0)
            return nmt_error_prefix("glossary term '%s'", e->target);
        gl->used[used++] = (int)i;
    }
    return 0;
}
