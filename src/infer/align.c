/* align: piece and word alignments of a hypothesis. */
#include "infer/align.h"

#include "base/util.h"

#include <stdlib.h>
#include <string.h>

int nmt_align_words(const nmt_spm *spm, const int32_t *ids, int n, int *word) {
    static const char boundary[] = "\xe2\x96\x81"; /* U+2581 */
    int w = -1;
    for (int i = 0; i < n; i++) {
        const char *piece = nmt_spm_piece(spm, ids[i]);
        if (w < 0 || (piece && strncmp(piece, boundary, 3) == 0)) w++;
        word[i] = w;
    }
    return w + 1;
}

static int by_target(const void *a, const void *b) {
    const int *x = a, *y = b;
    if (x[1] != y[1]) return (x[1] > y[1]) - (x[1] < y[1]);
    return (x[0] > y[0]) - (x[0] < y[0]);
}

int nmt_align_pairs(const nmt_hypothesis *h, const int32_t *src, int src_len, const nmt_spm *spm, int words,
                    int *pairs) {
    if (!h->attention || h->length == 0) return 0;
    int *src_of = nmt_malloc((size_t)h->length * sizeof(int));
    int *src_word = words ? nmt_malloc(((size_t)src_len + 1) * sizeof(int)) : NULL;
    int *tgt_word = words ? nmt_malloc((size_t)h->length * sizeof(int)) : NULL;
    int count = -1;
    if (!src_of || (words && (!src_word || !tgt_word))) goto done;
    nmt_hypothesis_alignment(h, src_of);
    if (words) {
        nmt_align_words(spm, src, src_len, src_word);
        nmt_align_words(spm, h->tokens, h->length, tgt_word);
    }
    for (int j = 0; j < h->length; j++) {
        pairs[2 * j] = words ? src_word[src_of[j]] : src_of[j];
        pairs[2 * j + 1] = words ? tgt_word[j] : j;
    }
    qsort(pairs, (size_t)h->length, 2 * sizeof(int), by_target);
    count = 0;
    for (int j = 0; j < h->length; j++) {
        if (count > 0 && pairs[2 * count - 2] == pairs[2 * j] && pairs[2 * count - 1] == pairs[2 * j + 1]) continue;
        pairs[2 * count] = pairs[2 * j];
        pairs[2 * count + 1] = pairs[2 * j + 1];
        count++;
    }
done:
    free(src_of);
    free(src_word);
    free(tgt_word);
    return count;
}
