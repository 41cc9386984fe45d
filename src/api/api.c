/* api: the non-translation part of include/nmt/nmt.h -- the version, the status of the last failure,
 * corpus BLEU / chrF / TER with their sacreBLEU signatures, and training from a config file. Thin
 * calls into eval/ and train/.
 */
#include "nmt/nmt.h"

#include "base/util.h"
#include "eval/evaluate.h"
#include "nmt/version.h"
#include "train/config.h"
#include "train/train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *nmt_version(void) { return NMT_VERSION; }

nmt_status nmt_last_status(void) {
    switch (nmt_error_last_kind()) {
    case NMT_ERROR_NONE: return NMT_STATUS_OK;
    case NMT_ERROR_NO_MEMORY: return NMT_STATUS_NO_MEMORY;
    case NMT_ERROR_IO: return NMT_STATUS_IO;
    case NMT_ERROR_FAILED: break;
    }
    return NMT_STATUS_FAILED;
}

/* A stream of the caller's lines (a NULL line is an error naming `what` and the line). */
static int segments_of(nmt_segments *s, const char *name, const char *const *lines, int count, const char *what) {
    memset(s, 0, sizeof *s);
    s->name = name;
    for (int i = 0; i < count; i++) {
        if (!lines[i]) return nmt_error_set("%s of line %d is NULL", what, i + 1);
        if (nmt_segments_push(s, lines[i], strlen(lines[i])) < 0) return -1;
    }
    return 0;
}

/* The corpus score of one metric with its default options (eval/evaluate.h: the per-line statistics
 * summed in order, as sacreBLEU sums them). */
static int corpus_score(nmt_metric_kind kind, int count, const char *const *hyps, int nrefs, const char *const *refs,
                        nmt_score *out) {
    memset(out, 0, sizeof *out);
    if (count < 0 || nrefs < 1) return nmt_error_set("need count >= 0 and nrefs >= 1, got %d and %d", count, nrefs);
    nmt_metric_options options = nmt_metric_options_default();
    nmt_metric *metric = nmt_metric_create(kind, &options);
    nmt_segments hyp = {0}, *ref = nmt_calloc((size_t)nrefs, sizeof *ref);
    const nmt_segments **ref_ptrs = nmt_calloc((size_t)nrefs, sizeof *ref_ptrs);
    int rc = -1;
    if (!metric || !ref || !ref_ptrs || segments_of(&hyp, "hypotheses", hyps, count, "the hypothesis") < 0) goto done;
    for (int r = 0; r < nrefs; r++) {
        char what[48];
        snprintf(what, sizeof what, "reference %d", r + 1);
        if (segments_of(&ref[r], "references", refs + (size_t)r * (size_t)count, count, what) < 0) goto done;
        ref_ptrs[r] = &ref[r];
    }
    nmt_evaluate_scored scored;
    if (nmt_evaluate_system(metric, &hyp, ref_ptrs, nrefs, 0, &scored) < 0) goto done;
    out->score = scored.score;
    snprintf(out->name, sizeof out->name, "%s", nmt_metric_name(metric));
    nmt_signature_field fields[NMT_METRIC_MAX_FIELDS];
    const int n = nmt_metric_signature_fields(metric, fields);
    const nmt_signature_global global = {.nrefs = nrefs};
    nmt_signature_format(&global, fields, n, out->signature, sizeof out->signature);
    rc = 0;
done:
    free(hyp.lines);
    free(hyp.lens);
    for (int r = 0; ref && r < nrefs; r++) {
        free(ref[r].lines);
        free(ref[r].lens);
    }
    free(ref);
    free(ref_ptrs);
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
