/* metric: one interface over BLEU, chrF and TER, and sacreBLEU-exact resampling tests. */
#include "eval/metric.h"

#include "base/pcg64.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

nmt_metric_options nmt_metric_options_default(void) {
    nmt_metric_options o = {nmt_bleu_options_default(), nmt_chrf_options_default(), nmt_ter_options_default()};
    return o;
}

int nmt_metric_parse(const char *name, nmt_metric_kind *out) {
    static const char *const names[] = {"bleu", "chrf", "ter"};
    for (int i = 0; i < 3; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (nmt_metric_kind)i;
            return 0;
        }
    return nmt_error_set("unknown metric '%s' (choose from bleu, chrf, ter)", name);
}

struct nmt_metric {
    nmt_metric_kind kind;
    nmt_metric_options options;
    char name[32];
    nmt_bleu *bleu;
    nmt_chrf *chrf;
    nmt_ter *ter;
};

nmt_metric *nmt_metric_create(nmt_metric_kind kind, const nmt_metric_options *options) {
    nmt_metric *m = nmt_calloc(1, sizeof *m);
    if (!m) return NULL;
    m->kind = kind;
    m->options = *options;
    switch (kind) {
    case NMT_METRIC_BLEU:
        strcpy(m->name, "BLEU");
        m->bleu = nmt_bleu_create(&options->bleu);
        if (!m->bleu) goto fail;
        break;
    case NMT_METRIC_CHRF:
        nmt_chrf_name(&options->chrf, m->name);
        m->chrf = nmt_chrf_create(&options->chrf);
        if (!m->chrf) goto fail;
        break;
    case NMT_METRIC_TER:
        strcpy(m->name, "TER");
        m->ter = nmt_ter_create(&options->ter);
        if (!m->ter) goto fail;
        break;
    }
    return m;
fail:
    free(m);
    return NULL;
}

nmt_metric *nmt_metric_create_like(const nmt_metric *metric) { return nmt_metric_create(metric->kind, &metric->options); }

void nmt_metric_free(nmt_metric *metric) {
    if (!metric) return;
    nmt_bleu_free(metric->bleu);
    nmt_chrf_free(metric->chrf);
    nmt_ter_free(metric->ter);
    free(metric);
}

nmt_metric_kind nmt_metric_kind_of(const nmt_metric *metric) { return metric->kind; }
const char *nmt_metric_name(const nmt_metric *metric) { return metric->name; }

int nmt_metric_stat_count(const nmt_metric *metric) {
    switch (metric->kind) {
    case NMT_METRIC_BLEU: return NMT_BLEU_STATS(metric->options.bleu.max_order);
    case NMT_METRIC_CHRF: return nmt_chrf_stat_count(&metric->options.chrf);
    case NMT_METRIC_TER: break;
    }
    return NMT_TER_STATS;
}

int nmt_metric_segment(nmt_metric *metric, const char *hyp, size_t hyp_len, const char *const *refs,
                       const size_t *ref_lens, int nrefs, double *stats) {
    switch (metric->kind) {
    case NMT_METRIC_BLEU: return nmt_bleu_segment(metric->bleu, hyp, hyp_len, refs, ref_lens, nrefs, stats);
    case NMT_METRIC_CHRF: return nmt_chrf_segment(metric->chrf, hyp, hyp_len, refs, ref_lens, nrefs, stats);
    case NMT_METRIC_TER: break;
    }
    return nmt_ter_segment(metric->ter, hyp, hyp_len, refs, ref_lens, nrefs, stats);
}

double nmt_metric_compute(const nmt_metric *metric, const double *stats, nmt_pynum_arith arith, char *verbose,
                          size_t size) {
    if (verbose && size) verbose[0] = '\0';
    switch (metric->kind) {
    case NMT_METRIC_BLEU: {
        nmt_bleu_score score;
        nmt_bleu_compute(&metric->options.bleu, stats, arith, &score);
        if (verbose) nmt_bleu_verbose(&score, verbose, size);
        return score.score;
    }
    case NMT_METRIC_CHRF: return nmt_chrf_compute(&metric->options.chrf, stats, arith);
    case NMT_METRIC_TER: break;
    }
    return nmt_ter_compute(stats, arith);
}

int nmt_metric_signature_fields(const nmt_metric *metric, nmt_signature_field *fields) {
    switch (metric->kind) {
    case NMT_METRIC_BLEU: return nmt_bleu_signature_fields(&metric->options.bleu, fields);
    case NMT_METRIC_CHRF: return nmt_chrf_signature_fields(&metric->options.chrf, fields);
    case NMT_METRIC_TER: break;
    }
    return nmt_ter_signature_fields(&metric->options.ter, fields);
}

void nmt_metric_sum(const double *stats, size_t n, int k, double *out) {
    for (int j = 0; j < k; j++) out[j] = 0.0;
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < k; j++) out[j] += stats[i * (size_t)k + (size_t)j];
}

int nmt_metric_seed_parse(const char *text, nmt_metric_seed *seed, char *shown, size_t size) {
    if (!text) text = "12345";
    if (strcasecmp(text, "none") == 0) {
        seed->random = 1;
        seed->value = 0;
        snprintf(shown, size, "none");
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-')
        return nmt_error_set("SACREBLEU_SEED: expected a non-negative integer or 'none', got '%s'", text);
    seed->random = 0;
    seed->value = v;
    snprintf(shown, size, "%s", text);
    return 0;
}

static int seed_rng(nmt_pcg64 *rng, const nmt_metric_seed *seed) {
    if (seed->random) return nmt_pcg64_seed_random(rng);
    nmt_pcg64_seed(rng, seed->value);
    return 0;
}

int nmt_metric_bootstrap(const nmt_metric *metric, const double *const *stats, int systems, size_t n,
                         const nmt_metric_seed *seed, long samples, double *const *scores) {
    int k = nmt_metric_stat_count(metric);
    if (n == 0 || n > UINT32_MAX) return nmt_error_set("bootstrap: %zu segments is out of range", n);
    size_t cells;
    if (nmt_size_mul(n * (size_t)k, (size_t)systems, &cells, "bootstrap statistics") < 0) return -1;
    /* numpy.array(stats, dtype='float32'): each statistic rounded to single precision once. */
    float *narrow = nmt_malloc(cells * sizeof *narrow);
    float *sums = nmt_malloc((size_t)systems * (size_t)k * sizeof *sums);
    double *wide = nmt_malloc((size_t)k * sizeof *wide);
    int rc = -1;
    if (!narrow || !sums || !wide) goto done;
    for (int s = 0; s < systems; s++)
        for (size_t c = 0; c < n * (size_t)k; c++) narrow[(size_t)s * n * (size_t)k + c] = (float)stats[s][c];
    nmt_pcg64 rng;
    if (seed_rng(&rng, seed) < 0) goto done;
    for (long i = 0; i < samples; i++) {
        memset(sums, 0, (size_t)systems * (size_t)k * sizeof *sums);
        for (size_t j = 0; j < n; j++) {
            size_t row = nmt_pcg64_below(&rng, n);
            /* _s.sum(0) adds the rows in order, in float32 */
            for (int s = 0; s < systems; s++) {
                const float *x = narrow + ((size_t)s * n + row) * (size_t)k;
                float *acc = sums + (size_t)s * (size_t)k;
                for (int c = 0; c < k; c++) acc[c] += x[c];
            }
        }
        for (int s = 0; s < systems; s++) {
            for (int c = 0; c < k; c++) wide[c] = sums[(size_t)s * (size_t)k + (size_t)c];
            scores[s][i] = nmt_metric_compute(metric, wide, NMT_PYNUM_FLOAT32, NULL, 0);
        }
    }
    rc = 0;
done:
    free(narrow);
    free(sums);
    free(wide);
    return rc;
}

int nmt_metric_randomize(const nmt_metric *metric, const double *base, const double *sys, size_t n,
                         const nmt_metric_seed *seed, long trials, double *a, double *b) {
    int k = nmt_metric_stat_count(metric);
    double *sa = nmt_malloc(2 * (size_t)k * sizeof *sa);
    if (!sa) return -1;
    double *sb = sa + k;
    nmt_pcg64 rng;
    if (seed_rng(&rng, seed) < 0) {
        free(sa);
        return -1;
    }
    /* BLEU and chrF statistics are Python ints, so numpy sums them as int64; TER's are floats. */
    nmt_pynum_arith arith = metric->kind == NMT_METRIC_TER ? NMT_PYNUM_PYTHON : NMT_PYNUM_INT64;
    nmt_pcg64_bits_reset(&rng);
    for (long t = 0; t < trials; t++) {
        memset(sa, 0, 2 * (size_t)k * sizeof *sa);
        for (size_t j = 0; j < n; j++) {
            int keep = nmt_pcg64_bit(&rng);
            const double *x = (keep ? base : sys) + j * (size_t)k, *y = (keep ? sys : base) + j * (size_t)k;
            for (int c = 0; c < k; c++) {
                sa[c] += x[c];
                sb[c] += y[c];
            }
        }
        a[t] = nmt_metric_compute(metric, sa, arith, NULL, 0);
        b[t] = nmt_metric_compute(metric, sb, arith, NULL, 0);
    }
    free(sa);
    return 0;
}

static int compare_doubles(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* numpy's pairwise_sum for float64: blocks of up to 128 summed with 8 accumulators. */
static double pairwise_sum(const double *x, long n) {
    if (n < 8) {
        double res = 0.0;
        for (long i = 0; i < n; i++) res += x[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        for (int j = 0; j < 8; j++) r[j] = x[j];
        long i;
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++) r[j] += x[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += x[i];
        return res;
    }
    long half = n / 2;
    half -= half % 8;
    return pairwise_sum(x, half) + pairwise_sum(x + half, n - half);
}

double nmt_metric_numpy_mean(const double *x, long n) { return pairwise_sum(x, n) / (double)n; }

/* Shewchuk's exact summation (Python's math.fsum): adds x to the non-overlapping partials. */
static long partials_add(double *partials, long count, double x) {
    long kept = 0;
    for (long i = 0; i < count; i++) {
        double y = partials[i];
        if (fabs(x) < fabs(y)) {
            double t = x;
            x = y;
            y = t;
        }
        double hi = x + y, lo = y - (hi - x);
        if (lo != 0.0) partials[kept++] = lo;
        x = hi;
    }
    partials[kept++] = x;
    return kept;
}

/* The correctly rounded value of the partials' exact sum (math.fsum's final step). */
static double partials_round(const double *partials, long count) {
    if (count == 0) return 0.0;
    long j = count - 1;
    double hi = partials[j], lo = 0.0;
    while (j > 0) {
        double x = hi, y = partials[--j];
        hi = x + y;
        lo = y - (hi - x);
        if (lo != 0.0) break;
    }
    if (j > 0 && ((lo < 0 && partials[j - 1] < 0) || (lo > 0 && partials[j - 1] > 0))) {
        double y = lo * 2, x = hi + y;
        if (y == x - hi) hi = x;
    }
    return hi;
}

/* Python's statistics.mean of floats: the exact mean, rounded once. The exact sum is kept as
 * partials; q = sum / n is then corrected by the exactly computed remainder sum - q * n. */
static double exact_mean(const double *x, long n) {
    double *partials = nmt_malloc(((size_t)n + 3) * sizeof *partials);
    if (!partials) return pairwise_sum(x, n) / (double)n; /* out of memory: a close value */
    long count = 0;
    for (long i = 0; i < n; i++) count = partials_add(partials, count, x[i]);
    double q = partials_round(partials, count) / (double)n;
    double product = q * (double)n, error = fma(q, (double)n, -product);
    count = partials_add(partials, count, -product);
    count = partials_add(partials, count, -error);
    double remainder = partials_round(partials, count);
    free(partials);
    return q + remainder / (double)n;
}

double nmt_metric_ci(double *scores, long n, int numpy_mean, double *mean) {
    qsort(scores, (size_t)n, sizeof *scores, compare_doubles);
    long lower = n / 40, upper = n - lower - 1;
    *mean = numpy_mean ? nmt_metric_numpy_mean(scores, n) : exact_mean(scores, n);
    return 0.5 * (scores[upper] - scores[lower]);
}

double nmt_metric_p_value(const double *stats, long n, double real) {
    long count = 0;
    for (long i = 0; i < n; i++) count += stats[i] > real;
    return (double)(count + 1) / (double)(n + 1);
}

int nmt_metric_paired_bootstrap(const nmt_metric *metric, const double *base, const double *sys, size_t n,
                                const nmt_metric_seed *seed, long samples, double base_score, double sys_score,
                                double *p_value, double *mean, double *ci) {
    double *base_scores = nmt_malloc(2 * (size_t)samples * sizeof *base_scores);
    if (!base_scores) return -1;
    double *sys_scores = base_scores + samples;
    const double *stats[2] = {base, sys};
    double *const scores[2] = {base_scores, sys_scores};
    if (nmt_metric_bootstrap(metric, stats, 2, n, seed, samples, scores) < 0) {
        free(base_scores);
        return -1;
    }
    /* base_scores becomes the centred absolute differences; sys_scores is sorted for the CI after. */
    for (long i = 0; i < samples; i++) base_scores[i] = fabs(sys_scores[i] - base_scores[i]);
    double mean_diff = nmt_metric_numpy_mean(base_scores, samples);
    for (long i = 0; i < samples; i++) base_scores[i] -= mean_diff;
    *p_value = nmt_metric_p_value(base_scores, samples, fabs(base_score - sys_score));
    *ci = nmt_metric_ci(sys_scores, samples, 1, mean);
    free(base_scores);
    return 0;
}

int nmt_metric_paired_randomization(const nmt_metric *metric, const double *base, const double *sys, size_t n,
                                    const nmt_metric_seed *seed, long trials, double base_score, double sys_score,
                                    double *p_value) {
    double *a = nmt_malloc(2 * (size_t)trials * sizeof *a);
    if (!a) return -1;
    double *b = a + trials;
    if (nmt_metric_randomize(metric, base, sys, n, seed, trials, a, b) < 0) {
        free(a);
        return -1;
    }
    for (long t = 0; t < trials; t++) a[t] = fabs(a[t] - b[t]);
    *p_value = nmt_metric_p_value(a, trials, fabs(base_score - sys_score));
    free(a);
    return 0;
}
