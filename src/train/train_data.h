/* train_data: what a training run reads before its first step: the vocabulary (given by vocab.model,
 * inherited from train.init_from, or trained on the corpus at the first run), the corpora encoded
 * with it (or loaded from their caches in the output directory), the validation references, and the
 * check that learned positions fit every row. Progress lines go to `progress` (NULL: quiet).
 */
#ifndef NMT_TRAIN_DATA_H
#define NMT_TRAIN_DATA_H

#include <stdint.h>
#include <stdio.h>

#include "text/spm.h"
#include "train/config.h"
#include "train/corpus.h"

/* Leaves in *spm the vocabulary at spm_path (OUTPUT/spm.model): copied there from vocab.model or
 * from init_spm (train.init_from's, or NULL), or trained on both sides of the training data when
 * neither is given and the directory has none. A resumed run (resuming) keeps the vocabulary its
 * checkpoints were trained with: a different one is an error, as is a missing one. */
int nmt_train_data_vocabulary(const nmt_config *cfg, const char *spm_path, const char *init_spm, int resuming,
                              FILE *progress, nmt_spm **spm);

/* Reads the pairs of `paths` into corpus, encoded by spm, through the cache OUTPUT/cache_name
 * (written only when write_cache; read whenever it exists and is current). max_length 0 keeps
 * every pair, skip_empty drops pairs with an empty side (validation keeps every line); keep_text
 * keeps their text for nmt_train_data_resample. */
int nmt_train_data_corpus(const nmt_config *cfg, nmt_corpus *corpus, const nmt_corpus_paths *paths,
                          const char *cache_name, int max_length, int skip_empty, int keep_text, const nmt_spm *spm,
                          int write_cache, FILE *progress);

/* The pairs of an epoch: every data.train corpus read as nmt_train_data_corpus reads one (caches
 * OUTPUT/corpus-train.bin, corpus-train-2.bin, ...; pairs beyond data.max_length or with an empty side
 * skipped), repeated by its weight and joined in order (nmt_corpus_join). */
int nmt_train_data_corpora(const nmt_config *cfg, nmt_corpus *corpus, int keep_text, const nmt_spm *spm,
                           int write_cache, FILE *progress);

/* Subword sampling of a training corpus (read with keep_text) at vocab.sampling_alpha. */
typedef struct nmt_train_sampler {
    nmt_corpus *corpus;
    const nmt_spm *spm;  /* a unigram vocabulary (nmt_train_data_sampler refuses BPE) */
    double alpha;
    int max_length;
    uint64_t seed;       /* the run's train.seed */
    size_t best_pieces;  /* the corpus's pieces in the best segmentation (as read), for progress */
} nmt_train_sampler;

/* Sets up *sampler for cfg's sampling_alpha, or refuses a vocabulary that cannot be sampled. */
int nmt_train_data_sampler(nmt_train_sampler *sampler, const nmt_config *cfg, nmt_corpus *corpus, const nmt_spm *spm,
                           uint64_t seed);
/* An nmt_batcher_resample_fn: the corpus segmented by the draws of `epoch` (from the seed and the epoch
 * alone, so that a resumed run draws what an uninterrupted one did). */
int nmt_train_data_resample(void *sampler, long epoch);

/* The first n lines of path, each a string, into *lines (freed with nmt_train_data_free_lines, also
 * after a failure). */
int nmt_train_data_references(const char *path, long n, char ***lines);
void nmt_train_data_free_lines(char **lines, long n);

/* With learned positions no row may be longer than the position table: refused up front, not at the
 * first batch that hits it hours later. Checks the training limit (data.max_length), and each
 * validation pair when `valid` is given. */
int nmt_train_data_check_positions(const nmt_config *cfg, const nmt_corpus *valid);

#endif
