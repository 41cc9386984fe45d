/* curves: train.log.jsonl into runs of records, and their curves drawn with the plot canvas. */
#include "viz/curves.h"
#include "base/io.h"
#include "base/json.h"
#include "base/utf8.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- metrics ---- */

/* The log fields a metric can come from; "step" and "event" are read apart. */
enum { FIELD_ELAPSED, FIELD_LOSS, FIELD_PPL, FIELD_BLEU, FIELD_LR, FIELD_TOKENS_PER_S, NUM_FIELDS };
static const char *const field_names[NUM_FIELDS] = {"elapsed_s", "loss", "ppl", "bleu", "lr", "tokens_per_s"};
static const char *const event_names[NMT_CURVES_NUM_EVENTS] = {"train", "valid"};

static const struct {
    const char *name, *label;
    nmt_curves_event event;
    int field;
} metrics[NMT_CURVES_NUM_METRICS] = {
    [NMT_CURVES_TRAIN_LOSS] = {"train_loss", "train loss", NMT_CURVES_TRAIN, FIELD_LOSS},
    [NMT_CURVES_VAL_LOSS] = {"val_loss", "validation loss", NMT_CURVES_VALID, FIELD_LOSS},
    [NMT_CURVES_VAL_PPL] = {"val_ppl", "validation perplexity", NMT_CURVES_VALID, FIELD_PPL},
    [NMT_CURVES_VAL_BLEU] = {"val_bleu", "validation BLEU", NMT_CURVES_VALID, FIELD_BLEU},
    [NMT_CURVES_LR] = {"lr", "learning rate", NMT_CURVES_TRAIN, FIELD_LR},
    [NMT_CURVES_TOKENS_PER_S] = {"tokens_per_s", "target tokens/s", NMT_CURVES_TRAIN, FIELD_TOKENS_PER_S},
};

const char *nmt_curves_metric_name(nmt_curves_metric metric) { return metrics[metric].name; }

const char *nmt_curves_metric_label(nmt_curves_metric metric) { return metrics[metric].label; }

int nmt_curves_metrics_parse(const char *list, nmt_curves_metric *out, int *count) {
    *count = 0;
    for (const char *p = list;; p++) {
        size_t n = strcspn(p, ",");
        int found = -1;
        for (int m = 0; m < NMT_CURVES_NUM_METRICS; m++)
            if (strlen(metrics[m].name) == n && strncmp(p, metrics[m].name, n) == 0) found = m;
        if (found < 0) {
            char known[160] = "";
            for (int m = 0; m < NMT_CURVES_NUM_METRICS; m++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", m ? ", " : "", metrics[m].name);
            return nmt_error_set("unknown metric '%.*s' (known: %s)", (int)n, p, known);
        }
        for (int i = 0; i < *count; i++)
            if (out[i] == (nmt_curves_metric)found) return nmt_error_set("metric '%s' is named twice", metrics[found].name);
        out[(*count)++] = (nmt_curves_metric)found;
        p += n;
        if (!*p) return 0;
    }
}

/* ---- reading the log ---- */

enum { HAVE_EVENT = 1 << NUM_FIELDS, HAVE_STEP = 2 << NUM_FIELDS };

/* One "key": value of a record; *have collects the keys seen (each may appear once). */
static int parse_field(nmt_json *j, const char *key, size_t key_at, char **event, int64_t *step,
                       double field[NUM_FIELDS], unsigned *have) {
    unsigned bit = strcmp(key, "event") == 0 ? HAVE_EVENT : strcmp(key, "step") == 0 ? HAVE_STEP : 0;
    int f = -1;
    for (int i = 0; i < NUM_FIELDS && !bit; i++)
        if (strcmp(key, field_names[i]) == 0) f = i, bit = 1u << i;
    if (!bit) return nmt_json_skip_value(j); /* a field not plotted */
    if (*have & bit) {
        j->pos = key_at;
        return nmt_json_error(j, "field \"%s\" appears twice", key);
    }
    *have |= bit;
    if (bit == HAVE_EVENT) return nmt_json_string(j, event);
    if (bit == HAVE_STEP) return nmt_json_count(j, step);
    if (nmt_json_accept_word(j, "null")) {
        field[f] = NAN; /* e.g. a diverged loss: no point */
        return 0;
    }
    return nmt_json_number(j, &field[f]);
}

/* Parses one record; *event becomes its kind, or -1 for an event that is not plotted. */
static int parse_record(nmt_json *j, int *event, nmt_curves_record *record) {
    char *event_name = NULL;
    int64_t step = 0;
    double field[NUM_FIELDS];
    unsigned have = 0;
    int rc = nmt_json_expect(j, '{');
    if (rc == 0 && !nmt_json_accept(j, '}')) {
        do {
            char *key = NULL;
            size_t key_at = j->pos;
            rc = nmt_json_string(j, &key);
            if (rc == 0) rc = nmt_json_expect(j, ':');
            if (rc == 0) rc = parse_field(j, key, key_at, &event_name, &step, field, &have);
            free(key);
        } while (rc == 0 && nmt_json_accept(j, ','));
        if (rc == 0) rc = nmt_json_expect(j, '}');
    }
    if (rc == 0) rc = nmt_json_end(j);
    *event = -1;
    for (int e = 0; rc == 0 && event_name && e < NMT_CURVES_NUM_EVENTS; e++)
        if (strcmp(event_name, event_names[e]) == 0) *event = e;
    j->pos = 0;
    if (rc == 0 && !event_name) rc = nmt_json_error(j, "a record without \"event\"");
    else if (rc == 0 && *event >= 0 && !(have & HAVE_STEP))
        rc = nmt_json_error(j, "a %s record without \"step\"", event_name);
    else if (rc == 0 && step > LONG_MAX)
        rc = nmt_json_error(j, "step %lld is too large", (long long)step);
    free(event_name);
    if (rc < 0 || *event < 0) return rc;
    record->step = (long)step;
    record->elapsed_s = have & (1u << FIELD_ELAPSED) ? field[FIELD_ELAPSED] : NAN;
    for (int m = 0; m < NMT_CURVES_NUM_METRICS; m++)
        record->value[m] = (int)metrics[m].event == *event && (have & (1u << metrics[m].field)) ? field[metrics[m].field] : NAN;
    return 0;
}

/* Appends a record of `event`, first dropping the records it reruns (those from its step on). */
static int append_record(nmt_curves_run *run, int event, const nmt_curves_record *record, int *cap) {
    int n = run->num_records[event];
    while (n > 0 && run->records[event][n - 1].step >= record->step) n--;
    if (n == cap[event]) {
        int grown_cap = cap[event] ? 2 * cap[event] : 256;
        nmt_curves_record *grown = nmt_realloc(run->records[event], (size_t)grown_cap * sizeof *grown);
        if (!grown) return -1;
        run->records[event] = grown;
        cap[event] = grown_cap;
    }
    run->records[event][n] = *record;
    run->num_records[event] = n + 1;
    return 0;
}

/* Gives each valid record without a time the time of the train records around its step. */
static void fill_valid_times(nmt_curves_run *run) {
    const nmt_curves_record *train = run->records[NMT_CURVES_TRAIN];
    for (int v = 0; v < run->num_records[NMT_CURVES_VALID]; v++) {
        nmt_curves_record *r = &run->records[NMT_CURVES_VALID][v];
        if (!isnan(r->elapsed_s)) continue;
        const nmt_curves_record *below = NULL, *above = NULL;
        for (int t = 0; t < run->num_records[NMT_CURVES_TRAIN] && !above; t++) {
            if (isnan(train[t].elapsed_s)) continue;
            if (train[t].step <= r->step) below = &train[t];
            else above = &train[t];
        }
        if (below && above)
            r->elapsed_s = below->elapsed_s + (above->elapsed_s - below->elapsed_s) * (double)(r->step - below->step) /
                                                  (double)(above->step - below->step);
        else if (below || above)
            r->elapsed_s = (below ? below : above)->elapsed_s;
    }
}

static int is_blank(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!strchr(" \t\r", s[i])) return 0;
    return 1;
}

/* Whether text[n] is one JSON value (without allocating; the error is set when it is not). */
static int is_json(const char *text, size_t n) {
    nmt_json j;
    return nmt_json_init(&j, text, n, "", "", 1, 0) == 0 && nmt_json_skip_value(&j) == 0 && nmt_json_end(&j) == 0;
}

int nmt_curves_parse(nmt_curves_run *run, const char *text, size_t len, const char *path, const char *name) {
    memset(run, 0, sizeof *run);
    run->name = nmt_strdup(name);
    run->path = nmt_strdup(path);
    int rc = run->name && run->path ? 0 : -1, cap[NMT_CURVES_NUM_EVENTS] = {0};
    long line = 0;
    for (size_t at = 0; rc == 0 && at < len; line++) {
        const char *newline = memchr(text + at, '\n', len - at);
        size_t end = newline ? (size_t)(newline - text) : len;
        if (!is_blank(text + at, end - at)) {
            nmt_json j;
            int event = -1;
            nmt_curves_record record;
            rc = nmt_json_init(&j, text + at, end - at, path, "log record", line + 1, 0);
            if (rc == 0) rc = parse_record(&j, &event, &record);
            if (rc == 0 && event >= 0) rc = append_record(run, event, &record, cap);
            /* An unfinished last line (still being written) is not JSON; one that is JSON but was
             * refused, or memory that ran out, is a real error. */
            if (rc < 0 && !newline && !is_json(text + at, end - at)) {
                run->partial_line = line + 1;
                rc = 0;
            }
        }
        at = end + 1;
    }
    if (rc == 0) fill_valid_times(run);
    if (rc < 0) nmt_curves_free(run);
    return rc;
}

int nmt_curves_read(nmt_curves_run *run, const char *path, const char *name) {
    memset(run, 0, sizeof *run);
    char *text;
    size_t len;
    if (nmt_read_regular_file(path, NMT_READ_MAX, "a training log", &text, &len) < 0) return -1;
    int rc = nmt_curves_parse(run, text, len, path, name);
    free(text);
    return rc;
}

/* The base name of a directory path, as a new string; "." and the like become the real name. */
static char *directory_name(const char *dir) {
    size_t end = strlen(dir);
    while (end > 1 && dir[end - 1] == '/') end--;
    size_t start = end;
    while (start > 0 && dir[start - 1] != '/') start--;
    size_t n = end - start;
    if (n == 0 || (n == 1 && dir[start] == '.') || (n == 2 && dir[start] == '.' && dir[start + 1] == '.') ||
        (n == 1 && dir[start] == '/')) {
        char *real = realpath(dir, NULL);
        if (!real) return nmt_strdup(dir);
        char *slash = strrchr(real, '/');
        char *name = nmt_strdup(slash && slash[1] ? slash + 1 : real);
        free(real);
        return name;
    }
    char *name = nmt_malloc(n + 1);
    if (name) {
        memcpy(name, dir + start, n);
        name[n] = '\0';
    }
    return name;
}

/* The log of a path (a directory's train.log.jsonl, or the file itself) and the run's name. */
static int locate_run(const char *path, char **log, char **name) {
    struct stat st;
    *log = *name = NULL;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        *log = nmt_path_join(path, "train.log.jsonl");
        *name = directory_name(path);
    } else {
        *log = nmt_strdup(path);
        const char *slash = strrchr(path, '/');
        char *dir = slash ? nmt_strdup(path) : nmt_strdup(".");
        if (dir && slash) dir[slash == path ? 1 : slash - path] = '\0';
        *name = dir ? directory_name(dir) : NULL;
        free(dir);
    }
    if (*log && *name) return 0;
    free(*log);
    free(*name);
    return -1;
}

int nmt_curves_load(nmt_curves_run *runs, const char *const *paths, int n) {
    char **logs = nmt_calloc((size_t)(n > 0 ? n : 1), 2 * sizeof(char *)), **names = logs + n;
    if (!logs) return -1;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) rc = locate_run(paths[i], &logs[i], &names[i]);
    int loaded = 0;
    while (rc == 0 && loaded < n) {
        const char *name = names[loaded];
        for (int k = 0; k < n; k++)
            if (k != loaded && strcmp(names[k], name) == 0) name = paths[loaded]; /* ambiguous: the path */
        rc = nmt_curves_read(&runs[loaded], logs[loaded], name);
        if (rc == 0) loaded++;
    }
    if (rc < 0)
        for (int i = 0; i < loaded; i++) nmt_curves_free(&runs[i]);
    for (int i = 0; i < 2 * n; i++) free(logs[i]);
    free(logs);
    return rc;
}

void nmt_curves_free(nmt_curves_run *run) {
    free(run->name);
    free(run->path);
    for (int e = 0; e < NMT_CURVES_NUM_EVENTS; e++) free(run->records[e]);
    memset(run, 0, sizeof *run);
}

int nmt_curves_points(const nmt_curves_run *run, nmt_curves_metric metric, nmt_curves_axis axis, double **xs,
                      double **ys, int *n) {
    *xs = *ys = NULL;
    *n = 0;
    nmt_curves_event event = metrics[metric].event;
    const nmt_curves_record *records = run->records[event];
    int count = 0;
    for (int i = 0; i < run->num_records[event]; i++) count += isfinite(records[i].value[metric]) != 0;
    if (count == 0) return 0;
    *xs = nmt_malloc((size_t)count * sizeof **xs);
    *ys = *xs ? nmt_malloc((size_t)count * sizeof **ys) : NULL;
    if (!*ys) {
        free(*xs);
        *xs = NULL;
        return -1;
    }
    for (int i = 0; i < run->num_records[event]; i++) {
        const nmt_curves_record *r = &records[i];
        if (!isfinite(r->value[metric])) continue;
        double x = axis == NMT_CURVES_STEPS ? (double)r->step : r->elapsed_s / 60;
        if (!isfinite(x)) {
            free(*xs);
            free(*ys);
            *xs = *ys = NULL;
            *n = 0;
            return nmt_error_set("%s: the %s record of step %ld has no elapsed_s%s: plot against steps", run->path,
                                 event_names[event], r->step,
                                 event == NMT_CURVES_VALID ? " and no train record gives its time" : "");
        }
        (*xs)[*n] = x;
        (*ys)[*n] = r->value[metric];
        ++*n;
    }
    return 0;
}

/* ---- ticks ---- */

void nmt_curves_ticks_choose(double lo, double hi, int max_ticks, nmt_curves_ticks *ticks) {
    static const double mantissas[3] = {1, 2, 5};
    if (max_ticks < 2) max_ticks = 2;
    /* Keep the span finite (logs may hold absurd numbers) and nonzero. */
    const double limit = 1e300;
    lo = fmin(fmax(lo, -limit), limit);
    hi = fmin(fmax(hi, -limit), limit);
    if (!(hi > lo)) {
        double pad = lo != 0 ? fabs(lo) / 10 : 1;
        lo -= pad;
        hi += pad;
    }
    for (int e = (int)floor(log10((hi - lo) / (max_ticks - 1)));; e++) {
        for (int m = 0; m < 3; m++) {
            double step = mantissas[m] * pow(10, e);
            /* The tolerance keeps a tick that lo or hi sits on despite rounding (0.3 / 0.1 = 2.9999...). */
            double first = floor(lo / step + 1e-9), last = ceil(hi / step - 1e-9);
            if (last - first + 1 <= max_ticks) {
                ticks->first = first * step;
                ticks->step = step;
                ticks->count = (int)(last - first) + 1;
                ticks->decimals = e < 0 ? -e : 0;
                return;
            }
        }
    }
}

/* ---- drawing ---- */

enum {
    WIDTH = 820,
    LEFT = 86,          /* plot area's left edge: tick labels and the rotated axis label */
    RIGHT = 28,
    PANEL_HEIGHT = 180,
    PANEL_GAP = 52,     /* between panels: the upper panel's tick labels */
    FONT = 12,
    MAX_X_TICKS = 11,
    MAX_Y_TICKS = 6,
    MAX_MARKED = 50,    /* series with at most this many points get a marker at each */
};
static const double GLYPH_WIDTH = 0.6 * FONT; /* a generous estimate of a sans-serif glyph's advance */

/* Tableau 10 (matplotlib's default cycle): distinct hues of similar weight. */
static const nmt_plot_rgb palette[10] = {
    {31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40},   {148, 103, 189},
    {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207},
};
static const nmt_plot_rgb GRID = {232, 232, 232}, AXIS = {120, 120, 120};

typedef struct series {
    double *xs, *ys;
    int n;
} series;

static double text_width(const char *text, double size) {
    size_t chars = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) chars += (*p & 0xC0) != 0x80;
    return (double)chars * GLYPH_WIDTH * size / FONT;
}

static void format_tick(char *out, size_t size, const nmt_curves_ticks *t, int i) {
    double v = t->first + i * t->step;
    if (fabs(v) < t->step * 1e-6) v = 0; /* rounding leftovers would print as "-0.0" */
    snprintf(out, size, "%.*f", t->decimals, v);
}

/* Where legend entry i goes: rows of entries, wrapped to the plot width. Returns the number of rows. */
static int legend_layout(const nmt_curves_run *runs, int num_runs, double *x, int *row) {
    double at = LEFT, limit = WIDTH - RIGHT;
    int rows = num_runs > 0 ? 1 : 0;
    for (int i = 0; i < num_runs; i++) {
        double w = 28 + text_width(runs[i].name, FONT) + 22;
        if (at > LEFT && at + w > limit) {
            at = LEFT;
            rows++;
        }
        x[i] = at;
        row[i] = rows - 1;
        at += w;
    }
    return rows;
}

static void draw_panel(nmt_plot_canvas *c, double top, const char *label, const series *s, int num_runs,
                       const nmt_curves_ticks *xt, double *px, double *py) {
    const double plot_w = WIDTH - LEFT - RIGHT, bottom = top + PANEL_HEIGHT;
    double lo = INFINITY, hi = -INFINITY;
    for (int r = 0; r < num_runs; r++)
        for (int i = 0; i < s[r].n; i++) lo = fmin(lo, s[r].ys[i]), hi = fmax(hi, s[r].ys[i]);
    int empty = lo > hi;
    nmt_curves_ticks yt;
    nmt_curves_ticks_choose(empty ? 0 : lo, empty ? 1 : hi, MAX_Y_TICKS, &yt);
    const double y_span = yt.step * (yt.count - 1), x_span = xt->step * (xt->count - 1);
    char text[64];
    for (int i = 0; i < yt.count; i++) {
        double y = bottom - i * yt.step / y_span * PANEL_HEIGHT;
        if (i > 0) nmt_plot_line(c, LEFT, y, LEFT + plot_w, y, GRID, 1);
        format_tick(text, sizeof text, &yt, i);
        nmt_plot_text(c, LEFT - 8, y + 4, FONT - 1, NMT_PLOT_END, 0, text);
    }
    for (int i = 0; i < xt->count; i++) {
        double x = LEFT + i * xt->step / x_span * plot_w;
        if (i > 0) nmt_plot_line(c, x, top, x, bottom, GRID, 1);
        nmt_plot_line(c, x, bottom, x, bottom + 4, AXIS, 1);
        format_tick(text, sizeof text, xt, i);
        nmt_plot_text(c, x, bottom + 17, FONT - 1, NMT_PLOT_MIDDLE, 0, text);
    }
    nmt_plot_line(c, LEFT, top, LEFT, bottom, AXIS, 1);
    nmt_plot_line(c, LEFT, bottom, LEFT + plot_w, bottom, AXIS, 1);
    nmt_plot_text(c, LEFT - 56, top + PANEL_HEIGHT / 2.0, FONT + 1, NMT_PLOT_MIDDLE, -90, label);
    if (empty) nmt_plot_text(c, LEFT + plot_w / 2, top + PANEL_HEIGHT / 2.0, FONT, NMT_PLOT_MIDDLE, 0, "no data");
    for (int r = 0; r < num_runs; r++) {
        if (s[r].n == 0) continue;
        for (int i = 0; i < s[r].n; i++) {
            px[i] = LEFT + (s[r].xs[i] - xt->first) / x_span * plot_w;
            py[i] = bottom - (s[r].ys[i] - yt.first) / y_span * PANEL_HEIGHT;
        }
        nmt_plot_polyline(c, px, py, s[r].n, palette[r % 10], 1.8);
        for (int i = 0; s[r].n <= MAX_MARKED && i < s[r].n; i++)
            nmt_plot_rect(c, px[i] - 2.5, py[i] - 2.5, 5, 5, palette[r % 10], NULL);
    }
}

int nmt_curves_svg(nmt_strbuf *out, const nmt_curves_run *runs, int num_runs, const nmt_curves_options *options) {
    const int panels = options->num_metrics;
    if (panels < 1) return nmt_error_set("curves: no metric to draw");
    series *s = nmt_calloc((size_t)panels * (size_t)(num_runs > 0 ? num_runs : 1), sizeof *s);
    double *legend_x = nmt_calloc((size_t)(num_runs > 0 ? num_runs : 1), sizeof *legend_x);
    int *legend_row = nmt_calloc((size_t)(num_runs > 0 ? num_runs : 1), sizeof *legend_row);
    int rc = s && legend_x && legend_row ? 0 : -1, most = 1;
    double x_lo = 0, x_hi = -INFINITY;
    for (int p = 0; p < panels && rc == 0; p++)
        for (int r = 0; r < num_runs && rc == 0; r++) {
            series *t = &s[p * num_runs + r];
            rc = nmt_curves_points(&runs[r], options->metrics[p], options->axis, &t->xs, &t->ys, &t->n);
            for (int i = 0; i < t->n; i++) x_lo = fmin(x_lo, t->xs[i]), x_hi = fmax(x_hi, t->xs[i]);
            if (t->n > most) most = t->n;
        }
    double *px = rc == 0 ? nmt_malloc(2 * (size_t)most * sizeof *px) : NULL;
    if (rc == 0 && !px) rc = -1;
    if (rc == 0) {
        nmt_curves_ticks xt;
        nmt_curves_ticks_choose(x_lo, x_hi >= x_lo ? x_hi : 1, MAX_X_TICKS, &xt);
        int rows = legend_layout(runs, num_runs, legend_x, legend_row);
        const double legend_top = options->title ? 52 : 22, first_top = legend_top + rows * 20 + 14;
        nmt_plot_canvas c;
        nmt_plot_begin(&c, WIDTH, first_top + panels * (PANEL_HEIGHT + PANEL_GAP) + 4);
        if (options->title) nmt_plot_text(&c, WIDTH / 2.0, 28, FONT + 5, NMT_PLOT_MIDDLE, 0, options->title);
        for (int r = 0; r < num_runs; r++) {
            double y = legend_top + legend_row[r] * 20;
            nmt_plot_line(&c, legend_x[r], y - 4, legend_x[r] + 22, y - 4, palette[r % 10], 2.5);
            nmt_plot_text(&c, legend_x[r] + 28, y, FONT, NMT_PLOT_START, 0, runs[r].name);
        }
        for (int p = 0; p < panels; p++)
            draw_panel(&c, first_top + p * (PANEL_HEIGHT + PANEL_GAP), metrics[options->metrics[p]].label,
                       &s[p * num_runs], num_runs, &xt, px, px + most);
        const double last_bottom = first_top + (panels - 1) * (PANEL_HEIGHT + PANEL_GAP) + PANEL_HEIGHT;
        nmt_plot_text(&c, LEFT + (WIDTH - LEFT - RIGHT) / 2.0, last_bottom + 38, FONT + 1, NMT_PLOT_MIDDLE, 0,
                      options->axis == NMT_CURVES_STEPS ? "step" : "training time (minutes)");
        rc = nmt_plot_end(&c);
        if (rc == 0) {
            nmt_strbuf_printf(out, "%s", c.out.data);
            if (out->failed) rc = nmt_error_set("out of memory drawing an SVG picture");
        }
        nmt_strbuf_free(&c.out);
    }
    for (int i = 0; s && i < panels * num_runs; i++) {
        free(s[i].xs);
        free(s[i].ys);
    }
    free(s);
    free(px);
    free(legend_x);
    free(legend_row);
    return rc;
}
