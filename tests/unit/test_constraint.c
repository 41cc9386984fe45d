/* Tests of lexically constrained decoding: the phrase states and the bank step by hand
 * (constraint.h), and tiny Transformers decoded with constraints through the real decoder's step.
 */
#include "infer/constraint.h"
#include "infer_models.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* States: entering the first phrase a piece starts, following it, abandoning it, and the pieces
 * that advance a hypothesis. */
START_TEST(states_by_hand) {
    const int32_t a[] = {5, 6, 7}, b[] = {6}, c[] = {5, 9};
    const nmt_decode_phrase f[] = {{a, 3}, {b, 1}, {c, 2}};
    int32_t want[3];
    ck_assert_int_eq(nmt_constraint_check(f, 3, 10, 0), 6);
    nmt_constraint_state s = nmt_constraint_start();
    ck_assert_int_eq(nmt_constraint_wanted(f, 3, NULL, s, want), 2); /* 5 (a and c), 6 (b) */
    ck_assert(want[0] == 5 && want[1] == 6);
    s = nmt_constraint_next(f, 3, NULL, s, 5);
    ck_assert(s.inside == 0 && s.at == 1 && s.progress == 1);
    ck_assert_int_eq(nmt_constraint_wanted(f, 3, NULL, s, want), 1);
    ck_assert_int_eq(want[0], 6);
    nmt_constraint_state off = nmt_constraint_next(f, 3, NULL, s, 8); /* abandoned */
    ck_assert(off.inside == -1 && off.progress == 0 && off.met == 0);
    s = nmt_constraint_next(f, 3, NULL, s, 6);
    s = nmt_constraint_next(f, 3, NULL, s, 7);
    ck_assert(s.inside == -1 && s.met == 1 && s.progress == 3);
    ck_assert(!nmt_constraint_done(s, 3));
    ck_assert_int_eq(nmt_constraint_wanted(f, 3, NULL, s, want), 2);
    ck_assert(want[0] == 6 && want[1] == 5);
    s = nmt_constraint_next(f, 3, NULL, s, 6);
    ck_assert(s.met == 3 && s.progress == 4);
    s = nmt_constraint_next(f, 3, NULL, s, 5);
    s = nmt_constraint_next(f, 3, NULL, s, 9);
    ck_assert(nmt_constraint_done(s, 3) && s.progress == 6);
    ck_assert_int_eq(nmt_constraint_wanted(f, 3, NULL, s, want), 0);
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
    const nmt_constraint_vocab vocab = {joins, NULL};
    nmt_constraint_state s = nmt_constraint_start();
    s = nmt_constraint_next(f, 2, &vocab, s, 5);
    s = nmt_constraint_next(f, 2, &vocab, s, 6);
    ck_assert(s.met == 1 && s.progress == 2 && s.ended == 1);
    const nmt_constraint_state joined = nmt_constraint_next(f, 2, &vocab, s, 8);
    ck_assert(joined.met == 0 && joined.progress == 0 && joined.ended == 0 && joined.inside == -1);
    ck_assert(nmt_constraint_next(f, 2, NULL, s, 8).met == 1); /* no table: met at the last piece */
    const nmt_constraint_state apart = nmt_constraint_next(f, 2, &vocab, s, 9);
    ck_assert(apart.met == 1 && apart.progress == 2 && apart.ended == 0);
    s = nmt_constraint_next(f, 2, &vocab, s, 7); /* the one-piece phrase as the next word */
    ck_assert(s.met == 3 && s.progress == 3 && s.ended == 2 && nmt_constraint_done(s, 2));
    s = nmt_constraint_next(f, 2, &vocab, s, 8);
    ck_assert(s.met == 1 && s.progress == 2 && !nmt_constraint_done(s, 2));
}
END_TEST

/* Surface matching: with the pieces' texts, "▁Fahr" + "rad" meets the phrase encoded as
 * "▁Fahrrad" (and "▁Fahrr" + "ad", where no piece of the phrase's own begins in between); a piece
 * that leaves the text abandons it; a joining piece after it takes it back. */
START_TEST(states_on_the_surface) {
    const char *const text[] = {"<pad>", "<unk>", "<s>", "</s>", "▁Fahrrad", "▁Fahr", "rad", "▁Fahrr", "ad", "s", "▁ein"};
    unsigned char joins[11] = {0};
    joins[6] = joins[8] = joins[9] = 1;
    const nmt_constraint_vocab vocab = {joins, text};
    const int32_t whole[] = {4}, two[] = {10, 4};
    const nmt_decode_phrase f[] = {{whole, 1}}, g[] = {{two, 2}};
    int32_t want[2];
    nmt_constraint_state s = nmt_constraint_next(f, 1, &vocab, nmt_constraint_start(), 5);
    ck_assert(s.inside == 0 && s.at == (int)strlen("▁Fahr") && s.progress == 0);
    ck_assert_int_eq(nmt_constraint_wanted(f, 1, &vocab, s, want), 0); /* inside its one piece */
    const nmt_constraint_state met = nmt_constraint_next(f, 1, &vocab, s, 6);
    ck_assert(met.met == 1 && met.progress == 1 && nmt_constraint_done(met, 1));
    ck_assert(nmt_constraint_next(f, 1, &vocab, met, 9).met == 0); /* "Fahrrads" */
    ck_assert(nmt_constraint_next(f, 1, &vocab, s, 9).inside == -1);  /* "Fahrs" */
    s = nmt_constraint_next(f, 1, &vocab, nmt_constraint_start(), 7);
    ck_assert(nmt_constraint_done(nmt_constraint_next(f, 1, &vocab, s, 8), 1));
    ck_assert(!nmt_constraint_done(nmt_constraint_next(f, 1, NULL, s, 8), 1)); /* without texts: its own pieces */
    s = nmt_constraint_next(g, 1, &vocab, nmt_constraint_start(), 10); /* "▁ein" of "▁ein▁Fahrrad" */
    ck_assert(s.inside == 0 && s.progress == 1);
    ck_assert_int_eq(nmt_constraint_wanted(g, 1, &vocab, s, want), 1);
    ck_assert_int_eq(want[0], 4); /* the next piece of its own where one begins */
    s = nmt_constraint_next(g, 1, &vocab, s, 5);
    ck_assert(s.inside == 0 && s.progress == 1);
    s = nmt_constraint_next(g, 1, &vocab, s, 6);
    ck_assert(nmt_constraint_done(s, 1) && s.progress == 2);
}
END_TEST

/* A decoder whose scores depend on a row's last token alone (a bigram table), for the search with
 * pieces that have texts. */
enum { BIGRAM_V = 12, BIGRAM_ROWS = 64 };

typedef struct bigram {
    float logprob[BIGRAM_V][BIGRAM_V]; /* [last token][next] */
} bigram;

/* Each row's scores: `likely` continuations (last, next, p) with the rest shared evenly. */
static void bigram_make(bigram *m, const double (*likely)[3], int n) {
    for (int last = 0; last < BIGRAM_V; last++) {
        double p[BIGRAM_V] = {0}, rest = 1;
        for (int i = 0; i < n; i++)
            if ((int)likely[i][0] == last) {
                p[(int)likely[i][1]] = likely[i][2];
                rest -= likely[i][2];
            }
        int others = 0;
        for (int v = NMT_UNK; v < BIGRAM_V; v++) others += v != NMT_BOS && p[v] == 0;
        for (int v = 0; v < BIGRAM_V; v++) {
            const double q = v == NMT_PAD || v == NMT_BOS ? 0 : p[v] > 0 ? p[v] : rest / others;
            m->logprob[last][v] = q > 0 ? (float)log(q) : -INFINITY;
        }
    }
}

static int bigram_step_extra(void *ctx, int rows, const int32_t *tokens, int k, nmt_scored_token *best, float *eos,
                             float *attention, int extra, const int32_t *extra_tokens, float *extra_logprobs) {
    const bigram *m = ctx;
    (void)attention;
    ck_assert_int_le(rows, BIGRAM_ROWS);
    for (int r = 0; r < rows; r++) {
        const float *row = m->logprob[tokens[r]];
        nmt_scored_clear(best + (size_t)r * (size_t)k, k);
        nmt_scored_merge(best + (size_t)r * (size_t)k, k, row, BIGRAM_V, 0);
        eos[r] = row[NMT_EOS];
        for (int e = 0; e < extra; e++) {
            const int32_t token = extra_tokens[r * extra + e];
            extra_logprobs[r * extra + e] = token >= 0 ? row[token] : -INFINITY;
        }
    }
    return 0;
}

static int bigram_step(void *ctx, int rows, const int32_t *tokens, int k, nmt_scored_token *best, float *eos,
                       float *attention) {
    return bigram_step_extra(ctx, rows, tokens, k, best, eos, attention, 0, NULL, NULL);
}

static int bigram_reorder(void *ctx, int rows, const int32_t *parents) {
    (void)ctx, (void)rows, (void)parents;
    return 0;
}

static const char *const bigram_text[BIGRAM_V] = {"<pad>", "<unk>",  "<s>", "</s>", "▁ein",  "▁Fahr",
                                                  "rad",   "▁Fahrrad", ".",   "▁Hund", "▁und", "▁Katze"};

/* The pieces of the best hypothesis of the bigram decoder with beam 4, length penalty alpha, the
 * pieces' texts or not, and the one-piece phrase {piece} (-1: none) of a source of `sentences`, as
 * "4 5 6". */
static void bigram_best(const bigram *m, double alpha, int texts, int32_t piece, int sentences, char *out, size_t cap) {
    const nmt_decode_phrase f = {&piece, 1};
    const nmt_decode_guide guide = {.constraints = &f, .constraint_count = 1, .sentences = sentences},
                           *g = piece >= 0 ? &guide : NULL;
    nmt_decode_options o = nmt_decode_options_default();
    o.beam_size = 4;
    o.length_penalty = alpha;
    o.piece_text = texts ? bigram_text : NULL;
    nmt_search *s;
    ck_assert_int_eq(nmt_search_create(&s, &o), 0);
    nmt_decode_step step = {.ctx = (void *)m, .vocab_size = BIGRAM_V, .step = bigram_step, .reorder = bigram_reorder,
                            .step_extra = bigram_step_extra};
    int pieces = 4;
    nmt_translation t;
    ck_assert_int_eq(nmt_search_run_guided(s, &step, 1, &pieces, NULL, &g, 8, &t), 0);
    size_t at = 0;
    out[0] = '\0';
    for (int j = 0; j < t.hyps[0].length; j++)
        at += (size_t)snprintf(out + at, cap - at, "%s%d", j ? " " : "", t.hyps[0].tokens[j]);
    nmt_translation_free(&t);
    nmt_search_free(s);
}

/* Checks that bigram_best gives `want`. */
static void bigram_expect(const bigram *m, double alpha, int texts, int32_t piece, int sentences, const char *want) {
    char best[64];
    bigram_best(m, alpha, texts, piece, sentences, best, sizeof best);
    ck_assert_str_eq(best, want);
}

/* The model writes "▁ein ▁Fahr rad ." where the phrase is encoded "▁Fahrrad": with the pieces' texts
 * that meets it, and the search returns the model's own best, the word once; by piece ids alone it
 * must place "▁Fahrrad" besides. */
START_TEST(search_meets_a_phrase_in_another_segmentation) {
    static bigram m;
    const double likely[][3] = {{NMT_BOS, 4, 0.9}, {4, 5, 0.8}, {5, 6, 0.9}, {6, 8, 0.9}, {7, 8, 0.5}, {8, NMT_EOS, 0.9}};
    bigram_make(&m, likely, 6);
    bigram_expect(&m, 1.0, 1, -1, 0, "4 5 6 8");
    bigram_expect(&m, 1.0, 1, 7, 0, "4 5 6 8");
    char best[64];
    bigram_best(&m, 1.0, 0, 7, 0, best, sizeof best);
    ck_assert_ptr_nonnull(strstr(best, "7"));
}
END_TEST

/* The model ends "▁ein ▁Hund ." and finds "▁Katze" unlikely anywhere. With alpha 1.5 the length
 * bonus of the run-on "▁ein ▁Hund . ▁Katze ." (p = 0.0038 over 5 pieces) would beat "▁ein ▁Katze ."
 * (p = 0.0107 over 3); ranked by its length up to its first sentence end (the source has one), the
 * run-on loses; where the source has two sentences, it is what the search should find. */
START_TEST(search_ranks_run_ons_by_their_first_sentence) {
    static bigram m;
    const double likely[][3] = {{NMT_BOS, 4, 0.9}, {4, 9, 0.8}, {9, 8, 0.9}, {11, 8, 0.6}, {8, NMT_EOS, 0.9}};
    bigram_make(&m, likely, 5);
    bigram_expect(&m, 1.5, 1, -1, 0, "4 9 8");
    bigram_expect(&m, 1.5, 1, 11, 0, "4 11 8");
    bigram_expect(&m, 1.5, 1, 11, 2, "4 9 8 11 8"); /* a source of two sentences: the second earns it too */
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
    tcase_add_test(tc, states_on_the_surface);
    tcase_add_test(tc, search_meets_a_phrase_in_another_segmentation);
    tcase_add_test(tc, search_ranks_run_ons_by_their_first_sentence);
    tcase_add_test(tc, bank_step_by_hand);
    tcase_add_loop_test(tc, tiny_models_hold_their_constraints, 0, VARIANTS);
    suite_add_tcase(suite, tc);
    return suite;
}

int main(void) { return nmt_test_run(constraint_suite()); }
