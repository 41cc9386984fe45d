/* Tests of model_config: the defaults and ranges come from the one list of fields, and every check
 * names its field. */
#include "model/model_config.h"
#include "base/util.h"
#include "testing.h"

#include <check.h>
#include <string.h>

START_TEST(defaults) {
    nmt_model_config c = nmt_model_config_default();
    ck_assert_int_eq(c.vocab_size, 0);
    ck_assert_int_eq(c.d_model, 256);
    ck_assert_int_eq(c.heads, 4);
    ck_assert_int_eq(c.ffn, 1024);
    ck_assert_int_eq(c.encoder_layers, 3);
    ck_assert_int_eq(c.decoder_layers, 3);
    ck_assert(c.dropout == 0.1f && c.attention_dropout == 0.0f && c.norm_eps == 1e-5f);
    ck_assert_int_eq(c.norm_position, NMT_NORM_POST);
    ck_assert_int_eq(c.positions, NMT_POSITIONS_SINUSOIDAL);
    ck_assert_int_eq(c.max_positions, 1024);
    ck_assert_int_eq(c.tie_embeddings, NMT_TIE_ALL);
    ck_assert_int_eq(nmt_model_config_check(&c), 0);
    ck_assert_int_eq(c.activation, NMT_ACTIVATION_RELU);
    ck_assert_int_eq(c.embedding_norm, 0);
    ck_assert_int_eq(NMT_MODEL_CONFIG_COUNT, 17);
    ck_assert_str_eq(nmt_model_config_fields[0].name, "vocab_size");
    ck_assert_str_eq(nmt_model_config_fields[NMT_MODEL_CONFIG_COUNT - 1].name, "embedding_norm");
}
END_TEST

static void expect_error(nmt_model_config c, const char *message) {
    ck_assert_int_eq(nmt_model_config_check(&c), -1);
    ck_assert_str_eq(nmt_error(), message);
}

START_TEST(checks_name_the_field) {
    nmt_model_config c = nmt_model_config_default();
    c.vocab_size = 3;
    expect_error(c, "model.vocab_size must be between 4 and 16777216 (the ids 0-3 are pad, unk, bos, eos), not 3");
    c = nmt_model_config_default();
    c.ffn = 0;
    expect_error(c, "model.ffn must be between 1 and 65536, not 0");
    c = nmt_model_config_default();
    c.dropout = 1.0f;
    expect_error(c, "model.dropout must be in [0, 1), not 1");
    c = nmt_model_config_default();
    c.norm_eps = 0.0f;
    expect_error(c, "model.norm_eps must be in (0, 1), not 0");
    c = nmt_model_config_default();
    c.positions = (nmt_positions)7;
    expect_error(c, "model.positions must be sinusoidal, learned or rope");
    c = nmt_model_config_default();
    c.norm_position = (nmt_norm_position)-1;
    expect_error(c, "model.norm_position must be post or pre");
    c = nmt_model_config_default();
    c.d_model = 255, c.heads = 5;
    expect_error(c, "model.d_model must be even, not 255");
    c.d_model = 250, c.heads = 4;
    expect_error(c, "model.heads (4) must divide model.d_model (250)");
    c.d_model = 12, c.heads = 4, c.positions = NMT_POSITIONS_ROPE;
    expect_error(c, "model.positions rope needs an even head size, but d_model/heads = 3");
}
END_TEST

int main(void) {
    Suite *s = suite_create("model_config");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, checks_name_the_field);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
