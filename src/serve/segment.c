/* segment: texts into lines and sentences and back (see segment.h for the rules). */
#include "serve/segment.h"

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

/* Whether a sentence may start at p. */
static int sentence_start(const unsigned char *p) {
    if ((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '"' || *p == '\'' || *p == '(' || *p == '[')
        return 1;
    /* “ ‘ « */
    return (p[0] == 0xE2 && p[1] == 0x80 && (p[2] == 0x9C || p[2] == 0x98)) || (p[0] == 0xC2 && p[1] == 0xAB);
}

/* If a sentence ends at p (its final mark), the position of the space after it, else NULL. */
static char *sentence_end(char *p) {
    unsigned char *q = (unsigned char *)p;
    if (*q == '.' || *q == '!' || *q == '?') q++;
    else if (q[0] == 0xE2 && q[1] == 0x80 && q[2] == 0xA6) q += 3; /* … */
    else return NULL;
    for (int n; (n = closing(q)) > 0;) q += n;
    if (*q != ' ') return NULL;
    unsigned char *next = q;
    while (*next == ' ') next++;
    return sentence_start(next) ? (char *)q : NULL;
}

/* Adds a segment (the arrays have room: they are sized by a first counting pass). */
static void add(nmt_serve_segments *s, const char *text, char separator) {
    s->segments[s->count] = text;
    s->separator[s->count] = separator;
    s->count++;
}

/* Cuts one line in place into sentences, or only counts them when s is NULL. */
static long cut_line(char *line, int sentences, nmt_serve_segments *s, char separator) {
    long n = 1;
    if (s) add(s, line, separator);
    for (char *p = line; sentences && *p; p++) {
        char *space = sentence_end(p);
        if (!space) continue;
        char *next = space;
        while (*next == ' ') next++;
        if (s) {
            *space = '\0';
            add(s, next, ' ');
        }
        n++;
        p = next - 1;
    }
    return n;
}

/* Cuts a text in place into lines and sentences (or counts them when s is NULL). */
static long cut_text(char *text, int sentences, nmt_serve_segments *s) {
    long n = 0;
    for (char *line = text;;) {
        char *nl = strchr(line, '\n');
        if (nl && s) *nl = '\0';
        if (s) {
            const size_t len = strlen(line);
            if (len && line[len - 1] == '\r') line[len - 1] = '\0';
        }
        n += cut_line(line, sentences && s, s, line == text ? 0 : '\n');
        if (!s && sentences) { /* count the sentence ends of this line */
            for (char *p = line; *p && p != nl; p++)
                if (sentence_end(p)) n++;
        }
        if (!nl) break;
        line = nl + 1;
    }
    return n;
}

int nmt_serve_segment(const char *const *texts, int n, int sentences, nmt_serve_segments *out) {
    memset(out, 0, sizeof *out);
    size_t bytes = 1;
    long count = 0;
    for (int i = 0; i < n; i++) bytes += strlen(texts[i]) + 1;
    out->copy = nmt_malloc(bytes);
    out->first = nmt_malloc(((size_t)n + 1) * sizeof *out->first);
    if (!out->copy || !out->first) return -1;
    char *at = out->copy;
    for (int i = 0; i < n; i++) { /* counting pass over the copy (not cut yet) */
        const size_t len = strlen(texts[i]);
        memcpy(at, texts[i], len + 1);
        count += cut_text(at, sentences, NULL);
        if (count > NMT_SERVE_MAX_SEGMENTS)
            return nmt_error_set("q: more than %d lines and sentences", NMT_SERVE_MAX_SEGMENTS);
        at += len + 1;
    }
    out->segments = nmt_malloc(((size_t)count + 1) * sizeof *out->segments);
    out->separator = nmt_malloc((size_t)count + 1);
    if (!out->segments || !out->separator) return -1;
    at = out->copy;
    for (int i = 0; i < n; i++) {
        const size_t len = strlen(at);
        out->first[i] = out->count;
        cut_text(at, sentences, out);
        at += len + 1;
    }
    out->first[n] = out->count;
    return 0;
}

void nmt_serve_segments_free(nmt_serve_segments *s) {
    free(s->copy);
    free(s->segments);
    free(s->separator);
    free(s->first);
    memset(s, 0, sizeof *s);
}

void nmt_serve_text_free(nmt_serve_text *t) {
    for (int k = 0; k < t->count; k++) free(t->hyps[k].text);
    free(t->hyps);
    free(t->pairs);
    memset(t, 0, sizeof *t);
}

/* Joins the segments a..b-1 into t. */
static int join_one(const nmt_serve_segments *s, int a, int b, const nmt_serve_text *parts, nmt_serve_text *t) {
    int hyps = parts[a].count, pairs = 0, aligned = 1;
    for (int l = a; l < b; l++) {
        if (parts[l].count < hyps) hyps = parts[l].count;
        pairs += parts[l].pair_count;
        aligned &= parts[l].pairs != NULL;
    }
    t->hyps = nmt_calloc((size_t)hyps + 1, sizeof *t->hyps);
    if (!t->hyps) return -1;
    t->count = hyps;
    for (int k = 0; k < hyps; k++) {
        size_t bytes = 1;
        for (int l = a; l < b; l++) bytes += strlen(parts[l].hyps[k].text) + 1;
        char *text = t->hyps[k].text = nmt_malloc(bytes);
        if (!text) return -1;
        size_t at = 0;
        for (int l = a; l < b; l++) {
            const nmt_serve_hypothesis *h = &parts[l].hyps[k];
            if (l > a) text[at++] = s->separator[l];
            const size_t n = strlen(h->text);
            memcpy(text + at, h->text, n);
            at += n;
            t->hyps[k].score += h->score;
            t->hyps[k].logprob += h->logprob;
        }
        text[at] = '\0';
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
        if (join_one(s, s->first[i], s->first[i + 1], parts, &out[i]) < 0) {
            for (int j = 0; j <= i; j++) nmt_serve_text_free(&out[j]);
            return -1;
        }
    return 0;
}
