/* api: the non-translation part of include/nmt/nmt.h -- the version, corpus BLEU / chrF / TER with
 * their sacreBLEU signatures, and training from a config file. Thin calls into eval/ and train/.
 */
#include "nmt/nmt.h"

#include "base/util.h"
#include "eval/metric.h"
#include "eval/score.h"
#include "nmt/version.h"
#include "train/config.h"
#include "train/train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *nmt_version(void) { return NMT_VERSION; }

/* The corpus score of one metric with its default options: the per-line statistics summed in order,
 * as sacreBLEU sums them. */
static int corpus_score(nmt_metric_kind kind, int count, const char *const *hyps, int nrefs, const char *const *refs,
                        nmt_score *out) {
    memset(out, 0, sizeof *out);
    if (count < 0 || nrefs < 1) return nmt_error_set("need count >= 0 and nrefs >= 1, got %d and %d", count, nrefs);
    nmt_metric_options options;
    nmt_metric_options_init(&options);
    nmt_metric *metric = nmt_metric_new(kind, &options);
    if (!metric) return -1;
    const int k = nmt_metric_stat_count(metric);
    double *stats = nmt_calloc((size_t)k, sizeof *stats), *sum = nmt_calloc((size_t)k, sizeof *sum);
    const char **line_refs = nmt_malloc((size_t)nrefs * sizeof *line_refs);
    size_t *ref_lens = nmt_malloc((size_t)nrefs * sizeof *ref_lens);
    int rc = -1;
    if (!stats || !sum || !line_refs || !ref_lens) goto done;
    for (int i = 0; i < count; i++) {
        if (!hyps[i]) {
            nmt_error_set("hypothesis %d is NULL", i + 1);
            goto done;
        }
        for (int r = 0; r < nrefs; r++) {
            line_refs[r] = refs[(size_t)r * (size_t)count + (size_t)i];
            if (!line_refs[r]) {
                nmt_error_set("reference %d of line %d is NULL", r + 1, i + 1);
                goto done;
            }
            ref_lens[r] = strlen(line_refs[r]);
        }
        if (nmt_metric_segment(metric, hyps[i], strlen(hyps[i]), line_refs, ref_lens, nrefs, stats) < 0) goto done;
        for (int j = 0; j < k; j++) sum[j] += stats[j];
    }
    out->score = nmt_metric_compute(metric, sum, NMT_SCORE_PYTHON, NULL, 0);
    snprintf(out->name, sizeof out->name, "%s", nmt_metric_name(metric));
    nmt_score_field fields[NMT_METRIC_MAX_FIELDS];
    const int n = nmt_metric_signature_fields(metric, fields);
    const nmt_score_signature global = {.nrefs = nrefs};
    nmt_score_signature_format(&global, fields, n, out->signature, sizeof out->signature);
    rc = 0;
done:
    free(stats);
    free(sum);
    free(line_refs);
    free(ref_lens);
    nmt_metric_free(metric);
    return rc;
}

int nmt_corpus_bleu(int count, const char *const *hyps, int nrefs, const char *const *refs, nmt_score *out) {
    return corpus_score(NMT_METRIC_BLEU, count, hyps, nrefs, refs, out);
}

int nmt_corpus_chrf(int count, const char *const *hyps, int nrefs, const char *const *refs, nmt_score *out) {
    return corpus_score(NMT_METRIC_CHRF, count, hyps, nrefs, refs, out);
}

int nmt_corpus_ter(int count, const char *const *hyps, int nrefs, const char *const *refs, nmt_score *out) {
    return corpus_score(NMT_METRIC_TER, count, hyps, nrefs, refs, out);
}

int nmt_train_config(const char *config_path, const char *const *overrides, int threads, int quiet,
                     volatile sig_atomic_t *stop) {
    if (threads < 0) return nmt_error_set("threads must be >= 0, got %d", threads);
    nmt_config config;
    if (nmt_config_load(&config, config_path, overrides) < 0) return -1;
    const nmt_train_options options = {
        .threads = threads ? threads : 2,
        .progress = quiet ? NULL : stderr,
        .warnings = stderr,
        .stop = stop,
    };
    nmt_train_result result;
    const int rc = nmt_train(&config, &options, &result);
    nmt_config_free(&config);
    return rc;
}
