/* Tests of align: piece alignments from attention, and words from SentencePiece's word boundaries
 * (a vocabulary trained on a small corpus; the spm.model comes from nmt_spm_train). */
#include "infer/align.h"
#include "base/io.h"
#include "testing.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* A hypothesis of `length` target pieces whose piece j attends most to source piece src_of[j]. */
static nmt_hypothesis hypothesis(int32_t *tokens, int length, int src_len, const int *src_of) {
    nmt_hypothesis h = {.tokens = tokens, .length = length, .src_len = src_len};
    h.attention = calloc((size_t)(length + 1) * (size_t)(src_len + 1), sizeof(float));
    ck_assert_ptr_nonnull(h.attention);
    for (int j = 0; j < length; j++) {
        for (int i = 0; i <= src_len; i++) h.attention[j * (src_len + 1) + i] = 0.5f / (float)src_len;
        h.attention[j * (src_len + 1) + src_of[j]] = 0.5f;
    }
    return h;
}

START_TEST(piece_pairs_follow_the_targets) {
    int32_t tokens[4] = {10, 11, 12, 13}, src[3] = {20, 21, 22};
    const int src_of[4] = {2, 0, 0, 1};
    nmt_hypothesis h = hypothesis(tokens, 4, 3, src_of);
    int pairs[8];
    ck_assert_int_eq(nmt_align_pairs(&h, src, 3, NULL, 0, pairs), 4);
    const int want[8] = {2, 0, 0, 1, 0, 2, 1, 3};
    for (int k = 0; k < 8; k++) ck_assert_int_eq(pairs[k], want[k]);
    free(h.attention);
    h.attention = NULL; /* no attention (an empty line): no pairs */
    ck_assert_int_eq(nmt_align_pairs(&h, src, 3, NULL, 0, pairs), 0);
}
END_TEST

START_TEST(word_pairs_merge_pieces_at_word_boundaries) {
    char *corpus = nmt_path_join(nmt_test_tmpdir, "corpus.txt"), *prefix = nmt_path_join(nmt_test_tmpdir, "spm");
    FILE *fp = fopen(corpus, "w");
    ck_assert_ptr_nonnull(fp);
    for (int i = 0; i < 200; i++) fprintf(fp, "the cat sees a dog\nunbelievably small houses\nthe dog runs %d\n", i % 7);
    fclose(fp);
    const char *inputs[] = {corpus};
    nmt_spm_train_options o = {.inputs = inputs, .num_inputs = 1, .vocab_size = 30, .model_type = "unigram",
                               .character_coverage = 1.0, .output_prefix = prefix, .quiet = 1};
    ck_assert_msg(nmt_spm_train(&o) == 0, "%s", nmt_error());
    char path[600];
    snprintf(path, sizeof path, "%s.model", prefix);
    nmt_spm *spm;
    ck_assert_int_eq(nmt_spm_load(&spm, path), 0);
    /* The words of a sentence are those of its text split at spaces, whatever its pieces. */
    const char *text = "unbelievably small houses the cat";
    int32_t *ids = NULL;
    size_t cap = 0, n = 0;
    ck_assert_int_eq(nmt_spm_encode(spm, text, strlen(text), &ids, &cap, &n), 0);
    ck_assert_int_gt((int)n, 5); /* more pieces than words */
    int word[64];
    ck_assert_int_le((int)n, 64);
    ck_assert_int_eq(nmt_align_words(spm, ids, (int)n, word), 5);
    ck_assert_int_eq(word[0], 0);
    ck_assert_int_eq(word[n - 1], 4);
    for (size_t i = 1; i < n; i++) ck_assert(word[i] == word[i - 1] || word[i] == word[i - 1] + 1);
    /* Target = source (a copy): every target piece attends to its own source piece, so the word
     * pairs are the diagonal, each once. */
    int src_of[64];
    for (size_t j = 0; j < n; j++) src_of[j] = (int)j;
    nmt_hypothesis h = hypothesis(ids, (int)n, (int)n, src_of);
    int pairs[128];
    ck_assert_int_eq(nmt_align_pairs(&h, ids, (int)n, spm, 1, pairs), 5);
    for (int k = 0; k < 5; k++) {
        ck_assert_int_eq(pairs[2 * k], k);
        ck_assert_int_eq(pairs[2 * k + 1], k);
    }
    free(h.attention);
    free(ids);
    nmt_spm_free(spm);
    free(corpus);
    free(prefix);
}
END_TEST

int main(void) {
    Suite *s = suite_create("align");
    TCase *tc = tcase_create("align");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, piece_pairs_follow_the_targets);
    tcase_add_test(tc, word_pairs_merge_pieces_at_word_boundaries);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
