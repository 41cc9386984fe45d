/* fuzz: what the fuzz harnesses (tests/fuzz/fuzz_<target>.c) share.
 *
 * A harness defines LLVMFuzzerTestOneInput(data, size). It is linked either with libFuzzer
 * (tools/fuzz.sh, clang) or with replay_main.c, which runs it over every file of a seed corpus (the
 * ctest of each harness, any compiler). Besides "does not crash", a harness checks what must hold of
 * the result with FUZZ_CHECK: a violated property aborts with the input's property named, which both
 * drivers report as a failure.
 *
 * Temporary files: readers that take a path get the input through fuzz_file(), a file in a private
 * directory (under /dev/shm when it exists, so fuzzing does not wear a disk) that is removed at exit.
 */
#ifndef NMT_FUZZ_H
#define NMT_FUZZ_H

#include "base/util.h"

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                            \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: property violated: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                \
            fprintf(stderr, "\n");                                                       \
            abort();                                                                     \
        }                                                                                \
    } while (0)

static char fuzz_dir_path[64];

static int fuzz_remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st, (void)type, (void)ftw;
    return remove(path);
}

static void fuzz_dir_remove(void) {
    if (fuzz_dir_path[0]) nftw(fuzz_dir_path, fuzz_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The harness's private directory, created at the first call. */
static inline const char *fuzz_dir(void) {
    if (!fuzz_dir_path[0]) {
        snprintf(fuzz_dir_path, sizeof fuzz_dir_path, "%s/nmt-fuzz-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        FUZZ_CHECK(mkdtemp(fuzz_dir_path) != NULL, "cannot create %s", fuzz_dir_path);
        atexit(fuzz_dir_remove);
    }
    return fuzz_dir_path;
}

/* Writes data to `name` in the private directory (plainly: the reader under test is not the writer)
 * and returns the path (static storage, one per name slot: valid until the next call with the same
 * slot). */
static inline const char *fuzz_file(int slot, const char *name, const void *data, size_t size) {
    static char paths[4][128];
    FUZZ_CHECK(slot >= 0 && slot < 4, "slot %d", slot);
    snprintf(paths[slot], sizeof paths[slot], "%s/%s", fuzz_dir(), name);
    FILE *fp = fopen(paths[slot], "wb");
    FUZZ_CHECK(fp != NULL, "cannot create %s", paths[slot]);
    FUZZ_CHECK(size == 0 || fwrite(data, 1, size, fp) == size, "cannot write %s", paths[slot]);
    FUZZ_CHECK(fclose(fp) == 0, "cannot close %s", paths[slot]);
    return paths[slot];
}

/* Runs attempt(context), which must return 0 (success) or -1, with the 1st, 2nd, ... allocation
 * failing, up to `limit` allocations or until a run succeeds; every failed run must report "out of
 * memory" (and, leak checking being on, free what it took). */
static inline void fuzz_alloc_sweep(int (*attempt)(void *context), void *context, long limit) {
    for (long n = 1; n <= limit; n++) {
        nmt_alloc_fail_at(n);
        int rc = attempt(context);
        nmt_alloc_fail_at(0);
        if (rc == 0) return;
        FUZZ_CHECK(rc == -1 && strstr(nmt_error(), "out of memory"), "allocation %ld failed: rc %d, error '%s'", n, rc,
                   nmt_error());
    }
}

#endif
