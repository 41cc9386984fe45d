/* evaluate: systems scored against references under sacreBLEU's metrics, and the report of it.
 *
 * nmt_evaluate_system scores one system under one metric: every segment's statistics (one metric
 * instance per share of the segments, a share per thread of the compute pool for a corpus of 2,000
 * segments or more), summed in segment order, so the score does not depend on the thread count.
 * nmt_evaluate_report does what `nmt bleu` prints, as sacreBLEU 2.x does for the same flags: one
 * system's scores (with a bootstrap CI when asked), a score per segment (sentence level), or a table
 * of several systems (with a paired bootstrap or approximate randomization test against the first).
 */
#ifndef NMT_EVALUATE_H
#define NMT_EVALUATE_H

#include "eval/metric.h"
#include "eval/report.h"
#include "eval/segments.h"

#include <stddef.h>

/* One system under one metric. */
typedef struct nmt_evaluate_scored {
    double score;
    char verbose[160]; /* BLEU's verbose part, "" for the others */
    double *stats;     /* [segments * nmt_metric_stat_count] when kept, else NULL; free() */
} nmt_evaluate_scored;

/* Scores hyps against refs[0..nrefs) (each as long as hyps). With keep, out->stats keeps the
 * segments' statistics. An error names the segment ("segment 7: ..."). 0 or -1. */
int nmt_evaluate_system(nmt_metric *metric, const nmt_segments *hyps, const nmt_segments *const *refs, int nrefs,
                        int keep, nmt_evaluate_scored *out);

/* What to compute and how to show it (the flags of `nmt bleu`). */
typedef struct nmt_evaluate_options {
    nmt_metric_options metric;
    nmt_metric_kind metrics[3];     /* each at most once, in -m's order */
    int nmetrics;
    int sentence_level;             /* a score per segment: one metric, one system */
    int confidence;                 /* a bootstrap CI (one system) over confidence_n resamples */
    long confidence_n;
    int paired_bs, paired_ar;       /* a paired test of each system against the first (several systems) */
    long paired_bs_n, paired_ar_n;  /* their resamples or trials; 0 for sacreBLEU's 1000 and 10000 */
    const char *seed;               /* the resampling seed as text ($SACREBLEU_SEED), NULL for 12345 */
    int width;                      /* decimals */
    int score_only, short_signature;
    nmt_report_format format;
} nmt_evaluate_options;

/* Refuses what sacreBLEU refuses: sentence level with several metrics, systems or a test; a paired test
 * of one system; a CI of several. Then every system must have lines, as many as every reference
 * stream, or the error names both streams and their counts ("hyp.txt has 2 lines but ref.de has 1").
 * 0, or -1 with the error set. */
int nmt_evaluate_check(const nmt_evaluate_options *options, const nmt_segments *const *systems, int nsystems,
                       const nmt_segments *const *refs, int nrefs);

/* nmt bleu's defaults: BLEU, 13a, 1000 resamples, 10000 trials, one decimal, JSON. */
nmt_evaluate_options nmt_evaluate_options_default(void);

/* Appends the report to out, calling flush(ctx, out) whenever it has grown large (flush empties it;
 * sentence-level reports of a large corpus are long). systems[0..nsystems) are named names[] in a
 * table. It checks first (nmt_evaluate_check). 0 or -1. */
typedef int (*nmt_evaluate_flush)(void *ctx, nmt_strbuf *out);
int nmt_evaluate_report(const nmt_evaluate_options *options, const nmt_segments *const *systems,
                        const char *const *names, int nsystems, const nmt_segments *const *refs, int nrefs,
                        nmt_strbuf *out, nmt_evaluate_flush flush, void *ctx);

#endif
