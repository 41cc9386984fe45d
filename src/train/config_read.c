/* config_read: a training configuration (config.h) read from YAML with libyaml's document loader and
 * checked key by key against the table of config_keys.h, which also drives `--set` overrides and the
 * saved config (config_write.c), so the three can never disagree about a key's name, type, range or
 * place.
 *
 * Every error names where the value came from: "file:line:column: ..." for the file (libyaml's marks
 * are 0-based; we print 1-based), "--set key=value: ..." for an override. Paths are kept as written
 * while loading and resolved to absolute, lexically normalised paths at the end, once data.root is
 * final, so that a saved config means the same thing wherever it is read from.
 */
#include "train/config.h"
#include "train/config_keys.h"
#include "train/optim.h"
#include "base/io.h"
#include "base/util.h"
#include "text/langcode.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

/* ---- where a value came from, and errors that say so ---- */

typedef struct origin {
    int line, column;      /* 1-based; 0 when not from the file */
    const char *override;  /* the `--set` argument, or NULL */
} origin;

typedef struct loader {
    nmt_config *config;
    const char *file;
    origin *origins;          /* [nmt_config_key_count]: where each key was last set; all zero = default */
    int *override_failed;     /* set when an error is an override's (a command-line mistake) */
} loader;

static int fail(const loader *L, origin at, const char *fmt, ...) NMT_PRINTF(3, 4);
static int fail(const loader *L, origin at, const char *fmt, ...) {
    char message[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    if (at.override) {
        *L->override_failed = 1;
        return nmt_error_set("--set %s: %s", at.override, message);
    }
    return nmt_error_set("%s:%d:%d: %s", L->file, at.line ? at.line : 1, at.line ? at.column : 1, message);
}

static origin node_origin(const yaml_node_t *node, const char *override) {
    if (override) return (origin){0, 0, override};
    return (origin){(int)node->start_mark.line + 1, (int)node->start_mark.column + 1, NULL};
}

static origin key_origin(const loader *L, const char *path) {
    return L->origins[nmt_config_key_find(path) - nmt_config_keys];
}

static int was_set(origin at) { return at.line > 0 || at.override; }

/* ---- "did you mean" ---- */

static size_t edit_distance(const char *a, const char *b) {
    size_t lb = strlen(b), row[128];
    if (lb >= sizeof row / sizeof row[0]) return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; a[i - 1]; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t substitute = diagonal + (a[i - 1] != b[j - 1]);
            diagonal = row[j];
            size_t best = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
            row[j] = substitute < best ? substitute : best;
        }
    }
    return row[lb];
}

/* The valid key closest to `path`: within a few edits, or the same name in another section. */
static const char *closest_key(const char *path) {
    const char *best = NULL;
    size_t best_distance = (strlen(path) / 3 > 2 ? strlen(path) / 3 : 2) + 1; /* more edits than this: no match */
    for (int i = 0; i < nmt_config_key_count; i++) {
        size_t d = edit_distance(path, nmt_config_keys[i].path);
        if (strcmp(nmt_config_key_name(path), nmt_config_key_name(nmt_config_keys[i].path)) == 0) d = d < 1 ? d : 1;
        if (d < best_distance) {
            best = nmt_config_keys[i].path;
            best_distance = d;
        }
    }
    return best;
}

/* An unknown key: the closest valid key if one is near, else the valid keys of its deepest known section. */
static int unknown_key(const loader *L, origin at, const char *path) {
    const nmt_config_key *corpora = nmt_config_key_find("data.train");
    const size_t n = strlen(corpora->path);
    if (at.override && strncmp(path, corpora->path, n) == 0 && path[n] == '.')
        return fail(L, at, "unknown key '%s': %s is set whole, one corpus or a list of them (--set '%s={src: FILE, "
                    "tgt: FILE}')", path, corpora->path, corpora->path);
    const char *suggestion = closest_key(path);
    if (suggestion) return fail(L, at, "unknown key '%s' (did you mean '%s'?)", path, suggestion);
    size_t prefix = 0; /* length of "section." */
    for (int i = 0; i < nmt_config_key_count; i++) {
        size_t n = strlen(nmt_config_keys[i].path);
        if (nmt_config_keys[i].kind == NMT_CONFIG_KEY_SECTION && n + 1 > prefix && strncmp(path, nmt_config_keys[i].path, n) == 0 && path[n] == '.')
            prefix = n + 1;
    }
    char valid[512] = "";
    for (int i = 0; i < nmt_config_key_count; i++) {
        const char *p = nmt_config_keys[i].path;
        if (strncmp(p, path, prefix) != 0 || strlen(p) <= prefix || strchr(p + prefix, '.')) continue;
        size_t used = strlen(valid);
        snprintf(valid + used, sizeof valid - used, "%s%s", used ? ", " : "", p + prefix);
    }
    if (prefix == 0) return fail(L, at, "unknown key '%s' (valid keys: %s)", path, valid);
    return fail(L, at, "unknown key '%s' (valid keys in %.*s: %s)", path, (int)prefix - 1, path, valid);
}

/* ---- values ---- */

static int is_null(const yaml_node_t *node) {
    if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return 0;
    const char *v = (const char *)node->data.scalar.value;
    return v[0] == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
           strcmp(v, "NULL") == 0;
}

static const char *node_kind_name(const yaml_node_t *node) {
    if (node->type == YAML_MAPPING_NODE) return "a mapping";
    if (node->type == YAML_SEQUENCE_NODE) return "a list";
    if (is_null(node)) return "nothing";
    return node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? "a plain value" : "a quoted string";
}

static void describe_range(const nmt_config_key *k, char *out, size_t size) {
    int integer = k->kind == NMT_CONFIG_KEY_INT || k->kind == NMT_CONFIG_KEY_LONG;
    if (integer) {
        snprintf(out, size, "an integer from %.0f to %.0f", k->min, k->max);
    } else if (isinf(k->max)) {
        snprintf(out, size, "a number %s %g", (k->open & NMT_CONFIG_KEY_MIN_OPEN) ? ">" : ">=", k->min);
    } else {
        snprintf(out, size, "a number in %c%g, %g%c", (k->open & NMT_CONFIG_KEY_MIN_OPEN) ? '(' : '[', k->min, k->max,
                 (k->open & NMT_CONFIG_KEY_MAX_OPEN) ? ')' : ']');
    }
}

/* Reads one number for key k from a scalar node, checking its syntax and range. */
static int read_number(const loader *L, const nmt_config_key *k, const yaml_node_t *node, origin at, double *out) {
    char expected[96];
    describe_range(k, expected, sizeof expected);
    if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || is_null(node))
        return fail(L, at, "%s: expected %s, got %s", k->path, expected, node_kind_name(node));
    const char *text = (const char *)node->data.scalar.value;
    char *end;
    errno = 0;
    double v;
    if (k->kind == NMT_CONFIG_KEY_INT || k->kind == NMT_CONFIG_KEY_LONG) {
        long long i = strtoll(text, &end, 10);
        v = errno == ERANGE ? (i < 0 ? -INFINITY : INFINITY) : (double)i;
    } else {
        v = strtod(text, &end);
        if (errno == ERANGE && fabs(v) > 1) v = v < 0 ? -INFINITY : INFINITY;
    }
    if (end == text || *end != '\0' || isnan(v) || (isinf(v) && errno != ERANGE))
        return fail(L, at, "%s: expected %s, got '%s'", k->path, expected, text);
    if (isinf(v) && k->kind != NMT_CONFIG_KEY_INT && k->kind != NMT_CONFIG_KEY_LONG) return fail(L, at, "%s: %s is too large for a number (it overflows to infinity); expected %s", k->path, text, expected);
    int below = (k->open & NMT_CONFIG_KEY_MIN_OPEN) ? v <= k->min : v < k->min;
    int above = (k->open & NMT_CONFIG_KEY_MAX_OPEN) ? v >= k->max : v > k->max;
    if (below || above) return fail(L, at, "%s: expected %s, got %s", k->path, expected, text);
    *out = v;
    return 0;
}

static int read_seed(const loader *L, const nmt_config_key *k, const yaml_node_t *node, origin at) {
    const char *text = node->type == YAML_SCALAR_NODE ? (const char *)node->data.scalar.value : "";
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || end == text ||
        *end != '\0' || errno || text[0] == '-')
        return fail(L, at, "%s: expected an integer from 0 to %lu, got %s%s%s", k->path, ULONG_MAX,
                    node->type == YAML_SCALAR_NODE ? "'" : node_kind_name(node),
                    node->type == YAML_SCALAR_NODE ? text : "", node->type == YAML_SCALAR_NODE ? "'" : "");
    *NMT_CONFIG_FIELD(L->config, unsigned long, k->offset) = v;
    return 0;
}

static int read_word(const loader *L, const nmt_config_key *k, const yaml_node_t *node, origin at) {
    char allowed[128] = "";
    int found = -1;
    for (int i = 0; k->names[i]; i++) {
        size_t used = strlen(allowed);
        snprintf(allowed + used, sizeof allowed - used, "%s%s", i ? ", " : "", k->names[i]);
        if (node->type == YAML_SCALAR_NODE && strcmp((const char *)node->data.scalar.value, k->names[i]) == 0)
            found = i;
    }
    if (found < 0) {
        if (node->type != YAML_SCALAR_NODE || is_null(node))
            return fail(L, at, "%s: expected one of %s, got %s", k->path, allowed, node_kind_name(node));
        return fail(L, at, "%s: expected one of %s, got '%s'", k->path, allowed, (const char *)node->data.scalar.value);
    }
    if (k->kind == NMT_CONFIG_KEY_ENUM) *NMT_CONFIG_FIELD(L->config, int, k->offset) = found;
    else *NMT_CONFIG_FIELD(L->config, const char *, k->offset) = k->names[found];
    return 0;
}

/* A path's text from a scalar node, copied; `name` says whose it is in errors. */
static int path_text(const loader *L, const char *name, const yaml_node_t *node, origin at, char **copy) {
    if (node->type != YAML_SCALAR_NODE) return fail(L, at, "%s: expected a path, got %s", name, node_kind_name(node));
    const char *text = (const char *)node->data.scalar.value;
    if (strlen(text) != node->data.scalar.length) return fail(L, at, "%s: a path cannot contain a NUL character", name);
    if (text[0] == '\0') /* '' would mean the config's own directory: never what was meant */
        return fail(L, at, "%s: an empty path; name it (or leave the key out for its default)", name);
    return (*copy = nmt_strdup(text)) ? 0 : -1;
}

static int read_path(const loader *L, const nmt_config_key *k, const yaml_node_t *node, origin at) {
    char **field = NMT_CONFIG_FIELD(L->config, char *, k->offset), *copy;
    if (is_null(node)) {
        free(*field);
        *field = NULL;
        return 0;
    }
    if (path_text(L, k->path, node, at, &copy) < 0) return -1;
    free(*field);
    *field = copy;
    return 0;
}

/* One corpus of data.train, {src: FILE, tgt: FILE, weight: N}, into *out (zeroed by the caller); `name`
 * is "data.train" or "data.train item N" for errors. */
static int read_corpus(const loader *L, const nmt_config_key *k, yaml_document_t *doc, const yaml_node_t *node,
                       origin at, const char *name, nmt_corpus_paths *out) {
    if (node->type != YAML_MAPPING_NODE)
        return fail(L, at, "%s: expected a corpus, {src: FILE, tgt: FILE} with an optional weight, got %s", name,
                    node_kind_name(node));
    out->weight = 1;
    int seen[3] = {0, 0, 0}; /* src, tgt, weight */
    for (yaml_node_pair_t *pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top; pair++) {
        const yaml_node_t *key = yaml_document_get_node(doc, pair->key);
        const yaml_node_t *value = yaml_document_get_node(doc, pair->value);
        const origin key_at = at.override ? at : node_origin(key, NULL), value_at = at.override ? at : node_origin(value, NULL);
        const char *word = key->type == YAML_SCALAR_NODE ? (const char *)key->data.scalar.value : "";
        const int which = strcmp(word, "src") == 0 ? 0 : strcmp(word, "tgt") == 0 ? 1 : strcmp(word, "weight") == 0 ? 2 : -1;
        if (which < 0) return fail(L, key_at, "%s: unknown key '%s' (valid keys: src, tgt, weight)", name, word);
        if (seen[which]++) return fail(L, key_at, "%s: duplicate key '%s'", name, word);
        char what[96];
        snprintf(what, sizeof what, "%s.%s", name, word);
        if (which < 2) {
            if (path_text(L, what, value, value_at, which == 0 ? &out->src : &out->tgt) < 0) return -1;
            continue;
        }
        const nmt_config_key weight = {.path = what, .kind = NMT_CONFIG_KEY_INT, .min = k->min, .max = k->max};
        double v;
        if (read_number(L, &weight, value, value_at, &v) < 0) return -1;
        out->weight = (int)v;
    }
    if (!seen[0] || !seen[1])
        return fail(L, at, "%s.%s is missing (a corpus needs both src and tgt: {src: FILE, tgt: FILE})", name,
                    seen[0] ? "tgt" : "src");
    return 0;
}

/* data.train: one corpus (a mapping) or a list of them, replacing what was there. */
static int read_corpora(const loader *L, const nmt_config_key *k, yaml_document_t *doc, const yaml_node_t *node,
                        origin at) {
    nmt_corpus_paths *list = NMT_CONFIG_FIELD(L->config, nmt_corpus_paths, k->offset);
    int *count = NMT_CONFIG_FIELD(L->config, int, k->offset2);
    for (int i = 0; i < *count; i++) {
        free(list[i].src);
        free(list[i].tgt);
    }
    memset(list, 0, NMT_CONFIG_MAX_CORPORA * sizeof *list);
    *count = 0;
    if (is_null(node)) return 0;
    if (node->type != YAML_SEQUENCE_NODE) {
        *count = 1; /* before reading, so that a failure frees what was read */
        return read_corpus(L, k, doc, node, at, k->path, &list[0]);
    }
    const long items = (long)(node->data.sequence.items.top - node->data.sequence.items.start);
    if (items < 1 || items > NMT_CONFIG_MAX_CORPORA)
        return fail(L, at, "%s: expected a list of 1 to %d corpora, got %ld", k->path, NMT_CONFIG_MAX_CORPORA, items);
    for (int i = 0; i < (int)items; i++) {
        const yaml_node_t *item = yaml_document_get_node(doc, node->data.sequence.items.start[i]);
        char name[64];
        snprintf(name, sizeof name, "%s item %d", k->path, i + 1);
        *count = i + 1;
        if (read_corpus(L, k, doc, item, at.override ? at : node_origin(item, NULL), name, &list[i]) < 0) return -1;
    }
    return 0;
}

static int read_language(const loader *L, const nmt_config_key *k, const yaml_node_t *node, origin at) {
    char *field = NMT_CONFIG_FIELD(L->config, char, k->offset);
    if (is_null(node)) {
        field[0] = '\0';
        return 0;
    }
    if (node->type != YAML_SCALAR_NODE)
        return fail(L, at, "%s: expected a language code such as en, got %s", k->path, node_kind_name(node));
    const char *text = (const char *)node->data.scalar.value;
    if (strlen(text) != node->data.scalar.length || nmt_langcode_check(text, k->path) < 0)
        return fail(L, at, "%s", strlen(text) != node->data.scalar.length ? "a language code cannot contain a NUL"
                                                                           : nmt_error());
    snprintf(field, NMT_LANGCODE_MAX, "%s", text);
    return 0;
}

static int read_pair(const loader *L, const nmt_config_key *k, yaml_document_t *doc, const yaml_node_t *node, origin at) {
    int count = node->type == YAML_SEQUENCE_NODE
                    ? (int)(node->data.sequence.items.top - node->data.sequence.items.start) : -1;
    if (count != 2)
        return fail(L, at, "%s: expected a list of two numbers such as [0.9, 0.98], got %s", k->path,
                    count < 0 ? node_kind_name(node) : "a list of another length");
    double v[2];
    for (int i = 0; i < 2; i++) {
        const yaml_node_t *item = yaml_document_get_node(doc, node->data.sequence.items.start[i]);
        if (read_number(L, k, item, at.override ? at : node_origin(item, NULL), &v[i]) < 0) return -1;
    }
    *NMT_CONFIG_FIELD(L->config, double, k->offset) = v[0];
    *NMT_CONFIG_FIELD(L->config, double, k->offset2) = v[1];
    return 0;
}

static int read_mapping(loader *L, yaml_document_t *doc, const yaml_node_t *map, const char *section,
                        const char *override);

/* read_number has checked v against the key's bounds, so each conversion is exact or rounds a float. */
static void store_number(nmt_config *c, const nmt_config_key *k, double v) {
    switch (k->kind) {
    case NMT_CONFIG_KEY_INT: *NMT_CONFIG_FIELD(c, int, k->offset) = (int)v; break;
    case NMT_CONFIG_KEY_LONG: *NMT_CONFIG_FIELD(c, long, k->offset) = (long)v; break;
    case NMT_CONFIG_KEY_DOUBLE: *NMT_CONFIG_FIELD(c, double, k->offset) = v; break;
    case NMT_CONFIG_KEY_FLOAT: *NMT_CONFIG_FIELD(c, float, k->offset) = (float)v; break;
    default: break;
    }
}

/* Sets key k from a node; `override` is the --set argument when the node came from one. */
static int read_value(loader *L, const nmt_config_key *k, yaml_document_t *doc, const yaml_node_t *node,
                      const char *override) {
    origin at = node_origin(node, override);
    double v;
    switch (k->kind) {
    case NMT_CONFIG_KEY_SECTION:
        if (is_null(node)) return 0;
        if (node->type != YAML_MAPPING_NODE)
            return fail(L, at, "%s: expected a mapping of keys, got %s", k->path, node_kind_name(node));
        return read_mapping(L, doc, node, k->path, override);
    case NMT_CONFIG_KEY_INT:
    case NMT_CONFIG_KEY_LONG:
    case NMT_CONFIG_KEY_DOUBLE:
    case NMT_CONFIG_KEY_FLOAT:
        if (read_number(L, k, node, at, &v) < 0) return -1;
        store_number(L->config, k, v);
        return 0;
    case NMT_CONFIG_KEY_SEED: return read_seed(L, k, node, at);
    case NMT_CONFIG_KEY_ENUM:
    case NMT_CONFIG_KEY_CHOICE: return read_word(L, k, node, at);
    case NMT_CONFIG_KEY_PATH: return read_path(L, k, node, at);
    case NMT_CONFIG_KEY_PAIR: return read_pair(L, k, doc, node, at);
    case NMT_CONFIG_KEY_LANGUAGE: return read_language(L, k, node, at);
    case NMT_CONFIG_KEY_CORPORA: return read_corpora(L, k, doc, node, at);
    }
    return fail(L, at, "%s: internal error: unknown key kind", k->path);
}

static int read_mapping(loader *L, yaml_document_t *doc, const yaml_node_t *map, const char *section,
                        const char *override) {
    for (yaml_node_pair_t *pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
        const yaml_node_t *key = yaml_document_get_node(doc, pair->key);
        const yaml_node_t *value = yaml_document_get_node(doc, pair->value);
        origin at = node_origin(key, override);
        if (key->type != YAML_SCALAR_NODE) return fail(L, at, "expected a key name, got %s", node_kind_name(key));
        char path[256];
        int n = snprintf(path, sizeof path, "%s%s%s", section ? section : "", section ? "." : "",
                         (const char *)key->data.scalar.value);
        if (n < 0 || (size_t)n >= sizeof path) return fail(L, at, "key too long");
        const nmt_config_key *k = nmt_config_key_find(path);
        if (!k) return unknown_key(L, at, path);
        origin *previous = &L->origins[k - nmt_config_keys];
        if (!override && previous->line)
            return fail(L, at, "duplicate key '%s' (first given at line %d)", path, previous->line);
        *previous = at;
        if (read_value(L, k, doc, value, override) < 0) return -1;
    }
    return 0;
}

/* libyaml places a reader error (an invalid byte, a control character) by its byte offset only, not
 * by line and column: they are counted here from the text. */
static int yaml_reader_error(const yaml_parser_t *parser, const char *where, const char *text, size_t size) {
    size_t offset = parser->problem_offset < size ? parser->problem_offset : size;
    size_t line = 1, column = 1;
    for (size_t i = 0; i < offset; i++) {
        if (text[i] == '\n') line++, column = 1;
        else if (((unsigned char)text[i] & 0xC0) != 0x80) column++; /* characters, not continuation bytes */
    }
    const char *problem = parser->problem ? parser->problem : "malformed YAML";
    if (parser->problem_value >= 0)
        return nmt_error_set("%s:%zu:%zu: %s (byte 0x%02x)", where, line, column, problem, (unsigned)parser->problem_value & 0xFF);
    return nmt_error_set("%s:%zu:%zu: %s", where, line, column, problem);
}

static int yaml_syntax_error(const yaml_parser_t *parser, const char *where, int one_line, const char *text, size_t size) {
    if (parser->error == YAML_MEMORY_ERROR) return nmt_error_set("%s: out of memory parsing YAML", where);
    const char *problem = parser->problem ? parser->problem : "malformed YAML";
    if (one_line) return nmt_error_set("%s: malformed value: %s", where, problem);
    if (parser->error == YAML_READER_ERROR) return yaml_reader_error(parser, where, text, size);
    if (parser->context)
        return nmt_error_set("%s:%zu:%zu: %s %s", where, parser->problem_mark.line + 1,
                             parser->problem_mark.column + 1, problem, parser->context);
    return nmt_error_set("%s:%zu:%zu: %s", where, parser->problem_mark.line + 1, parser->problem_mark.column + 1,
                         problem);
}

static int apply_override(loader *L, const char *override) {
    origin at = {0, 0, override};
    const char *eq = strchr(override, '=');
    if (!eq || eq == override) return fail(L, at, "expected section.key=value");
    char path[256];
    size_t n = (size_t)(eq - override);
    if (n >= sizeof path) return fail(L, at, "key too long");
    memcpy(path, override, n);
    path[n] = '\0';
    const nmt_config_key *k = nmt_config_key_find(path);
    if (!k) return unknown_key(L, at, path);
    L->origins[k - nmt_config_keys] = at;

    /* The value is read as YAML, so lists ([0.9,0.98]) and mappings ({src: a, tgt: b}) work too. */
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) return nmt_error_set("out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)eq + 1, strlen(eq + 1));
    if (!yaml_parser_load(&parser, &doc)) {
        char where[300];
        snprintf(where, sizeof where, "--set %s", override);
        yaml_syntax_error(&parser, where, 1, eq + 1, strlen(eq + 1));
        *L->override_failed = parser.error != YAML_MEMORY_ERROR;
        yaml_parser_delete(&parser);
        return -1;
    }
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    yaml_node_t empty = {.type = YAML_SCALAR_NODE};
    empty.data.scalar.value = (yaml_char_t *)"";
    empty.data.scalar.style = YAML_PLAIN_SCALAR_STYLE;
    int rc = read_value(L, k, &doc, root ? root : &empty, override);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return rc;
}

/* ---- paths ---- */

/* Removes "." and empty components and applies ".." lexically, in place; `path` is absolute. */
static void normalize_path(char *path) {
    size_t len = 0;
    const char *in = path;
    while (*in) {
        while (*in == '/') in++;
        const char *segment = in;
        while (*in && *in != '/') in++;
        size_t n = (size_t)(in - segment);
        if (n == 0 || (n == 1 && segment[0] == '.')) continue;
        if (n == 2 && segment[0] == '.' && segment[1] == '.') {
            while (len > 0 && path[len - 1] != '/') len--;
            if (len > 0) len--;
            continue;
        }
        path[len++] = '/';
        memmove(path + len, segment, n);
        len += n;
    }
    if (len == 0) path[len++] = '/';
    path[len] = '\0';
}

/* An absolute, normalised path for `path` taken relative to the absolute directory `base`. */
static char *absolute_path(const char *base, const char *path) {
    char *joined = nmt_path_join(base, path);
    if (joined) normalize_path(joined);
    return joined;
}

static int resolve_in_place(char **field, const char *base) {
    if (!*field) return 0;
    char *resolved = absolute_path(base, *field);
    if (!resolved) return -1;
    free(*field);
    *field = resolved;
    return 0;
}

/* The config file's directory as an absolute path. */
static char *config_dir(const char *file) {
    char *cwd = getcwd(NULL, 0);
    if (!cwd) {
        nmt_error_set("cannot read the current directory: %s", strerror(errno));
        return NULL;
    }
    char *dir = absolute_path(cwd, file);
    free(cwd);
    if (!dir) return NULL;
    char *slash = strrchr(dir, '/');
    if (slash == dir) slash[1] = '\0';
    else *slash = '\0';
    return dir;
}

/* The default output directory: runs/<config file name without extension>. */
static int default_output(nmt_config *c) {
    const char *slash = strrchr(c->path, '/');
    const char *base = slash ? slash + 1 : c->path;
    const char *dot = strrchr(base, '.');
    size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    c->output = nmt_malloc(n + 6);
    if (!c->output) return -1;
    snprintf(c->output, n + 6, "runs/%.*s", (int)n, base);
    return 0;
}

static int resolve_paths(loader *L) {
    nmt_config *c = L->config;
    if (!c->output && default_output(c) < 0) return -1;
    if (!c->data_root && !(c->data_root = nmt_strdup("."))) return -1;
    char *dir = config_dir(L->file);
    if (!dir) return -1;
    int rc = 0;
    for (int i = 0; i < nmt_config_key_count && rc == 0; i++)
        if (nmt_config_keys[i].kind == NMT_CONFIG_KEY_PATH && nmt_config_keys[i].base == NMT_CONFIG_KEY_FROM_CONFIG_DIR)
            rc = resolve_in_place(NMT_CONFIG_FIELD(c, char *, nmt_config_keys[i].offset), dir);
    for (int i = 0; i < nmt_config_key_count && rc == 0; i++)
        if (nmt_config_keys[i].kind == NMT_CONFIG_KEY_PATH && nmt_config_keys[i].base == NMT_CONFIG_KEY_FROM_DATA_ROOT)
            rc = resolve_in_place(NMT_CONFIG_FIELD(c, char *, nmt_config_keys[i].offset), c->data_root);
    for (int i = 0; i < c->num_train && rc == 0; i++)
        if ((rc = resolve_in_place(&c->train[i].src, c->data_root)) == 0)
            rc = resolve_in_place(&c->train[i].tgt, c->data_root);
    free(dir);
    return rc;
}

/* ---- checks across keys ---- */

static int require_train(const loader *L) {
    if (L->config->num_train > 0) return 0;
    origin at = key_origin(L, "data.train");
    if (!was_set(at)) at = key_origin(L, "data");
    return fail(L, at, "data.train is missing (the training corpus: train: {src: FILE, tgt: FILE}, or a list of such "
                "corpora, each with an optional weight)");
}

static int require_corpus(const loader *L, const char *section, const nmt_corpus_paths *paths) {
    if (!paths->src == !paths->tgt) return 0;
    char src_key[64], tgt_key[64];
    snprintf(src_key, sizeof src_key, "%s.src", section);
    snprintf(tgt_key, sizeof tgt_key, "%s.tgt", section);
    origin at = key_origin(L, section);
    if (!was_set(at)) at = key_origin(L, "data");
    return fail(L, at, "%s is missing (%s needs both src and tgt: %s: {src: FILE, tgt: FILE})",
                paths->src ? tgt_key : src_key, section, nmt_config_key_name(section));
}

static int check_model(const loader *L) {
    const nmt_model_config *m = &L->config->model;
    origin at = key_origin(L, "model.heads");
    if (!was_set(at)) at = key_origin(L, "model.d_model");
    if (m->d_model % m->heads != 0)
        return fail(L, at, "model.d_model %d is not divisible by model.heads %d", m->d_model, m->heads);
    if (m->positions == NMT_POSITIONS_ROPE && (m->d_model / m->heads) % 2 != 0) {
        origin p = key_origin(L, "model.positions");
        return fail(L, was_set(p) ? p : at, "rope positions need an even head size, but d_model/heads = %d/%d = %d",
                    m->d_model, m->heads, m->d_model / m->heads);
    }
    /* Anything else the engine refuses (an odd d_model, ...), placed at the model section. */
    if (nmt_model_config_check(m) < 0) return fail(L, key_origin(L, "model"), "%s", nmt_error());
    return 0;
}

/* linear and cosine end at decay_steps after the warm-up, min_lr at most the peak; 1 - lr wd stays above 0. */
static int check_schedule(const loader *L) {
    const nmt_config *c = L->config;
    if (c->lr * c->weight_decay >= 1)
        return fail(L, key_origin(L, "train.optimizer.weight_decay"), "train.optimizer.weight_decay %g times the peak "
                    "train.optimizer.lr %g is %g: each step would scale the weights by 1 - %g, which must stay above 0",
                    c->weight_decay, c->lr, c->lr * c->weight_decay, c->lr * c->weight_decay);
    if (c->lr_schedule == NMT_LR_INVERSE_SQRT) return 0;
    const char *name = nmt_config_key_find("train.optimizer.schedule")->names[c->lr_schedule];
    origin at = key_origin(L, "train.optimizer.decay_steps");
    if (!was_set(at)) at = key_origin(L, "train.optimizer.schedule");
    if (c->decay_steps <= c->warmup)
        return fail(L, at,
                    "train.optimizer.schedule %s needs train.optimizer.decay_steps after the warm-up (%d), got %d: the "
                    "step where the rate reaches min_lr, e.g. the steps train.max_minutes allows",
                    name, c->warmup, c->decay_steps);
    if (c->min_lr > c->lr) {
        origin m = key_origin(L, "train.optimizer.min_lr");
        return fail(L, was_set(m) ? m : at, "train.optimizer.min_lr %g is above the peak train.optimizer.lr %g",
                    c->min_lr, c->lr);
    }
    return 0;
}

int nmt_config_load(nmt_config *c, const char *path, const char *const *overrides) {
    char *text;
    size_t size;
    if (nmt_read_file_max(path, NMT_CONFIG_MAX_BYTES, "a config", &text, &size) < 0) {
        *c = nmt_config_default();
        return -1;
    }
    int rc = nmt_config_parse(c, text, size, path, overrides);
    free(text);
    return rc;
}

/* 1 when path names no file, or a regular file that begins as the configs nmt writes. */
static int written_by_nmt(const char *path) {
    FILE *fp;
    size_t size;
    if (nmt_open_regular(path, &fp, &size) < 0) {
        struct stat st;
        const int none = lstat(path, &st) != 0 && errno == ENOENT;
        nmt_error_clear();
        return none;
    }
    char head[sizeof NMT_CONFIG_HEADER];
    const size_t got = fread(head, 1, sizeof head - 1, fp);
    fclose(fp);
    return got == sizeof head - 1 && memcmp(head, NMT_CONFIG_HEADER, got) == 0;
}

char *nmt_config_dir_path(const char *dir) {
    char *resolved = nmt_path_join(dir, "config.resolved.yaml"), *plain = nmt_path_join(dir, "config.yaml");
    if (!resolved || !plain) {
        free(resolved);
        free(plain);
        return NULL;
    }
    const int plain_is_nmts = !nmt_file_exists(resolved) && written_by_nmt(plain);
    free(plain_is_nmts ? resolved : plain);
    return plain_is_nmts ? plain : resolved;
}

int nmt_config_load_regular(nmt_config *c, const char *path) {
    *c = nmt_config_default();
    char *text = NULL;
    size_t size;
    int rc = nmt_read_regular_file(path, NMT_CONFIG_MAX_BYTES, "a config", &text, &size) == 0
                 ? nmt_config_parse(c, text, size, path, NULL)
                 : -1;
    free(text);
    return rc;
}

int nmt_config_load_dir(nmt_config *c, const char *dir) {
    char *path = nmt_config_dir_path(dir);
    int rc = path ? nmt_config_load_regular(c, path) : (*c = nmt_config_default(), -1);
    free(path);
    return rc;
}

int nmt_config_parse(nmt_config *c, const char *text, size_t size, const char *path, const char *const *overrides) {
    *c = nmt_config_default();
    int override_failed = 0;
    loader L = {.config = c, .file = path, .override_failed = &override_failed,
                .origins = nmt_calloc((size_t)nmt_config_key_count, sizeof(origin))};
    yaml_parser_t parser;
    yaml_document_t doc;
    int rc = -1, have_doc = 0;
    c->path = L.origins ? nmt_strdup(path) : NULL;
    if (!c->path || !yaml_parser_initialize(&parser)) {
        if (c->path) nmt_error_set("out of memory");
        free(L.origins);
        nmt_config_free(c);
        return -1;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, size);
    if (!yaml_parser_load(&parser, &doc)) {
        yaml_syntax_error(&parser, path, 0, text, size);
        goto done;
    }
    have_doc = 1;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root && !is_null(root)) {
        if (root->type != YAML_MAPPING_NODE) {
            fail(&L, node_origin(root, NULL), "expected a mapping of sections (model, vocab, data, train, output), got %s",
                 node_kind_name(root));
            goto done;
        }
        if (read_mapping(&L, &doc, root, NULL, NULL) < 0) goto done;
        yaml_document_t next;
        if (!yaml_parser_load(&parser, &next)) {
            yaml_syntax_error(&parser, path, 0, text, size);
            goto done;
        }
        int more = yaml_document_get_root_node(&next) != NULL;
        origin at = more ? node_origin(yaml_document_get_root_node(&next), NULL) : (origin){0};
        yaml_document_delete(&next);
        if (more) {
            fail(&L, at, "a config holds one YAML document; found a second");
            goto done;
        }
    }
    for (const char *const *o = overrides; o && *o; o++) if (apply_override(&L, *o) < 0) goto done;
    if (check_model(&L) < 0 || check_schedule(&L) < 0 || require_train(&L) < 0 ||
        require_corpus(&L, "data.valid", &c->valid) < 0 || resolve_paths(&L) < 0)
        goto done;
    /* The languages not given: the training files' suffixes, when they are language codes. */
    if (!c->src_lang[0]) nmt_langcode_of_path(c->train[0].src, c->src_lang);
    if (!c->tgt_lang[0]) nmt_langcode_of_path(c->train[0].tgt, c->tgt_lang);
    rc = 0;
done:
    if (have_doc) yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    free(L.origins);
    if (rc < 0) nmt_config_free(c);
    return rc < 0 && override_failed ? NMT_CONFIG_BAD_OVERRIDE : rc;
}

/* ---- saving ---- */
