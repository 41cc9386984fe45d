/* config_keys: the one table of the training config's keys, each with its dotted name, type, allowed
 * range and place in nmt_config, in file order. Reading and `--set` (config_read.c), writing
 * (config_write.c), the defaults and freeing (config_keys.c) all walk it, so they can never disagree
 * about a key. Private to train/: the public face is config.h.
 */
#ifndef NMT_CONFIG_KEYS_H
#define NMT_CONFIG_KEYS_H

#include "train/config.h"
#include "model/model_config.h"

#include <stddef.h>

typedef enum {
    NMT_CONFIG_KEY_SECTION, /* a mapping of further keys */
    NMT_CONFIG_KEY_INT,     /* int */
    NMT_CONFIG_KEY_LONG,    /* long */
    NMT_CONFIG_KEY_SEED,    /* unsigned long, any value */
    NMT_CONFIG_KEY_DOUBLE,  /* double */
    NMT_CONFIG_KEY_FLOAT,   /* float */
    NMT_CONFIG_KEY_ENUM,    /* a word from `names`, stored as its index in an enum field */
    NMT_CONFIG_KEY_CHOICE,  /* a word from `names`, stored as a pointer to the static name */
    NMT_CONFIG_KEY_PATH,    /* char *, owned; resolved against `base` at the end */
    NMT_CONFIG_KEY_PAIR,    /* [a, b]: two doubles at offset and offset2 */
    NMT_CONFIG_KEY_LANGUAGE, /* a language code (text/langcode.h) in a char[NMT_LANGCODE_MAX] ("" = unset) */
    NMT_CONFIG_KEY_CORPORA, /* {src, tgt[, weight]} or a list of them: an nmt_corpus_paths[NMT_CONFIG_MAX_CORPORA]
                               at offset, their count (int) at offset2; paths owned, resolved against `base` */
} nmt_config_key_kind;

typedef enum { NMT_CONFIG_KEY_FROM_CONFIG_DIR, NMT_CONFIG_KEY_FROM_DATA_ROOT } nmt_config_path_base;

/* Which ends of a number's [min, max] are excluded (the model's fields use the same bits). */
enum { NMT_CONFIG_KEY_MIN_OPEN = NMT_MODEL_CONFIG_MIN_OPEN, NMT_CONFIG_KEY_MAX_OPEN = NMT_MODEL_CONFIG_MAX_OPEN };

typedef struct nmt_config_key {
    const char *path;         /* "train.optimizer.lr" */
    nmt_config_key_kind kind;
    size_t offset, offset2;   /* into nmt_config */
    double min, max;          /* numbers: the allowed range (NMT_CONFIG_KEY_CORPORA: of a weight) */
    int open;                 /* NMT_CONFIG_KEY_MIN_OPEN | NMT_CONFIG_KEY_MAX_OPEN */
    const char *const *names; /* NMT_CONFIG_KEY_ENUM, NMT_CONFIG_KEY_CHOICE: allowed words in enum order, NULL-terminated */
    nmt_config_path_base base; /* NMT_CONFIG_KEY_PATH */
} nmt_config_key;

extern const nmt_config_key nmt_config_keys[]; /* [nmt_config_key_count], sections before their keys */
extern const int nmt_config_key_count;

/* The key named `path` ("train.optimizer.lr"), or NULL. */
const nmt_config_key *nmt_config_key_find(const char *path);

/* The last component of a dotted path: "lr" of "train.optimizer.lr". */
const char *nmt_config_key_name(const char *path);

/* The field a key's offset names in a config, as a `type *` (writable) or a `type` value. */
#define NMT_CONFIG_FIELD(config, type, offset) ((type *)((char *)(config) + (offset)))
#define NMT_CONFIG_VALUE(config, type, offset) (*(const type *)((const char *)(config) + (offset)))

#endif
