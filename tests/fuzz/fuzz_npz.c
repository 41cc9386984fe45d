/* fuzz_npz: a NumPy .npz archive read from elsewhere (nmt_npz_open, as a Marian model is read), and
 * the same bytes as a lone .npy header (nmt_npy_parse_header).
 *
 * Properties:
 *   - a refused archive gives an error naming it (or "out of memory") and leaves nothing to close;
 *   - an accepted archive has at least one array, each found by its name, whose data (count times
 *     the item size) reads whole, and in two halves the same (a range past its end refused, naming
 *     the array); a header accepted alone describes exactly the bytes after it;
 *   - with the 1st, 2nd, ... allocation failing, opening reports "out of memory".
 *
 * Seeds (tests/fuzz/corpus/npz, written by numpy.savez and savez_compressed in tests/e2e/e2e_marian.sh,
 * which replays them): arrays of float32, float16, float64 and int8, stored and deflated.
 */
#include "fuzz.h"
#include "base/npz.h"

static int open_and_close(void *context) {
    nmt_npz z;
    int rc = nmt_npz_open(&z, context, 1 << 24);
    if (rc == 0) nmt_npz_close(&z);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    nmt_npy alone = {0};
    if (nmt_npy_parse_header(data, size, size, "input", &alone) == 0)
        FUZZ_CHECK(alone.offset + alone.count * nmt_npy_item_size(alone.dtype) == size, "a header accepted alone "
                   "does not describe the bytes after it");
    else
        FUZZ_CHECK(strncmp(nmt_error(), "input: ", 7) == 0, "the error names no input: '%s'", nmt_error());
    const char *path = fuzz_file(0, "model.npz", data, size);
    nmt_npz z;
    if (nmt_npz_open(&z, path, 1 << 24) < 0) {
        FUZZ_CHECK(strstr(nmt_error(), path) || strstr(nmt_error(), "out of memory"), "the error names no file: '%s'",
                   nmt_error());
        FUZZ_CHECK(z.arrays == NULL && z.dir == NULL, "a refused archive left something to close");
        return 0;
    }
    FUZZ_CHECK(z.count > 0, "an accepted archive without arrays");
    for (int i = 0; i < z.count; i++) {
        nmt_npy *a = &z.arrays[i];
        FUZZ_CHECK(nmt_npz_find(&z, a->name) == a, "array %s is not found by its name", a->name);
        const size_t item = nmt_npy_item_size(a->dtype), half = a->count / 2;
        unsigned char *bytes = malloc(a->count * item + 1), *part = malloc(a->count * item + 1);
        FUZZ_CHECK(bytes != NULL && part != NULL, "out of memory");
        FUZZ_CHECK(nmt_npz_read(&z, a, bytes) == 0, "array %s does not read: %s", a->name, nmt_error());
        FUZZ_CHECK(nmt_npz_read_range(&z, a, 0, half, part) == 0 &&
                       nmt_npz_read_range(&z, a, half, a->count - half, part + half * item) == 0 &&
                       memcmp(bytes, part, a->count * item) == 0,
                   "array %s read in two halves is not the whole", a->name);
        FUZZ_CHECK(nmt_npz_read_range(&z, a, half, a->count - half + 1, part) < 0 && strstr(nmt_error(), a->name),
                   "array %s read past its end, or refused without its name", a->name);
        free(bytes);
        free(part);
    }
    nmt_npz_close(&z);
    fuzz_alloc_sweep(open_and_close, (void *)path, 200);
    return 0;
}
