/* Tests of io: atomic writes survive injected write and fsync failures; line reading. */
#include "base/io.h"
#include "base/util.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

static int count_entries(const char *path) {
    DIR *d = opendir(path);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
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
    /* No temporary is left behind: the directory holds the file alone. */
    ck_assert_int_eq(count_entries(dir), 1);
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

START_TEST(atomic_write_follows_a_symlink_and_keeps_the_mode) {
    make_dir();
    char *real = nmt_path_join(dir, "real.txt"), *link = nmt_path_join(dir, "link.txt");
    ck_assert_int_eq(nmt_atomic_write(real, "old", 3), 0);
    ck_assert_int_eq(chmod(real, 0640), 0);
    ck_assert_int_eq(symlink("real.txt", link), 0);
    ck_assert_int_eq(nmt_atomic_write(link, "new", 3), 0);
    struct stat st;
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISLNK(st.st_mode)); /* the link stays a link ... */
    char *data = slurp(real);
    ck_assert_str_eq(data, "new"); /* ... and the file it names got the text */
    free(data);
    ck_assert_int_eq(stat(real, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0640);
    /* A dangling link creates the file it names. */
    char *dangling = nmt_path_join(dir, "dangling"), *target = nmt_path_join(dir, "made.txt");
    ck_assert_int_eq(symlink("made.txt", dangling), 0);
    ck_assert_int_eq(nmt_atomic_write(dangling, "x", 1), 0);
    data = slurp(target);
    ck_assert_str_eq(data, "x");
    free(data);
    ck_assert_int_eq(count_entries(dir), 4);
    free(real), free(link), free(dangling), free(target);
}
END_TEST

START_TEST(atomic_write_writes_a_fifo_and_dev_null_directly) {
    ck_assert_int_eq(nmt_atomic_write("/dev/null", "discarded", 9), 0);
    struct stat st;
    ck_assert_int_eq(stat("/dev/null", &st), 0);
    ck_assert(S_ISCHR(st.st_mode));
    make_dir();
    char *fifo = nmt_path_join(dir, "fifo");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    pid_t reader = fork();
    if (reader == 0) { /* reads what comes through the FIFO and exits 0 if it is the text */
        char buf[16] = {0};
        int fd = open(fifo, O_RDONLY);
        ssize_t n = read(fd, buf, sizeof buf - 1);
        _exit(n == 5 && strcmp(buf, "piped") == 0 ? 0 : 1);
    }
    ck_assert_int_eq(nmt_atomic_write(fifo, "piped", 5), 0);
    int status;
    ck_assert_int_eq(waitpid(reader, &status, 0), reader);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_int_eq(lstat(fifo, &st), 0);
    ck_assert(S_ISFIFO(st.st_mode)); /* still the FIFO */
    ck_assert_int_eq(count_entries(dir), 1);
    ck_assert_int_eq(nmt_atomic_write(dir, "x", 1), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "is a directory"));
    free(fifo);
}
END_TEST

START_TEST(a_planted_symlink_cannot_redirect_the_write) {
    make_dir();
    char *path = nmt_path_join(dir, "out.txt"), *victim = nmt_path_join(dir, "victim");
    ck_assert_int_eq(nmt_atomic_write(victim, "safe", 4), 0);
    /* Links at the names a predictable scheme would use. */
    char planted[256];
    snprintf(planted, sizeof planted, "%s.tmp.%ld", path, (long)getpid());
    ck_assert_int_eq(symlink(victim, planted), 0);
    ck_assert_int_eq(nmt_atomic_write(path, "text", 4), 0);
    char *data = slurp(victim);
    ck_assert_str_eq(data, "safe");
    free(data);
    free(path), free(victim);
}
END_TEST

START_TEST(stale_temporaries_of_dead_processes_only_are_removed) {
    make_dir();
    pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, NULL, 0); /* a process id that is gone */
    char names[5][128];
    snprintf(names[0], sizeof names[0], "model.safetensors.tmp.%ld.aB3dE5gH7jK9", (long)child); /* removed */
    snprintf(names[1], sizeof names[1], "model.safetensors.tmp.%ld.aB3dE5gH7jK9", (long)getppid()); /* alive */
    snprintf(names[2], sizeof names[2], "notes.tmp.%ld", (long)child);            /* not nmt's pattern */
    snprintf(names[3], sizeof names[3], "mine.tmp.%ld.short", (long)child);       /* not nmt's pattern */
    snprintf(names[4], sizeof names[4], "x.tmp.%ld.aB3dE5gH7jK9", (long)child);   /* a directory */
    for (int i = 0; i < 5; i++) {
        char *p = nmt_path_join(dir, names[i]);
        if (i == 4) ck_assert_int_eq(mkdir(p, 0700), 0);
        else ck_assert_int_eq(nmt_atomic_write(p, "x", 1), 0);
        free(p);
    }
    nmt_remove_stale_temporaries(dir);
    for (int i = 0; i < 5; i++) {
        char *p = nmt_path_join(dir, names[i]);
        ck_assert_msg(nmt_file_exists(p) == (i != 0), "%s", names[i]);
        free(p);
    }
}
END_TEST

START_TEST(output_paths_are_checked) {
    make_dir();
    ck_assert_int_eq(nmt_output_check("", "-o"), -1);
    ck_assert_str_eq(nmt_error(), "-o '': an empty path; name the file to write");
    ck_assert_int_eq(nmt_output_check(dir, "--output"), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), ": a directory; name the file to write in it"));
    char *file = nmt_path_join(dir, "f"), *link = nmt_path_join(dir, "l");
    ck_assert_int_eq(nmt_output_check(file, "-o"), 0);
    ck_assert_int_eq(nmt_same_file(file, file), 0); /* does not exist yet */
    ck_assert_int_eq(nmt_atomic_write(file, "x", 1), 0);
    ck_assert_int_eq(symlink(file, link), 0);
    ck_assert_int_eq(nmt_same_file(file, link), 1);
    ck_assert_int_eq(nmt_same_file(file, dir), 0);
    free(file), free(link);
}
END_TEST

START_TEST(open_regular_refuses_a_fifo_without_blocking) {
    make_dir();
    char *fifo = nmt_path_join(dir, "model.safetensors");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    FILE *fp;
    size_t size;
    ck_assert_int_eq(nmt_open_regular(fifo, &fp, &size), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "model.safetensors: not a regular file (a FIFO)"));
    ck_assert_int_eq(nmt_open_regular("/dev/zero", &fp, &size), -1);
    ck_assert_str_eq(nmt_error(), "/dev/zero: not a regular file (a character device)");
    free(fifo);
}
END_TEST

START_TEST(read_file_is_bounded) {
    char *data;
    size_t size;
    ck_assert_int_eq(nmt_read_file_max("/dev/zero", 1 << 20, "a config", &data, &size), -1);
    ck_assert_str_eq(nmt_error(), "/dev/zero: more than 1048576 bytes, larger than a config can be");
}
END_TEST

START_TEST(a_line_over_the_limit_is_an_error_naming_it) {
    size_t n = (size_t)NMT_LINE_MAX + 20;
    char *text = malloc(n);
    ck_assert_ptr_nonnull(text);
    memcpy(text, "ok\n", 3);
    memset(text + 3, 'a', n - 3);
    FILE *fp = fmemopen(text, n, "r");
    nmt_lines lines;
    nmt_lines_init(&lines, fp, "big.txt");
    ck_assert_int_eq(nmt_lines_next(&lines), 1);
    ck_assert_int_eq(nmt_lines_next(&lines), -1);
    ck_assert_str_eq(nmt_error(), "big.txt:2: a line longer than 1048576 bytes (the limit of a text line; a binary file?)");
    nmt_lines_free(&lines);
    fclose(fp);
    /* /dev/zero: refused after at most the limit, not after gigabytes. */
    fp = fopen("/dev/zero", "rb");
    nmt_lines_init(&lines, fp, "/dev/zero");
    ck_assert_int_eq(nmt_lines_next(&lines), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "/dev/zero:1: a line longer than"));
    ck_assert_uint_le(lines.cap, (size_t)NMT_LINE_MAX + 1);
    nmt_lines_free(&lines);
    fclose(fp);
    /* A line of exactly the limit is fine. */
    memset(text, 'b', (size_t)NMT_LINE_MAX);
    text[NMT_LINE_MAX] = '\n';
    fp = fmemopen(text, (size_t)NMT_LINE_MAX + 1, "r");
    nmt_lines_init(&lines, fp, "edge.txt");
    ck_assert_int_eq(nmt_lines_next(&lines), 1);
    ck_assert_uint_eq(lines.len, (size_t)NMT_LINE_MAX);
    ck_assert_int_eq(nmt_lines_next(&lines), 0);
    nmt_lines_free(&lines);
    fclose(fp);
    free(text);
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
    tcase_add_test(tc, atomic_write_follows_a_symlink_and_keeps_the_mode);
    tcase_add_test(tc, atomic_write_writes_a_fifo_and_dev_null_directly);
    tcase_add_test(tc, a_planted_symlink_cannot_redirect_the_write);
    tcase_add_test(tc, stale_temporaries_of_dead_processes_only_are_removed);
    tcase_add_test(tc, output_paths_are_checked);
    tcase_add_test(tc, open_regular_refuses_a_fifo_without_blocking);
    tcase_add_test(tc, read_file_is_bounded);
    tcase_add_test(tc, a_line_over_the_limit_is_an_error_naming_it);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
