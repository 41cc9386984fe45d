/* checkpoint: everything a resumed run needs to continue bit-identically, in one safetensors file.
 *
 * A checkpoint OUTPUT/checkpoints/step-00001234.safetensors holds the model's tensors under their
 * plain names (`nmt average` reads them), the Adam moments as "adam_m.<name>" and "adam_v.<name>",
 * with train.ema_decay the moving average of the weights as "ema.<name>" (train/ema.h),
 * and in the metadata the model config (as in model.safetensors), "checkpoint_format":
 * "nmt-checkpoint-1" and the training state below, numbers written so that they read back exactly. Dropout masks and
 * batch order are pure functions of (seed, step) and (seed, epoch), so no generator state is stored.
 *
 * Files are written atomically (temp + fsync + rename); after each save only the newest keep_last
 * remain. On resume the newest checkpoint that reads back whole is used; a damaged one is skipped
 * with a warning naming it and what is wrong.
 */
#ifndef NMT_CHECKPOINT_H
#define NMT_CHECKPOINT_H

#include <stdint.h>
#include <stdio.h>

#include "model/model.h"
#include "train/optim.h"
#include "model/safetensors.h"

typedef struct nmt_train_state {
    long step;             /* optimizer updates done */
    long epoch;            /* data position: the batcher's epoch ... */
    long cursor;           /* ... and batches of it already used */
    uint64_t seed;         /* train.seed of the run */
    double best_bleu;      /* best validation BLEU so far (-1 before the first validation) */
    double best_loss;      /* validation loss at that point (breaks BLEU ties) */
    long best_step;
    long last_valid_step;  /* step of the latest validation (0 = none) */
    long bad_validations;  /* validations since the last improvement (for patience) */
    double elapsed_s;      /* training seconds on train.budget_clock, summed over all runs */
    long threads;          /* kernel threads of the latest run (a record: results do not depend on it) */
    double log_loss_sum;   /* since the last train log line: label-smoothed loss summed, */
    double log_nll_sum;    /* negative log-likelihood summed, */
    long log_tokens;       /* target tokens */
    long log_steps;        /* and steps */
    uint64_t train_data_key; /* the training corpus's nmt_corpus key (its text, vocabulary and reading
                              * options) when the run last started; 0 = not recorded */
} nmt_train_state;

/* A fresh run's state. */
nmt_train_state nmt_train_state_initial(uint64_t seed);

/* Writes the checkpoint of step state->step to model_dir/checkpoints/ (nmt_model_checkpoint_path,
 * atomically), with the weights' average `ema` ([num_params], or NULL for none), then deletes all but the newest keep_last there (keep_last <= 0 keeps all). */
int nmt_checkpoint_save(const char *model_dir, const nmt_model *m, const nmt_adam *adam, const float *ema,
                        const nmt_train_state *state, int keep_last);

/* Finds the newest readable checkpoint of model_dir: 1 = found (*file loaded, *path set; free both),
 * 0 = none. Damaged ones are skipped, with a warning line on `warnings` (may be NULL). */
int nmt_checkpoint_find_latest(const char *model_dir, nmt_st_file *file, char **path, FILE *warnings);

/* The checkpoints of model_dir after step `after` (-1: all): with `remove` deleted (a start again by
 * --overwrite keeps nothing of the old run), else set aside as NAME.damaged with a warning on `warnings`
 * (NULL: none) -- a resume from step `after` skipped them as damaged, and pruning must never weigh
 * them against the checkpoints the run writes next. The number handled, or -1 (the error names the
 * file). */
int nmt_checkpoint_clear_after(const char *model_dir, long after, int remove, FILE *warnings);

/* Reads the training state from a loaded checkpoint. */
int nmt_checkpoint_state(const nmt_st_file *file, const char *path, nmt_train_state *state);

/* Refuses (with an error naming the first differing key, e.g. "model.d_model is 256 in the
 * checkpoint but 512 in the config") a checkpoint made with another model section or vocabulary size. */
int nmt_checkpoint_check_config(const nmt_st_file *file, const char *path, const nmt_model_config *config);

/* Copies parameters and Adam moments (and the step count) from a checkpoint into a model and an
 * optimizer created for the same config; every tensor's presence, dtype and shape is checked. With
 * `ema` ([num_params], or NULL when the run keeps no average) the average is restored too: 0, or 1
 * when the checkpoint holds none (saved without train.ema_decay) and the average starts from the
 * restored weights. */
int nmt_checkpoint_restore(const nmt_st_file *file, const char *path, nmt_model *m, nmt_adam *adam, float *ema);

#endif
