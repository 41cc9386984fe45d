/* config_write: a training config as YAML text, the keys in the table's order with their sections
 * opened as they come, every number in the shortest form that reads back exactly (nmt train saves it
 * as the run's config.yaml), and one key's value as text (how a resumed run names a changed setting).
 */
#include "train/config_keys.h"
#include "base/io.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* The shortest %g form that reads back as the same double (or float, when as_float). */
static void format_number(double v, int as_float, char *out, size_t size) {
    if (v == floor(v) && fabs(v) < 1e15) { /* 60, not 6e+01 */
        snprintf(out, size, "%.0f", v);
        return;
    }
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(out, size, "%.*g", precision, v);
        double back = strtod(out, NULL);
        if (as_float ? (float)back == (float)v : back == v) return;
    }
}

static void write_quoted(FILE *out, const char *s) {
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(out, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f) fprintf(out, "\\x%02x", *p);
        else fputc(*p, out);
    }
    fputc('"', out);
}

/* Writes the headers of the sections of `path` that are not already open; `open` holds the section of
 * the previous key written ("data.train") and is updated. */
static void open_sections(FILE *out, const char *path, char *open, size_t open_size) {
    const char *end = strrchr(path, '.');
    int section_len = end ? (int)(end - path) : 0;
    int matched = 1;
    for (int start = 0, depth = 0; start < section_len; depth++) {
        int stop = start;
        while (stop < section_len && path[stop] != '.') stop++;
        if (matched && (strncmp(open + start, path + start, (size_t)(stop - start)) != 0 ||
                        (open[stop] != '.' && open[stop] != '\0')))
            matched = 0;
        if (!matched) fprintf(out, "%*s%.*s:\n", 2 * depth, "", stop - start, path + start);
        start = stop + 1;
    }
    snprintf(open, open_size, "%.*s", section_len, path);
}

/* data.train as YAML flow: one corpus of weight 1 as {src: A, tgt: B}, else a list with the weights. */
static void write_corpora(FILE *out, const nmt_config *c, const nmt_config_key *k) {
    const nmt_corpus_paths *list = (const nmt_corpus_paths *)((const char *)c + k->offset);
    const int count = NMT_CONFIG_VALUE(c, int, k->offset2), plain = count == 1 && list[0].weight == 1;
    if (!plain) fputc('[', out);
    for (int i = 0; i < count; i++) {
        fputs(i ? ", {src: " : "{src: ", out);
        write_quoted(out, list[i].src);
        fputs(", tgt: ", out);
        write_quoted(out, list[i].tgt);
        if (!plain) fprintf(out, ", weight: %d", list[i].weight);
        fputc('}', out);
    }
    if (!plain) fputc(']', out);
}

static void write_value(FILE *out, const nmt_config *c, const nmt_config_key *k) {
    char a[40], b[40];
    switch (k->kind) {
    case NMT_CONFIG_KEY_INT: fprintf(out, "%d", NMT_CONFIG_VALUE(c, int, k->offset)); break;
    case NMT_CONFIG_KEY_LONG: fprintf(out, "%ld", NMT_CONFIG_VALUE(c, long, k->offset)); break;
    case NMT_CONFIG_KEY_SEED: fprintf(out, "%lu", NMT_CONFIG_VALUE(c, unsigned long, k->offset)); break;
    case NMT_CONFIG_KEY_DOUBLE: format_number(NMT_CONFIG_VALUE(c, double, k->offset), 0, a, sizeof a); fputs(a, out); break;
    case NMT_CONFIG_KEY_FLOAT: format_number(NMT_CONFIG_VALUE(c, float, k->offset), 1, a, sizeof a); fputs(a, out); break;
    case NMT_CONFIG_KEY_ENUM: fputs(k->names[NMT_CONFIG_VALUE(c, int, k->offset)], out); break;
    case NMT_CONFIG_KEY_CHOICE: fputs(NMT_CONFIG_VALUE(c, char *, k->offset), out); break;
    case NMT_CONFIG_KEY_PATH: write_quoted(out, NMT_CONFIG_VALUE(c, char *, k->offset)); break;
    case NMT_CONFIG_KEY_PAIR:
        format_number(NMT_CONFIG_VALUE(c, double, k->offset), 0, a, sizeof a);
        format_number(NMT_CONFIG_VALUE(c, double, k->offset2), 0, b, sizeof b);
        fprintf(out, "[%s, %s]", a, b);
        break;
    case NMT_CONFIG_KEY_LANGUAGE: fputs((const char *)c + k->offset, out); break;
    case NMT_CONFIG_KEY_CORPORA: write_corpora(out, c, k); break;
    case NMT_CONFIG_KEY_SECTION: break;
    }
}

/* A path, language or list of corpora left unset: not written. */
static int unset(const nmt_config *c, const nmt_config_key *k) {
    return (k->kind == NMT_CONFIG_KEY_PATH && !NMT_CONFIG_VALUE(c, char *, k->offset)) ||
           (k->kind == NMT_CONFIG_KEY_CORPORA && NMT_CONFIG_VALUE(c, int, k->offset2) == 0) ||
           (k->kind == NMT_CONFIG_KEY_LANGUAGE && !NMT_CONFIG_VALUE(c, char, k->offset));
}

char *nmt_config_format(const nmt_config *c) {
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (!out) {
        nmt_error_set("cannot build the config text: %s", strerror(errno));
        return NULL;
    }
    fputs(NMT_CONFIG_HEADER, out);
    char open[128] = "";
    for (int i = 0; i < nmt_config_key_count; i++) {
        const nmt_config_key *k = &nmt_config_keys[i];
        if (k->kind == NMT_CONFIG_KEY_SECTION || unset(c, k)) continue;
        open_sections(out, k->path, open, sizeof open);
        int depth = 0;
        for (const char *p = k->path; *p; p++) depth += *p == '.';
        fprintf(out, "%*s%s: ", 2 * depth, "", nmt_config_key_name(k->path));
        write_value(out, c, k);
        fputc('\n', out);
    }
    int failed = ferror(out);
    if (fclose(out) != 0 || failed || !text) {
        free(text);
        nmt_error_set("out of memory building the config text");
        return NULL;
    }
    return text;
}

char *nmt_config_value_text(const nmt_config *c, const char *key) {
    const nmt_config_key *k = nmt_config_key_find(key);
    if (!k || k->kind == NMT_CONFIG_KEY_SECTION) {
        nmt_error_set("'%s' is not a config key", key);
        return NULL;
    }
    if (unset(c, k)) return nmt_strdup("(none)");
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (!out) {
        nmt_error_set("cannot format %s: %s", key, strerror(errno));
        return NULL;
    }
    write_value(out, c, k);
    int failed = ferror(out);
    if (fclose(out) != 0 || failed || !text) {
        free(text);
        nmt_error_set("out of memory formatting %s", key);
        return NULL;
    }
    return text;
}

int nmt_config_save(const nmt_config *c, const char *path) {
    char *text = nmt_config_format(c);
    if (!text) return nmt_error_prefix("%s", path);
    int rc = nmt_atomic_write(path, text, strlen(text));
    free(text);
    return rc;
}
