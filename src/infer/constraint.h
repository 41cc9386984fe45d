/* constraint: lexically constrained decoding's bookkeeping, Post & Vilar (2018)'s dynamic beam
 * allocation: what a hypothesis has met of its sentence's target phrases, the pieces that would
 * advance it, and how a beam step shares its K places among the hypotheses by progress.
 *
 * A sentence has C phrases (piece sequences, C <= NMT_CONSTRAINT_MAX) of T pieces in all. A
 * phrase is met on its surface: given the target pieces' text (vocab.text, with SentencePiece's
 * word-start mark), any run of pieces that spells its text meets it, so "▁Fahr" + "rad" meets the
 * phrase encoded as "▁Fahrrad" (without texts, only its own pieces do). A hypothesis's state says
 * which phrases it has met, which one it is inside and how far (bytes of its text; pieces without
 * texts), and its progress (pieces of met phrases + the phrase's own pieces that the text followed
 * so far spells whole). Appending a piece: inside a phrase, a piece whose text continues the
 * phrase's remaining text advances it (the one that reaches its end completes it, once); any other
 * piece abandons it (the progress drops back) and is then read as outside; outside, a piece whose
 * text begins an unmet phrase's enters it (the first such phrase in order; a piece that spells a
 * whole phrase meets it at once). The search offers, besides each hypothesis's own best
 * continuations, the pieces that advance it: the phrase's own next piece when the hypothesis stands
 * where one begins, else nothing, and outside the first piece of every unmet phrase. eos ends only a
 * hypothesis that has met every phrase.
 *
 * Whole words: given the target vocabulary's joining pieces (vocab.joins[v] = 1 for a piece that
 * continues the word before it, e.g. SentencePiece's "s" after "▁Strategie"), a phrase is met only
 * when the piece after its last is not one of them (or is eos): a joining piece there takes the phrase back
 * (unmet, its pieces no longer counted) and is then read as above, so the search places the phrase
 * again where it stands as whole words. Without a table (NULL) a phrase is met at its last piece.
 *
 * Allocation (the bank step): the candidates of a sentence, best first, fall into T + 1 banks by
 * progress; each bank has K / (T + 1) places, the K mod (T + 1) left over going to the banks of most
 * progress; from the bank of most progress down, a bank keeps its best candidates up to its places
 * and hands the places it cannot fill to the bank below; places still free at the bottom go to the
 * best candidates not yet kept. So the hypotheses that have met more keep a place although the model scores
 * them lower, and with no phrases (T = 0) allocation keeps the best K, as plain beam search does.
 */
#ifndef NMT_CONSTRAINT_H
#define NMT_CONSTRAINT_H

#include <stdint.h>

enum { NMT_CONSTRAINT_MAX = 64 }; /* phrases per sentence (a bit each) */

typedef struct nmt_decode_phrase {
    const int32_t *pieces; /* [length] target pieces (no pad, bos, eos) */
    int length;            /* >= 1 */
} nmt_decode_phrase;

/* What the search knows of the target vocabulary of V pieces (either table may be NULL). */
typedef struct nmt_constraint_vocab {
    const unsigned char *joins; /* [V] 1: the piece continues the word before it */
    const char *const *text;    /* [V] each piece's text, pieces written one after another spelling the
                                   output (SentencePiece's, word-start mark included) */
} nmt_constraint_vocab;

typedef struct nmt_constraint_state {
    uint64_t met;     /* bit c: phrase c met */
    int32_t inside;   /* the phrase being followed, -1: none */
    int32_t at;       /* how far: bytes of its text followed (pieces without texts) */
    int32_t progress; /* pieces of met phrases + at */
    int32_t ended;    /* 1 + the phrase the last piece completed (met unless the next piece joins it), 0: none */
    int32_t ends;     /* pieces that ended a sentence (kept by the search) */
    int32_t closed;   /* pieces up to the one that ended the source's last sentence, 0: none (kept by the search) */
} nmt_constraint_state;

/* Checks sentence `sentence`'s phrases against a vocabulary of V; returns their pieces T, or -1
 * with the error set. */
int nmt_constraint_check(const nmt_decode_phrase *phrases, int count, int V, int sentence);
/* The state of a hypothesis that has met nothing. */
nmt_constraint_state nmt_constraint_start(void);
/* The state after appending `token` (not eos); vocab as above, or NULL (neither table). */
nmt_constraint_state nmt_constraint_next(const nmt_decode_phrase *phrases, int count, const nmt_constraint_vocab *vocab,
                                         nmt_constraint_state s, int32_t token);
/* Whether `token`'s text ends a sentence (., ! or ? last; never without texts). */
int nmt_constraint_ends_sentence(const nmt_constraint_vocab *vocab, int32_t token);
/* Whether every phrase is met (eos may end the hypothesis). */
int nmt_constraint_done(nmt_constraint_state s, int count);
/* The distinct pieces that advance state s into out[<= count]; returns how many. */
int nmt_constraint_wanted(const nmt_decode_phrase *phrases, int count, const nmt_constraint_vocab *vocab,
                          nmt_constraint_state s, int32_t *out);

/* A continuation of a hypothesis, ranked by the bank step. */
typedef struct nmt_constraint_candidate {
    double total;
    int row;
    int32_t token;
    nmt_constraint_state state; /* after the token */
    int keep;                   /* set by nmt_constraint_allocate */
} nmt_constraint_candidate;

/* Sorts cand[n] best first (ties: the smaller row, then the smaller token). */
void nmt_constraint_sort(nmt_constraint_candidate *cand, int n);
/* Marks (keep = 1, else 0) the at most K of cand[n] (sorted, no eos among them) that a beam of K
 * keeps with phrases of T pieces; count[2 * (T + 1)] is scratch. Returns how many it kept. */
int nmt_constraint_allocate(nmt_constraint_candidate *cand, int n, int K, int T, int *count);

#endif
