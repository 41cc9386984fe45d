/* fuzz_safetensors: the safetensors reader (nmt_st_parse) on arbitrary bytes.
 *
 * Properties checked besides "never crashes, never leaks":
 *   - a refused file leaves *file empty and an error that starts with the file's name;
 *   - an accepted file is what the contract promises: every tensor has a known dtype, rank 0..4, a size
 *     equal to its shape times its dtype's size, data inside the blob, a non-empty name that no other
 *     tensor has; the tensors' bytes tile the data after the header exactly; nmt_st_find and
 *     nmt_st_meta find every tensor and metadata key;
 *   - writing an accepted file back (nmt_st_write) and reading that (nmt_st_read) gives the same
 *     tensors, in the same order, with the same bytes, and the same metadata;
 *   - with the 1st, 2nd, ... allocation failing, an accepted file is refused with "out of memory".
 */
#include "fuzz.h"
#include "model/safetensors.h"

typedef struct input {
    const uint8_t *data;
    size_t size;
} input;

static int parse_copy(nmt_st_file *file, const input *in) {
    memset(file, 0, sizeof *file);
    void *blob = nmt_malloc(in->size);
    if (!blob) return -1;
    if (in->size) memcpy(blob, in->data, in->size);
    return nmt_st_parse(file, blob, in->size, "fuzz.st");
}

static int parse_and_free(void *context) {
    nmt_st_file file;
    int rc = parse_copy(&file, context);
    if (rc == 0) nmt_st_free(&file);
    return rc;
}

static int compare_data(const void *a, const void *b) {
    const nmt_st_tensor *x = *(const nmt_st_tensor *const *)a, *y = *(const nmt_st_tensor *const *)b;
    const char *p = x->data, *q = y->data;
    if (p != q) return p < q ? -1 : 1;
    return (x->size > y->size) - (x->size < y->size);
}

static void check_accepted(const nmt_st_file *file) {
    const char *blob = file->blob;
    const nmt_st_tensor **order = malloc((size_t)(file->num_tensors + 1) * sizeof *order);
    FUZZ_CHECK(order != NULL, "out of memory");
    for (int i = 0; i < file->num_tensors; i++) {
        const nmt_st_tensor *t = &file->tensors[i];
        FUZZ_CHECK((unsigned)t->dtype <= NMT_ST_U8, "tensor %d: dtype %d", i, (int)t->dtype);
        FUZZ_CHECK(t->rank >= 0 && t->rank <= 4, "tensor '%s': rank %d", t->name, t->rank);
        size_t bytes = nmt_st_dtype_size(t->dtype);
        for (int d = 0; d < t->rank; d++) {
            FUZZ_CHECK(t->shape[d] >= 0, "tensor '%s': dimension %d is %lld", t->name, d, (long long)t->shape[d]);
            FUZZ_CHECK(t->shape[d] == 0 || bytes <= SIZE_MAX / (size_t)t->shape[d], "tensor '%s' overflows", t->name);
            bytes *= (size_t)t->shape[d];
        }
        FUZZ_CHECK(bytes == t->size, "tensor '%s': %zu bytes for a shape of %zu", t->name, t->size, bytes);
        FUZZ_CHECK((const char *)t->data >= blob + 8 && (const char *)t->data + t->size <= blob + file->blob_size,
                   "tensor '%s' lies outside the blob", t->name);
        FUZZ_CHECK(t->name[0] != '\0' && strcmp(t->name, "__metadata__") != 0, "tensor name '%s'", t->name);
        FUZZ_CHECK(nmt_st_find(file, t->name) == t, "tensor '%s' is not unique, or not found", t->name);
        order[i] = t;
    }
    for (int i = 0; i < file->num_metadata; i++)
        FUZZ_CHECK(nmt_st_meta(file, file->metadata[i].key) == file->metadata[i].value, "metadata '%s'",
                   file->metadata[i].key);
    /* The data section starts right after the header that the first 8 bytes announce. */
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; i--) header_len = header_len << 8 | (unsigned char)blob[i];
    const char *at = blob + 8 + header_len;
    qsort(order, (size_t)file->num_tensors, sizeof *order, compare_data);
    for (int i = 0; i < file->num_tensors; i++) {
        FUZZ_CHECK((const char *)order[i]->data == at, "tensor '%s' does not start where the one before ends",
                   order[i]->name);
        at += order[i]->size;
    }
    FUZZ_CHECK(at == blob + file->blob_size, "the tensors leave %td bytes of data unused", blob + file->blob_size - at);
    free(order);
}

static void check_round_trip(const nmt_st_file *file) {
    const char *path = fuzz_file(0, "round-trip.safetensors", "", 0);
    FUZZ_CHECK(nmt_st_write(path, file->tensors, file->num_tensors, file->metadata, file->num_metadata) == 0,
               "writing back an accepted file failed: %s", nmt_error());
    nmt_st_file again;
    FUZZ_CHECK(nmt_st_read(&again, path) == 0, "reading back a written file failed: %s", nmt_error());
    FUZZ_CHECK(again.num_tensors == file->num_tensors && again.num_metadata == file->num_metadata,
               "%d tensors and %d metadata written, %d and %d read", file->num_tensors, file->num_metadata,
               again.num_tensors, again.num_metadata);
    for (int i = 0; i < file->num_tensors; i++) {
        const nmt_st_tensor *a = &file->tensors[i], *b = &again.tensors[i];
        FUZZ_CHECK(strcmp(a->name, b->name) == 0 && a->dtype == b->dtype && a->rank == b->rank &&
                       memcmp(a->shape, b->shape, (size_t)a->rank * sizeof a->shape[0]) == 0 && a->size == b->size &&
                       (a->size == 0 || memcmp(a->data, b->data, a->size) == 0),
                   "tensor %d ('%s') changed in a round trip", i, a->name);
    }
    for (int i = 0; i < file->num_metadata; i++)
        FUZZ_CHECK(strcmp(file->metadata[i].key, again.metadata[i].key) == 0 &&
                       strcmp(file->metadata[i].value, again.metadata[i].value) == 0,
                   "metadata %d ('%s') changed in a round trip", i, file->metadata[i].key);
    nmt_st_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    input in = {data, size};
    nmt_st_file file;
    nmt_error_clear();
    if (parse_copy(&file, &in) < 0) {
        FUZZ_CHECK(strncmp(nmt_error(), "fuzz.st: ", 9) == 0, "the error does not name the file: '%s'", nmt_error());
        FUZZ_CHECK(file.blob == NULL && file.tensors == NULL && file.metadata == NULL && file.num_tensors == 0 &&
                       file.num_metadata == 0,
                   "a refused file is not left empty");
        return 0;
    }
    check_accepted(&file);
    check_round_trip(&file);
    long allocations = 2L * (file.num_tensors + file.num_metadata) + 16;
    nmt_st_free(&file);
    fuzz_alloc_sweep(parse_and_free, &in, allocations);
    return 0;
}
