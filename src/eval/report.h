/* report: sacreBLEU's output layouts, built as strings (the CLI prints them).
 *
 * Single system (sacreBLEU's Score.format and print_single_results):
 *   text  "BLEU|nrefs:1|...|version:X = 34.6 70.1/45.2/28.3/18.9 (BP = ...)", one line per metric,
 *         right-aligned on the " = " when there are several; -b prints the number only.
 *   json  {"name", "score", "signature", [confidence fields], ["verbose_score"], then every signature
 *         field} with one-space indentation; several metrics become a JSON list.
 * Several systems (print_results_table): a table (tabulate's fancy_grid for text, latex_booktabs
 * for latex), or a JSON list of {"system", metric: value}; with a paired test the table also shows
 * the bootstrap mean and CI, and p-values (a '*' marks p <= 0.05), followed by the explanation.
 * Numbers follow Python's formatting (pynum.h), widths count code points as Python's len does.
 */
#ifndef NMT_REPORT_H
#define NMT_REPORT_H

#include "eval/tokenize.h"

#include <stddef.h>

typedef enum nmt_report_format {
    NMT_REPORT_JSON,
    NMT_REPORT_TEXT,
    NMT_REPORT_LATEX,
} nmt_report_format;

/* One score, as sacreBLEU's Score object holds it. */
typedef struct nmt_report_score {
    const char *name;      /* "BLEU", "chrF2", "TER" */
    double score;
    int has_ci;            /* bootstrap mean and CI known (shown only when mean > 0, as sacreBLEU does) */
    double mean, ci;
    const char *verbose;   /* BLEU's verbose part, or "" */
    const char *signature; /* "" for none */
} nmt_report_score;

/* Appends Score.format(width, score_only, signature, is_json) to out. 0 or -1 (memory). */
int nmt_report_score_format(const nmt_report_score *score, int width, int score_only, int json, nmt_strbuf *out);

/* Appends print_single_results for the formatted results (each as nmt_report_score made it):
 * a JSON list, or text lines aligned on their '='. Each output line ends with '\n'. */
int nmt_report_single(const char *const *results, int count, int json, nmt_strbuf *out);

/* One cell of the multi-system table. */
typedef struct nmt_report_cell {
    double score;
    int has_p;      /* a paired test's p-value */
    double p_value;
    int has_ci;     /* a paired bootstrap's mean and CI */
    double mean, ci;
} nmt_report_cell;

typedef enum nmt_report_test {
    NMT_REPORT_NO_TEST,
    NMT_REPORT_PAIRED_BOOTSTRAP,
    NMT_REPORT_PAIRED_RANDOMIZATION,
} nmt_report_test;

typedef struct nmt_report_table {
    int systems, metrics;
    const char *const *system_names;  /* [systems]; the first is "Baseline: ..." in a paired test */
    const char *const *metric_names;  /* [metrics] */
    const char *const *signatures;    /* [metrics] */
    const nmt_report_cell *cells;     /* [systems][metrics] */
    nmt_report_test test;
    long samples;                     /* resamples or trials of the test */
} nmt_report_table;

/* Appends print_results_table for the table, in the given format, with scores to `width` decimals. */
int nmt_report_table_format(const nmt_report_table *table, nmt_report_format format, int width, nmt_strbuf *out);

#endif
