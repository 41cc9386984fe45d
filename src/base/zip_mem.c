/* zip_mem: zip archives read and written in memory (zip_mem.h), through zip.h's records. */
#include "base/zip_mem.h"

#include "base/strbuf.h"
#include "base/util.h"
#include "base/zip.h"

#include <stdlib.h>
#include <string.h>

/* The entry e of reader r, read whole into m. */
static int read_entry(nmt_zip_reader *r, const nmt_zip_record *e, nmt_zip_entry *m) {
    *m = (nmt_zip_entry){.method = (int)e->method, .dos_time = e->dos_time, .dos_date = e->dos_date};
    /* Exactly the room for its declared size and the NUL, which the reader never exceeds. */
    nmt_strbuf data = {.data = nmt_malloc((size_t)e->size + 1), .cap = (size_t)e->size + 1};
    nmt_zip_sink out = {.what = r->src.what, .buf = &data};
    int rc = -1;
    if ((m->name = nmt_strdup(e->name)) && data.data) {
        data.data[0] = '\0';
        rc = nmt_zip_read(r, e, &out);
    }
    m->data = (unsigned char *)data.data;
    m->size = data.len;
    return rc;
}

int nmt_zip_mem_read(const void *data, size_t len, size_t max_bytes, const char *what, nmt_zip_mem *out) {
    memset(out, 0, sizeof *out);
    nmt_zip_reader r;
    nmt_zip_record e;
    int rc = nmt_zip_open(&r, (nmt_zip_source){.what = what, .mem = data, .size = len}, max_bytes);
    if (rc == 0 && !(out->entries = nmt_calloc(r.count ? r.count : 1, sizeof *out->entries))) rc = -1;
    while (rc == 0 && (rc = nmt_zip_next(&r, &e)) > 0) rc = read_entry(&r, &e, &out->entries[out->count++]);
    nmt_zip_close(&r);
    return rc;
}

int nmt_zip_mem_write(const nmt_zip_mem *z, unsigned char **out, size_t *len) {
    nmt_strbuf b = {0};
    nmt_zip_sink sink = {.what = "zip", .buf = &b};
    nmt_zip_record *records = nmt_calloc(z->count ? (size_t)z->count : 1, sizeof *records);
    int rc = records ? 0 : -1;
    *out = NULL;
    *len = 0;
    for (int i = 0; rc == 0 && i < z->count; i++) {
        const nmt_zip_entry *e = &z->entries[i];
        records[i] = (nmt_zip_record){.name = e->name, .method = e->method == 8 ? 8u : 0u, .dos_time = e->dos_time,
                                      .dos_date = e->dos_date};
        rc = nmt_zip_put_entry(&sink, &records[i], e->data, e->size);
    }
    const uint64_t central = sink.at;
    for (int i = 0; rc == 0 && i < z->count; i++) rc = nmt_zip_put_central(&sink, &records[i]);
    if (rc == 0) rc = nmt_zip_put_end(&sink, (unsigned)z->count, central);
    free(records);
    if (rc < 0) {
        nmt_strbuf_free(&b);
        return -1;
    }
    *out = (unsigned char *)b.data;
    *len = b.len;
    return 0;
}

nmt_zip_entry *nmt_zip_mem_find(const nmt_zip_mem *z, const char *name) {
    for (int i = 0; i < z->count; i++)
        if (strcmp(z->entries[i].name, name) == 0) return &z->entries[i];
    return NULL;
}

void nmt_zip_mem_free(nmt_zip_mem *z) {
    for (int i = 0; i < z->count; i++) {
        free(z->entries[i].name);
        free(z->entries[i].data);
    }
    free(z->entries);
    memset(z, 0, sizeof *z);
}
