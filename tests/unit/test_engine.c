/* Tests of the public translation API (include/nmt/nmt.h): the engine's texts, n-best lists, scores
 * and alignments are those of the library's translator (what `nmt translate` runs), a line's result
 * does not depend on the rest of its call (a sampled line's: on its number only), concurrent callers
 * get the same results, given translations are scored with the model it translates with, errors name
 * the line, and the corpus scores and their signatures are sacreBLEU's. */
#include "nmt/nmt.h"

#include "infer/forced.h"
#include "infer/translator.h"
#include "model/model_dir.h"
#include "compute/pool.h"
#include "compute/packed.h"
#include "tiny_model.h"
#include "nmt/version.h"
#include "testing.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

static const char *const lines[] = {"the cat sees a dog", "", "big red house and a small tree", "bird",
                                    "the dog likes the blue bird and the cat runs"};
enum { LINES = 5 };

/* The pieces of text[0..LINES) (free each ids[i]). */
static void encode_lines_of(const nmt_spm *spm, const char *const *text, int32_t **ids, int *len) {
    for (int i = 0; i < LINES; i++) {
        size_t cap = 0, n = 0;
        ids[i] = NULL;
        ck_assert_int_eq(nmt_spm_encode(spm, text[i], strlen(text[i]), &ids[i], &cap, &n), 0);
        len[i] = (int)n;
    }
}

static nmt_engine *open_engine(int n_best, int alignment) {
    nmt_engine_options o = nmt_engine_options_default();
    o.threads = 1;
    o.beam_size = 4;
    o.n_best = n_best;
    o.alignment = alignment;
    o.max_batch = 2;
    nmt_engine *e;
    ck_assert_msg(nmt_engine_open(&e, nmt_test_tmpdir, &o) == 0, "%s", nmt_last_error());
    return e;
}

START_TEST(test_matches_translator) {
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_engine *e = open_engine(3, 1);
    ck_assert_str_eq(nmt_engine_source_language(e), "en");
    ck_assert_str_eq(nmt_engine_target_language(e), "hi");
    ck_assert_int_eq(nmt_engine_get_options(e)->threads, 1);
    nmt_result *r;
    ck_assert_msg(nmt_engine_translate(e, LINES, lines, &r) == 0, "%s", nmt_last_error());
    ck_assert_int_eq(nmt_result_count(r), LINES);

    /* The same lines through the translator, as cmd_translate drives it. */
    nmt_model model;
    nmt_spm *spm;
    ck_assert_int_eq(nmt_model_dir_open(nmt_test_tmpdir, &model, &spm), 0);
    nmt_decode_options d = nmt_decode_options_default();
    d.beam_size = 4;
    d.n_best = 3;
    d.attention = 1;
    d.batch_size = 2;
    nmt_translator *t;
    ck_assert_int_eq(nmt_translator_create(&t, &model, &d), 0);
    int32_t *ids[LINES];
    int len[LINES];
    encode_lines_of(spm, lines, ids, len);
    nmt_translation out[LINES];
    ck_assert_int_eq(nmt_translator_run(t, LINES, (const int32_t *const *)ids, len, out), 0);
    int hypotheses = 0;
    for (int i = 0; i < LINES; i++) {
        ck_assert_int_eq(nmt_result_hypotheses(r, i), out[i].count);
        int src_count;
        const char *const *src = nmt_result_source_pieces(r, i, &src_count);
        ck_assert_int_eq(src_count, len[i]);
        for (int s = 0; s < src_count; s++) ck_assert_str_eq(src[s], nmt_spm_piece(spm, ids[i][s]));
        for (int k = 0; k < out[i].count; k++, hypotheses++) {
            const nmt_hypothesis *h = &out[i].hyps[k];
            char *text = nmt_spm_decode(spm, h->tokens, (size_t)h->length);
            ck_assert_str_eq(nmt_result_hypothesis(r, i, k), text);
            free(text);
            ck_assert(nmt_result_score(r, i, k) == h->score);
            ck_assert(nmt_result_logprob(r, i, k) == h->logprob);
            int tgt_count;
            const char *const *tgt = nmt_result_target_pieces(r, i, k, &tgt_count);
            ck_assert_int_eq(tgt_count, h->length);
            for (int j = 0; j < tgt_count; j++) ck_assert_str_eq(tgt[j], nmt_spm_piece(spm, h->tokens[j]));
            const int *pairs;
            const int n = nmt_result_alignment(r, i, k, &pairs);
            ck_assert_int_eq(n, h->length);
            if (h->length) {
                int src_of[512];
                ck_assert_int_lt(h->length, 512);
                nmt_hypothesis_alignment(h, src_of);
                for (int j = 0; j < n; j++) {
                    ck_assert_int_eq(pairs[2 * j], src_of[j]);
                    ck_assert_int_eq(pairs[2 * j + 1], j);
                }
                const float *a = nmt_result_attention(r, i, k);
                ck_assert_ptr_nonnull(a);
                ck_assert_mem_eq(a, h->attention, (size_t)(h->length + 1) * (size_t)(len[i] + 1) * sizeof(float));
            }
        }
    }
    ck_assert_int_gt(hypotheses, LINES + 4); /* the lists really are n-best lists */
    ck_assert_str_eq(nmt_result_text(r, 1), "");
    ck_assert_ptr_null(nmt_result_attention(r, 1, 0));
    /* Out of range: nothing, never a crash. */
    ck_assert_ptr_null(nmt_result_text(r, LINES));
    ck_assert_ptr_null(nmt_result_hypothesis(r, 0, 3));
    ck_assert_int_eq(nmt_result_hypotheses(r, -1), 0);
    for (int i = 0; i < LINES; i++) {
        nmt_translation_free(&out[i]);
        free(ids[i]);
    }
    nmt_translator_free(t);
    nmt_spm_free(spm);
    nmt_model_free(&model);
    nmt_result_free(r);
    nmt_engine_close(e);
}
END_TEST

/* A sampling engine draws what the translator draws for the same line numbers, a line alone as
 * among the others (bit for bit where the products are row-invariant), and with n_best N, N samples
 * a line, best score first, the single sample among them. */
START_TEST(test_sampling) {
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_engine_options o = nmt_engine_options_default();
    o.threads = 1;
    o.max_batch = 2;
    o.sampling = 1;
    o.temperature = 3;
    o.seed = 5;
    nmt_engine *e;
    o.n_best = 1001;
    ck_assert_int_eq(nmt_engine_open(&e, nmt_test_tmpdir, &o), -1);
    ck_assert_str_eq(nmt_last_error(), "sampling draws 1 to 1000 translations a line, not 1001");
    o.n_best = 3; /* three samples a line: the first line's, drawn again, hold its single sample */
    ck_assert_msg(nmt_engine_open(&e, nmt_test_tmpdir, &o) == 0, "%s", nmt_last_error());
    nmt_result *three;
    ck_assert_int_eq(nmt_engine_translate_from(e, 40, LINES, lines, &three), 0);
    nmt_engine_close(e);
    o.n_best = 1;
    ck_assert_msg(nmt_engine_open(&e, nmt_test_tmpdir, &o) == 0, "%s", nmt_last_error());
    ck_assert_int_eq(nmt_engine_get_options(e)->beam_size, 1);
    nmt_result *r, *again;
    ck_assert_int_eq(nmt_engine_translate_from(e, 40, LINES, lines, &r), 0);
    ck_assert_int_eq(nmt_engine_translate_from(e, 41, LINES, lines, &again), 0);

    nmt_model model;
    nmt_spm *spm;
    ck_assert_int_eq(nmt_model_dir_open(nmt_test_tmpdir, &model, &spm), 0);
    nmt_decode_options d = nmt_decode_options_default();
    d.greedy = 1;
    d.beam_size = 1;
    d.batch_size = 2;
    d.sampling = (nmt_sampling){.enabled = 1, .top_p = 1, .temperature = 3, .seed = 5};
    nmt_translator *t;
    ck_assert_int_eq(nmt_translator_create(&t, &model, &d), 0);
    int32_t *ids[LINES];
    int len[LINES];
    encode_lines_of(spm, lines, ids, len);
    nmt_translation out[LINES];
    ck_assert_int_eq(nmt_translator_run_from(t, 40, LINES, (const int32_t *const *)ids, len, out), 0);
    int differ = 0;
    for (int i = 0; i < LINES; i++) {
        char *text = nmt_spm_decode(spm, out[i].hyps[0].tokens, (size_t)out[i].hyps[0].length);
        ck_assert_str_eq(nmt_result_text(r, i), text);
        free(text);
        differ += strcmp(nmt_result_text(r, i), nmt_result_text(again, i)) != 0;
        ck_assert_int_eq(nmt_result_hypotheses(three, i), lines[i][0] ? 3 : 1);
        int found = 0;
        for (int k = 0; k < nmt_result_hypotheses(three, i); k++) {
            found += strcmp(nmt_result_hypothesis(three, i, k), nmt_result_text(r, i)) == 0;
            if (k) ck_assert(nmt_result_score(three, i, k - 1) >= nmt_result_score(three, i, k));
        }
        if (nmt_packed_available(NMT_PRECISION_FP32)) ck_assert_int_ge(found, 1); /* row-invariant products */
        if (nmt_packed_available(NMT_PRECISION_FP32)) {
            nmt_result *one;
            ck_assert_int_eq(nmt_engine_translate_from(e, 40 + (unsigned long long)i, 1, &lines[i], &one), 0);
            ck_assert_str_eq(nmt_result_text(one, 0), nmt_result_text(r, i));
            nmt_result_free(one);
        }
        nmt_translation_free(&out[i]);
        free(ids[i]);
    }
    ck_assert_int_ge(differ, 2); /* other line numbers, other draws (the empty line stays empty) */
    nmt_translator_free(t);
    nmt_spm_free(spm);
    nmt_model_free(&model);
    nmt_result_free(r);
    nmt_result_free(again);
    nmt_result_free(three);
    nmt_engine_close(e);
}
END_TEST

/* Each line alone gives what it gave among the others: the same texts, and bit for bit the same scores
 * where the products are row-invariant (nmt's AVX2 and AVX-512 kernels; OpenBLAS's results move in
 * the last bits with the number of rows). */
START_TEST(test_row_invariant) {
    const double tolerance = nmt_packed_available(NMT_PRECISION_FP32) ? 0 : 1e-5;
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_engine *e = open_engine(2, 0);
    nmt_result *all;
    ck_assert_int_eq(nmt_engine_translate(e, LINES, lines, &all), 0);
    for (int i = 0; i < LINES; i++) {
        nmt_result *one;
        ck_assert_int_eq(nmt_engine_translate(e, 1, &lines[i], &one), 0);
        ck_assert_int_eq(nmt_result_hypotheses(one, 0), nmt_result_hypotheses(all, i));
        for (int k = 0; k < nmt_result_hypotheses(one, 0); k++) {
            ck_assert_str_eq(nmt_result_hypothesis(one, 0, k), nmt_result_hypothesis(all, i, k));
            const double a = nmt_result_score(one, 0, k), b = nmt_result_score(all, i, k);
            ck_assert_msg(fabs(a - b) <= tolerance * fabs(b), "line %d hyp %d: %.17g vs %.17g", i, k, a, b);
        }
        const int *pairs;
        ck_assert_int_eq(nmt_result_alignment(one, 0, 0, &pairs), 0); /* alignment off */
        nmt_result_free(one);
    }
    nmt_result *none;
    ck_assert_int_eq(nmt_engine_translate(e, 0, lines, &none), 0);
    ck_assert_int_eq(nmt_result_count(none), 0);
    nmt_result_free(none);
    nmt_result_free(all);
    nmt_engine_close(e);
}
END_TEST

typedef struct caller {
    nmt_engine *e;
    const char *want[LINES];
    int ok;
} caller;

static void *call_repeatedly(void *arg) {
    caller *c = arg;
    c->ok = 1;
    for (int round = 0; round < 5; round++) {
        nmt_result *r;
        if (nmt_engine_translate(c->e, LINES, lines, &r) < 0) {
            c->ok = 0;
            return NULL;
        }
        for (int i = 0; i < LINES; i++)
            if (strcmp(nmt_result_text(r, i), c->want[i]) != 0) c->ok = 0;
        nmt_result_free(r);
    }
    return NULL;
}

/* Four threads sharing one engine (on two kernel threads) all get the single-caller results. */
START_TEST(test_concurrent_callers) {
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_engine_options o = nmt_engine_options_default();
    o.threads = 2;
    nmt_engine *e;
    ck_assert_int_eq(nmt_engine_open(&e, nmt_test_tmpdir, &o), 0);
    nmt_result *want;
    ck_assert_int_eq(nmt_engine_translate(e, LINES, lines, &want), 0);
    caller c[4];
    pthread_t thread[4];
    for (int t = 0; t < 4; t++) {
        c[t].e = e;
        for (int i = 0; i < LINES; i++) c[t].want[i] = nmt_result_text(want, i);
        ck_assert_int_eq(pthread_create(&thread[t], NULL, call_repeatedly, &c[t]), 0);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(thread[t], NULL);
        ck_assert(c[t].ok);
    }
    nmt_result_free(want);
    nmt_engine_close(e);
    nmt_pool_set_threads(1);
}
END_TEST

typedef struct closing_caller {
    nmt_engine *e;
    atomic_int started;
    int rc, count;
    char error[128];
} closing_caller;

enum { CLOSING_LINES = 8 * LINES };

static void *translate_once(void *arg) {
    closing_caller *c = arg;
    const char *many[CLOSING_LINES];
    for (int i = 0; i < CLOSING_LINES; i++) many[i] = lines[i % LINES];
    nmt_result *r;
    atomic_store(&c->started, 1);
    c->rc = nmt_engine_translate(c->e, CLOSING_LINES, many, &r);
    snprintf(c->error, sizeof c->error, "%s", c->rc < 0 ? nmt_last_error() : "");
    if (c->rc == 0) {
        c->count = nmt_result_count(r);
        nmt_result_free(r);
    }
    return NULL;
}

/* Closing an engine while another thread translates with it (Python's Translator.close() from
 * another thread): the close waits for the call in flight, which completes, or refuses it when the
 * close came first; never frees what the call uses (ASan proves it). The gate's own test proves the
 * order deterministically. */
START_TEST(test_close_while_translating) {
    nmt_test_model_dir(nmt_test_tmpdir);
    for (int round = 0; round < 3; round++) {
        closing_caller c = {.e = open_engine(1, 1)};
        pthread_t thread;
        ck_assert_int_eq(pthread_create(&thread, NULL, translate_once, &c), 0);
        while (!atomic_load(&c.started)) sched_yield();
        nmt_engine_close(c.e);
        pthread_join(thread, NULL);
        if (c.rc == 0) ck_assert_int_eq(c.count, CLOSING_LINES);
        else ck_assert_str_eq(c.error, "the engine is being closed");
    }
}
END_TEST

/* A line of a megabyte is bounded like `nmt translate` bounds it: refused, naming the line, or with
 * crop translated and scored on its first max_input_length pieces; never tried whole. */
START_TEST(test_megabyte_line) {
    nmt_test_model_dir(nmt_test_tmpdir);
    enum { BYTES = 1000000 };
    char *big = malloc(BYTES + 1);
    ck_assert_ptr_nonnull(big);
    for (int i = 0; i < BYTES; i += 4) memcpy(big + i, "cat ", 4);
    big[BYTES - 1] = '\0';
    const char *pair[] = {"the cat", big};
    nmt_engine_options o = nmt_engine_options_default();
    ck_assert_int_eq(o.max_input_length, 1000);
    o.threads = 1;
    nmt_engine *e;
    ck_assert_int_eq(nmt_engine_open(&e, nmt_test_tmpdir, &o), 0);
    nmt_result *r;
    ck_assert_int_eq(nmt_engine_translate(e, 2, pair, &r), -1);
    ck_assert_msg(strncmp(nmt_last_error(), "line 2: ", 8) == 0 && strstr(nmt_last_error(), "more than the limit of 1000"),
                  "%s", nmt_last_error());
    double logprob[2];
    ck_assert_int_eq(nmt_engine_logprob(e, 2, pair, pair, logprob), -1);
    ck_assert_msg(strstr(nmt_last_error(), "more than the limit of 1000"), "%s", nmt_last_error());
    nmt_engine_close(e);
    o.crop = 1;
    o.max_input_length = 20;
    ck_assert_int_eq(nmt_engine_open(&e, nmt_test_tmpdir, &o), 0);
    ck_assert_msg(nmt_engine_translate(e, 2, pair, &r) == 0, "%s", nmt_last_error());
    int n;
    nmt_result_source_pieces(r, 1, &n);
    ck_assert_int_eq(n, 20);
    nmt_result_free(r);
    ck_assert_msg(nmt_engine_logprob(e, 2, pair, pair, logprob) == 0, "%s", nmt_last_error());
    ck_assert(logprob[1] < 0 && isfinite(logprob[1]));
    nmt_engine_close(e);
    free(big);
}
END_TEST

START_TEST(test_errors) {
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_engine *e;
    nmt_engine_options o = nmt_engine_options_default();
    o.threads = 1;
    ck_assert_int_eq(nmt_engine_open(&e, "/nonexistent-model-dir", &o), -1);
    ck_assert_ptr_null(e);
    ck_assert_ptr_nonnull(strstr(nmt_last_error(), "/nonexistent-model-dir"));
    o.precision = "fp16";
    ck_assert_int_eq(nmt_engine_open(&e, nmt_test_tmpdir, &o), -1);
    ck_assert_str_eq(nmt_last_error(), "precision: expected fp32, bf16, int8 or auto, got 'fp16'");
    o.precision = NULL;
    o.n_best = 9;
    ck_assert_int_eq(nmt_engine_open(&e, nmt_test_tmpdir, &o), -1);
    o.n_best = 1;
    o.max_input_length = 3;
    ck_assert_int_eq(nmt_engine_open(&e, nmt_test_tmpdir, &o), 0);
    const char *bad[] = {"the cat", "a \xff dog"};
    nmt_result *r;
    ck_assert_int_eq(nmt_engine_translate(e, 2, bad, &r), -1);
    ck_assert_ptr_null(r);
    ck_assert_str_eq(nmt_last_error(), "line:2: invalid UTF-8 at byte 3");
    ck_assert_int_eq(nmt_engine_translate(e, 1, &lines[4], &r), -1);
    ck_assert_ptr_nonnull(strstr(nmt_last_error(), "line 1: "));
    ck_assert_ptr_nonnull(strstr(nmt_last_error(), "more than the limit of 3"));
    nmt_engine_close(e);
    /* Cropped instead: the source is its first 3 pieces. */
    o.crop = 1;
    ck_assert_int_eq(nmt_engine_open(&e, nmt_test_tmpdir, &o), 0);
    ck_assert_int_eq(nmt_engine_translate(e, 1, &lines[4], &r), 0);
    int n;
    nmt_result_source_pieces(r, 0, &n);
    ck_assert_int_eq(n, 3);
    nmt_result_free(r);
    nmt_engine_close(e);
}
END_TEST

typedef struct sweep {
    nmt_engine *e;
} sweep;

static int translate_attempt(void *context) {
    sweep *s = context;
    nmt_result *r;
    if (nmt_engine_translate(s->e, LINES, lines, &r) < 0) return -1;
    nmt_result_free(r);
    return 0;
}

static int score_attempt(void *context) {
    sweep *s = context;
    double out[LINES];
    return nmt_engine_logprob(s->e, LINES, lines, lines, out);
}

/* Every allocation of a translation and of scoring is checked: a failure anywhere fails the call
 * cleanly (an int8 engine's first score also makes its whole model). */
START_TEST(test_allocation_failures) {
    nmt_test_model_dir(nmt_test_tmpdir);
    sweep s = {open_engine(2, 1)};
    ck_assert_int_gt(nmt_test_alloc_sweep(translate_attempt, &s), 10);
    ck_assert_int_gt(nmt_test_alloc_sweep(score_attempt, &s), 4);
    nmt_engine_close(s.e);
    if (!nmt_packed_available(NMT_PRECISION_INT8)) return;
    nmt_engine_options o = nmt_engine_options_default();
    o.threads = 1;
    o.precision = "int8";
    ck_assert_int_eq(nmt_engine_open(&s.e, nmt_test_tmpdir, &o), 0);
    ck_assert_int_gt(nmt_test_alloc_sweep(score_attempt, &s), 10);
    nmt_engine_close(s.e);
}
END_TEST

/* The model's log-probabilities of lines[i] -> targets[i], computed as `nmt score` does, for a model
 * rounded to int8 when int8 is set. */
static void reference_scores(const char *const *targets, int int8, double *out) {
    nmt_model model;
    nmt_spm *spm;
    ck_assert_int_eq(nmt_model_dir_open(nmt_test_tmpdir, &model, &spm), 0);
    if (int8) ck_assert_int_eq(nmt_model_quantize_int8(&model), 0);
    int32_t *src[LINES], *tgt[LINES];
    int src_len[LINES], tgt_len[LINES];
    encode_lines_of(spm, lines, src, src_len);
    encode_lines_of(spm, targets, tgt, tgt_len);
    ck_assert_int_eq(nmt_forced_score(&model, LINES, (const int32_t *const *)src, src_len, (const int32_t *const *)tgt,
                                      tgt_len, 2, out), 0);
    for (int i = 0; i < LINES; i++) {
        free(src[i]);
        free(tgt[i]);
    }
    nmt_spm_free(spm);
    nmt_model_free(&model);
}

/* Writes the test directory's model file again as nmt writes models (a new file renamed over): with
 * fresh weights of `seed` (0: its own), in int8 when int8 is set. */
static void rewrite_model_file(uint64_t seed, int int8) {
    nmt_model model;
    nmt_spm *spm;
    ck_assert_int_eq(nmt_model_dir_open(nmt_test_tmpdir, &model, &spm), 0);
    if (seed) nmt_model_init_weights(&model, seed);
    char *path = nmt_path_join(nmt_test_tmpdir, "model.safetensors");
    ck_assert_int_eq(int8 ? nmt_model_save_int8(&model, path) : nmt_model_save(&model, path), 0);
    free(path);
    nmt_spm_free(spm);
    nmt_model_free(&model);
}

/* An engine scores given translations with the model it translates with, in every precision the CPU
 * has: for int8 (and fp32 on nmt's own kernels) its translator keeps no float32 matrices, and the
 * first score reads them again from the model file the engine mapped, even after the directory's
 * file has been replaced by another model, and refuses to when that file was rewritten in place;
 * the same from an int8 file (`nmt convert`'s). */
START_TEST(test_scoring) {
    static const char *const precisions[] = {"fp32", "int8"};
    static const struct {
        int p, int8_file;
    } cases[] = {{0, 0}, {1, 0}, {1, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int p = cases[c].p;
        if (!nmt_packed_available(p ? NMT_PRECISION_INT8 : NMT_PRECISION_FP32)) continue;
        nmt_test_model_dir(nmt_test_tmpdir);
        if (cases[c].int8_file) rewrite_model_file(0, 1);
        nmt_engine_options o = nmt_engine_options_default();
        o.threads = 1;
        o.max_batch = 2;
        o.precision = precisions[p];
        nmt_engine *e;
        ck_assert_msg(nmt_engine_open(&e, nmt_test_tmpdir, &o) == 0, "%s", nmt_last_error());
        nmt_result *r;
        ck_assert_int_eq(nmt_engine_translate(e, LINES, lines, &r), 0);
        const char *targets[LINES];
        for (int i = 0; i < LINES; i++) targets[i] = nmt_result_text(r, i);
        double want[LINES], got[LINES], again[LINES], other[LINES];
        reference_scores(targets, p, want);

        rewrite_model_file(4, 0); /* another model under the same name */
        reference_scores(targets, p, other);

        ck_assert_msg(nmt_engine_logprob(e, LINES, lines, targets, got) == 0, "%s", nmt_last_error());
        ck_assert_int_eq(nmt_engine_logprob(e, LINES, lines, targets, again), 0);
        for (int i = 0; i < LINES; i++) {
            ck_assert_msg(got[i] == want[i] && again[i] == want[i], "%s line %d: %.17g, %.17g, want %.17g",
                          precisions[p], i, got[i], again[i], want[i]);
            ck_assert(other[i] != want[i]);
            ck_assert(got[i] < 0);
        }
        nmt_engine_close(e);

        /* A file rewritten in place (as cp writes it) cannot be read again: an engine that would read
         * it refuses to score, naming it; one that holds its model whole scores with it. */
        ck_assert_msg(nmt_engine_open(&e, nmt_test_tmpdir, &o) == 0, "%s", nmt_last_error());
        char *bytes;
        size_t size;
        char *path = nmt_path_join(nmt_test_tmpdir, "model.safetensors");
        ck_assert_int_eq(nmt_read_file(path, &bytes, &size), 0);
        bytes[size - 1] ^= 0x01;
        FILE *fp = fopen(path, "wb");
        ck_assert_ptr_nonnull(fp);
        ck_assert_uint_eq(fwrite(bytes, 1, size, fp), size);
        ck_assert_int_eq(fclose(fp), 0);
        if (nmt_packed_self_contained(p ? NMT_PRECISION_INT8 : NMT_PRECISION_FP32)) {
            ck_assert_int_eq(nmt_engine_logprob(e, LINES, lines, targets, got), -1);
            ck_assert_msg(strstr(nmt_last_error(), "model.safetensors: changed on disk since it was loaded"), "%s",
                          nmt_last_error());
        } else {
            ck_assert_int_eq(nmt_engine_logprob(e, LINES, lines, targets, got), 0);
            for (int i = 0; i < LINES; i++) ck_assert(got[i] == other[i]);
        }
        free(bytes);
        free(path);
        nmt_result_free(r);
        nmt_engine_close(e);
    }
}
END_TEST

/* An int8 directory (`nmt convert --precision int8`) runs int8 unless a precision is given; a
 * directory of float32 weights runs fp32. */
START_TEST(test_precision_of_model) {
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_engine_options o = nmt_engine_options_default();
    ck_assert_ptr_null(o.precision);
    o.threads = 1;
    nmt_engine *e;
    ck_assert_int_eq(nmt_engine_open(&e, nmt_test_tmpdir, &o), 0);
    ck_assert_str_eq(nmt_engine_get_options(e)->precision, "fp32");
    nmt_engine_close(e);
    if (!nmt_packed_available(NMT_PRECISION_INT8)) return;
    rewrite_model_file(0, 1);
    ck_assert_int_eq(nmt_engine_open(&e, nmt_test_tmpdir, &o), 0);
    ck_assert_str_eq(nmt_engine_get_options(e)->precision, "int8");
    nmt_engine_close(e);
    o.precision = "fp32";
    ck_assert_int_eq(nmt_engine_open(&e, nmt_test_tmpdir, &o), 0);
    ck_assert_str_eq(nmt_engine_get_options(e)->precision, "fp32");
    nmt_engine_close(e);
}
END_TEST

/* The decoding controls through the engine's options: their defaults (the library's), a bad value
 * refused, no piece twice with no_repeat_ngram_size 1, and each hypothesis's confidence. */
START_TEST(test_controls) {
    nmt_test_model_dir(nmt_test_tmpdir);
    nmt_engine_options o = nmt_engine_options_default();
    ck_assert(o.repetition_penalty == 1 && o.no_repeat_ngram_size == 0 && o.loop_guard == 4 && o.confidence == 0);
    o.threads = 1;
    o.beam_size = 3;
    o.n_best = 2;
    nmt_engine *e;
    o.repetition_penalty = 0;
    ck_assert_int_eq(nmt_engine_open(&e, nmt_test_tmpdir, &o), -1);
    ck_assert_ptr_nonnull(strstr(nmt_last_error(), "repetition penalty"));
    o.repetition_penalty = 1.5;
    o.no_repeat_ngram_size = 1;
    o.loop_guard = 0;
    o.confidence = 1;
    ck_assert_msg(nmt_engine_open(&e, nmt_test_tmpdir, &o) == 0, "%s", nmt_last_error());
    nmt_result *r;
    ck_assert_int_eq(nmt_engine_translate(e, LINES, lines, &r), 0);
    for (int i = 0; i < LINES; i++)
        for (int k = 0; k < nmt_result_hypotheses(r, i); k++) {
            int n;
            const char *const *pieces = nmt_result_target_pieces(r, i, k, &n);
            for (int a = 0; a < n; a++)
                for (int b = a + 1; b < n; b++) ck_assert_str_ne(pieces[a], pieces[b]);
            double mean, alternatives;
            ck_assert_int_eq(nmt_result_confidence(r, i, k, &mean, &alternatives), 0);
            if (n == 0) continue;
            int src_n; /* a hypothesis cut at the maximum length has no end of sentence */
            nmt_result_source_pieces(r, i, &src_n);
            const int cut = n == (int)floor(o.max_length_ratio * src_n) + 10;
            ck_assert_double_eq_tol(mean * (n + !cut), nmt_result_logprob(r, i, k), 1e-6);
            ck_assert(alternatives >= 1);
        }
    double mean, alternatives;
    ck_assert_int_eq(nmt_result_confidence(r, LINES, 0, &mean, &alternatives), -1);
    ck_assert_int_eq(nmt_result_confidence(r, 0, 5, &mean, &alternatives), -1);
    nmt_result_free(r);
    nmt_engine_close(e);
}
END_TEST

START_TEST(test_scores) {
    const char *hyps[] = {"The cat sat on the mat.", "A dog runs."};
    const char *refs[] = {"The cat sat on the mat.", "A dog runs.", "The cat is on the mat.", "The dog runs."};
    nmt_corpus_metric s;
    ck_assert_int_eq(nmt_corpus_bleu(2, hyps, 1, refs, &s), 0);
    ck_assert_double_eq_tol(s.value, 100, 1e-9);
    ck_assert_str_eq(s.name, "BLEU");
    ck_assert_msg(strncmp(s.signature, "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:", 53) == 0, "%s",
                  s.signature);
    ck_assert_int_eq(nmt_corpus_chrf(2, hyps, 2, refs, &s), 0);
    ck_assert_double_eq_tol(s.value, 100, 1e-9);
    ck_assert_str_eq(s.name, "chrF2");
    ck_assert_msg(strncmp(s.signature, "nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:", 54) == 0, "%s",
                  s.signature);
    ck_assert_int_eq(nmt_corpus_ter(2, hyps, 1, refs + 2, &s), 0);
    ck_assert_str_eq(s.name, "TER");
    /* 1 substitution ("sat" -> "is") + 1 ("a" -> "the", lowercased) over 6 + 3 words (the final "." stays
     * on its word). */
    ck_assert_double_eq_tol(s.value, 100.0 * 2 / 9, 1e-9);
    ck_assert_int_eq(nmt_corpus_bleu(2, hyps, 0, refs, &s), -1);
    ck_assert_ptr_nonnull(strstr(nmt_last_error(), "nrefs >= 1"));
    ck_assert_str_eq(nmt_version(), NMT_VERSION);
}
END_TEST

int main(void) {
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("engine");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, test_matches_translator);
    tcase_add_test(tc, test_row_invariant);
    tcase_add_test(tc, test_sampling);
    tcase_add_test(tc, test_controls);
    tcase_add_test(tc, test_concurrent_callers);
    tcase_add_test(tc, test_close_while_translating);
    tcase_add_test(tc, test_megabyte_line);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_allocation_failures);
    tcase_add_test(tc, test_scoring);
    tcase_add_test(tc, test_precision_of_model);
    tcase_add_test(tc, test_scores);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
