/* Tests of lexically constrained decoding: the phrase states and the bank step by hand
 * (constraint.h), and tiny Transformers decoded with constraints through the real decoder's step.
 */
#include "infer/constraint.h"
#include "infer_models.h"

#include <check.h>
#include <string.h>

/* States: entering the first phrase a piece starts, following it, abandoning it, and the pieces
 * that advance a hypothesis. */
START_TEST(states_by_hand) {
    const int32_t a[] = {5, 6, 7}, b[] = {6}, c[] = {5, 9};
    const nmt_decode_phrase f[] = {{a, 3}, {b, 1}, {c, 2}};
    int32_t want[3];
    ck_assert_int_eq(nmt_constraint_check(f, 3, 10, 0), 6);
    nmt_constraint_state s = nmt_constraint_start();
    ck_assert_int_eq(nmt_constraint_wanted(f, 3, s, want), 2); /* 5 (a and c), 6 (b) */
    ck_assert(want[0] == 5 && want[1] == 6);
    s = nmt_constraint_next(f, 3, NULL, s, 5);
    ck_assert(s.inside == 0 && s.at == 1 && s.progress == 1);
    ck_assert_int_eq(nmt_constraint_wanted(f, 3, s, want), 1);
    ck_assert_int_eq(want[0], 6);
    nmt_constraint_state off = nmt_constraint_next(f, 3, NULL, s, 8); /* abandoned */
    ck_assert(off.inside == -1 && off.progress == 0 && off.met == 0);
    s = nmt_constraint_next(f, 3, NULL, s, 6);
    s = nmt_constraint_next(f, 3, NULL, s, 7);
    ck_assert(s.inside == -1 && s.met == 1 && s.progress == 3);
    ck_assert(!nmt_constraint_done(s, 3));
    ck_assert_int_eq(nmt_constraint_wanted(f, 3, s, want), 2);
    ck_assert(want[0] == 6 && want[1] == 5);
    s = nmt_constraint_next(f, 3, NULL, s, 6);
    ck_assert(s.met == 3 && s.progress == 4);
    s = nmt_constraint_next(f, 3, NULL, s, 5);
    s = nmt_constraint_next(f, 3, NULL, s, 9);
    ck_assert(nmt_constraint_done(s, 3) && s.progress == 6);
    ck_assert_int_eq(nmt_constraint_wanted(f, 3, s, want), 0);
    ck_assert(nmt_constraint_done(nmt_constraint_start(), 0));
}
END_TEST

/* Whole words: a joining piece right after a phrase's last piece takes the phrase back; any other
 * piece keeps it met. */
START_TEST(states_whole_words) {
    const int32_t a[] = {5, 6}, b[] = {7};
    const nmt_decode_phrase f[] = {{a, 2}, {b, 1}};
    unsigned char joins[10] = {0};
    joins[8] = 1;
    nmt_constraint_state s = nmt_constraint_start();
    s = nmt_constraint_next(f, 2, joins, s, 5);
    s = nmt_constraint_next(f, 2, joins, s, 6);
    ck_assert(s.met == 1 && s.progress == 2 && s.ended == 1);
    const nmt_constraint_state joined = nmt_constraint_next(f, 2, joins, s, 8);
    ck_assert(joined.met == 0 && joined.progress == 0 && joined.ended == 0 && joined.inside == -1);
    ck_assert(nmt_constraint_next(f, 2, NULL, s, 8).met == 1); /* no table: met at the last piece */
    const nmt_constraint_state apart = nmt_constraint_next(f, 2, joins, s, 9);
    ck_assert(apart.met == 1 && apart.progress == 2 && apart.ended == 0);
    s = nmt_constraint_next(f, 2, joins, s, 7); /* the one-piece phrase as the next word */
    ck_assert(s.met == 3 && s.progress == 3 && s.ended == 2 && nmt_constraint_done(s, 2));
    s = nmt_constraint_next(f, 2, joins, s, 8);
    ck_assert(s.met == 1 && s.progress == 2 && !nmt_constraint_done(s, 2));
}
END_TEST

static nmt_constraint_candidate at(double total, int progress) {
    return (nmt_constraint_candidate){.total = total, .state = {.progress = progress}};
}

/* The bank step: each bank's share, the leftover places to the banks of most progress, unfilled
 * places handed down, then to the best left. */
START_TEST(bank_step_by_hand) {
    int count[8];
    nmt_constraint_candidate x[] = {at(-1, 0), at(-2, 0), at(-3, 1), at(-4, 0), at(-5, 2)};
    ck_assert_int_eq(nmt_constraint_allocate(x, 5, 3, 2, count), 3);
    ck_assert(x[0].keep && !x[1].keep && x[2].keep && !x[3].keep && x[4].keep);
    ck_assert_int_eq(nmt_constraint_allocate(x, 5, 1, 2, count), 1); /* greedy: the most progress */
    ck_assert(x[4].keep && !x[0].keep && !x[2].keep);
    ck_assert_int_eq(nmt_constraint_allocate(x, 4, 1, 2, count), 1); /* bank 2 empty: bank 1 */
    ck_assert(x[2].keep && !x[0].keep);
    ck_assert_int_eq(nmt_constraint_allocate(x, 5, 4, 0, count), 4); /* no phrases: the best K */
    for (int i = 0; i < 5; i++) ck_assert_int_eq(x[i].keep, i < 4);
    x[1].state.progress = 2;
    ck_assert_int_eq(nmt_constraint_allocate(x, 2, 5, 2, count), 2);
    nmt_constraint_candidate y[] = {at(-3, 0), at(-1, 1), at(-1, 0)};
    y[1].row = 2;
    y[2].row = 1;
    nmt_constraint_sort(y, 3);
    ck_assert(y[0].total == -1 && y[0].row == 1 && y[1].row == 2 && y[2].total == -3);
}
END_TEST

/* A tiny Transformer through the real decoder (its fused top lists and extra scores): every
 * hypothesis holds its sentence's phrases and its log-probability is the model's (forced scoring);
 * unconstrained sentences decode bit for bit as without constraints; a constrained sentence decodes
 * alone as in its batch. */
START_TEST(tiny_models_hold_their_constraints) {
    nmt_model m;
    make_model(&m, variants[_i], 64, 31 + (uint64_t)_i);
    int32_t src[SENTENCES][MAX_LEN];
    int len[SENTENCES];
    const int32_t *ptr[SENTENCES];
    random_sources(src, len, ptr, SENTENCES, 7 + (uint64_t)_i);
    int32_t pieces[SENTENCES][2][2];
    nmt_decode_phrase phrase[SENTENCES][2];
    nmt_decode_guide guide[SENTENCES];
    const nmt_decode_guide *of[SENTENCES];
    uint64_t s = 99 + (uint64_t)_i;
    for (int i = 0; i < SENTENCES; i++) {
        for (int k = 0; k < 2; k++) {
            random_pieces(pieces[i][k], 2, &s);
            phrase[i][k] = (nmt_decode_phrase){pieces[i][k], 1 + k};
        }
        guide[i] = (nmt_decode_guide){.constraints = phrase[i], .constraint_count = i % 2 ? 2 : 0};
        of[i] = &guide[i];
    }
    const nmt_decode_options opts[] = {options(0, 4, 3), options(1, 1, 1)};
    for (int k = 0; k < 2; k++) {
        nmt_translation guided[SENTENCES], plain[SENTENCES];
        decode_batch_guided(&m, &opts[k], 1, 1, NMT_KV_F32, src, len, 0, SENTENCES, of, guided);
        decode_batch(&m, &opts[k], 1, 1, NMT_KV_F32, src, len, 0, SENTENCES, plain);
        for (int i = 0; i < SENTENCES; i++) {
            if (guide[i].constraint_count == 0) {
                assert_same(&guided[i], &plain[i], 1);
                continue;
            }
            for (int j = 0; j < guided[i].count; j++) {
                const nmt_hypothesis *h = &guided[i].hyps[j];
                for (int f = 0; f < 2; f++) {
                    int found = 0;
                    for (int p = 0; p + phrase[i][f].length <= h->length && !found; p++)
                        found = memcmp(h->tokens + p, phrase[i][f].pieces, (size_t)phrase[i][f].length * sizeof(int32_t)) == 0;
                    ck_assert_msg(found, "sentence %d hypothesis %d phrase %d", i, j, f);
                }
            }
            assert_forced_scores(&m, src[i], len[i], &guided[i], 1e-4, 1e-5);
            nmt_translation alone;
            decode_batch_guided(&m, &opts[k], 1, 1, NMT_KV_F32, src, len, i, 1, &of[i], &alone);
            assert_same(&guided[i], &alone, 1);
            nmt_translation_free(&alone);
        }
        for (int i = 0; i < SENTENCES; i++) {
            nmt_translation_free(&guided[i]);
            nmt_translation_free(&plain[i]);
        }
    }
    nmt_model_free(&m);
}
END_TEST

static Suite *constraint_suite(void) {
    Suite *suite = suite_create("constraint");
    TCase *tc = infer_models_tcase("core");
    tcase_add_test(tc, states_by_hand);
    tcase_add_test(tc, states_whole_words);
    tcase_add_test(tc, bank_step_by_hand);
    tcase_add_loop_test(tc, tiny_models_hold_their_constraints, 0, VARIANTS);
    suite_add_tcase(suite, tc);
    return suite;
}

int main(void) { return nmt_test_run(constraint_suite()); }
