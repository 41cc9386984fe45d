/* Tests of io: atomic writes survive injected write and fsync failures; line reading. */
#include "base/io.h"
#include "base/util.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static void make_dir(void) {
    strcpy(dir, "/tmp/nmt-test-io-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static char *slurp(const char *path) {
    char *data;
    size_t size;
    ck_assert_int_eq(nmt_read_file(path, &data, &size), 0);
    return data;
}

START_TEST(atomic_write_replaces_whole_file) {
    make_dir();
    char *path = nmt_path_join(dir, "model.bin");
    ck_assert_int_eq(nmt_atomic_write(path, "first", 5), 0);
    ck_assert_int_eq(nmt_atomic_write(path, "second", 6), 0);
    char *data = slurp(path);
    ck_assert_str_eq(data, "second");
    free(data);
    free(path);
}
END_TEST

START_TEST(failed_write_or_fsync_keeps_old_file) {
    make_dir();
    char *path = nmt_path_join(dir, "ckpt");
    ck_assert_int_eq(nmt_atomic_write(path, "good", 4), 0);
    nmt_io_fault_set("write", 1);
    ck_assert_int_eq(nmt_atomic_write(path, "bad", 3), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "injected"));
    nmt_io_fault_set("fsync", 1);
    ck_assert_int_eq(nmt_atomic_write(path, "bad", 3), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "fsync"));
    char *data = slurp(path);
    ck_assert_str_eq(data, "good");
    free(data);
    /* No temporary is left behind. */
    char tmp[128];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    ck_assert(!nmt_file_exists(tmp));
    free(path);
}
END_TEST

START_TEST(read_missing_file_names_it) {
    char *data;
    size_t size;
    ck_assert_int_eq(nmt_read_file("/nonexistent/x.yaml", &data, &size), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "/nonexistent/x.yaml"));
}
END_TEST

START_TEST(lines_are_numbered_and_stripped) {
    const char text[] = "one\n\nthree\r\nfour";
    FILE *fp = fmemopen((void *)text, sizeof text - 1, "r");
    nmt_lines lines;
    nmt_lines_init(&lines, fp, "mem");
    ck_assert_int_eq(nmt_lines_next(&lines), 1);
    ck_assert_str_eq(lines.line, "one");
    ck_assert_int_eq(nmt_lines_next(&lines), 1);
    ck_assert_uint_eq(lines.len, 0);
    ck_assert_int_eq(nmt_lines_next(&lines), 1);
    ck_assert_str_eq(lines.line, "three\r");
    ck_assert_int_eq(nmt_lines_next(&lines), 1);
    ck_assert_str_eq(lines.line, "four");
    ck_assert_int_eq(lines.number, 4);
    ck_assert_int_eq(nmt_lines_next(&lines), 0);
    nmt_lines_free(&lines);
    fclose(fp);
}
END_TEST

START_TEST(mkdirs_creates_parents) {
    make_dir();
    char *deep = nmt_path_join(dir, "a/b/c");
    ck_assert_int_eq(nmt_mkdirs(deep), 0);
    ck_assert(nmt_file_exists(deep));
    ck_assert_int_eq(nmt_mkdirs(deep), 0);
    free(deep);
}
END_TEST

int main(void) {
    Suite *s = suite_create("io");
    TCase *tc = tcase_create("io");
    tcase_add_test(tc, atomic_write_replaces_whole_file);
    tcase_add_test(tc, failed_write_or_fsync_keeps_old_file);
    tcase_add_test(tc, read_missing_file_names_it);
    tcase_add_test(tc, lines_are_numbered_and_stripped);
    tcase_add_test(tc, mkdirs_creates_parents);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
