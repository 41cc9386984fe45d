/* Tests of vocab: the source, decoder-input and target rows of a sentence, padded. */
#include "text/vocab.h"
#include "testing.h"

static void expect_row(nmt_vocab_row_kind kind, const int32_t *pieces, int len, int width, const int32_t *want) {
    int32_t row[8];
    for (int i = 0; i < 8; i++) row[i] = -7; /* anything the function must overwrite or leave alone */
    nmt_vocab_row(kind, pieces, len, row, width);
    for (int i = 0; i < width; i++) ck_assert_int_eq(row[i], want[i]);
    for (int i = width; i < 8; i++) ck_assert_int_eq(row[i], -7);
}

START_TEST(rows_of_a_sentence) {
    const int32_t pieces[] = {10, 11, 12};
    expect_row(NMT_ROW_SOURCE, pieces, 3, 6, (const int32_t[]){10, 11, 12, NMT_EOS, NMT_PAD, NMT_PAD});
    expect_row(NMT_ROW_DECODER_INPUT, pieces, 3, 6, (const int32_t[]){NMT_BOS, 10, 11, 12, NMT_PAD, NMT_PAD});
    expect_row(NMT_ROW_TARGET, pieces, 3, 4, (const int32_t[]){10, 11, 12, NMT_EOS});
}
END_TEST

START_TEST(an_empty_sentence_is_its_special_token) {
    expect_row(NMT_ROW_SOURCE, NULL, 0, 3, (const int32_t[]){NMT_EOS, NMT_PAD, NMT_PAD});
    expect_row(NMT_ROW_DECODER_INPUT, NULL, 0, 1, (const int32_t[]){NMT_BOS});
    expect_row(NMT_ROW_TARGET, NULL, 0, 2, (const int32_t[]){NMT_EOS, NMT_PAD});
}
END_TEST

int main(void) {
    Suite *s = suite_create("vocab");
    TCase *tc = tcase_create("vocab");
    tcase_add_test(tc, rows_of_a_sentence);
    tcase_add_test(tc, an_empty_sentence_is_its_special_token);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
