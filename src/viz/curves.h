/* curves: training curves read from train.log.jsonl and drawn as stacked SVG panels (`nmt plot`).
 *
 * The log (written by train, one JSON object a line):
 *   {"event":"train","step":..,"epoch":..,"loss":..,"lr":..,"tokens_per_s":..,"elapsed_s":..}
 *   {"event":"valid","step":..,"loss":..,"ppl":..,"bleu":..,"elapsed_s":..}
 * is read strictly (json.h): a malformed line is an error naming file:line:column. Within that:
 *   - records of other events are checked as JSON and ignored, as are fields this module does not plot;
 *   - a plotted field may be null (e.g. a diverged loss): that record then has no point for it;
 *   - a record whose step is not past the previous record's of its event starts a rerun from that step:
 *     the earlier records from that step on are dropped (a log continued after a resume);
 *   - a last line without its newline that does not parse is a line being written (a run plotted while
 *     it trains): it is ignored and its number kept in partial_line, so the caller can say so;
 *   - a valid record without elapsed_s takes its time from the train records around its step (linear
 *     in the step; the nearest one beyond their range).
 *
 * The picture: one panel per metric, stacked, sharing the x axis (minutes of training, or steps);
 * every run overlaid in its own colour (a 10-colour palette, repeated beyond 10 runs), a legend of run
 * names under the title, tick values at round numbers (1, 2 or 5 times a power of ten), a light grid,
 * and square markers on the validation curves, whose points are few.
 */
#ifndef NMT_CURVES_H
#define NMT_CURVES_H

#include "viz/plot.h"

typedef enum {
    NMT_CURVES_TRAIN_LOSS,   /* "train_loss": train records' loss (label-smoothed, per target token) */
    NMT_CURVES_VAL_LOSS,     /* "val_loss" */
    NMT_CURVES_VAL_PPL,      /* "val_ppl" */
    NMT_CURVES_VAL_BLEU,     /* "val_bleu" */
    NMT_CURVES_LR,           /* "lr" */
    NMT_CURVES_TOKENS_PER_S, /* "tokens_per_s" */
    NMT_CURVES_NUM_METRICS
} nmt_curves_metric;

typedef enum { NMT_CURVES_TRAIN, NMT_CURVES_VALID, NMT_CURVES_NUM_EVENTS } nmt_curves_event;

typedef enum { NMT_CURVES_MINUTES, NMT_CURVES_STEPS } nmt_curves_axis;

/* One record of the log. */
typedef struct nmt_curves_record {
    long step;
    double elapsed_s;                      /* NaN when unknown */
    double value[NMT_CURVES_NUM_METRICS]; /* NaN for the metrics the record does not carry */
} nmt_curves_record;

typedef struct nmt_curves_run {
    char *name;                                    /* shown in the legend */
    char *path;                                    /* the log, for messages */
    nmt_curves_record *records[NMT_CURVES_NUM_EVENTS]; /* by event, steps strictly increasing */
    int num_records[NMT_CURVES_NUM_EVENTS];
    long partial_line;                             /* an unfinished last line that was ignored (0 = none) */
} nmt_curves_run;

/* The metric's name on the command line ("val_bleu") and its axis label ("validation BLEU"). */
const char *nmt_curves_metric_name(nmt_curves_metric metric);
const char *nmt_curves_metric_label(nmt_curves_metric metric);
/* Parses a comma-separated list of metric names into metrics[NMT_CURVES_NUM_METRICS]; an unknown or
 * repeated name is an error that lists the known ones. */
int nmt_curves_metrics_parse(const char *list, nmt_curves_metric *metrics, int *count);

/* Parses a whole log held in memory (text[len], for tests and fuzzing); `path` names it in messages
 * and `name` is the run's legend entry. On failure *run is left empty. */
int nmt_curves_parse(nmt_curves_run *run, const char *text, size_t len, const char *path, const char *name);
int nmt_curves_read(nmt_curves_run *run, const char *path, const char *name);
/* Reads the runs of n model directories (DIR/train.log.jsonl) or log files. A run is named by its
 * directory's base name (a log file: the directory holding it), or by the path as given where two
 * would share a name. On failure no run is left allocated. */
int nmt_curves_load(nmt_curves_run *runs, const char *const *paths, int n);
void nmt_curves_free(nmt_curves_run *run);

/* The points of one metric against the axis: new arrays *xs[*n], *ys[*n] (NULL when n is 0) that the
 * caller frees. Minutes need every record of the metric's event to have a time (error otherwise). */
int nmt_curves_points(const nmt_curves_run *run, nmt_curves_metric metric, nmt_curves_axis axis, double **xs,
                      double **ys, int *n);

/* Round tick values covering [lo, hi]: first, first + step, ..., first + (count - 1) * step, with step
 * 1, 2 or 5 times a power of ten, the smallest such that count <= max_ticks (max_ticks >= 2). The
 * axis then spans exactly [first, last]. lo == hi is widened to a range around it. */
typedef struct nmt_curves_ticks {
    double first, step;
    int count;
    int decimals; /* digits after the point that show every tick value exactly */
} nmt_curves_ticks;
void nmt_curves_ticks_choose(double lo, double hi, int max_ticks, nmt_curves_ticks *ticks);

typedef struct nmt_curves_options {
    nmt_curves_axis axis;
    const nmt_curves_metric *metrics; /* panels, top to bottom */
    int num_metrics;
    const char *title;                /* may be NULL */
} nmt_curves_options;

/* Draws the runs into a whole SVG document appended to *out. */
int nmt_curves_svg(nmt_strbuf *out, const nmt_curves_run *runs, int num_runs, const nmt_curves_options *options);

#endif
