/* Tests of the search: greedy and beam search driven by toy scorers.
 *
 * Two scorers stand in for the model. The hash scorer (toy_scorer.h) gives every (sentence, prefix)
 * a pseudo-random distribution, so search results can be checked against properties and against a
 * replay of the hypothesis through the same scorer. The table scorer gives hand-set probabilities to a few
 * prefixes, so that the expected translations and log-probabilities can be worked out by hand.
 */
#include "infer/search.h"
#include "base/random.h"
#include "text/vocab.h"
#include "base/util.h"
#include "testing.h"
#include "toy_scorer.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { TABLE_V = 6, TOK_A = 4, TOK_B = 5 };

enum { SENTENCES = 40 };

/* Top lists: best first, ties to the smaller token, pad and bos and NaN never in, a short list
 * padded with no token; merged chunk by chunk it is the list of the whole row. */
START_TEST(scored_lists_rank_and_merge) {
    const float scores[10] = {9.0f, 1.0f, 8.0f, 0.5f, 2.0f, NAN, 2.0f, -1.0f, 0.5f, 3.0f};
    nmt_scored_token whole[5], chunked[5];
    nmt_scored_clear(whole, 5);
    nmt_scored_merge(whole, 5, scores, 10, 0);
    /* pad (0) and bos (2) are skipped although they score highest; 4 and 6 tie at 2.0. */
    const int32_t tokens[5] = {9, 4, 6, 1, 3};
    const float values[5] = {3.0f, 2.0f, 2.0f, 1.0f, 0.5f};
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(whole[i].token, tokens[i]);
        ck_assert(whole[i].logprob == values[i]);
    }
    for (int split = 1; split < 10; split++) {
        nmt_scored_clear(chunked, 5);
        nmt_scored_merge(chunked, 5, scores, split, 0);
        nmt_scored_merge(chunked, 5, scores + split, 10 - split, split);
        ck_assert_mem_eq(chunked, whole, sizeof whole);
    }
    nmt_scored_token roomy[12];
    nmt_scored_clear(roomy, 12);
    nmt_scored_merge(roomy, 12, scores, 10, 0);
    ck_assert_int_eq(roomy[6].token, 7); /* 7 candidates: 10 scores less pad, bos and the NaN */
    ck_assert_int_eq(roomy[7].token, -1);
    ck_assert(roomy[7].logprob == -INFINITY);
}
END_TEST

START_TEST(beam_one_is_greedy_without_length_penalty) {
    nmt_translation g[SENTENCES], b[SENTENCES];
    nmt_decode_options go = greedy_options(), bo = beam_options(1, 1, 0.0);
    go.length_penalty = 0.0;
    toy_decode(&go, 0, SENTENCES, 0.3, g);
    toy_decode(&bo, 0, SENTENCES, 0.3, b);
    for (int i = 0; i < SENTENCES; i++) {
        ck_assert_int_eq(g[i].count, 1);
        ck_assert_int_eq(b[i].count, 1);
        ck_assert(same_tokens(&g[i].hyps[0], &b[i].hyps[0]));
        ck_assert(g[i].hyps[0].logprob == b[i].hyps[0].logprob);
        check_replay(&g[i].hyps[0], i, 0.3);
    }
    free_all(g, SENTENCES);
    free_all(b, SENTENCES);
}
END_TEST

/* With a length penalty, beam 1 holds greedy's hypothesis among its finished ones (it follows the
 * same path until greedy's argmax is eos) but may go on to a longer one that scores better, so it
 * never scores below greedy (length_penalty_keeps_searching_past_the_first_eos shows it going
 * further; a wider beam can lose to greedy: see beam_can_lose_to_greedy). */
START_TEST(beam_one_never_scores_below_greedy) {
    const double alphas[] = {0.0, 0.6, 1.0};
    for (int a = 0; a < 3; a++) {
        nmt_translation g[SENTENCES], b[SENTENCES];
        nmt_decode_options go = greedy_options(), bo = beam_options(1, 1, alphas[a]);
        go.length_penalty = alphas[a];
        toy_decode(&go, 0, SENTENCES, 0.2, g);
        toy_decode(&bo, 0, SENTENCES, 0.2, b);
        for (int i = 0; i < SENTENCES; i++) {
            ck_assert_msg(b[i].hyps[0].score >= g[i].hyps[0].score, "alpha %g sentence %d: %g < greedy %g", alphas[a], i,
                          b[i].hyps[0].score, g[i].hyps[0].score);
        }
        free_all(b, SENTENCES);
        free_all(g, SENTENCES);
    }
}
END_TEST

/* The search written directly from its definition, one sentence at a time: every live prefix is
 * replayed through the hash scorer, all continuations are sorted (ties: earlier row, smaller id). */
typedef struct ref_hyp {
    int32_t tokens[64];
    int length;
    double total, score;
} ref_hyp;

static int ref_compare(const void *pa, const void *pb) {
    const ref_hyp *a = pa, *b = pb; /* candidates: tokens[length-1] is the new token, score = parent */
    if (a->total != b->total) return a->total < b->total ? 1 : -1;
    if (a->score != b->score) return a->score < b->score ? -1 : 1;
    return a->tokens[a->length - 1] - b->tokens[b->length - 1];
}

static void ref_logprobs(const ref_hyp *h, int index, double eos_slope, float *lp) {
    static toy t;
    toy_replay_start(&t, index, eos_slope);
    int32_t token = NMT_BOS;
    for (int j = 0; j <= h->length; j++) {
        toy_row(&t, 0, token, lp, NULL, 0);
        if (j < h->length) token = h->tokens[j];
    }
}

/* Keeps finished hypothesis h among the N best of done[0 .. *n_done) (an equal score stays behind). */
static void ref_keep(ref_hyp *done, int *n_done, int N, const ref_hyp *h) {
    int at = *n_done < N ? (*n_done)++ : N;
    while (at > 0 && done[at - 1].score < h->score) {
        if (at < N) done[at] = done[at - 1];
        at--;
    }
    if (at < N) done[at] = *h;
}

/* Every continuation of live[0 .. n_live) but pad and bos into cand, best first (ties: earlier row,
 * smaller id; each candidate's score holds its row); returns how many. */
static int ref_expand(const ref_hyp *live, int n_live, int index, double eos_slope, ref_hyp *cand) {
    int n_cand = 0;
    for (int i = 0; i < n_live; i++) {
        float lp[TOY_V];
        ref_logprobs(&live[i], index, eos_slope, lp);
        for (int32_t v = 0; v < TOY_V; v++) {
            if (v == NMT_PAD || v == NMT_BOS) continue;
            cand[n_cand] = live[i];
            cand[n_cand].tokens[cand[n_cand].length++] = v;
            cand[n_cand].total = live[i].total + lp[v];
            cand[n_cand].score = i;
            n_cand++;
        }
    }
    qsort(cand, (size_t)n_cand, sizeof *cand, ref_compare);
    return n_cand;
}

static int ref_beam(int index, int K, int N, double alpha, double eos_slope, ref_hyp *done) {
    static ref_hyp live[16], cand[16 * TOY_V], next[16];
    const nmt_decode_options o = beam_options(K, N, alpha);
    const int max_len = nmt_decode_max_length(&o, 1 + index % (TOY_WIDTH - 1));
    int n_live = 1, n_done = 0;
    memset(live, 0, sizeof live);
    for (int t = 0; n_live > 0; t++) {
        if (t == max_len) { /* every live hypothesis is cut: it ends without eos */
            for (int i = 0; i < n_live; i++) {
                live[i].score = live[i].total / nmt_length_penalty(alpha, live[i].length);
                ref_keep(done, &n_done, N, &live[i]);
            }
            break;
        }
        const int n_cand = ref_expand(live, n_live, index, eos_slope, cand);
        int n_next = 0;
        for (int c = 0; c < n_cand && n_next < K; c++) {
            ref_hyp h = cand[c];
            if (h.tokens[h.length - 1] != NMT_EOS) {
                next[n_next++] = h;
                continue;
            }
            if (c >= K) continue;
            h.length--;
            h.score = h.total / nmt_length_penalty(alpha, h.length + 1);
            ref_keep(done, &n_done, N, &h);
        }
        double lp_max = nmt_length_penalty(alpha, max_len + 1);
        if (n_next > 0 && n_done == N && done[N - 1].score >= next[0].total / lp_max) break;
        memcpy(live, next, sizeof next);
        n_live = n_next;
    }
    return n_done;
}

START_TEST(beam_equals_the_reference_search) {
    const int beams[] = {1, 3, 5};
    const double alphas[] = {0.0, 0.6};
    for (int k = 0; k < 3; k++)
        for (int a = 0; a < 2; a++) {
            int N = beams[k] < 3 ? beams[k] : 3;
            nmt_translation t[SENTENCES];
            nmt_decode_options o = beam_options(beams[k], N, alphas[a]);
            toy_decode(&o, 0, SENTENCES, 0.2, t);
            for (int i = 0; i < SENTENCES; i++) {
                ref_hyp done[8];
                int n = ref_beam(i, beams[k], N, alphas[a], 0.2, done);
                ck_assert_int_eq(t[i].count, n);
                for (int j = 0; j < n; j++) {
                    ck_assert_int_eq(t[i].hyps[j].length, done[j].length);
                    ck_assert_mem_eq(t[i].hyps[j].tokens, done[j].tokens, (size_t)done[j].length * sizeof(int32_t));
                    ck_assert(t[i].hyps[j].logprob == done[j].total && t[i].hyps[j].score == done[j].score);
                }
            }
            free_all(t, SENTENCES);
        }
}
END_TEST

/* CTranslate2's beam search (decoding.cc, BeamSearch::search) written from its definition, one
 * sentence at a time: each step ranks every continuation of the live hypotheses and takes the best
 * 2K; an eos among the first K finishes its hypothesis, and the first K others stay live; at the
 * step that chooses the last piece the first K all finish, those without eos cut there. A sentence
 * stops then, or with alpha 0 once N have finished and some step's best candidate was eos, or with
 * alpha > 0 once K have. Scores: log-probability / tokens^alpha (pieces + eos; pieces when cut). */
static int ref_ct2_beam(const nmt_decode_options *o, int index, double eos_slope, ref_hyp *done) {
    static ref_hyp live[16], cand[16 * TOY_V], next[16];
    const int K = o->beam_size, N = o->n_best, max_len = nmt_decode_max_length(o, 1 + index % (TOY_WIDTH - 1));
    int n_live = 1, n_done = 0, finished = 0, top_finished = 0;
    memset(live, 0, sizeof live);
    for (int t = 0; t < max_len; t++) {
        const int n_cand = ref_expand(live, n_live, index, eos_slope, cand);
        const int last = t + 1 == max_len;
        int n_next = 0;
        for (int c = 0; c < n_cand && c < 2 * K; c++) {
            ref_hyp h = cand[c];
            const int eos = h.tokens[h.length - 1] == NMT_EOS;
            if (c < K && (eos || last)) {
                top_finished |= c == 0;
                h.length -= eos;
                h.score = h.total / pow(h.length + eos, o->length_penalty);
                ref_keep(done, &n_done, N, &h);
                finished++;
            } else if (!eos && n_next < K) {
                next[n_next++] = h;
            }
        }
        if (o->length_penalty == 0 ? top_finished && finished >= N : finished >= K) break;
        memcpy(live, next, sizeof next);
        n_live = n_next;
    }
    return n_done;
}

/* --ct2-search (options.ctranslate2) against the reference above, on sentences many of whose
 * hypotheses reach the maximum length. */
START_TEST(ct2_search_equals_the_reference) {
    const int beams[] = {1, 3, 5};
    const double alphas[] = {0.0, 1.0};
    int cut = 0;
    for (int k = 0; k < 3; k++)
        for (int a = 0; a < 2; a++) {
            nmt_translation t[SENTENCES];
            nmt_decode_options o = beam_options(beams[k], beams[k] < 3 ? beams[k] : 3, alphas[a]);
            o.ctranslate2 = 1;
            o.loop_repeats = 0; /* CTranslate2 has no loop guard */
            o.max_length_ratio = 0.5;
            toy_decode(&o, 0, SENTENCES, 0.05, t);
            for (int i = 0; i < SENTENCES; i++) {
                ref_hyp done[8];
                int n = ref_ct2_beam(&o, i, 0.05, done);
                ck_assert_int_eq(t[i].count, n);
                for (int j = 0; j < n; j++) {
                    const nmt_hypothesis *h = &t[i].hyps[j];
                    ck_assert_int_eq(h->length, done[j].length);
                    ck_assert_mem_eq(h->tokens, done[j].tokens, (size_t)done[j].length * sizeof(int32_t));
                    ck_assert(h->logprob == done[j].total);
                    ck_assert_double_eq_tol(h->score, done[j].score, 1e-12);
                    cut += h->cut;
                }
            }
            free_all(t, SENTENCES);
        }
    ck_assert_int_gt(cut, 0);
}
END_TEST

START_TEST(n_best_sorted_distinct_and_replayable) {
    nmt_translation t[SENTENCES];
    nmt_decode_options o = beam_options(6, 6, 0.6);
    o.attention = 1;
    toy_decode(&o, 0, SENTENCES, 0.2, t);
    for (int i = 0; i < SENTENCES; i++) {
        ck_assert_int_eq(t[i].count, 6);
        for (int j = 0; j < t[i].count; j++) {
            const nmt_hypothesis *h = &t[i].hyps[j];
            ck_assert_double_eq_tol(h->score, h->logprob / nmt_length_penalty(0.6, h->length + !h->cut), 1e-12);
            ck_assert_int_le(h->length, nmt_decode_max_length(&o, h->src_len));
            if (j > 0) ck_assert(t[i].hyps[j - 1].score >= h->score);
            for (int k = 0; k < j; k++) ck_assert(!same_tokens(&t[i].hyps[k], h));
            check_replay(h, i, 0.2);
        }
    }
    free_all(t, SENTENCES);
}
END_TEST

/* Sampled translations: each is a path of the scorer with its own log-probability, the same seed
 * draws the same ones, another seed others, and top-k 1 draws greedy search's. */
START_TEST(sampling_draws_paths_of_the_model) {
    nmt_translation a[SENTENCES], b[SENTENCES], c[SENTENCES], g[SENTENCES], k1[SENTENCES];
    nmt_decode_options o = sampling_options(0, 1, 3), greedy = greedy_options(), top1 = sampling_options(1, 1, 3);
    o.attention = 1;
    toy_decode(&o, 0, SENTENCES, 0.2, a);
    toy_decode(&o, 0, SENTENCES, 0.2, b);
    o.sampling.seed = 4;
    toy_decode(&o, 0, SENTENCES, 0.2, c);
    toy_decode(&greedy, 0, SENTENCES, 0.2, g);
    toy_decode(&top1, 0, SENTENCES, 0.2, k1);
    int differ = 0, from_greedy = 0;
    for (int i = 0; i < SENTENCES; i++) {
        ck_assert_int_eq(a[i].count, 1);
        check_replay(&a[i].hyps[0], i, 0.2);
        ck_assert(same_tokens(&a[i].hyps[0], &b[i].hyps[0]) && a[i].hyps[0].logprob == b[i].hyps[0].logprob);
        differ += !same_tokens(&a[i].hyps[0], &c[i].hyps[0]);
        from_greedy += !same_tokens(&a[i].hyps[0], &g[i].hyps[0]);
        ck_assert(same_tokens(&k1[i].hyps[0], &g[i].hyps[0]) && k1[i].hyps[0].logprob == g[i].hyps[0].logprob);
    }
    ck_assert_int_gt(differ, SENTENCES / 2);
    ck_assert_int_gt(from_greedy, SENTENCES / 2);
    free_all(a, SENTENCES);
    free_all(b, SENTENCES);
    free_all(c, SENTENCES);
    free_all(g, SENTENCES);
    free_all(k1, SENTENCES);
    /* A decoder that gives no full distributions cannot be sampled. */
    static toy t;
    memset(&t, 0, sizeof t);
    uint64_t seed = 1;
    int pieces = 2;
    toy_prime(&t, 1, &seed, &pieces);
    nmt_search *s;
    ck_assert_int_eq(nmt_search_create(&s, &o), 0);
    nmt_decode_step step = {&t, TOY_V, 0, toy_step, toy_reorder, NULL, NULL, NULL};
    ck_assert_int_eq(nmt_search_run(s, &step, 1, &pieces, NULL, TOY_WIDTH, a), -1);
    ck_assert_str_eq(nmt_error(), "sampling: this decoder gives no full distributions");
    nmt_search_free(s);
}
END_TEST

START_TEST(batched_equals_one_at_a_time) {
    const nmt_decode_options opts[] = {beam_options(5, 3, 0.6), beam_options(3, 1, 0.0), greedy_options(),
                                       sampling_options(0, 1, 7), sampling_options(3, 0.9, 7)};
    for (int k = 0; k < 5; k++) {
        nmt_decode_options o = opts[k];
        o.attention = 1;
        nmt_translation batched[SENTENCES];
        toy_decode(&o, 0, SENTENCES, 0.2, batched);
        for (int i = 0; i < SENTENCES; i++) {
            nmt_translation alone;
            toy_decode(&o, i, 1, 0.2, &alone);
            ck_assert_int_eq(alone.count, batched[i].count);
            for (int j = 0; j < alone.count; j++) {
                const nmt_hypothesis *x = &alone.hyps[j], *y = &batched[i].hyps[j];
                ck_assert(same_tokens(x, y));
                ck_assert(x->logprob == y->logprob && x->score == y->score);
                ck_assert_mem_eq(x->attention, y->attention,
                                 (size_t)(x->length + 1) * (size_t)(x->src_len + 1) * sizeof(float));
            }
            nmt_translation_free(&alone);
        }
        free_all(batched, SENTENCES);
    }
}
END_TEST

/* A scorer that never wants to stop: every hypothesis runs to floor(R * |x|) + 10 pieces, where it
 * is cut: no eos, whose log-probability does not count (its score divides by its pieces alone). */
START_TEST(cut_at_the_maximum_length) {
    nmt_translation t[8];
    nmt_decode_options o = beam_options(3, 3, 0.6);
    o.max_length_ratio = 1.5;
    toy_decode(&o, 0, 8, -50.0, t);
    for (int i = 0; i < 8; i++) {
        int pieces = 1 + i % (TOY_WIDTH - 1);
        ck_assert_int_eq(t[i].count, 3);
        for (int j = 0; j < 3; j++) {
            const nmt_hypothesis *h = &t[i].hyps[j];
            ck_assert_int_eq(h->length, (int)floor(1.5 * pieces) + 10);
            ck_assert(h->cut);
            check_replay(h, i, -50.0);
            ck_assert_double_eq_tol(h->score, h->logprob / nmt_length_penalty(0.6, h->length), 1e-12);
        }
    }
    free_all(t, 8);
    o.greedy = 1;
    o.n_best = 1;
    toy_decode(&o, 0, 8, -50.0, t);
    for (int i = 0; i < 8; i++) {
        ck_assert_int_eq(t[i].hyps[0].length, (int)floor(1.5 * (1 + i % (TOY_WIDTH - 1))) + 10);
        ck_assert(t[i].hyps[0].cut);
        check_replay(&t[i].hyps[0], i, -50.0);
    }
    free_all(t, 8);
    ck_assert_int_eq(nmt_decode_max_length(&o, 1), 11);
    /* A step that can only be fed 6 tokens (a learned position table of 6) ends hypotheses at 5 pieces. */
    static toy tk;
    memset(&tk, 0, sizeof tk);
    tk.eos_slope = -50.0;
    uint64_t seed = 7;
    int pieces = 4;
    toy_prime(&tk, 1, &seed, &pieces);
    nmt_search *s;
    o = beam_options(2, 2, 0.6);
    ck_assert_int_eq(nmt_search_create(&s, &o), 0);
    nmt_decode_step step = {&tk, TOY_V, 6, toy_step, toy_reorder, toy_step_logprobs, toy_step_logits, toy_step_extra};
    nmt_translation one;
    ck_assert_int_eq(nmt_search_run(s, &step, 1, &pieces, NULL, TOY_WIDTH, &one), 0);
    ck_assert_int_eq(one.count, 2);
    ck_assert_int_eq(one.hyps[0].length, 5);
    ck_assert_int_eq(tk.length[0], 6);
    nmt_translation_free(&one);
    nmt_search_free(s);
}
END_TEST

START_TEST(step_errors_propagate) {
    static toy t;
    for (int mode = 0; mode < 2; mode++) {
        for (int greedy = 0; greedy < 3; greedy++) { /* beam, greedy, sampling */
            memset(&t, 0, sizeof t);
            t.eos_slope = 0.2;
            uint64_t seeds[3] = {1, 2, 3};
            int pieces[3] = {2, 3, 4};
            toy_prime(&t, 3, seeds, pieces);
            if (mode == 0) t.fail_at_call = 3;
            else t.nan_at_call = 2;
            nmt_decode_options o = greedy == 2 ? sampling_options(0, 1, 1) : greedy ? greedy_options() : beam_options(4, 2, 0.6);
            nmt_search *s;
            ck_assert_int_eq(nmt_search_create(&s, &o), 0);
            nmt_decode_step step = {&t, TOY_V, 0, toy_step, toy_reorder, toy_step_logprobs, toy_step_logits, toy_step_extra};
            nmt_translation out[3];
            ck_assert_int_eq(nmt_search_run(s, &step, 3, pieces, NULL, TOY_WIDTH, out), -1);
            ck_assert_ptr_nonnull(strstr(nmt_error(), mode == 0 ? "failed on purpose" : "non-finite"));
            for (int i = 0; i < 3; i++) ck_assert_ptr_null(out[i].hyps);
            nmt_search_free(s);
        }
    }
}
END_TEST

/* max_length bounds every sentence alike, below the ratio's bound; the ratio's stands where lower. */
START_TEST(cut_at_the_maximum_output_length) {
    nmt_translation t[8];
    nmt_decode_options o = beam_options(3, 3, 0.6);
    o.max_length_ratio = 100;
    o.max_length = 12;
    ck_assert_int_eq(nmt_decode_max_length(&o, 1), 12);
    o.max_length_ratio = 1;
    ck_assert_int_eq(nmt_decode_max_length(&o, 1), 11);
    o.max_length_ratio = 100;
    for (int greedy = 0; greedy <= 1; greedy++) {
        o.greedy = greedy;
        o.n_best = greedy ? 1 : 3;
        toy_decode(&o, 0, 8, -50.0, t);
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < t[i].count; j++) {
                ck_assert_int_eq(t[i].hyps[j].length, 12);
                ck_assert(t[i].hyps[j].cut);
                check_replay(&t[i].hyps[j], i, -50.0);
            }
        free_all(t, 8);
    }
    nmt_search *s;
    o.max_length = -1;
    ck_assert_int_eq(nmt_search_create(&s, &o), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "maximum output length"));
    o.max_length = (1 << 16) + 1;
    ck_assert_int_eq(nmt_search_create(&s, &o), -1);
}
END_TEST

START_TEST(options_checked) {
    nmt_search *s;
    nmt_decode_options o = beam_options(0, 1, 0.6);
    ck_assert_int_eq(nmt_search_create(&s, &o), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "beam size"));
    o = beam_options(2, 3, 0.6);
    ck_assert_int_eq(nmt_search_create(&s, &o), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "n-best"));
    o = beam_options(2, 1, -1.0);
    ck_assert_int_eq(nmt_search_create(&s, &o), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "length penalty"));
    o = sampling_options(0, 1, 1);
    o.greedy = 0;
    ck_assert_int_eq(nmt_search_create(&s, &o), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "replaces greedy search's choice, not a beam"));
    o = sampling_options(0, 0, 1);
    ck_assert_int_eq(nmt_search_create(&s, &o), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "top-p"));
    /* ((5 + 7) / 6)^0.6 = 2^0.6 = 1.515716566510398 */
    ck_assert_double_eq_tol(nmt_length_penalty(0.6, 7), 1.515716566510398, 1e-12);
    ck_assert_double_eq(nmt_length_penalty(0.0, 40), 1.0);
}
END_TEST

/* ---- table scorer: hand-set probabilities over (unk, eos, A, B) after given prefixes ---- */

typedef struct table_entry {
    const char *prefix; /* e.g. "BA": the tokens after bos */
    double p_unk, p_eos, p_a, p_b;
} table_entry;

typedef struct table {
    const table_entry *entries;
    int count;
    double fallback[4]; /* any other prefix */
    char prefix[TOY_MAX_ROWS][32], spare[TOY_MAX_ROWS][32];
    int scored; /* rows scored, all steps together */
} table;

static int table_step(void *ctx, int rows, const int32_t *tokens, int k, nmt_scored_token *best, float *eos,
                      float *attention) {
    static float logprobs[TOY_MAX_ROWS * TABLE_V];
    table *t = ctx;
    (void)attention;
    t->scored += rows;
    for (int r = 0; r < rows; r++) {
        size_t len = strlen(t->prefix[r]);
        if (tokens[r] != NMT_BOS) {
            ck_assert_uint_lt(len, sizeof t->prefix[r] - 1);
            t->prefix[r][len] = tokens[r] == TOK_A ? 'A' : tokens[r] == TOK_B ? 'B' : 'u';
            t->prefix[r][len + 1] = '\0';
        }
        const double *p = t->fallback;
        for (int e = 0; e < t->count; e++)
            if (strcmp(t->entries[e].prefix, t->prefix[r]) == 0) p = &t->entries[e].p_unk;
        float *lp = logprobs + (size_t)r * TABLE_V;
        lp[NMT_PAD] = lp[NMT_BOS] = -INFINITY;
        lp[NMT_UNK] = (float)log(p[0]);
        lp[NMT_EOS] = (float)log(p[1]);
        lp[TOK_A] = (float)log(p[2]);
        lp[TOK_B] = (float)log(p[3]);
    }
    rows_to_best(logprobs, rows, TABLE_V, k, best, eos);
    return 0;
}

static int table_reorder(void *ctx, int rows, const int32_t *parents) {
    table *t = ctx;
    for (int r = 0; r < rows; r++) memcpy(t->spare[r], t->prefix[parents[r]], sizeof t->spare[r]);
    memcpy(t->prefix, t->spare, sizeof t->prefix);
    return 0;
}

/* Decodes one sentence of one source piece with the table scorer and checks the best hypothesis
 * ("AB..", u for unk) and its probability (and, when want_score is not NAN, its score). Returns the
 * rows the scorer was asked for. */
static int table_expect(const table_entry *entries, int count, const nmt_decode_options *o, const char *want,
                         double want_prob, double want_score) {
    static table t;
    memset(&t, 0, sizeof t);
    t.entries = entries;
    t.count = count;
    const double fallback[4] = {0.1, 0.4, 0.3, 0.2};
    memcpy(t.fallback, fallback, sizeof fallback);
    nmt_search *s;
    ck_assert_int_eq(nmt_search_create(&s, o), 0);
    nmt_decode_step step = {&t, TABLE_V, 0, table_step, table_reorder, NULL, NULL, NULL};
    nmt_translation out;
    int pieces = 1;
    ck_assert_int_eq(nmt_search_run(s, &step, 1, &pieces, NULL, 2, &out), 0);
    const nmt_hypothesis *h = &out.hyps[0];
    char best[64];
    for (int j = 0; j < h->length; j++) best[j] = h->tokens[j] == TOK_A ? 'A' : h->tokens[j] == TOK_B ? 'B' : 'u';
    best[h->length] = '\0';
    ck_assert_str_eq(best, want);
    ck_assert_double_eq_tol(h->logprob, log(want_prob), 1e-6);
    if (!isnan(want_score)) ck_assert_double_eq_tol(h->score, want_score, 1e-6);
    nmt_translation_free(&out);
    nmt_search_free(s);
    return t.scored;
}

static nmt_decode_options greedy_alpha(double alpha) {
    nmt_decode_options o = greedy_options();
    o.length_penalty = alpha;
    return o;
}

/* Greedy takes A (0.5) then eos (0.35): p = 0.175. Beam 2 also keeps B (0.4), whose continuation A
 * (0.9) then eos (0.9) gives p = 0.324. */
START_TEST(beam_finds_what_greedy_misses) {
    const table_entry entries[] = {
        {"", 0.05, 0.05, 0.5, 0.4},
        {"A", 0.1, 0.35, 0.3, 0.25},
        {"B", 0.02, 0.05, 0.9, 0.03},
        {"BA", 0.02, 0.9, 0.05, 0.03},
    };
    const nmt_decode_options g = greedy_alpha(0), b = beam_options(2, 1, 0.0);
    table_expect(entries, 4, &g, "A", 0.5 * 0.35, NAN);
    table_expect(entries, 4, &b, "BA", 0.4 * 0.9 * 0.9, NAN);
}
END_TEST

/* Beam search is not exact: with K = 2 the greedy path A A (p = 0.45 * 0.3 = 0.135 after two
 * steps) is pushed out by B A (0.225) and B B (0.2025), whose futures are poor. Greedy ends with
 * A A eos (0.054), beam 2 with B A A eos (0.45 * 0.5 * 0.37 * 0.4 = 0.0333). */
START_TEST(beam_can_lose_to_greedy) {
    const table_entry entries[] = {
        {"", 0.05, 0.05, 0.45, 0.45},
        {"A", 0.2, 0.25, 0.3, 0.25},
        {"B", 0.02, 0.03, 0.5, 0.45},
        {"BA", 0.25, 0.01, 0.37, 0.37},
        {"BB", 0.25, 0.01, 0.37, 0.37},
    };
    const nmt_decode_options g = greedy_alpha(0), b = beam_options(2, 1, 0.0);
    table_expect(entries, 5, &g, "AA", 0.45 * 0.3 * 0.4, NAN);
    table_expect(entries, 5, &b, "BAA", 0.45 * 0.5 * 0.37 * 0.4, NAN);
}
END_TEST

/* eos first (0.45) scores log 0.45 / lp(1) = -0.799 with alpha 0.6; "A" (0.44) then eos (0.98) has
 * log 0.4312 / lp(2) = -0.841 / 1.0969 = -0.767, better. A search that stopped at the first finished
 * hypothesis, or that bounded live ones without the penalty, would return the empty translation;
 * without a penalty the empty one is indeed the best. */
START_TEST(length_penalty_keeps_searching_past_the_first_eos) {
    const table_entry entries[] = {
        {"", 0.05, 0.45, 0.44, 0.06},
        {"A", 0.005, 0.98, 0.01, 0.005},
    };
    const nmt_decode_options b = beam_options(1, 1, 0.6), g = greedy_alpha(0.6), b0 = beam_options(1, 1, 0.0);
    table_expect(entries, 2, &b, "A", 0.44 * 0.98, log(0.44 * 0.98) / pow(7.0 / 6.0, 0.6));
    table_expect(entries, 2, &g, "", 0.45, log(0.45));
    table_expect(entries, 2, &b0, "", 0.45, log(0.45));
}
END_TEST

/* Beam 2 without a penalty: step 1 finishes A eos (0.5 * 0.6 = 0.30) and keeps B A (0.45 * 0.85 =
 * 0.3825) and A A (0.5 * 0.2 = 0.10). A A can only fall below 0.30, so step 2 scores B A alone: 1 + 2
 * + 1 rows, where a search that kept it would score 1 + 2 + 2. B A eos (0.344) wins either way. */
START_TEST(beam_drops_rows_that_cannot_win) {
    const table_entry entries[] = {
        {"", 0.02, 0.03, 0.5, 0.45},
        {"A", 0.1, 0.6, 0.2, 0.1},
        {"B", 0.05, 0.05, 0.85, 0.05},
        {"BA", 0.02, 0.9, 0.05, 0.03},
    };
    const nmt_decode_options b = beam_options(2, 1, 0.0);
    ck_assert_int_eq(table_expect(entries, 4, &b, "BA", 0.45 * 0.85 * 0.9, NAN), 4);
}
END_TEST

/* At the maximum length (10 pieces for one source piece with ratio 0) a hypothesis is cut without
 * eos, as CTranslate2 and Marian cut it. A A A ... wants eos little (0.02) but scores
 * 0.75 * 0.9^9 = 0.2905 over its 10 pieces, which beats the empty translation (eos first, 0.2);
 * with eos forced and counted there it would score 0.0058 and lose to it. Its length penalty
 * counts its 10 pieces: lp(10), not lp(11). */
START_TEST(cut_hypotheses_rank_without_eos) {
    const table_entry entries[] = {
        {"", 0.02, 0.2, 0.75, 0.03},         {"A", 0.04, 0.02, 0.9, 0.04},
        {"AA", 0.04, 0.02, 0.9, 0.04},       {"AAA", 0.04, 0.02, 0.9, 0.04},
        {"AAAA", 0.04, 0.02, 0.9, 0.04},     {"AAAAA", 0.04, 0.02, 0.9, 0.04},
        {"AAAAAA", 0.04, 0.02, 0.9, 0.04},   {"AAAAAAA", 0.04, 0.02, 0.9, 0.04},
        {"AAAAAAAA", 0.04, 0.02, 0.9, 0.04}, {"AAAAAAAAA", 0.04, 0.02, 0.9, 0.04},
    };
    const double p = 0.75 * pow(0.9, 9);
    nmt_decode_options g = greedy_alpha(0), b = beam_options(2, 1, 0.0), b6 = beam_options(2, 1, 0.6);
    g.max_length_ratio = b.max_length_ratio = b6.max_length_ratio = 0;
    g.loop_repeats = b.loop_repeats = b6.loop_repeats = 0; /* ten copies of A are not a loop here */
    table_expect(entries, 10, &g, "AAAAAAAAAA", p, log(p));
    table_expect(entries, 10, &b, "AAAAAAAAAA", p, log(p));
    table_expect(entries, 10, &b6, "AAAAAAAAAA", p, log(p) / pow(15.0 / 6.0, 0.6));
}
END_TEST

int main(void) {
    Suite *s = suite_create("search");
    TCase *tc = tcase_create("search");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, scored_lists_rank_and_merge);
    tcase_add_test(tc, beam_one_is_greedy_without_length_penalty);
    tcase_add_test(tc, beam_one_never_scores_below_greedy);
    tcase_add_test(tc, beam_equals_the_reference_search);
    tcase_add_test(tc, ct2_search_equals_the_reference);
    tcase_add_test(tc, beam_can_lose_to_greedy);
    tcase_add_test(tc, n_best_sorted_distinct_and_replayable);
    tcase_add_test(tc, batched_equals_one_at_a_time);
    tcase_add_test(tc, cut_at_the_maximum_length);
    tcase_add_test(tc, cut_at_the_maximum_output_length);
    tcase_add_test(tc, cut_hypotheses_rank_without_eos);
    tcase_add_test(tc, step_errors_propagate);
    tcase_add_test(tc, options_checked);
    tcase_add_test(tc, sampling_draws_paths_of_the_model);
    tcase_add_test(tc, beam_finds_what_greedy_misses);
    tcase_add_test(tc, length_penalty_keeps_searching_past_the_first_eos);
    tcase_add_test(tc, beam_drops_rows_that_cannot_win);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
