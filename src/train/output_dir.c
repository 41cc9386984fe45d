/* output_dir: the directory a run trains into -- one trainer at a time, a fresh start that never
 * overwrites a trained model, and a resume's settings compared with those of the run it continues.
 */
#include "train/output_dir.h"

#include "base/io.h"
#include "base/util.h"
#include "model/model_file.h"
#include "train/checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* One trainer per output directory: two would overwrite each other's checkpoints. */
int nmt_output_dir_lock(const char *dir) {
    char *path = nmt_path_join(dir, ".lock");
    if (!path) return -1;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) nmt_error_set("%s: cannot open: %s", path, strerror(errno));
    else if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        nmt_error_set("%s is in use by another nmt train (%s is locked)", dir, path);
        close(fd);
        fd = -1;
    }
    free(path);
    return fd;
}

char *nmt_output_dir_first_missing(const char *dir) {
    struct stat st;
    if (stat(dir, &st) == 0) return NULL;
    char *missing = nmt_strdup(dir);
    for (char *slash; missing && (slash = strrchr(missing, '/')) && slash > missing;) {
        *slash = '\0';
        if (stat(missing, &st) == 0) {
            *slash = '/';
            break;
        }
    }
    return missing;
}

int nmt_output_dir_check_fresh(const char *dir, int overwrite) {
    if (overwrite) return 0;
    char *model_path = nmt_path_join(dir, "model.safetensors");
    if (!model_path) return -1;
    const int model = nmt_file_exists(model_path);
    free(model_path);
    char **paths;
    int count;
    if (nmt_model_checkpoints(dir, &paths, &count) < 0) return -1;
    nmt_model_paths_free(paths);
    /* A log alone is a run killed (or failed) before its first checkpoint: nothing to lose. */
    if (!model && !count) return 0;
    char what[128];
    if (model) snprintf(what, sizeof what, "a trained model (model.safetensors) and %s", count ? "" : "no checkpoint");
    else what[0] = '\0';
    if (count)
        snprintf(what + strlen(what), sizeof what - strlen(what), "%d checkpoint%s%s, none usable", count,
                 count == 1 ? "" : "s", model ? "" : " of a trained model");
    return nmt_error_set("%s already holds %s to resume from: starting again from step 0 would overwrite it. Train "
                         "into a new output directory, fine-tune from it with train.init_from: %s, or pass "
                         "--overwrite to start again here",
                         dir, what, dir);
}

int nmt_output_dir_start_again(const char *dir, const char *const *inputs, FILE *progress) {
    static const char *const made[] = {"model.safetensors", "spm.model", "spm.vocab", "shortlist.bin"};
    int files = 0, rc = 0;
    for (size_t i = 0; i < sizeof made / sizeof made[0] && rc == 0; i++) {
        char *path = nmt_path_join(dir, made[i]);
        int input = 0;
        for (const char *const *in = inputs; path && *in && !input; in++) input = nmt_same_file(path, *in);
        if (!path) rc = -1;
        else if (!input && unlink(path) == 0) files++;
        else if (!input && errno != ENOENT) rc = nmt_error_set("%s: cannot delete: %s", path, strerror(errno));
        free(path);
    }
    const int checkpoints = rc == 0 ? nmt_checkpoint_clear_after(dir, -1, 1, NULL) : -1;
    if (checkpoints < 0) return -1;
    if (progress && (files || checkpoints))
        fprintf(progress, "--overwrite: starting again from step 0; deleted the previous run's %d file%s and %d "
                          "checkpoint%s in %s\n", files, files == 1 ? "" : "s", checkpoints, checkpoints == 1 ? "" : "s", dir);
    return 0;
}

/* The settings whose change makes a resumed run differ from an uninterrupted one. */
static const char *const settings[] = {
    "data.train",             "data.valid.src",            "data.valid.tgt",
    "data.max_length",        "vocab.sampling_alpha",      "train.batch_tokens",          "train.update_freq",
    "train.batch_pieces",     "train.optimizer.lr",        "train.optimizer.betas",       "train.optimizer.eps",
    "train.optimizer.warmup", "train.optimizer.schedule",  "train.optimizer.decay_steps", "train.optimizer.min_lr",
    "train.optimizer.clip_norm", "train.optimizer.weight_decay", "train.label_smoothing", "train.dropout_src",
    "train.dropout_trg",      "train.rdrop_alpha",         "train.ema_decay",             "train.precision",
};

/* A resume compares the config with the one the interrupted run saved (nmt_config_dir_path) and warns,
 * naming the key, for every setting above that changed: the new value is used, and the run is no
 * longer bit-identical to an uninterrupted one. (A different model or vocabulary is refused later.) */
int nmt_output_dir_check_settings(const nmt_config *cfg, const nmt_config *saved, FILE *warnings, int *data_warned) {
    if (data_warned) *data_warned = 0;
    if (!warnings) return 0;
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        char *now = nmt_config_value_text(cfg, settings[i]), *then = now ? nmt_config_value_text(saved, settings[i]) : NULL;
        if (now && then && strcmp(now, then) != 0) {
            fprintf(warnings, "warning: %s is %s but the run being resumed used %s: the continuation uses the new "
                              "value and is not bit-identical to an uninterrupted run\n",
                    settings[i], now, then);
            if (data_warned && (strcmp(settings[i], "data.train") == 0 || strcmp(settings[i], "data.max_length") == 0))
                *data_warned = 1;
        }
        free(now);
        free(then);
        if (!now || !then) return -1;
    }
    return 0;
}

int nmt_output_dir_saved_config(const char *dir, nmt_config *saved, FILE *warnings) {
    char *path = nmt_config_dir_path(dir);
    int loaded = 0;
    if (path && nmt_file_exists(path)) {
        loaded = nmt_config_load_dir(saved, dir) == 0;
        if (!loaded && warnings)
            fprintf(warnings, "warning: cannot compare with the settings of the run being resumed: %s\n", nmt_error());
    }
    free(path);
    return loaded;
}
