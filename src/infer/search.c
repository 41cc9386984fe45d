/* search: greedy and beam search over an nmt_decode_step (the algorithm is described in search.h).
 *
 * One batch keeps a history of every step: each row's input token, its parent row at the step
 * before and (when asked) its cross-attention row. A finished hypothesis is only a reference
 * (step, row) into that history; its tokens and attention are traced back through the parents when
 * the batch ends. All buffers of a batch are carved from one block that only grows, so decoding
 * allocates nothing per step.
 */
#include "infer/search.h"

#include "infer/controls.h"
#include "compute/kernels.h"
#include "text/vocab.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_TARGET_PIECES = 1 << 16 };

nmt_decode_options nmt_decode_options_default(void) {
    return (nmt_decode_options){
        .greedy = 0,
        .beam_size = 5,
        .n_best = 1,
        .length_penalty = 0.6,
        .max_length_ratio = 2.0,
        .attention = 0,
        .batch_size = 64,
        .precision = NMT_PRECISION_FP32,
        .sampling = nmt_sampling_default(),
        .repetition_penalty = 1.0,
        .loop_repeats = 4,
    };
}

/* Whether the options' controls need each row's whole logits. */
static int search_full(const nmt_decode_options *o) {
    return o->repetition_penalty != 1.0 || o->no_repeat_ngram_size > 0 || o->confidence;
}

int nmt_decode_options_check(const nmt_decode_options *o) {
    if (o->beam_size < 1 || o->beam_size > 1000)
        return nmt_error_set("beam size must be from 1 to 1000, got %d", o->beam_size);
    if (o->greedy && !o->sampling.enabled && o->n_best != 1)
        return nmt_error_set("greedy search returns one hypothesis, not %d", o->n_best);
    if (o->sampling.enabled && (o->n_best < 1 || o->n_best > 1000))
        return nmt_error_set("sampling draws 1 to 1000 translations a line, not %d", o->n_best);
    if (!o->greedy && (o->n_best < 1 || o->n_best > o->beam_size))
        return nmt_error_set("n-best must be from 1 to the beam size %d, got %d", o->beam_size, o->n_best);
    if (!isfinite(o->length_penalty) || o->length_penalty < 0 || o->length_penalty > 10)
        return nmt_error_set("length penalty must be from 0 to 10, got %g", o->length_penalty);
    if (!isfinite(o->max_length_ratio) || o->max_length_ratio < 0 || o->max_length_ratio > 100)
        return nmt_error_set("maximum length ratio must be from 0 to 100, got %g", o->max_length_ratio);
    if (o->max_length < 0 || o->max_length > MAX_TARGET_PIECES)
        return nmt_error_set("maximum output length must be from 0 (none) to %d pieces, got %d", MAX_TARGET_PIECES,
                             o->max_length);
    if (o->batch_size < 1) return nmt_error_set("batch size must be at least 1, got %d", o->batch_size);
    if (o->batch_tokens < 0) return nmt_error_set("batch tokens must not be negative, got %d", o->batch_tokens);
    if (!isfinite(o->repetition_penalty) || o->repetition_penalty <= 0 || o->repetition_penalty > 100)
        return nmt_error_set("repetition penalty must be above 0 and at most 100 (1: off), got %g", o->repetition_penalty);
    if (o->no_repeat_ngram_size < 0 || o->no_repeat_ngram_size > 1000)
        return nmt_error_set("no-repeat n-gram size must be from 0 (off) to 1000, got %d", o->no_repeat_ngram_size);
    if (o->confidence != 0 && o->confidence != 1) return nmt_error_set("confidence is 0 or 1, got %d", o->confidence);
    if (o->loop_repeats < 0 || o->loop_repeats > 1000)
        return nmt_error_set("loop guard repeats must be from 0 (off) to 1000, got %d", o->loop_repeats);
    if (search_full(o) && o->shortlist)
        return nmt_error_set("the repetition penalty, no-repeat n-grams and confidence read the whole vocabulary: they "
                             "cannot use a shortlist");
    if (o->sampling.enabled) {
        if (!o->greedy)
            return nmt_error_set("sampling draws one translation a line: it replaces greedy search's choice, not a beam");
        if (o->shortlist) return nmt_error_set("sampling draws from the whole vocabulary: it cannot use a shortlist");
        return nmt_sampling_check(&o->sampling);
    }
    return 0;
}

void nmt_translation_free(nmt_translation *t) {
    for (int i = 0; i < t->count; i++) {
        free(t->hyps[i].tokens);
        free(t->hyps[i].attention);
    }
    free(t->hyps);
    t->hyps = NULL;
    t->count = 0;
}

void nmt_hypothesis_alignment(const nmt_hypothesis *h, int *src_of) {
    const size_t cols = (size_t)h->src_len + 1;
    for (int j = 0; j < h->length; j++) {
        const float *row = h->attention + (size_t)j * cols;
        int best = 0;
        for (int i = 1; i < h->src_len; i++)
            if (row[i] > row[best]) best = i;
        src_of[j] = best;
    }
}

double nmt_length_penalty(double alpha, int tokens) { return pow((5.0 + tokens) / 6.0, alpha); }

void nmt_scored_clear(nmt_scored_token *best, int k) {
    for (int i = 0; i < k; i++) best[i] = (nmt_scored_token){-INFINITY, -1};
}

void nmt_scored_merge(nmt_scored_token *best, int k, const float *scores, int n, int32_t first) {
    /* Skip to each score above the list's last entry (the threshold rises as the list fills). */
    for (int j = 0; (j += nmt_first_above(scores + j, n - j, best[k - 1].logprob)) < n; j++) {
        const int32_t token = first + j;
        const float x = scores[j];
        if (token == NMT_PAD || token == NMT_BOS) continue;
        /* A later token with an equal score goes after: scores arrive in token order. */
        int i = k - 1;
        while (i > 0 && best[i - 1].logprob < x) {
            best[i] = best[i - 1];
            i--;
        }
        best[i] = (nmt_scored_token){x, token};
    }
}

int nmt_decode_max_length(const nmt_decode_options *options, int src_pieces) {
    double len = floor(options->max_length_ratio * src_pieces) + 10;
    if (options->max_length > 0 && len > options->max_length) len = options->max_length;
    return len > MAX_TARGET_PIECES ? MAX_TARGET_PIECES : (int)len;
}

/* A finished hypothesis of `step` pieces ending at `row`: eos chosen there (`tokens` = step + 1 scored
 * tokens), or cut at the maximum length (`tokens` = step: no eos). */
typedef struct finished {
    double score, logprob;
    int step, row, tokens;
} finished;

/* A continuation of a live row ranked during a beam step. */
typedef struct candidate {
    double total;
    int row;
    int32_t token;
} candidate;

struct nmt_search {
    nmt_decode_options options;
    int beam;   /* K: 1 on the greedy path */
    int n_best; /* finished hypotheses kept per sentence */

    nmt_scratch block; /* every buffer below, carved per batch */
    int rows_max;        /* batch * K: the stride of the per-step arrays */
    int width;           /* S */
    int top;             /* k: continuations asked of the step per row (1 greedy, 2K beam) */
    nmt_scored_token *best; /* [rows_max, top] of the current step */
    float *eos;          /* [rows_max] each row's eos log-probability at the current step */
    int32_t *token;      /* [steps, rows_max]: each row's input token at each step */
    int32_t *parent;     /* [steps, rows_max]: its row at the step before */
    float *attention;    /* [steps, rows_max, S] when options.attention, else NULL */
    float *entropy;      /* [steps, rows_max] each row's entropy at each step with confidence, else NULL */
    double *total;       /* [rows_max]: log-probability of each live row */
    double *next_total;  /* [rows_max] */
    int *rows;           /* [batch]: live rows of each sentence (0 once it has stopped) */
    int *next_rows;      /* [batch] */
    int *max_len;        /* [batch] */
    int *prefix_len;     /* [batch] pieces of each sentence's target prefix (0: none) */
    const int32_t **prefix; /* [batch] the prefixes (the caller's) */
    const nmt_decode_phrase **phrases; /* [batch] each sentence's constraints (the caller's) */
    int *phrase_count;   /* [batch] C of each sentence (0: unconstrained) */
    int *phrase_pieces;  /* [batch] T of each sentence */
    int *sentences;      /* [batch] sentences of each source (at least 1) */
    nmt_constraint_vocab vocab; /* options.word_joins and options.piece_text */
    int extra;           /* E: the most constraints of a sentence in the batch (0: none) */
    int most_pieces;     /* the largest T in the batch */
    nmt_constraint_state *state, *next_state; /* [rows_max] each live row's progress (constrained sentences) */
    int32_t *extra_token; /* [rows_max, E] the pieces that advance each row (-1: none) */
    float *extra_logprob; /* [rows_max, E] their log-probabilities */
    nmt_constraint_candidate *ccand; /* [K * (k + E)] a constrained sentence's candidates */
    int *bank;           /* [2 * (most_pieces + 1)] the bank step's counts */
    finished *done;      /* [batch, n_best], best first */
    int *done_count;     /* [batch] */
    int *finished_count; /* [batch] hypotheses finished, kept or not (options.ctranslate2) */
    int *top_finished;   /* [batch] the best candidate of some step was eos (options.ctranslate2) */
    candidate *cand;     /* [2K] */
    int full;            /* the score controls: rows' whole logits are read and rewritten */
    int loop_window;     /* pieces the loop guard reads (0: off) */
    int32_t *pieces;     /* [steps] one hypothesis's pieces, traced for the controls */
    int32_t *other;      /* [steps] another's, for streaming */
    int *streamed;       /* [batch] pieces of each sentence passed on to options.stream */
    unsigned char *mark; /* [V] with the repetition penalty, zero between rows */
    float *logprobs;     /* [rows_max, V] with sampling or the score controls, else NULL */
    nmt_sampling_scratch draw; /* [V] each, with sampling */
};

int nmt_search_create(nmt_search **search, const nmt_decode_options *options) {
    *search = NULL;
    if (nmt_decode_options_check(options) < 0) return -1;
    nmt_search *s = nmt_calloc(1, sizeof *s);
    if (!s) return -1;
    s->options = *options;
    s->beam = options->greedy ? 1 : options->beam_size;
    s->n_best = options->greedy ? 1 : options->n_best;
    /* A beam step ranks the best K + n of a sentence's n <= K rows: at most 2K come from one row. */
    s->top = options->greedy ? 1 : 2 * options->beam_size;
    s->full = search_full(options);
    s->vocab = (nmt_constraint_vocab){options->word_joins, options->piece_text};
    s->loop_window = nmt_controls_loop_window(options->loop_repeats);
    *search = s;
    return 0;
}

void nmt_search_free(nmt_search *s) {
    if (!s) return;
    free(s->block.data);
    free(s);
}

/* Adds `count` elements of `size` bytes to a layout at 64-byte offsets; returns their offset. */
static size_t layout_add(size_t *total, size_t count, size_t size) {
    size_t offset = (*total + 63) & ~(size_t)63;
    *total = offset + count * size;
    return offset;
}

/* Sizes the block for a batch and points every buffer into it. */
static int search_reserve(nmt_search *s, int batch, int steps, int width, int V) {
    size_t rows = (size_t)batch * (size_t)s->beam, total = 0;
    size_t cells = 0;
    if (nmt_size_mul(rows, (size_t)steps, &cells, "beam search history") < 0) return -1;
    size_t att = s->options.attention ? cells * (size_t)width : 0;
    if (s->options.attention && att / (size_t)width != cells) return nmt_error_set("beam search history too large");
    size_t o_best = layout_add(&total, rows * (size_t)s->top, sizeof(nmt_scored_token));
    size_t o_eos = layout_add(&total, rows, sizeof(float));
    size_t o_token = layout_add(&total, cells, sizeof(int32_t));
    size_t o_parent = layout_add(&total, cells, sizeof(int32_t));
    size_t o_attention = layout_add(&total, att, sizeof(float));
    size_t o_entropy = layout_add(&total, s->options.confidence ? cells : 0, sizeof(float));
    size_t o_total = layout_add(&total, rows, sizeof(double));
    size_t o_next_total = layout_add(&total, rows, sizeof(double));
    size_t o_rows = layout_add(&total, (size_t)batch, sizeof(int));
    size_t o_next_rows = layout_add(&total, (size_t)batch, sizeof(int));
    size_t o_max_len = layout_add(&total, (size_t)batch, sizeof(int));
    size_t o_prefix_len = layout_add(&total, (size_t)batch, sizeof(int));
    size_t o_prefix = layout_add(&total, (size_t)batch, sizeof(const int32_t *));
    size_t o_done = layout_add(&total, (size_t)batch * (size_t)s->n_best, sizeof(finished));
    size_t o_done_count = layout_add(&total, (size_t)batch, sizeof(int));
    size_t o_finished_count = layout_add(&total, (size_t)batch, sizeof(int));
    size_t o_top_finished = layout_add(&total, (size_t)batch, sizeof(int));
    size_t o_cand = layout_add(&total, 2 * (size_t)s->beam, sizeof(candidate));
    size_t o_pieces = layout_add(&total, (size_t)steps, sizeof(int32_t));
    size_t o_other = layout_add(&total, (size_t)steps, sizeof(int32_t));
    size_t o_streamed = layout_add(&total, (size_t)batch, sizeof(int));
    const size_t E = (size_t)s->extra, constrained = E > 0;
    size_t o_phrases = layout_add(&total, (size_t)batch, sizeof(const nmt_decode_phrase *));
    size_t o_phrase_count = layout_add(&total, (size_t)batch, sizeof(int));
    size_t o_phrase_pieces = layout_add(&total, (size_t)batch, sizeof(int));
    size_t o_sentences = layout_add(&total, (size_t)batch, sizeof(int));
    size_t o_state = layout_add(&total, constrained ? rows : 0, sizeof(nmt_constraint_state));
    size_t o_next_state = layout_add(&total, constrained ? rows : 0, sizeof(nmt_constraint_state));
    size_t o_extra_token = layout_add(&total, rows * E, sizeof(int32_t));
    size_t o_extra_logprob = layout_add(&total, rows * E, sizeof(float));
    size_t o_ccand = layout_add(&total, constrained ? (size_t)s->beam * ((size_t)s->top + E) : 0,
                                sizeof(nmt_constraint_candidate));
    size_t o_bank = layout_add(&total, constrained ? 2 * ((size_t)s->most_pieces + 1) : 0, sizeof(int));
    const size_t marks = s->options.repetition_penalty != 1.0 ? (size_t)V : 0;
    size_t o_mark = layout_add(&total, marks, 1);
    const size_t rows_of_v = s->options.sampling.enabled || s->full ? (size_t)V : 0;
    const size_t sampled = s->options.sampling.enabled ? (size_t)V : 0;
    size_t logprobs = 0;
    if (nmt_size_mul(rows, rows_of_v, &logprobs, "the rows' distributions") < 0) return -1;
    size_t o_logprobs = layout_add(&total, logprobs, sizeof(float));
    size_t o_probs = layout_add(&total, sampled, sizeof(float));
    size_t o_candidates = layout_add(&total, sampled, sizeof(nmt_sampling_candidate));
    if (nmt_scratch_reserve(&s->block, total) < 0) return -1;
    char *base = s->block.data;
    s->rows_max = (int)rows;
    s->width = width;
    s->best = (nmt_scored_token *)(base + o_best);
    s->eos = (float *)(base + o_eos);
    s->token = (int32_t *)(base + o_token);
    s->parent = (int32_t *)(base + o_parent);
    s->attention = s->options.attention ? (float *)(base + o_attention) : NULL;
    s->entropy = s->options.confidence ? (float *)(base + o_entropy) : NULL;
    s->total = (double *)(base + o_total);
    s->next_total = (double *)(base + o_next_total);
    s->rows = (int *)(base + o_rows);
    s->next_rows = (int *)(base + o_next_rows);
    s->max_len = (int *)(base + o_max_len);
    s->prefix_len = (int *)(base + o_prefix_len);
    s->prefix = (const int32_t **)(base + o_prefix);
    s->done = (finished *)(base + o_done);
    s->done_count = (int *)(base + o_done_count);
    s->finished_count = (int *)(base + o_finished_count);
    s->top_finished = (int *)(base + o_top_finished);
    s->cand = (candidate *)(base + o_cand);
    s->pieces = (int32_t *)(base + o_pieces);
    s->other = (int32_t *)(base + o_other);
    s->streamed = (int *)(base + o_streamed);
    s->phrases = (const nmt_decode_phrase **)(base + o_phrases);
    s->phrase_count = (int *)(base + o_phrase_count);
    s->phrase_pieces = (int *)(base + o_phrase_pieces);
    s->sentences = (int *)(base + o_sentences);
    s->state = (nmt_constraint_state *)(base + o_state);
    s->next_state = (nmt_constraint_state *)(base + o_next_state);
    s->extra_token = (int32_t *)(base + o_extra_token);
    s->extra_logprob = (float *)(base + o_extra_logprob);
    s->ccand = (nmt_constraint_candidate *)(base + o_ccand);
    s->bank = (int *)(base + o_bank);
    s->mark = marks ? (unsigned char *)(base + o_mark) : NULL;
    if (marks) memset(s->mark, 0, marks);
    s->logprobs = rows_of_v ? (float *)(base + o_logprobs) : NULL;
    s->draw = (nmt_sampling_scratch){(float *)(base + o_probs), (nmt_sampling_candidate *)(base + o_candidates)};
    return 0;
}

/* The most pieces a hypothesis may get: the options' limit, or what the step's positions allow (the
 * input at step t is at position t, and eos is chosen at step max_len). */
static int search_max_length(const nmt_search *s, const nmt_decode_step *step, int src_pieces) {
    int len = nmt_decode_max_length(&s->options, src_pieces);
    return step->max_steps > 0 && len > step->max_steps - 1 ? step->max_steps - 1 : len;
}

/* Records that `row` of sentence b ended at `step` with `tokens` scored tokens and total log-probability
 * `logprob`, ranked with the length penalty of lp_tokens tokens, keeping the n_best best scores in
 * order (an equal score does not displace an earlier one). */
static void search_keep(nmt_search *s, int b, int step, int row, double logprob, int tokens, int lp_tokens) {
    const double alpha = s->options.length_penalty;
    double score = logprob / (s->options.ctranslate2 ? pow(lp_tokens, alpha) : nmt_length_penalty(alpha, lp_tokens));
    s->finished_count[b]++;
    finished *d = s->done + (size_t)b * (size_t)s->n_best;
    int count = s->done_count[b];
    if (count == s->n_best && !(score > d[count - 1].score)) return;
    int i = count < s->n_best ? count : count - 1;
    while (i > 0 && d[i - 1].score < score) {
        d[i] = d[i - 1];
        i--;
    }
    d[i] = (finished){score, logprob, step, row, tokens};
    if (count < s->n_best) s->done_count[b]++;
}

/* `row` of sentence b ended with eos at `step` with total log-probability `logprob`. */
static void search_finish(nmt_search *s, int b, int step, int row, double logprob) {
    search_keep(s, b, step, row, logprob, step + 1, step + 1);
}

/* `row` of sentence b reached the maximum length at `step`: it ends there without eos, whose
 * log-probability does not count, as CTranslate2 and Marian end such a hypothesis. */
static void search_cut(nmt_search *s, int b, int step, int row) {
    search_keep(s, b, step, row, s->total[row], step, step);
}

/* A constrained row's end at `step` with `tokens` scored tokens (eos: step + 1; cut: step): its
 * length penalty counts its pieces up to the sentence end that ends as many sentences as its source
 * has (+ eos when it has one). A phrase costs the model much (it is why the phrase had to be
 * placed), and alpha's length bonus grows with that cost: a hypothesis that ended its sentence
 * without a phrase and placed it in a run-on sentence after, or that repeats itself after the
 * phrase, would otherwise outrank the one that ends where the plain translation does. */
static void constrained_keep(nmt_search *s, int b, int step, int row, double logprob, int tokens) {
    const int closed = s->state[row].closed;
    search_keep(s, b, step, row, logprob, tokens, closed > 0 ? closed + tokens - step : tokens);
}

/* The best score a live hypothesis with `pieces` pieces and total log-probability `total` can still
 * reach: it ends with pieces + 1 .. max_len + 1 tokens and its log-probability can only fall, so the
 * bound divides by the largest penalty of that range (lp is monotone in the length). */
static double best_reachable(double alpha, double total, int pieces, int max_len) {
    double lp_first = nmt_length_penalty(alpha, pieces + 1), lp_last = nmt_length_penalty(alpha, max_len + 1);
    double lp_big = lp_first > lp_last ? lp_first : lp_last, lp_small = lp_first > lp_last ? lp_last : lp_first;
    return total / (total <= 0 ? lp_big : lp_small);
}

/* Appends a live row for step t + 1 at position *next; returns nothing (the caller bounds *next). */
static void search_append(nmt_search *s, int t, int *next, int parent, int32_t token, double total) {
    size_t at = (size_t)(t + 1) * (size_t)s->rows_max + (size_t)*next;
    s->token[at] = token;
    s->parent[at] = parent;
    s->next_total[*next] = total;
    (*next)++;
}

/* The last n pieces of the hypothesis of `row` at step t (it has t pieces; n <= t) into out[n]. */
static void trace_pieces(const nmt_search *s, int t, int row, int n, int32_t *out) {
    for (int j = t; j > t - n; j--) {
        const size_t at = (size_t)j * (size_t)s->rows_max + (size_t)row;
        out[n - 1 - (t - j)] = s->token[at];
        row = s->parent[at];
    }
}

/* Whether the loop guard ends the hypothesis of `row` (sentence b) at step t: it has a piece of its
 * own after the prefix and ends in a loop. */
static int search_loops(nmt_search *s, int b, int t, int row) {
    if (!s->loop_window || t <= s->prefix_len[b]) return 0;
    const int n = t < s->loop_window ? t : s->loop_window;
    trace_pieces(s, t, row, n, s->pieces);
    return nmt_controls_loops(s->pieces, n, s->options.loop_repeats);
}

static int non_finite(int b, int t) {
    return nmt_error_set("decoding sentence %d: the model gave a non-finite log-probability at step %d", b, t);
}

/* Greedy step of sentence b (one row, `row`): its most probable token; cut at the limit.
 * Returns the rows it keeps (0 or 1), or -1. */
static int select_greedy(nmt_search *s, int b, int t, int row, int *next) {
    if (isnan(s->eos[row])) return non_finite(b, t);
    if (t < s->prefix_len[b]) { /* a forced piece: it adds nothing to the log-probability */
        search_append(s, t, next, row, s->prefix[b][t], s->total[row]);
        return 1;
    }
    if (t == s->max_len[b]) {
        search_cut(s, b, t, row);
        return 0;
    }
    nmt_scored_token best = s->best[row];
    if (best.token < 0 || search_loops(s, b, t, row))
        best = (nmt_scored_token){s->eos[row], NMT_EOS};
    double total = s->total[row] + best.logprob;
    if (best.token == NMT_EOS) {
        search_finish(s, b, t, row, total);
        return 0;
    }
    search_append(s, t, next, row, best.token, total);
    return 1;
}

/* Beam step of sentence b, whose live rows are first .. first + n - 1. Returns the rows it keeps
 * (0 when the sentence stops), or -1. */
static int select_beam(nmt_search *s, int b, int t, int first, int n, int *next) {
    const int K = s->beam;
    for (int r = first; r < first + n; r++)
        if (isnan(s->eos[r])) return non_finite(b, t);
    if (t < s->prefix_len[b]) { /* a forced piece for the sentence's one row, as in greedy */
        search_append(s, t, next, first, s->prefix[b][t], s->total[first]);
        return 1;
    }
    if (t == s->max_len[b]) {
        for (int r = first; r < first + n; r++) search_cut(s, b, t, r);
        return 0;
    }
    /* The best K + n continuations: at most n of them are eos, so at least K others remain. Each
     * row's list is sorted, so a row is left at its first continuation that cannot enter. */
    candidate *cand = s->cand;
    const int want = K + n;
    int count = 0;
    for (int r = first; r < first + n; r++) {
        if (search_loops(s, b, t, r)) { /* ended with eos forced */
            search_finish(s, b, t, r, s->total[r] + s->eos[r]);
            continue;
        }
        const nmt_scored_token *top = s->best + (size_t)r * (size_t)s->top;
        const double base = s->total[r];
        for (int j = 0; j < s->top && top[j].token >= 0; j++) {
            double total = base + top[j].logprob;
            int i;
            if (count == want) {
                if (!(total > cand[count - 1].total)) break;
                i = count - 1;
            } else {
                i = count++;
            }
            while (i > 0 && cand[i - 1].total < total) {
                cand[i] = cand[i - 1];
                i--;
            }
            cand[i] = (candidate){total, r, top[j].token};
        }
    }
    /* CTranslate2 ends its best K candidates at the step that chooses the last piece: only those
     * may go on, to be cut at the next step, and nothing stops the sentence before. */
    const int last = s->options.ctranslate2 && t + 1 == s->max_len[b];
    int live = 0, first_next = *next;
    for (int i = 0; i < count && live < K && !(last && i >= K); i++) {
        if (cand[i].token == NMT_EOS) {
            if (i < K) search_finish(s, b, t, cand[i].row, cand[i].total);
            continue;
        }
        search_append(s, t, next, cand[i].row, cand[i].token, cand[i].total);
        live++;
    }
    if (last) return live;
    if (s->options.ctranslate2) { /* CTranslate2's rule (search.h) */
        if (count > 0 && cand[0].token == NMT_EOS) s->top_finished[b] = 1;
        const int stop = s->options.length_penalty == 0 ? s->top_finished[b] && s->finished_count[b] >= s->n_best
                                                        : s->finished_count[b] >= K;
        if (stop) *next = first_next;
        return stop ? 0 : live;
    }
    /* A live row that cannot beat the n-th best finished hypothesis goes no further, and the sentence
     * stops when none can. The rows came in falling total with as many pieces each, so those that
     * cannot are the last ones. Dropping them changes no result: every continuation of theirs ranks
     * below every candidate that could still enter the n best, so the beam keeps the same rows that can. */
    if (s->done_count[b] == s->n_best) {
        const double worst = s->done[(size_t)b * (size_t)s->n_best + (size_t)s->n_best - 1].score;
        while (live > 0 &&
               worst >= best_reachable(s->options.length_penalty, s->next_total[*next - 1], t + 1, s->max_len[b])) {
            (*next)--;
            live--;
        }
    }
    return live;
}

/* Appends a row of a constrained sentence with its state. */
static void constrained_append(nmt_search *s, int t, int *next, int parent, int32_t token, double total,
                               nmt_constraint_state state) {
    s->next_state[*next] = state;
    search_append(s, t, next, parent, token, total);
}

/* Offers a continuation of `row` at step t to a constrained sentence's candidates (eos only from a
 * row that has met every phrase; nothing at -infinity). */
static void constrained_offer(nmt_search *s, int b, int t, int *count, int row, int32_t token, float logprob) {
    const nmt_constraint_state st = s->state[row];
    if (!(logprob > -INFINITY) || (token == NMT_EOS && !nmt_constraint_done(st, s->phrase_count[b]))) return;
    nmt_constraint_state next = st;
    if (token != NMT_EOS) {
        next = nmt_constraint_next(s->phrases[b], s->phrase_count[b], &s->vocab, st, token);
        if (next.closed == 0 && nmt_constraint_ends_sentence(&s->vocab, token) && ++next.ends == s->sentences[b])
            next.closed = t + 1;
    }
    s->ccand[(*count)++] = (nmt_constraint_candidate){
        .total = s->total[row] + logprob,
        .row = row,
        .token = token,
        .state = next,
    };
}

/* The bank step of constrained sentence b (constraint.h), rows first .. first + n - 1. Returns the
 * rows it keeps (0 when the sentence stops), or -1. */
static int select_constrained(nmt_search *s, int b, int t, int first, int n, int *next) {
    const int K = s->beam, C = s->phrase_count[b], T = s->phrase_pieces[b], E = s->extra;
    for (int r = first; r < first + n; r++)
        if (isnan(s->eos[r])) return non_finite(b, t);
    if (t < s->prefix_len[b]) {
        constrained_append(s, t, next, first, s->prefix[b][t], s->total[first], nmt_constraint_start());
        return 1;
    }
    if (t == s->max_len[b]) {
        for (int r = first; r < first + n; r++)
            if (nmt_constraint_done(s->state[r], C)) constrained_keep(s, b, t, r, s->total[r], t);
        return 0;
    }
    int count = 0;
    for (int r = first; r < first + n; r++) {
        if (nmt_constraint_done(s->state[r], C) && search_loops(s, b, t, r)) {
            constrained_keep(s, b, t, r, s->total[r] + s->eos[r], t + 1);
            continue;
        }
        const nmt_scored_token *top = s->best + (size_t)r * (size_t)s->top;
        for (int j = 0; j < s->top && top[j].token >= 0; j++) constrained_offer(s, b, t, &count, r, top[j].token, top[j].logprob);
        for (int e = 0; e < E && s->extra_token[(size_t)r * E + e] >= 0; e++) {
            const int32_t token = s->extra_token[(size_t)r * E + e];
            int listed = 0; /* already offered from the top list */
            for (int j = 0; j < s->top && !listed; j++) listed = top[j].token == token;
            if (!listed) constrained_offer(s, b, t, &count, r, token, s->extra_logprob[(size_t)r * E + e]);
        }
    }
    nmt_constraint_candidate *cand = s->ccand;
    nmt_constraint_sort(cand, count);
    /* eos finishes a hypothesis that ranks among the best K of those that met every phrase. */
    int live_count = 0;
    for (int i = 0, done_rank = 0; i < count; i++) {
        if (cand[i].state.progress != T) continue;
        if (cand[i].token == NMT_EOS && done_rank < K) constrained_keep(s, b, t, cand[i].row, cand[i].total, t + 1);
        done_rank++;
    }
    for (int i = 0; i < count; i++)
        if (cand[i].token != NMT_EOS) cand[live_count++] = cand[i];
    nmt_constraint_allocate(cand, live_count, K, T, s->bank);
    int live = 0, first_next = *next;
    for (int i = 0; i < live_count; i++)
        if (cand[i].keep) {
            constrained_append(s, t, next, cand[i].row, cand[i].token, cand[i].total, cand[i].state);
            live++;
        }
    if (live > 0 && s->done_count[b] == s->n_best &&
        s->done[(size_t)b * (size_t)s->n_best + (size_t)s->n_best - 1].score >=
            best_reachable(s->options.length_penalty, s->next_total[first_next], t + 1, s->max_len[b])) {
        *next = first_next;
        return 0;
    }
    return live;
}

/* The pieces that advance each live row of a constrained sentence (none in a prefix). */
static void fill_extras(nmt_search *s, int t, int batch) {
    for (int b = 0, r = 0; b < batch; b++)
        for (int i = 0; i < s->rows[b]; i++, r++) {
            int32_t *extra = s->extra_token + (size_t)r * (size_t)s->extra;
            int n = 0;
            if (s->phrase_count[b] > 0 && t >= s->prefix_len[b])
                n = nmt_constraint_wanted(s->phrases[b], s->phrase_count[b], &s->vocab, s->state[r], extra);
            for (int e = n; e < s->extra; e++) extra[e] = -1;
        }
}

/* Pieces the hypothesis of `row` at step t shares with s->pieces[0 .. n) from the start. */
static int shared_pieces(nmt_search *s, int t, int row, int n) {
    trace_pieces(s, t, row, t, s->other);
    int k = 0;
    while (k < n && k < t && s->other[k] == s->pieces[k]) k++;
    return k;
}

/* Passes on what sentence b has decided after step t: with `kept` live rows from next row `first`
 * on, the pieces its candidates for the best translation share; when it stopped (kept = 0), the
 * rest of its best translation. */
static void stream_sentence(nmt_search *s, int b, int t, int first, int kept, uint64_t key) {
    const finished *best = s->done_count[b] > 0 ? s->done + (size_t)b * (size_t)s->n_best : NULL;
    int n;
    if (kept > 0) {
        trace_pieces(s, t + 1, first, t + 1, s->pieces);
        n = t + 1;
        for (int r = first + 1; r < first + kept; r++) n = shared_pieces(s, t + 1, r, n);
        if (best) n = shared_pieces(s, best->step, best->row, n);
    } else {
        trace_pieces(s, best->step, best->row, best->step, s->pieces);
        n = best->step;
    }
    if (n > s->streamed[b] || kept == 0)
        s->options.stream(s->options.stream_ctx, key, s->pieces + s->streamed[b], n - s->streamed[b], kept == 0);
    if (n > s->streamed[b]) s->streamed[b] = n;
}

/* Traces finished hypothesis d of a sentence with src_pieces pieces back through the history. */
static int search_trace(const nmt_search *s, const finished *d, int src_pieces, int forced, nmt_hypothesis *h) {
    memset(h, 0, sizeof *h);
    const size_t cols = (size_t)src_pieces + 1;
    h->length = d->step;
    h->logprob = d->logprob;
    h->score = d->score;
    h->src_len = src_pieces;
    h->cut = d->tokens == d->step;
    h->tokens = nmt_malloc(((size_t)d->step + 1) * sizeof(int32_t));
    if (!h->tokens) return -1;
    if (s->attention) {
        h->attention = nmt_malloc(((size_t)d->step + 1) * cols * sizeof(float));
        if (!h->attention) return -1;
    }
    int row = d->row;
    const int decided = d->tokens - forced; /* the tokens after the prefix: steps forced .. forced + decided - 1 */
    double entropy = 0; /* of their distributions */
    for (int j = d->step; j >= 0; j--) {
        size_t at = (size_t)j * (size_t)s->rows_max + (size_t)row;
        if (s->entropy && j >= forced && j < forced + decided) entropy += s->entropy[at];
        if (h->attention) memcpy(h->attention + (size_t)j * cols, s->attention + at * (size_t)s->width, cols * sizeof(float));
        if (j > 0) {
            h->tokens[j - 1] = s->token[at];
            row = s->parent[at];
        }
    }
    h->mean_logprob = decided > 0 ? d->logprob / decided : 0;
    h->alternatives = s->entropy && decided > 0 ? exp(entropy / decided) : 0;
    return 0;
}

static int search_collect(const nmt_search *s, int batch, const int *src_pieces, nmt_translation *out) {
    for (int b = 0; b < batch; b++) {
        out[b].count = 0;
        out[b].hyps = nmt_calloc((size_t)s->done_count[b], sizeof(nmt_hypothesis));
        if (!out[b].hyps) goto fail;
        for (int i = 0; i < s->done_count[b]; i++) {
            out[b].count++;
            if (search_trace(s, s->done + (size_t)b * (size_t)s->n_best + i, src_pieces[b], s->prefix_len[b],
                             &out[b].hyps[i]) < 0) goto fail;
        }
    }
    return 0;
fail:
    for (int b = 0; b < batch; b++) nmt_translation_free(&out[b]);
    return -1;
}

/* Rewrites the logits of the live rows for the score controls from each row's pieces (rows still in
 * their target prefix are left alone: their piece is forced). */
static void control_rows(nmt_search *s, int t, int batch, int V) {
    for (int b = 0, r = 0; b < batch; b++)
        for (int i = 0; i < s->rows[b]; i++, r++) {
            if (t < s->prefix_len[b]) continue;
            float *row = s->logprobs + (size_t)r * (size_t)V;
            trace_pieces(s, t, r, t, s->pieces);
            if (s->mark) nmt_controls_penalize(row, s->pieces, t, s->options.repetition_penalty, s->mark);
            nmt_controls_ban_repeats(row, s->pieces, t, s->options.no_repeat_ngram_size);
        }
}

/* A step over the rows' full distributions (sampling, the score controls): the step's log-probabilities,
 * or its logits rewritten by the controls and normalised here; then each row's top list (or, with
 * sampling, the drawn token as its best) and its eos log-probability (NaN when nothing in the row
 * was finite, which the selection reports). */
static int search_rows(nmt_search *s, const nmt_decode_step *step, int t, int rows, int batch, const uint64_t *keys,
                       float *attention) {
    const size_t at = (size_t)t * (size_t)s->rows_max;
    const int V = step->vocab_size;
    if (s->full) {
        if (!step->step_logits) return nmt_error_set("decoding controls: this decoder gives no logits");
        if (step->step_logits(step->ctx, rows, s->token + at, s->logprobs, attention) < 0) return -1;
        control_rows(s, t, batch, V);
        nmt_log_softmax_rows(s->logprobs, rows, V);
    } else {
        if (!step->step_logprobs) return nmt_error_set("sampling: this decoder gives no full distributions");
        if (step->step_logprobs(step->ctx, rows, s->token + at, s->logprobs, attention) < 0) return -1;
    }
    for (int b = 0, r = 0; b < batch; b++)
        for (int i = 0; i < s->rows[b]; i++, r++) {
            const float *row = s->logprobs + (size_t)r * (size_t)V;
            nmt_scored_token *best = s->best + (size_t)r * (size_t)s->top;
            for (int e = 0; e < s->extra && s->extra_token[(size_t)r * s->extra + e] >= 0; e++)
                s->extra_logprob[(size_t)r * s->extra + e] = row[s->extra_token[(size_t)r * s->extra + e]];
            if (s->entropy) s->entropy[at + (size_t)r] = (float)nmt_controls_entropy(row, V);
            if (!s->options.sampling.enabled) {
                nmt_scored_clear(best, s->top);
                nmt_scored_merge(best, s->top, row, V, 0);
                s->eos[r] = row[NMT_EOS];
                continue;
            }
            const int32_t token = nmt_sampling_draw(&s->options.sampling, row, V, keys ? keys[b] : (uint64_t)b, t, s->draw);
            *best = token < 0 ? (nmt_scored_token){-INFINITY, -1} : (nmt_scored_token){row[token], token};
            s->eos[r] = token < 0 ? NAN : row[NMT_EOS];
        }
    return 0;
}

/* Sentence b's maximum length with its guide, or -1 with the error set for a guide it cannot follow. */
static int guided_max_length(const nmt_search *s, const nmt_decode_step *step, int b, int src_pieces,
                             const nmt_decode_guide *g) {
    int len = search_max_length(s, step, src_pieces);
    if (!g || (g->prefix_length == 0 && g->constraint_count == 0)) return len;
    const int T = nmt_constraint_check(g->constraints, g->constraint_count, step->vocab_size, b);
    if (T < 0) return -1;
    if (T > 0 && s->options.sampling.enabled)
        return nmt_error_set("sentence %d: constraints need greedy or beam search, not sampling", b);
    if (T > 0 && s->options.shortlist)
        return nmt_error_set("sentence %d: constraints cannot use a shortlist (their pieces may be outside it)", b);
    if (g->prefix_length < 0 || g->prefix_length > MAX_TARGET_PIECES || (g->prefix_length > 0 && !g->prefix))
        return nmt_error_set("sentence %d: target prefix of %d pieces", b, g->prefix_length);
    for (int i = 0; i < g->prefix_length; i++) {
        const int32_t p = g->prefix[i];
        if (p < 0 || p >= step->vocab_size || p == NMT_PAD || p == NMT_BOS || p == NMT_EOS)
            return nmt_error_set("sentence %d: target prefix piece %d is id %d, not a piece of the vocabulary of %d "
                                 "(pad, bos and eos are reserved)", b, i, p, step->vocab_size);
    }
    const int least = g->prefix_length + T; /* the prefix, then every phrase */
    if (step->max_steps > 0 && least > step->max_steps - 1)
        return nmt_error_set("sentence %d: target prefix and constraints of %d pieces are longer than the model's %d "
                             "positions allow", b, least, step->max_steps - 1);
    return len > least ? len : least;
}

int nmt_search_run(nmt_search *s, const nmt_decode_step *step, int batch, const int *src_pieces, const uint64_t *keys,
                   int src_width, nmt_translation *out) {
    return nmt_search_run_guided(s, step, batch, src_pieces, keys, NULL, src_width, out);
}

int nmt_search_run_guided(nmt_search *s, const nmt_decode_step *step, int batch, const int *src_pieces,
                          const uint64_t *keys, const nmt_decode_guide *const *guides, int src_width,
                          nmt_translation *out) {
    memset(out, 0, (size_t)(batch > 0 ? batch : 0) * sizeof *out);
    if (batch < 1) return nmt_error_set("beam search: empty batch");
    if (step->vocab_size <= NMT_EOS) return nmt_error_set("beam search: vocabulary of %d tokens", step->vocab_size);
    int steps = 0;
    s->extra = s->most_pieces = 0;
    for (int b = 0; b < batch; b++) {
        if (src_pieces[b] < 1 || src_pieces[b] + 1 > src_width)
            return nmt_error_set("beam search: sentence %d has %d source pieces (width %d)", b, src_pieces[b], src_width);
        const nmt_decode_guide *g = guides ? guides[b] : NULL;
        int len = guided_max_length(s, step, b, src_pieces[b], g);
        if (len < 0) return -1;
        if (len + 1 > steps) steps = len + 1;
        if (g && g->constraint_count > s->extra) s->extra = g->constraint_count;
        const int T = g ? nmt_constraint_check(g->constraints, g->constraint_count, step->vocab_size, b) : 0;
        if (T > s->most_pieces) s->most_pieces = T;
    }
    if (s->extra > 0 && !s->full && !step->step_extra)
        return nmt_error_set("constraints: this decoder cannot score the pieces that advance a hypothesis");
    if (search_reserve(s, batch, steps, src_width, step->vocab_size) < 0) return -1;
    for (int b = 0; b < batch; b++) {
        const nmt_decode_guide *g = guides ? guides[b] : NULL;
        s->max_len[b] = guided_max_length(s, step, b, src_pieces[b], g);
        s->prefix_len[b] = g ? g->prefix_length : 0;
        s->prefix[b] = g ? g->prefix : NULL;
        s->phrase_count[b] = g ? g->constraint_count : 0;
        s->phrases[b] = g ? g->constraints : NULL;
        s->phrase_pieces[b] = g ? nmt_constraint_check(g->constraints, g->constraint_count, step->vocab_size, b) : 0;
        s->sentences[b] = g && g->sentences > 1 ? g->sentences : 1;
        if (s->extra) s->state[b] = nmt_constraint_start();
        s->rows[b] = 1;
        s->streamed[b] = 0;
        s->done_count[b] = 0;
        s->finished_count[b] = 0;
        s->top_finished[b] = 0;
        s->token[b] = NMT_BOS;
        s->parent[b] = b;
        s->total[b] = 0;
    }
    int rows = batch;
    for (int t = 0; rows > 0; t++) {
        const size_t at = (size_t)t * (size_t)s->rows_max;
        float *attention = s->attention ? s->attention + at * (size_t)s->width : NULL;
        if (s->extra) fill_extras(s, t, batch);
        int rc;
        if (s->options.sampling.enabled || s->full) rc = search_rows(s, step, t, rows, batch, keys, attention);
        else if (s->extra)
            rc = step->step_extra(step->ctx, rows, s->token + at, s->top, s->best, s->eos, attention, s->extra,
                                  s->extra_token, s->extra_logprob);
        else rc = step->step(step->ctx, rows, s->token + at, s->top, s->best, s->eos, attention);
        if (rc < 0) return -1;
        int next = 0, first = 0;
        for (int b = 0; b < batch; b++) {
            int n = s->rows[b];
            if (n == 0) {
                s->next_rows[b] = 0;
                continue;
            }
            const int first_next = next;
            int kept = s->phrase_count[b] > 0 ? select_constrained(s, b, t, first, n, &next)
                       : s->options.greedy     ? select_greedy(s, b, t, first, &next)
                                               : select_beam(s, b, t, first, n, &next);
            if (kept < 0) return -1;
            if (s->options.stream && (kept > 0 || s->done_count[b] > 0))
                stream_sentence(s, b, t, first_next, kept, keys ? keys[b] : (uint64_t)b);
            s->next_rows[b] = kept;
            first += n;
        }
        if (next == 0) break;
        const int32_t *parents = s->parent + at + s->rows_max;
        int identity = next == rows;
        for (int r = 0; identity && r < next; r++) identity = parents[r] == r;
        if (!identity && step->reorder(step->ctx, next, parents) < 0) return -1;
        double *swap = s->total;
        s->total = s->next_total;
        s->next_total = swap;
        int *swap_rows = s->rows;
        s->rows = s->next_rows;
        s->next_rows = swap_rows;
        nmt_constraint_state *swap_state = s->state;
        s->state = s->next_state;
        s->next_state = swap_state;
        rows = next;
    }
    for (int b = 0; b < batch; b++)
        if (s->done_count[b] == 0)
            return nmt_error_set("sentence %d: no hypothesis met its %d constraints within %d pieces", b,
                                 s->phrase_count[b], s->max_len[b]);
    return search_collect(s, batch, src_pieces, out);
}
