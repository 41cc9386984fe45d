/* report: sacreBLEU's text, JSON and table layouts (Score.format, print_single_results,
 * print_results_table with tabulate's fancy_grid and latex_booktabs). */
#include "eval/report.h"

#include "eval/pynum.h"
#include "eval/signature.h"
#include "base/utf8.h"
#include "base/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int append_spaces(nmt_strbuf *out, long n) {
    for (long i = 0; i < n; i++)
        if (nmt_strbuf_append(out, " ", 1) < 0) return -1;
    return 0;
}

/* Python's len(): code points. */
static long cp_len(const char *s, size_t n) {
    long count = 0;
    for (size_t i = 0; i < n; i++) count += ((unsigned char)s[i] & 0xC0) != 0x80;
    return count;
}

/* json.dumps of a string; ensure_ascii escapes everything beyond ASCII as \uXXXX. */
static int append_json_string(nmt_strbuf *out, const char *s, int ensure_ascii) {
    if (nmt_strbuf_append(out, "\"", 1) < 0) return -1;
    size_t len = strlen(s), i = 0;
    while (i < len) {
        unsigned char b = (unsigned char)s[i];
        int rc = 0;
        if (b == '"') rc = nmt_strbuf_puts(out, "\\\"");
        else if (b == '\\') rc = nmt_strbuf_puts(out, "\\\\");
        else if (b == '\n') rc = nmt_strbuf_puts(out, "\\n");
        else if (b == '\r') rc = nmt_strbuf_puts(out, "\\r");
        else if (b == '\t') rc = nmt_strbuf_puts(out, "\\t");
        else if (b == '\b') rc = nmt_strbuf_puts(out, "\\b");
        else if (b == '\f') rc = nmt_strbuf_puts(out, "\\f");
        else if (b < 0x20) rc = nmt_strbuf_printf(out, "\\u%04x", b);
        else if (b < 0x80 || !ensure_ascii) rc = nmt_strbuf_append(out, s + i, 1);
        if (rc < 0) return -1;
        if (b >= 0x80 && ensure_ascii) {
            uint32_t cp = nmt_utf8_next(s, &i);
            if (cp >= 0x10000) {
                cp -= 0x10000;
                rc = nmt_strbuf_printf(out, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
            } else {
                rc = nmt_strbuf_printf(out, "\\u%04x", cp);
            }
            if (rc < 0) return -1;
        } else {
            i++;
        }
    }
    return nmt_strbuf_append(out, "\"", 1);
}

/* json.dumps of float(f"{x:.{width}f}") or of x itself (width < 0). */
static int append_json_number(nmt_strbuf *out, double x, int width) {
    char repr[40];
    nmt_pynum_repr(width >= 0 ? nmt_pynum_rounded(x, width) : x, repr);
    return nmt_strbuf_puts(out, repr);
}

static int append_fixed(nmt_strbuf *out, double x, int width) {
    char buf[400];
    size_t n = nmt_pynum_fixed(x, width, buf, sizeof buf);
    return nmt_strbuf_append(out, buf, n < sizeof buf ? n : sizeof buf - 1);
}

int nmt_report_score_format(const nmt_report_score *score, int width, int score_only, int json, nmt_strbuf *out) {
    int show_ci = score->has_ci && score->mean > 0;
    nmt_strbuf sc = {0}, confidence = {0};
    int rc = -1;
    if (show_ci && (nmt_strbuf_puts(&confidence, "μ = ") < 0 || append_fixed(&confidence, score->mean, width) < 0 ||
                    nmt_strbuf_puts(&confidence, " ± ") < 0 || append_fixed(&confidence, score->ci, width) < 0))
        goto done;
    if (append_fixed(&sc, score->score, width) < 0) goto done;
    if (show_ci && nmt_strbuf_printf(&sc, " (%s)", confidence.data) < 0) goto done;
    if (score_only) {
        rc = nmt_strbuf_puts(out, sc.data);
        goto done;
    }
    if (!json) {
        if (nmt_strbuf_puts(out, score->name) < 0) goto done;
        if (score->signature[0] && nmt_strbuf_printf(out, "|%s", score->signature) < 0) goto done;
        if (nmt_strbuf_printf(out, " = %s", sc.data) < 0) goto done;
        if (score->verbose[0] && nmt_strbuf_printf(out, " %s", score->verbose) < 0) goto done;
        rc = 0;
        goto done;
    }
    if (nmt_strbuf_puts(out, "{\n \"name\": ") < 0 || append_json_string(out, score->name, 0) < 0 ||
        nmt_strbuf_puts(out, ",\n \"score\": ") < 0 || append_json_number(out, score->score, width) < 0 ||
        nmt_strbuf_puts(out, ",\n \"signature\": ") < 0 || append_json_string(out, score->signature, 0) < 0)
        goto done;
    if (show_ci &&
        (nmt_strbuf_puts(out, ",\n \"confidence_mean\": ") < 0 || append_json_number(out, score->mean, width) < 0 ||
         nmt_strbuf_puts(out, ",\n \"confidence_var\": ") < 0 || append_json_number(out, score->ci, width) < 0 ||
         nmt_strbuf_puts(out, ",\n \"confidence\": ") < 0 || append_json_string(out, confidence.data, 0) < 0))
        goto done;
    if (score->verbose[0] &&
        (nmt_strbuf_puts(out, ",\n \"verbose_score\": ") < 0 || append_json_string(out, score->verbose, 0) < 0))
        goto done;
    /* every "key:value" of the signature becomes a field */
    for (const char *p = score->signature; *p;) {
        const char *bar = strchr(p, '|'), *end = bar ? bar : p + strlen(p), *colon = memchr(p, ':', (size_t)(end - p));
        if (!colon) break;
        char key[64], value[128];
        snprintf(key, sizeof key, "%.*s", (int)(colon - p), p);
        snprintf(value, sizeof value, "%.*s", (int)(end - colon - 1), colon + 1);
        if (nmt_strbuf_puts(out, ",\n ") < 0 || append_json_string(out, key, 0) < 0 || nmt_strbuf_puts(out, ": ") < 0 ||
            append_json_string(out, value, 0) < 0)
            goto done;
        p = bar ? bar + 1 : end;
    }
    rc = nmt_strbuf_puts(out, "\n}");
done:
    nmt_strbuf_free(&sc);
    nmt_strbuf_free(&confidence);
    return rc;
}

int nmt_report_single(const char *const *results, int count, int json, nmt_strbuf *out) {
    if (json) {
        if (count > 1 && nmt_strbuf_puts(out, "[\n") < 0) return -1;
        for (int i = 0; i < count; i++)
            if ((i && nmt_strbuf_puts(out, ",\n") < 0) || nmt_strbuf_puts(out, results[i]) < 0) return -1;
        return nmt_strbuf_puts(out, count > 1 ? "\n]\n" : "\n");
    }
    if (count == 1) return nmt_strbuf_printf(out, "%s\n", results[0]);
    /* Align on the first '=' (its position minus one, in code points); lines without one come first. */
    long widest = 0;
    for (int i = 0; i < count; i++) {
        const char *eq = strchr(results[i], '=');
        if (!eq) {
            if (nmt_strbuf_printf(out, "%s\n", results[i]) < 0) return -1;
        } else if (cp_len(results[i], (size_t)(eq - results[i])) - 1 > widest) {
            widest = cp_len(results[i], (size_t)(eq - results[i])) - 1;
        }
    }
    for (int i = 0; i < count; i++) {
        const char *eq = strchr(results[i], '=');
        if (!eq) continue;
        if (append_spaces(out, widest - (cp_len(results[i], (size_t)(eq - results[i])) - 1)) < 0 ||
            nmt_strbuf_printf(out, "%s\n", results[i]) < 0)
            return -1;
    }
    return 0;
}

/* --- the multi-system table ----------------------------------------------------------------- */

/* A column: its header and cells (strings that may hold '\n'), its alignment and width. */
typedef struct column {
    char *header;
    char **cells;
    int right; /* right-aligned (the system names), else centred */
    long width;
} column;

/* tabulate's number detection: the whole cell reads as a Python int or float. */
static int parse_number(const char *s, int *is_int) {
    char *end;
    if (!*s) return 0;
    strtol(s, &end, 10);
    *is_int = *end == '\0';
    if (*is_int) return 1;
    strtod(s, &end);
    return *end == '\0';
}

/* Width of a possibly multi-line cell: its widest line. */
static long cell_width(const char *s) {
    long widest = 0;
    while (1) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        long w = cp_len(s, n);
        if (w > widest) widest = w;
        if (!nl) return widest;
        s = nl + 1;
    }
}

/* One line of a cell padded to the column width: right-aligned or centred (left gets the floor). */
static int append_aligned(nmt_strbuf *out, const char *s, size_t n, long width, int right) {
    long pad = width - cp_len(s, n);
    if (pad < 0) pad = 0;
    long left = right ? pad : pad / 2;
    if (append_spaces(out, left) < 0 || nmt_strbuf_append(out, s, n) < 0) return -1;
    return append_spaces(out, pad - left);
}

static int append_rule(nmt_strbuf *out, const column *cols, int ncols, const char *begin, const char *fill,
                       const char *sep, const char *end) {
    if (nmt_strbuf_puts(out, begin) < 0) return -1;
    for (int c = 0; c < ncols; c++) {
        if (c && nmt_strbuf_puts(out, sep) < 0) return -1;
        for (long k = 0; k < cols[c].width + 2; k++)
            if (nmt_strbuf_puts(out, fill) < 0) return -1;
    }
    return nmt_strbuf_printf(out, "%s\n", end);
}

/* LaTeX escaping of tabulate's LATEX_ESCAPE_RULES. */
static int append_latex(nmt_strbuf *out, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const char *rep = NULL;
        switch (s[i]) {
        case '&': rep = "\\&"; break;
        case '%': rep = "\\%"; break;
        case '$': rep = "\\$"; break;
        case '#': rep = "\\#"; break;
        case '_': rep = "\\_"; break;
        case '^': rep = "\\^{}"; break;
        case '{': rep = "\\{"; break;
        case '}': rep = "\\}"; break;
        case '~': rep = "\\textasciitilde{}"; break;
        case '\\': rep = "\\textbackslash{}"; break;
        case '<': rep = "\\ensuremath{<}"; break;
        case '>': rep = "\\ensuremath{>}"; break;
        default: break;
        }
        if (rep ? nmt_strbuf_puts(out, rep) < 0 : nmt_strbuf_append(out, s + i, 1) < 0) return -1;
    }
    return 0;
}

/* The n-th line of a cell (empty past its last line). */
static const char *cell_line(const char *s, int n, size_t *len) {
    for (int k = 0; k < n; k++) {
        const char *nl = strchr(s, '\n');
        if (!nl) {
            *len = 0;
            return NULL;
        }
        s = nl + 1;
    }
    const char *nl = strchr(s, '\n');
    *len = nl ? (size_t)(nl - s) : strlen(s);
    return s;
}

static int cell_lines(const char *s) {
    int n = 1;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* One table row (the header when row < 0), each line of multi-line cells on its own output line.
 * A cell is padded by one space on each side; latex_booktabs escapes it and joins with '&'. */
static int append_row(nmt_strbuf *out, const column *cols, int ncols, int row, int latex) {
    int lines = 1;
    for (int c = 0; c < ncols; c++) {
        int n = cell_lines(row < 0 ? cols[c].header : cols[c].cells[row]);
        if (n > lines) lines = n;
    }
    nmt_strbuf text = {0}, cell = {0};
    int rc = 0;
    for (int line = 0; line < lines && rc == 0; line++) {
        text.len = 0;
        rc = nmt_strbuf_puts(&text, latex ? "" : "│");
        for (int c = 0; c < ncols && rc == 0; c++) {
            size_t len;
            const char *s = cell_line(row < 0 ? cols[c].header : cols[c].cells[row], line, &len);
            cell.len = 0;
            if (c) rc = nmt_strbuf_puts(&text, latex ? "&" : "│");
            if (rc == 0) rc = nmt_strbuf_puts(&cell, " ");
            if (rc == 0) rc = append_aligned(&cell, s ? s : "", len, cols[c].width, s ? cols[c].right : 0);
            if (rc == 0) rc = nmt_strbuf_puts(&cell, " ");
            if (rc == 0) rc = latex ? append_latex(&text, cell.data, cell.len) : nmt_strbuf_append(&text, cell.data, cell.len);
        }
        if (rc == 0) rc = nmt_strbuf_puts(&text, latex ? "\\\\" : "│");
        while (rc == 0 && text.len && text.data[text.len - 1] == ' ') text.len--; /* _build_simple_row's rstrip */
        if (rc == 0) rc = nmt_strbuf_append(out, text.data, text.len);
        if (rc == 0) rc = nmt_strbuf_puts(out, "\n");
    }
    nmt_strbuf_free(&text);
    nmt_strbuf_free(&cell);
    return rc;
}

static void free_columns(column *cols, int ncols, int nrows) {
    if (!cols) return;
    for (int c = 0; c < ncols; c++) {
        free(cols[c].header);
        if (cols[c].cells)
            for (int r = 0; r < nrows; r++) free(cols[c].cells[r]);
        free(cols[c].cells);
    }
    free(cols);
}

/* A cell's text as sacreBLEU's _format_score_lines writes it. */
static char *format_cell(const nmt_report_table *t, const nmt_report_cell *cell, int width, int multiline) {
    nmt_strbuf s = {0};
    int rc = append_fixed(&s, cell->score, width);
    if (rc == 0 && t->test != NMT_REPORT_NO_TEST && cell->has_ci)
        rc = nmt_strbuf_puts(&s, " (") < 0 || append_fixed(&s, cell->mean, width) < 0 || nmt_strbuf_puts(&s, " ± ") < 0 ||
                     append_fixed(&s, cell->ci, width) < 0 || nmt_strbuf_puts(&s, ")") < 0
                 ? -1
                 : 0;
    if (rc == 0 && t->test != NMT_REPORT_NO_TEST && cell->has_p)
        rc = nmt_strbuf_printf(&s, "%s(p = %.4f)%s", multiline ? "\n" : " ", cell->p_value, cell->p_value > 0.05 ? "" : "*");
    if (rc < 0 || !s.data) {
        nmt_strbuf_free(&s);
        return rc < 0 ? NULL : nmt_strdup("");
    }
    return s.data;
}

static int append_json_table(const nmt_report_table *t, int width, nmt_strbuf *out) {
    if (nmt_strbuf_puts(out, "[\n") < 0) return -1;
    for (int s = 0; s < t->systems; s++) {
        if (nmt_strbuf_puts(out, s ? ",\n    {\n" : "    {\n") < 0 || nmt_strbuf_puts(out, "        \"system\": ") < 0 ||
            append_json_string(out, t->system_names[s], 1) < 0)
            return -1;
        for (int m = 0; m < t->metrics; m++) {
            const nmt_report_cell *cell = &t->cells[s * t->metrics + m];
            if (nmt_strbuf_puts(out, ",\n        ") < 0 || append_json_string(out, t->metric_names[m], 1) < 0 ||
                nmt_strbuf_puts(out, ": ") < 0)
                return -1;
            if (t->test == NMT_REPORT_NO_TEST) {
                char value[400];
                nmt_pynum_fixed(cell->score, width, value, sizeof value);
                if (append_json_string(out, value, 1) < 0) return -1;
                continue;
            }
            if (nmt_strbuf_puts(out, "{\n            \"score\": ") < 0 || append_json_number(out, cell->score, -1) < 0 ||
                nmt_strbuf_puts(out, ",\n            \"p_value\": ") < 0 ||
                (cell->has_p ? append_json_number(out, cell->p_value, -1) : nmt_strbuf_puts(out, "null")) < 0 ||
                nmt_strbuf_puts(out, ",\n            \"mean\": ") < 0 ||
                (cell->has_ci ? append_json_number(out, cell->mean, -1) : nmt_strbuf_puts(out, "null")) < 0 ||
                nmt_strbuf_puts(out, ",\n            \"ci\": ") < 0 ||
                (cell->has_ci ? append_json_number(out, cell->ci, -1) : nmt_strbuf_puts(out, "null")) < 0 ||
                nmt_strbuf_puts(out, "\n        }") < 0)
                return -1;
        }
        if (nmt_strbuf_puts(out, "\n    }") < 0) return -1;
    }
    return nmt_strbuf_puts(out, "\n]\n");
}

static int append_test_explanation(const nmt_report_table *t, nmt_strbuf *out) {
    int bs = t->test == NMT_REPORT_PAIRED_BOOTSTRAP;
    char msg[160];
    int n = snprintf(msg, sizeof msg, "Paired %s test with %ld %s", bs ? "bootstrap resampling" : "approximate randomization",
                     t->samples, bs ? "resampling trials" : "trials");
    nmt_strbuf rule = {0};
    for (int i = 0; i < n; i++)
        if (nmt_strbuf_append(&rule, "-", 1) < 0) {
            nmt_strbuf_free(&rule);
            return -1;
        }
    int rc = nmt_strbuf_printf(out, "%s\n%s\n%s\n", rule.data, msg, rule.data);
    nmt_strbuf_free(&rule);
    /* sacreBLEU names the baseline only when it is marked "Baseline: " (files, not standard input) */
    const char *baseline = strncmp(t->system_names[0], "Baseline:", 9) == 0 ? t->system_names[0] : "";
    if (rc < 0 || nmt_strbuf_printf(out, " - Each system is pairwise compared to %s.\n", baseline) < 0) return -1;
    if (nmt_strbuf_puts(out, bs ? "   Actual system score / bootstrap estimated true mean / 95% CI are provided for each metric.\n"
                        : "   Actual system score is provided for each metric.\n") < 0)
        return -1;
    return nmt_strbuf_puts(out,
                   "\n"
                   " - Null hypothesis: the system and the baseline translations are essentially\n"
                   "   generated by the same underlying process. For a given system and the baseline,\n"
                   "   the p-value is roughly the probability of the absolute score difference (delta)\n"
                   "   or higher occurring due to chance, under the assumption that the null hypothesis is correct.\n"
                   "\n"
                   " - Assuming a significance threshold of 0.05, the null hypothesis can be rejected\n"
                   "   for p-values < 0.05 (marked with \"*\"). This means that the delta is unlikely to be attributed\n"
                   "   to chance, hence the system is significantly \"different\" than the baseline.\n"
                   "   Otherwise, the p-values are highlighted in red.\n"
                   "\n"
                   " - NOTE: Significance does not tell whether a system is \"better\" than the baseline but rather\n"
                   "   emphasizes the \"difference\" of the systems in terms of the replicability of the delta.\n"
                   "\n");
}

int nmt_report_table_format(const nmt_report_table *t, nmt_report_format format, int width, nmt_strbuf *out) {
    if (format == NMT_REPORT_JSON) return append_json_table(t, width, out);
    int latex = format == NMT_REPORT_LATEX, ncols = t->metrics + 1, nrows = t->systems, rc = -1;
    column *cols = nmt_calloc((size_t)ncols, sizeof *cols);
    if (!cols) return -1;
    int bootstrap_title = 0;
    for (int c = 0; c < ncols; c++) {
        column *col = &cols[c];
        col->right = c == 0;
        if (!(col->cells = nmt_calloc((size_t)nrows, sizeof *col->cells))) goto done;
        for (int r = 0; r < nrows; r++) {
            if (c == 0) col->cells[r] = nmt_strdup(t->system_names[r]);
            else col->cells[r] = format_cell(t, &t->cells[r * t->metrics + c - 1], width, !latex);
            if (!col->cells[r]) goto done;
            if (c > 0 && t->test != NMT_REPORT_NO_TEST && t->cells[r * t->metrics + c - 1].has_ci) bootstrap_title = 1;
        }
        char header[96];
        snprintf(header, sizeof header, "%s%s", c == 0 ? "System" : t->metric_names[c - 1],
                 c > 0 && bootstrap_title ? " (μ ± 95% CI)" : "");
        if (!(col->header = nmt_strdup(header))) goto done;
        /* A column of numbers is re-formatted by tabulate with floatfmt (ints stay as they are). */
        int numeric = 1, all_int = 1;
        for (int r = 0; r < nrows && numeric; r++) {
            int is_int = 0;
            numeric = parse_number(col->cells[r], &is_int);
            all_int &= is_int;
        }
        if (numeric && !all_int)
            for (int r = 0; r < nrows; r++) {
                char value[400];
                nmt_pynum_fixed(strtod(col->cells[r], NULL), width, value, sizeof value);
                free(col->cells[r]);
                if (!(col->cells[r] = nmt_strdup(value))) goto done;
            }
        col->width = cp_len(col->header, strlen(col->header)) + 2; /* tabulate's MIN_PADDING */
        for (int r = 0; r < nrows; r++)
            if (cell_width(col->cells[r]) > col->width) col->width = cell_width(col->cells[r]);
    }
    if (latex) {
        if (nmt_strbuf_puts(out, "\\begin{tabular}{") < 0) goto done;
        for (int c = 0; c < ncols; c++)
            if (nmt_strbuf_puts(out, cols[c].right ? "r" : "c") < 0) goto done;
        if (nmt_strbuf_puts(out, "}\n\\toprule\n") < 0 || append_row(out, cols, ncols, -1, 1) < 0 ||
            nmt_strbuf_puts(out, "\\midrule\n") < 0)
            goto done;
        for (int r = 0; r < nrows; r++)
            if (append_row(out, cols, ncols, r, 1) < 0) goto done;
        if (nmt_strbuf_puts(out, "\\bottomrule\n\\end{tabular}\n") < 0) goto done;
    } else {
        if (append_rule(out, cols, ncols, "╒", "═", "╤", "╕") < 0 || append_row(out, cols, ncols, -1, 0) < 0 ||
            append_rule(out, cols, ncols, "╞", "═", "╪", "╡") < 0)
            goto done;
        for (int r = 0; r < nrows; r++) {
            if (r && append_rule(out, cols, ncols, "├", "─", "┼", "┤") < 0) goto done;
            if (append_row(out, cols, ncols, r, 0) < 0) goto done;
        }
        if (append_rule(out, cols, ncols, "╘", "═", "╧", "╛") < 0) goto done;
    }
    if (nmt_strbuf_puts(out, "\n") < 0) goto done;
    if (t->test != NMT_REPORT_NO_TEST && append_test_explanation(t, out) < 0) goto done;
    if (nmt_strbuf_puts(out, "-----------------\nMetric signatures\n-----------------\n") < 0) goto done;
    for (int m = 0; m < t->metrics; m++)
        if (nmt_strbuf_printf(out, " - %-10s %s\n", t->metric_names[m], t->signatures[m]) < 0) goto done;
    rc = 0;
done:
    free_columns(cols, ncols, nrows);
    return rc;
}
