/* placement: where a translator's weights lie while it decodes -- read into the parameters, mapped
 * from the model file in place, or read into the parameters only while they are packed -- and the
 * pages given back once packed copies hold them. */
#include "model/placement.h"
#include "model/model_file.h"
#include "base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The file's data where it is laid out exactly like params (every tensor F32 at its parameter
 * offset: what nmt writes), else NULL. */
static const float *same_layout(const nmt_model *m, const nmt_st_file *file) {
    const nmt_st_tensor *first = m->num_tensors > 0 ? nmt_st_find(file, m->tensors[0].name) : NULL;
    if (!first || first->dtype != NMT_ST_F32 || (uintptr_t)first->data % sizeof(float) != 0) return NULL;
    const unsigned char *base = (const unsigned char *)first->data - m->tensors[0].offset * sizeof(float);
    for (int i = 0; i < m->num_tensors; i++) {
        const nmt_st_tensor *t = nmt_st_find(file, m->tensors[i].name);
        if (!t || t->dtype != NMT_ST_F32 || t->size != m->tensors[i].count * sizeof(float) ||
            (const unsigned char *)t->data != base + m->tensors[i].offset * sizeof(float))
            return NULL;
    }
    return (const float *)(const void *)base;
}

int nmt_model_load_deferred(nmt_model *m, const char *path) {
    nmt_st_file *file = nmt_malloc(sizeof *file);
    if (!file) return -1;
    if (nmt_model_file_open(m, file, path) < 0) {
        free(file);
        return -1;
    }
    /* Read in place where the file is laid out like params; else (an int8 file) read into params
     * a matrix at a time, when its reader asks. */
    const float *floats = same_layout(m, file);
    const nmt_params *p = &m->p;
    int rc = (m->deferred = nmt_calloc((size_t)m->num_tensors, 1)) ? 0 : -1;
    for (int i = 0; rc == 0 && i < m->num_tensors; i++) {
        const float *at = m->params + m->tensors[i].offset;
        const int table = at == p->src_embed || at == p->tgt_embed || at == p->src_positions || at == p->tgt_positions;
        if (m->tensors[i].rank == 2 && (!table || at == p->output))
            m->deferred[i] = floats ? NMT_TENSOR_MAPPED : NMT_TENSOR_UNREAD;
    }
    if (rc == 0) rc = nmt_model_file_read(m, file, path);
    if (rc < 0) {
        nmt_st_free(file);
        free(file);
        nmt_model_free(m);
        return -1;
    }
    m->source = file;
    m->source_floats = floats;
    m->release_marked = 1; /* params lack the deferred tensors */
    return 0;
}

int nmt_model_load_whole(nmt_model *whole, const nmt_model *m) {
    memset(whole, 0, sizeof *whole);
    if (!m->source) return nmt_error_set("the model was not loaded deferred: it has no file to read again");
    const char *path = m->source->path ? m->source->path : "the model file";
    if (nmt_st_unchanged(m->source) < 0 || nmt_model_init(whole, &m->config) < 0) return -1;
    whole->vocab_fingerprint = m->vocab_fingerprint;
    if (nmt_model_tensor_read(whole, whole->params, "", m->source, path) < 0 ||
        (m->int8_rounded && nmt_model_quantize_int8(whole) < 0)) {
        nmt_model_free(whole);
        return -1;
    }
    return 0;
}

/* 1 when tensor i overlaps params [at, at + count). */
static int overlaps(const nmt_tensor_info *t, size_t at, size_t count) {
    return t->offset < at + count && at < t->offset + t->count;
}

/* The place of the tensor holding params offset `at`: NMT_TENSOR_IN_PARAMS for all but a deferred one. */
static nmt_tensor_place place_at(const nmt_model *m, size_t at) {
    for (int i = 0; m->deferred && i < m->num_tensors; i++)
        if (overlaps(&m->tensors[i], at, 1)) return (nmt_tensor_place)m->deferred[i];
    return NMT_TENSOR_IN_PARAMS;
}

/* Params offset of p, or (size_t)-1 outside params or on a model without deferred tensors. */
static size_t deferred_offset(const nmt_model *m, const float *p) {
    if (!m->deferred || p < m->params || p >= m->params + m->num_params) return (size_t)-1;
    return (size_t)(p - m->params);
}

int nmt_model_matrix_deferred(const nmt_model *m, const float *p) {
    const size_t at = deferred_offset(m, p);
    return at != (size_t)-1 && place_at(m, at) != NMT_TENSOR_IN_PARAMS;
}

const float *nmt_model_matrix(const nmt_model *m, const float *p, size_t count) {
    const size_t at = deferred_offset(m, p);
    if (at == (size_t)-1) return p;
    if (place_at(m, at) == NMT_TENSOR_MAPPED) return m->source_floats + at;
    /* Reads the unread tensors of the range into their own (so far untouched) pages of params: the
     * model is const to its readers, but those pages are no one else's. Checked at load. */
    for (int i = 0; i < m->num_tensors; i++) {
        if (m->deferred[i] != NMT_TENSOR_UNREAD || !overlaps(&m->tensors[i], at, count)) continue;
        (void)nmt_model_tensor_load(m, i, m->params, m->source, m->source->path);
        m->deferred[i] = NMT_TENSOR_READ;
    }
    return p;
}

void nmt_model_matrix_done(const nmt_model *m, const float *p, size_t count) {
    const size_t at = deferred_offset(m, p);
    const nmt_tensor_place place = at == (size_t)-1 ? NMT_TENSOR_IN_PARAMS : place_at(m, at);
    if (place == NMT_TENSOR_IN_PARAMS) return;
    if (place == NMT_TENSOR_MAPPED) {
        nmt_st_release(m->source, m->source_floats + at, count * sizeof(float));
        return;
    }
    nmt_pages_release(p, count * sizeof(float));
    for (int i = 0; i < m->num_tensors; i++)
        if (m->deferred[i] == NMT_TENSOR_READ && overlaps(&m->tensors[i], at, count)) m->deferred[i] = NMT_TENSOR_UNREAD;
}

size_t nmt_model_release(nmt_model *m, const float *first, size_t count) {
    if (!m->params || first < m->params || count > m->num_params || (size_t)(first - m->params) > m->num_params - count)
        return 0;
    m->release_marked = 1;
    nmt_model_matrix_done(m, first, count);
    const size_t released = nmt_pages_release(first, count * sizeof(float));
    m->released += released;
    return released;
}
