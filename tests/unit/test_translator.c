/* Tests of the translator on tiny Transformers with random weights (infer_models.h): sorting,
 * batching and the input order against decoding each sentence alone, greedy against beam 1, forced
 * scores against the decoder's own numbers, empty sources, learned positions, bf16 products, and
 * batches shared between threads (with allocation failures on either), sampled lines keyed by
 * their numbers, per-sentence guides (a prefix past the maximum length, a phrase), and int8 translators that keep no float32 matrices.
 */
#include "infer/translator.h"
#include "compute/gemm.h"
#include "compute/packed.h"
#include "compute/pool.h"
#include "model/model_file.h"
#include "model/placement.h"
#include "infer_models.h"

#include <sys/mman.h>
#include <unistd.h>

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* SENTENCES random sources with the pointers the decoding API takes. */
typedef struct sources {
    int32_t ids[SENTENCES][MAX_LEN];
    int len[SENTENCES];
    const int32_t *ptr[SENTENCES];
} sources;

static inline void sources_make(sources *s, uint64_t seed) { random_sources(s->ids, s->len, s->ptr, SENTENCES, seed); }

/* The translator (sorting, batching, input order) against decoding each sentence alone; greedy
 * against beam 1 without a length penalty; forced scoring against the decoder's own numbers. */
START_TEST(translator_keeps_order_and_scores_agree) {
    nmt_model m;
    make_model(&m, variants[_i], 64, 31 + (uint64_t)_i);
    sources in;
    sources_make(&in, 7);
    in.len[4] = 0; /* an empty line */
    nmt_decode_options o = options(0, 3, 3);
    o.batch_size = 4;
    nmt_translation out[SENTENCES];
    ck_assert_msg(nmt_decode_sentences(&m, &o, SENTENCES, in.ptr, in.len, out) == 0, "%s", nmt_error());
    for (int i = 0; i < SENTENCES; i++) {
        if (in.len[i] == 0) {
            ck_assert_int_eq(out[i].count, 1);
            ck_assert_int_eq(out[i].hyps[0].length, 0);
            ck_assert(out[i].hyps[0].logprob == 0 && out[i].hyps[0].attention == NULL);
            continue;
        }
        nmt_translation alone;
        decode_batch(&m, &o, 1, 0, NMT_KV_F32, in.ids, in.len, i, 1, &alone);
        assert_same(&out[i], &alone, 0);
        nmt_translation_free(&alone);
        assert_forced_scores(&m, in.ptr[i], in.len[i], &out[i], 1e-4, 0);
    }
    /* Greedy is beam 1 without a length penalty. */
    nmt_decode_options g = options(1, 1, 1), b1 = options(0, 1, 1);
    g.length_penalty = b1.length_penalty = 0;
    nmt_translation greedy[SENTENCES], beam1[SENTENCES];
    ck_assert_int_eq(nmt_decode_sentences(&m, &g, SENTENCES, in.ptr, in.len, greedy), 0);
    ck_assert_int_eq(nmt_decode_sentences(&m, &b1, SENTENCES, in.ptr, in.len, beam1), 0);
    for (int i = 0; i < SENTENCES; i++) {
        assert_same(&greedy[i], &beam1[i], 1);
        nmt_translation_free(&greedy[i]);
        nmt_translation_free(&beam1[i]);
        nmt_translation_free(&out[i]);
    }
    nmt_model_free(&m);
}
END_TEST

/* Per-sentence guides through batches: a prefix longer than the options' maximum length (the decoder
 * is sized for it) starts every hypothesis, a phrase is held by every hypothesis, and the unguided
 * sentences of the same batches translate as in a run without guides. */
START_TEST(guided_runs_size_for_guides) {
    nmt_model m;
    make_model(&m, variants[_i], 64, 41 + (uint64_t)_i);
    sources in;
    sources_make(&in, 9);
    nmt_decode_options o = options(0, 3, 3);
    o.batch_size = 4;
    o.max_length_ratio = 0; /* at most 10 pieces, fewer than the prefix */
    const int32_t prefix[14] = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18};
    const int32_t phrase_pieces[2] = {20, 21};
    const nmt_decode_phrase phrase = {phrase_pieces, 2};
    const nmt_decode_guide with_prefix = {.prefix = prefix, .prefix_length = 14};
    const nmt_decode_guide with_phrase = {.constraints = &phrase, .constraint_count = 1};
    const nmt_decode_guide *guides[SENTENCES] = {0};
    guides[1] = &with_prefix;
    guides[2] = &with_phrase;
    nmt_translator *t;
    ck_assert_msg(nmt_translator_create(&t, &m, &o) == 0, "%s", nmt_error());
    nmt_translation plain[SENTENCES], guided[SENTENCES];
    ck_assert_msg(nmt_translator_run_from(t, 0, SENTENCES, in.ptr, in.len, plain) == 0, "%s", nmt_error());
    ck_assert_msg(nmt_translator_run_guided(t, 0, SENTENCES, in.ptr, in.len, guides, guided) == 0, "%s", nmt_error());
    for (int i = 0; i < SENTENCES; i++) {
        if (!guides[i]) {
            assert_same(&guided[i], &plain[i], 0);
            continue;
        }
        for (int h = 0; h < guided[i].count; h++) {
            const nmt_hypothesis *y = &guided[i].hyps[h];
            if (guides[i] == &with_prefix) {
                ck_assert_int_ge(y->length, 14);
                ck_assert(memcmp(y->tokens, prefix, sizeof prefix) == 0);
            } else {
                int found = 0;
                for (int j = 0; j + 1 < y->length; j++) found |= y->tokens[j] == 20 && y->tokens[j + 1] == 21;
                ck_assert_msg(found, "sentence %d hypothesis %d lacks its phrase", i, h);
            }
        }
    }
    for (int i = 0; i < SENTENCES; i++) {
        nmt_translation_free(&plain[i]);
        nmt_translation_free(&guided[i]);
    }
    nmt_translator_free(t);
    nmt_model_free(&m);
}
END_TEST

/* Empty sources are answered without running the model: with the model's parameter pointers
 * cleared, touching the model would crash the test. */
START_TEST(empty_sources_do_not_run_the_model) {
    nmt_model m;
    make_model(&m, variants[0], 64, 51);
    nmt_decode_options o = options(0, 5, 2);
    nmt_translator *t;
    ck_assert_int_eq(nmt_translator_create(&t, &m, &o), 0);
    const nmt_params saved = m.p;
    memset(&m.p, 0, sizeof m.p);
    const int32_t dummy = 5, *src[2] = {&dummy, &dummy};
    int len[2] = {0, 0};
    nmt_translation out[2];
    ck_assert_int_eq(nmt_translator_run(t, 2, src, len, out), 0);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(out[i].count, 1);
        ck_assert_int_eq(out[i].hyps[0].length, 0);
        nmt_translation_free(&out[i]);
    }
    m.p = saved;
    nmt_translator_free(t);
    nmt_model_free(&m);
}
END_TEST

/* Learned positions: a source needing more positions than the table is refused; hypotheses stop
 * in time for the target table. */
START_TEST(learned_positions_bound_lengths) {
    nmt_model m;
    make_model(&m, variants[2], 6, 61);
    for (int j = 0; j < 16; j++) m.p.output[NMT_EOS * 16 + j] = 0; /* no early eos */
    int32_t src[1][MAX_LEN] = {{4, 5, 6, 7, 8, 9}};
    const int32_t *sp[1] = {src[0]};
    int len = 5;
    nmt_decode_options o = options(0, 2, 2);
    nmt_translation out;
    ck_assert_msg(nmt_decode_sentences(&m, &o, 1, sp, &len, &out) == 0, "%s", nmt_error());
    for (int j = 0; j < out.count; j++) ck_assert_int_le(out.hyps[j].length, 5);
    nmt_translation_free(&out);
    len = 6;
    ck_assert_int_eq(nmt_decode_sentences(&m, &o, 1, sp, &len, &out), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "learned positions"));
    nmt_model_free(&m);
}
END_TEST

/* A translator on bf16 products decodes every sentence, and each hypothesis's log-probability is
 * the full-precision model's (forced scoring) to bf16's accuracy. */
START_TEST(bf16_translator_scores_close) {
    if (!nmt_packed_available(NMT_PRECISION_BF16)) return; /* no AVX512_BF16 on this CPU */
    nmt_model m;
    make_model(&m, variants[_i], 64, 91 + (uint64_t)_i);
    sources in;
    sources_make(&in, 12);
    nmt_decode_options o = options(0, 3, 2);
    o.precision = NMT_PRECISION_BF16;
    nmt_translation out[SENTENCES];
    ck_assert_msg(nmt_decode_sentences(&m, &o, SENTENCES, in.ptr, in.len, out) == 0, "%s", nmt_error());
    for (int i = 0; i < SENTENCES; i++) {
        ck_assert_int_eq(out[i].count, 2);
        assert_forced_scores(&m, in.ptr[i], in.len[i], &out[i], 0, 0.05);
        nmt_translation_free(&out[i]);
    }
    nmt_model_free(&m);
}
END_TEST

/* Several batches on two threads (one batch per thread at a time, the longest first) give, bit for
 * bit, what one thread gives: each batch is decoded whole on the thread that took it, and two
 * threads cut the 9 sentences into batches of 3, 3 and 3 where one thread takes 4, 4 and 1. An
 * allocation failing on either thread fails the run with its message and leaks nothing (ASan checks
 * the last part). */
START_TEST(threads_share_batches_exactly) {
    nmt_model m;
    make_model(&m, variants[_i], 64, 71 + (uint64_t)_i);
    sources in;
    sources_make(&in, 10);
    nmt_decode_options o = options(0, 3, 2);
    o.batch_size = 4;
    nmt_translation one[SENTENCES], two[SENTENCES];
    ck_assert_msg(nmt_decode_sentences(&m, &o, SENTENCES, in.ptr, in.len, one) == 0, "%s", nmt_error());
    ck_assert_int_eq(nmt_pool_set_threads(2), 0);
    ck_assert_msg(nmt_decode_sentences(&m, &o, SENTENCES, in.ptr, in.len, two) == 0, "%s", nmt_error());
    for (int i = 0; i < SENTENCES; i++) {
        assert_same(&one[i], &two[i], 1);
        nmt_translation_free(&one[i]);
        nmt_translation_free(&two[i]);
    }
    int failures = 0;
    for (long k = 1;; k++) {
        nmt_alloc_fail_at(k);
        int rc = nmt_decode_sentences(&m, &o, SENTENCES, in.ptr, in.len, two);
        nmt_alloc_fail_at(0);
        if (rc == 0) {
            for (int i = 0; i < SENTENCES; i++) nmt_translation_free(&two[i]);
            break;
        }
        ck_assert_msg(strstr(nmt_error(), "injected fault") != NULL, "allocation %ld: %s", k, nmt_error());
        failures++;
    }
    ck_assert_int_gt(failures, 10);
    nmt_model_free(&m);
}
END_TEST

/* Sampled translations are keyed by line: a line numbered first + i in a run of all the lines is
 * what it is alone as line first + i (bit for bit where the products are row-invariant: nmt's own
 * kernels), on one thread or two, and other line numbers draw other translations. Their
 * log-probabilities are the model's (forced scoring). Several samples a line hold the single one. */
START_TEST(sampled_lines_are_keyed_by_number) {
    nmt_model m;
    make_model(&m, variants[_i], 64, 91 + (uint64_t)_i);
    sources in;
    sources_make(&in, 12);
    nmt_decode_options o = options(1, 1, 1);
    o.batch_size = 3;
    o.sampling.enabled = 1;
    o.sampling.temperature = 3; /* a random model's rows are flat already; flatter still */
    const int exact = nmt_packed_available(NMT_PRECISION_FP32);
    nmt_translation all[SENTENCES], shifted[SENTENCES];
    for (int threads = 1; threads <= 2; threads++) {
        ck_assert_int_eq(nmt_pool_set_threads(threads), 0);
        nmt_translator *t;
        ck_assert_msg(nmt_translator_create(&t, &m, &o) == 0, "%s", nmt_error());
        ck_assert_int_eq(nmt_translator_run_from(t, 100, SENTENCES, in.ptr, in.len, all), 0);
        ck_assert_int_eq(nmt_translator_run_from(t, 101, SENTENCES, in.ptr, in.len, shifted), 0);
        int differ = 0;
        for (int i = 0; i < SENTENCES; i++) {
            nmt_translation alone;
            ck_assert_int_eq(nmt_translator_run_from(t, 100 + (uint64_t)i, 1, &in.ptr[i], &in.len[i], &alone), 0);
            if (exact) assert_same(&all[i], &alone, 1);
            assert_forced_scores(&m, in.ptr[i], in.len[i], &all[i], 1e-4, 0);
            differ += all[i].hyps[0].length != shifted[i].hyps[0].length ||
                      memcmp(all[i].hyps[0].tokens, shifted[i].hyps[0].tokens, (size_t)all[i].hyps[0].length * 4) != 0;
            nmt_translation_free(&alone);
            nmt_translation_free(&all[i]);
            nmt_translation_free(&shifted[i]);
        }
        ck_assert_int_gt(differ, SENTENCES / 2);
        nmt_translator_free(t);
    }
    /* Four samples a line: sample 0 is the single sample, the list is in score order, and a line
     * alone draws the same four. */
    nmt_decode_options four = o;
    four.n_best = 4;
    nmt_translator *single, *t;
    ck_assert_int_eq(nmt_translator_create(&single, &m, &o), 0);
    ck_assert_int_eq(nmt_translator_create(&t, &m, &four), 0);
    ck_assert_int_eq(nmt_translator_run_from(single, 100, SENTENCES, in.ptr, in.len, all), 0);
    ck_assert_int_eq(nmt_translator_run_from(t, 100, SENTENCES, in.ptr, in.len, shifted), 0);
    for (int i = 0; i < SENTENCES; i++) {
        const nmt_translation *x = &shifted[i];
        ck_assert_int_eq(x->count, 4);
        int found = 0;
        for (int k = 0; k < 4; k++) {
            found += x->hyps[k].logprob == all[i].hyps[0].logprob && x->hyps[k].length == all[i].hyps[0].length;
            if (k) ck_assert(x->hyps[k - 1].score >= x->hyps[k].score);
        }
        if (exact) ck_assert_int_ge(found, 1);
        nmt_translation alone;
        ck_assert_int_eq(nmt_translator_run_from(t, 100 + (uint64_t)i, 1, &in.ptr[i], &in.len[i], &alone), 0);
        if (exact) assert_same(x, &alone, 1);
        nmt_translation_free(&alone);
        nmt_translation_free(&all[i]);
        nmt_translation_free(&shifted[i]);
    }
    nmt_translator_free(single);
    nmt_translator_free(t);
    ck_assert_int_eq(nmt_pool_set_threads(1), 0);
    nmt_model_free(&m);
}
END_TEST

/* The first count floats from p that are resident (mincore), or -1 where that cannot be asked. */
static long resident_pages(const float *p, size_t count) {
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = (uintptr_t)(p + count) & ~(page - 1);
    unsigned char in[4096];
    if (hi <= lo || (hi - lo) / page > sizeof in || mincore((void *)lo, hi - lo, in) != 0) return -1;
    long n = 0;
    for (size_t i = 0; i < (hi - lo) / page; i++) n += in[i] & 1;
    return n;
}

/* A translator whose packed matrices hold the weights whole (int8; fp32 on a packed kernel; bf16 but
 * for the output matrix, whose rows it reads in float32) needs none of the float32 matrices once it
 * has packed them: a deferred load never brings them into
 * memory (their pages are not resident, their params 0), a translator on a loaded model gives their
 * pages back (they read 0 afterwards, and the forward passes refuse the model), and all three
 * translate bit for bit alike, on 1, 2 or 3 threads. The same from an int8 file (`nmt convert`'s),
 * whose matrices are read into params one at a time while they are packed; a fallback translator
 * (fp32 on OpenBLAS) keeps those it reads. */
static void check_translator_without_float_matrices(int variant, nmt_precision precision, int int8_file) {
    nmt_model_config c = nmt_model_config_default();
    c.vocab_size = 300, c.d_model = 64, c.heads = 4, c.ffn = 512, c.encoder_layers = c.decoder_layers = 2;
    c.norm_position = variants[variant].norm, c.positions = variants[variant].positions;
    c.tie_embeddings = variants[variant].tie;
    c.max_positions = 64;
    nmt_model m, deferred;
    ck_assert_msg(nmt_model_init(&m, &c) == 0, "%s", nmt_error());
    nmt_model_init_weights(&m, 5 + (uint64_t)variant);
    nmt_test_tmpdir_make();
    char path[128];
    snprintf(path, sizeof path, "%s/model.safetensors", nmt_test_tmpdir);
    if (int8_file) {
        ck_assert_msg(nmt_model_save_int8(&m, path) == 0, "%s", nmt_error());
        ck_assert_int_eq(nmt_model_quantize_int8(&m), 0); /* what the file holds */
    } else {
        ck_assert_msg(nmt_model_save(&m, path) == 0, "%s", nmt_error());
    }
    ck_assert_msg(nmt_model_load_deferred(&deferred, path) == 0, "%s", nmt_error());
    const float *fc1 = deferred.p.decoder[1].ffn.fc1_weight;
    const size_t fc1_count = (size_t)c.ffn * (size_t)c.d_model;
    ck_assert(nmt_model_matrix_deferred(&deferred, fc1) && !nmt_model_matrix_deferred(&deferred, deferred.p.decoder[1].ffn.fc1_bias));
    ck_assert(fc1[7] == 0.0f && nmt_model_matrix(&deferred, fc1, fc1_count)[7] == m.p.decoder[1].ffn.fc1_weight[7]);
    nmt_model_matrix_done(&deferred, fc1, fc1_count);
    /* What was read at load stays: a reader done with it gives nothing back. */
    const float *embed = deferred.p.src_embed;
    const size_t embed_count = (size_t)c.vocab_size * (size_t)c.d_model;
    if (!nmt_model_matrix_deferred(&deferred, embed)) {
        nmt_model_matrix_done(&deferred, embed, embed_count);
        ck_assert(embed[embed_count / 2] == m.p.src_embed[embed_count / 2] && embed[embed_count / 2] != 0.0f);
    }
    if (precision == NMT_PRECISION_INT8) {
        ck_assert_int_eq(nmt_model_quantize_int8(&m), 0);
        ck_assert_int_eq(nmt_model_quantize_int8(&deferred), 0);
    }
    ck_assert_int_eq(resident_pages(fc1, fc1_count), 0);
    sources in;
    sources_make(&in, 17);
    nmt_decode_options o = options(0, 3, 2);
    o.precision = precision;
    o.batch_size = 2;
    nmt_translation want[SENTENCES], got[SENTENCES];
    ck_assert_msg(nmt_decode_sentences(&m, &o, SENTENCES, in.ptr, in.len, want) == 0, "%s", nmt_error());
    nmt_translator *t;
    size_t released;
    ck_assert_int_eq(nmt_translator_create_releasing(&t, &m, &o, &released), 0);
    ck_assert_uint_ge(released, fc1_count * sizeof(float) / 2);
    ck_assert_int_eq(resident_pages(m.p.decoder[1].ffn.fc1_weight, fc1_count), 0); /* before a read maps one */
    ck_assert(m.p.decoder[1].ffn.fc1_weight[fc1_count / 2] == 0.0f);
    for (int threads = 1; threads <= 3; threads++) {
        ck_assert_int_eq(nmt_pool_set_threads(threads), 0);
        ck_assert_msg(nmt_translator_run(t, SENTENCES, in.ptr, in.len, got) == 0, "%s", nmt_error());
        for (int i = 0; i < SENTENCES; i++) {
            assert_same(&want[i], &got[i], 1);
            nmt_translation_free(&got[i]);
        }
    }
    nmt_translator_free(t);
    ck_assert_msg(nmt_decode_sentences(&deferred, &o, SENTENCES, in.ptr, in.len, got) == 0, "%s", nmt_error());
    for (int i = 0; i < SENTENCES; i++) {
        assert_same(&want[i], &got[i], 1);
        nmt_translation_free(&got[i]);
        nmt_translation_free(&want[i]);
    }
    ck_assert_int_eq(resident_pages(fc1, fc1_count), 0);
    ck_assert_int_eq(resident_pages(deferred.p.output, (size_t)c.vocab_size * (size_t)c.d_model), 0);
    float logprob;
    const nmt_batch batch = {.batch = 1, .src_len = 1, .tgt_len = 1, .src = in.ids[0], .tgt_in = in.ids[0], .tgt_out = in.ids[0]};
    ck_assert_int_eq(nmt_model_token_logprobs(&m, &batch, &logprob), -1);
    ck_assert_int_eq(nmt_model_token_logprobs(&deferred, &batch, &logprob), -1);
    /* fp32 products on OpenBLAS read the float32 matrices: such a translator gives nothing back. One
     * on an int8 file translates as that file loaded whole (the matrices it read stay in params). */
    const nmt_gemm_kernel kernel = nmt_gemm_kernel_used();
    ck_assert_int_eq(nmt_gemm_set_kernel(NMT_GEMM_OPENBLAS), 0);
    o.precision = NMT_PRECISION_FP32;
    ck_assert_int_eq(nmt_translator_create_releasing(&t, &deferred, &o, &released), 0);
    ck_assert_uint_eq(released, 0);
    if (int8_file) {
        nmt_model whole;
        ck_assert_msg(nmt_model_load(&whole, path) == 0, "%s", nmt_error());
        ck_assert_msg(nmt_decode_sentences(&whole, &o, SENTENCES, in.ptr, in.len, want) == 0, "%s", nmt_error());
        ck_assert_msg(nmt_translator_run(t, SENTENCES, in.ptr, in.len, got) == 0, "%s", nmt_error());
        for (int i = 0; i < SENTENCES; i++) {
            assert_same(&want[i], &got[i], 1);
            nmt_translation_free(&got[i]);
            nmt_translation_free(&want[i]);
        }
        nmt_model_free(&whole);
    }
    nmt_translator_free(t);
    ck_assert_int_eq(nmt_gemm_set_kernel(kernel), 0);
    nmt_model_free(&m);
    nmt_model_free(&deferred);
    nmt_test_tmpdir_remove();
}

START_TEST(int8_translator_needs_no_float_matrices) {
    if (!nmt_packed_available(NMT_PRECISION_INT8)) return; /* neither AVX2 nor VNNI */
    check_translator_without_float_matrices(_i, NMT_PRECISION_INT8, 0);
}
END_TEST

START_TEST(int8_file_translator_needs_no_float_matrices) {
    if (!nmt_packed_available(NMT_PRECISION_INT8)) return;
    check_translator_without_float_matrices(_i, NMT_PRECISION_INT8, 1);
}
END_TEST

START_TEST(bf16_translator_needs_no_float_matrices) {
    if (!nmt_packed_available(NMT_PRECISION_BF16)) return; /* no AVX512_BF16 */
    check_translator_without_float_matrices(_i, NMT_PRECISION_BF16, 0);
}
END_TEST

START_TEST(fp32_translator_on_packed_kernel_needs_no_float_matrices) {
    if (!nmt_packed_self_contained(NMT_PRECISION_FP32)) return; /* products on OpenBLAS */
    check_translator_without_float_matrices(_i, NMT_PRECISION_FP32, 0);
}
END_TEST

int main(void) {
    Suite *s = suite_create("translator");
    TCase *tc = infer_models_tcase("translator");
    tcase_add_loop_test(tc, translator_keeps_order_and_scores_agree, 0, VARIANTS);
    tcase_add_loop_test(tc, threads_share_batches_exactly, 0, VARIANTS);
    tcase_add_loop_test(tc, guided_runs_size_for_guides, 0, VARIANTS);
    tcase_add_loop_test(tc, sampled_lines_are_keyed_by_number, 0, VARIANTS);
    tcase_add_loop_test(tc, bf16_translator_scores_close, 0, VARIANTS);
    tcase_add_loop_test(tc, int8_translator_needs_no_float_matrices, 0, VARIANTS);
    tcase_add_loop_test(tc, int8_file_translator_needs_no_float_matrices, 0, VARIANTS);
    tcase_add_loop_test(tc, bf16_translator_needs_no_float_matrices, 0, VARIANTS);
    tcase_add_loop_test(tc, fp32_translator_on_packed_kernel_needs_no_float_matrices, 0, VARIANTS);
    tcase_add_test(tc, empty_sources_do_not_run_the_model);
    tcase_add_test(tc, learned_positions_bound_lengths);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
