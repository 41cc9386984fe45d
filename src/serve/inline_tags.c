/* inline_tags: inline markup carried through a word alignment (rules in inline_tags.h).
 *
 * Target positions are slots, four per target word j: 4j before the word, 4j + 1 after its leading
 * punctuation, 4j + 2 before its trailing punctuation, 4j + 3 after the word; 4n is the end of the text.
 * A tag gets an interval of slots [lo, hi]; the output walks the tag tree, writing the target text up
 * to each slot where a tag opens or closes.
 */
#include "serve/inline_tags.h"

#include "serve/html.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

typedef struct word {
    size_t start, core, core_end, end; /* bytes: the word, and the word without its outer punctuation */
} word;

typedef struct placed {
    long lo, hi;       /* slots */
    int first_child;   /* children in a list, sorted by lo once settled; -1: none */
    int next_sibling;
} placed;

typedef struct layout {
    const nmt_serve_inline_tag *tags;
    placed *at;
    int n;
    const word *target;
    int target_words;
    const char *text;  /* the target text */
    size_t emitted;    /* target bytes written so far */
    nmt_strbuf *out;
} layout;

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

/* Bytes of punctuation that may open (leading) or close (trailing) a word at p, or 0. */
static int punctuation(const unsigned char *p, int leading) {
    if (strchr(leading ? "([{\"'" : ".,;:!?\"')]}", *p) && *p) return 1;
    static const char *const opening[] = {"\xe2\x80\x9c", "\xe2\x80\x98", "\xe2\x80\x9e", "\xc2\xab", "\xc2\xbf",
                                          "\xc2\xa1", NULL};
    static const char *const closing[] = {"\xe2\x80\x9d", "\xe2\x80\x99", "\xc2\xbb", "\xe2\x80\xa6", NULL};
    for (const char *const *q = leading ? opening : closing; *q; q++)
        if (strncmp((const char *)p, *q, strlen(*q)) == 0) return (int)strlen(*q);
    return 0;
}

/* The words of text (room for strlen(text) / 2 + 1 of them); returns their number. */
static int split_words(const char *text, word *words) {
    int n = 0;
    for (size_t i = 0; text[i];) {
        if (is_space(text[i])) {
            i++;
            continue;
        }
        word *w = &words[n++];
        w->start = i;
        while (text[i] && !is_space(text[i])) i++;
        w->end = i;
        size_t core = w->start, core_end = w->end;
        for (int b; core < core_end && (b = punctuation((const unsigned char *)text + core, 1)) > 0;) core += (size_t)b;
        /* trailing punctuation, found by scanning forward from the core */
        for (size_t j = core; j < core_end;) {
            size_t k = j;
            for (int b; k < core_end && (b = punctuation((const unsigned char *)text + k, 0)) > 0;) k += (size_t)b;
            if (k == core_end && k > j) {
                core_end = j;
                break;
            }
            j = k > j ? k : j + 1;
        }
        if (core >= core_end) core = w->start, core_end = w->end; /* all punctuation: the word is its core */
        w->core = core;
        w->core_end = core_end;
    }
    return n;
}

/* The target byte of a slot. */
static size_t slot_byte(const layout *l, long slot) {
    const long j = slot / 4;
    if (j >= l->target_words) return strlen(l->text);
    const word *w = &l->target[j];
    switch (slot % 4) {
    case 0: return w->start;
    case 1: return w->core;
    case 2: return w->core_end;
    default: return w->end;
    }
}

/* Writes the target text up to slot, escaped. */
static void emit_to(layout *l, long slot) {
    const size_t to = slot_byte(l, slot);
    if (to <= l->emitted) return;
    nmt_serve_html_escape_append(l->out, l->text + l->emitted, to - l->emitted);
    l->emitted = to;
}

/* Writes tag i (or, for -1, the root: the whole text) with its children. */
static void emit(layout *l, int i, long lo, long hi, int first_child) {
    const nmt_serve_inline_tag *t = i >= 0 ? &l->tags[i] : NULL;
    emit_to(l, lo);
    if (t && t->open_len) nmt_strbuf_append(l->out, t->open, t->open_len);
    for (int c = first_child; c >= 0; c = l->at[c].next_sibling)
        emit(l, c, l->at[c].lo, l->at[c].hi, l->at[c].first_child);
    emit_to(l, hi);
    if (t && t->close_len) nmt_strbuf_append(l->out, t->close, t->close_len);
}

/* Sorts the list of siblings from `first` by lo (stable: ties keep document order); returns the head. */
static int sort_siblings(placed *at, int first) {
    int sorted = -1;
    while (first >= 0) { /* insertion into the sorted list */
        const int c = first;
        first = at[c].next_sibling;
        int *link = &sorted;
        while (*link >= 0 && at[*link].lo <= at[c].lo) link = &at[*link].next_sibling;
        at[c].next_sibling = *link;
        *link = c;
    }
    return sorted;
}

/* Fits the children of a tag spanning [lo, hi] into it, disjoint, then their children, and so on;
 * returns the head of the sorted child list. */
static int settle(placed *at, int first, long lo, long hi) {
    for (int c = first; c >= 0; c = at[c].next_sibling) {
        at[c].lo = at[c].lo < lo ? lo : at[c].lo > hi ? hi : at[c].lo;
        at[c].hi = at[c].hi > hi ? hi : at[c].hi < at[c].lo ? at[c].lo : at[c].hi;
    }
    first = sort_siblings(at, first);
    long cursor = lo;
    for (int c = first; c >= 0; c = at[c].next_sibling) {
        if (at[c].lo < cursor) at[c].lo = cursor;
        if (at[c].hi < at[c].lo) at[c].hi = at[c].lo;
        cursor = at[c].hi;
        at[c].first_child = settle(at, at[c].first_child, at[c].lo, at[c].hi);
    }
    return first;
}

int nmt_serve_inline_piece_words(const char *const *pieces, int n, int *word) {
    int words = 0;
    for (int p = 0; p < n; p++) {
        if (p == 0 || strncmp(pieces[p], "\xe2\x96\x81", 3) == 0) words++;
        word[p] = words - 1;
    }
    return words;
}

int nmt_serve_inline_tags(const char *source, const nmt_serve_inline_tag *tags, int n, const char *target,
                          const int *pairs, int pair_count, nmt_strbuf *out) {
    const size_t source_len = strlen(source), target_len = strlen(target);
    word *sw = nmt_malloc((source_len / 2 + 1) * sizeof *sw), *tw = nmt_malloc((target_len / 2 + 1) * sizeof *tw);
    placed *at = nmt_malloc(((size_t)n + 1) * sizeof *at);
    const int m = sw ? split_words(source, sw) : 0, nt = tw ? split_words(target, tw) : 0;
    /* per source word: its first and last aligned target word (-1: none); per boundary b (before source
     * word b): the slot after the nearest aligned word before it, and before the nearest one after it */
    long *first_t = nmt_malloc(((size_t)m + 1) * sizeof *first_t);
    long *last_t = nmt_malloc(((size_t)m + 1) * sizeof *last_t);
    long *after = nmt_malloc(((size_t)m + 2) * sizeof *after), *before = nmt_malloc(((size_t)m + 2) * sizeof *before);
    int *last_child = nmt_malloc(((size_t)n + 1) * sizeof *last_child); /* children listed in document order */
    int rc = -1;
    if (!sw || !tw || !at || !first_t || !last_t || !after || !before || !last_child) goto done;
    for (int k = 0; k < m; k++) first_t[k] = last_t[k] = -1;
    for (int p = 0; p < (pairs ? pair_count : nt); p++) {
        const int s = pairs ? pairs[2 * p] : (int)((long)p * m / nt), t = pairs ? pairs[2 * p + 1] : p;
        if (s < 0 || s >= m || t < 0 || t >= nt) continue;
        if (first_t[s] < 0 || t < first_t[s]) first_t[s] = t;
        if (t > last_t[s]) last_t[s] = t;
    }
    after[0] = -1;
    for (int b = 1; b <= m; b++) after[b] = last_t[b - 1] >= 0 ? 4 * last_t[b - 1] + 3 : after[b - 1];
    before[m] = -1;
    for (int b = m - 1; b >= 0; b--) before[b] = first_t[b] >= 0 ? 4 * first_t[b] : before[b + 1];

    int root_first = -1, root_last = -1;
    for (int i = 0; i < n; i++) {
        const nmt_serve_inline_tag *t = &tags[i];
        placed *p = &at[i];
        p->first_child = p->next_sibling = -1;
        last_child[i] = -1;
        /* the source words its content overlaps: [a, b] */
        int a = 0;
        while (a < m && sw[a].end <= t->begin) a++;
        int b = a - 1;
        while (b + 1 < m && sw[b + 1].start < t->end) b++;
        long lo = -1, hi = -1;
        for (int k = a; t->begin < t->end && k <= b; k++) {
            if (first_t[k] < 0) continue;
            if (lo < 0 || first_t[k] < lo) lo = first_t[k];
            if (last_t[k] > hi) hi = last_t[k];
        }
        if (lo >= 0) {
            /* punctuation outside the tag in the source stays outside it in the target */
            p->lo = 4 * lo + (t->begin >= sw[a].core ? 1 : 0);
            p->hi = 4 * hi + (t->end <= sw[b].core_end ? 2 : 3);
        } else { /* a point where its first word would be */
            const long slot = after[a] >= 0 ? after[a] : before[a] >= 0 ? before[a] : 0;
            p->lo = p->hi = slot;
        }
        const int parent = t->parent >= 0 && t->parent < i ? t->parent : -1;
        int *head = parent >= 0 ? &at[parent].first_child : &root_first;
        int *tail = parent >= 0 ? &last_child[parent] : &root_last;
        if (*tail >= 0) at[*tail].next_sibling = i;
        else *head = i;
        *tail = i;
    }
    root_first = settle(at, root_first, 0, 4L * nt);
    layout l = {tags, at, n, tw, nt, target, 0, out};
    emit(&l, -1, 0, 4L * nt, root_first);
    rc = out->failed ? -1 : 0;
done:
    free(last_child);
    free(sw);
    free(tw);
    free(at);
    free(first_t);
    free(last_t);
    free(after);
    free(before);
    return rc;
}
