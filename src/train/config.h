/* config: the training configuration, read from YAML (libyaml) into typed structs.
 *
 * The file's shape is docs/training.md's; every key is optional except data.train. Unknown keys, wrong
 * types and out-of-range values are errors naming "file:line:column". Overrides given as
 * "section.key=value" (`nmt train --set`) are applied after the file, checked the same way (the
 * error names the override). Relative data paths are resolved against data.root, itself relative to
 * the config file's directory; the output directory and vocab.model are relative to the config file's
 * directory. data.train is one corpus, {src: FILE, tgt: FILE}, or a list of up to NMT_CONFIG_MAX_CORPORA
 * of them, each with an optional integer weight: the times its pairs appear in every epoch. After
 * loading, every path is absolute and normalised, so a saved config means the same wherever it is read.
 * A --set value is read as YAML: `train.optimizer.betas=[0.9,0.98]` and `data.valid={src: a.en, tgt:
 * a.de}` work; relative paths in overrides follow the file's rules.
 * The output directory defaults to runs/<config file name without extension>.
 *
 * Implemented by config_keys.c (the table of keys, the defaults, freeing), config_read.c (loading and
 * checking) and config_write.c (the YAML text of a config, one value's text).
 */
#ifndef NMT_CONFIG_H
#define NMT_CONFIG_H

#include "model/model.h"

/* What train.max_minutes counts: wall-clock time, or the CPU time the run was given divided by its
 * threads (a run paused, or starved by other processes, spends none of its budget). */
typedef enum nmt_budget_clock { NMT_BUDGET_WALL, NMT_BUDGET_CPU } nmt_budget_clock;

typedef struct nmt_corpus_paths {
    char *src;  /* resolved path, or NULL */
    char *tgt;
    int weight; /* a data.train corpus: the times its pairs appear in each epoch (1, the default, once);
                   0 for data.valid, which is read once */
} nmt_corpus_paths;

enum { NMT_CONFIG_MAX_CORPORA = 16, NMT_CONFIG_MAX_WEIGHT = 1000 };

typedef struct nmt_config {
    char *path;                 /* the config file as given */
    nmt_model_config model;     /* model.*; model.vocab_size comes from the vocabulary */

    char *vocab_model;          /* vocab.model: an existing SentencePiece model (resolved), or NULL */
    int vocab_size;             /* vocab.size: pieces of a vocabulary trained at the first run (8000) */
    const char *vocab_type;     /* vocab.type: "unigram" | "bpe" (a static string, not freed) */
    double sampling_alpha;      /* vocab.sampling_alpha (0 = off): subword regularization, every epoch's training
                                   pairs re-segmented by draws from the unigram vocabulary at this alpha */

    char *data_root;            /* data.root, resolved */
    nmt_corpus_paths train[NMT_CONFIG_MAX_CORPORA]; /* data.train (required): {src, tgt} or a list of them,
                                   each with a weight (1): the corpora of an epoch, in this order */
    int num_train;              /* corpora in train[] */
    nmt_corpus_paths valid;     /* data.valid.{src,tgt} (optional) */
    int max_length;             /* data.max_length (128): longer training pairs are skipped */
    char src_lang[16], tgt_lang[16]; /* data.src_lang, data.tgt_lang: the languages of the two sides (ISO 639-1
                                   or -3, text/langcode.h); unset, the training files' suffixes where those
                                   are ISO 639-1 codes (train.en), else "" (not recorded) */

    int batch_tokens;           /* train.batch_tokens (4096): padded target tokens per batch */
    int update_freq;            /* train.update_freq (1): batches per optimizer step */
    int batch_pieces;           /* train.batch_pieces (1): sub-batches a batch is split into, each computed
                                   alone and summed exactly; a run uses at most update_freq x this ranks */
    int shard_optimizer;        /* train.shard_optimizer (false): on several ranks each keeps the Adam moments
                                   of its slice of the parameters and updates that slice (ZeRO stage 1) */
    double lr;                  /* train.optimizer.lr (1e-3): peak learning rate */
    double beta1, beta2;        /* train.optimizer.betas ([0.9, 0.98]) */
    double adam_eps;            /* train.optimizer.eps (1e-9) */
    int warmup;                 /* train.optimizer.warmup (800): linear warm-up steps to the peak lr */
    int lr_schedule;            /* train.optimizer.schedule: an nmt_lr_decay, the shape after the warm-up:
                                   inverse_sqrt (default), linear or cosine (train/optim.h) */
    int decay_steps;            /* train.optimizer.decay_steps: where linear and cosine reach min_lr (required
                                   for them, > warmup; set it to the steps the budget allows) */
    double min_lr;              /* train.optimizer.min_lr (0): linear and cosine's floor */
    double clip_norm;           /* train.optimizer.clip_norm (0 = off) */
    double weight_decay;        /* train.optimizer.weight_decay (0 = off): decoupled, AdamW's (train/optim.h) */
    double label_smoothing;     /* train.label_smoothing (0.1) */
    double dropout_src;         /* train.dropout_src (0 = off): word dropout, the probability that a source token's
                                   embedding is zeroed whole in training (Marian's --dropout-src; model.h) */
    double dropout_trg;         /* train.dropout_trg (0 = off): the same for the decoder's input tokens */
    double rdrop_alpha;         /* train.rdrop_alpha (0 = off): R-Drop, every sentence twice under two dropout
                                   draws, their symmetric KL divergence weighted by it (model.h) */
    int precision;              /* train.precision: an nmt_train_precision, fp32 (default), bf16 (refused where
                                   the CPU does not reward it) or auto (bf16 where it pays; train/precision.h) */
    double ema_decay;           /* train.ema_decay (0 = off): validate and save a moving average of the
                                   weights (train/ema.h), as Marian's exponential smoothing */
    long max_steps;             /* train.max_steps (0 = no limit) */
    long max_epochs;            /* train.max_epochs (0 = no limit) */
    double max_minutes;         /* train.max_minutes (0 = no limit), on the budget_clock */
    int budget_clock;           /* train.budget_clock: an nmt_budget_clock, wall (default) or cpu */
    int valid_every;            /* train.valid_every (500) */
    int valid_beam;             /* train.valid_beam (1 = greedy) */
    double valid_length_penalty; /* train.valid_length_penalty: the beam's GNMT alpha (0.6), as nmt translate's
                                    --length-penalty; only with valid_beam > 1 */
    int save_every;             /* train.save_every (500) */
    int keep_last;              /* train.keep_last (5) */
    int patience;               /* train.patience (10; 0 = no early stopping) */
    unsigned long seed;         /* train.seed (1) */
    char *init_from;            /* train.init_from: a model directory whose weights and vocabulary start
                                   a fresh run (fine-tuning; resolved), or NULL */

    char *output;               /* output directory, resolved */
} nmt_config;

/* The defaults of every key (paths NULL). */
nmt_config nmt_config_default(void);
enum {
    NMT_CONFIG_BAD_OVERRIDE = -2, /* what loading returns when an override is wrong: a command-line mistake */
    NMT_CONFIG_MAX_BYTES = 1 << 24, /* a config file is at most 16 MiB */
};
/* Reads a YAML file and applies `overrides` ("a.b=value"; NULL-terminated list, may be NULL). On
 * failure (-1, or NMT_CONFIG_BAD_OVERRIDE when an override is malformed, names an unknown key or gives
 * a bad value) the error says where (file:line:column or the override) and *config holds nothing to free. */
int nmt_config_load(nmt_config *config, const char *path, const char *const *overrides);
/* The same for YAML text already in memory (for fuzzing); `path` names it in errors and its
 * directory is the base of relative paths. */
int nmt_config_parse(nmt_config *config, const char *text, size_t size, const char *path,
                     const char *const *overrides);
/* The resolved config as YAML text of the file's shape (a new string; NULL when memory runs out), e.g.
 * to show the effective config at the start of a run. */
char *nmt_config_format(const nmt_config *config);
/* The value of one key ("train.optimizer.lr", "train.optimizer.betas") as nmt_config_format writes it (a path
 * quoted, "(none)" when unset), allocated; NULL with the error set for a name that is not a key's. Equal
 * texts mean equal values: numbers are written in the shortest form that reads back the same. */
char *nmt_config_value_text(const nmt_config *config, const char *key);
/* Writes the resolved config as YAML of the same shape (atomic write); loading that file gives the
 * same struct (except `path`). */
int nmt_config_save(const nmt_config *config, const char *path);
/* The first line of every config nmt_config_save writes: how nmt knows a config.yaml as its own. */
#define NMT_CONFIG_HEADER "# The resolved configuration of an nmt run (defaults filled in, paths absolute).\n"
/* Where a model directory holds the resolved config of its run (a new string): dir/config.yaml, unless
 * a config.yaml there is not one nmt wrote (the user's own, e.g. with `output: .`), which is never
 * replaced: then dir/config.resolved.yaml, and that name once it exists. */
char *nmt_config_dir_path(const char *dir);
/* Loads the resolved config of model directory dir (nmt_config_dir_path), read as a model's files are
 * (a regular file only, its size checked before reading: a FIFO in its place is refused at once). */
int nmt_config_load_dir(nmt_config *config, const char *dir);
/* Loads the config file at path as a model directory's files are read (regular file, size checked). */
int nmt_config_load_regular(nmt_config *config, const char *path);
void nmt_config_free(nmt_config *config);
/* How messages that name data.train's first corpus mention the rest: " and the other data.train corpora"
 * when there are more, else "". */
const char *nmt_config_more_corpora(const nmt_config *config);

#endif
