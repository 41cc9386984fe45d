/* controls: what the decoding controls do to one hypothesis's next piece, given its pieces so far.
 *
 * The search (search.h) calls these on each live row: the score controls on the row's raw logits
 * before it normalises them (CTranslate2's order: logits processors, then log_softmax), the loop
 * guard on the row's last pieces, the entropy on the normalised row.
 *
 *   repetition penalty P (CTranslate2's RepetitionPenalty): every distinct piece already in the
 *     hypothesis has its logit z replaced by z * P when z < 0 and z / P otherwise;
 *   no-repeat n-grams N (fairseq's and CTranslate2's no_repeat_ngram_size): every piece that would
 *     complete an N-gram already in the hypothesis gets logit -infinity;
 *   loop guard R: the hypothesis ends in a loop when its pieces end with c consecutive copies of one
 *     n-gram, 1 <= n <= 4, with c > R and c * n > 2R (R = 4: nine copies of one piece, five of a
 *     longer n-gram);
 *   entropy: H = -sum p log p of a normalised row, in nats (entries at -infinity add nothing).
 */
#ifndef NMT_CONTROLS_H
#define NMT_CONTROLS_H

#include <stdint.h>

/* Penalises logits[V] at the pieces of pieces[n] (ids < V). mark[V] is zero on entry and on return
 * (it marks the pieces already penalised). */
void nmt_controls_penalize(float *logits, const int32_t *pieces, int n, double penalty, unsigned char *mark);
/* Bans in logits the pieces that would repeat an N-gram of pieces[n] (nothing when n < N). */
void nmt_controls_ban_repeats(float *logits, const int32_t *pieces, int n, int N);
/* The most trailing pieces the loop guard with bound R looks at (0 when R = 0: off). */
int nmt_controls_loop_window(int R);
/* 1 when tail[n], a hypothesis's last n pieces (n <= nmt_controls_loop_window(R), fewer when the
 * hypothesis is shorter), ends in a loop for bound R >= 1. */
int nmt_controls_loops(const int32_t *tail, int n, int R);
/* The entropy of logprobs[V] in nats. */
double nmt_controls_entropy(const float *logprobs, int V);

#endif
