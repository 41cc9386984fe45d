/* controls: score controls, the loop guard and the entropy of a row (controls.h). */
#include "infer/controls.h"

#include <math.h>
#include <string.h>

void nmt_controls_penalize(float *logits, const int32_t *pieces, int n, double penalty, unsigned char *mark) {
    const float p = (float)penalty;
    for (int i = 0; i < n; i++) {
        const int32_t v = pieces[i];
        if (mark[v]) continue; /* a piece is penalised once, however often it occurs */
        mark[v] = 1;
        logits[v] = logits[v] < 0 ? logits[v] * p : logits[v] / p;
    }
    for (int i = 0; i < n; i++) mark[pieces[i]] = 0;
}

void nmt_controls_ban_repeats(float *logits, const int32_t *pieces, int n, int N) {
    if (N < 1 || n < N) return;
    /* The N-grams starting at i < n - N + 1 whose first N - 1 pieces are the hypothesis's last N - 1. */
    const int32_t *last = pieces + n - (N - 1);
    for (int i = 0; i + N <= n; i++)
        if (memcmp(pieces + i, last, (size_t)(N - 1) * sizeof(int32_t)) == 0) logits[pieces[i + N - 1]] = -INFINITY;
}

enum { LOOP_NGRAM = 4 }; /* the longest n-gram the guard looks for */

/* Copies of an n-gram the guard needs: more than R, and more than 2R pieces in all. */
static int loop_copies(int n, int R) {
    const int by_pieces = 2 * R / n + 1;
    return by_pieces > R + 1 ? by_pieces : R + 1;
}

int nmt_controls_loop_window(int R) {
    if (R < 1) return 0;
    int most = 0;
    for (int n = 1; n <= LOOP_NGRAM; n++)
        if (n * loop_copies(n, R) > most) most = n * loop_copies(n, R);
    return most;
}

int nmt_controls_loops(const int32_t *tail, int n, int R) {
    for (int g = 1; g <= LOOP_NGRAM; g++) {
        const int need = loop_copies(g, R);
        if (need * g > n) continue;
        const int32_t *last = tail + n - g;
        int c = 1;
        while (c < need && memcmp(last - (size_t)c * g, last, (size_t)g * sizeof(int32_t)) == 0) c++;
        if (c == need) return 1;
    }
    return 0;
}

double nmt_controls_entropy(const float *logprobs, int V) {
    double h = 0;
    for (int v = 0; v < V; v++)
        if (logprobs[v] > -INFINITY) h -= exp((double)logprobs[v]) * (double)logprobs[v];
    return h;
}
