/* testing: what several Check tests share.
 *
 * A fresh temporary directory per test, removed with everything in it afterwards:
 *     tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
 *     ... nmt_test_tmpdir holds "/tmp/nmt-test-XXXXXX" inside each test ...
 *
 * An allocation-failure sweep: nmt_test_alloc_sweep(attempt, context) runs attempt(context) with the
 * 1st, 2nd, ... allocation failing until a run succeeds, and checks that every failed run returned
 * -1 with an "out of memory" error (attempt frees whatever it got). Returns the number of failed
 * runs, i.e. the allocations proven to be checked.
 *
 * main() of a test: return nmt_test_run(suite) runs it and gives the exit status.
 */
#ifndef NMT_TESTING_H
#define NMT_TESTING_H

#include "base/util.h"

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char nmt_test_tmpdir[64];

static inline void nmt_test_tmpdir_make(void) {
    strcpy(nmt_test_tmpdir, "/tmp/nmt-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(nmt_test_tmpdir));
}

static inline int nmt_test_tmpdir_remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st, (void)type, (void)ftw;
    return remove(path);
}

static inline void nmt_test_tmpdir_remove(void) {
    if (nmt_test_tmpdir[0]) nftw(nmt_test_tmpdir, nmt_test_tmpdir_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    nmt_test_tmpdir[0] = '\0';
}

static inline int nmt_test_alloc_sweep(int (*attempt)(void *context), void *context) {
    for (long n = 1;; n++) {
        nmt_alloc_fail_at(n);
        int rc = attempt(context);
        nmt_alloc_fail_at(0);
        if (rc == 0) return (int)n - 1;
        ck_assert_int_eq(rc, -1);
        ck_assert_msg(strstr(nmt_error(), "out of memory"), "allocation %ld: '%s'", n, nmt_error());
    }
}

static inline int nmt_test_run(Suite *suite) {
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
