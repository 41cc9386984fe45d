/* zip_fixture: zip archives written by the tests of their readers (test_zip_dir.c, test_zip_mem.c,
 * test_npz.c; test_zip.c takes its put16/put32): stored, deflated or other-method entries, with a wrong
 * CRC on demand, local headers, central directory and end record laid out as zip writers lay them out. */
#ifndef NMT_ZIP_FIXTURE_H
#define NMT_ZIP_FIXTURE_H

#include "base/io.h"

#include <check.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

/* One entry of an archive the test writes. */
typedef struct entry {
    const char *name;
    const char *data;
    int method;       /* 0 stored, 8 deflated, or another (refused) */
    int flip_crc;     /* store a wrong CRC */
} entry;

static inline void put16(unsigned char *p, uint32_t v) { p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8); }
static inline void put32(unsigned char *p, uint32_t v) { put16(p, v & 0xFFFF), put16(p + 2, v >> 16); }

/* Raw deflate of data into out (room for n + 64); returns its size. */
static inline size_t deflate_raw(const char *data, size_t n, unsigned char *out) {
    z_stream z;
    memset(&z, 0, sizeof z);
    ck_assert_int_eq(deflateInit2(&z, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (unsigned char *)data;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)(n + 64);
    ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t size = z.total_out;
    deflateEnd(&z);
    return size;
}

/* Writes an archive of the entries to path: local headers and data, central directory, end record;
 * entry i holds sizes[i] bytes of its data (sizes NULL: its data is a string). */
static inline void write_archive_sized(const char *path, const entry *entries, const size_t *sizes, int count) {
    static unsigned char file[1 << 16], central[1 << 14];
    size_t at = 0, c = 0;
    for (int i = 0; i < count; i++) {
        const entry *e = &entries[i];
        const size_t name_len = strlen(e->name), n = sizes ? sizes[i] : strlen(e->data);
        unsigned char *local = file + at;
        const uint32_t crc = (uint32_t)crc32(0, (const unsigned char *)e->data, (uInt)n) ^ (e->flip_crc ? 1u : 0u);
        memset(local, 0, 30);
        put32(local, 0x04034b50);
        put16(local + 8, (uint32_t)e->method);
        put16(local + 26, (uint32_t)name_len);
        memcpy(local + 30, e->name, name_len);
        unsigned char *data = local + 30 + name_len;
        size_t stored = n;
        if (e->method == 8) stored = deflate_raw(e->data, n, data);
        else memcpy(data, e->data, n);
        unsigned char *r = central + c;
        memset(r, 0, 46);
        put32(r, 0x02014b50);
        put16(r + 10, (uint32_t)e->method);
        put32(r + 16, crc);
        put32(r + 20, (uint32_t)stored);
        put32(r + 24, (uint32_t)n);
        put16(r + 28, (uint32_t)name_len);
        put32(r + 42, (uint32_t)at);
        memcpy(r + 46, e->name, name_len);
        c += 46 + name_len;
        at += 30 + name_len + stored;
    }
    memcpy(file + at, central, c);
    unsigned char *end = file + at + c;
    memset(end, 0, 22);
    put32(end, 0x06054b50);
    put16(end + 8, (uint32_t)count);
    put16(end + 10, (uint32_t)count);
    put32(end + 12, (uint32_t)c);
    put32(end + 16, (uint32_t)at);
    ck_assert_int_eq(nmt_atomic_write(path, file, at + c + 22), 0);
}

static inline void write_archive(const char *path, const entry *entries, int count) {
    write_archive_sized(path, entries, NULL, count);
}

#endif
