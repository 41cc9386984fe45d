/* tmpdir: a fresh temporary directory for a test, removed with everything in it afterwards.
 *
 *     tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
 *     ... nmt_test_tmpdir holds "/tmp/nmt-test-XXXXXX" inside each test ...
 */
#ifndef NMT_TEST_TMPDIR_H
#define NMT_TEST_TMPDIR_H

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char nmt_test_tmpdir[64];

static void nmt_test_tmpdir_make(void) {
    strcpy(nmt_test_tmpdir, "/tmp/nmt-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(nmt_test_tmpdir));
}

static int nmt_test_tmpdir_remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st, (void)type, (void)ftw;
    return remove(path);
}

static void nmt_test_tmpdir_remove(void) {
    if (nmt_test_tmpdir[0]) nftw(nmt_test_tmpdir, nmt_test_tmpdir_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    nmt_test_tmpdir[0] = '\0';
}

#endif
