/* Tests of input: plain and gzip files (by their magic bytes, not their names) read the same,
 * "-" is stdin (gzip on it decompressed too), damaged compressed data is an error naming the file,
 * and a directory or data of another compressor is named as what it is. */
#include "base/input.h"
#include "base/io.h"
#include "testing.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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
    free(gz);
}
END_TEST

/* Standard input gets the contents of path (through a pipe, whose bytes cannot be put back). */
static void stdin_from(const char *path) {
    char *data;
    size_t size;
    ck_assert_int_eq(nmt_read_file(path, &data, &size), 0);
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert(size < 60000); /* fits the pipe's buffer */
    ck_assert_int_eq(write(fds[1], data, size), (ssize_t)size);
    close(fds[1]);
    ck_assert_int_eq(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
    close(fds[0]);
    clearerr(stdin); /* the end of the pipe before */
    free(data);
}

/* A pipe is read as a file is: gzip decompressed (members one after another), plain text as it is. */
START_TEST(gzip_on_a_pipe_is_decompressed) {
    char *gz = write_gzip("piped.gz", text, strlen(text)), *twice = nmt_path_join(nmt_test_tmpdir, "twice.gz");
    char *data;
    size_t size;
    ck_assert_int_eq(nmt_read_file(gz, &data, &size), 0);
    char *both = malloc(2 * size);
    ck_assert_ptr_nonnull(both);
    memcpy(both, data, size);
    memcpy(both + size, data, size);
    ck_assert_int_eq(nmt_atomic_write(twice, both, 2 * size), 0);
    stdin_from(gz);
    long n;
    char *got = read_lines("-", &n);
    ck_assert_str_eq(got, text);
    free(got);
    stdin_from(twice);
    ck_assert_int_eq(nmt_input_read_all("-", &got, &size), 0);
    ck_assert_uint_eq(size, 2 * strlen(text));
    free(got);
    char *plain = nmt_path_join(nmt_test_tmpdir, "plain.txt");
    ck_assert_int_eq(nmt_atomic_write(plain, text, strlen(text)), 0);
    stdin_from(plain);
    got = read_lines("-", &n);
    ck_assert_str_eq(got, text);
    /* Cut short: an error. */
    ck_assert_int_eq(nmt_atomic_write(twice, data, size - 9), 0);
    stdin_from(twice);
    char *cut;
    ck_assert_int_eq(nmt_input_read_all("-", &cut, &size), -1);
    free(got);
    free(both);
    free(data);
    free(gz);
    free(twice);
    free(plain);
}
END_TEST

/* A directory, and bzip2, xz or zstd data (in a file or on a pipe) are named, not read as text. */
START_TEST(directories_and_other_compressions_are_named) {
    ck_assert_ptr_null(nmt_input_open(nmt_test_tmpdir));
    ck_assert_ptr_nonnull(strstr(nmt_error(), ": a directory, not a text file to read"));
    static const struct {
        const char *bytes, *name;
        size_t len;
    } other[] = {{"BZh91AY&SY", "bzip2", 10}, {"\xfd" "7zXZ\0\0\4", "xz", 8}, {"\x28\xb5\x2f\xfd\0\0", "zstd", 6}};
    char *path = nmt_path_join(nmt_test_tmpdir, "packed.txt");
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, ": %s-compressed data, which nmt does not read", other[i].name);
        ck_assert_int_eq(nmt_atomic_write(path, other[i].bytes, other[i].len), 0);
        ck_assert_ptr_null(nmt_input_open(path));
        ck_assert_msg(strstr(nmt_error(), want) != NULL, "%s", nmt_error());
        stdin_from(path);
        ck_assert_ptr_null(nmt_input_open("-"));
        ck_assert_msg(strstr(nmt_error(), want) && strncmp(nmt_error(), "<stdin>", 7) == 0, "%s", nmt_error());
    }
    free(path);
}
END_TEST

int main(void) {
    Suite *s = suite_create("input");
    TCase *tc = tcase_create("input");
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, gzip_and_plain_files_read_the_same);
    tcase_add_test(tc, damaged_gzip_and_missing_files_are_errors);
    tcase_add_test(tc, gzip_on_a_pipe_is_decompressed);
    tcase_add_test(tc, directories_and_other_compressions_are_named);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
