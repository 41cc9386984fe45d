/* output_dir: the directory a run trains into -- one trainer at a time, a fresh start that never
 * overwrites a trained model, and a resume's settings compared with those of the run it continues.
 *
 * Every check here comes before the trainer writes anything, so a refused run leaves the directory
 * as it was.
 */
#ifndef NMT_OUTPUT_DIR_H
#define NMT_OUTPUT_DIR_H

#include "train/config.h"

#include <stdio.h>

/* Locks DIR/.lock for this process (released when it exits or closes the descriptor): the
 * descriptor, or -1 when another trainer holds it (the error names the directory). */
int nmt_output_dir_lock(const char *dir);
/* The outermost directory of dir's path that does not exist yet (dir itself or a parent of it), which
 * creating dir would create: a new string, or NULL when dir exists (or out of memory). A run refused at
 * start removes it with what it holds, so that it leaves nothing behind. */
char *nmt_output_dir_first_missing(const char *dir);
/* A fresh start (no usable checkpoint) in dir: refused, with what is there and how to proceed, when
 * dir already holds model.safetensors or checkpoints (all damaged), unless overwrite. A directory with
 * only a log (a run killed, or whose first checkpoint failed to write) starts again. */
int nmt_output_dir_check_fresh(const char *dir, int overwrite);
/* --overwrite: the previous run's model.safetensors, vocabulary (spm.model, spm.vocab), shortlist.bin
 * and checkpoints deleted, except a file that is one of `inputs` (NULL-terminated: vocab.model, the
 * files of train.init_from), so that the run starts again from nothing of the old one; what went is
 * said on `progress` (NULL: not said). 0, or -1 naming the file that could not be deleted. */
int nmt_output_dir_start_again(const char *dir, const char *const *inputs, FILE *progress);
/* The settings of the run being resumed in dir, read from its resolved config (nmt_config_dir_path) into *saved: 1 (free it with
 * nmt_config_free), else 0 -- none, or one that does not load (said on warnings, NULL: not
 * said; the resume goes on without the comparison below). */
int nmt_output_dir_saved_config(const char *dir, nmt_config *saved, FILE *warnings);
/* A resume: for every setting that makes the continuation differ from an uninterrupted run and
 * differs from the saved run's, a warning naming the key and both values as config.yaml writes them on
 * warnings (NULL: none, and nothing compared). The new value is used. *data_warned (may be NULL) is set
 * to 1 when one of them is a setting the training text depends on (data.train, data.max_length), so
 * that the text's own check need not say it again, else 0. 0, or -1 when out of memory. */
int nmt_output_dir_check_settings(const nmt_config *cfg, const nmt_config *saved, FILE *warnings, int *data_warned);

#endif
