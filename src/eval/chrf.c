/* chrf: sacreBLEU's chrF/chrF++: character and word n-gram statistics and the F-score. */
#include "eval/chrf.h"

#include "eval/ngram.h"
#include "eval/tokenize.h"
#include "base/utf8.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

nmt_chrf_options nmt_chrf_options_default(void) {
    nmt_chrf_options o = {.char_order = 6, .word_order = 0, .beta = 2, .lowercase = 0, .whitespace = 0, .eps_smoothing = 0};
    return o;
}

double nmt_chrf_compute(const nmt_chrf_options *options, const double *stats, nmt_pynum_arith arith) {
    const double eps = 1e-16;
    int order = options->char_order + options->word_order, effective = 0;
    double factor = (double)options->beta * options->beta;
    double score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
    for (int i = 0; i < order; i++) {
        double hyp = stats[3 * i], ref = stats[3 * i + 1], match = stats[3 * i + 2];
        double prec, rec;
        if (arith == NMT_PYNUM_FLOAT32) {
            prec = hyp > 0 ? (double)((float)match / (float)hyp) : eps;
            rec = ref > 0 ? (double)((float)match / (float)ref) : eps;
        } else {
            prec = hyp > 0 ? match / hyp : eps;
            rec = ref > 0 ? match / ref : eps;
        }
        double denom = factor * prec + rec;
        score += denom > 0 ? (1 + factor) * prec * rec / denom : eps;
        if (hyp > 0 && ref > 0) {
            avg_prec += prec;
            avg_rec += rec;
            effective++;
        }
    }
    if (options->eps_smoothing) return 100 * score / order;
    if (effective == 0) {
        avg_prec = avg_rec = 0.0;
    } else {
        avg_prec /= effective;
        avg_rec /= effective;
    }
    if (avg_prec + avg_rec == 0) return 0.0;
    score = (1 + factor) * avg_prec * avg_rec;
    score /= factor * avg_prec + avg_rec;
    return 100 * score;
}

void nmt_chrf_name(const nmt_chrf_options *options, char *out) {
    int n = snprintf(out, 32, "chrF%d", options->beta);
    for (int i = 0; i < options->word_order && n < 31; i++) out[n++] = '+';
    out[n] = '\0';
}

int nmt_chrf_signature_fields(const nmt_chrf_options *options, nmt_signature_field *fields) {
    fields[0] = (nmt_signature_field){"case", "c", ""};
    fields[1] = (nmt_signature_field){"eff", "e", ""};
    fields[2] = (nmt_signature_field){"nc", "nc", ""};
    fields[3] = (nmt_signature_field){"nw", "nw", ""};
    fields[4] = (nmt_signature_field){"space", "s", ""};
    snprintf(fields[0].value, sizeof fields[0].value, "%s", options->lowercase ? "lc" : "mixed");
    snprintf(fields[1].value, sizeof fields[1].value, "%s", options->eps_smoothing ? "no" : "yes");
    snprintf(fields[2].value, sizeof fields[2].value, "%d", options->char_order);
    snprintf(fields[3].value, sizeof fields[3].value, "%d", options->word_order);
    snprintf(fields[4].value, sizeof fields[4].value, "%s", options->whitespace ? "yes" : "no");
    return 5;
}

/* The symbols of one side of a segment: its code points and its words' ids. */
typedef struct side {
    uint32_t *chars;
    size_t char_count, char_cap;
    uint32_t *words;
    size_t word_count, word_cap;
} side;

struct nmt_chrf {
    nmt_chrf_options options;
    nmt_strbuf lowered;
    nmt_tokenize_spans spans;
    nmt_ngram_vocab vocab;
    nmt_ngram_table table;
    side hyp, ref;
};

nmt_chrf *nmt_chrf_create(const nmt_chrf_options *options) {
    if (options->char_order < 0 || options->word_order < 0 || options->char_order + options->word_order < 1 ||
        options->char_order + options->word_order > NMT_CHRF_MAX_ORDER) {
        nmt_error_set("chrF: character order %d plus word order %d must be within 1..%d", options->char_order,
                      options->word_order, NMT_CHRF_MAX_ORDER);
        return NULL;
    }
    nmt_chrf *chrf = nmt_calloc(1, sizeof *chrf);
    if (!chrf) return NULL;
    chrf->options = *options;
    return chrf;
}

static void side_free(side *s) {
    free(s->chars);
    free(s->words);
}

void nmt_chrf_free(nmt_chrf *chrf) {
    if (!chrf) return;
    nmt_strbuf_free(&chrf->lowered);
    nmt_tokenize_spans_free(&chrf->spans);
    nmt_ngram_vocab_free(&chrf->vocab);
    nmt_ngram_table_free(&chrf->table);
    side_free(&chrf->hyp);
    side_free(&chrf->ref);
    free(chrf);
}

static int reserve_u32(uint32_t **items, size_t *cap, size_t count) {
    if (count <= *cap) return 0;
    uint32_t *grown = nmt_realloc(*items, count * sizeof *grown);
    if (!grown) return -1;
    *items = grown;
    *cap = count;
    return 0;
}

/* string.punctuation, which chrF++ splits off words. */
static int is_ascii_punct(unsigned char b) {
    return (b >= 0x21 && b <= 0x2F) || (b >= 0x3A && b <= 0x40) || (b >= 0x5B && b <= 0x60) || (b >= 0x7B && b <= 0x7E);
}

static int add_word(nmt_chrf *chrf, side *s, const char *w, size_t len) {
    return nmt_ngram_vocab_id(&chrf->vocab, w, len, &s->words[s->word_count++]);
}

/* Fills a side from a line: code points (without whitespace unless asked) and, for chrF++, the
 * words with punctuation split off as sacreBLEU's _remove_punctuation does. */
static int read_side(nmt_chrf *chrf, side *s, const char *text, size_t len) {
    if (chrf->options.lowercase) {
        if (nmt_tokenize_lower(text, len, &chrf->lowered) < 0) return -1;
        text = chrf->lowered.data;
        len = chrf->lowered.len;
    }
    if (reserve_u32(&s->chars, &s->char_cap, len) < 0) return -1;
    s->char_count = 0;
    int keep_spaces = chrf->options.whitespace;
    for (size_t pos = 0; pos < len;) {
        unsigned char b = (unsigned char)text[pos];
        if (b < 0x80) { /* ASCII: no decoding, and its whitespace is \t..\r, \x1c..\x1f, space */
            pos++;
            if (keep_spaces || !(b == ' ' || (b >= 0x09 && b <= 0x0D) || (b >= 0x1C && b <= 0x1F)))
                s->chars[s->char_count++] = b;
            continue;
        }
        uint32_t cp = nmt_utf8_next(text, &pos);
        if (keep_spaces || !nmt_utf8_is_space(cp)) s->chars[s->char_count++] = cp;
    }
    s->word_count = 0;
    if (chrf->options.word_order == 0) return 0;
    if (nmt_tokenize_split(text, len, &chrf->spans) < 0) return -1;
    if (reserve_u32(&s->words, &s->word_cap, 2 * chrf->spans.count) < 0) return -1;
    for (size_t i = 0; i < chrf->spans.count; i++) {
        const char *w = text + chrf->spans.items[i].start;
        size_t n = chrf->spans.items[i].len;
        int rc;
        if ((size_t)nmt_utf8_length((unsigned char)w[0]) == n) /* a single character */
            rc = add_word(chrf, s, w, n);
        else if (is_ascii_punct((unsigned char)w[n - 1]))
            rc = add_word(chrf, s, w, n - 1) < 0 ? -1 : add_word(chrf, s, w + n - 1, 1);
        else if (is_ascii_punct((unsigned char)w[0]))
            rc = add_word(chrf, s, w, 1) < 0 ? -1 : add_word(chrf, s, w + 1, n - 1);
        else
            rc = add_word(chrf, s, w, n);
        if (rc < 0) return -1;
    }
    return 0;
}

int nmt_chrf_segment(nmt_chrf *chrf, const char *hyp, size_t hyp_len, const char *const *refs,
                     const size_t *ref_lens, int nrefs, double *stats) {
    const nmt_chrf_options *o = &chrf->options;
    int chars = o->char_order, words = o->word_order, order = chars + words;
    if (nrefs < 1) return nmt_error_set("chrF: a segment needs at least one reference");
    nmt_ngram_vocab_reset(&chrf->vocab);
    if (read_side(chrf, &chrf->hyp, hyp, hyp_len) < 0) return -1;
    size_t hyp_total = nmt_ngram_count(chrf->hyp.char_count, chars) + nmt_ngram_count(chrf->hyp.word_count, words);
    if (nmt_ngram_table_reset(&chrf->table, hyp_total) < 0) return -1;
    nmt_ngram_table_add_hyp(&chrf->table, chrf->hyp.chars, chrf->hyp.char_count, chars, 0);
    nmt_ngram_table_add_hyp(&chrf->table, chrf->hyp.words, chrf->hyp.word_count, words, chars);

    double best = -1.0, current[3 * NMT_CHRF_MAX_ORDER];
    for (int r = 0; r < nrefs; r++) {
        if (read_side(chrf, &chrf->ref, refs[r], ref_lens[r]) < 0) return -1;
        long matched[NMT_CHRF_MAX_ORDER] = {0};
        nmt_ngram_table_match_ref(&chrf->table, chrf->ref.chars, chrf->ref.char_count, chars, 0, (uint32_t)r + 1,
                                  NMT_NGRAM_PER_REFERENCE, matched);
        nmt_ngram_table_match_ref(&chrf->table, chrf->ref.words, chrf->ref.word_count, words, chars,
                                  (uint32_t)r + 1, NMT_NGRAM_PER_REFERENCE, matched);
        for (int i = 0; i < order; i++) {
            int n = i < chars ? i + 1 : i - chars + 1;
            size_t hyp_len_i = i < chars ? chrf->hyp.char_count : chrf->hyp.word_count;
            size_t ref_len_i = i < chars ? chrf->ref.char_count : chrf->ref.word_count;
            double ref_ngrams = ref_len_i >= (size_t)n ? (double)(ref_len_i - (size_t)n + 1) : 0.0;
            double hyp_ngrams = hyp_len_i >= (size_t)n ? (double)(hyp_len_i - (size_t)n + 1) : 0.0;
            current[3 * i] = ref_ngrams > 0 ? hyp_ngrams : 0.0;
            current[3 * i + 1] = ref_ngrams;
            current[3 * i + 2] = (double)matched[i];
        }
        double f = nmt_chrf_compute(o, current, NMT_PYNUM_PYTHON);
        if (f > best) {
            best = f;
            memcpy(stats, current, (size_t)(3 * order) * sizeof *stats);
        }
    }
    return 0;
}
