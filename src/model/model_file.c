/* model_file: nmt_model <-> safetensors files, checkpoint averaging and the checkpoint directory.
 *
 * The config travels as metadata through the model's one table of fields (model_config.h), so
 * writing and reading cannot drift apart. Reading trusts the file for nothing: the safetensors reader
 * validates the layout, the config is checked like a YAML one (nmt_model_config_check), and every
 * tensor must have exactly the shape that config implies before a byte of it is copied.
 */
#include "model/model_file.h"
#include "base/io.h"
#include "base/util.h"
#include "compute/qgemm.h"

#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The config travels as one metadata entry per field of nmt_model_config_fields, after "format". */
#define CONFIG_FIELD(config, type, f) ((type *)((char *)(config) + (f)->offset))
#define CONFIG_VALUE(config, type, f) (*(const type *)((const char *)(config) + (f)->offset))

void nmt_model_metadata_init(nmt_model_metadata *md, const nmt_model_config *c) {
    snprintf(md->text[0][0], sizeof md->text[0][0], "format");
    snprintf(md->text[0][1], sizeof md->text[0][1], "%s", NMT_MODEL_FORMAT);
    for (int i = 0; i < NMT_MODEL_CONFIG_COUNT; i++) {
        const nmt_model_field *f = &nmt_model_config_fields[i];
        char *key = md->text[i + 1][0], *value = md->text[i + 1][1];
        snprintf(key, sizeof md->text[0][0], "%s", f->name);
        if (f->kind == NMT_MODEL_FIELD_INT) {
            snprintf(value, sizeof md->text[0][1], "%d", CONFIG_VALUE(c, int, f));
        } else if (f->kind == NMT_MODEL_FIELD_ENUM) {
            snprintf(value, sizeof md->text[0][1], "%s", f->names[CONFIG_VALUE(c, int, f)]);
        } else { /* the shortest decimal that reads back as the same float: 0.1, not 0.100000001 */
            float v = CONFIG_VALUE(c, float, f);
            for (int digits = 1; digits <= 9; digits++) {
                snprintf(value, sizeof md->text[0][1], "%.*g", digits, (double)v);
                if (strtof(value, NULL) == v) break;
            }
        }
    }
    for (int i = 0; i < NMT_MODEL_METADATA; i++) {
        md->entries[i].key = md->text[i][0];
        md->entries[i].value = md->text[i][1];
    }
}

int nmt_model_metadata_read(nmt_model_config *config, const nmt_st_file *file, const char *path) {
    const char *format = nmt_st_meta(file, "format");
    if (!format) return nmt_error_set("%s: no \"format\" in the metadata: not a model written by nmt", path);
    if (strcmp(format, NMT_MODEL_FORMAT) != 0)
        return nmt_error_set("%s: format '%s' is not '%s'", path, format, NMT_MODEL_FORMAT);
    memset(config, 0, sizeof *config);
    for (int i = 0; i < NMT_MODEL_CONFIG_COUNT; i++) {
        const nmt_model_field *f = &nmt_model_config_fields[i];
        const char *text = nmt_st_meta(file, f->name);
        if (!text && i >= NMT_MODEL_CONFIG_FIRST_LATER) { /* a file from before the field: its default */
            if (f->kind == NMT_MODEL_FIELD_FLOAT) *CONFIG_FIELD(config, float, f) = (float)f->def;
            else *CONFIG_FIELD(config, int, f) = (int)f->def;
            continue;
        }
        if (!text) return nmt_error_set("%s: the metadata lacks the model's %s", path, f->name);
        char *end;
        errno = 0;
        if (f->kind == NMT_MODEL_FIELD_INT) {
            long v = strtol(text, &end, 10);
            if (errno || end == text || *end || v < 0 || v > 1L << 30)
                return nmt_error_set("%s: metadata %s='%s' is not a count", path, f->name, text);
            *CONFIG_FIELD(config, int, f) = (int)v;
        } else if (f->kind == NMT_MODEL_FIELD_FLOAT) {
            float v = strtof(text, &end);
            if (errno || end == text || *end || !isfinite(v))
                return nmt_error_set("%s: metadata %s='%s' is not a number", path, f->name, text);
            *CONFIG_FIELD(config, float, f) = v;
        } else {
            int found = -1;
            for (int w = 0; f->names[w]; w++)
                if (strcmp(text, f->names[w]) == 0) found = w;
            if (found < 0) return nmt_error_set("%s: metadata %s='%s' is not a known value", path, f->name, text);
            *CONFIG_FIELD(config, int, f) = found;
        }
    }
    if (config->vocab_size == 0) return nmt_error_set("%s: metadata vocab_size='0'", path);
    if (nmt_model_config_check(config) < 0) return nmt_error_prefix("%s: metadata", path);
    return 0;
}

static const char fingerprint_key[] = "vocab_fingerprint";

int nmt_model_fingerprint_entry(const nmt_model *m, nmt_st_metadata *entry, char text[17]) {
    if (!m->vocab_fingerprint) return 0;
    snprintf(text, 17, "%016" PRIx64, m->vocab_fingerprint);
    *entry = (nmt_st_metadata){(char *)fingerprint_key, text};
    return 1;
}

int nmt_model_fingerprint_read(const nmt_st_file *file, const char *path, uint64_t *fingerprint) {
    *fingerprint = 0;
    const char *text = nmt_st_meta(file, fingerprint_key);
    if (!text) return 0;
    char *end;
    errno = 0;
    *fingerprint = strtoull(text, &end, 16);
    if (errno || strlen(text) != 16 || *end || !*fingerprint)
        return nmt_error_set("%s: metadata %s='%s' is not 16 hexadecimal digits", path, fingerprint_key, text);
    return 0;
}

int nmt_model_check_vocab(uint64_t recorded, const char *model_path, uint64_t vocab, const char *vocab_path) {
    if (!recorded || recorded == vocab) return 0;
    return nmt_error_set("%s is not the vocabulary %s was trained with (fingerprint %016" PRIx64 ", the model "
                         "records %016" PRIx64 "): put back the spm.model of that training run",
                         vocab_path, model_path, vocab, recorded);
}

int nmt_model_tensor_list(const nmt_model *m, const float *buffer, const char *prefix, nmt_st_tensor **tensors) {
    size_t n = (size_t)m->num_tensors, names = 0, prefix_len = strlen(prefix);
    for (size_t i = 0; i < n; i++) names += prefix_len + strlen(m->tensors[i].name) + 1;
    nmt_st_tensor *list = nmt_malloc(n * sizeof *list + names);
    *tensors = list;
    if (!list) return -1;
    char *pool = (char *)(list + n);
    for (size_t i = 0; i < n; i++) {
        const nmt_tensor_info *info = &m->tensors[i];
        nmt_st_tensor *t = &list[i];
        memset(t, 0, sizeof *t);
        t->name = pool;
        pool += sprintf(pool, "%s%s", prefix, info->name) + 1;
        t->dtype = NMT_ST_F32;
        t->rank = info->rank;
        for (int d = 0; d < info->rank; d++) t->shape[d] = info->shape[d];
        t->data = buffer + info->offset;
        t->size = info->count * sizeof(float);
    }
    return 0;
}

static void format_shape(char *out, size_t size, int rank, const int64_t *shape) {
    int used = snprintf(out, size, "[");
    for (int d = 0; d < rank && used > 0 && (size_t)used < size; d++)
        used += snprintf(out + used, size - (size_t)used, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (used > 0 && (size_t)used < size) snprintf(out + used, size - (size_t)used, "]");
}

/* The row factors of the I8 tensor q: tensor "<name>.scale", F32 [rows], each a number >= 0 whose
 * product with any int8 value is a finite float;
 * NULL (the error set) when they are not. */
static const nmt_st_tensor *int8_factors(const nmt_st_tensor *q, int rows, const nmt_st_file *file, const char *path) {
    char name[272];
    snprintf(name, sizeof name, "%s.scale", q->name);
    const nmt_st_tensor *scale = nmt_st_find(file, name);
    if (!scale || scale->dtype != NMT_ST_F32 || scale->rank != 1 || scale->shape[0] != rows) {
        nmt_error_set("%s: int8 tensor '%s' needs '%s', F32 of shape [%d]", path, q->name, name, rows);
        return NULL;
    }
    for (int r = 0; r < rows; r++) {
        float factor;
        memcpy(&factor, (const char *)scale->data + (size_t)r * sizeof factor, sizeof factor);
        if (!isfinite(factor) || factor < 0.0f || factor > FLT_MAX / 127.0f) { /* an int8 value is -127..127 */
            nmt_error_set("%s: '%s' row %d: factor %g is refused: a factor is >= 0 and 127 times it a finite float",
                          path, name, r, (double)factor);
            return NULL;
        }
    }
    return scale;
}

/* out[rows, cols] = the I8 tensor q times its rows' factors (checked by int8_factors). */
static void dequantize(float *out, const nmt_st_tensor *q, const nmt_st_tensor *scale, int rows, int cols) {
    const int8_t *values = q->data;
    for (int r = 0; r < rows; r++) {
        float factor;
        memcpy(&factor, (const char *)scale->data + (size_t)r * sizeof factor, sizeof factor);
        for (int c = 0; c < cols; c++)
            out[(size_t)r * (size_t)cols + (size_t)c] = (float)values[(size_t)r * (size_t)cols + (size_t)c] * factor;
    }
}

/* Tensor i of m into buffer from its file tensor t (checked: F32, or I8 with valid factors); the
 * file's pages of t may then go (a mapped file's). */
static void tensor_copy(const nmt_model *m, int i, float *buffer, const nmt_st_tensor *t, const nmt_st_tensor *scale,
                        const nmt_st_file *file) {
    const nmt_tensor_info *info = &m->tensors[i];
    if (t->dtype == NMT_ST_I8) dequantize(buffer + info->offset, t, scale, info->shape[0], info->shape[1]);
    else memcpy(buffer + info->offset, t->data, info->count * sizeof(float));
    nmt_st_release(file, t->data, t->size);
}

int nmt_model_tensor_read(const nmt_model *m, float *buffer, const char *prefix, const nmt_st_file *file,
                          const char *path) {
    char name[256];
    for (int i = 0; i < m->num_tensors; i++) {
        const nmt_tensor_info *info = &m->tensors[i];
        snprintf(name, sizeof name, "%s%s", prefix, info->name);
        const nmt_st_tensor *t = nmt_st_find(file, name);
        if (!t) return nmt_error_set("%s: tensor '%s' is missing", path, name);
        const int skip = buffer == m->params && m->deferred && m->deferred[i]; /* read from the file later */
        const int int8 = t->dtype == NMT_ST_I8 && info->rank == 2;
        if (t->dtype != NMT_ST_F32 && !int8)
            return nmt_error_set("%s: tensor '%s' is %s, not F32%s", path, name, nmt_st_dtype_name(t->dtype),
                                 info->rank == 2 ? " or I8" : "");
        int64_t want[2] = {info->shape[0], info->shape[1]};
        int same = t->rank == info->rank;
        for (int d = 0; same && d < info->rank; d++) same = t->shape[d] == want[d];
        if (!same) {
            char got_text[96], want_text[96];
            format_shape(got_text, sizeof got_text, t->rank, t->shape);
            format_shape(want_text, sizeof want_text, info->rank, want);
            return nmt_error_set("%s: tensor '%s' has shape %s, but the model's config needs %s", path, name, got_text,
                                 want_text);
        }
        const nmt_st_tensor *scale = int8 ? int8_factors(t, info->shape[0], file, path) : NULL;
        if (int8 && !scale) return -1;
        if (skip) continue; /* checked now: nmt_model_matrix reads it later and cannot fail */
        tensor_copy(m, i, buffer, t, scale, file);
    }
    return 0;
}

int nmt_model_tensor_load(const nmt_model *m, int i, float *buffer, const nmt_st_file *file, const char *path) {
    const nmt_st_tensor *t = nmt_st_find(file, m->tensors[i].name);
    if (!t) return nmt_error_set("%s: tensor '%s' is missing", path, m->tensors[i].name);
    const nmt_st_tensor *scale = NULL;
    if (t->dtype == NMT_ST_I8 && !(scale = int8_factors(t, m->tensors[i].shape[0], file, path))) return -1;
    tensor_copy(m, i, buffer, t, scale, file);
    return 0;
}

/* Writes tensors with m's config and vocabulary fingerprint as the metadata: what every model file
 * (fp32 or int8) carries. */
static int write_model_file(const nmt_model *m, const char *path, const nmt_st_tensor *tensors, int count) {
    nmt_model_metadata md;
    nmt_model_metadata_init(&md, &m->config);
    nmt_st_metadata meta[NMT_MODEL_METADATA + 1];
    char fingerprint[17];
    memcpy(meta, md.entries, sizeof md.entries);
    int n = NMT_MODEL_METADATA + nmt_model_fingerprint_entry(m, &meta[NMT_MODEL_METADATA], fingerprint);
    return nmt_st_write(path, tensors, count, meta, n);
}

int nmt_model_save(const nmt_model *m, const char *path) {
    nmt_st_tensor *tensors;
    if (nmt_model_tensor_list(m, m->params, "", &tensors) < 0) return -1;
    int rc = write_model_file(m, path, tensors, m->num_tensors);
    free(tensors);
    return rc;
}

int nmt_model_save_int8(const nmt_model *m, const char *path) {
    size_t matrices = 0, rows = 0, count = 0;
    for (int i = 0; i < m->num_tensors; i++)
        if (m->tensors[i].rank == 2) {
            matrices++;
            rows += (size_t)m->tensors[i].shape[0];
            count += m->tensors[i].count;
        }
    nmt_st_tensor *tensors = NULL;
    const size_t n = (size_t)m->num_tensors + matrices;
    nmt_st_tensor *all = nmt_malloc(n * sizeof *all);
    char *names = nmt_malloc(matrices * 272);
    int8_t *values = nmt_malloc(count ? count : 1);
    float *factors = nmt_malloc((rows ? rows : 1) * sizeof(float));
    int rc = -1;
    if (!all || !names || !values || !factors || nmt_model_tensor_list(m, m->params, "", &tensors) < 0) goto done;
    size_t at = 0, named = 0, row = 0, value = 0;
    for (int i = 0; i < m->num_tensors; i++) {
        const nmt_tensor_info *info = &m->tensors[i];
        all[at] = tensors[i];
        if (info->rank != 2) {
            at++;
            continue;
        }
        const int R = info->shape[0], C = info->shape[1];
        for (int r = 0; r < R; r++)
            factors[row + (size_t)r] = nmt_qgemm_quantize_row(values + value + (size_t)r * (size_t)C,
                                                              m->params + info->offset + (size_t)r * (size_t)C, C);
        all[at].dtype = NMT_ST_I8;
        all[at].data = values + value;
        all[at].size = info->count;
        char *name = names + named * 272;
        snprintf(name, 272, "%s.scale", info->name);
        all[++at] = (nmt_st_tensor){.name = name, .dtype = NMT_ST_F32, .rank = 1, .shape = {R}, .data = factors + row,
                                    .size = (size_t)R * sizeof(float)};
        at++, named++;
        row += (size_t)R;
        value += info->count;
    }
    rc = write_model_file(m, path, all, (int)n);
done:
    free(tensors);
    free(all);
    free(names);
    free(values);
    free(factors);
    return rc;
}

/* nmt_model_quantize_int8, the learned position tables rounded too or kept. */
static int quantize_int8(nmt_model *m, int keep_positions) {
    size_t widest = 1;
    for (int i = 0; i < m->num_tensors; i++)
        if (m->tensors[i].rank == 2 && (size_t)m->tensors[i].shape[1] > widest) widest = (size_t)m->tensors[i].shape[1];
    int8_t *q = nmt_malloc(widest);
    if (!q) return -1;
    for (int i = 0; i < m->num_tensors; i++) {
        const nmt_tensor_info *info = &m->tensors[i];
        const float *first = m->params + info->offset;
        if (keep_positions && (first == m->p.src_positions || first == m->p.tgt_positions)) continue;
        /* A deferred matrix is quantized from the file by its reader: the same int8 values. */
        for (int r = 0; info->rank == 2 && !(m->deferred && m->deferred[i]) && r < info->shape[0]; r++) {
            float *row = m->params + info->offset + (size_t)r * (size_t)info->shape[1];
            const float factor = nmt_qgemm_quantize_row(q, row, info->shape[1]);
            for (int c = 0; c < info->shape[1]; c++) row[c] = (float)q[c] * factor;
        }
    }
    free(q);
    m->int8_rounded = 1;
    return 0;
}

int nmt_model_quantize_int8(nmt_model *m) { return quantize_int8(m, 0); }

int nmt_model_quantize_int8_weights(nmt_model *m) { return quantize_int8(m, 1); }

/* 1 when tensor `name` of the file is the row factors of an int8 model tensor. */
static int is_int8_scale(const nmt_model *m, const nmt_st_file *file, const char *name) {
    const size_t len = strlen(name);
    if (len < 7 || strcmp(name + len - 6, ".scale") != 0) return 0;
    for (int j = 0; j < m->num_tensors; j++)
        if (strlen(m->tensors[j].name) == len - 6 && strncmp(name, m->tensors[j].name, len - 6) == 0) {
            const nmt_st_tensor *t = nmt_st_find(file, m->tensors[j].name);
            return t && t->dtype == NMT_ST_I8;
        }
    return 0;
}

int nmt_model_file_open(nmt_model *m, nmt_st_file *file, const char *path) {
    memset(m, 0, sizeof *m);
    if (nmt_st_read(file, path) < 0) return -1;
    nmt_model_config config;
    if (nmt_model_metadata_read(&config, file, path) < 0) goto fail;
    /* The metadata decides the allocation: a file that lacks more than 64 MB of the parameters it
     * describes is refused before they are allocated (and zeroed), so a small damaged file cannot ask
     * for gigabytes. (Short of that, the tensor-by-tensor check below names what is wrong.) */
    size_t need = nmt_model_param_count(&config), have = 0;
    for (int i = 0; i < file->num_tensors; i++)
        if (file->tensors[i].dtype == NMT_ST_F32) have += file->tensors[i].size / sizeof(float);
        else if (file->tensors[i].dtype == NMT_ST_I8) have += file->tensors[i].size;
    if (need > have && need - have > (64u << 20) / sizeof(float)) {
        nmt_error_set("%s: its metadata describes a model of %zu parameters (%.1f MB), but it holds only %zu "
                      "floats: truncated or damaged", path, need, (double)need * sizeof(float) / 1e6, have);
        goto fail;
    }
    uint64_t fingerprint;
    if (nmt_model_fingerprint_read(file, path, &fingerprint) < 0) goto fail;
    if (nmt_model_init(m, &config) < 0) {
        nmt_error_prefix("%s: creating the model of %zu parameters (%.1f MB)", path, need, (double)need * sizeof(float) / 1e6);
        goto fail;
    }
    m->vocab_fingerprint = fingerprint;
    return 0;
fail:
    nmt_st_free(file);
    return -1;
}

int nmt_model_file_read(nmt_model *m, nmt_st_file *file, const char *path) {
    int rc = nmt_model_tensor_read(m, m->params, "", file, path);
    for (int i = 0; i < file->num_tensors; i++) m->int8_weights |= file->tensors[i].dtype == NMT_ST_I8;
    for (int i = 0; rc == 0 && i < file->num_tensors && file->num_tensors > m->num_tensors; i++) {
        int known = 0;
        for (int j = 0; !known && j < m->num_tensors; j++) known = strcmp(file->tensors[i].name, m->tensors[j].name) == 0;
        known = known || is_int8_scale(m, file, file->tensors[i].name);
        if (!known)
            rc = nmt_error_set("%s: tensor '%s' is not part of the model (a checkpoint? `nmt average` turns "
                               "checkpoints into a model file)", path, file->tensors[i].name);
    }
    return rc;
}

int nmt_model_load(nmt_model *m, const char *path) {
    nmt_st_file file;
    if (nmt_model_file_open(m, &file, path) < 0) return -1;
    int rc = nmt_model_file_read(m, &file, path);
    nmt_st_free(&file);
    if (rc < 0) nmt_model_free(m);
    return rc;
}

int nmt_model_init_from(nmt_model *m, const char *path) {
    nmt_st_file file;
    if (nmt_st_read(&file, path) < 0) return -1;
    nmt_model_config config;
    nmt_model_metadata have, want;
    int rc = nmt_model_metadata_read(&config, &file, path);
    if (rc == 0) {
        config.dropout = m->config.dropout; /* regularisation may change when fine-tuning */
        config.attention_dropout = m->config.attention_dropout;
        nmt_model_metadata_init(&have, &config);
        nmt_model_metadata_init(&want, &m->config);
    }
    for (int i = 0; rc == 0 && i < NMT_MODEL_METADATA; i++)
        if (strcmp(have.text[i][1], want.text[i][1]) != 0)
            rc = nmt_error_set("%s: train.init_from has another model: %s%s is %s there but %s in the config", path,
                               strcmp(have.text[i][0], "vocab_size") == 0 ? "" : "model.", have.text[i][0],
                               have.text[i][1], want.text[i][1]);
    if (rc == 0) rc = nmt_model_tensor_read(m, m->params, "", &file, path);
    nmt_st_free(&file);
    return rc;
}

/* Whether file holds the tensor prefix + name. */
static int has_prefixed(const nmt_st_file *file, const char *prefix, const char *name) {
    char full[256];
    return snprintf(full, sizeof full, "%s%s", prefix, name) < (int)sizeof full && nmt_st_find(file, full) != NULL;
}

int nmt_model_average(const char *const *paths, int count, const char *prefix, const char *out) {
    if (count < 1) return nmt_error_set("no models to average");
    nmt_model m;
    nmt_st_file file;
    if (nmt_model_file_open(&m, &file, paths[0]) < 0) return -1;
    nmt_model_metadata first;
    nmt_model_metadata_init(&first, &m.config);
    int rc = nmt_model_zero_grads(&m);
    if (rc < 0) nmt_st_free(&file); /* the loop, which frees each file, does not run */
    for (int k = 0; rc == 0 && k < count; k++) {
        nmt_model_config config;
        if (k > 0 && (rc = nmt_st_read(&file, paths[k])) < 0) break;
        rc = nmt_model_metadata_read(&config, &file, paths[k]);
        nmt_model_metadata md;
        nmt_model_metadata_init(&md, &config);
        for (int i = 0; rc == 0 && i < NMT_MODEL_METADATA; i++)
            if (strcmp(md.text[i][1], first.text[i][1]) != 0)
                rc = nmt_error_set("%s: its model differs from %s's (%s: %s, not %s)", paths[k], paths[0],
                                   md.text[i][0], md.text[i][1], first.text[i][1]);
        uint64_t fingerprint = 0;
        if (rc == 0) rc = nmt_model_fingerprint_read(&file, paths[k], &fingerprint);
        if (rc == 0 && fingerprint != m.vocab_fingerprint)
            rc = nmt_error_set("%s: trained with another vocabulary than %s (vocab_fingerprint %016" PRIx64 ", not %016" PRIx64 ")",
                               paths[k], paths[0], fingerprint, m.vocab_fingerprint);
        /* m.grads is free scratch space while averaging (made by nmt_model_zero_grads). */
        if (rc == 0 && *prefix && !has_prefixed(&file, prefix, m.tensors[0].name))
            rc = nmt_error_set("%s: no %s* tensors (a checkpoint of a run without train.ema_decay, or not a "
                               "checkpoint)", paths[k], prefix);
        if (rc == 0) rc = nmt_model_tensor_read(&m, m.grads, prefix, &file, paths[k]);
        for (size_t j = 0; rc == 0 && j < m.num_params; j++) m.params[j] += m.grads[j];
        nmt_st_free(&file);
    }
    for (size_t j = 0; rc == 0 && j < m.num_params; j++) m.params[j] /= (float)count;
    if (rc == 0) rc = nmt_model_save(&m, out);
    nmt_model_free(&m);
    return rc;
}

/* ---- the checkpoint directory ---- */

typedef struct checkpoint {
    unsigned long long step;
    char *path;
} checkpoint;

static int compare_steps(const void *a, const void *b) {
    const checkpoint *x = a, *y = b;
    return (x->step > y->step) - (x->step < y->step);
}

/* The step of a file named exactly "step-<1 to 18 digits>.safetensors", or -1. */
static long long checkpoint_step(const char *name) {
    if (strncmp(name, "step-", 5) != 0) return -1;
    const char *p = name + 5;
    unsigned long long step = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 18; p++, digits++) step = step * 10 + (unsigned)(*p - '0');
    return digits > 0 && strcmp(p, ".safetensors") == 0 ? (long long)step : -1;
}

char *nmt_model_checkpoint_path(const char *model_dir, long step) {
    char name[64];
    snprintf(name, sizeof name, "checkpoints/step-%08ld.safetensors", step);
    return nmt_path_join(model_dir, name);
}

void nmt_model_paths_free(char **paths) {
    for (char **p = paths; p && *p; p++) free(*p);
    free(paths);
}

int nmt_model_checkpoints(const char *model_dir, char ***paths, int *count) {
    *paths = NULL;
    *count = 0;
    char *dir_path = nmt_path_join(model_dir, "checkpoints");
    if (!dir_path) return -1;
    checkpoint *found = NULL;
    int n = 0, rc = 0;
    DIR *dir = opendir(dir_path);
    if (!dir && errno != ENOENT) rc = nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot list: %s",
                                                         dir_path, strerror(errno));
    for (struct dirent *e; rc == 0 && dir && (e = readdir(dir));) {
        long long step = checkpoint_step(e->d_name);
        if (step < 0) continue;
        checkpoint *grown = nmt_realloc(found, (size_t)(n + 1) * sizeof *grown);
        if (!grown) {
            rc = -1;
            break;
        }
        found = grown;
        found[n].step = (unsigned long long)step;
        if (!(found[n].path = nmt_path_join(dir_path, e->d_name))) rc = -1;
        else n++;
    }
    if (dir) closedir(dir);
    free(dir_path);
    if (n > 1) qsort(found, (size_t)n, sizeof *found, compare_steps);
    char **list = rc == 0 ? nmt_malloc((size_t)(n + 1) * sizeof *list) : NULL;
    for (int i = 0; i < n; i++) {
        if (list) list[i] = found[i].path;
        else free(found[i].path);
    }
    free(found);
    if (!list) return -1;
    list[n] = NULL;
    *paths = list;
    *count = n;
    return 0;
}
