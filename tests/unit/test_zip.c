/* Tests of zip, the codec: entries it writes read back the same from memory and from a file; every
 * record cut short at each of its fields, a central directory that disagrees with a local header, and
 * what a plain zip reader does not read (zip64, several disks, encryption, other methods, NUL in names)
 * are refused alike from both sources, naming the archive and the entry; names that leave a directory
 * are told apart; the writer refuses what a zip without zip64 cannot hold. */
#include "base/io.h"
#include "base/util.h"
#include "base/zip.h"
#include "testing.h"
#include "zip_fixture.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

typedef struct spec {
    const char *name, *data;
    unsigned method;
} spec;

static char text[3000];

/* An archive of the entries written by the codec into b (b.len bytes). */
static void build(nmt_strbuf *b, const spec *specs, int n) {
    nmt_zip_sink s = {.what = "t.zip", .buf = b};
    nmt_zip_record e[4];
    for (int i = 0; i < n; i++) {
        e[i] = (nmt_zip_record){.name = specs[i].name, .method = specs[i].method, .dos_time = 0x6000, .dos_date = 0x21};
        ck_assert_int_eq(nmt_zip_put_entry(&s, &e[i], (const unsigned char *)specs[i].data, strlen(specs[i].data)), 0);
    }
    const uint64_t central = s.at;
    for (int i = 0; i < n; i++) ck_assert_int_eq(nmt_zip_put_central(&s, &e[i]), 0);
    ck_assert_int_eq(nmt_zip_put_end(&s, (unsigned)n, central), 0);
    ck_assert_uint_eq(s.at, b->len);
}

/* One stored entry a.txt ("hello") and one deflated b.txt (text). */
static void build_two(nmt_strbuf *b) {
    for (size_t i = 0; i + 1 < sizeof text; i++) text[i] = (char)('a' + i % 13);
    const spec two[] = {{"a.txt", "hello", 0}, {"b.txt", text, 8}};
    build(b, two, 2);
}

/* Reads every entry of a[0, n), from memory or (from_file) from a file that holds those bytes, their
 * data one after the other into data and their names into names. */
static int read_all(const unsigned char *a, size_t n, int from_file, nmt_strbuf *data, nmt_strbuf *names) {
    nmt_zip_source src = {.what = "t.zip", .mem = from_file ? NULL : a, .size = n};
    char *path = nmt_path_join(nmt_test_tmpdir, "t.zip");
    if (from_file) {
        ck_assert_int_eq(nmt_atomic_write(path, a, n), 0);
        ck_assert_ptr_nonnull(src.fp = fopen(path, "rb"));
    }
    nmt_zip_reader r;
    nmt_zip_record e;
    nmt_zip_sink out = {.what = "out", .buf = data};
    int rc = nmt_zip_open(&r, src, 1 << 20);
    while (rc == 0 && (rc = nmt_zip_next(&r, &e)) > 0) {
        nmt_strbuf_printf(names, "%s %u %u %u|", e.name, e.method, e.dos_time, e.dos_date);
        rc = nmt_zip_read(&r, &e, &out);
    }
    nmt_zip_close(&r);
    if (src.fp) fclose(src.fp);
    free(path);
    return rc;
}

/* Both sources refuse a[0, n) with the same error, which names the archive and holds want. */
static void expect_refused(const unsigned char *a, size_t n, const char *want) {
    nmt_strbuf data = {0}, names = {0};
    ck_assert_int_eq(read_all(a, n, 0, &data, &names), -1);
    char *from_memory = nmt_strdup(nmt_error());
    ck_assert_int_eq(read_all(a, n, 1, &data, &names), -1);
    ck_assert_str_eq(nmt_error(), from_memory);
    ck_assert_msg(strncmp(nmt_error(), "t.zip: ", 7) == 0 && strstr(nmt_error(), want), "cut at %zu: '%s' lacks '%s'",
                  n, nmt_error(), want);
    free(from_memory);
    nmt_strbuf_free(&data);
    nmt_strbuf_free(&names);
}

/* The i-th record with signature "PK<kind>" in a[0, n). */
static unsigned char *record(unsigned char *a, size_t n, char kind, int i) {
    const char sig[4] = {'P', 'K', kind, (char)(kind + 1)};
    for (size_t at = 0; at + 4 <= n; at++)
        if (memcmp(a + at, sig, 4) == 0 && i-- == 0) return a + at;
    ck_abort_msg("no record %d of kind %d", i, kind);
    return NULL;
}

START_TEST(entries_read_back_alike_from_memory_and_file) {
    nmt_strbuf b = {0};
    for (size_t i = 0; i + 1 < sizeof text; i++) text[i] = (char)('a' + i % 13);
    const spec three[] = {{"dir/", "", 0}, {"dir/a.txt", "hello", 0}, {"b.txt", text, 8}};
    build(&b, three, 3);
    ck_assert_uint_lt(b.len, sizeof text); /* deflated */
    for (int from_file = 0; from_file <= 1; from_file++) {
        nmt_strbuf data = {0}, got = {0};
        ck_assert_msg(read_all((const unsigned char *)b.data, b.len, from_file, &data, &got) == 0, "%s", nmt_error());
        ck_assert_str_eq(got.data, "dir/ 0 24576 33|dir/a.txt 0 24576 33|b.txt 8 24576 33|");
        ck_assert_uint_eq(data.len, 5 + strlen(text));
        ck_assert(memcmp(data.data, "hello", 5) == 0 && strcmp(data.data + 5, text) == 0);
        nmt_strbuf_free(&data);
        nmt_strbuf_free(&got);
    }
    nmt_strbuf_free(&b);
}
END_TEST

START_TEST(each_record_cut_short_is_refused) {
    nmt_strbuf b = {0};
    const spec one[] = {{"a.txt", "hello", 0}};
    build(&b, one, 1);
    unsigned char *a = (unsigned char *)b.data;
    ck_assert_uint_eq(b.len, 40 + 51 + 22); /* local header, name, data; central entry, name; end record */
    /* The local header last (the end record is looked for, not assumed at the end): cut at each byte. */
    unsigned char moved[113];
    memcpy(moved, a + 40, 73);
    memcpy(moved + 73, a, 40);
    put32(moved + 42, 73); /* the local header's offset */
    put32(moved + 51 + 16, 0); /* the central directory's */
    nmt_strbuf data = {0}, names = {0};
    ck_assert_msg(read_all(moved, sizeof moved, 0, &data, &names) == 0, "%s", nmt_error());
    for (size_t k = 0; k < 40; k++)
        expect_refused(moved, 73 + k, k < 30   ? "a.txt: no local header where the directory says"
                                      : k < 35 ? "a.txt lies outside the archive"
                                               : "a.txt: its data lies outside the archive");
    /* The central entry cut at each byte (the end record gives fewer bytes). */
    unsigned char cut[113];
    for (uint32_t k = 0; k < 51; k++) {
        memcpy(cut, a, sizeof cut);
        put32(cut + 91 + 12, k);
        expect_refused(cut, sizeof cut, k < 46 ? "central directory entry 1 is damaged"
                                               : "central directory entry 1 has a name that is too long or damaged");
    }
    /* The end record cut at each byte. */
    for (size_t k = 0; k < 22; k++) expect_refused(a, 91 + k, "not a zip archive (no end of central directory)");
    expect_refused(a, 21, "not a zip archive (too short)");
    nmt_strbuf_free(&data);
    nmt_strbuf_free(&names);
    nmt_strbuf_free(&b);
}
END_TEST

/* Archive b with the 32-bit field at byte `at` of the i-th record of `kind` set to v, refused with want. */
static void expect_field_refused(const nmt_strbuf *b, char kind, int i, size_t at, uint32_t v, int width,
                                 const char *want) {
    unsigned char *copy = malloc(b->len);
    memcpy(copy, b->data, b->len);
    unsigned char *r = record(copy, b->len, kind, i);
    if (width == 2) put16(r + at, v);
    else if (width == 4) put32(r + at, v);
    else r[at] = (unsigned char)v;
    expect_refused(copy, b->len, want);
    free(copy);
}

START_TEST(a_directory_that_disagrees_with_a_local_header_is_refused) {
    nmt_strbuf b = {0};
    build_two(&b);
    const unsigned char *central = record((unsigned char *)b.data, b.len, 1, 1);
    const uint32_t packed = central[20] | central[21] << 8 | (uint32_t)central[22] << 16 | (uint32_t)central[23] << 24;
    expect_field_refused(&b, 3, 0, 30, 'x', 1, "a.txt: its local header gives another name");
    expect_field_refused(&b, 3, 0, 26, 4, 2, "a.txt: its local header gives another name");
    expect_field_refused(&b, 1, 0, 42, 1, 4, "a.txt: no local header where the directory says");
    expect_field_refused(&b, 1, 0, 24, 4, 4, "a.txt: stored with two different sizes");
    expect_field_refused(&b, 1, 0, 16, 0, 4, "a.txt: CRC mismatch");
    expect_field_refused(&b, 1, 1, 24, 100, 4, "b.txt: more bytes than the directory gives");
    expect_field_refused(&b, 1, 1, 24, sizeof text, 4, "b.txt: not the size the directory gives");
    expect_field_refused(&b, 1, 1, 20, packed - 1, 4, "b.txt: the deflate data ends early");
    expect_field_refused(&b, 1, 1, 20, (uint32_t)b.len, 4, "b.txt: its data lies outside the archive");
    expect_field_refused(&b, 3, 1, 30 + 5, 0xFF, 1, "b.txt: damaged deflate data");
    nmt_strbuf_free(&b);
}
END_TEST

START_TEST(what_a_plain_zip_reader_does_not_read_is_refused) {
    nmt_strbuf b = {0};
    build_two(&b);
    expect_field_refused(&b, 1, 0, 8, 1, 2, "t.zip: a.txt is encrypted");
    expect_field_refused(&b, 1, 0, 10, 12, 2, "t.zip: a.txt uses compression method 12");
    expect_field_refused(&b, 1, 1, 24, 0xFFFFFFFFu, 4, "t.zip: b.txt: a zip64 entry");
    expect_field_refused(&b, 1, 0, 46 + 1, 0, 1, "t.zip: an entry's name holds a NUL byte");
    expect_field_refused(&b, 1, 0, 28, 1024, 2, "central directory entry 1 has a name that is too long or damaged");
    expect_field_refused(&b, 5, 0, 16, 0xFFFFFFFFu, 4, "t.zip: a zip64 archive");
    expect_field_refused(&b, 5, 0, 4, 1, 2, "t.zip: an archive on several disks");
    expect_field_refused(&b, 5, 0, 8, 1, 2, "t.zip: an archive on several disks");
    expect_field_refused(&b, 5, 0, 12, 0x7FFFFFFFu, 4, "past the end record");
    /* A zip64 end record's locator just before the end record. */
    unsigned char *z64 = malloc(b.len + 20);
    const size_t end = b.len - 22;
    memcpy(z64, b.data, end);
    memset(z64 + end, 0, 20);
    put32(z64 + end, 0x07064b50);
    memcpy(z64 + end + 20, b.data + end, 22);
    expect_refused(z64, b.len + 20, "t.zip: a zip64 archive, which nmt does not read");
    free(z64);
    nmt_strbuf_free(&b);
}
END_TEST

START_TEST(names_that_leave_the_directory_are_told) {
    static const char *safe[] = {"a", "a/b.txt", "dir/", "a..b", "..a/b", "a/.../b", "./a"};
    static const char *unsafe[] = {"", "/etc/passwd", "..", "../x", "a/../../x", "a/..", "a\\b", "..\\x"};
    for (size_t i = 0; i < sizeof safe / sizeof *safe; i++) ck_assert_msg(nmt_zip_safe_name(safe[i]), "%s", safe[i]);
    for (size_t i = 0; i < sizeof unsafe / sizeof *unsafe; i++)
        ck_assert_msg(!nmt_zip_safe_name(unsafe[i]), "%s", unsafe[i]);
}
END_TEST

START_TEST(the_writer_refuses_what_a_plain_zip_cannot_hold) {
    nmt_strbuf b = {0};
    nmt_zip_sink s = {.what = "t.zip", .buf = &b};
    nmt_zip_record e = {.name = "big.bin"};
    ck_assert_int_eq(nmt_zip_put_entry(&s, &e, (const unsigned char *)"", 0xFFFFFFFFu), -1);
    ck_assert_str_eq(nmt_error(), "t.zip: big.bin: the archive would reach 4 GiB (zip64)");
    s.at = 0xFFFFFFFFu - 100; /* as if that much were written */
    e.compressed = 64;
    ck_assert_int_eq(nmt_zip_put_local(&s, &e), -1);
    ck_assert_str_eq(nmt_error(), "t.zip: big.bin: the archive would reach 4 GiB (zip64)");
    ck_assert_int_eq(nmt_zip_put_central(&s, &e), 0);
    ck_assert_int_eq(nmt_zip_put_end(&s, 65536, 0), -1);
    ck_assert_str_eq(nmt_error(), "t.zip: more than 65535 entries");
    ck_assert_uint_eq(b.len, 46 + 7);
    nmt_strbuf_free(&b);
}
END_TEST

int main(void) {
    Suite *s = suite_create("zip");
    TCase *tc = tcase_create("zip");
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, entries_read_back_alike_from_memory_and_file);
    tcase_add_test(tc, each_record_cut_short_is_refused);
    tcase_add_test(tc, a_directory_that_disagrees_with_a_local_header_is_refused);
    tcase_add_test(tc, what_a_plain_zip_reader_does_not_read_is_refused);
    tcase_add_test(tc, names_that_leave_the_directory_are_told);
    tcase_add_test(tc, the_writer_refuses_what_a_plain_zip_cannot_hold);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
