/* config: the training configuration, read from YAML with libyaml's document loader and checked key by
 * key against one table (`keys` below) that also drives `--set` overrides and nmt_config_save, so the
 * three can never disagree about a key's name, type, range or place in the struct.
 *
 * Every error names where the value came from: "file:line:column: ..." for the file (libyaml's marks
 * are 0-based; we print 1-based), "--set key=value: ..." for an override. Paths are kept as written
 * while loading and resolved to absolute, lexically normalised paths at the end, once data.root is
 * final, so that a saved config means the same thing wherever it is read from.
 */
#include "train/config.h"
#include "train/optim.h"
#include "train/precision.h"
#include "base/io.h"
#include "model/model_config.h"
#include "base/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

typedef enum {
    KEY_SECTION, /* a mapping of further keys */
    KEY_INT,     /* int */
    KEY_LONG,    /* long */
    KEY_SEED,    /* unsigned long, any value */
    KEY_DOUBLE,  /* double */
    KEY_FLOAT,   /* float */
    KEY_ENUM,    /* a word from `names`, stored as its index in an enum field */
    KEY_CHOICE,  /* a word from `names`, stored as a pointer to the static name */
    KEY_PATH,    /* char *, owned; resolved against `base` at the end */
    KEY_PAIR,    /* [a, b]: two doubles at offset and offset2 */
} key_kind;

typedef enum { FROM_CONFIG_DIR, FROM_DATA_ROOT } path_base;

enum { MIN_OPEN = NMT_MODEL_CONFIG_MIN_OPEN, MAX_OPEN = NMT_MODEL_CONFIG_MAX_OPEN }; /* which ends of [min, max] are excluded */

typedef struct key_spec {
    const char *path;         /* "train.optimizer.lr" */
    key_kind kind;
    size_t offset, offset2;   /* into nmt_config */
    double min, max;          /* numbers: the allowed range */
    int open;                 /* MIN_OPEN | MAX_OPEN */
    const char *const *names; /* KEY_ENUM, KEY_CHOICE: allowed words in enum order, NULL-terminated */
    path_base base;           /* KEY_PATH */
} key_spec;

static const char *const vocab_type_names[] = {"unigram", "bpe", NULL};
static const char *const precision_names[] = {"fp32", "bf16", "auto", NULL}; /* in nmt_train_precision's order */
_Static_assert(NMT_TRAIN_PRECISION_FP32 == 0 && NMT_TRAIN_PRECISION_BF16 == 1 && NMT_TRAIN_PRECISION_AUTO == 2,
               "train.precision's words follow nmt_train_precision");
static const char *const switch_names[] = {"false", "true", NULL};
static const char *const lr_schedule_names[] = {"inverse_sqrt", "linear", "cosine", NULL}; /* in nmt_lr_decay's order */
_Static_assert(NMT_LR_INVERSE_SQRT == 0 && NMT_LR_LINEAR == 1 && NMT_LR_COSINE == 2,
               "train.optimizer.schedule's words follow nmt_lr_decay");

#define AT(field) offsetof(nmt_config, field)
#define SECTION(p) {.path = p, .kind = KEY_SECTION}
#define NUMBER(p, k, field, lo, hi, op) {.path = p, .kind = k, .offset = AT(field), .min = lo, .max = hi, .open = op}
#define WORD(p, k, field, words) {.path = p, .kind = k, .offset = AT(field), .names = words}
/* A key of the model section, from the model's own list of its fields. */
#define MODEL_KEY(field_, kind_, default_, min_, max_, open_, names_)                                               \
    {.path = "model." #field_, .kind = KEY_##kind_, .offset = AT(model.field_), .min = min_, .max = max_,          \
     .open = open_, .names = names_},
#define PATH(p, field, from) {.path = p, .kind = KEY_PATH, .offset = AT(field), .base = from}

/* In file order: nmt_config_save writes the keys in this order, opening sections as they come. */
static const key_spec keys[] = {
    SECTION("model"),
    NMT_MODEL_CONFIG_FIELDS(MODEL_KEY)
    SECTION("vocab"),
    PATH("vocab.model", vocab_model, FROM_CONFIG_DIR),
    NUMBER("vocab.size", KEY_INT, vocab_size, 8, 1 << 24, 0),
    WORD("vocab.type", KEY_CHOICE, vocab_type, vocab_type_names),
    NUMBER("vocab.sampling_alpha", KEY_DOUBLE, sampling_alpha, 0, INFINITY, 0),
    SECTION("data"),
    PATH("data.root", data_root, FROM_CONFIG_DIR),
    SECTION("data.train"),
    PATH("data.train.src", train.src, FROM_DATA_ROOT),
    PATH("data.train.tgt", train.tgt, FROM_DATA_ROOT),
    SECTION("data.valid"),
    PATH("data.valid.src", valid.src, FROM_DATA_ROOT),
    PATH("data.valid.tgt", valid.tgt, FROM_DATA_ROOT),
    NUMBER("data.max_length", KEY_INT, max_length, 1, 1 << 20, 0),
    SECTION("train"),
    NUMBER("train.batch_tokens", KEY_INT, batch_tokens, 1, 1 << 30, 0),
    NUMBER("train.update_freq", KEY_INT, update_freq, 1, 1 << 20, 0),
    NUMBER("train.batch_pieces", KEY_INT, batch_pieces, 1, 1 << 20, 0),
    SECTION("train.optimizer"),
    NUMBER("train.optimizer.lr", KEY_DOUBLE, lr, 0, INFINITY, MIN_OPEN),
    {.path = "train.optimizer.betas", .kind = KEY_PAIR, .offset = AT(beta1), .offset2 = AT(beta2),
     .min = 0, .max = 1, .open = MAX_OPEN},
    NUMBER("train.optimizer.eps", KEY_DOUBLE, adam_eps, 0, INFINITY, MIN_OPEN),
    NUMBER("train.optimizer.warmup", KEY_INT, warmup, 0, INT_MAX, 0),
    WORD("train.optimizer.schedule", KEY_ENUM, lr_schedule, lr_schedule_names),
    NUMBER("train.optimizer.decay_steps", KEY_INT, decay_steps, 0, INT_MAX, 0),
    NUMBER("train.optimizer.min_lr", KEY_DOUBLE, min_lr, 0, INFINITY, 0),
    NUMBER("train.optimizer.clip_norm", KEY_DOUBLE, clip_norm, 0, INFINITY, 0),
    NUMBER("train.optimizer.weight_decay", KEY_DOUBLE, weight_decay, 0, 1, MAX_OPEN),
    NUMBER("train.label_smoothing", KEY_DOUBLE, label_smoothing, 0, 1, MAX_OPEN),
    NUMBER("train.dropout_src", KEY_DOUBLE, dropout_src, 0, 1, MAX_OPEN),
    NUMBER("train.dropout_trg", KEY_DOUBLE, dropout_trg, 0, 1, MAX_OPEN),
    NUMBER("train.rdrop_alpha", KEY_DOUBLE, rdrop_alpha, 0, 1000, 0),
    NUMBER("train.ema_decay", KEY_DOUBLE, ema_decay, 0, 1, MAX_OPEN),
    WORD("train.precision", KEY_ENUM, precision, precision_names),
    WORD("train.shard_optimizer", KEY_ENUM, shard_optimizer, switch_names),
    NUMBER("train.max_steps", KEY_LONG, max_steps, 0, 1e15, 0),
    NUMBER("train.max_epochs", KEY_LONG, max_epochs, 0, 1e15, 0),
    NUMBER("train.max_minutes", KEY_DOUBLE, max_minutes, 0, INFINITY, 0),
    NUMBER("train.valid_every", KEY_INT, valid_every, 1, INT_MAX, 0),
    NUMBER("train.valid_beam", KEY_INT, valid_beam, 1, 1024, 0),
    NUMBER("train.valid_length_penalty", KEY_DOUBLE, valid_length_penalty, 0, 10, 0),
    NUMBER("train.save_every", KEY_INT, save_every, 1, INT_MAX, 0),
    NUMBER("train.keep_last", KEY_INT, keep_last, 1, 1000000, 0),
    NUMBER("train.patience", KEY_INT, patience, 0, INT_MAX, 0),
    {.path = "train.seed", .kind = KEY_SEED, .offset = AT(seed)},
    PATH("train.init_from", init_from, FROM_CONFIG_DIR),
    PATH("output", output, FROM_CONFIG_DIR),
};
enum { NUM_KEYS = sizeof keys / sizeof keys[0] };

#define FIELD(config, type, offset) ((type *)((char *)(config) + (offset)))
#define VALUE(config, type, offset) (*(const type *)((const char *)(config) + (offset)))

nmt_config nmt_config_default(void) {
    nmt_config defaults, *c = &defaults;
    memset(c, 0, sizeof *c);
    c->model = nmt_model_config_default();
    c->vocab_size = 8000;
    c->vocab_type = vocab_type_names[0];
    c->max_length = 128;
    c->batch_tokens = 4096;
    c->update_freq = 1;
    c->batch_pieces = 1;
    c->lr = 1e-3;
    c->beta1 = 0.9;
    c->beta2 = 0.98;
    c->adam_eps = 1e-9;
    c->warmup = 800;
    c->clip_norm = 0.0;
    c->label_smoothing = 0.1;
    c->valid_every = 500;
    c->valid_beam = 1;
    c->valid_length_penalty = 0.6;
    c->save_every = 500;
    c->keep_last = 5;
    c->patience = 10;
    c->seed = 1;
    return defaults;
}

void nmt_config_free(nmt_config *c) {
    for (int i = 0; i < NUM_KEYS; i++) {
        if (keys[i].kind != KEY_PATH) continue;
        free(*FIELD(c, char *, keys[i].offset));
        *FIELD(c, char *, keys[i].offset) = NULL;
    }
    free(c->path);
    c->path = NULL;
}

static const key_spec *find_key(const char *path) {
    for (int i = 0; i < NUM_KEYS; i++)
        if (strcmp(keys[i].path, path) == 0) return &keys[i];
    return NULL;
}

/* ---- where a value came from, and errors that say so ---- */

typedef struct origin {
    int line, column;      /* 1-based; 0 when not from the file */
    const char *override;  /* the `--set` argument, or NULL */
} origin;

typedef struct loader {
    nmt_config *config;
    const char *file;
    origin origins[NUM_KEYS]; /* where each key was last set; all zero = default */
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
    return L->origins[find_key(path) - keys];
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

static const char *last_component(const char *path) {
    const char *dot = strrchr(path, '.');
    return dot ? dot + 1 : path;
}

/* The valid key closest to `path`: within a few edits, or the same name in another section. */
static const char *closest_key(const char *path) {
    const char *best = NULL;
    size_t best_distance = (strlen(path) / 3 > 2 ? strlen(path) / 3 : 2) + 1; /* more edits than this: no match */
    for (int i = 0; i < NUM_KEYS; i++) {
        size_t d = edit_distance(path, keys[i].path);
        if (strcmp(last_component(path), last_component(keys[i].path)) == 0) d = d < 1 ? d : 1;
        if (d < best_distance) {
            best = keys[i].path;
            best_distance = d;
        }
    }
    return best;
}

/* An unknown key: the closest valid key if one is near, else the valid keys of its deepest known section. */
static int unknown_key(const loader *L, origin at, const char *path) {
    const char *suggestion = closest_key(path);
    if (suggestion) return fail(L, at, "unknown key '%s' (did you mean '%s'?)", path, suggestion);
    size_t prefix = 0; /* length of "section." */
    for (int i = 0; i < NUM_KEYS; i++) {
        size_t n = strlen(keys[i].path);
        if (keys[i].kind == KEY_SECTION && n + 1 > prefix && strncmp(path, keys[i].path, n) == 0 && path[n] == '.')
            prefix = n + 1;
    }
    char valid[512] = "";
    for (int i = 0; i < NUM_KEYS; i++) {
        const char *p = keys[i].path;
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

static void describe_range(const key_spec *k, char *out, size_t size) {
    int integer = k->kind == KEY_INT || k->kind == KEY_LONG;
    if (integer) {
        snprintf(out, size, "an integer from %.0f to %.0f", k->min, k->max);
    } else if (isinf(k->max)) {
        snprintf(out, size, "a number %s %g", (k->open & MIN_OPEN) ? ">" : ">=", k->min);
    } else {
        snprintf(out, size, "a number in %c%g, %g%c", (k->open & MIN_OPEN) ? '(' : '[', k->min, k->max,
                 (k->open & MAX_OPEN) ? ')' : ']');
    }
}

/* Reads one number for key k from a scalar node, checking its syntax and range. */
static int read_number(const loader *L, const key_spec *k, const yaml_node_t *node, origin at, double *out) {
    char expected[96];
    describe_range(k, expected, sizeof expected);
    if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || is_null(node))
        return fail(L, at, "%s: expected %s, got %s", k->path, expected, node_kind_name(node));
    const char *text = (const char *)node->data.scalar.value;
    char *end;
    errno = 0;
    double v;
    if (k->kind == KEY_INT || k->kind == KEY_LONG) {
        long long i = strtoll(text, &end, 10);
        v = errno == ERANGE ? (i < 0 ? -INFINITY : INFINITY) : (double)i;
    } else {
        v = strtod(text, &end);
        if (errno == ERANGE && fabs(v) > 1) v = v < 0 ? -INFINITY : INFINITY;
    }
    if (end == text || *end != '\0' || isnan(v) || (isinf(v) && errno != ERANGE))
        return fail(L, at, "%s: expected %s, got '%s'", k->path, expected, text);
    if (isinf(v) && k->kind != KEY_INT && k->kind != KEY_LONG) return fail(L, at, "%s: %s is too large for a number (it overflows to infinity); expected %s", k->path, text, expected);
    int below = (k->open & MIN_OPEN) ? v <= k->min : v < k->min;
    int above = (k->open & MAX_OPEN) ? v >= k->max : v > k->max;
    if (below || above) return fail(L, at, "%s: expected %s, got %s", k->path, expected, text);
    *out = v;
    return 0;
}

static int read_seed(const loader *L, const key_spec *k, const yaml_node_t *node, origin at) {
    const char *text = node->type == YAML_SCALAR_NODE ? (const char *)node->data.scalar.value : "";
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || end == text ||
        *end != '\0' || errno || text[0] == '-')
        return fail(L, at, "%s: expected an integer from 0 to %lu, got %s%s%s", k->path, ULONG_MAX,
                    node->type == YAML_SCALAR_NODE ? "'" : node_kind_name(node),
                    node->type == YAML_SCALAR_NODE ? text : "", node->type == YAML_SCALAR_NODE ? "'" : "");
    *FIELD(L->config, unsigned long, k->offset) = v;
    return 0;
}

static int read_word(const loader *L, const key_spec *k, const yaml_node_t *node, origin at) {
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
    if (k->kind == KEY_ENUM) *FIELD(L->config, int, k->offset) = found;
    else *FIELD(L->config, const char *, k->offset) = k->names[found];
    return 0;
}

static int read_path(const loader *L, const key_spec *k, const yaml_node_t *node, origin at) {
    char **field = FIELD(L->config, char *, k->offset);
    if (is_null(node)) {
        free(*field);
        *field = NULL;
        return 0;
    }
    if (node->type != YAML_SCALAR_NODE)
        return fail(L, at, "%s: expected a path, got %s", k->path, node_kind_name(node));
    const char *text = (const char *)node->data.scalar.value;
    if (strlen(text) != node->data.scalar.length)
        return fail(L, at, "%s: a path cannot contain a NUL character", k->path);
    if (text[0] == '\0') /* '' would mean the config's own directory: never what was meant */
        return fail(L, at, "%s: an empty path; name it (or leave the key out for its default)", k->path);
    char *copy = nmt_strdup(text);
    if (!copy) return -1;
    free(*field);
    *field = copy;
    return 0;
}

static int read_pair(const loader *L, const key_spec *k, yaml_document_t *doc, const yaml_node_t *node, origin at) {
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
    *FIELD(L->config, double, k->offset) = v[0];
    *FIELD(L->config, double, k->offset2) = v[1];
    return 0;
}

static int read_mapping(loader *L, yaml_document_t *doc, const yaml_node_t *map, const char *section,
                        const char *override);

/* Sets key k from a node; `override` is the --set argument when the node came from one. */
static int read_value(loader *L, const key_spec *k, yaml_document_t *doc, const yaml_node_t *node,
                      const char *override) {
    origin at = node_origin(node, override);
    double v;
    switch (k->kind) {
    case KEY_SECTION:
        if (is_null(node)) return 0;
        if (node->type != YAML_MAPPING_NODE)
            return fail(L, at, "%s: expected a mapping of keys, got %s", k->path, node_kind_name(node));
        return read_mapping(L, doc, node, k->path, override);
    case KEY_INT:
        if (read_number(L, k, node, at, &v) < 0) return -1;
        *FIELD(L->config, int, k->offset) = (int)v;
        return 0;
    case KEY_LONG:
        if (read_number(L, k, node, at, &v) < 0) return -1;
        *FIELD(L->config, long, k->offset) = (long)v;
        return 0;
    case KEY_DOUBLE:
        if (read_number(L, k, node, at, &v) < 0) return -1;
        *FIELD(L->config, double, k->offset) = v;
        return 0;
    case KEY_FLOAT:
        if (read_number(L, k, node, at, &v) < 0) return -1;
        *FIELD(L->config, float, k->offset) = (float)v;
        return 0;
    case KEY_SEED: return read_seed(L, k, node, at);
    case KEY_ENUM:
    case KEY_CHOICE: return read_word(L, k, node, at);
    case KEY_PATH: return read_path(L, k, node, at);
    case KEY_PAIR: return read_pair(L, k, doc, node, at);
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
        const key_spec *k = find_key(path);
        if (!k) return unknown_key(L, at, path);
        origin *previous = &L->origins[k - keys];
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
    const key_spec *k = find_key(path);
    if (!k) return unknown_key(L, at, path);
    L->origins[k - keys] = at;

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
    for (int i = 0; i < NUM_KEYS && rc == 0; i++)
        if (keys[i].kind == KEY_PATH && keys[i].base == FROM_CONFIG_DIR)
            rc = resolve_in_place(FIELD(c, char *, keys[i].offset), dir);
    for (int i = 0; i < NUM_KEYS && rc == 0; i++)
        if (keys[i].kind == KEY_PATH && keys[i].base == FROM_DATA_ROOT)
            rc = resolve_in_place(FIELD(c, char *, keys[i].offset), c->data_root);
    free(dir);
    return rc;
}

/* ---- checks across keys ---- */

static int require_corpus(const loader *L, const char *section, const nmt_corpus_paths *paths, int required) {
    if (paths->src && paths->tgt) return 0;
    if (!required && !paths->src && !paths->tgt) return 0;
    char src_key[64], tgt_key[64];
    snprintf(src_key, sizeof src_key, "%s.src", section);
    snprintf(tgt_key, sizeof tgt_key, "%s.tgt", section);
    origin at = key_origin(L, section);
    if (!was_set(at)) at = key_origin(L, "data");
    const char *missing = paths->src ? tgt_key : paths->tgt ? src_key : section;
    return fail(L, at, "%s is missing (%s needs both src and tgt: %s: {src: FILE, tgt: FILE})", missing, section,
                last_component(section));
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
    const char *name = lr_schedule_names[c->lr_schedule];
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

int nmt_config_parse(nmt_config *c, const char *text, size_t size, const char *path, const char *const *overrides) {
    *c = nmt_config_default();
    int override_failed = 0;
    loader L = {.config = c, .file = path, .override_failed = &override_failed};
    yaml_parser_t parser;
    yaml_document_t doc;
    int rc = -1, have_doc = 0;
    c->path = nmt_strdup(path);
    if (!c->path || !yaml_parser_initialize(&parser)) {
        if (c->path) nmt_error_set("out of memory");
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
    if (check_model(&L) < 0 || check_schedule(&L) < 0 || require_corpus(&L, "data.train", &c->train, 1) < 0 ||
        require_corpus(&L, "data.valid", &c->valid, 0) < 0 || resolve_paths(&L) < 0)
        goto done;
    rc = 0;
done:
    if (have_doc) yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (rc < 0) nmt_config_free(c);
    return rc < 0 && override_failed ? NMT_CONFIG_BAD_OVERRIDE : rc;
}

/* ---- saving ---- */

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

static void write_value(FILE *out, const nmt_config *c, const key_spec *k) {
    char a[40], b[40];
    switch (k->kind) {
    case KEY_INT: fprintf(out, "%d", VALUE(c, int, k->offset)); break;
    case KEY_LONG: fprintf(out, "%ld", VALUE(c, long, k->offset)); break;
    case KEY_SEED: fprintf(out, "%lu", VALUE(c, unsigned long, k->offset)); break;
    case KEY_DOUBLE: format_number(VALUE(c, double, k->offset), 0, a, sizeof a); fputs(a, out); break;
    case KEY_FLOAT: format_number(VALUE(c, float, k->offset), 1, a, sizeof a); fputs(a, out); break;
    case KEY_ENUM: fputs(k->names[VALUE(c, int, k->offset)], out); break;
    case KEY_CHOICE: fputs(VALUE(c, char *, k->offset), out); break;
    case KEY_PATH: write_quoted(out, VALUE(c, char *, k->offset)); break;
    case KEY_PAIR:
        format_number(VALUE(c, double, k->offset), 0, a, sizeof a);
        format_number(VALUE(c, double, k->offset2), 0, b, sizeof b);
        fprintf(out, "[%s, %s]", a, b);
        break;
    case KEY_SECTION: break;
    }
}

char *nmt_config_format(const nmt_config *c) {
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (!out) {
        nmt_error_set("cannot build the config text: %s", strerror(errno));
        return NULL;
    }
    fprintf(out, "# The resolved configuration of an nmt run (defaults filled in, paths absolute).\n");
    char open[128] = "";
    for (int i = 0; i < NUM_KEYS; i++) {
        const key_spec *k = &keys[i];
        if (k->kind == KEY_SECTION || (k->kind == KEY_PATH && !VALUE(c, char *, k->offset))) continue;
        open_sections(out, k->path, open, sizeof open);
        int depth = 0;
        for (const char *p = k->path; *p; p++) depth += *p == '.';
        fprintf(out, "%*s%s: ", 2 * depth, "", last_component(k->path));
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
    const key_spec *k = find_key(key);
    if (!k || k->kind == KEY_SECTION) {
        nmt_error_set("'%s' is not a config key", key);
        return NULL;
    }
    if (k->kind == KEY_PATH && !VALUE(c, char *, k->offset)) return nmt_strdup("(none)");
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
