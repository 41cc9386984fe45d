/* Tests of the decoding controls (search.h, controls.h): target prefixes, driven by the hash scorer
 * (toy_scorer.h) and checked against replays of the hypotheses through it.
 */
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
        memset(&replay, 0, sizeof replay);
        replay.eos_slope = 0.2;
        uint64_t seed = 1000u + (uint64_t)i;
        int pieces = 1 + i % (TOY_WIDTH - 1);
        toy_prime(&replay, 1, &seed, &pieces);
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
    nmt_decode_guide g = {pieces, 20};
    const nmt_decode_guide *of = &g;
    nmt_decode_options o = beam(3, 2);
    o.max_length_ratio = 0;
    nmt_translation t;
    toy_decode_guided(&o, 0, 1, 0.2, &of, &t);
    for (int j = 0; j < t.count; j++) ck_assert_int_eq(t.hyps[j].length, 20);
    nmt_translation_free(&t);

    static toy tk;
    memset(&tk, 0, sizeof tk);
    uint64_t seed = 1;
    int src = 2;
    toy_prime(&tk, 1, &seed, &src);
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

static Suite *controls_suite(void) {
    Suite *suite = suite_create("controls");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, prefix_starts_every_hypothesis);
    tcase_add_test(tc, prefix_then_greedy_choices);
    tcase_add_test(tc, prefix_batch_invariant_and_neutral);
    tcase_add_test(tc, prefix_limits_and_bad_pieces);
    suite_add_tcase(suite, tc);
    return suite;
}

int main(void) { return nmt_test_run(controls_suite()); }
