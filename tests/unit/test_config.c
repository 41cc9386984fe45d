/* Tests of config: defaults, a full example that sets every key, every kind of error with its file:line:column
 * (positions counted by hand in the YAML texts below), overrides, path resolution, and the
 * save -> load round trip. */
#include "train/config.h"
#include "train/optim.h"
#include "base/io.h"
#include "base/util.h"
#include "testing.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define dir nmt_test_tmpdir

/* Relative paths must resolve against the config file, never the current directory. */
static void leave_cwd(void) { ck_assert_int_eq(chdir("/"), 0); }

/* Writes text to dir/name and returns the path (static buffer). */
static const char *write_config(const char *name, const char *text) {
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_int_eq(nmt_atomic_write(path, text, strlen(text)), 0);
    return path;
}

static const char minimal[] = "data:\n  train: {src: train.en, tgt: train.de}\n";

/* Loads text that must fail; checks the error contains `want`. */
static void expect_error(const char *text, const char *const *overrides, const char *want) {
    nmt_config c;
    const char *path = write_config("bad.yaml", text);
    int rc = nmt_config_load(&c, path, overrides);
    /* A wrong override is a command-line mistake of its own kind. */
    ck_assert_int_eq(rc, overrides ? NMT_CONFIG_BAD_OVERRIDE : -1);
    char full[512];
    if (want[0] == ':') snprintf(full, sizeof full, "%s%s", path, want); /* ":line:col: ..." after the file */
    else snprintf(full, sizeof full, "%s", want);
    ck_assert_msg(strstr(nmt_error(), full), "error '%s' lacks '%s'", nmt_error(), full);
    nmt_config_free(&c);
}

START_TEST(defaults_and_resolved_paths) {
    leave_cwd();
    nmt_config c;
    ck_assert_int_eq(nmt_config_load(&c, write_config("exp.yaml", minimal), NULL), 0);
    nmt_model_config m = nmt_model_config_default();
    ck_assert_int_eq(c.model.d_model, m.d_model);
    ck_assert_int_eq(c.model.heads, m.heads);
    ck_assert_int_eq(c.vocab_size, 8000);
    ck_assert_str_eq(c.vocab_type, "unigram");
    ck_assert_ptr_null(c.vocab_model);
    ck_assert_int_eq(c.max_length, 128);
    ck_assert_int_eq(c.batch_tokens, 4096);
    ck_assert_int_eq(c.update_freq, 1);
    ck_assert_double_eq(c.lr, 1e-3);
    ck_assert_double_eq(c.beta1, 0.9);
    ck_assert_double_eq(c.beta2, 0.98);
    ck_assert_double_eq(c.adam_eps, 1e-9);
    ck_assert_int_eq(c.warmup, 800);
    ck_assert_double_eq(c.clip_norm, 0.0);
    ck_assert_double_eq(c.label_smoothing, 0.1);
    ck_assert_int_eq(c.max_steps, 0);
    ck_assert_int_eq(c.max_epochs, 0);
    ck_assert_double_eq(c.max_minutes, 0.0);
    ck_assert_int_eq(c.valid_every, 500);
    ck_assert_int_eq(c.valid_beam, 1);
    ck_assert_double_eq(c.valid_length_penalty, 0.6);
    ck_assert_int_eq(c.save_every, 500);
    ck_assert_int_eq(c.keep_last, 5);
    ck_assert_int_eq(c.patience, 10);
    ck_assert_uint_eq(c.seed, 1);
    char want[256];
    snprintf(want, sizeof want, "%s/train.en", dir);
    ck_assert_str_eq(c.train[0].src, want);
    snprintf(want, sizeof want, "%s/train.de", dir);
    ck_assert_str_eq(c.train[0].tgt, want);
    ck_assert_ptr_null(c.valid.src);
    ck_assert_str_eq(c.data_root, dir);
    snprintf(want, sizeof want, "%s/runs/exp", dir);
    ck_assert_str_eq(c.output, want);
    nmt_config_free(&c);
}
END_TEST

/* Every key set, with every value changed from its default where the type allows. */
static const char full_example[] =
    "model:\n"
    "  d_model: 512\n"
    "  heads: 8\n"
    "  ffn: 2048\n"
    "  encoder_layers: 6\n"
    "  decoder_layers: 2\n"
    "  dropout: 0.3\n"
    "  attention_dropout: 0.05\n"
    "  norm_position: pre        # post | pre\n"
    "  positions: rope\n"
    "  max_positions: 256\n"
    "  norm_eps: 1.0e-6\n"
    "  tie_embeddings: decoder\n"
    "vocab:\n"
    "  model: ../vocab/spm.model\n"
    "  size: 16000\n"
    "  type: bpe\n"
    "data:\n"
    "  root: corpora/./m30k\n"
    "  train: {src: train.en, tgt: train.de}\n"
    "  valid: {src: val.en, tgt: /abs/val.de}\n"
    "  max_length: 100\n"
    "  src_lang: eng\n"
    "  tgt_lang: zh-Hans\n"
    "train:\n"
    "  batch_tokens: 2048\n"
    "  update_freq: 4\n"
    "  optimizer: {lr: 5.0e-4, betas: [0.85, 0.995], eps: 1.0e-8, warmup: 4000, schedule: cosine, decay_steps: 50000,\n"
    "              min_lr: 1.0e-5, clip_norm: 1.5, weight_decay: 0.01}\n"
    "  label_smoothing: 0.2\n"
    "  dropout_src: 0.1\n"
    "  dropout_trg: 0.15\n"
    "  rdrop_alpha: 5\n"
    "  max_steps: 100000\n"
    "  max_epochs: 30\n"
    "  max_minutes: 90.5\n"
    "  valid_every: 1000\n"
    "  valid_beam: 4\n"
    "  valid_length_penalty: 1.5\n"
    "  save_every: 250\n"
    "  keep_last: 3\n"
    "  patience: 0\n"
    "  seed: 18446744073709551615\n"
    "output: runs/big\n";

START_TEST(full_example_parses) {
    leave_cwd();
    nmt_config c;
    ck_assert_int_eq(nmt_config_load(&c, write_config("big.yaml", full_example), NULL), 0);
    ck_assert_int_eq(c.model.d_model, 512);
    ck_assert_int_eq(c.model.heads, 8);
    ck_assert_int_eq(c.model.ffn, 2048);
    ck_assert_int_eq(c.model.encoder_layers, 6);
    ck_assert_int_eq(c.model.decoder_layers, 2);
    ck_assert_float_eq(c.model.dropout, 0.3f);
    ck_assert_float_eq(c.model.attention_dropout, 0.05f);
    ck_assert_int_eq(c.model.norm_position, NMT_NORM_PRE);
    ck_assert_int_eq(c.model.positions, NMT_POSITIONS_ROPE);
    ck_assert_int_eq(c.model.max_positions, 256);
    ck_assert_float_eq(c.model.norm_eps, 1e-6f);
    ck_assert_int_eq(c.model.tie_embeddings, NMT_TIE_DECODER);
    ck_assert_int_eq(c.vocab_size, 16000);
    ck_assert_str_eq(c.vocab_type, "bpe");
    ck_assert_int_eq(c.max_length, 100);
    ck_assert_int_eq(c.batch_tokens, 2048);
    ck_assert_int_eq(c.update_freq, 4);
    ck_assert_double_eq(c.lr, 5e-4);
    ck_assert_double_eq(c.beta1, 0.85);
    ck_assert_double_eq(c.beta2, 0.995);
    ck_assert_double_eq(c.adam_eps, 1e-8);
    ck_assert_int_eq(c.warmup, 4000);
    ck_assert_int_eq(c.lr_schedule, NMT_LR_COSINE);
    ck_assert_int_eq(c.decay_steps, 50000);
    ck_assert_double_eq(c.min_lr, 1e-5);
    ck_assert_double_eq(c.weight_decay, 0.01);
    ck_assert_double_eq(c.clip_norm, 1.5);
    ck_assert_double_eq(c.label_smoothing, 0.2);
    ck_assert_double_eq(c.dropout_src, 0.1);
    ck_assert_double_eq(c.dropout_trg, 0.15);
    ck_assert_double_eq(c.rdrop_alpha, 5);
    ck_assert_int_eq(c.max_steps, 100000);
    ck_assert_int_eq(c.max_epochs, 30);
    ck_assert_double_eq(c.max_minutes, 90.5);
    ck_assert_int_eq(c.valid_every, 1000);
    ck_assert_int_eq(c.valid_beam, 4);
    ck_assert_double_eq(c.valid_length_penalty, 1.5);
    ck_assert_int_eq(c.save_every, 250);
    ck_assert_int_eq(c.keep_last, 3);
    ck_assert_int_eq(c.patience, 0);
    ck_assert_uint_eq(c.seed, 18446744073709551615ul);
    /* vocab.model and output against the config's directory; data paths against data.root; the
     * "." and ".." components are folded away; an absolute path stays as it is. */
    char want[256], *parent = strdup(dir);
    *strrchr(parent, '/') = '\0';
    snprintf(want, sizeof want, "%s/vocab/spm.model", parent);
    ck_assert_str_eq(c.vocab_model, want);
    snprintf(want, sizeof want, "%s/corpora/m30k", dir);
    ck_assert_str_eq(c.data_root, want);
    snprintf(want, sizeof want, "%s/corpora/m30k/train.en", dir);
    ck_assert_str_eq(c.train[0].src, want);
    snprintf(want, sizeof want, "%s/corpora/m30k/val.en", dir);
    ck_assert_str_eq(c.valid.src, want);
    ck_assert_str_eq(c.valid.tgt, "/abs/val.de");
    snprintf(want, sizeof want, "%s/runs/big", dir);
    ck_assert_str_eq(c.output, want);
    free(parent);
    nmt_config_free(&c);
}
END_TEST

START_TEST(errors_name_line_and_column) {
    leave_cwd();
    /* Unknown keys, with the closest valid key (also across sections) or the list of valid keys. */
    expect_error("model:\n  head: 4\n", NULL, ":2:3: unknown key 'model.head' (did you mean 'model.heads'?)");
    expect_error("train:\n  lr: 0.1\n", NULL, ":2:3: unknown key 'train.lr' (did you mean 'train.optimizer.lr'?)");
    expect_error("vocab:\n  zzzzzzzz: 1\n", NULL, ":2:3: unknown key 'vocab.zzzzzzzz' (valid keys in vocab: model, size, type, sampling_alpha)");
    /* Wrong types point at the value. */
    expect_error("model:\n  heads: four\n", NULL, ":2:10: model.heads: expected an integer from 1 to 4096, got 'four'");
    expect_error("model:\n  heads: \"4\"\n", NULL, ":2:10: model.heads: expected an integer from 1 to 4096, got a quoted string");
    expect_error("model:\n  d_model: 2.5\n", NULL, ":2:12: model.d_model: expected an integer");
    expect_error("model: [1, 2]\n", NULL, ":1:8: model: expected a mapping of keys, got a list");
    expect_error("train:\n  optimizer: {betas: 0.9}\n", NULL, ":2:22: train.optimizer.betas: expected a list of two numbers");
    expect_error("model:\n  norm_position: middle\n", NULL, ":2:18: model.norm_position: expected one of post, pre, got 'middle'");
    expect_error("model:\n  positions: absolute\n", NULL, "expected one of sinusoidal, learned, rope, got 'absolute'");
    expect_error("model:\n  tie_embeddings: both\n", NULL, "expected one of none, decoder, all, got 'both'");
    expect_error("vocab:\n  type: word\n", NULL, ":2:9: vocab.type: expected one of unigram, bpe, got 'word'");
    /* Out-of-range values. */
    expect_error("model:\n  dropout: -0.1\n", NULL, ":2:12: model.dropout: expected a number in [0, 1), got -0.1");
    expect_error("model:\n  encoder_layers: 0\n", NULL, ":2:19: model.encoder_layers: expected an integer from 1 to 256, got 0");
    expect_error("train:\n  optimizer:\n    betas: [0.9, 1.0]\n", NULL, ":3:18: train.optimizer.betas: expected a number in [0, 1), got 1.0");
    expect_error("train:\n  optimizer: {lr: 0}\n", NULL, "train.optimizer.lr: expected a number > 0, got 0");
    expect_error("model:\n  norm_eps: 0\n", NULL, "model.norm_eps: expected a number in (0, 1), got 0");
    expect_error("train:\n  label_smoothing: 1\n", NULL, "train.label_smoothing: expected a number in [0, 1)");
    expect_error("train:\n  optimizer: {weight_decay: 1}\n", NULL,
                 ":2:29: train.optimizer.weight_decay: expected a number in [0, 1), got 1");
    expect_error("train:\n  dropout_src: 1\n", NULL, ":2:16: train.dropout_src: expected a number in [0, 1), got 1");
    expect_error("train:\n  rdrop_alpha: -1\n", NULL, ":2:16: train.rdrop_alpha: expected a number in [0, 1000], got -1");
    expect_error("train:\n  valid_length_penalty: 11\n", NULL,
                 ":2:25: train.valid_length_penalty: expected a number in [0, 10], got 11");
    expect_error("train:\n  seed: -1\n", NULL, ":2:9: train.seed: expected an integer from 0 to");
    expect_error("train:\n  max_steps: 99999999999999999999999\n", NULL, "train.max_steps: expected an integer from 0 to");
    expect_error("model:\n  d_model: 100\n  heads: 8\n", NULL, ":3:3: model.d_model 100 is not divisible by model.heads 8");
    expect_error("model:\n  d_model: 12\n  heads: 4\n  positions: rope\n", NULL, ":4:3: rope positions need an even head size");
    expect_error("\nmodel:\n  d_model: 9\n  heads: 3\n", NULL, ":2:1: model.d_model");
    /* Structure. */
    expect_error("model:\n  heads: 4\nmodel:\n  heads: 8\n", NULL, ":3:1: duplicate key 'model' (first given at line 1)");
    expect_error("model:\n  heads: 4\n", NULL, ":1:1: data.train is missing");
    expect_error("data:\n  root: x\n", NULL, ":1:1: data.train is missing");
    expect_error("data:\n  train: {src: a}\n", NULL, ":2:10: data.train.tgt is missing");
    expect_error("data:\n  train: {src: a, tgt: b}\n  valid: {tgt: c}\n", NULL, ":3:3: data.valid.src is missing");
    expect_error("- a\n- b\n", NULL, ":1:1: expected a mapping of sections");
    expect_error("data: {train: {src: a, tgt: b}}\n---\nmodel: {}\n", NULL, "a config holds one YAML document");
    /* Malformed YAML: libyaml's own message and position. */
    expect_error("model:\n  heads: 4\n d_model: 8\n", NULL, ":3:2: did not find expected key while parsing a block mapping");
    expect_error("train:\n  optimizer: {lr: 1e999}\n", NULL, ":2:19: train.optimizer.lr: 1e999 is too large for a number (it overflows to infinity); expected a number > 0");
    expect_error("train:\n  max_minutes: -1e400\n", NULL, ":2:16: train.max_minutes: -1e400 is too large for a number");
    /* An invalid byte is placed where it is, not at 1:1. */
    expect_error("data:\n  train: {src: a, tgt: b}\n\n\n\n\n\n\n\n\n\n\n\n\n# caf\xc3\xa9 \xff here\n", NULL,
                 ":15:8: invalid leading UTF-8 octet (byte 0xff)");
    expect_error("model:\n  heads: 4\x01\n", NULL, ":2:11: control characters are not allowed (byte 0x01)");
    expect_error("model: {heads: 4\n", NULL, ":2:1: did not find expected ',' or '}' while parsing a flow mapping");
}
END_TEST

START_TEST(overrides_apply_and_fail_by_name) {
    leave_cwd();
    const char *path = write_config("o.yaml", minimal);
    const char *overrides[] = {"train.optimizer.lr=5e-4", "train.optimizer.betas=[0.9,0.999]", "data.root=/x",
                               "model.heads=8", "data.valid={src: v.en, tgt: v.de}", "output=out", NULL};
    nmt_config c;
    ck_assert_int_eq(nmt_config_load(&c, path, overrides), 0);
    ck_assert_double_eq(c.lr, 5e-4);
    ck_assert_double_eq(c.beta2, 0.999);
    ck_assert_int_eq(c.model.heads, 8);
    ck_assert_str_eq(c.data_root, "/x");
    ck_assert_str_eq(c.train[0].src, "/x/train.en");
    ck_assert_str_eq(c.valid.tgt, "/x/v.de");
    char want[256];
    snprintf(want, sizeof want, "%s/out", dir);
    ck_assert_str_eq(c.output, want);
    nmt_config_free(&c);

    /* The later of two overrides wins; an empty value unsets an optional path. */
    const char *twice[] = {"model.heads=2", "model.heads=1", "vocab.model=a.model", "vocab.model=", NULL};
    ck_assert_int_eq(nmt_config_load(&c, path, twice), 0);
    ck_assert_int_eq(c.model.heads, 1);
    ck_assert_ptr_null(c.vocab_model);
    nmt_config_free(&c);

    const char *bad_type[] = {"model.heads=four", NULL};
    expect_error(minimal, bad_type, "--set model.heads=four: model.heads: expected an integer from 1 to 4096, got 'four'");
    const char *unknown[] = {"train.optimizer.learning_rate=1", NULL};
    expect_error(minimal, unknown, "--set train.optimizer.learning_rate=1: unknown key 'train.optimizer.learning_rate' (valid keys in train.optimizer: lr, betas, eps, warmup, schedule, decay_steps, min_lr, clip_norm, weight_decay)");
    const char *no_end[] = {"train.optimizer.schedule=linear", NULL};
    expect_error(minimal, no_end, "--set train.optimizer.schedule=linear: train.optimizer.schedule linear needs "
                                  "train.optimizer.decay_steps after the warm-up (800), got 0");
    const char *early_end[] = {"train.optimizer.schedule=cosine", "train.optimizer.decay_steps=800", NULL};
    expect_error(minimal, early_end, "--set train.optimizer.decay_steps=800: train.optimizer.schedule cosine needs");
    const char *high_floor[] = {"train.optimizer.schedule=cosine", "train.optimizer.decay_steps=900",
                                "train.optimizer.min_lr=0.01", NULL};
    expect_error(minimal, high_floor, "--set train.optimizer.min_lr=0.01: train.optimizer.min_lr 0.01 is above the peak "
                                      "train.optimizer.lr 0.001");
    const char *whole_decay[] = {"train.optimizer.lr=2", "train.optimizer.weight_decay=0.5", NULL};
    expect_error(minimal, whole_decay, "--set train.optimizer.weight_decay=0.5: train.optimizer.weight_decay 0.5 times "
                                       "the peak train.optimizer.lr 2 is 1: each step would scale the weights by 1 - 1");
    const char *bad_shape[] = {"train.optimizer.schedule=step", NULL};
    expect_error(minimal, bad_shape, "--set train.optimizer.schedule=step: train.optimizer.schedule:");
    const char *top[] = {"zzzzzzzz.a=1", NULL};
    expect_error(minimal, top, "unknown key 'zzzzzzzz.a' (valid keys: model, vocab, data, train, output)");
    const char *no_equals[] = {"model.heads", NULL};
    expect_error(minimal, no_equals, "--set model.heads: expected section.key=value");
    const char *malformed[] = {"train.optimizer.betas=[0.9,", NULL};
    expect_error(minimal, malformed, "--set train.optimizer.betas=[0.9,: malformed value:");
    const char *indivisible[] = {"model.d_model=256", "model.heads=3", NULL};
    expect_error(minimal, indivisible, "--set model.heads=3: model.d_model 256 is not divisible by model.heads 3");
    const char *empty_output[] = {"output=''", NULL};
    expect_error(minimal, empty_output, "--set output='': output: an empty path; name it (or leave the key out for its default)");
    const char *no_key[] = {"=1", NULL};
    expect_error(minimal, no_key, "--set =1: expected section.key=value");
    const char *infinite[] = {"train.optimizer.lr=1e999", NULL};
    expect_error(minimal, infinite, "--set train.optimizer.lr=1e999: train.optimizer.lr: 1e999 is too large for a number (it overflows to infinity)");
    const char *range[] = {"train.optimizer.betas=[0.9,-0.98]", NULL};
    expect_error(minimal, range, "--set train.optimizer.betas=[0.9,-0.98]: train.optimizer.betas: expected a number in [0, 1), got -0.98");
}
END_TEST

static void assert_same_path(const char *a, const char *b) {
    if (!a || !b) ck_assert_ptr_eq(a, b);
    else ck_assert_str_eq(a, b);
}

START_TEST(save_then_load_gives_the_same_config) {
    leave_cwd();
    nmt_config a, b;
    ck_assert_int_eq(nmt_config_load(&a, write_config("big.yaml", full_example), NULL), 0);
    /* Values whose shortest decimal form needs many digits must survive too. */
    a.lr = 1.0 / 3.0;
    a.model.dropout = 0.1f + 1e-7f;
    char *saved = nmt_path_join(dir, "sub dir: \"odd\"");
    ck_assert_int_eq(nmt_mkdirs(saved), 0);
    free(a.output);
    a.output = strdup(saved);
    char *saved_file = nmt_path_join(saved, "config.yaml");
    ck_assert_int_eq(nmt_config_save(&a, saved_file), 0);
    ck_assert_int_eq(nmt_config_load(&b, saved_file, NULL), 0);
    ck_assert_mem_eq(&a.model, &b.model, sizeof a.model);
    assert_same_path(a.vocab_model, b.vocab_model);
    ck_assert_int_eq(a.vocab_size, b.vocab_size);
    ck_assert_str_eq(a.vocab_type, b.vocab_type);
    assert_same_path(a.data_root, b.data_root);
    assert_same_path(a.train[0].src, b.train[0].src);
    assert_same_path(a.train[0].tgt, b.train[0].tgt);
    assert_same_path(a.valid.src, b.valid.src);
    assert_same_path(a.valid.tgt, b.valid.tgt);
    ck_assert_int_eq(a.max_length, b.max_length);
    ck_assert_str_eq(a.src_lang, "eng");
    ck_assert_str_eq(b.src_lang, "eng");
    ck_assert_str_eq(b.tgt_lang, "zh-Hans");
    ck_assert_int_eq(a.batch_tokens, b.batch_tokens);
    ck_assert_int_eq(a.update_freq, b.update_freq);
    ck_assert(a.lr == b.lr);
    ck_assert(a.beta1 == b.beta1 && a.beta2 == b.beta2);
    ck_assert(a.adam_eps == b.adam_eps);
    ck_assert_int_eq(a.warmup, b.warmup);
    ck_assert_int_eq(a.lr_schedule, b.lr_schedule);
    ck_assert_int_eq(a.decay_steps, b.decay_steps);
    ck_assert_double_eq(a.min_lr, b.min_lr);
    ck_assert(a.clip_norm == b.clip_norm);
    ck_assert(a.weight_decay == b.weight_decay);
    ck_assert(a.label_smoothing == b.label_smoothing);
    ck_assert(a.dropout_src == b.dropout_src && a.dropout_trg == b.dropout_trg && a.rdrop_alpha == b.rdrop_alpha);
    ck_assert_int_eq(a.max_steps, b.max_steps);
    ck_assert_int_eq(a.max_epochs, b.max_epochs);
    ck_assert(a.max_minutes == b.max_minutes);
    ck_assert_int_eq(a.valid_every, b.valid_every);
    ck_assert_int_eq(a.valid_beam, b.valid_beam);
    ck_assert(a.valid_length_penalty == b.valid_length_penalty);
    ck_assert_int_eq(a.save_every, b.save_every);
    ck_assert_int_eq(a.keep_last, b.keep_last);
    ck_assert_int_eq(a.patience, b.patience);
    ck_assert_uint_eq(a.seed, b.seed);
    assert_same_path(a.output, b.output);

    /* The saved text has the file's shape: sections, nested mappings, a list for betas. */
    char *text;
    size_t size;
    ck_assert_int_eq(nmt_read_file(saved_file, &text, &size), 0);
    ck_assert_ptr_nonnull(strstr(text, "\nmodel:\n  d_model: 512\n"));
    ck_assert_ptr_nonnull(strstr(text, "\n  train: {src: \""));
    ck_assert_ptr_nonnull(strstr(text, "\ntrain:\n  batch_tokens: 2048\n  update_freq: 4\n  batch_pieces: 1\n  optimizer:\n    lr: 0.3333333333333333\n    betas: [0.85, 0.995]\n"));
    ck_assert_ptr_nonnull(strstr(text, "\n  label_smoothing: 0.2\n"));
    free(text);
    /* One key's value as the file writes it (what a resume's warnings show). */
    const struct { const char *key, *want; } values[] = {
        {"train.optimizer.lr", "0.3333333333333333"}, {"train.optimizer.betas", "[0.85, 0.995]"},
        {"train.optimizer.schedule", "cosine"},       {"train.optimizer.min_lr", "1e-05"},
        {"train.batch_tokens", "2048"},               {"model.norm_position", "pre"},
        {"vocab.type", "bpe"},                        {"train.seed", "18446744073709551615"},
    };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        text = nmt_config_value_text(&a, values[i].key);
        ck_assert_ptr_nonnull(text);
        ck_assert_str_eq(text, values[i].want);
        free(text);
    }
    text = nmt_config_value_text(&a, "output");
    ck_assert_ptr_nonnull(strstr(text, "sub dir: \\\"odd\\\"\""));
    free(text);
    free(a.init_from);
    a.init_from = NULL;
    text = nmt_config_value_text(&a, "train.init_from");
    ck_assert_str_eq(text, "(none)");
    free(text);
    ck_assert_ptr_null(nmt_config_value_text(&a, "train.optimizer"));
    ck_assert_ptr_nonnull(strstr(nmt_error(), "'train.optimizer' is not a config key"));
    ck_assert_ptr_null(nmt_config_value_text(&a, "train.nope"));
    free(saved_file);
    free(saved);
    nmt_config_free(&a);
    nmt_config_free(&b);
}
END_TEST

/* data.train as a list of weighted corpora: read, resolved, checked, saved and read back, replaced by --set. */
START_TEST(weighted_corpora) {
    leave_cwd();
    static const char listed[] = "data:\n  root: d\n  train:\n    - {src: a.en, tgt: a.de}\n"
                                 "    - {src: b.en, tgt: b.de, weight: 3}\n";
    nmt_config a, b;
    ck_assert_int_eq(nmt_config_load(&a, write_config("list.yaml", listed), NULL), 0);
    ck_assert_int_eq(a.num_train, 2);
    char want[256];
    snprintf(want, sizeof want, "%s/d/b.de", dir);
    ck_assert_str_eq(a.train[1].tgt, want);
    ck_assert_int_eq(a.train[0].weight, 1);
    ck_assert_int_eq(a.train[1].weight, 3);
    ck_assert_str_eq(a.src_lang, "en"); /* from the first corpus's suffixes */
    char *text = nmt_config_value_text(&a, "data.train");
    snprintf(want, sizeof want, "[{src: \"%s/d/a.en\", tgt: \"%s/d/a.de\", weight: 1}, {src: \"%s/d/b.en\"", dir, dir, dir);
    ck_assert_msg(strncmp(text, want, strlen(want)) == 0, "%s", text);
    free(text);
    const char *saved = write_config("saved.yaml", "");
    ck_assert_int_eq(nmt_config_save(&a, saved), 0);
    ck_assert_int_eq(nmt_config_load(&b, saved, NULL), 0);
    ck_assert_int_eq(b.num_train, 2);
    for (int i = 0; i < 2; i++) {
        ck_assert_str_eq(a.train[i].src, b.train[i].src);
        ck_assert_str_eq(a.train[i].tgt, b.train[i].tgt);
        ck_assert_int_eq(a.train[i].weight, b.train[i].weight);
    }
    nmt_config_free(&b);
    /* An override replaces the whole list. */
    const char *one[] = {"data.train={src: c.en, tgt: c.de, weight: 2}", NULL};
    ck_assert_int_eq(nmt_config_load(&b, write_config("list.yaml", listed), one), 0);
    ck_assert_int_eq(b.num_train, 1);
    ck_assert_int_eq(b.train[0].weight, 2);
    nmt_config_free(&b);
    nmt_config_free(&a);
    expect_error("data:\n  train:\n    - {src: a, tgt: b}\n    - {src: c, tgt: d, weight: 0}\n", NULL,
                 ":4:32: data.train item 2.weight: expected an integer from 1 to 1000, got 0");
    expect_error("data:\n  train:\n    - {src: a, tgt: b, wieght: 2}\n", NULL,
                 ":3:24: data.train item 1: unknown key 'wieght' (valid keys: src, tgt, weight)");
    expect_error("data:\n  train:\n    - {src: a, tgt: b}\n    - {src: c}\n", NULL, ":4:7: data.train item 2.tgt is missing");
    expect_error("data:\n  train: [a.en, a.de]\n", NULL, ":2:11: data.train item 1: expected a corpus, {src: FILE, tgt: FILE}");
    expect_error("data:\n  train: []\n", NULL, ":2:10: data.train: expected a list of 1 to 16 corpora, got 0");
    expect_error("data:\n  train: {src: a, tgt: b, src: c}\n", NULL, ":2:27: data.train: duplicate key 'src'");
    expect_error("data:\n  train: {src: a, tgt: ''}\n", NULL, ":2:24: data.train.tgt: an empty path");
    const char *bad[] = {"data.train=[{src: a, tgt: b, weight: 1001}]", NULL};
    expect_error(minimal, bad, "--set data.train=[{src: a, tgt: b, weight: 1001}]: data.train item 1.weight: expected an "
                               "integer from 1 to 1000, got 1001");
    const char *old[] = {"data.train.src=x", NULL};
    expect_error(minimal, old, "--set data.train.src=x: unknown key 'data.train.src': data.train is set whole");
}
END_TEST

/* Every single-byte change of the full example either loads or fails with a message naming the
 * file; none may crash (ASan watches). */
START_TEST(mutations_never_crash) {
    size_t size = sizeof full_example - 1;
    char *text = malloc(size);
    const char values[] = {'\0', ':', '[', '"', '\n', '*'};
    int loaded = 0, refused = 0;
    for (size_t at = 0; at < size; at++) {
        for (size_t v = 0; v < sizeof values; v++) {
            memcpy(text, full_example, size);
            text[at] = values[v];
            nmt_config c;
            if (nmt_config_parse(&c, text, size, "/m/fuzz.yaml", NULL) == 0) {
                loaded++;
                nmt_config_free(&c);
            } else {
                ck_assert_msg(strncmp(nmt_error(), "/m/fuzz.yaml:", 13) == 0, "%s", nmt_error());
                refused++;
            }
        }
    }
    ck_assert_int_gt(loaded, 0);
    ck_assert_int_gt(refused, (int)size);
    free(text);
}
END_TEST

static int load_and_free(void *path) {
    const char *overrides[] = {"data.root=r", NULL};
    nmt_config c;
    if (nmt_config_load(&c, path, overrides) < 0) return -1;
    nmt_config_free(&c);
    return 0;
}

START_TEST(every_allocation_failure_is_reported) {
    leave_cwd();
    ck_assert_int_gt(nmt_test_alloc_sweep(load_and_free, (void *)write_config("big.yaml", full_example)), 10);
}
END_TEST

/* data.src_lang and data.tgt_lang: checked as language codes, taken from the training files' suffixes
 * only when those are ISO 639-1 codes, written into the resolved config only when known. */
START_TEST(languages_given_or_from_suffixes) {
    leave_cwd();
    nmt_config c;
    ck_assert_int_eq(nmt_config_load(&c, write_config("l.yaml", minimal), NULL), 0);
    ck_assert_str_eq(c.src_lang, "en");
    ck_assert_str_eq(c.tgt_lang, "de");
    char *text = nmt_config_format(&c);
    ck_assert_ptr_nonnull(strstr(text, "  src_lang: en\n  tgt_lang: de\n"));
    free(text);
    nmt_config_free(&c);
    ck_assert_int_eq(nmt_config_load(&c, write_config("l.yaml", "data:\n  train: {src: a.src, tgt: a.tgt}\n"), NULL), 0);
    ck_assert_str_eq(c.src_lang, "");
    ck_assert_str_eq(c.tgt_lang, "");
    text = nmt_config_format(&c);
    ck_assert_ptr_null(strstr(text, "_lang"));
    free(text);
    char *value = nmt_config_value_text(&c, "data.src_lang");
    ck_assert_str_eq(value, "(none)");
    free(value);
    nmt_config_free(&c);
    const char *const set[] = {"data.src_lang=ar", "data.tgt_lang=en", NULL};
    ck_assert_int_eq(nmt_config_load(&c, write_config("l.yaml", "data:\n  train: {src: a.src, tgt: a.tgt}\n  "
                                                                "src_lang: hi\n"), set), 0);
    ck_assert_str_eq(c.src_lang, "ar");
    ck_assert_str_eq(c.tgt_lang, "en");
    nmt_config_free(&c);
    expect_error("data:\n  train: {src: a, tgt: b}\n  src_lang: english\n", NULL,
                 ":3:13: data.src_lang: 'english' is not a language code");
    expect_error("data:\n  train: {src: a, tgt: b}\n  tgt_lang: [en]\n", NULL,
                 ":3:13: data.tgt_lang: expected a language code such as en, got a list");
    const char *const bad[] = {"data.src_lang=EN", NULL};
    expect_error(minimal, bad, "data.src_lang: 'EN' is not a language code");
}
END_TEST

int main(void) {
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, defaults_and_resolved_paths);
    tcase_add_test(tc, full_example_parses);
    tcase_add_test(tc, errors_name_line_and_column);
    tcase_add_test(tc, overrides_apply_and_fail_by_name);
    tcase_add_test(tc, languages_given_or_from_suffixes);
    tcase_add_test(tc, save_then_load_gives_the_same_config);
    tcase_add_test(tc, weighted_corpora);
    tcase_add_test(tc, mutations_never_crash);
    tcase_add_test(tc, every_allocation_failure_is_reported);
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
