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

nmt_corpus_options nmt_corpus_options_default(void) {
    const nmt_metric_options m = nmt_metric_options_default();
    return (nmt_corpus_options){
        .tokenize = NULL,
        .lowercase = m.bleu.lowercase,
        .smooth_method = NULL,
        .smooth_value = m.bleu.smooth_value,
        .use_effective_order = m.bleu.effective_order,
        .char_order = m.chrf.char_order,
        .word_order = m.chrf.word_order,
        .beta = m.chrf.beta,
        .whitespace = m.chrf.whitespace,
        .eps_smoothing = m.chrf.eps_smoothing,
        .normalized = m.ter.normalized,
        .no_punct = m.ter.no_punct,
        .asian_support = m.ter.asian_support,
        .case_sensitive = m.ter.case_sensitive,
    };
}

/* The metrics' options of the public ones (the names parsed; the values checked by the metric). */
static int metric_options(const nmt_corpus_options *o, nmt_metric_options *m) {
    *m = nmt_metric_options_default();
    if (o->tokenize && nmt_tokenize_parse(o->tokenize, &m->bleu.tokenizer) < 0) return -1;
    if (o->smooth_method && nmt_bleu_smooth_parse(o->smooth_method, &m->bleu.smooth) < 0) return -1;
    m->bleu.lowercase = o->lowercase != 0;
    m->bleu.smooth_value = o->smooth_value;
    m->bleu.effective_order = o->use_effective_order != 0;
    m->chrf.char_order = o->char_order;
    m->chrf.word_order = o->word_order;
    m->chrf.beta = o->beta;
    m->chrf.lowercase = o->lowercase != 0;
    m->chrf.whitespace = o->whitespace != 0;
    m->chrf.eps_smoothing = o->eps_smoothing != 0;
    m->ter.normalized = o->normalized != 0;
    m->ter.no_punct = o->no_punct != 0;
    m->ter.asian_support = o->asian_support != 0;
    m->ter.case_sensitive = o->case_sensitive != 0;
    return 0;
}

/* BLEU's numbers of the summed statistics of scored's segments. */
static void bleu_details(const nmt_metric_options *options, const nmt_evaluate_scored *scored, size_t segments,
                         nmt_corpus_details *d) {
    const int k = NMT_BLEU_STATS(options->bleu.max_order);
    double sum[NMT_BLEU_STATS(NMT_BLEU_MAX_ORDER)];
    nmt_metric_sum(scored->stats, segments, k, sum);
    nmt_bleu_score score;
    nmt_bleu_compute(&options->bleu, sum, NMT_PYNUM_PYTHON, &score);
    d->order = score.order < 4 ? score.order : 4;
    for (int n = 0; n < d->order; n++) {
        d->counts[n] = score.correct[n];
        d->totals[n] = score.total[n];
        d->precisions[n] = score.precisions[n];
    }
    d->bp = score.bp;
    d->ratio = score.ratio;
    d->sys_len = score.hyp_len;
    d->ref_len = score.ref_len;
}

/* The corpus metric of one kind (eval/evaluate.h: the per-line statistics summed in order, as
 * sacreBLEU sums them). */
static int corpus_metric(nmt_metric_kind kind, int count, const char *const *hyps, int nrefs, const char *const *refs,
                         const nmt_corpus_options *public_options, nmt_corpus_metric *out, nmt_corpus_details *details) {
    memset(out, 0, sizeof *out);
    if (details) memset(details, 0, sizeof *details);
    if (count < 0 || nrefs < 1) return nmt_error_set("need count >= 0 and nrefs >= 1, got %d and %d", count, nrefs);
    const nmt_corpus_options defaults = nmt_corpus_options_default();
    nmt_metric_options options;
    if (metric_options(public_options ? public_options : &defaults, &options) < 0) return -1;
    nmt_metric *metric = nmt_metric_create(kind, &options);
    nmt_segments hyp = {0}, *ref = nmt_calloc((size_t)nrefs, sizeof *ref);
    const nmt_segments **ref_ptrs = nmt_calloc((size_t)nrefs, sizeof *ref_ptrs);
    nmt_evaluate_scored scored = {0};
    int rc = -1;
    if (!metric || !ref || !ref_ptrs || segments_of(&hyp, "hypotheses", hyps, count, "the hypothesis") < 0) goto done;
    for (int r = 0; r < nrefs; r++) {
        char what[48];
        snprintf(what, sizeof what, "reference %d", r + 1);
        if (segments_of(&ref[r], "references", refs + (size_t)r * (size_t)count, count, what) < 0) goto done;
        ref_ptrs[r] = &ref[r];
    }
    if (nmt_evaluate_system(metric, &hyp, ref_ptrs, nrefs, details != NULL, &scored) < 0) goto done;
    out->value = scored.score;
    snprintf(out->name, sizeof out->name, "%s", nmt_metric_name(metric));
    nmt_signature_field fields[NMT_METRIC_MAX_FIELDS];
    const int n = nmt_metric_signature_fields(metric, fields);
    const nmt_signature_global global = {.nrefs = nrefs};
    nmt_signature_format(&global, fields, n, out->signature, sizeof out->signature);
    if (details) {
        snprintf(details->verbose, sizeof details->verbose, "%s", scored.verbose);
        if (kind == NMT_METRIC_BLEU) bleu_details(&options, &scored, (size_t)count, details);
    }
    rc = 0;
done:
    free(scored.stats);
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

int nmt_corpus_bleu(int count, const char *const *hyps, int nrefs, const char *const *refs, nmt_corpus_metric *out) {
    return corpus_metric(NMT_METRIC_BLEU, count, hyps, nrefs, refs, NULL, out, NULL);
}

int nmt_corpus_chrf(int count, const char *const *hyps, int nrefs, const char *const *refs, nmt_corpus_metric *out) {
    return corpus_metric(NMT_METRIC_CHRF, count, hyps, nrefs, refs, NULL, out, NULL);
}

int nmt_corpus_ter(int count, const char *const *hyps, int nrefs, const char *const *refs, nmt_corpus_metric *out) {
    return corpus_metric(NMT_METRIC_TER, count, hyps, nrefs, refs, NULL, out, NULL);
}

int nmt_corpus_score(const char *name, int count, const char *const *hyps, int nrefs, const char *const *refs,
                     const nmt_corpus_options *options, nmt_corpus_metric *out, nmt_corpus_details *details) {
    nmt_metric_kind kind;
    if (!name) return nmt_error_set("no metric named (bleu, chrf or ter)");
    if (nmt_metric_parse(name, &kind) < 0) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    return corpus_metric(kind, count, hyps, nrefs, refs, options, out, details);
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
