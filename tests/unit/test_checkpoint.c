/* Tests of checkpoint: the state reads back bit for bit, parameters and moments restore exactly,
 * keep_last pruning, a damaged newest checkpoint is skipped with a warning, a checkpoint of another
 * model section is refused naming the key, and every allocation on the way is checked. */
#include "train/checkpoint.h"
#include "base/io.h"
#include "model/model.h"
#include "model/model_file.h"
#include "train/optim.h"
#include "base/util.h"

#include "testing.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A small pre-LN model with learned positions, so the checkpoint carries every kind of tensor
 * (position tables, final norms, untied embeddings). */
static const nmt_model_config config = {
    .vocab_size = 24,
    .d_model = 12,
    .heads = 3,
    .ffn = 20,
    .encoder_layers = 2,
    .decoder_layers = 1,
    .norm_position = NMT_NORM_PRE,
    .positions = NMT_POSITIONS_LEARNED,
    .max_positions = 16,
    .norm_eps = 1e-5f,
    .tie_embeddings = NMT_TIE_NONE,
};

typedef struct trained {
    nmt_model m;
    nmt_adam adam;
} trained;

/* A model with random parameters and an optimizer with distinct, awkward moment values. */
static void make(trained *t, const nmt_model_config *c, uint64_t seed) {
    ck_assert_int_eq(nmt_model_init(&t->m, c), 0);
    nmt_model_init_weights(&t->m, seed);
    ck_assert_int_eq(nmt_adam_init(&t->adam, t->m.num_params, 0.9, 0.98, 1e-9), 0);
    for (size_t i = 0; i < t->m.num_params; i++) {
        t->adam.m[i] = (float)i * 1e-3f - 0.5f + (float)seed;
        t->adam.v[i] = 1.0f / (float)(i + 3 + seed);
    }
}

static void drop(trained *t) {
    nmt_model_free(&t->m);
    nmt_adam_free(&t->adam);
}

static nmt_train_state awkward_state(long step) {
    nmt_train_state s = nmt_train_state_initial(0xFFFFFFFFFFFFFFF1ull);
    s.step = step;
    s.epoch = 3;
    s.cursor = 17;
    s.best_bleu = 0.1 + 0.2; /* 0.30000000000000004: needs all 17 digits */
    s.best_loss = 1e-300;
    s.best_step = step - 1;
    s.last_valid_step = step;
    s.bad_validations = 2;
    s.elapsed_s = 1234.5678901234567;
    s.threads = 2;
    s.log_loss_sum = M_PI * 1e5;
    s.log_nll_sum = -0.0;
    s.log_tokens = 98765;
    s.log_steps = 3;
    s.train_data_key = 0xFEDCBA9876543210ull; /* all 64 bits */
    return s;
}

/* Saves the checkpoints of steps first..last (step `every`) of t. */
static void save_steps(const trained *t, long first, long last, long every, int keep_last) {
    for (long step = first; step <= last; step += every) {
        nmt_train_state s = awkward_state(step);
        ck_assert_msg(nmt_checkpoint_save(nmt_test_tmpdir, &t->m, &t->adam, NULL, &s, keep_last) == 0, "%s", nmt_error());
    }
}

START_TEST(save_restore_is_exact_and_prunes) {
    trained a, b;
    make(&a, &config, 1);
    save_steps(&a, 1, 4, 1, 2);
    for (long step = 1; step <= 4; step++) {
        char *path = nmt_model_checkpoint_path(nmt_test_tmpdir, step);
        ck_assert_int_eq(nmt_file_exists(path), step >= 3);
        free(path);
    }
    nmt_st_file file;
    char *path;
    ck_assert_int_eq(nmt_checkpoint_find_latest(nmt_test_tmpdir, &file, &path, NULL), 1);
    ck_assert_ptr_nonnull(strstr(path, "step-00000004.safetensors"));
    nmt_train_state got, want = awkward_state(4);
    ck_assert_int_eq(nmt_checkpoint_state(&file, path, &got), 0);
    ck_assert_mem_eq(&got, &want, sizeof got);

    /* Another model (other seed, other moments), restored: identical bits. */
    make(&b, &config, 2);
    ck_assert_int_eq(nmt_checkpoint_check_config(&file, path, &config), 0);
    ck_assert_int_eq(nmt_checkpoint_restore(&file, path, &b.m, &b.adam, NULL), 0);
    ck_assert_mem_eq(b.m.params, a.m.params, a.m.num_params * sizeof(float));
    ck_assert_mem_eq(b.adam.m, a.adam.m, a.m.num_params * sizeof(float));
    ck_assert_mem_eq(b.adam.v, a.adam.v, a.m.num_params * sizeof(float));
    ck_assert_int_eq(b.adam.step, 4);
    /* Model tensors under their plain names, moments under prefixed ones. */
    ck_assert_ptr_nonnull(nmt_st_find(&file, "encoder.norm.weight"));
    ck_assert_ptr_nonnull(nmt_st_find(&file, "adam_m.decoder.embed_positions.weight"));
    ck_assert_ptr_nonnull(nmt_st_find(&file, "adam_v.src_embed.weight"));
    ck_assert_int_eq(file.num_tensors, 3 * a.m.num_tensors);
    nmt_st_free(&file);
    free(path);
    drop(&a);
    drop(&b);
}
END_TEST

START_TEST(ema_is_saved_and_restored) {
    /* The weights' average travels as "ema.<name>" and comes back bit for bit; a checkpoint saved
     * without one starts the average from its weights (result 1). */
    trained a, b;
    make(&a, &config, 1);
    make(&b, &config, 2);
    size_t n = a.m.num_params;
    float *ema = malloc(n * sizeof *ema), *got = malloc(n * sizeof *got);
    ck_assert(ema && got);
    for (size_t i = 0; i < n; i++) ema[i] = (float)i * -2e-4f + 0.25f;
    nmt_train_state s = awkward_state(7);
    ck_assert_msg(nmt_checkpoint_save(nmt_test_tmpdir, &a.m, &a.adam, ema, &s, 1) == 0, "%s", nmt_error());
    nmt_st_file file;
    char *path;
    ck_assert_int_eq(nmt_checkpoint_find_latest(nmt_test_tmpdir, &file, &path, NULL), 1);
    ck_assert_int_eq(file.num_tensors, 4 * a.m.num_tensors);
    ck_assert_ptr_nonnull(nmt_st_find(&file, "ema.encoder.norm.weight"));
    ck_assert_int_eq(nmt_checkpoint_restore(&file, path, &b.m, &b.adam, got), 0);
    ck_assert_mem_eq(got, ema, n * sizeof *ema);
    ck_assert_mem_eq(b.m.params, a.m.params, n * sizeof(float));
    nmt_st_free(&file);
    free(path);

    s.step = 8;
    ck_assert_int_eq(nmt_checkpoint_save(nmt_test_tmpdir, &a.m, &a.adam, NULL, &s, 1), 0);
    ck_assert_int_eq(nmt_checkpoint_find_latest(nmt_test_tmpdir, &file, &path, NULL), 1);
    ck_assert_int_eq(nmt_checkpoint_restore(&file, path, &b.m, &b.adam, got), 1);
    ck_assert_mem_eq(got, a.m.params, n * sizeof(float));
    nmt_st_free(&file);
    free(path);
    free(ema);
    free(got);
    drop(&a);
    drop(&b);
}
END_TEST

START_TEST(damaged_newest_is_skipped_with_warning) {
    trained a;
    make(&a, &config, 1);
    save_steps(&a, 10, 20, 10, 0);
    /* Cut the newest in half, as a failing disk might. */
    char *newest = nmt_model_checkpoint_path(nmt_test_tmpdir, 20);
    char *data;
    size_t size;
    ck_assert_int_eq(nmt_read_file(newest, &data, &size), 0);
    ck_assert_int_eq(nmt_atomic_write(newest, data, size / 2), 0);
    free(data);
    char *warnings = NULL;
    size_t warnings_size = 0;
    FILE *w = open_memstream(&warnings, &warnings_size);
    nmt_st_file file;
    char *path;
    ck_assert_int_eq(nmt_checkpoint_find_latest(nmt_test_tmpdir, &file, &path, w), 1);
    fclose(w);
    ck_assert_ptr_nonnull(strstr(path, "step-00000010.safetensors"));
    ck_assert_ptr_nonnull(strstr(warnings, "skipping a damaged checkpoint"));
    ck_assert_ptr_nonnull(strstr(warnings, newest));
    nmt_st_free(&file);
    free(path);
    free(warnings);
    free(newest);

    /* A model file is not a checkpoint. */
    char *model_path = nmt_path_join(nmt_test_tmpdir, "model.safetensors");
    ck_assert_int_eq(nmt_model_save(&a.m, model_path), 0);
    ck_assert_int_eq(nmt_st_read(&file, model_path), 0);
    nmt_train_state state;
    ck_assert_int_eq(nmt_checkpoint_state(&file, model_path, &state), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "not an nmt checkpoint"));
    nmt_st_free(&file);
    free(model_path);

    /* No checkpoints directory: none found. */
    ck_assert_int_eq(nmt_checkpoint_find_latest("/nonexistent", &file, &path, NULL), 0);
    drop(&a);
}
END_TEST

START_TEST(other_model_section_is_refused) {
    trained a;
    make(&a, &config, 1);
    save_steps(&a, 5, 5, 1, 1);
    nmt_st_file file;
    char *path;
    ck_assert_int_eq(nmt_checkpoint_find_latest(nmt_test_tmpdir, &file, &path, NULL), 1);
    nmt_model_config other = config;
    other.ffn = 32;
    ck_assert_int_eq(nmt_checkpoint_check_config(&file, path, &other), -1);
    ck_assert_msg(strstr(nmt_error(), "model.ffn is 20 in the checkpoint but 32 in the config"), "%s", nmt_error());
    other = config;
    other.norm_position = NMT_NORM_POST;
    ck_assert_int_eq(nmt_checkpoint_check_config(&file, path, &other), -1);
    ck_assert_msg(strstr(nmt_error(), "model.norm_position is pre in the checkpoint but post"), "%s", nmt_error());
    other = config;
    other.vocab_size = 30;
    ck_assert_int_eq(nmt_checkpoint_check_config(&file, path, &other), -1);
    ck_assert_msg(strstr(nmt_error(), "vocab_size is 24 in the checkpoint but 30"), "%s", nmt_error());
    /* A checkpoint from before output_bias and source_eos existed: their defaults, so it resumes. */
    /* The two entries are moved past the end the reader looks at (and back before the file is freed). */
    const int all = file.num_metadata;
    int kept = 0;
    for (int i = 0; i < all; i++)
        if (strcmp(file.metadata[i].key, "output_bias") != 0 && strcmp(file.metadata[i].key, "source_eos") != 0) {
            const nmt_st_metadata entry = file.metadata[kept];
            file.metadata[kept++] = file.metadata[i];
            file.metadata[i] = entry;
        }
    ck_assert_int_eq(kept, all - 2);
    file.num_metadata = kept;
    nmt_model_config older = config;
    older.output_bias = 0;
    older.source_eos = 1;
    ck_assert_msg(nmt_checkpoint_check_config(&file, path, &older) == 0, "%s", nmt_error());
    other = older;
    other.output_bias = 1;
    ck_assert_int_eq(nmt_checkpoint_check_config(&file, path, &other), -1);
    ck_assert_msg(strstr(nmt_error(), "model.output_bias is 0 in the checkpoint but 1"), "%s", nmt_error());
    file.num_metadata = all;
    nmt_st_free(&file);
    free(path);
    drop(&a);
}
END_TEST

static int save_attempt(void *context) {
    const trained *t = context;
    nmt_train_state s = awkward_state(7);
    return nmt_checkpoint_save(nmt_test_tmpdir, &t->m, &t->adam, NULL, &s, 1);
}

static int find_and_restore_attempt(void *context) {
    trained *t = context;
    nmt_st_file file;
    char *path;
    int found = nmt_checkpoint_find_latest(nmt_test_tmpdir, &file, &path, NULL);
    if (found <= 0) return -1;
    int rc = nmt_checkpoint_restore(&file, path, &t->m, &t->adam, NULL);
    nmt_st_free(&file);
    free(path);
    return rc;
}

START_TEST(allocation_failures_are_reported) {
    trained a;
    make(&a, &config, 1);
    ck_assert_int_gt(nmt_test_alloc_sweep(save_attempt, &a), 2);
    ck_assert_int_gt(nmt_test_alloc_sweep(find_and_restore_attempt, &a), 2);
    drop(&a);
}
END_TEST

int main(void) {
    Suite *s = suite_create("checkpoint");
    TCase *tc = tcase_create("checkpoint");
    tcase_set_timeout(tc, 60); /* the allocation sweeps write dozens of checkpoints, fsync included */
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, save_restore_is_exact_and_prunes);
    tcase_add_test(tc, ema_is_saved_and_restored);
    tcase_add_test(tc, damaged_newest_is_skipped_with_warning);
    tcase_add_test(tc, other_model_section_is_refused);
    tcase_add_test(tc, allocation_failures_are_reported);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
