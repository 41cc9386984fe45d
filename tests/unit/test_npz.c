/* Tests of npz: .npy headers of versions 1 to 3 read (dtypes, shapes, where the data starts), damaged
 * or unsupported ones refused with the array named; .npz archives (stored and deflated entries) give
 * each array by name and its data; entries that are not NAME.npy are refused. */
#include "base/io.h"
#include "base/npz.h"
#include "base/util.h"
#include "testing.h"
#include "zip_fixture.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A .npy file of version `major` with header dict `dict` (padded as numpy pads it) and `data_bytes`
 * bytes of data (the values 0, 1, 2, ... as bytes) into out; returns its size. */
static size_t make_npy(unsigned char *out, int major, const char *dict, size_t data_bytes) {
    const size_t prefix = major == 1 ? 10 : 12, dict_len = strlen(dict);
    size_t header = dict_len + 1;
    while ((prefix + header) % 64) header++;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    for (size_t i = 0; i < prefix - 8; i++) out[8 + i] = (unsigned char)(header >> (8 * i));
    memcpy(out + prefix, dict, dict_len);
    memset(out + prefix + dict_len, ' ', header - dict_len - 1);
    out[prefix + header - 1] = '\n';
    for (size_t i = 0; i < data_bytes; i++) out[prefix + header + i] = (unsigned char)i;
    return prefix + header + data_bytes;
}

static unsigned char npy[1 << 17];

static int parse(int major, const char *dict, size_t data_bytes, nmt_npy *a) {
    memset(a, 0, sizeof *a);
    const size_t n = make_npy(npy, major, dict, data_bytes);
    return nmt_npy_parse_header(npy, n, n, "x.npy", a);
}

static void expect_refused(int major, const char *dict, size_t data_bytes, const char *message) {
    nmt_npy a;
    ck_assert_int_eq(parse(major, dict, data_bytes, &a), -1);
    ck_assert_msg(strstr(nmt_error(), message) && strncmp(nmt_error(), "x.npy: ", 7) == 0, "'%s' lacks '%s'",
                  nmt_error(), message);
}

START_TEST(headers_give_dtype_shape_and_data) {
    nmt_npy a;
    ck_assert_int_eq(parse(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24, &a), 0);
    ck_assert_int_eq(a.dtype, NMT_NPY_F32);
    ck_assert_int_eq(a.rank, 2);
    ck_assert(a.shape[0] == 2 && a.shape[1] == 3 && a.count == 6 && a.offset == 128);
    ck_assert_int_eq(parse(2, "{\"descr\": \"<f2\", \"shape\": (5,), \"fortran_order\": False}", 10, &a), 0);
    ck_assert(a.dtype == NMT_NPY_F16 && a.rank == 1 && a.count == 5 && a.offset == 128);
    ck_assert_int_eq(parse(3, "{'descr': '|i1', 'fortran_order': False, 'shape': ()}", 1, &a), 0);
    ck_assert(a.dtype == NMT_NPY_I8 && a.rank == 0 && a.count == 1);
    ck_assert_int_eq(parse(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 0, 7), }", 0, &a), 0);
    ck_assert(a.dtype == NMT_NPY_F64 && a.rank == 3 && a.count == 0);
    ck_assert_int_eq(parse(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 2, 1, 2), }", 4, &a), 0);
    ck_assert(a.dtype == NMT_NPY_U8 && a.rank == 4 && a.count == 4);
}
END_TEST

START_TEST(bad_headers_are_refused_by_name) {
    const char *ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
    expect_refused(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8, "dtype '>f4'");
    expect_refused(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 8, "dtype '<i4'");
    expect_refused(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8, "a structured dtype?");
    expect_refused(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16, "C order only");
    expect_refused(1, "{'descr': '<f4', 'shape': (2,), }", 8, "lacks descr, fortran_order or shape");
    expect_refused(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 8, "a repeated key 'descr'");
    expect_refused(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8, "an unknown key 'x'");
    expect_refused(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4, 5, 6), }", 8, "more than 4 dimensions");
    expect_refused(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2x,), }", 8, "shape is damaged");
    expect_refused(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999,), }", 8, "damaged or too large");
    expect_refused(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }", 8,
                   "holds more than the file");
    expect_refused(1, ok, 7, "7 bytes of data, not the 2 x 4");
    expect_refused(1, ok, 12, "12 bytes of data");
    expect_refused(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x", 8, "bytes after its dict");
    nmt_npy a;
    size_t n = make_npy(npy, 1, ok, 8);
    npy[6] = 4;
    ck_assert_int_eq(nmt_npy_parse_header(npy, n, n, "x.npy", &a), -1);
    ck_assert_str_eq(nmt_error(), "x.npy: .npy format version 4.0, not 1.0 to 3.0");
    npy[6] = 1;
    ck_assert_int_eq(nmt_npy_parse_header(npy, 40, 40, "x.npy", &a), -1);
    ck_assert_str_eq(nmt_error(), "x.npy: the .npy header is cut short");
    npy[0] = 'N';
    ck_assert_int_eq(nmt_npy_parse_header(npy, n, n, "x.npy", &a), -1);
    ck_assert_str_eq(nmt_error(), "x.npy: not a .npy array (no \\x93NUMPY magic)");
    n = make_npy(npy, 2, ok, 8);
    npy[10] = 2; /* a header of 128 KiB */
    ck_assert_int_eq(nmt_npy_parse_header(npy, n, n, "x.npy", &a), -1);
    ck_assert_msg(strstr(nmt_error(), "(at most 65536)"), "%s", nmt_error());
}
END_TEST

START_TEST(archives_give_arrays_by_name) {
    static unsigned char a[256], b[256];
    const size_t na = make_npy(a, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }", 12);
    const size_t nb = make_npy(b, 1, "{'descr': '|i1', 'fortran_order': False, 'shape': (5,), }", 5);
    char *path = nmt_path_join(nmt_test_tmpdir, "model.npz");
    for (int method = 0; method <= 8; method += 8) {
        const entry entries[] = {{"special:model.yml.npy", (const char *)b, method, 0},
                                 {"Wemb.npy", (const char *)a, method, 0}};
        const size_t sizes[] = {nb, na};
        write_archive_sized(path, entries, sizes, 2);
        nmt_npz z;
        ck_assert_msg(nmt_npz_open(&z, path, 1 << 20) == 0, "%s", nmt_error());
        ck_assert_int_eq(z.count, 2);
        ck_assert_ptr_null(nmt_npz_find(&z, "Wpos"));
        nmt_npy *w = nmt_npz_find(&z, "Wemb"), *yml = nmt_npz_find(&z, "special:model.yml");
        ck_assert(w && yml && w->count == 3 && w->dtype == NMT_NPY_F32 && yml->count == 5);
        unsigned char got[12];
        ck_assert_int_eq(nmt_npz_read(&z, w, got), 0);
        for (int i = 0; i < 12; i++) ck_assert_int_eq(got[i], i);
        ck_assert_int_eq(nmt_npz_read(&z, yml, got), 0);
        ck_assert_int_eq(got[4], 4);
        /* A range of elements: element 1 alone is bytes 4 to 7; past the end is refused by name. */
        memset(got, 0xff, sizeof got);
        ck_assert_int_eq(nmt_npz_read_range(&z, w, 1, 1, got), 0);
        for (int i = 0; i < 4; i++) ck_assert_int_eq(got[i], 4 + i);
        ck_assert_int_eq(got[4], 0xff);
        ck_assert_int_eq(nmt_npz_read_range(&z, w, 3, 0, got), 0);
        ck_assert_int_eq(nmt_npz_read_range(&z, w, 2, 2, got), -1);
        ck_assert_msg(strstr(nmt_error(), "model.npz: array Wemb: elements 2 to 4 of 3"), "%s", nmt_error());
        nmt_npz_close(&z);
    }
    /* An entry that is not NAME.npy, and an array whose data is cut short. */
    const entry other[] = {{"Wemb.npy", (const char *)a, 0, 0}, {"notes.txt", "notes", 0, 0}};
    const size_t other_sizes[] = {na, 5};
    write_archive_sized(path, other, other_sizes, 2);
    nmt_npz z;
    ck_assert_int_eq(nmt_npz_open(&z, path, 1 << 20), -1);
    ck_assert_msg(strstr(nmt_error(), "model.npz: entry notes.txt is not a NAME.npy array"), "%s", nmt_error());
    const entry cut[] = {{"Wemb.npy", (const char *)a, 8, 0}};
    const size_t cut_size = na - 1;
    write_archive_sized(path, cut, &cut_size, 1);
    ck_assert_int_eq(nmt_npz_open(&z, path, 1 << 20), -1);
    ck_assert_msg(strstr(nmt_error(), "model.npz: array Wemb: 11 bytes of data, not the 3 x 4"), "%s", nmt_error());
    ck_assert_ptr_null(z.arrays);
    free(path);
}
END_TEST

int main(void) {
    Suite *s = suite_create("npz");
    TCase *tc = tcase_create("npz");
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, headers_give_dtype_shape_and_data);
    tcase_add_test(tc, bad_headers_are_refused_by_name);
    tcase_add_test(tc, archives_give_arrays_by_name);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
