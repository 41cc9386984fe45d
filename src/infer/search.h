/* search: greedy and beam search over an abstract decoder step, the bottom of the inference layer.
 *
 * It needs no model: the decoder is reached only through the step interface below. The module also
 * holds what a search is asked and what it returns: the decoding options, the length penalty and
 * maximum length, the scored-token lists a step fills, and the hypotheses of each sentence.
 *
 * The search drives a decoder through two callbacks (nmt_decode_step): `step` advances R live rows
 * by one token and returns each row's few most probable continuations (and, when asked, the
 * cross-attention of each row over the source); `reorder` rebuilds the rows from parent indices
 * after each selection (beams that survive, expand or die). A batch starts with one row per
 * sentence, in sentence order, fed bos; the rows of one sentence are always contiguous and the
 * sentences keep their order, so an implementation can map rows to sentences by following the
 * parents. incremental.h provides the Transformer's step; tests drive the search with toy scorers.
 *
 * Beam search (batched over sentences and beams). Each step, per sentence, the best K + k of the
 * k live rows' continuations are ranked by total log-probability (pad and bos are never
 * generated); an eos among the best K finishes that hypothesis, the best K others stay live.
 * Finished hypotheses are ranked by GNMT's normalised score logprob / lp(|y|), with
 * lp(|y|) = ((5 + |y|) / 6)^alpha and |y| = its scored tokens (options.ctranslate2: CTranslate2's penalty and
 * stopping rule instead). A sentence stops when its n-th best finished
 * score is at least the best score any live hypothesis could still reach: log-probabilities are
 * <= 0, so a live hypothesis with total L can at best end with L / max(lp) over the lengths it can
 * still reach (without constraints, each live row that cannot reach it is dropped before the next step: its
 * continuations would rank below every one that can, so the result is the same with fewer rows to
 * decode); or when it reaches its maximum length floor(ratio * |x|) + 10 pieces (|x| = source
 * pieces; less if the step's max_steps demands), where each live hypothesis ends without eos: its
 * scored tokens are its pieces, eos's log-probability does not count (CTranslate2's and Marian's
 * convention; fairseq forces eos there instead). Ties go to the earlier row
 * and the smaller token id, so results are deterministic and a sentence's result does not depend
 * on the rest of its batch.
 *
 * Target prefix (per sentence, nmt_decode_guide): the first P pieces of every hypothesis of the
 * sentence are the given ones, fed one a step to the sentence's single row, and the search goes on
 * from there. As in CTranslate2 (decoding.cc, update_sample_with_prefix), the forced pieces add
 * nothing to the log-probability (it counts the pieces after the prefix and eos) while the length
 * penalty counts every piece, prefix included; eos is never chosen inside the prefix; the maximum
 * length is at least P (a prefix that reaches it ends the hypothesis, cut there).
 *
 * Score controls (options; controls.h says what each does to a row): the repetition penalty and the
 * no-repeat n-grams rewrite each live row's logits from its pieces so far (target prefix included)
 * before the search normalises the row itself (log_softmax) and builds the row's top list; the
 * forced pieces of a target prefix are not rewritten. The loop guard ends a hypothesis with eos
 * forced (its log-probability counts) once its pieces after the prefix make it end in a loop.
 *
 * Lexical constraints (per sentence, nmt_decode_guide; constraint.h): every hypothesis returned holds
 * each of the sentence's phrases whole, placed once by the search, after the target prefix (whose
 * pieces meet nothing). A constrained sentence takes the bank step of constraint.h in place of the
 * steps above, with K = 1 on the greedy path; its eos candidates finish when among the best K of
 * the candidates that have met every phrase; the maximum length is at least P + T (T: the phrases'
 * pieces), where only hypotheses that met every phrase finish; the loop guard ends only those. The
 * pieces that advance a hypothesis are scored by the step's step_extra (the same numbers as its top
 * lists) or read from the full rows. A constrained hypothesis is ranked with the length penalty of
 * its pieces up to its n-th sentence end (a piece whose text, options.piece_text, ends in . ! or ?;
 * n: the guide's source sentences), so that what runs on after it earns no length bonus. A sentence without constraints is searched exactly as without,
 * whatever its batch holds.
 *
 * Streaming (options.stream): after each step, a sentence's decided pieces are those every
 * hypothesis that can still be its best translation shares: its live hypotheses and its best
 * finished one (a finished one below it never rises). Each step passes on the pieces newly decided
 * (greedy: each piece as it is chosen), and when the sentence stops the rest of its best
 * translation, so the pieces passed on concatenate to hyps[0]'s. The cost, only when on: tracing
 * each live hypothesis's pieces at each step.
 *
 * Greedy search (a dedicated path): each row takes its most probable token until eos. With sampling
 * (sampling.h) it takes a token drawn from the row's full distribution instead, which the step's
 * step_logprobs gives; the draws are keyed by each sentence's key, so a sentence's result again does
 * not depend on its batch.
 */
#ifndef NMT_SEARCH_H
#define NMT_SEARCH_H

#include <stdint.h>

#include "compute/packed.h"
#include "infer/constraint.h"
#include "infer/sampling.h"

/* One of a row's most probable next tokens. */
typedef struct nmt_scored_token {
    float logprob; /* natural log */
    int32_t token; /* -1: no token (a list with fewer candidates than its length) */
} nmt_scored_token;

/* A row's top list of k tokens: best first, ties to the smaller token id, pad and bos never in it.
 * Clear sets every entry to no token at -infinity; merge offers scores[0..n) of the tokens first ..
 * first + n - 1 (NaN never enters). Built chunk by chunk, the list is that of the whole row. */
void nmt_scored_clear(nmt_scored_token *best, int k);
void nmt_scored_merge(nmt_scored_token *best, int k, const float *scores, int n, int32_t first);

typedef struct nmt_decode_step {
    void *ctx;
    int vocab_size; /* V */
    int max_steps;  /* tokens a row can be fed, bos included (0 = no limit): a model with learned
                       positions has a table of this many; the search forces eos in time */
    /* Advances `rows` rows by one token: tokens[rows] is each row's last token. Fills best[rows, k]
     * with each row's top list of k (nmt_scored_merge's order, log-probabilities normalised over
     * the whole vocabulary), eos_logprob[rows] with each row's eos log-probability (NaN when the
     * row's scores were not finite), and, when attention is not NULL, attention[rows, S] (S = the
     * batch's source width given to the search) with each row's cross-attention weights. The
     * search asks for k = 1 (greedy) or 2K (beam K). Returns 0, or -1 with the error set. */
    int (*step)(void *ctx, int rows, const int32_t *tokens, int k, nmt_scored_token *best, float *eos_logprob,
                float *attention);
    /* There are `rows` new rows; new row r continues old row parents[r] (a row of the same
     * sentence: the parents of one sentence's rows stay within its old rows). */
    int (*reorder)(void *ctx, int rows, const int32_t *parents);
    /* Advances rows as step does, filling logprobs[rows, V] with each row's log-probabilities over
     * the whole vocabulary (for sampling); NULL where the decoder has no such step. */
    int (*step_logprobs)(void *ctx, int rows, const int32_t *tokens, float *logprobs, float *attention);
    /* The same with each row's raw logits (unnormalised; log_softmax of a row gives step_logprobs'
     * row bit for bit), for the controls that change scores; NULL where the decoder has none. */
    int (*step_logits)(void *ctx, int rows, const int32_t *tokens, float *logits, float *attention);
    /* step with, besides, extra_logprobs[rows, extra]: the log-probability of each row's tokens
     * extra_tokens[rows, extra] (-1: none; the same numbers as the top lists'), for constrained
     * decoding; NULL where the decoder has none. */
    int (*step_extra)(void *ctx, int rows, const int32_t *tokens, int k, nmt_scored_token *best, float *eos_logprob,
                      float *attention, int extra, const int32_t *extra_tokens, float *extra_logprobs);
} nmt_decode_step;

/* Receives the pieces of the sentence with sampling key `key` (the translator's: its line) as the
 * search decides them: pieces[count] follow those given before; the last call has final = 1 (count
 * may be 0). Called from the thread decoding the sentence's batch (several at once for different
 * sentences); the pieces are the search's, valid during the call. */
typedef void (*nmt_decode_stream)(void *ctx, uint64_t key, const int32_t *pieces, int count, int final);

typedef struct nmt_decode_options {
    int greedy;             /* 1: the greedy path (beam_size and n_best are then 1) */
    int beam_size;          /* K (5) */
    int n_best;             /* hypotheses returned per sentence, 1..K (1); with sampling, the samples
                               drawn per sentence (nmt_translator_run) */
    double length_penalty;  /* alpha (0.6); 0 ranks by plain log-probability */
    int ctranslate2;        /* 1: rank and stop as CTranslate2's beam search: length penalty |y|^alpha
                               (|y| = scored tokens), and a sentence stops once K hypotheses have
                               finished (alpha > 0), or with alpha 0 once n_best have and the best
                               candidate of some step was eos; at the step that chooses the
                               last piece only the best K candidates finish (the others
                               without eos, cut at the next step) and nothing stops the sentence
                               before; 0 (default): GNMT's penalty and the
                               stop when no live hypothesis can win (above) */
    double max_length_ratio;/* R (2): at most floor(R * |x|) + 10 target pieces */
    int max_length;         /* N > 0: at most N target pieces too, whatever |x| (CTranslate2's
                               max_decoding_length, one bound for every sentence); 0 (default): none */
    int attention;          /* 1: return each hypothesis's cross-attention rows (alignments, maps) */
    int batch_size;         /* sentences per batch for nmt_translator_run (64) */
    int batch_tokens;       /* at most this many padded source tokens (pieces + eos) per batch: a run
                               whose longest source has L pieces uses batches of
                               min(batch_size, max(1, batch_tokens / (L + 1))) (0 = no bound) */
    nmt_precision precision;/* of the translator's matrix products (fp32) */
    const struct nmt_shortlist *shortlist; /* the output layer's candidates per batch (shortlist.h), or NULL */
    nmt_sampling sampling;  /* enabled: greedy search draws its tokens (no shortlist then) */
    /* Score controls (controls.h); any of them on makes the search read each row's whole logits
     * (step_logits) instead of the fused top lists, and rules out a shortlist. */
    double repetition_penalty; /* P > 0: CTranslate2's penalty of the pieces already generated (1 = off) */
    int no_repeat_ngram_size;  /* N: no N-gram twice in a hypothesis (0 = off) */
    int loop_repeats;          /* R: the loop guard's bound, which ends a hypothesis stuck repeating one
                                  1..4-gram (4; 0 = off); it reads only the pieces chosen */
    int confidence;            /* 1: each hypothesis's alternatives (the whole logits are read then too) */
    const unsigned char *word_joins; /* [V] 1: a target piece that continues the word before it; a
                                  constraint phrase followed by one is not met (constraint.h), so
                                  phrases stand as whole words (NULL: met at their last piece) */
    const char *const *piece_text; /* [V] each target piece's text, pieces written one after another
                                  spelling the output (SentencePiece's): a constraint phrase is then
                                  met by any pieces that spell it (constraint.h); NULL: by its own */
    nmt_decode_stream stream;  /* each sentence's best translation as it is decided, or NULL */
    void *stream_ctx;
} nmt_decode_options;

nmt_decode_options nmt_decode_options_default(void);
/* Rejects impossible options (K < 1, n_best outside 1..K, a negative ratio, ...). */
int nmt_decode_options_check(const nmt_decode_options *options);

/* What one sentence's search must respect (the arrays are the caller's, read during the run). */
typedef struct nmt_decode_guide {
    const int32_t *prefix; /* [prefix_length] target pieces every hypothesis starts with (no pad, bos, eos) */
    int prefix_length;     /* 0: none */
    const nmt_decode_phrase *constraints; /* [constraint_count] phrases every hypothesis holds (constraint.h) */
    int constraint_count;  /* 0: none; at most NMT_CONSTRAINT_MAX */
    int sentences;         /* sentences of the source (0: one): a constrained hypothesis's length
                              penalty counts its pieces up to its own sentences-th sentence end */
} nmt_decode_guide;

typedef struct nmt_hypothesis {
    int32_t *tokens;   /* [length] target pieces, eos not included */
    int length;
    double logprob;    /* natural-log probability of the pieces after a target prefix + eos (no eos
                          for a hypothesis cut at the maximum length: length = the limit) */
    double score;      /* logprob / lp(tokens) (length + 1, or length when cut): the rank of the
                          hypothesis (constrained: the length up to its n-th sentence end, above) */
    float *attention;  /* [(length + 1), src_len + 1]: row j = target token j (the last: eos, or the
                          step a cut hypothesis stopped at), columns = source pieces + eos; NULL
                          unless options.attention */
    int src_len;       /* source pieces */
    int cut;           /* 1: cut at the maximum length (no eos: logprob and the tokens end at its pieces) */
    /* Confidence, over the hypothesis's decided tokens (pieces after a target prefix, + eos unless
     * cut): the mean log-probability per token, logprob / tokens (always), and the alternatives, exp of the mean
     * entropy (nats) of the distributions the tokens were chosen from: the number of equally
     * likely choices the model saw at a typical step (1: certain at every step; V: guessing).
     * 0 unless options.confidence. */
    double mean_logprob;
    double alternatives;
} nmt_hypothesis;

typedef struct nmt_translation {
    nmt_hypothesis *hyps; /* [count], best first, distinct */
    int count;
} nmt_translation;

void nmt_translation_free(nmt_translation *t);

/* The hard alignment of a hypothesis with attention: src_of[j] = the source piece (< src_len) that
 * target piece j attends to most (the smaller index on ties), for j < length. */
void nmt_hypothesis_alignment(const nmt_hypothesis *h, int *src_of);

/* GNMT's length penalty ((5 + tokens) / 6)^alpha. */
double nmt_length_penalty(double alpha, int tokens);
/* Most target pieces a hypothesis may have for a source of src_pieces pieces. */
int nmt_decode_max_length(const nmt_decode_options *options, int src_pieces);

/* Search workspace, reused across batches (it grows to the largest batch seen). */
typedef struct nmt_search nmt_search;

int nmt_search_create(nmt_search **search, const nmt_decode_options *options);
void nmt_search_free(nmt_search *search);
/* Decodes one batch of `batch` sentences whose decoder `step` has just been primed (one row per
 * sentence). src_pieces[batch] (each >= 1) sets the maximum lengths; keys[batch] are the sentences'
 * sampling keys (NULL: their indices in the batch); src_width is the S of the step's attention rows
 * (>= every src_pieces + 1). Fills out[batch] (free each with nmt_translation_free). */
int nmt_search_run(nmt_search *search, const nmt_decode_step *step, int batch, const int *src_pieces,
                   const uint64_t *keys, int src_width, nmt_translation *out);
/* The same with guides[batch] (NULL: none; a NULL entry or a zero guide: none for that sentence). */
int nmt_search_run_guided(nmt_search *search, const nmt_decode_step *step, int batch, const int *src_pieces,
                          const uint64_t *keys, const nmt_decode_guide *const *guides, int src_width,
                          nmt_translation *out);

#endif
