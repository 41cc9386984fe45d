/* Tests of input: plain and gzip files (by their magic bytes, not their names) read the same,
 * "-" is stdin, damaged compressed data is an error naming the file. */
#include "base/input.h"
#include "base/io.h"
#include "testing.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char text[] = "first line\nzweite Zeile \xc3\xa4\n\nlast line without newline";

static char *write_gzip(const char *name, const char *data, size_t size) {
    char *path = nmt_path_join(nmt_test_tmpdir, name);
    gzFile gz = gzopen(path, "wb");
    ck_assert_ptr_nonnull(gz);
    ck_assert_int_eq(gzwrite(gz, data, (unsigned)size), (int)size);
    ck_assert_int_eq(gzclose(gz), Z_OK);
    return path;
}

/* Reads every line of path through nmt_input_open and nmt_lines, joined with '\n'. */
static char *read_lines(const char *path, long *count) {
    FILE *fp = nmt_input_open(path);
    ck_assert_msg(fp != NULL, "%s", nmt_error());
    nmt_lines lines;
    nmt_lines_init(&lines, fp, path);
    char *out = calloc(1, sizeof text + 16);
    ck_assert_ptr_nonnull(out);
    int r;
    while ((r = nmt_lines_next(&lines)) > 0) {
        if (lines.number > 1) strcat(out, "\n");
        strncat(out, lines.line, lines.len);
    }
    ck_assert_int_eq(r, 0);
    *count = lines.number;
    nmt_lines_free(&lines);
    ck_assert_int_eq(nmt_input_close(fp, path), 0);
    return out;
}

START_TEST(gzip_and_plain_files_read_the_same) {
    char *plain = nmt_path_join(nmt_test_tmpdir, "plain.txt");
    ck_assert_int_eq(nmt_atomic_write(plain, text, strlen(text)), 0);
    char *gz = write_gzip("compressed.txt", text, strlen(text)); /* no .gz in the name */
    long a, b;
    char *from_plain = read_lines(plain, &a), *from_gz = read_lines(gz, &b);
    ck_assert_str_eq(from_plain, text);
    ck_assert_str_eq(from_gz, text);
    ck_assert_int_eq(a, 4);
    ck_assert_int_eq(b, 4);
    char *data;
    size_t size;
    ck_assert_int_eq(nmt_input_read_all(gz, &data, &size), 0);
    ck_assert_uint_eq(size, strlen(text));
    ck_assert_mem_eq(data, text, size);
    free(data);
    free(from_plain);
    free(from_gz);
    free(plain);
    free(gz);
}
END_TEST

START_TEST(damaged_gzip_and_missing_files_are_errors) {
    /* A compressed file cut in half: reading it fails, naming the file. */
    char big[20000];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (char)('a' + (i * 7919 % 26));
    char *gz = write_gzip("cut.gz", big, sizeof big);
    char *data;
    size_t size;
    ck_assert_int_eq(nmt_read_file(gz, &data, &size), 0);
    ck_assert_int_eq(nmt_atomic_write(gz, data, size / 2), 0);
    free(data);
    ck_assert_int_eq(nmt_input_read_all(gz, &data, &size), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "cut.gz"));
    ck_assert_ptr_null(nmt_input_open("/no/such/file"));
    ck_assert_str_eq(nmt_error(), "/no/such/file: cannot open: No such file or directory");
    ck_assert_ptr_eq(nmt_input_open("-"), stdin);
    ck_assert_int_eq(nmt_input_close(stdin, "-"), 0);
    free(gz);
}
END_TEST

int main(void) {
    Suite *s = suite_create("input");
    TCase *tc = tcase_create("input");
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, gzip_and_plain_files_read_the_same);
    tcase_add_test(tc, damaged_gzip_and_missing_files_are_errors);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
