/* Tests of the decoding controls (search.h, controls.h): target prefixes, the repetition penalty,
 * no-repeat n-grams, the loop guard, confidence, lexical constraints and streaming, driven by the hash scorer (toy_scorer.h) and checked against
 * replays of the hypotheses through it, and by a scorer that loops.
 */
#include "infer/controls.h"
#include "infer/search.h"
#include "base/util.h"
#include "text/vocab.h"
#include "testing.h"
#include "toy_scorer.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { SENTENCES = 24, MAX_PREFIX = 4 };

static nmt_decode_options beam(int K, int n_best) {
    nmt_decode_options o = nmt_decode_options_default();
    o.beam_size = K;
    o.n_best = n_best;
    o.attention = 1;
    return o;
}

static nmt_decode_options greedy(void) {
    nmt_decode_options o = nmt_decode_options_default();
    o.greedy = 1;
    o.attention = 1;
    return o;
}

static int same_hypothesis(const nmt_hypothesis *a, const nmt_hypothesis *b) {
    return a->length == b->length && memcmp(a->tokens, b->tokens, (size_t)a->length * sizeof(int32_t)) == 0 &&
           a->logprob == b->logprob && a->score == b->score;
}

/* Sentence i's prefix: i % (MAX_PREFIX + 1) pieces (the first sentences none), ids from 3 up. */
typedef struct prefixes {
    int32_t pieces[SENTENCES][MAX_PREFIX];
    nmt_decode_guide guide[SENTENCES];
    const nmt_decode_guide *of[SENTENCES];
} prefixes;

static void make_prefixes(prefixes *p) {
    uint64_t state = 5;
    for (int i = 0; i < SENTENCES; i++) {
        const int n = i % (MAX_PREFIX + 1);
        for (int j = 0; j < n; j++) p->pieces[i][j] = NMT_EOS + 1 + (int32_t)(nmt_random_next(&state) % (TOY_V - NMT_EOS - 1));
        p->guide[i] = (nmt_decode_guide){.prefix = p->pieces[i], .prefix_length = n};
        p->of[i] = &p->guide[i];
    }
}

/* Every hypothesis starts with its sentence's prefix; its log-probability is the replay's over the
 * pieces after the prefix and eos (the prefix counts nothing, as in CTranslate2) and its score
 * divides that by the penalty of its whole length. */
START_TEST(prefix_starts_every_hypothesis) {
    static prefixes p;
    make_prefixes(&p);
    const nmt_decode_options opts[] = {beam(4, 3), beam(1, 1), greedy()};
    for (int k = 0; k < 3; k++) {
        nmt_translation t[SENTENCES];
        toy_decode_guided(&opts[k], 0, SENTENCES, 0.2, p.of, t);
        for (int i = 0; i < SENTENCES; i++) {
            ck_assert_int_eq(t[i].count, opts[k].greedy ? 1 : opts[k].n_best);
            for (int j = 0; j < t[i].count; j++) {
                const nmt_hypothesis *h = &t[i].hyps[j];
                const int n = p.guide[i].prefix_length;
                ck_assert_int_ge(h->length, n);
                ck_assert_mem_eq(h->tokens, p.pieces[i], (size_t)n * sizeof(int32_t));
                check_replay_from(h, i, 0.2, n);
                ck_assert(h->score == h->logprob / nmt_length_penalty(0.6, h->length + 1));
            }
        }
        free_all(t, SENTENCES);
    }
}
END_TEST

/* Greedy search goes on from the prefix as from any prefix of its own: each later piece is the
 * scorer's most probable one after what precedes it. */
START_TEST(prefix_then_greedy_choices) {
    static prefixes p;
    make_prefixes(&p);
    nmt_decode_options o = greedy();
    nmt_translation t[SENTENCES];
    toy_decode_guided(&o, 0, SENTENCES, 0.2, p.of, t);
    static toy replay;
    for (int i = 0; i < SENTENCES; i++) {
        const nmt_hypothesis *h = &t[i].hyps[0];
        const int pieces = toy_replay_start(&replay, i, 0.2);
        int32_t token = NMT_BOS;
        for (int j = 0; j <= h->length; j++) {
            float lp[TOY_V];
            toy_row(&replay, 0, token, lp, NULL, 0);
            token = j < h->length ? h->tokens[j] : NMT_EOS;
            if (j < p.guide[i].prefix_length) continue;
            int best = -1;
            for (int v = 0; v < TOY_V; v++)
                if (v != NMT_PAD && v != NMT_BOS && (best < 0 || lp[v] > lp[best])) best = v;
            if (j < nmt_decode_max_length(&o, pieces)) ck_assert_int_eq(token, best);
        }
    }
    free_all(t, SENTENCES);
}
END_TEST

/* A sentence's result does not depend on its batch, and a sentence without a prefix translates as
 * it does without guides at all. */
START_TEST(prefix_batch_invariant_and_neutral) {
    static prefixes p;
    make_prefixes(&p);
    const nmt_decode_options opts[] = {beam(5, 2), greedy()};
    for (int k = 0; k < 2; k++) {
        nmt_translation guided[SENTENCES], plain[SENTENCES];
        toy_decode_guided(&opts[k], 0, SENTENCES, 0.2, p.of, guided);
        toy_decode(&opts[k], 0, SENTENCES, 0.2, plain);
        for (int i = 0; i < SENTENCES; i++) {
            nmt_translation alone;
            toy_decode_guided(&opts[k], i, 1, 0.2, &p.of[i], &alone);
            ck_assert_int_eq(alone.count, guided[i].count);
            for (int j = 0; j < alone.count; j++) ck_assert(same_hypothesis(&alone.hyps[j], &guided[i].hyps[j]));
            nmt_translation_free(&alone);
            if (p.guide[i].prefix_length == 0)
                for (int j = 0; j < plain[i].count; j++) ck_assert(same_hypothesis(&plain[i].hyps[j], &guided[i].hyps[j]));
        }
        free_all(guided, SENTENCES);
        free_all(plain, SENTENCES);
    }
}
END_TEST

/* A prefix longer than the maximum length is kept whole (eos forced after it); one the model's
 * positions cannot hold and one with a reserved or unknown id are refused. */
START_TEST(prefix_limits_and_bad_pieces) {
    int32_t pieces[20];
    for (int j = 0; j < 20; j++) pieces[j] = 4 + j % 8;
    nmt_decode_guide g = {.prefix = pieces, .prefix_length = 20};
    const nmt_decode_guide *of = &g;
    nmt_decode_options o = beam(3, 2);
    o.max_length_ratio = 0;
    nmt_translation t;
    toy_decode_guided(&o, 0, 1, 0.2, &of, &t);
    for (int j = 0; j < t.count; j++) ck_assert_int_eq(t.hyps[j].length, 20);
    nmt_translation_free(&t);

    static toy tk;
    int src = 2;
    toy_one(&tk, 1, src);
    nmt_search *s;
    ck_assert_int_eq(nmt_search_create(&s, &o), 0);
    nmt_decode_step step = {.ctx = &tk, .vocab_size = TOY_V, .max_steps = 12, .step = toy_step, .reorder = toy_reorder};
    ck_assert_int_eq(nmt_search_run_guided(s, &step, 1, &src, NULL, &of, TOY_WIDTH, &t), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "longer than the model's 11 positions"));
    step.max_steps = 0;
    const int32_t bad[] = {NMT_EOS, TOY_V, NMT_PAD, -1};
    for (int i = 0; i < 4; i++) {
        pieces[3] = bad[i];
        ck_assert_int_eq(nmt_search_run_guided(s, &step, 1, &src, NULL, &of, TOY_WIDTH, &t), -1);
        ck_assert_ptr_nonnull(strstr(nmt_error(), "target prefix piece 3"));
    }
    nmt_search_free(s);
}
END_TEST

/* The row rewrites on hand-made rows: CTranslate2's penalty once per distinct piece, fairseq's bans,
 * the loop guard's counts, the entropy in nats. */
START_TEST(row_controls_by_hand) {
    float z[8] = {2.0f, -2.0f, 1.0f, -1.0f, 0.5f, 0.0f, 3.0f, -3.0f};
    unsigned char mark[8] = {0};
    const int32_t seen[] = {0, 1, 0, 1, 6, 5};
    nmt_controls_penalize(z, seen, 6, 2.0, mark);
    const float want[8] = {1.0f, -4.0f, 1.0f, -1.0f, 0.5f, 0.0f, 1.5f, -3.0f};
    ck_assert_mem_eq(z, want, sizeof want);
    for (int i = 0; i < 8; i++) ck_assert_int_eq(mark[i], 0);

    float ban[8] = {0};
    const int32_t h[] = {4, 5, 6, 4, 5, 7, 4, 5}; /* "4 5" was followed by 6 and by 7 */
    nmt_controls_ban_repeats(ban, h, 8, 3);
    for (int v = 0; v < 8; v++) ck_assert(v == 6 || v == 7 ? ban[v] == -INFINITY : ban[v] == 0.0f);
    float one[8] = {0};
    nmt_controls_ban_repeats(one, h, 8, 1); /* no piece twice */
    for (int v = 0; v < 8; v++) ck_assert(v >= 4 ? one[v] == -INFINITY : one[v] == 0.0f);
    float none[8] = {0};
    nmt_controls_ban_repeats(none, h, 2, 3);
    for (int v = 0; v < 8; v++) ck_assert(none[v] == 0.0f);

    ck_assert_int_eq(nmt_controls_loop_window(0), 0);
    ck_assert_int_eq(nmt_controls_loop_window(4), 20);
    int32_t tail[20];
    for (int i = 0; i < 20; i++) tail[i] = 9;
    ck_assert_int_eq(nmt_controls_loops(tail + 12, 8, 4), 0); /* eight copies of one piece: allowed */
    ck_assert_int_eq(nmt_controls_loops(tail + 11, 9, 4), 1);
    for (int i = 0; i < 20; i++) tail[i] = 4 + i % 4;
    ck_assert_int_eq(nmt_controls_loops(tail + 4, 16, 4), 0); /* four copies of a 4-gram */
    ck_assert_int_eq(nmt_controls_loops(tail, 20, 4), 1);
    tail[0] = 11;
    ck_assert_int_eq(nmt_controls_loops(tail, 20, 4), 0);
    for (int i = 0; i < 20; i++) tail[i] = 4 + i % 2;
    ck_assert_int_eq(nmt_controls_loops(tail + 11, 9, 4), 0);
    ck_assert_int_eq(nmt_controls_loops(tail + 10, 10, 4), 1);

    float uniform_row[4] = {logf(0.25f), logf(0.25f), logf(0.25f), logf(0.25f)};
    ck_assert_double_eq_tol(nmt_controls_entropy(uniform_row, 4), log(4.0), 1e-6);
    float certain[3] = {0.0f, -INFINITY, -INFINITY};
    ck_assert_double_eq_tol(nmt_controls_entropy(certain, 3), 0.0, 1e-12);
}
END_TEST

/* Hash-scorer sentences that run long (eos unlikely), where repeats are common. */
static void decode_long(const nmt_decode_options *o, nmt_translation *t) { toy_decode(o, 0, SENTENCES, -0.5, t); }

static int repeats_an_ngram(const nmt_hypothesis *h, int N) {
    for (int i = 0; i + N <= h->length; i++)
        for (int j = i + 1; j + N <= h->length; j++)
            if (memcmp(h->tokens + i, h->tokens + j, (size_t)N * sizeof(int32_t)) == 0) return 1;
    return 0;
}

/* With no_repeat_ngram_size N no hypothesis holds an N-gram twice (without it many do). */
START_TEST(no_repeat_ngram_holds) {
    const nmt_decode_options base[] = {beam(4, 4), greedy()};
    for (int k = 0; k < 2; k++)
        for (int N = 1; N <= 3; N++) {
            nmt_decode_options o = base[k];
            o.max_length_ratio = N == 1 ? 0.5 : 2; /* a piece once: at most V - 4 pieces */
            nmt_translation plain[SENTENCES], banned[SENTENCES];
            decode_long(&o, plain);
            o.no_repeat_ngram_size = N;
            decode_long(&o, banned);
            int repeated = 0;
            for (int i = 0; i < SENTENCES; i++) {
                for (int j = 0; j < plain[i].count; j++) repeated += repeats_an_ngram(&plain[i].hyps[j], N);
                ck_assert_int_eq(banned[i].count, plain[i].count);
                for (int j = 0; j < banned[i].count; j++) ck_assert(!repeats_an_ngram(&banned[i].hyps[j], N));
            }
            ck_assert_int_gt(repeated, 0);
            free_all(plain, SENTENCES);
            free_all(banned, SENTENCES);
        }
}
END_TEST

/* The log-probability of hypothesis h of sentence `index` under the hash scorer with the repetition
 * penalty applied to its logits, normalised in double precision. */
static double penalized_logprob(const nmt_hypothesis *h, int index, double eos_slope, double P, int check_greedy) {
    static toy t;
    toy_replay_start(&t, index, eos_slope);
    double total = 0;
    int32_t token = NMT_BOS;
    unsigned char mark[TOY_V] = {0};
    for (int j = 0; j <= h->length; j++) {
        float z[TOY_V];
        toy_row_scores(&t, 0, token, z, 1, NULL, 0);
        nmt_controls_penalize(z, h->tokens, j, P, mark);
        double max = -INFINITY, sum = 0;
        for (int v = 0; v < TOY_V; v++) max = z[v] > max ? z[v] : max;
        for (int v = 0; v < TOY_V; v++) sum += exp(z[v] - max);
        token = j < h->length ? h->tokens[j] : NMT_EOS;
        if (j < h->length || !h->cut) total += z[token] - max - log(sum); /* a cut one has no eos */
        if (check_greedy && j < h->length)
            for (int v = 0; v < TOY_V; v++)
                if (v != NMT_PAD && v != NMT_BOS) ck_assert(z[v] <= z[token]);
    }
    return total;
}

/* The repetition penalty: greedy takes the best penalised piece at every step, and every
 * hypothesis's log-probability is that of the penalised, renormalised rows. */
START_TEST(repetition_penalty_rescores) {
    const nmt_decode_options base[] = {greedy(), beam(4, 3)};
    for (int k = 0; k < 2; k++) {
        nmt_decode_options o = base[k];
        o.repetition_penalty = 1.7;
        nmt_translation t[SENTENCES];
        decode_long(&o, t);
        for (int i = 0; i < SENTENCES; i++)
            for (int j = 0; j < t[i].count; j++) {
                const nmt_hypothesis *h = &t[i].hyps[j];
                const int at_limit = h->length == nmt_decode_max_length(&o, 1 + i % (TOY_WIDTH - 1));
                ck_assert_double_eq_tol(h->logprob, penalized_logprob(h, i, -0.5, 1.7, o.greedy && !at_limit), 1e-4);
            }
        free_all(t, SENTENCES);
    }
}
END_TEST

/* ---- a scorer that loops: after n fed tokens it wants piece 4 + n % period, eos much less ---- */

typedef struct looper {
    int length[TOY_MAX_ROWS], spare[TOY_MAX_ROWS];
    int period;
} looper;

static int looper_step(void *ctx, int rows, const int32_t *tokens, int k, nmt_scored_token *best, float *eos,
                       float *attention) {
    (void)tokens, (void)attention;
    looper *l = ctx;
    for (int r = 0; r < rows; r++) {
        float lp[TOY_V];
        for (int v = 0; v < TOY_V; v++) lp[v] = -12.0f;
        lp[4 + l->length[r] % l->period] = -0.01f;
        lp[NMT_EOS] = -6.0f;
        l->length[r]++;
        nmt_scored_clear(best + (size_t)r * (size_t)k, k);
        nmt_scored_merge(best + (size_t)r * (size_t)k, k, lp, TOY_V, 0);
        eos[r] = lp[NMT_EOS];
    }
    return 0;
}

static int looper_reorder(void *ctx, int rows, const int32_t *parents) {
    looper *l = ctx;
    for (int r = 0; r < rows; r++) l->spare[r] = l->length[parents[r]];
    memcpy(l->length, l->spare, sizeof l->length);
    return 0;
}

/* The best hypothesis of a looping scorer with period g under options o. */
static int looped_length(const nmt_decode_options *o, int g) {
    static looper l;
    memset(&l, 0, sizeof l);
    l.period = g;
    nmt_search *s;
    ck_assert_int_eq(nmt_search_create(&s, o), 0);
    nmt_decode_step step = {.ctx = &l, .vocab_size = TOY_V, .step = looper_step, .reorder = looper_reorder};
    int pieces = 8;
    nmt_translation t;
    ck_assert_msg(nmt_search_run(s, &step, 1, &pieces, NULL, TOY_WIDTH, &t) == 0, "%s", nmt_error());
    const int length = t.hyps[0].length;
    nmt_translation_free(&t);
    nmt_search_free(s);
    return length;
}

/* The loop guard (on by default, R = 4) ends a loop of one piece after nine copies and of a 2- to
 * 4-gram after five; a period of five or more, or the guard off, runs to the maximum length. */
START_TEST(loop_guard_ends_loops) {
    const nmt_decode_options base[] = {greedy(), beam(3, 1)};
    const int want[] = {0, 9, 10, 15, 20};
    for (int k = 0; k < 2; k++) {
        nmt_decode_options o = base[k];
        for (int g = 1; g <= 4; g++) ck_assert_int_eq(looped_length(&o, g), want[g]);
        ck_assert_int_eq(looped_length(&o, 5), nmt_decode_max_length(&o, 8));
        o.loop_repeats = 0;
        for (int g = 1; g <= 5; g++) ck_assert_int_eq(looped_length(&o, g), nmt_decode_max_length(&o, 8));
        o.loop_repeats = 2; /* three copies, and more than four pieces */
        ck_assert_int_eq(looped_length(&o, 1), 5);
        ck_assert_int_eq(looped_length(&o, 2), 6);
    }
}
END_TEST

/* The guard changes nothing where nothing loops: the hash scorer's translations are the same with it off. */
START_TEST(loop_guard_leaves_the_rest) {
    const nmt_decode_options base[] = {greedy(), beam(5, 3)};
    for (int k = 0; k < 2; k++) {
        nmt_decode_options o = base[k];
        nmt_translation on[SENTENCES], off[SENTENCES];
        toy_decode(&o, 0, SENTENCES, 0.2, on);
        o.loop_repeats = 0;
        toy_decode(&o, 0, SENTENCES, 0.2, off);
        for (int i = 0; i < SENTENCES; i++)
            for (int j = 0; j < on[i].count; j++) ck_assert(same_hypothesis(&on[i].hyps[j], &off[i].hyps[j]));
        free_all(on, SENTENCES);
        free_all(off, SENTENCES);
    }
}
END_TEST

/* The replayed alternatives of hypothesis h of sentence `index`: exp of the mean entropy of the hash
 * scorer's rows from position `forced` on (eos included). */
static double replayed_alternatives(const nmt_hypothesis *h, int index, double eos_slope, int forced) {
    static toy t;
    toy_replay_start(&t, index, eos_slope);
    double entropy = 0;
    int32_t token = NMT_BOS;
    for (int j = 0; j <= h->length; j++) {
        float lp[TOY_V];
        toy_row(&t, 0, token, lp, NULL, 0);
        if (j >= forced) entropy += nmt_controls_entropy(lp, TOY_V);
        token = j < h->length ? h->tokens[j] : NMT_EOS;
    }
    return exp(entropy / (h->length - forced + 1));
}

/* Confidence: the mean log-probability per decided token always; the alternatives (exp of the mean
 * entropy of the chosen path's distributions) when asked, from 1 to V; the choices unchanged. */
START_TEST(confidence_per_hypothesis) {
    static prefixes p;
    make_prefixes(&p);
    const nmt_decode_options base[] = {greedy(), beam(4, 3)};
    for (int k = 0; k < 2; k++) {
        nmt_decode_options o = base[k];
        nmt_translation plain[SENTENCES], sure[SENTENCES];
        toy_decode_guided(&o, 0, SENTENCES, 0.2, p.of, plain);
        o.confidence = 1;
        toy_decode_guided(&o, 0, SENTENCES, 0.2, p.of, sure);
        for (int i = 0; i < SENTENCES; i++) {
            const int forced = p.guide[i].prefix_length;
            ck_assert_int_eq(plain[i].count, sure[i].count);
            for (int j = 0; j < sure[i].count; j++) {
                const nmt_hypothesis *a = &plain[i].hyps[j], *h = &sure[i].hyps[j];
                ck_assert_int_eq(a->length, h->length);
                ck_assert_mem_eq(a->tokens, h->tokens, (size_t)h->length * sizeof(int32_t));
                ck_assert(a->mean_logprob == a->logprob / (a->length - forced + 1) && a->alternatives == 0);
                ck_assert(h->mean_logprob == h->logprob / (h->length - forced + 1));
                ck_assert_double_eq_tol(h->alternatives, replayed_alternatives(h, i, 0.2, forced), 1e-4);
                ck_assert(h->alternatives >= 1 && h->alternatives <= TOY_V);
            }
        }
        free_all(plain, SENTENCES);
        free_all(sure, SENTENCES);
    }
}
END_TEST

/* ---- lexical constraints ---- */

enum { MAX_PHRASES = 3, MAX_PHRASE = 3 };

/* Sentence i: i % 4 phrases (the first sentences none) of 1 .. MAX_PHRASE pieces, ids from 4 up, and
 * with `with_prefix` the prefix of make_prefixes. */
typedef struct constraints {
    int32_t pieces[SENTENCES][MAX_PHRASES][MAX_PHRASE];
    nmt_decode_phrase phrase[SENTENCES][MAX_PHRASES];
    prefixes p;
} constraints;

static void make_constraints(constraints *c, int with_prefix) {
    make_prefixes(&c->p);
    uint64_t state = 77;
    for (int i = 0; i < SENTENCES; i++) {
        const int n = i % (MAX_PHRASES + 1);
        for (int k = 0; k < n; k++) {
            const int len = 1 + (int)(nmt_random_next(&state) % MAX_PHRASE);
            for (int j = 0; j < len; j++) c->pieces[i][k][j] = 4 + (int32_t)(nmt_random_next(&state) % (TOY_V - 4));
            c->phrase[i][k] = (nmt_decode_phrase){c->pieces[i][k], len};
        }
        c->p.guide[i].constraints = c->phrase[i];
        c->p.guide[i].constraint_count = n;
        if (!with_prefix) c->p.guide[i].prefix_length = 0;
    }
}

/* Whether h holds phrase f at or after piece `from`. */
static int holds(const nmt_hypothesis *h, const nmt_decode_phrase *f, int from) {
    for (int i = from; i + f->length <= h->length; i++)
        if (memcmp(h->tokens + i, f->pieces, (size_t)f->length * sizeof(int32_t)) == 0) return 1;
    return 0;
}

/* Every hypothesis of every n-best list holds every phrase of its sentence (after its prefix), scores
 * as the model scores it, and a sentence's result does not depend on its batch; the score controls'
 * full rows serve as well as the step's extra scores. */
START_TEST(constraints_in_every_hypothesis) {
    static constraints c;
    for (int with_prefix = 0; with_prefix < 2; with_prefix++) {
        make_constraints(&c, with_prefix);
        nmt_decode_options opts[] = {beam(5, 3), beam(2, 2), greedy(), beam(4, 2)};
        opts[3].confidence = 1; /* the full rows */
        for (int k = 0; k < 4; k++) {
            nmt_translation t[SENTENCES];
            toy_decode_guided(&opts[k], 0, SENTENCES, 0.2, c.p.of, t);
            for (int i = 0; i < SENTENCES; i++) {
                const nmt_decode_guide *g = &c.p.guide[i];
                ck_assert_int_ge(t[i].count, 1);
                for (int j = 0; j < t[i].count; j++) {
                    const nmt_hypothesis *h = &t[i].hyps[j];
                    ck_assert_mem_eq(h->tokens, g->prefix, (size_t)g->prefix_length * sizeof(int32_t));
                    for (int f = 0; f < g->constraint_count; f++)
                        ck_assert_msg(holds(h, &g->constraints[f], g->prefix_length), "sentence %d hypothesis %d phrase %d", i, j, f);
                    /* the full rows are normalised in float by the search, the replay in double */
                    check_replay_within(h, i, 0.2, g->prefix_length, opts[k].confidence ? 1e-4 : 1e-9);
                    for (int x = 0; x < j; x++) ck_assert(!same_hypothesis(&t[i].hyps[x], h) || h->length != t[i].hyps[x].length);
                }
                nmt_translation alone;
                toy_decode_guided(&opts[k], i, 1, 0.2, &c.p.of[i], &alone);
                ck_assert_int_eq(alone.count, t[i].count);
                for (int j = 0; j < alone.count; j++) ck_assert(same_hypothesis(&alone.hyps[j], &t[i].hyps[j]));
                nmt_translation_free(&alone);
            }
            free_all(t, SENTENCES);
        }
    }
}
END_TEST

/* Whether h holds phrase f at or after piece `from` as whole words: followed by the end or by a piece
 * that does not join it. */
static int holds_whole(const nmt_hypothesis *h, const nmt_decode_phrase *f, int from, const unsigned char *joins) {
    for (int i = from; i + f->length <= h->length; i++)
        if (memcmp(h->tokens + i, f->pieces, (size_t)f->length * sizeof(int32_t)) == 0 &&
            (i + f->length == h->length || !joins[h->tokens[i + f->length]]))
            return 1;
    return 0;
}

/* With the vocabulary's joining pieces (here every third id), every hypothesis holds every phrase as
 * whole words; without them some hypothesis goes on with a joining piece right after a phrase. */
START_TEST(constraints_stand_as_whole_words) {
    static constraints c;
    static unsigned char joins[TOY_V];
    for (int v = NMT_EOS + 1; v < TOY_V; v++) joins[v] = v % 3 == 0;
    make_constraints(&c, 1);
    nmt_decode_options opts[] = {beam(5, 3), greedy(), beam(4, 2)};
    opts[2].confidence = 1;
    int broken_without = 0;
    for (int k = 0; k < 3; k++)
        for (int with_table = 0; with_table < 2; with_table++) {
            opts[k].word_joins = with_table ? joins : NULL;
            nmt_translation t[SENTENCES];
            toy_decode_guided(&opts[k], 0, SENTENCES, 0.2, c.p.of, t);
            for (int i = 0; i < SENTENCES; i++) {
                const nmt_decode_guide *g = &c.p.guide[i];
                for (int j = 0; j < t[i].count; j++)
                    for (int f = 0; f < g->constraint_count; f++) {
                        const nmt_hypothesis *h = &t[i].hyps[j];
                        ck_assert(holds(h, &g->constraints[f], g->prefix_length));
                        const int whole = holds_whole(h, &g->constraints[f], g->prefix_length, joins);
                        if (with_table) ck_assert_msg(whole, "options %d sentence %d hypothesis %d phrase %d", k, i, j, f);
                        broken_without += !whole;
                    }
            }
            free_all(t, SENTENCES);
        }
    ck_assert_int_gt(broken_without, 0);
}
END_TEST

/* A sentence without constraints translates bit for bit as without guides, beside constrained ones. */
START_TEST(constraints_leave_the_others) {
    static constraints c;
    make_constraints(&c, 0);
    const nmt_decode_options opts[] = {beam(5, 3), greedy()};
    for (int k = 0; k < 2; k++) {
        nmt_translation guided[SENTENCES], plain[SENTENCES];
        toy_decode_guided(&opts[k], 0, SENTENCES, 0.2, c.p.of, guided);
        toy_decode(&opts[k], 0, SENTENCES, 0.2, plain);
        int changed = 0;
        for (int i = 0; i < SENTENCES; i++) {
            if (c.p.guide[i].constraint_count > 0) {
                changed += !same_hypothesis(&guided[i].hyps[0], &plain[i].hyps[0]);
                continue;
            }
            ck_assert_int_eq(guided[i].count, plain[i].count);
            for (int j = 0; j < plain[i].count; j++) ck_assert(same_hypothesis(&guided[i].hyps[j], &plain[i].hyps[j]));
        }
        ck_assert_int_gt(changed, 0);
        free_all(guided, SENTENCES);
        free_all(plain, SENTENCES);
    }
}
END_TEST

/* Phrases are checked; sampling and a decoder without extra scores are refused. */
START_TEST(constraints_checked) {
    int32_t bad[] = {5, NMT_EOS};
    nmt_decode_phrase f = {bad, 2};
    nmt_decode_guide g = {.constraints = &f, .constraint_count = 1};
    const nmt_decode_guide *of = &g;
    static toy tk;
    int src = 2;
    toy_one(&tk, 1, src);
    nmt_decode_options o = beam(2, 1);
    nmt_search *s;
    ck_assert_int_eq(nmt_search_create(&s, &o), 0);
    nmt_decode_step step = {.ctx = &tk, .vocab_size = TOY_V, .step = toy_step, .reorder = toy_reorder,
                            .step_extra = toy_step_extra};
    nmt_translation t;
    ck_assert_int_eq(nmt_search_run_guided(s, &step, 1, &src, NULL, &of, TOY_WIDTH, &t), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "constraint 0 piece 1 is id 3"));
    bad[1] = 6;
    f.length = 0;
    ck_assert_int_eq(nmt_search_run_guided(s, &step, 1, &src, NULL, &of, TOY_WIDTH, &t), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "constraint 0 has 0 pieces"));
    f.length = 2;
    g.constraint_count = NMT_CONSTRAINT_MAX + 1;
    ck_assert_int_eq(nmt_search_run_guided(s, &step, 1, &src, NULL, &of, TOY_WIDTH, &t), -1);
    g.constraint_count = 1;
    step.step_extra = NULL;
    ck_assert_int_eq(nmt_search_run_guided(s, &step, 1, &src, NULL, &of, TOY_WIDTH, &t), -1);
    ck_assert_msg(strstr(nmt_error(), "cannot score") != NULL, "%s", nmt_error());
    nmt_search_free(s);
    o = greedy();
    o.sampling.enabled = 1;
    ck_assert_int_eq(nmt_search_create(&s, &o), 0);
    step.step_logprobs = toy_step_logprobs;
    ck_assert_int_eq(nmt_search_run_guided(s, &step, 1, &src, NULL, &of, TOY_WIDTH, &t), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "not sampling"));
    nmt_search_free(s);
}
END_TEST

/* ---- streaming ---- */

typedef struct streamed {
    int32_t pieces[SENTENCES][256];
    int count[SENTENCES], calls[SENTENCES], finals[SENTENCES], early[SENTENCES];
    int one_at_a_time; /* every call before the final passed exactly one piece */
} streamed;

static void collect(void *ctx, uint64_t key, const int32_t *pieces, int count, int final) {
    streamed *st = ctx;
    ck_assert_uint_lt(key, SENTENCES);
    ck_assert_int_eq(st->finals[key], 0);
    ck_assert_int_le(st->count[key] + count, 256);
    memcpy(st->pieces[key] + st->count[key], pieces, (size_t)count * sizeof(int32_t));
    st->count[key] += count;
    st->calls[key]++;
    st->finals[key] += final;
    if (!final) st->early[key] += count;
    if (!final && count != 1) st->one_at_a_time = 0;
}

/* The pieces streamed for each sentence concatenate to its best translation, with one final call;
 * greedy passes on one piece a step; beam search passes pieces on before the end. */
START_TEST(streamed_pieces_make_the_translation) {
    static constraints c;
    static streamed st;
    const nmt_decode_options base[] = {greedy(), beam(5, 2), beam(3, 1)};
    for (int k = 0; k < 3; k++)
        for (int guided = 0; guided < 2; guided++) {
            make_constraints(&c, 1);
            memset(&st, 0, sizeof st);
            st.one_at_a_time = 1;
            nmt_decode_options o = base[k];
            o.stream = collect;
            o.stream_ctx = &st;
            nmt_translation t[SENTENCES];
            toy_decode_guided(&o, 0, SENTENCES, 0.2, guided ? c.p.of : NULL, t);
            int early = 0;
            for (int i = 0; i < SENTENCES; i++) {
                const nmt_hypothesis *h = &t[i].hyps[0];
                ck_assert_int_eq(st.finals[i], 1);
                ck_assert_int_eq(st.count[i], h->length);
                ck_assert_mem_eq(st.pieces[i], h->tokens, (size_t)h->length * sizeof(int32_t));
                early += st.early[i];
            }
            if (o.greedy && !guided) ck_assert(st.one_at_a_time);
            ck_assert_int_gt(early, 0);
            free_all(t, SENTENCES);
        }
}
END_TEST

/* Impossible settings are refused, and the score controls with a shortlist. */
START_TEST(control_options_checked) {
    nmt_decode_options o = beam(2, 1);
    o.repetition_penalty = 0;
    ck_assert_int_eq(nmt_decode_options_check(&o), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "repetition penalty"));
    o = beam(2, 1);
    o.no_repeat_ngram_size = -1;
    ck_assert_int_eq(nmt_decode_options_check(&o), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "no-repeat"));
    o = beam(2, 1);
    o.loop_repeats = -1;
    ck_assert_int_eq(nmt_decode_options_check(&o), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "loop guard"));
    o = beam(2, 1);
    o.confidence = 2;
    ck_assert_int_eq(nmt_decode_options_check(&o), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "confidence"));
    o = beam(2, 1);
    o.no_repeat_ngram_size = 2;
    o.shortlist = (const struct nmt_shortlist *)&o; /* only its presence matters to the check */
    ck_assert_int_eq(nmt_decode_options_check(&o), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "shortlist"));
}
END_TEST

static Suite *controls_suite(void) {
    Suite *suite = suite_create("controls");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, prefix_starts_every_hypothesis);
    tcase_add_test(tc, prefix_then_greedy_choices);
    tcase_add_test(tc, prefix_batch_invariant_and_neutral);
    tcase_add_test(tc, prefix_limits_and_bad_pieces);
    tcase_add_test(tc, row_controls_by_hand);
    tcase_add_test(tc, no_repeat_ngram_holds);
    tcase_add_test(tc, repetition_penalty_rescores);
    tcase_add_test(tc, loop_guard_ends_loops);
    tcase_add_test(tc, loop_guard_leaves_the_rest);
    tcase_add_test(tc, confidence_per_hypothesis);
    tcase_add_test(tc, control_options_checked);
    tcase_add_test(tc, constraints_in_every_hypothesis);
    tcase_add_test(tc, constraints_leave_the_others);
    tcase_add_test(tc, constraints_stand_as_whole_words);
    tcase_add_test(tc, constraints_checked);
    tcase_add_test(tc, streamed_pieces_make_the_translation);
    suite_add_tcase(suite, tc);
    return suite;
}

int main(void) { return nmt_test_run(controls_suite()); }
