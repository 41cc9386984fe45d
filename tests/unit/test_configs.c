/* Tests of the shipped configs: every configs/<name>.yaml loads with the config loader (without its data:
 * paths are only resolved), and the Multi30k configs (En→De, En→Fr, En→Cs) hold the model and settings
 * the README describes, find the corpus beside the repository, write into the repository's runs/, and
 * follow a --set data.root elsewhere. */
#include "train/config.h"
#include "testing.h"

#include <glob.h>

START_TEST(every_config_loads) {
    glob_t found;
    ck_assert_int_eq(glob(NMT_SOURCE_DIR "/configs/*.yaml", 0, NULL, &found), 0);
    ck_assert_uint_ge(found.gl_pathc, 3); /* quickstart and the two Multi30k configs at least */
    for (size_t i = 0; i < found.gl_pathc; i++) {
        nmt_config config;
        ck_assert_msg(nmt_config_load(&config, found.gl_pathv[i], NULL) == 0, "%s", nmt_error());
        ck_assert_ptr_nonnull(config.train[0].src);
        ck_assert_ptr_nonnull(config.output);
        nmt_config_free(&config);
    }
    globfree(&found);
}
END_TEST

/* The repository's parent directory (configs/ -> repository -> parent), where shared/ sits. */
static void parent_of_repository(char *out, size_t size) {
    snprintf(out, size, "%s", NMT_SOURCE_DIR);
    char *slash = strrchr(out, '/');
    ck_assert_ptr_nonnull(slash);
    *slash = '\0';
}

/* One Multi30k config, `name` translating English into `tgt`: every pair shares the README's recipe. */
static void check_multi30k(const char *name, const char *tgt) {
    char path[512], parent[512], want[640];
    snprintf(path, sizeof path, "%s/configs/%s.yaml", NMT_SOURCE_DIR, name);
    parent_of_repository(parent, sizeof parent);
    nmt_config c;
    ck_assert_msg(nmt_config_load(&c, path, NULL) == 0, "%s", nmt_error());
    snprintf(want, sizeof want, "%s/shared/corpora/multi30k", parent);
    ck_assert_str_eq(c.data_root, want);
    snprintf(want, sizeof want, "%s/shared/corpora/multi30k/train.en", parent);
    ck_assert_str_eq(c.train[0].src, want);
    snprintf(want, sizeof want, "%s/shared/corpora/multi30k/train.%s", parent, tgt);
    ck_assert_str_eq(c.train[0].tgt, want);
    snprintf(want, sizeof want, "%s/shared/corpora/multi30k/val.en", parent);
    ck_assert_str_eq(c.valid.src, want);
    snprintf(want, sizeof want, "%s/shared/corpora/multi30k/val.%s", parent, tgt);
    ck_assert_str_eq(c.valid.tgt, want);
    snprintf(want, sizeof want, "%s/runs/%s", NMT_SOURCE_DIR, name);
    ck_assert_str_eq(c.output, want);
    /* The README's Multi30k model: d256, 4 heads, ffn 1024, 3+3 layers, tied embeddings, a joint 8k unigram vocabulary. */
    ck_assert_int_eq(c.model.d_model, 256);
    ck_assert_int_eq(c.model.heads, 4);
    ck_assert_int_eq(c.model.ffn, 1024);
    ck_assert_int_eq(c.model.encoder_layers, 3);
    ck_assert_int_eq(c.model.decoder_layers, 3);
    ck_assert_int_eq(c.model.tie_embeddings, NMT_TIE_ALL);
    ck_assert_ptr_null(c.vocab_model);
    ck_assert_int_eq(c.vocab_size, 8000);
    ck_assert_str_eq(c.vocab_type, "unigram");
    ck_assert(c.label_smoothing == 0.1 && c.max_minutes == 60 && c.keep_last == 5 && c.patience == 10);
    /* The recipe: 2,048-token batches, validated and saved every 500 steps. */
    ck_assert_int_eq(c.batch_tokens, 2048);
    ck_assert(c.valid_every == 500 && c.save_every == 500);
    nmt_config_free(&c);
    /* Data fetched elsewhere: one override moves every data path. */
    const char *overrides[] = {"data.root=/data/multi30k", NULL};
    ck_assert_msg(nmt_config_load(&c, path, overrides) == 0, "%s", nmt_error());
    ck_assert_str_eq(c.train[0].src, "/data/multi30k/train.en");
    snprintf(want, sizeof want, "/data/multi30k/val.%s", tgt);
    ck_assert_str_eq(c.valid.tgt, want);
    nmt_config_free(&c);
}

START_TEST(multi30k_configs_find_the_corpus) {
    check_multi30k("multi30k-small", "de");
    check_multi30k("multi30k-small-fr", "fr");
    check_multi30k("multi30k-small-cs", "cs");
}
END_TEST

int main(void) {
    Suite *s = suite_create("configs");
    TCase *tc = tcase_create("configs");
    tcase_add_test(tc, every_config_loads);
    tcase_add_test(tc, multi30k_configs_find_the_corpus);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
