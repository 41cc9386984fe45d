/* checkpoint: save, prune, find and restore training checkpoints (safetensors + metadata). */
#include "train/checkpoint.h"
#include "base/io.h"
#include "model/model_file.h"
#include "base/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char format_key[] = "checkpoint_format", format_value[] = "nmt-checkpoint-1";
static const char moment_prefix[2][8] = {"adam_m.", "adam_v."}, ema_prefix[] = "ema.";

typedef enum { FIELD_LONG, FIELD_DOUBLE, FIELD_U64 } field_kind;

/* The state's fields in the metadata; doubles are written with 17 significant digits, which
 * read back to the same bits. An optional field is one that checkpoints of earlier versions lack:
 * it reads as 0 when absent. */
static const struct {
    const char *key;
    field_kind kind;
    size_t offset;
    int optional;
} state_fields[] = {
    {"step", FIELD_LONG, offsetof(nmt_train_state, step), 0},
    {"epoch", FIELD_LONG, offsetof(nmt_train_state, epoch), 0},
    {"batch_cursor", FIELD_LONG, offsetof(nmt_train_state, cursor), 0},
    {"seed", FIELD_U64, offsetof(nmt_train_state, seed), 0},
    {"best_bleu", FIELD_DOUBLE, offsetof(nmt_train_state, best_bleu), 0},
    {"best_loss", FIELD_DOUBLE, offsetof(nmt_train_state, best_loss), 0},
    {"best_step", FIELD_LONG, offsetof(nmt_train_state, best_step), 0},
    {"last_valid_step", FIELD_LONG, offsetof(nmt_train_state, last_valid_step), 0},
    {"bad_validations", FIELD_LONG, offsetof(nmt_train_state, bad_validations), 0},
    {"elapsed_s", FIELD_DOUBLE, offsetof(nmt_train_state, elapsed_s), 0},
    {"threads", FIELD_LONG, offsetof(nmt_train_state, threads), 0},
    {"log_loss_sum", FIELD_DOUBLE, offsetof(nmt_train_state, log_loss_sum), 0},
    {"log_nll_sum", FIELD_DOUBLE, offsetof(nmt_train_state, log_nll_sum), 0},
    {"log_tokens", FIELD_LONG, offsetof(nmt_train_state, log_tokens), 0},
    {"log_steps", FIELD_LONG, offsetof(nmt_train_state, log_steps), 0},
    {"train_data_key", FIELD_U64, offsetof(nmt_train_state, train_data_key), 1},
};
enum { NUM_STATE_FIELDS = sizeof state_fields / sizeof state_fields[0], FIELD_TEXT = 32 };

nmt_train_state nmt_train_state_initial(uint64_t seed) {
    return (nmt_train_state){.epoch = 1, .seed = seed, .best_bleu = -1.0, .best_loss = 0.0};
}

/* Deletes all but the newest keep_last checkpoints up to `written`, the one just saved, which always
 * stays (keep_last <= 0 keeps all). Checkpoints of later steps than it are the damaged ones the resume
 * skipped (a readable one would have been resumed from): they go too, so they cannot outlive it. */
static int prune(const char *model_dir, int keep_last, const char *written) {
    char **paths;
    int count, rc = 0;
    if (keep_last <= 0) return 0;
    if (nmt_model_checkpoints(model_dir, &paths, &count) < 0) return -1;
    int at = count - 1; /* nmt_model_checkpoints sorts by step: `written` is found from the end */
    while (at >= 0 && strcmp(paths[at], written) != 0) at--;
    for (int i = 0; i < count && rc == 0; i++) {
        int keep = at < 0 || (i <= at && i > at - keep_last);
        if (!keep && unlink(paths[i]) != 0 && errno != ENOENT)
            rc = nmt_error_set("%s: cannot delete an old checkpoint: %s", paths[i], strerror(errno));
    }
    nmt_model_paths_free(paths);
    return rc;
}

int nmt_checkpoint_save(const char *model_dir, const nmt_model *m, const nmt_adam *adam, const float *ema,
                        const nmt_train_state *state, int keep_last) {
    int n = m->num_tensors, rc = -1, num_buffers = ema ? 4 : 3;
    const float *buffers[4] = {m->params, adam->m, adam->v, ema};
    const char *prefixes[4] = {"", moment_prefix[0], moment_prefix[1], ema_prefix};
    nmt_st_tensor *lists[4] = {NULL, NULL, NULL, NULL};
    nmt_st_tensor *tensors = nmt_malloc((size_t)num_buffers * (size_t)n * sizeof *tensors);
    char *path = nmt_model_checkpoint_path(model_dir, state->step);
    char *dir = nmt_path_join(model_dir, "checkpoints");
    if (!tensors || !path || !dir || nmt_mkdirs(dir) < 0) goto done;
    for (int k = 0; k < num_buffers; k++) {
        if (nmt_model_tensor_list(m, buffers[k], prefixes[k], &lists[k]) < 0) goto done;
        memcpy(tensors + k * n, lists[k], (size_t)n * sizeof *tensors);
    }
    nmt_model_metadata config_meta;
    nmt_model_metadata_init(&config_meta, &m->config);
    nmt_st_metadata meta[NMT_MODEL_METADATA + NUM_STATE_FIELDS + 2];
    char fingerprint[17];
    char text[NUM_STATE_FIELDS][FIELD_TEXT];
    memcpy(meta, config_meta.entries, sizeof config_meta.entries);
    nmt_st_metadata *st = meta + NMT_MODEL_METADATA;
    for (int i = 0; i < NUM_STATE_FIELDS; i++) {
        const char *field = (const char *)state + state_fields[i].offset;
        if (state_fields[i].kind == FIELD_LONG) snprintf(text[i], FIELD_TEXT, "%ld", *(const long *)field);
        else if (state_fields[i].kind == FIELD_U64) snprintf(text[i], FIELD_TEXT, "%" PRIu64, *(const uint64_t *)field);
        else snprintf(text[i], FIELD_TEXT, "%.17g", *(const double *)field);
        st[i] = (nmt_st_metadata){(char *)state_fields[i].key, text[i]};
    }
    st[NUM_STATE_FIELDS] = (nmt_st_metadata){(char *)format_key, (char *)format_value};
    int num_meta = NMT_MODEL_METADATA + NUM_STATE_FIELDS + 1;
    num_meta += nmt_model_fingerprint_entry(m, &meta[num_meta], fingerprint);
    if (nmt_st_write(path, tensors, num_buffers * n, meta, num_meta) < 0) goto done;
    rc = prune(model_dir, keep_last, path);
done:
    for (int k = 0; k < 4; k++) free(lists[k]);
    free(tensors);
    free(path);
    free(dir);
    return rc;
}

/* The step in a checkpoint's path ("...step-00001234.safetensors"). */
static long path_step(const char *path) {
    const char *name = strrchr(path, '/');
    return strtol(name ? name + 6 : path + 5, NULL, 10);
}

int nmt_checkpoint_clear_after(const char *model_dir, long after, int remove, FILE *warnings) {
    char **paths;
    int count, done = 0;
    if (nmt_model_checkpoints(model_dir, &paths, &count) < 0) return -1;
    for (int i = 0; i < count && done >= 0; i++) {
        if (path_step(paths[i]) <= after) continue;
        if (remove) {
            if (unlink(paths[i]) != 0 && errno != ENOENT)
                done = nmt_error_set("%s: cannot delete: %s", paths[i], strerror(errno));
            else done++;
            continue;
        }
        size_t n = strlen(paths[i]) + sizeof ".damaged";
        char *aside = nmt_malloc(n);
        if (!aside) {
            done = -1;
            break;
        }
        snprintf(aside, n, "%s.damaged", paths[i]);
        if (rename(paths[i], aside) != 0) done = nmt_error_set("%s: cannot set it aside: %s", paths[i], strerror(errno));
        else done++;
        if (done > 0 && warnings) fprintf(warnings, "warning: the damaged checkpoint is set aside as %s\n", aside);
        free(aside);
    }
    nmt_model_paths_free(paths);
    return done;
}

int nmt_checkpoint_state(const nmt_st_file *file, const char *path, nmt_train_state *state) {
    const char *format = nmt_st_meta(file, format_key);
    if (!format || strcmp(format, format_value) != 0)
        return nmt_error_set("%s: not an nmt checkpoint (metadata \"%s\" is %s, expected \"%s\")", path, format_key,
                             format ? format : "missing", format_value);
    memset(state, 0, sizeof *state);
    for (int i = 0; i < NUM_STATE_FIELDS; i++) {
        const char *key = state_fields[i].key, *value = nmt_st_meta(file, key);
        if (!value && state_fields[i].optional) continue;
        if (!value) return nmt_error_set("%s: checkpoint metadata lacks \"%s\"", path, key);
        char *end;
        errno = 0;
        char *field = (char *)state + state_fields[i].offset;
        if (state_fields[i].kind == FIELD_LONG) *(long *)field = strtol(value, &end, 10);
        else if (state_fields[i].kind == FIELD_U64) *(uint64_t *)field = strtoull(value, &end, 10);
        else *(double *)field = strtod(value, &end);
        if (errno || end == value || *end != '\0')
            return nmt_error_set("%s: checkpoint metadata \"%s\" is not a number: \"%s\"", path, key, value);
    }
    if (state->step < 0 || state->epoch < 1 || state->cursor < 0)
        return nmt_error_set("%s: checkpoint state out of range (step %ld, epoch %ld, batch %ld)", path, state->step,
                             state->epoch, state->cursor);
    return 0;
}

int nmt_checkpoint_find_latest(const char *model_dir, nmt_st_file *file, char **path, FILE *warnings) {
    memset(file, 0, sizeof *file);
    *path = NULL;
    char **paths;
    int count, found = 0;
    if (nmt_model_checkpoints(model_dir, &paths, &count) < 0) return -1;
    for (int i = count - 1; i >= 0 && !found; i--) {
        nmt_train_state state;
        if (nmt_st_read(file, paths[i]) == 0 && nmt_checkpoint_state(file, paths[i], &state) == 0) {
            found = (*path = nmt_strdup(paths[i])) ? 1 : -1;
            if (found < 0) nmt_st_free(file);
            break;
        }
        if (warnings) fprintf(warnings, "warning: skipping a damaged checkpoint: %s\n", nmt_error());
        nmt_st_free(file);
    }
    nmt_model_paths_free(paths);
    return found;
}

int nmt_checkpoint_check_config(const nmt_st_file *file, const char *path, const nmt_model_config *config) {
    nmt_model_metadata want, older;
    nmt_model_metadata_init(&want, config);
    /* A checkpoint from before the later fields existed was made with their defaults. */
    nmt_model_config defaults = *config;
    for (int i = NMT_MODEL_CONFIG_FIRST_LATER; i < NMT_MODEL_CONFIG_COUNT; i++) {
        const nmt_model_field *f = &nmt_model_config_fields[i];
        if (f->kind == NMT_MODEL_FIELD_FLOAT) *(float *)((char *)&defaults + f->offset) = (float)f->def;
        else *(int *)((char *)&defaults + f->offset) = (int)f->def;
    }
    nmt_model_metadata_init(&older, &defaults);
    for (int i = 0; i < NMT_MODEL_METADATA; i++) {
        const char *key = want.entries[i].key, *have = nmt_st_meta(file, key);
        if (!have && i - 1 >= NMT_MODEL_CONFIG_FIRST_LATER) have = older.entries[i].value;
        if (!have || strcmp(have, want.entries[i].value) != 0)
            return nmt_error_set("%s: the checkpoint was made with another model: %s%s is %s in the checkpoint but %s "
                                 "in the config; train into a new output directory, or restore the model section",
                                 path, strcmp(key, "vocab_size") == 0 || strcmp(key, "format") == 0 ? "" : "model.",
                                 key, have ? have : "missing", want.entries[i].value);
    }
    return 0;
}

int nmt_checkpoint_restore(const nmt_st_file *file, const char *path, nmt_model *m, nmt_adam *adam, float *ema) {
    nmt_train_state state;
    if (nmt_checkpoint_state(file, path, &state) < 0 || nmt_model_tensor_read(m, m->params, "", file, path) < 0 ||
        nmt_model_tensor_read(m, adam->m, moment_prefix[0], file, path) < 0 ||
        nmt_model_tensor_read(m, adam->v, moment_prefix[1], file, path) < 0)
        return -1;
    adam->step = state.step;
    if (!ema) return 0;
    char first[sizeof m->tensors[0].name + sizeof ema_prefix];
    snprintf(first, sizeof first, "%s%s", ema_prefix, m->tensors[0].name);
    if (!nmt_st_find(file, first)) {
        memcpy(ema, m->params, m->num_params * sizeof *ema);
        return 1;
    }
    return nmt_model_tensor_read(m, ema, ema_prefix, file, path);
}
