/* Tests of zip_mem: archives read in memory give their entries whole, in order, with their methods;
 * written entries read back the same (and as the file reader reads them); damaged, encrypted,
 * other-method, oversized and cut archives are refused by name. */
#include "base/io.h"
#include "base/util.h"
#include "base/zip_mem.h"
#include "testing.h"
#include "zip_fixture.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* Writes entries as an archive (the fixture's writer) and reads it back into memory. */
static char *archive_bytes(const entry *entries, int count, size_t *len) {
    char *path = nmt_path_join(nmt_test_tmpdir, "a.zip"), *data;
    write_archive(path, entries, count);
    ck_assert_int_eq(nmt_read_file(path, &data, len), 0);
    free(path);
    return data;
}

static void expect_refused(const entry *entries, int count, size_t max_bytes, const char *want) {
    size_t len;
    char *data = archive_bytes(entries, count, &len);
    nmt_zip_mem z;
    ck_assert_int_eq(nmt_zip_mem_read(data, len, max_bytes, "doc.docx", &z), -1);
    ck_assert_msg(strstr(nmt_error(), "doc.docx") && strstr(nmt_error(), want), "'%s' lacks '%s'", nmt_error(), want);
    nmt_zip_mem_free(&z);
    free(data);
}

START_TEST(entries_are_read_whole_in_order) {
    static char big[5000];
    for (size_t i = 0; i + 1 < sizeof big; i++) big[i] = (char)('a' + i % 11);
    const entry entries[] = {{"mimetype", "application/vnd.oasis.opendocument.text", 0, 0},
                             {"content.xml", big, 8, 0},
                             {"empty/", "", 0, 0},
                             {"z.txt", "", 8, 0}};
    size_t len;
    char *data = archive_bytes(entries, 4, &len);
    nmt_zip_mem z;
    ck_assert_msg(nmt_zip_mem_read(data, len, 1 << 20, "doc.odt", &z) == 0, "%s", nmt_error());
    ck_assert_int_eq(z.count, 4);
    for (int i = 0; i < 4; i++) {
        ck_assert_str_eq(z.entries[i].name, entries[i].name);
        ck_assert_int_eq(z.entries[i].method, entries[i].method);
        ck_assert_uint_eq(z.entries[i].size, strlen(entries[i].data));
        ck_assert(z.entries[i].size == 0 || memcmp(z.entries[i].data, entries[i].data, z.entries[i].size) == 0);
    }
    ck_assert_ptr_eq(nmt_zip_mem_find(&z, "content.xml"), &z.entries[1]);
    ck_assert_ptr_null(nmt_zip_mem_find(&z, "nothing"));
    /* Written back, the archive reads as the same entries, the deflated one smaller than its text. */
    unsigned char *out;
    size_t out_len;
    ck_assert_msg(nmt_zip_mem_write(&z, &out, &out_len) == 0, "%s", nmt_error());
    ck_assert(out_len < sizeof big);
    ck_assert(memcmp(out, "PK\3\4", 4) == 0 && memcmp(out + 30, "mimetype", 8) == 0); /* first, as ODF asks */
    nmt_zip_mem again;
    ck_assert_msg(nmt_zip_mem_read(out, out_len, 1 << 20, "again", &again) == 0, "%s", nmt_error());
    ck_assert_int_eq(again.count, 4);
    for (int i = 0; i < 4; i++) {
        ck_assert_str_eq(again.entries[i].name, z.entries[i].name);
        ck_assert_int_eq(again.entries[i].method, z.entries[i].method);
        ck_assert_uint_eq(again.entries[i].size, z.entries[i].size);
        ck_assert(!z.entries[i].size || memcmp(again.entries[i].data, z.entries[i].data, z.entries[i].size) == 0);
    }
    /* Every archive cut short is refused, never read past its end. */
    for (size_t n = 0; n < out_len; n++) {
        nmt_zip_mem cut;
        unsigned char *copy = malloc(n ? n : 1);
        memcpy(copy, out, n);
        ck_assert_int_eq(nmt_zip_mem_read(copy, n, 1 << 20, "cut", &cut), -1);
        nmt_zip_mem_free(&cut);
        free(copy);
    }
    /* An entry without data (NULL, 0 bytes), stored or deflated, is written as an empty one. */
    nmt_zip_entry empty[] = {{"e.txt", NULL, 0, 8, 0, 0x21}, {"s.txt", NULL, 0, 0, 0, 0x21}};
    const nmt_zip_mem two = {empty, 2};
    unsigned char *small;
    size_t small_len;
    ck_assert_int_eq(nmt_zip_mem_write(&two, &small, &small_len), 0);
    nmt_zip_mem_free(&again);
    ck_assert_msg(nmt_zip_mem_read(small, small_len, 1 << 20, "empty", &again) == 0, "%s", nmt_error());
    ck_assert_int_eq(again.count, 2);
    ck_assert_uint_eq(again.entries[0].size + again.entries[1].size, 0);
    ck_assert_str_eq((const char *)again.entries[0].data, ""); /* read entries end with a NUL byte */
    free(small);
    nmt_zip_mem_free(&again);
    nmt_zip_mem_free(&z);
    free(out);
    free(data);
}
END_TEST

START_TEST(bad_archives_are_refused_by_name) {
    const entry crc[] = {{"word/document.xml", "<w:document/>", 8, 1}};
    expect_refused(crc, 1, 1 << 20, "word/document.xml: CRC mismatch");
    const entry method[] = {{"a.xml", "some text", 12, 0}};
    expect_refused(method, 1, 1 << 20, "a.xml uses compression method 12");
    const entry big[] = {{"a.xml", "0123456789", 0, 0}, {"b.xml", "0123456789", 8, 0}};
    expect_refused(big, 2, 15, "b.xml: the archive holds more than 15 bytes");
    nmt_zip_mem z;
    const char text[] = "just some text, long enough to hold an end record";
    ck_assert_int_eq(nmt_zip_mem_read(text, sizeof text - 1, 1 << 20, "doc.docx", &z), -1);
    ck_assert_msg(strstr(nmt_error(), "doc.docx: not a zip archive (no end of central directory)"), "%s", nmt_error());
    /* Encrypted: the flag in the central directory. */
    size_t len;
    const entry plain[] = {{"a.xml", "x", 0, 0}};
    char *data = archive_bytes(plain, 1, &len);
    data[30 + 5 + 1 + 8] = 1; /* the central record's flags, after the local header, name and data */
    ck_assert_int_eq(nmt_zip_mem_read(data, len, 1 << 20, "doc.docx", &z), -1);
    ck_assert_msg(strstr(nmt_error(), "doc.docx: a.xml is encrypted"), "%s", nmt_error());
    nmt_zip_mem_free(&z);
    free(data);
}
END_TEST

int main(void) {
    Suite *s = suite_create("zip_mem");
    TCase *tc = tcase_create("zip_mem");
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, entries_are_read_whole_in_order);
    tcase_add_test(tc, bad_archives_are_refused_by_name);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
