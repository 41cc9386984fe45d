/* Tests of zip_dir: stored and deflated entries come out whole, in their folders; names that leave the
 * directory, damaged data, oversized archives and non-archives are refused by name. A
 * tree (nested folders, an empty file, a file larger than one copy chunk) written as an archive comes
 * back whole, under its prefix or at the root; the same tree gives the same bytes twice; a link is
 * refused by name and leaves no archive. */
#include "base/io.h"
#include "base/util.h"
#include "base/zip.h"
#include "base/zip_dir.h"
#include "testing.h"
#include "zip_fixture.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char big[200000];

static char *in_tmp(const char *name) { return nmt_path_join(nmt_test_tmpdir, name); }

static void put_file(const char *dir, const char *name, const char *data, size_t size) {
    char *path = nmt_path_join(dir, name);
    ck_assert_int_eq(nmt_atomic_write(path, data, size), 0);
    free(path);
}

static void expect_file(const char *dir, const char *name, const char *want, size_t want_size) {
    char *path = nmt_path_join(dir, name), *data;
    size_t size;
    ck_assert_msg(nmt_read_file(path, &data, &size) == 0, "%s", nmt_error());
    ck_assert_uint_eq(size, want_size);
    ck_assert(memcmp(data, want, size) == 0);
    free(data);
    free(path);
}

static char *make_tree(void) {
    for (size_t i = 0; i < sizeof big; i++) big[i] = (char)(i * 7 + i / 1000);
    char *tree = in_tmp("tree"), *model = nmt_path_join(tree, "model");
    ck_assert_int_eq(nmt_mkdirs(model), 0);
    put_file(tree, "metadata.json", "{\"from_code\": \"en\"}", 19);
    put_file(tree, "empty", "", 0);
    put_file(model, "model.bin", big, sizeof big);
    free(model);
    return tree;
}

/* Extracting entries into a fresh folder fails with an error naming the archive and `want`. */
static void expect_refused(const entry *entries, int count, size_t max_bytes, const char *want) {
    char *zip = in_tmp("bad.zip"), *out = in_tmp("bad");
    write_archive(zip, entries, count);
    ck_assert_int_eq(nmt_mkdirs(out), 0);
    ck_assert_int_eq(nmt_zip_dir_extract(zip, out, max_bytes), -1);
    ck_assert_msg(strstr(nmt_error(), zip) && strstr(nmt_error(), want), "'%s' lacks '%s'", nmt_error(), want);
    free(zip);
    free(out);
}

START_TEST(stored_and_deflated_entries_come_out_whole) {
    static char text[4000];
    for (size_t i = 0; i + 1 < sizeof text; i++) text[i] = (char)('a' + i % 7);
    const entry entries[] = {{"pkg/", "", 0, 0}, {"pkg/metadata.json", "{\"from_code\": \"ar\"}", 0, 0},
                             {"pkg/model/model.bin", text, 8, 0}, {"top.txt", "", 8, 0}};
    char *zip = in_tmp("a.argosmodel"), *out = in_tmp("out");
    write_archive(zip, entries, 4);
    ck_assert_int_eq(nmt_zip_is_archive(zip), 1);
    ck_assert_int_eq(nmt_mkdirs(out), 0);
    ck_assert_msg(nmt_zip_dir_extract(zip, out, 1 << 20) == 0, "%s", nmt_error());
    expect_file(out, "pkg/metadata.json", "{\"from_code\": \"ar\"}", 19);
    expect_file(out, "pkg/model/model.bin", text, strlen(text));
    expect_file(out, "top.txt", "", 0);
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
    const entry crc[] = {{"a.txt", "some text", 8, 1}}; /* the rest of what zip.h refuses: test_zip.c */
    expect_refused(crc, 1, 1 << 20, "a.txt: CRC mismatch");
    const entry many[] = {{"a.txt", "0123456789", 0, 0}, {"b.txt", "0123456789", 8, 0}};
    expect_refused(many, 2, 15, "b.txt: the archive holds more than 15 bytes");
    /* Not an archive: text, and an archive cut before its central directory. */
    char *text = in_tmp("text.zip");
    ck_assert_int_eq(nmt_atomic_write(text, "just some text, long enough to hold an end record", 49), 0);
    ck_assert_int_eq(nmt_zip_is_archive(text), 0);
    ck_assert_int_eq(nmt_zip_dir_extract(text, nmt_test_tmpdir, 1 << 20), -1);
    ck_assert_msg(strstr(nmt_error(), "not a zip archive (no end of central directory)"), "%s", nmt_error());
    /* An end record whose central directory would be 2 GiB: refused before anything is allocated. */
    unsigned char end[22] = {0};
    put32(end, 0x06054b50);
    put16(end + 8, 1);
    put16(end + 10, 1);
    put32(end + 12, 0x7FFFFFFFu);
    ck_assert_int_eq(nmt_atomic_write(text, end, sizeof end), 0);
    ck_assert_int_eq(nmt_zip_dir_extract(text, nmt_test_tmpdir, 1 << 20), -1);
    ck_assert_msg(strstr(nmt_error(), "text.zip: a central directory of 2147483647 bytes at byte 0, past the end record"),
                  "%s", nmt_error());
    free(text);
}
END_TEST

START_TEST(a_tree_comes_back_whole) {
    char *tree = make_tree(), *zip = in_tmp("p.argosmodel"), *again = in_tmp("again.zip"), *out = in_tmp("out");
    ck_assert_msg(nmt_zip_dir_write(tree, "pkg", zip) == 0, "%s", nmt_error());
    ck_assert_int_eq(nmt_zip_is_archive(zip), 1);
    ck_assert_int_eq(nmt_mkdirs(out), 0);
    ck_assert_msg(nmt_zip_dir_extract(zip, out, 1 << 20) == 0, "%s", nmt_error());
    expect_file(out, "pkg/metadata.json", "{\"from_code\": \"en\"}", 19);
    expect_file(out, "pkg/empty", "", 0);
    expect_file(out, "pkg/model/model.bin", big, sizeof big);
    /* The same tree gives the same bytes; at the root, the entries have no prefix. */
    ck_assert_int_eq(nmt_zip_dir_write(tree, "pkg", again), 0);
    char *a, *b;
    size_t na, nb;
    ck_assert_int_eq(nmt_read_file(zip, &a, &na), 0);
    ck_assert_int_eq(nmt_read_file(again, &b, &nb), 0);
    ck_assert(na == nb && memcmp(a, b, na) == 0);
    free(a);
    free(b);
    ck_assert_int_eq(nmt_zip_dir_write(tree, NULL, again), 0);
    char *root = in_tmp("root");
    ck_assert_int_eq(nmt_mkdirs(root), 0);
    ck_assert_int_eq(nmt_zip_dir_extract(again, root, 1 << 20), 0);
    expect_file(root, "model/model.bin", big, sizeof big);
    free(root);
    free(tree);
    free(zip);
    free(again);
    free(out);
}
END_TEST

START_TEST(a_link_is_refused_and_nothing_is_written) {
    char *tree = make_tree(), *link = nmt_path_join(tree, "link"), *zip = in_tmp("x.zip");
    ck_assert_int_eq(symlink("metadata.json", link), 0);
    ck_assert_int_eq(nmt_zip_dir_write(tree, "pkg", zip), -1);
    ck_assert_msg(strstr(nmt_error(), link) && strstr(nmt_error(), "a link?"), "%s", nmt_error());
    ck_assert_int_eq(nmt_file_exists(zip), 0);
    free(tree);
    free(link);
    free(zip);
}
END_TEST

int main(void) {
    Suite *s = suite_create("zip_dir");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, stored_and_deflated_entries_come_out_whole);
    tcase_add_test(tc, bad_archives_are_refused_by_name);
    tcase_add_test(tc, a_tree_comes_back_whole);
    tcase_add_test(tc, a_link_is_refused_and_nothing_is_written);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
