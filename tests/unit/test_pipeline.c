/* Tests of pipeline: another toolkit's model (a CTranslate2 directory) is given back as its translator
 * packs it, translates as before, and forced scoring reads it again: the scores of the model read
 * whole, in fp32 and int8 (the same rounding); a directory rewritten with another model after the
 * pipeline opened it is refused by forced scoring, not scored with the other model; a scorer read
 * before the rewrite keeps scoring the model the pipeline translates with. */
#include "infer/forced.h"
#include "infer/pipeline.h"
#include "infer/translator.h"
#include "compute/packed.h"
#include "model/ct2_write.h"
#include "model/model_dir.h"
#include "base/io.h"
#include "testing.h"
#include "tiny_model.h"

#include <check.h>
#include <string.h>

enum { V = 12, D = 16, PAIRS = 3 };

static const char *const pieces[V] = {"<pad>", "<unk>", "<s>", "</s>", "a", "b", "c", "d", "e", "f", "g", "h"};

/* A CTranslate2 directory DIR/ct2 of a random model (seed), its path returned. */
static char *write_ct2(uint64_t seed) {
    nmt_model_config c = nmt_test_tiny_config(V, D, 32, 2, 2);
    c.max_positions = 32;
    c.output_bias = 1;
    nmt_model m;
    /* Biases and norms away from their zeros and ones: a model of another seed differs in them. */
    ck_assert_int_eq(nmt_test_tiny_perturbed(&m, &c, seed), 0);
    nmt_spm *spm = NULL;
    ck_assert_int_eq(nmt_spm_tokens(&spm, (const char **)pieces, (const char **)pieces, V, NULL), 0);
    char *dir = nmt_path_join(nmt_test_tmpdir, "ct2");
    ck_assert_ptr_nonnull(dir);
    ck_assert_int_eq(nmt_mkdirs(dir), 0);
    ck_assert_msg(nmt_ct2_write(dir, &m, spm, NMT_CT2_QUANT_FLOAT32) == 0, "%s", nmt_error());
    nmt_spm_free(spm);
    nmt_model_free(&m);
    return dir;
}

typedef struct pairs {
    int32_t src[PAIRS][6], tgt[PAIRS][5];
    const int32_t *srcp[PAIRS], *tgtp[PAIRS];
    int src_len[PAIRS], tgt_len[PAIRS];
} pairs;

static void pairs_make(pairs *p) {
    for (int i = 0; i < PAIRS; i++) {
        p->src_len[i] = 3 + i;
        p->tgt_len[i] = 2 + i;
        for (int j = 0; j < p->src_len[i]; j++) p->src[i][j] = 4 + (i + 3 * j) % (V - 4);
        for (int j = 0; j < p->tgt_len[i]; j++) p->tgt[i][j] = 4 + (2 * i + j) % (V - 4);
        p->srcp[i] = p->src[i];
        p->tgtp[i] = p->tgt[i];
    }
}

static nmt_pipeline *open_pipeline(const char *dir, nmt_precision precision) {
    nmt_pipeline_options o = nmt_pipeline_options_default();
    o.precision_of_model = 0;
    o.decode.precision = precision;
    o.decode.beam_size = 2;
    nmt_pipeline *p;
    ck_assert_msg(nmt_pipeline_open(&p, dir, &o) == 0, "%s", nmt_error());
    return p;
}

/* The scores of the model read whole for a translator of this precision (never released), in the
 * pipeline's batches (OpenBLAS's sums depend on the batch). */
static void whole_scores(const char *dir, nmt_precision precision, const pairs *in, double *out) {
    const int batch = nmt_pipeline_options_default().decode.batch_size;
    nmt_model m;
    nmt_spm *spm;
    ck_assert_msg(nmt_model_dir_open_for(dir, precision, &m, &spm) == 0, "%s", nmt_error());
    ck_assert_int_eq(nmt_forced_score(&m, PAIRS, in->srcp, in->src_len, in->tgtp, in->tgt_len, batch, out), 0);
    nmt_model_free(&m);
    nmt_spm_free(spm);
}

static void check_precision(nmt_precision precision) {
    if (precision == NMT_PRECISION_INT8 && !nmt_packed_available(precision)) return;
    char *dir = write_ct2(3);
    pairs in;
    pairs_make(&in);
    double want[PAIRS], got[PAIRS];
    whole_scores(dir, precision, &in, want);
    /* Translations first (the translator holds the packed matrices only), then forced scores. */
    nmt_pipeline *p = open_pipeline(dir, precision);
    nmt_translation out[PAIRS];
    ck_assert_msg(nmt_pipeline_translate(p, 0, PAIRS, in.srcp, in.src_len, out) == 0, "%s", nmt_error());
    for (int i = 0; i < PAIRS; i++) nmt_translation_free(&out[i]);
    ck_assert_msg(nmt_pipeline_forced_logprob(p, PAIRS, in.srcp, in.src_len, in.tgtp, in.tgt_len, got) == 0, "%s",
                  nmt_error());
    for (int i = 0; i < PAIRS; i++) ck_assert_msg(got[i] == want[i], "pair %d: %.17g, not %.17g", i, got[i], want[i]);
    /* Another model in the same directory: a pipeline that read its scorer before keeps scoring its
     * own; one that had not is refused, where its translator gave its matrices back. */
    nmt_pipeline *fresh = open_pipeline(dir, precision);
    free(write_ct2(4));
    ck_assert_int_eq(nmt_pipeline_forced_logprob(p, PAIRS, in.srcp, in.src_len, in.tgtp, in.tgt_len, got), 0);
    for (int i = 0; i < PAIRS; i++) ck_assert(got[i] == want[i]);
    const int released = nmt_packed_self_contained(precision);
    ck_assert_int_eq(nmt_pipeline_forced_logprob(fresh, PAIRS, in.srcp, in.src_len, in.tgtp, in.tgt_len, got),
                     released ? -1 : 0);
    if (released) ck_assert_msg(strstr(nmt_error(), "changed since it was loaded"), "%s", nmt_error());
    nmt_pipeline_free(fresh);
    nmt_pipeline_free(p);
    free(dir);
}

START_TEST(an_imported_model_released_still_scores_as_read_whole_fp32) { check_precision(NMT_PRECISION_FP32); }
END_TEST

START_TEST(an_imported_model_released_still_scores_as_read_whole_int8) { check_precision(NMT_PRECISION_INT8); }
END_TEST

int main(void) {
    Suite *s = suite_create("pipeline");
    TCase *tc = tcase_create("imported");
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, an_imported_model_released_still_scores_as_read_whole_fp32);
    tcase_add_test(tc, an_imported_model_released_still_scores_as_read_whole_int8);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
