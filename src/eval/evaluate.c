/* evaluate: systems scored against references under sacreBLEU's metrics, and the report of it. */
#include "eval/evaluate.h"

#include "base/util.h"
#include "compute/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- one system under one metric ------------------------------------------------------------ */

enum { MIN_PARALLEL_SEGMENTS = 2000 }; /* below this, one thread (more would cost more than it saves) */

/* Share t of the segments, [n*t/shares, n*(t+1)/shares), scored by its own metric instance. */
typedef struct share {
    nmt_metric *metric;
    int failed;
    char error[1024];
} share;

typedef struct scoring {
    share *shares;
    int count;
    const nmt_segments *hyps;
    const nmt_segments *const *refs;
    int nrefs;
    double *rows; /* [segments * k] */
} scoring;

static void score_share(scoring *s, int t) {
    share *w = &s->shares[t];
    int k = nmt_metric_stat_count(w->metric);
    size_t n = s->hyps->count, from = n * (size_t)t / (size_t)s->count, to = n * (size_t)(t + 1) / (size_t)s->count;
    const char *lines[64];
    size_t lens[64];
    const char **ref_lines = s->nrefs <= 64 ? lines : nmt_malloc((size_t)s->nrefs * sizeof *ref_lines);
    size_t *ref_lens = s->nrefs <= 64 ? lens : nmt_malloc((size_t)s->nrefs * sizeof *ref_lens);
    w->failed = !ref_lines || !ref_lens;
    for (size_t i = from; i < to && !w->failed; i++) {
        for (int r = 0; r < s->nrefs; r++) {
            ref_lines[r] = s->refs[r]->lines[i];
            ref_lens[r] = s->refs[r]->lens[i];
        }
        if (nmt_metric_segment(w->metric, s->hyps->lines[i], s->hyps->lens[i], ref_lines, ref_lens, s->nrefs,
                               s->rows + i * (size_t)k) < 0) {
            nmt_error_prefix("segment %zu", i + 1);
            w->failed = 1;
        }
    }
    if (w->failed) snprintf(w->error, sizeof w->error, "%s", nmt_error());
    if (ref_lines != lines) free(ref_lines);
    if (ref_lens != lens) free(ref_lens);
}

static void score_shares(void *ctx, long begin, long end) {
    for (long t = begin; t < end; t++) score_share(ctx, (int)t);
}

int nmt_evaluate_system(nmt_metric *metric, const nmt_segments *hyps, const nmt_segments *const *refs, int nrefs,
                        int keep, nmt_evaluate_scored *out) {
    int k = nmt_metric_stat_count(metric), rc = -1;
    size_t n = hyps->count;
    memset(out, 0, sizeof *out);
    scoring s = {.count = n < MIN_PARALLEL_SEGMENTS ? 1 : nmt_pool_threads(), .hyps = hyps, .refs = refs,
                 .nrefs = nrefs};
    s.shares = nmt_calloc((size_t)s.count, sizeof *s.shares);
    s.rows = nmt_malloc((n ? n : 1) * (size_t)k * sizeof *s.rows);
    double *sum = nmt_calloc((size_t)k, sizeof *sum);
    if (!s.shares || !s.rows || !sum) goto done;
    for (int t = 0; t < s.count; t++)
        if (!(s.shares[t].metric = t == 0 ? metric : nmt_metric_create_like(metric))) goto done;
    nmt_pool_for(s.count, 1, score_shares, &s);
    for (int t = 0; t < s.count; t++)
        if (s.shares[t].failed) {
            nmt_error_set("%s", s.shares[t].error);
            goto done;
        }
    nmt_metric_sum(s.rows, n, k, sum);
    out->score = nmt_metric_compute(metric, sum, NMT_PYNUM_PYTHON, out->verbose, sizeof out->verbose);
    if (keep) {
        out->stats = s.rows;
        s.rows = NULL;
    }
    rc = 0;
done:
    for (int t = 1; s.shares && t < s.count; t++) nmt_metric_free(s.shares[t].metric);
    free(s.shares);
    free(s.rows);
    free(sum);
    return rc;
}

/* Every system has lines, as many as every reference stream. */
static int check_lengths(const nmt_segments *const *systems, int nsystems, const nmt_segments *const *refs, int nrefs) {
    for (int s = 0; s < nsystems; s++) {
        if (systems[s]->count == 0) return nmt_error_set("%s has no lines", systems[s]->name);
        for (int r = 0; r < nrefs; r++)
            if (refs[r]->count != systems[s]->count)
                return nmt_error_set("%s has %zu line%s but %s has %zu", systems[s]->name, systems[s]->count,
                                     systems[s]->count == 1 ? "" : "s", refs[r]->name, refs[r]->count);
    }
    return 0;
}

/* --- the report ------------------------------------------------------------------------------ */

nmt_evaluate_options nmt_evaluate_options_default(void) {
    nmt_evaluate_options o;
    memset(&o, 0, sizeof o);
    o.metric = nmt_metric_options_default();
    o.metrics[0] = NMT_METRIC_BLEU;
    o.nmetrics = 1;
    o.confidence_n = 1000;
    o.paired_bs_n = 1000;
    o.paired_ar_n = 10000;
    o.width = 1;
    o.format = NMT_REPORT_JSON;
    return o;
}

/* What one report needs besides its options: the metrics (made once) and the resampling seed. */
typedef struct report {
    const nmt_evaluate_options *o;
    nmt_metric *metrics[3];
    const nmt_segments *const *refs;
    int nrefs;
    nmt_strbuf *out;
    nmt_evaluate_flush flush;
    void *ctx;
} report;

static size_t signature_of(const nmt_metric *metric, const nmt_signature_global *global, char *out, size_t size) {
    nmt_signature_field fields[NMT_METRIC_MAX_FIELDS];
    int count = nmt_metric_signature_fields(metric, fields);
    return nmt_signature_format(global, fields, count, out, size);
}

static int sentence_level(report *r, const nmt_segments *hyps) {
    const nmt_evaluate_options *o = r->o;
    nmt_metric *metric = r->metrics[0];
    nmt_evaluate_scored s;
    if (nmt_evaluate_system(metric, hyps, r->refs, r->nrefs, 1, &s) < 0) return -1;
    char sig[512];
    nmt_signature_global global = {.nrefs = r->nrefs, .short_form = o->short_signature};
    signature_of(metric, &global, sig, sizeof sig);
    int k = nmt_metric_stat_count(metric), rc = 0;
    nmt_strbuf *out = r->out;
    for (size_t i = 0; i < hyps->count && rc == 0; i++) {
        char verbose[160];
        nmt_report_score score = {.name = nmt_metric_name(metric), .verbose = verbose, .signature = sig};
        score.score = nmt_metric_compute(metric, s.stats + i * (size_t)k, NMT_PYNUM_PYTHON, verbose, sizeof verbose);
        rc = nmt_report_score_format(&score, o->width, o->score_only, 0, out);
        if (rc == 0) rc = nmt_strbuf_reserve(out, out->len + 2);
        if (rc == 0) out->data[out->len++] = '\n';
        if (rc == 0 && out->len > (1 << 16)) rc = r->flush(r->ctx, out);
    }
    free(s.stats);
    return rc;
}

static int single(report *r, const nmt_segments *hyps) {
    const nmt_evaluate_options *o = r->o;
    char *results[3] = {0};
    int rc = -1, bootstrap = o->confidence && o->confidence_n > 1;
    nmt_metric_seed seed;
    char seed_text[64];
    if (bootstrap && nmt_metric_seed_parse(o->seed, &seed, seed_text, sizeof seed_text) < 0) return -1;
    for (int m = 0; m < o->nmetrics; m++) {
        nmt_evaluate_scored s;
        if (nmt_evaluate_system(r->metrics[m], hyps, r->refs, r->nrefs, bootstrap, &s) < 0) goto done;
        nmt_report_score score = {.name = nmt_metric_name(r->metrics[m]), .score = s.score, .verbose = s.verbose};
        if (bootstrap) {
            double *scores = nmt_malloc((size_t)o->confidence_n * sizeof *scores);
            const double *stats[1] = {s.stats};
            if (!scores ||
                nmt_metric_bootstrap(r->metrics[m], stats, 1, hyps->count, &seed, o->confidence_n, &scores) < 0) {
                free(scores);
                free(s.stats);
                goto done;
            }
            score.has_ci = 1;
            score.ci = nmt_metric_ci(scores, o->confidence_n, 0, &score.mean);
            free(scores);
        }
        free(s.stats);
        char sig[512];
        nmt_signature_global global = {.nrefs = r->nrefs,
                                      .bootstrap = bootstrap ? o->confidence_n : 0,
                                      .seed = bootstrap ? seed_text : NULL,
                                      .short_form = o->short_signature && o->format != NMT_REPORT_JSON};
        signature_of(r->metrics[m], &global, sig, sizeof sig);
        score.signature = sig;
        nmt_strbuf line = {0};
        if (nmt_report_score_format(&score, o->width, o->score_only, o->format == NMT_REPORT_JSON, &line) < 0) {
            nmt_strbuf_free(&line);
            goto done;
        }
        results[m] = line.data;
    }
    rc = nmt_report_single((const char *const *)results, o->nmetrics, o->format == NMT_REPORT_JSON, r->out);
done:
    for (int m = 0; m < 3; m++) free(results[m]);
    return rc;
}

/* Several systems: a table of scores, or of a paired test against the first system. */
static int table(report *r, const nmt_segments *const *systems, const char *const *names, int nsys) {
    const nmt_evaluate_options *o = r->o;
    int paired = o->paired_bs || o->paired_ar, nm = o->nmetrics, rc = -1;
    long samples = o->paired_bs ? (o->paired_bs_n > 0 ? o->paired_bs_n : 1000)
                                : (o->paired_ar_n > 0 ? o->paired_ar_n : 10000);
    nmt_metric_seed seed = {0};
    char seed_text[64] = "";
    nmt_report_cell *cells = nmt_calloc((size_t)nsys * (size_t)nm, sizeof *cells);
    nmt_evaluate_scored *base = nmt_calloc((size_t)nm, sizeof *base);
    char (*sigs)[512] = nmt_calloc((size_t)nm, sizeof *sigs);
    const char *sig_ptrs[3], *metric_names[3];
    if (!cells || !base || !sigs) goto done;
    if (paired) {
        if (nmt_metric_seed_parse(o->seed, &seed, seed_text, sizeof seed_text) < 0) goto done;
        if (!seed.random) snprintf(seed_text, sizeof seed_text, "%llu", (unsigned long long)seed.value);
    }
    /* sacreBLEU's paired tests seed with None (fresh entropy) when the seed is 0 */
    nmt_metric_seed test_seed = seed;
    if (!seed.random && seed.value == 0) test_seed.random = 1;
    for (int m = 0; m < nm; m++) {
        metric_names[m] = nmt_metric_name(r->metrics[m]);
        sig_ptrs[m] = sigs[m];
        nmt_signature_global global = {.nrefs = r->nrefs, .short_form = o->short_signature};
        if (paired) {
            global.bootstrap = o->paired_bs ? samples : 0;
            global.trials = o->paired_ar ? samples : 0;
            global.seed = seed_text;
        }
        signature_of(r->metrics[m], &global, sigs[m], sizeof sigs[m]);
        if (nmt_evaluate_system(r->metrics[m], systems[0], r->refs, r->nrefs, paired, &base[m]) < 0) goto done;
        nmt_report_cell *cell = &cells[m];
        cell->score = base[m].score;
        if (paired && o->paired_bs) {
            double *scores = nmt_malloc((size_t)samples * sizeof *scores);
            const double *stats[1] = {base[m].stats};
            if (!scores ||
                nmt_metric_bootstrap(r->metrics[m], stats, 1, systems[0]->count, &seed, samples, &scores) < 0) {
                free(scores);
                goto done;
            }
            cell->has_ci = 1;
            cell->ci = nmt_metric_ci(scores, samples, 1, &cell->mean);
            free(scores);
        }
    }
    for (int s = 1; s < nsys; s++)
        for (int m = 0; m < nm; m++) {
            nmt_evaluate_scored sys;
            nmt_report_cell *cell = &cells[s * nm + m];
            if (nmt_evaluate_system(r->metrics[m], systems[s], r->refs, r->nrefs, paired, &sys) < 0) goto done;
            cell->score = sys.score;
            int failed = 0;
            size_t n = systems[0]->count;
            if (o->paired_bs) {
                cell->has_p = cell->has_ci = 1;
                failed = nmt_metric_paired_bootstrap(r->metrics[m], base[m].stats, sys.stats, n, &test_seed, samples,
                                                     base[m].score, sys.score, &cell->p_value, &cell->mean,
                                                     &cell->ci) < 0;
            } else if (o->paired_ar) {
                cell->has_p = 1;
                failed = nmt_metric_paired_randomization(r->metrics[m], base[m].stats, sys.stats, n, &test_seed,
                                                         samples, base[m].score, sys.score, &cell->p_value) < 0;
            }
            free(sys.stats);
            if (failed) goto done;
        }
    nmt_report_table t = {
        .systems = nsys,
        .metrics = nm,
        .system_names = names,
        .metric_names = metric_names,
        .signatures = sig_ptrs,
        .cells = cells,
        .test = o->paired_bs ? NMT_REPORT_PAIRED_BOOTSTRAP
                : o->paired_ar ? NMT_REPORT_PAIRED_RANDOMIZATION
                               : NMT_REPORT_NO_TEST,
        .samples = o->paired_bs ? o->paired_bs_n : o->paired_ar_n,
    };
    rc = nmt_report_table_format(&t, o->format, o->width, r->out);
done:
    if (base)
        for (int m = 0; m < nm; m++) free(base[m].stats);
    free(base);
    free(cells);
    free(sigs);
    return rc;
}

int nmt_evaluate_check(const nmt_evaluate_options *o, const nmt_segments *const *systems, int nsys,
                       const nmt_segments *const *refs, int nrefs) {
    int paired = o->paired_bs || o->paired_ar;
    if (o->nmetrics < 1 || o->nmetrics > 3) return nmt_error_set("%d metrics: choose one to three", o->nmetrics);
    if (o->sentence_level && o->nmetrics > 1) return nmt_error_set("only one metric can be used in sentence-level mode");
    if (o->sentence_level && nsys > 1)
        return nmt_error_set("only one system can be evaluated in sentence-level mode");
    if (o->sentence_level && (o->confidence || paired))
        return nmt_error_set("statistical tests are unavailable in sentence-level mode");
    if (o->paired_bs && o->paired_ar) return nmt_error_set("--paired-bs and --paired-ar cannot be used together");
    if (paired && nsys == 1) return nmt_error_set("paired tests need several systems given to -i");
    if (nsys > 1 && o->confidence)
        return nmt_error_set("use a paired test (--paired-bs, --paired-ar) for several systems");
    return check_lengths(systems, nsys, refs, nrefs);
}

int nmt_evaluate_report(const nmt_evaluate_options *options, const nmt_segments *const *systems,
                        const char *const *names, int nsystems, const nmt_segments *const *refs, int nrefs,
                        nmt_strbuf *out, nmt_evaluate_flush flush, void *ctx) {
    if (nmt_evaluate_check(options, systems, nsystems, refs, nrefs) < 0) return -1;
    nmt_evaluate_options o = *options;
    if (o.sentence_level) o.metric.bleu.effective_order = 1;
    report r = {.o = &o, .refs = refs, .nrefs = nrefs, .out = out, .flush = flush, .ctx = ctx};
    /* sacreBLEU sorts the metrics (BLEU, chrF, TER), except for a paired test, which keeps -m's order. */
    if (!(o.paired_bs || o.paired_ar)) {
        int n = 0;
        nmt_metric_kind order[3];
        for (int kind = NMT_METRIC_BLEU; kind <= NMT_METRIC_TER; kind++)
            for (int i = 0; i < o.nmetrics; i++)
                if ((int)o.metrics[i] == kind) order[n++] = o.metrics[i];
        memcpy(o.metrics, order, (size_t)n * sizeof *order);
    }
    int rc = -1;
    for (int m = 0; m < o.nmetrics; m++)
        if (!(r.metrics[m] = nmt_metric_create(o.metrics[m], &o.metric))) goto done;
    rc = o.sentence_level ? sentence_level(&r, systems[0])
         : nsystems == 1  ? single(&r, systems[0])
                          : table(&r, systems, names, nsystems);
done:
    for (int m = 0; m < 3; m++) nmt_metric_free(r.metrics[m]);
    return rc;
}
