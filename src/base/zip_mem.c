/* zip_mem: zip archives read and written in memory (zip_mem.h). */
#include "base/zip_mem.h"

#include "base/strbuf.h"
#include "base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum { END_RECORD = 22, MAX_COMMENT = 65535, CENTRAL = 46, LOCAL = 30 };

static uint32_t get16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t get32(const unsigned char *p) { return get16(p) | get16(p + 2) << 16; }

/* Inflates (or copies) the entry's compressed bytes into e->data, checking its size and CRC. */
static int inflate_entry(nmt_zip_entry *e, const unsigned char *in, size_t compressed, uint32_t crc, const char *what) {
    e->data = nmt_malloc(e->size + 1);
    if (!e->data) return -1;
    if (e->method == 0) {
        if (compressed != e->size) return nmt_error_set("%s: %s: stored with two different sizes", what, e->name);
        memcpy(e->data, in, e->size);
    } else {
        z_stream z; /* room for one byte more than declared, to tell "more bytes" from "the right size" */
        memset(&z, 0, sizeof z);
        if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return nmt_error_set("%s: %s: zlib cannot start", what, e->name);
        z.next_in = (unsigned char *)(uintptr_t)in;
        z.avail_in = (uInt)compressed;
        z.next_out = e->data;
        z.avail_out = (uInt)e->size + 1;
        const int status = inflate(&z, Z_FINISH);
        const size_t got = e->size + 1 - z.avail_out;
        inflateEnd(&z);
        if (got > e->size) return nmt_error_set("%s: %s: more bytes than the directory gives", what, e->name);
        if (status != Z_STREAM_END)
            return nmt_error_set("%s: %s: damaged deflate data (%s)", what, e->name, z.msg ? z.msg : "cut short");
        if (got != e->size) return nmt_error_set("%s: %s: not the size the directory gives", what, e->name);
    }
    if ((uint32_t)crc32(crc32(0L, Z_NULL, 0), e->data, (uInt)e->size) != crc)
        return nmt_error_set("%s: %s: CRC mismatch", what, e->name);
    e->data[e->size] = 0;
    return 0;
}

/* Entry i, its central record at p (next: where the record ends), read from the archive a[0, len). */
static int read_entry(const unsigned char *a, size_t len, const unsigned char *p, size_t name_len, size_t *total,
                      size_t max_bytes, const char *what, nmt_zip_entry *e) {
    const uint32_t flags = get16(p + 8), crc = get32(p + 16), compressed = get32(p + 20), size = get32(p + 24),
                   local = get32(p + 42);
    e->method = (int)get16(p + 10);
    e->dos_time = get16(p + 12);
    e->dos_date = get16(p + 14);
    if (!(e->name = nmt_malloc(name_len + 1))) return -1;
    memcpy(e->name, p + CENTRAL, name_len);
    e->name[name_len] = '\0';
    if (memchr(e->name, '\0', name_len)) return nmt_error_set("%s: an entry's name holds a NUL byte", what);
    if (flags & 1) return nmt_error_set("%s: %s is encrypted", what, e->name);
    if (e->method != 0 && e->method != 8)
        return nmt_error_set("%s: %s uses compression method %d (only stored and deflated are read)", what, e->name,
                             e->method);
    if (size == 0xFFFFFFFFu || compressed == 0xFFFFFFFFu || local == 0xFFFFFFFFu)
        return nmt_error_set("%s: %s: a zip64 entry, which nmt does not read", what, e->name);
    if ((*total += size) > max_bytes)
        return nmt_error_set("%s: %s: the archive holds more than %zu bytes", what, e->name, max_bytes);
    if ((size_t)local > len || len - local < LOCAL || get32(a + local) != 0x04034b50)
        return nmt_error_set("%s: %s: no local header where the directory says", what, e->name);
    const size_t data = (size_t)local + LOCAL + get16(a + local + 26) + get16(a + local + 28);
    if (data > len || compressed > len - data)
        return nmt_error_set("%s: %s: its data lies outside the archive", what, e->name);
    e->size = size;
    return inflate_entry(e, a + data, compressed, crc, what);
}

int nmt_zip_mem_read(const void *data, size_t len, size_t max_bytes, const char *what, nmt_zip_mem *out) {
    const unsigned char *a = data;
    memset(out, 0, sizeof *out);
    if (len < END_RECORD) return nmt_error_set("%s: not a zip archive (too short)", what);
    const size_t span = len < END_RECORD + MAX_COMMENT ? len : END_RECORD + MAX_COMMENT;
    const unsigned char *e = NULL;
    for (size_t i = len - END_RECORD + 1; i-- > len - span && !e;)
        if (get32(a + i) == 0x06054b50) e = a + i;
    if (!e) return nmt_error_set("%s: not a zip archive (no end of central directory)", what);
    const uint32_t entries = get16(e + 10), bytes = get32(e + 12), offset = get32(e + 16);
    if (get16(e + 8) == 0xFFFF || entries == 0xFFFF || bytes == 0xFFFFFFFFu || offset == 0xFFFFFFFFu)
        return nmt_error_set("%s: a zip64 archive, which nmt does not read", what);
    if (offset > len || bytes > len - offset)
        return nmt_error_set("%s: the central directory lies outside the archive", what);
    if (!(out->entries = nmt_calloc(entries ? entries : 1, sizeof *out->entries))) return -1;
    size_t at = offset, total = 0;
    for (uint32_t i = 0; i < entries; i++) {
        const unsigned char *p = a + at;
        if (at + CENTRAL > (size_t)offset + bytes || get32(p) != 0x02014b50)
            return nmt_error_set("%s: central directory entry %u is damaged", what, i + 1);
        const size_t name_len = get16(p + 28), next = at + CENTRAL + name_len + get16(p + 30) + get16(p + 32);
        if (next > (size_t)offset + bytes || name_len > NMT_ZIP_MEM_MAX_NAME)
            return nmt_error_set("%s: central directory entry %u has a name that is too long or damaged", what, i + 1);
        out->count++;
        if (read_entry(a, len, p, name_len, &total, max_bytes, what, &out->entries[i]) < 0) return -1;
        at = next;
    }
    return 0;
}

static void put16(nmt_strbuf *b, uint32_t v) {
    const char c[2] = {(char)(v & 0xFF), (char)(v >> 8 & 0xFF)};
    nmt_strbuf_append(b, c, 2);
}
static void put32(nmt_strbuf *b, uint32_t v) {
    put16(b, v & 0xFFFF);
    put16(b, v >> 16);
}

/* The entry's header fields from "version needed" to the extra field's length (local and central). */
static void put_fields(nmt_strbuf *b, const nmt_zip_entry *e, uint32_t crc, size_t compressed) {
    put16(b, 20);
    put16(b, 1u << 11); /* names are UTF-8 */
    put16(b, (uint32_t)e->method);
    put16(b, e->dos_time);
    put16(b, e->dos_date);
    put32(b, crc);
    put32(b, (uint32_t)compressed);
    put32(b, (uint32_t)e->size);
    put16(b, (uint32_t)strlen(e->name));
    put16(b, 0);
}

/* e's data as it is stored: deflated into *packed (free it), or e->data itself. */
static int pack(const nmt_zip_entry *e, unsigned char **packed, size_t *n) {
    *packed = NULL;
    *n = e->size;
    if (e->method != 8) return 0;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return nmt_error_set("%s: zlib cannot start", e->name);
    const size_t bound = deflateBound(&z, (uLong)e->size);
    if (!(*packed = nmt_malloc(bound))) return deflateEnd(&z), -1;
    z.next_in = e->data;
    z.avail_in = (uInt)e->size;
    z.next_out = *packed;
    z.avail_out = (uInt)bound;
    const int status = deflate(&z, Z_FINISH);
    *n = bound - z.avail_out;
    deflateEnd(&z);
    return status == Z_STREAM_END ? 0 : nmt_error_set("%s: zlib cannot deflate", e->name);
}

int nmt_zip_mem_write(const nmt_zip_mem *z, unsigned char **out, size_t *len) {
    nmt_strbuf b = {0}, central = {0};
    *out = NULL;
    *len = 0;
    if (z->count > NMT_ZIP_MEM_MAX_ENTRIES) return nmt_error_set("zip: more than %d entries", NMT_ZIP_MEM_MAX_ENTRIES);
    for (int i = 0; i < z->count && !b.failed && !central.failed; i++) {
        const nmt_zip_entry *e = &z->entries[i];
        const uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), e->data, (uInt)e->size);
        unsigned char *packed;
        size_t n;
        if (pack(e, &packed, &n) < 0) goto failed;
        const size_t local = b.len;
        if (e->size >= 0xFFFFFFFFu || b.len + LOCAL + strlen(e->name) + n >= 0xFFFFFFFFu) {
            free(packed);
            nmt_error_set("zip: %s: the archive would reach 4 GiB (zip64)", e->name);
            goto failed;
        }
        put32(&b, 0x04034b50);
        put_fields(&b, e, crc, n);
        nmt_strbuf_puts(&b, e->name);
        if (n) nmt_strbuf_append(&b, packed ? (const char *)packed : (const char *)e->data, n);
        free(packed);
        put32(&central, 0x02014b50);
        put16(&central, 20);
        put_fields(&central, e, crc, n);
        put16(&central, 0); /* comment */
        put16(&central, 0); /* disk */
        put16(&central, 0); /* internal attributes */
        put32(&central, 0); /* external attributes */
        put32(&central, (uint32_t)local);
        nmt_strbuf_puts(&central, e->name);
    }
    const size_t offset = b.len;
    nmt_strbuf_append(&b, central.data ? central.data : "", central.len);
    put32(&b, 0x06054b50);
    put32(&b, 0);
    put16(&b, (uint32_t)z->count);
    put16(&b, (uint32_t)z->count);
    put32(&b, (uint32_t)central.len);
    put32(&b, (uint32_t)offset);
    put16(&b, 0);
    if (b.failed || central.failed || b.len >= 0xFFFFFFFFu) {
        if (b.len >= 0xFFFFFFFFu) nmt_error_set("zip: the archive would reach 4 GiB (zip64)");
        goto failed;
    }
    nmt_strbuf_free(&central);
    *out = (unsigned char *)b.data;
    *len = b.len;
    return 0;
failed:
    nmt_strbuf_free(&b);
    nmt_strbuf_free(&central);
    return -1;
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
