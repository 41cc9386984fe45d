/* config_keys: the table of the training config's keys (see config_keys.h), the defaults of the keys
 * it leaves unset, and freeing the paths a loaded config owns.
 */
#include "train/config_keys.h"
#include "train/optim.h"
#include "train/precision.h"
#include "model/model_config.h"
#include "text/langcode.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const vocab_type_names[] = {"unigram", "bpe", NULL};
static const char *const precision_names[] = {"fp32", "bf16", "auto", NULL}; /* in nmt_train_precision's order */
_Static_assert(NMT_TRAIN_PRECISION_FP32 == 0 && NMT_TRAIN_PRECISION_BF16 == 1 && NMT_TRAIN_PRECISION_AUTO == 2,
               "train.precision's words follow nmt_train_precision");
static const char *const switch_names[] = {"false", "true", NULL};
static const char *const budget_clock_names[] = {"wall", "cpu", NULL}; /* in nmt_budget_clock's order */
_Static_assert(NMT_BUDGET_WALL == 0 && NMT_BUDGET_CPU == 1, "train.budget_clock's words follow nmt_budget_clock");
static const char *const lr_schedule_names[] = {"inverse_sqrt", "linear", "cosine", NULL}; /* in nmt_lr_decay's order */
_Static_assert(NMT_LR_INVERSE_SQRT == 0 && NMT_LR_LINEAR == 1 && NMT_LR_COSINE == 2,
               "train.optimizer.schedule's words follow nmt_lr_decay");

#define AT(field) offsetof(nmt_config, field)
_Static_assert(sizeof(((nmt_config *)0)->src_lang) == NMT_LANGCODE_MAX, "data.src_lang holds a language code");
#define SECTION(p) {.path = p, .kind = NMT_CONFIG_KEY_SECTION}
#define NUMBER(p, k, field, lo, hi, op)                                                                           \
    {.path = p, .kind = NMT_CONFIG_KEY_##k, .offset = AT(field), .min = lo, .max = hi, .open = op}
#define WORD(p, k, field, words) {.path = p, .kind = NMT_CONFIG_KEY_##k, .offset = AT(field), .names = words}
/* A key of the model section, from the model's own list of its fields. */
#define MODEL_KEY(field_, kind_, default_, min_, max_, open_, names_)                                               \
    {.path = "model." #field_, .kind = NMT_CONFIG_KEY_##kind_, .offset = AT(model.field_), .min = min_, .max = max_, \
     .open = open_, .names = names_},
#define PATH(p, field, from)                                                                                      \
    {.path = p, .kind = NMT_CONFIG_KEY_PATH, .offset = AT(field), .base = NMT_CONFIG_KEY_FROM_##from}

/* In file order: nmt_config_save writes the keys in this order, opening sections as they come. */
const nmt_config_key nmt_config_keys[] = {
    SECTION("model"),
    NMT_MODEL_CONFIG_FIELDS(MODEL_KEY)
    SECTION("vocab"),
    PATH("vocab.model", vocab_model, CONFIG_DIR),
    NUMBER("vocab.size", INT, vocab_size, 8, 1 << 24, 0),
    WORD("vocab.type", CHOICE, vocab_type, vocab_type_names),
    NUMBER("vocab.sampling_alpha", DOUBLE, sampling_alpha, 0, INFINITY, 0),
    SECTION("data"),
    PATH("data.root", data_root, CONFIG_DIR),
    {.path = "data.train", .kind = NMT_CONFIG_KEY_CORPORA, .offset = AT(train), .offset2 = AT(num_train),
     .min = 1, .max = NMT_CONFIG_MAX_WEIGHT, .base = NMT_CONFIG_KEY_FROM_DATA_ROOT},
    SECTION("data.valid"),
    PATH("data.valid.src", valid.src, DATA_ROOT),
    PATH("data.valid.tgt", valid.tgt, DATA_ROOT),
    NUMBER("data.max_length", INT, max_length, 1, 1 << 20, 0),
    {.path = "data.src_lang", .kind = NMT_CONFIG_KEY_LANGUAGE, .offset = AT(src_lang)},
    {.path = "data.tgt_lang", .kind = NMT_CONFIG_KEY_LANGUAGE, .offset = AT(tgt_lang)},
    SECTION("train"),
    NUMBER("train.batch_tokens", INT, batch_tokens, 1, 1 << 30, 0),
    NUMBER("train.update_freq", INT, update_freq, 1, 1 << 20, 0),
    NUMBER("train.batch_pieces", INT, batch_pieces, 1, 1 << 20, 0),
    SECTION("train.optimizer"),
    NUMBER("train.optimizer.lr", DOUBLE, lr, 0, INFINITY, NMT_CONFIG_KEY_MIN_OPEN),
    {.path = "train.optimizer.betas", .kind = NMT_CONFIG_KEY_PAIR, .offset = AT(beta1), .offset2 = AT(beta2),
     .min = 0, .max = 1, .open = NMT_CONFIG_KEY_MAX_OPEN},
    NUMBER("train.optimizer.eps", DOUBLE, adam_eps, 0, INFINITY, NMT_CONFIG_KEY_MIN_OPEN),
    NUMBER("train.optimizer.warmup", INT, warmup, 0, INT_MAX, 0),
    WORD("train.optimizer.schedule", ENUM, lr_schedule, lr_schedule_names),
    NUMBER("train.optimizer.decay_steps", INT, decay_steps, 0, INT_MAX, 0),
    NUMBER("train.optimizer.min_lr", DOUBLE, min_lr, 0, INFINITY, 0),
    NUMBER("train.optimizer.clip_norm", DOUBLE, clip_norm, 0, INFINITY, 0),
    NUMBER("train.optimizer.weight_decay", DOUBLE, weight_decay, 0, 1, NMT_CONFIG_KEY_MAX_OPEN),
    NUMBER("train.label_smoothing", DOUBLE, label_smoothing, 0, 1, NMT_CONFIG_KEY_MAX_OPEN),
    NUMBER("train.dropout_src", DOUBLE, dropout_src, 0, 1, NMT_CONFIG_KEY_MAX_OPEN),
    NUMBER("train.dropout_trg", DOUBLE, dropout_trg, 0, 1, NMT_CONFIG_KEY_MAX_OPEN),
    NUMBER("train.rdrop_alpha", DOUBLE, rdrop_alpha, 0, 1000, 0),
    NUMBER("train.ema_decay", DOUBLE, ema_decay, 0, 1, NMT_CONFIG_KEY_MAX_OPEN),
    WORD("train.precision", ENUM, precision, precision_names),
    WORD("train.shard_optimizer", ENUM, shard_optimizer, switch_names),
    NUMBER("train.max_steps", LONG, max_steps, 0, 1e15, 0),
    NUMBER("train.max_epochs", LONG, max_epochs, 0, 1e15, 0),
    NUMBER("train.max_minutes", DOUBLE, max_minutes, 0, INFINITY, 0),
    WORD("train.budget_clock", ENUM, budget_clock, budget_clock_names),
    NUMBER("train.valid_every", INT, valid_every, 1, INT_MAX, 0),
    NUMBER("train.valid_beam", INT, valid_beam, 1, 1024, 0),
    NUMBER("train.valid_length_penalty", DOUBLE, valid_length_penalty, 0, 10, 0),
    NUMBER("train.save_every", INT, save_every, 1, INT_MAX, 0),
    NUMBER("train.keep_last", INT, keep_last, 1, 1000000, 0),
    NUMBER("train.patience", INT, patience, 0, INT_MAX, 0),
    {.path = "train.seed", .kind = NMT_CONFIG_KEY_SEED, .offset = AT(seed)},
    PATH("train.init_from", init_from, CONFIG_DIR),
    PATH("output", output, CONFIG_DIR),
};
const int nmt_config_key_count = sizeof nmt_config_keys / sizeof nmt_config_keys[0];

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
    for (int i = 0; i < c->num_train; i++) {
        free(c->train[i].src);
        free(c->train[i].tgt);
    }
    c->num_train = 0;
    for (int i = 0; i < nmt_config_key_count; i++) {
        if (nmt_config_keys[i].kind != NMT_CONFIG_KEY_PATH) continue;
        free(*NMT_CONFIG_FIELD(c, char *, nmt_config_keys[i].offset));
        *NMT_CONFIG_FIELD(c, char *, nmt_config_keys[i].offset) = NULL;
    }
    free(c->path);
    c->path = NULL;
}

const char *nmt_config_more_corpora(const nmt_config *c) {
    return c->num_train > 1 ? " and the other data.train corpora" : "";
}

const nmt_config_key *nmt_config_key_find(const char *path) {
    for (int i = 0; i < nmt_config_key_count; i++)
        if (strcmp(nmt_config_keys[i].path, path) == 0) return &nmt_config_keys[i];
    return NULL;
}

const char *nmt_config_key_name(const char *path) {
    const char *dot = strrchr(path, '.');
    return dot ? dot + 1 : path;
}
