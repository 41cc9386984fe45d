/* Tests of segments: files read into streams as sacreBLEU reads them (stripping, tab-separated
 * columns, standard input's universal newlines and systems), and errors that name file and line. */
#include "eval/segments.h"
#include "base/util.h"
#include "testing.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

static char path[128];

/* Writes bytes to a file in the test's directory; returns its path. */
static const char *write_file(const char *name, const char *bytes, size_t size) {
    snprintf(path, sizeof path, "%s/%s", nmt_test_tmpdir, name);
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(bytes, 1, size, fp), size);
    fclose(fp);
    return path;
}

static void expect_stream(const nmt_segments *s, const char *const *want, size_t count) {
    ck_assert_uint_eq(s->count, count);
    for (size_t i = 0; i < count; i++) {
        ck_assert_uint_eq(s->lens[i], strlen(want[i]));
        ck_assert_str_eq(s->lines[i], want[i]);
    }
}

START_TEST(lines_are_stripped) {
    const char text[] = "a dog  \nb\t \n\n  lead kept\nlast";
    nmt_segments_file f;
    ck_assert_int_eq(nmt_segments_file_read(&f, write_file("h", text, sizeof text - 1), "h.txt", NMT_SEGMENTS_LINES, 1), 0);
    ck_assert_int_eq(f.count, 1);
    ck_assert_str_eq(f.streams[0].name, "h.txt");
    const char *want[] = {"a dog", "b", "", "  lead kept", "last"};
    expect_stream(&f.streams[0], want, 5);
    nmt_segments_file_free(&f);
    /* an empty file has no segments */
    ck_assert_int_eq(nmt_segments_file_read(&f, write_file("e", "", 0), "e", NMT_SEGMENTS_LINES, 1), 0);
    ck_assert_uint_eq(f.streams[0].count, 0);
    nmt_segments_file_free(&f);
}
END_TEST

START_TEST(columns_split_at_most_n_minus_1_times) {
    const char text[] = "x\ty\tz\nu\tv\n";
    nmt_segments_file f;
    ck_assert_int_eq(nmt_segments_file_read(&f, write_file("r", text, sizeof text - 1), "r", NMT_SEGMENTS_COLUMNS, 2), 0);
    ck_assert_int_eq(f.count, 2);
    const char *first[] = {"x", "u"}, *second[] = {"y\tz", "v"};
    expect_stream(&f.streams[0], first, 2);
    expect_stream(&f.streams[1], second, 2);
    nmt_segments_file_free(&f);
    ck_assert_int_eq(nmt_segments_file_read(&f, write_file("r", text, sizeof text - 1), "r.tsv", NMT_SEGMENTS_COLUMNS, 3), -1);
    ck_assert_str_eq(nmt_error(), "r.tsv:2: expected 3 tab-separated references, found 2");
    ck_assert_ptr_null(f.streams);
}
END_TEST

START_TEST(stdin_has_systems_and_universal_newlines) {
    const char text[] = "s1\tt1 \r\ns2 \t t2 \rs3\tt3";
    nmt_segments_file f;
    ck_assert_int_eq(nmt_segments_file_read(&f, write_file("in", text, sizeof text - 1), "<stdin>", NMT_SEGMENTS_STDIN, 1), 0);
    ck_assert_int_eq(f.count, 2);
    const char *a[] = {"s1", "s2", "s3"}, *b[] = {"t1", " t2", "t3"};
    expect_stream(&f.streams[0], a, 3);
    expect_stream(&f.streams[1], b, 3);
    nmt_segments_file_free(&f);
    const char ragged[] = "a\tb\nc\n";
    ck_assert_int_eq(nmt_segments_file_read(&f, write_file("in", ragged, sizeof ragged - 1), "<stdin>", NMT_SEGMENTS_STDIN, 1), -1);
    ck_assert_str_eq(nmt_error(), "<stdin>:2: the number of tab-separated systems differs from the first line's (2)");
    /* an empty input is one empty segment, as sacreBLEU reads it */
    ck_assert_int_eq(nmt_segments_file_read(&f, write_file("in", "", 0), "<stdin>", NMT_SEGMENTS_STDIN, 1), 0);
    const char *empty[] = {""};
    ck_assert_int_eq(f.count, 1);
    expect_stream(&f.streams[0], empty, 1);
    nmt_segments_file_free(&f);
}
END_TEST

START_TEST(errors_name_the_file) {
    nmt_segments_file f;
    const char bad[] = "ok\nbad \xff byte\n";
    ck_assert_int_eq(nmt_segments_file_read(&f, write_file("b", bad, sizeof bad - 1), "bad.txt", NMT_SEGMENTS_LINES, 1), -1);
    ck_assert_str_eq(nmt_error(), "bad.txt:2: invalid UTF-8 at byte 5");
    /* gzip is recognised by its magic bytes, not by the name: a damaged one is an error naming it */
    ck_assert_int_eq(nmt_segments_file_read(&f, write_file("h.gz", "x", 1), "h.gz", NMT_SEGMENTS_LINES, 1), 0);
    nmt_segments_file_free(&f);
    ck_assert_int_eq(nmt_segments_file_read(&f, write_file("d.gz", "\x1f\x8b\x08\x00 damaged", 13), "d.gz",
                                            NMT_SEGMENTS_LINES, 1), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "d.gz"));
    ck_assert_int_eq(nmt_segments_file_read(&f, "/nonexistent/h", "h", NMT_SEGMENTS_LINES, 1), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "/nonexistent/h: cannot open"));
}
END_TEST

static int read_some(void *context) {
    (void)context;
    nmt_segments_file f;
    if (nmt_segments_file_read(&f, path, "in", NMT_SEGMENTS_STDIN, 1) < 0) return -1;
    nmt_segments_file_free(&f);
    return 0;
}

START_TEST(allocations_are_checked) {
    const char text[] = "a\tb\nc\td\n";
    write_file("in", text, sizeof text - 1);
    ck_assert_int_ge(nmt_test_alloc_sweep(read_some, NULL), 5);
}
END_TEST

START_TEST(tokenized_periods) {
    nmt_segments s = {0};
    const char *lines[] = {"It ends .", "It ends.", " .", "."};
    for (int i = 0; i < 4; i++) ck_assert_int_eq(nmt_segments_push(&s, lines[i], strlen(lines[i])), 0);
    ck_assert_int_eq(nmt_segments_tokenized_periods(&s), 2);
    free(s.lines);
    free(s.lens);
}
END_TEST

int main(void) {
    Suite *s = suite_create("segments");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, lines_are_stripped);
    tcase_add_test(tc, columns_split_at_most_n_minus_1_times);
    tcase_add_test(tc, stdin_has_systems_and_universal_newlines);
    tcase_add_test(tc, errors_name_the_file);
    tcase_add_test(tc, allocations_are_checked);
    tcase_add_test(tc, tokenized_periods);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
