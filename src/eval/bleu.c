/* bleu: sacreBLEU's BLEU: segment statistics, the score with smoothing, the running corpus sums. */
#include "eval/bleu.h"

#include "eval/ngram.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

nmt_bleu_options nmt_bleu_options_default(void) {
    nmt_bleu_options o = {.tokenizer = NMT_TOKENIZE_13A,
                          .lowercase = 0,
                          .smooth = NMT_BLEU_SMOOTH_EXP,
                          .smooth_value = -1,
                          .effective_order = 0,
                          .max_order = 4};
    return o;
}

static const char *const smooth_names[] = {"exp", "floor", "add-k", "none"};

int nmt_bleu_smooth_parse(const char *name, nmt_bleu_smooth *out) {
    for (int i = 0; i < 4; i++)
        if (strcmp(name, smooth_names[i]) == 0) {
            *out = (nmt_bleu_smooth)i;
            return 0;
        }
    return nmt_error_set("unknown smoothing method '%s' (choose from exp, floor, add-k, none)", name);
}

/* The smoothing value in use: the given one, or the method's default (Chen & Cherry 2014). */
static double smooth_value(const nmt_bleu_options *options) {
    if (options->smooth_value >= 0) return options->smooth_value;
    return options->smooth == NMT_BLEU_SMOOTH_FLOOR ? 0.1 : 1.0;
}

/* sacreBLEU's my_log: log(0) is taken as -9999999999 so that the score becomes 0. */
static double floored_log(double x) { return x == 0.0 ? -9999999999.0 : log(x); }

void nmt_bleu_compute(const nmt_bleu_options *options, const double *stats, nmt_pynum_arith arith,
                      nmt_bleu_score *score) {
    int order = options->max_order;
    memset(score, 0, sizeof *score);
    score->order = order;
    score->hyp_len = (long)stats[0];
    score->ref_len = (long)stats[1];
    for (int n = 0; n < order; n++) {
        score->correct[n] = stats[2 + n];
        score->total[n] = stats[2 + order + n];
    }
    double hyp_len = (double)score->hyp_len, ref_len = (double)score->ref_len;
    score->bp = 1.0;
    if (hyp_len < ref_len) score->bp = hyp_len > 0 ? exp(1.0 - ref_len / hyp_len) : 0.0;
    score->ratio = ref_len ? hyp_len / ref_len : 0.0;

    int any_correct = 0;
    for (int n = 0; n < order; n++) any_correct |= score->correct[n] != 0;
    if (!any_correct) return; /* score 0, precisions 0 (sacreBLEU #141) */

    double k = smooth_value(options), mteval = 1.0;
    int effective = order;
    for (int n = 1; n <= order; n++) {
        double *correct = &score->correct[n - 1], *total = &score->total[n - 1];
        if (options->smooth == NMT_BLEU_SMOOTH_ADD_K && n > 1) {
            *correct += k;
            *total += k;
            if (arith == NMT_PYNUM_FLOAT32) { /* stored back into a float32 array */
                *correct = (float)*correct;
                *total = (float)*total;
            } else if (arith == NMT_PYNUM_INT64) { /* into an int64 array: truncated */
                *correct = trunc(*correct);
                *total = trunc(*total);
            }
        }
        if (*total == 0) break;
        if (options->effective_order) effective = n;
        if (*correct == 0) {
            if (options->smooth == NMT_BLEU_SMOOTH_EXP) {
                mteval *= 2;
                score->precisions[n - 1] = 100.0 / (mteval * *total);
            } else if (options->smooth == NMT_BLEU_SMOOTH_FLOOR) {
                score->precisions[n - 1] = 100.0 * k / *total;
            }
        } else {
            score->precisions[n - 1] = 100.0 * *correct / *total;
        }
    }
    double sum = 0.0;
    for (int n = 0; n < effective; n++) sum += floored_log(score->precisions[n]);
    score->score = score->bp * exp(sum / effective);
}

size_t nmt_bleu_verbose(const nmt_bleu_score *score, char *out, size_t size) {
    size_t len = 0;
    char part[64];
    if (size) out[0] = '\0';
    for (int n = 0; n < score->order; n++) {
        int m = snprintf(part, sizeof part, "%s%.1f", n ? "/" : "", score->precisions[n]);
        if (len + (size_t)m < size) memcpy(out + len, part, (size_t)m + 1);
        len += (size_t)m;
    }
    int m = snprintf(part, sizeof part, " (BP = %.3f ratio = %.3f hyp_len = %ld ref_len = %ld)", score->bp,
                     score->ratio, score->hyp_len, score->ref_len);
    if (len + (size_t)m < size) memcpy(out + len, part, (size_t)m + 1);
    return len + (size_t)m;
}

struct nmt_bleu {
    nmt_bleu_options options;
    nmt_strbuf lowered;
    nmt_tokenize_scratch scratch;
    nmt_tokenize_spans spans;
    nmt_ngram_vocab vocab;
    nmt_ngram_table table;
    uint32_t *hyp_ids, *ref_ids;
    size_t hyp_cap, ref_cap;
    double sums[NMT_BLEU_STATS(NMT_BLEU_MAX_ORDER)];
    long segments;
    long nrefs; /* references per segment so far; -1 once it varied */
};

nmt_bleu *nmt_bleu_create(const nmt_bleu_options *options) {
    if (options->max_order < 1 || options->max_order > NMT_BLEU_MAX_ORDER) {
        nmt_error_set("BLEU: n-gram order %d is outside 1..%d", options->max_order, NMT_BLEU_MAX_ORDER);
        return NULL;
    }
    nmt_bleu *bleu = nmt_calloc(1, sizeof *bleu);
    if (!bleu) return NULL;
    bleu->options = *options;
    return bleu;
}

void nmt_bleu_free(nmt_bleu *bleu) {
    if (!bleu) return;
    nmt_strbuf_free(&bleu->lowered);
    nmt_tokenize_scratch_free(&bleu->scratch);
    nmt_tokenize_spans_free(&bleu->spans);
    nmt_ngram_vocab_free(&bleu->vocab);
    nmt_ngram_table_free(&bleu->table);
    free(bleu->hyp_ids);
    free(bleu->ref_ids);
    free(bleu);
}

const nmt_bleu_options *nmt_bleu_get_options(const nmt_bleu *bleu) { return &bleu->options; }

/* Lowercases (if asked), strips, tokenizes and splits a line; its words' ids go to *ids. */
static int words_of(nmt_bleu *bleu, const char *s, size_t len, uint32_t **ids, size_t *cap, size_t *count) {
    if (bleu->options.lowercase) {
        if (nmt_tokenize_lower(s, len, &bleu->lowered) < 0) return -1;
        s = bleu->lowered.data;
        len = bleu->lowered.len;
    }
    len = nmt_tokenize_rstrip(s, len);
    const char *text;
    if (nmt_tokenize_words(bleu->options.tokenizer, s, len, &bleu->scratch, &text, &bleu->spans) < 0) return -1;
    size_t n = bleu->spans.count;
    if (n > *cap) {
        uint32_t *grown = nmt_realloc(*ids, n * sizeof *grown);
        if (!grown) return -1;
        *ids = grown;
        *cap = n;
    }
    for (size_t i = 0; i < n; i++) {
        const nmt_tokenize_span *w = &bleu->spans.items[i];
        if (nmt_ngram_vocab_id(&bleu->vocab, text + w->start, w->len, &(*ids)[i]) < 0) return -1;
    }
    *count = n;
    return 0;
}

int nmt_bleu_segment(nmt_bleu *bleu, const char *hyp, size_t hyp_len, const char *const *refs,
                     const size_t *ref_lens, int nrefs, double *stats) {
    int order = bleu->options.max_order;
    if (nrefs < 1) return nmt_error_set("BLEU: a segment needs at least one reference");
    nmt_ngram_vocab_reset(&bleu->vocab);
    size_t hyp_words, ref_words;
    if (words_of(bleu, hyp, hyp_len, &bleu->hyp_ids, &bleu->hyp_cap, &hyp_words) < 0) return -1;
    if (nmt_ngram_table_reset(&bleu->table, nmt_ngram_count(hyp_words, order)) < 0) return -1;
    nmt_ngram_table_add_hyp(&bleu->table, bleu->hyp_ids, hyp_words, order, 0);

    long correct[NMT_BLEU_MAX_ORDER] = {0};
    long closest_len = -1, closest_diff = -1;
    for (int r = 0; r < nrefs; r++) {
        if (words_of(bleu, refs[r], ref_lens[r], &bleu->ref_ids, &bleu->ref_cap, &ref_words) < 0) return -1;
        nmt_ngram_table_match_ref(&bleu->table, bleu->ref_ids, ref_words, order, 0, (uint32_t)r + 1,
                                  NMT_NGRAM_MAX_REFERENCE, correct);
        /* The closest reference length; the shorter one on a tie. */
        long len = (long)ref_words, diff = labs((long)hyp_words - len);
        if (closest_diff < 0 || diff < closest_diff || (diff == closest_diff && len < closest_len)) {
            closest_diff = diff;
            closest_len = len;
        }
    }
    stats[0] = (double)hyp_words;
    stats[1] = (double)closest_len;
    for (int n = 1; n <= order; n++) {
        stats[2 + n - 1] = (double)correct[n - 1];
        stats[2 + order + n - 1] = hyp_words >= (size_t)n ? (double)(hyp_words - (size_t)n + 1) : 0.0;
    }
    return 0;
}

int nmt_bleu_add(nmt_bleu *bleu, const char *hyp, const char *const *refs, int nrefs) {
    double stats[NMT_BLEU_STATS(NMT_BLEU_MAX_ORDER)];
    size_t ref_lens_small[16] = {0}, *ref_lens = ref_lens_small;
    if (nrefs > 16 && !(ref_lens = nmt_malloc((size_t)nrefs * sizeof *ref_lens))) return -1;
    for (int r = 0; r < nrefs; r++) ref_lens[r] = strlen(refs[r]);
    int rc = nmt_bleu_segment(bleu, hyp, strlen(hyp), refs, ref_lens, nrefs, stats);
    if (ref_lens != ref_lens_small) free(ref_lens);
    if (rc < 0) return -1;
    for (int i = 0; i < NMT_BLEU_STATS(bleu->options.max_order); i++) bleu->sums[i] += stats[i];
    if (bleu->segments++ == 0) bleu->nrefs = nrefs;
    else if (bleu->nrefs != nrefs) bleu->nrefs = -1;
    return 0;
}

void nmt_bleu_result(const nmt_bleu *bleu, nmt_bleu_score *score) {
    nmt_bleu_compute(&bleu->options, bleu->sums, NMT_PYNUM_PYTHON, score);
}

void nmt_bleu_clear(nmt_bleu *bleu) {
    memset(bleu->sums, 0, sizeof bleu->sums);
    bleu->segments = 0;
    bleu->nrefs = 0;
}

int nmt_bleu_signature_fields(const nmt_bleu_options *options, nmt_signature_field *fields) {
    fields[0] = (nmt_signature_field){"case", "c", ""};
    fields[1] = (nmt_signature_field){"eff", "e", ""};
    fields[2] = (nmt_signature_field){"tok", "tok", ""};
    fields[3] = (nmt_signature_field){"smooth", "s", ""};
    snprintf(fields[0].value, sizeof fields[0].value, "%s", options->lowercase ? "lc" : "mixed");
    snprintf(fields[1].value, sizeof fields[1].value, "%s", options->effective_order ? "yes" : "no");
    snprintf(fields[2].value, sizeof fields[2].value, "%s", nmt_tokenize_name(options->tokenizer));
    if (options->smooth == NMT_BLEU_SMOOTH_FLOOR || options->smooth == NMT_BLEU_SMOOTH_ADD_K)
        snprintf(fields[3].value, sizeof fields[3].value, "%s[%.2f]", smooth_names[options->smooth],
                 smooth_value(options));
    else
        snprintf(fields[3].value, sizeof fields[3].value, "%s", smooth_names[options->smooth]);
    return 4;
}

size_t nmt_bleu_signature(const nmt_bleu *bleu, int short_form, char *out, size_t size) {
    nmt_signature_field fields[4];
    int count = nmt_bleu_signature_fields(&bleu->options, fields);
    nmt_signature_global global = {.nrefs = bleu->nrefs, .short_form = short_form};
    return nmt_signature_format(&global, fields, count, out, size);
}

int nmt_bleu_corpus(const nmt_bleu_options *options, const char *const *hyps, const char *const *const *refs,
                    size_t n, int nrefs, nmt_bleu_score *score) {
    nmt_bleu *bleu = nmt_bleu_create(options);
    if (!bleu) return -1;
    for (size_t i = 0; i < n; i++)
        if (nmt_bleu_add(bleu, hyps[i], refs[i], nrefs) < 0) {
            nmt_bleu_free(bleu);
            return -1;
        }
    nmt_bleu_result(bleu, score);
    nmt_bleu_free(bleu);
    return 0;
}
