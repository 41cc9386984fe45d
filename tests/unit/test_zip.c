/* Tests of zip: stored and deflated entries come out whole, in their folders; names that leave the
 * directory, damaged data, other methods, oversized archives and non-archives are refused by name. */
#include "base/io.h"
#include "base/util.h"
#include "base/zip.h"
#include "testing.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* One entry of an archive the test writes. */
typedef struct entry {
    const char *name;
    const char *data;
    int method;       /* 0 stored, 8 deflated, or another (refused) */
    int flip_crc;     /* store a wrong CRC */
} entry;

static void put16(unsigned char *p, uint32_t v) { p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8); }
static void put32(unsigned char *p, uint32_t v) { put16(p, v & 0xFFFF), put16(p + 2, v >> 16); }

/* Raw deflate of data into out (room for n + 64); returns its size. */
static size_t deflate_raw(const char *data, size_t n, unsigned char *out) {
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

/* Writes an archive of the entries to path: local headers and data, central directory, end record. */
static void write_archive(const char *path, const entry *entries, int count) {
    static unsigned char file[1 << 16], central[1 << 14];
    size_t at = 0, c = 0;
    for (int i = 0; i < count; i++) {
        const entry *e = &entries[i];
        const size_t name_len = strlen(e->name), n = strlen(e->data);
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

static char *path_in(const char *name) { return nmt_path_join(nmt_test_tmpdir, name); }

static void expect_file(const char *dir, const char *name, const char *want) {
    char *path = nmt_path_join(dir, name), *data;
    size_t size;
    ck_assert_msg(nmt_read_file(path, &data, &size) == 0, "%s", nmt_error());
    ck_assert_uint_eq(size, strlen(want));
    ck_assert(memcmp(data, want, size) == 0);
    free(data);
    free(path);
}

/* Extracting entries into a fresh folder fails with an error naming the archive and `want`. */
static void expect_refused(const entry *entries, int count, size_t max_bytes, const char *want) {
    char *zip = path_in("bad.zip"), *out = path_in("bad");
    write_archive(zip, entries, count);
    ck_assert_int_eq(nmt_mkdirs(out), 0);
    ck_assert_int_eq(nmt_zip_extract(zip, out, max_bytes), -1);
    ck_assert_msg(strstr(nmt_error(), zip) && strstr(nmt_error(), want), "'%s' lacks '%s'", nmt_error(), want);
    free(zip);
    free(out);
}

START_TEST(stored_and_deflated_entries_come_out_whole) {
    static char big[4000];
    for (size_t i = 0; i + 1 < sizeof big; i++) big[i] = (char)('a' + i % 7);
    const entry entries[] = {{"pkg/", "", 0, 0}, {"pkg/metadata.json", "{\"from_code\": \"ar\"}", 0, 0},
                             {"pkg/model/model.bin", big, 8, 0}, {"top.txt", "", 8, 0}};
    char *zip = path_in("a.argosmodel"), *out = path_in("out");
    write_archive(zip, entries, 4);
    ck_assert_int_eq(nmt_zip_is_archive(zip), 1);
    ck_assert_int_eq(nmt_mkdirs(out), 0);
    ck_assert_msg(nmt_zip_extract(zip, out, 1 << 20) == 0, "%s", nmt_error());
    expect_file(out, "pkg/metadata.json", "{\"from_code\": \"ar\"}");
    expect_file(out, "pkg/model/model.bin", big);
    expect_file(out, "top.txt", "");
    free(zip);
    free(out);
}
END_TEST

START_TEST(bad_archives_are_refused_by_name) {
    const entry climb[] = {{"pkg/../../evil", "x", 0, 0}};
    expect_refused(climb, 1, 1 << 20, "leaves the directory");
    const entry absolute[] = {{"/etc/evil", "x", 0, 0}};
    expect_refused(absolute, 1, 1 << 20, "leaves the directory");
    const entry backslash[] = {{"..\\evil", "x", 0, 0}};
    expect_refused(backslash, 1, 1 << 20, "leaves the directory");
    const entry crc[] = {{"a.txt", "some text", 8, 1}};
    expect_refused(crc, 1, 1 << 20, "a.txt: CRC mismatch");
    const entry method[] = {{"a.txt", "some text", 12, 0}};
    expect_refused(method, 1, 1 << 20, "a.txt uses compression method 12");
    const entry big[] = {{"a.txt", "0123456789", 0, 0}, {"b.txt", "0123456789", 8, 0}};
    expect_refused(big, 2, 15, "b.txt: the archive holds more than 15 bytes");
    /* Not an archive: text, and an archive cut before its central directory. */
    char *text = path_in("text.zip");
    ck_assert_int_eq(nmt_atomic_write(text, "just some text, long enough to hold an end record", 49), 0);
    ck_assert_int_eq(nmt_zip_is_archive(text), 0);
    ck_assert_int_eq(nmt_zip_extract(text, nmt_test_tmpdir, 1 << 20), -1);
    ck_assert_msg(strstr(nmt_error(), "not a zip archive (no end of central directory)"), "%s", nmt_error());
    free(text);
}
END_TEST

int main(void) {
    Suite *s = suite_create("zip");
    TCase *tc = tcase_create("zip");
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, stored_and_deflated_entries_come_out_whole);
    tcase_add_test(tc, bad_archives_are_refused_by_name);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
