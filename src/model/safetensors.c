/* safetensors: the file format of model.safetensors and of checkpoints.
 *
 *   [8 bytes: N, little-endian u64] [N bytes: JSON header, space-padded] [data bytes]
 *   header = {"__metadata__": {"key": "value", ...},
 *             "name": {"dtype": "F32", "shape": [d0, d1], "data_offsets": [begin, end]}, ...}
 * with offsets relative to the start of the data. The writer pads the header so that the data starts at
 * a multiple of 8 bytes; the reader accepts any padding.
 *
 * The reader trusts nothing: it parses the header with the strict JSON reader of json.h (RFC 8259:
 * UTF-8, no trailing commas, escapes checked), accepting only the fields above, each once,
 * then checks that every byte range matches its dtype and shape and that the ranges tile the data
 * exactly, in order of offset, without gaps, overlaps or anything past the end.
 *
 * Checksum. The writer adds the metadata entry "data_checksum": 16 hexadecimal digits of nmt_hash_bytes
 * over the data bytes; the reader checks it where present, so a flipped bit is reported as damage.
 * Files without it (nmt's older ones, other writers') load as before.
 */
#include "model/safetensors.h"
#include "base/hash.h"
#include "base/io.h"
#include "base/json.h"
#include "base/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#define ST_MMAP 1
#else
#define ST_MMAP 0
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "nmt reads and writes safetensors data as the host's floats, so it needs a little-endian machine"
#endif

enum { MAX_HEADER = 100 << 20 }; /* the limit of the reference implementation */
static const char checksum_key[] = "data_checksum";

static const struct {
    const char *name;
    size_t size;
} dtypes[] = {[NMT_ST_F32] = {"F32", 4}, [NMT_ST_I64] = {"I64", 8}, [NMT_ST_U8] = {"U8", 1}, [NMT_ST_I8] = {"I8", 1}};
enum { NUM_DTYPES = sizeof dtypes / sizeof dtypes[0] };

size_t nmt_st_dtype_size(nmt_st_dtype dtype) { return dtypes[dtype].size; }

const char *nmt_st_dtype_name(nmt_st_dtype dtype) { return dtypes[dtype].name; }

/* Elements times dtype size, or -1 with the error set when the product overflows. */
static int tensor_bytes(const nmt_st_tensor *t, size_t *bytes) {
    size_t total = dtypes[t->dtype].size;
    for (int d = 0; d < t->rank; d++)
        if (t->shape[d] < 0 || nmt_size_mul(total, (size_t)t->shape[d], &total, t->name) < 0) return -1;
    *bytes = total;
    return 0;
}

static int compare_strings(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first of n names (taken `stride` bytes apart from `first`, each a char *) that appears twice,
 * or NULL; -1 in *rc when memory runs out. */
static const char *find_duplicate(const void *first, size_t stride, int n, int *rc) {
    const char **names = nmt_malloc((size_t)n * sizeof *names);
    if (!names) {
        *rc = -1;
        return NULL;
    }
    for (int i = 0; i < n; i++) names[i] = *(char *const *)((const char *)first + (size_t)i * stride);
    qsort(names, (size_t)n, sizeof *names, compare_strings);
    const char *duplicate = NULL;
    for (int i = 1; i < n && !duplicate; i++)
        if (strcmp(names[i], names[i - 1]) == 0) duplicate = names[i];
    free(names);
    return duplicate;
}

/* What a reader would refuse in names: empty or reserved tensor names, repeated names or keys. */
static int check_names(const char *path, const nmt_st_tensor *tensors, int num_tensors,
                       const nmt_st_metadata *metadata, int num_metadata, int writing) {
    for (int i = 0; i < num_tensors; i++)
        if (tensors[i].name[0] == '\0' || strcmp(tensors[i].name, "__metadata__") == 0)
            return nmt_error_set("%s: '%s' cannot name a tensor", path, tensors[i].name);
    for (int i = 0; writing && i < num_metadata; i++)
        if (strcmp(metadata[i].key, checksum_key) == 0)
            return nmt_error_set("%s: metadata key '%s' is the writer's own", path, checksum_key);
    int rc = 0;
    const char *repeated = num_tensors > 1 ? find_duplicate(&tensors[0].name, sizeof *tensors, num_tensors, &rc) : NULL;
    if (repeated) return nmt_error_set("%s: tensor '%s' appears twice", path, repeated);
    if (rc == 0 && num_metadata > 1 && (repeated = find_duplicate(&metadata[0].key, sizeof *metadata, num_metadata, &rc)))
        return nmt_error_set("%s: metadata key '%s' appears twice", path, repeated);
    return rc;
}

/* ---- writing ---- */

/* Builds the JSON header, padded with spaces to a multiple of 8 bytes. */
static int build_header(const char *path, const nmt_st_tensor *tensors, int num_tensors,
                        const nmt_st_metadata *metadata, int num_metadata, char **header, size_t *header_size) {
    FILE *out = open_memstream(header, header_size);
    if (!out) return nmt_error_set("%s: cannot build the header: %s", path, strerror(errno));
    int rc = 0;
    for (int i = 0; i < num_tensors && rc == 0; i++) {
        const nmt_st_tensor *t = &tensors[i];
        size_t bytes = 0;
        if (t->rank < 0 || t->rank > 4 || (unsigned)t->dtype >= NUM_DTYPES)
            rc = nmt_error_set("%s: tensor '%s': bad rank %d or dtype %d", path, t->name, t->rank, (int)t->dtype);
        else if (tensor_bytes(t, &bytes) < 0 || bytes != t->size)
            rc = nmt_error_set("%s: tensor '%s': %zu bytes given, its shape and dtype need %zu", path, t->name,
                               t->size, bytes);
    }
    nmt_hash data;
    nmt_hash_init(&data);
    for (int i = 0; i < num_tensors && rc == 0; i++) nmt_hash_add(&data, tensors[i].data, tensors[i].size);
    fputs("{\"__metadata__\":{", out);
    for (int i = 0; i < num_metadata; i++) {
        nmt_json_write_string(out, metadata[i].key);
        fputc(':', out);
        nmt_json_write_string(out, metadata[i].value);
        fputc(',', out);
    }
    fprintf(out, "\"%s\":\"%016" PRIx64 "\"}", checksum_key, nmt_hash_final(&data));
    size_t offset = 0;
    for (int i = 0; i < num_tensors && rc == 0; i++) {
        const nmt_st_tensor *t = &tensors[i];
        fputc(',', out);
        nmt_json_write_string(out, t->name);
        fprintf(out, ":{\"dtype\":\"%s\",\"shape\":[", dtypes[t->dtype].name);
        for (int d = 0; d < t->rank; d++) fprintf(out, "%s%lld", d ? "," : "", (long long)t->shape[d]);
        fprintf(out, "],\"data_offsets\":[%zu,%zu]}", offset, offset + t->size);
        offset += t->size;
    }
    fputc('}', out);
    while (ftell(out) % 8 != 0) fputc(' ', out);
    int failed = ferror(out);
    if (fclose(out) != 0 || failed) rc = rc ? rc : nmt_error_set("%s: out of memory building the header", path);
    if (rc) {
        free(*header);
        *header = NULL;
    }
    return rc;
}

int nmt_st_write(const char *path, const nmt_st_tensor *tensors, int num_tensors, const nmt_st_metadata *metadata,
                 int num_metadata) {
    char *header = NULL;
    size_t header_size = 0;
    if (check_names(path, tensors, num_tensors, metadata, num_metadata, 1) < 0 ||
        build_header(path, tensors, num_tensors, metadata, num_metadata, &header, &header_size) < 0)
        return -1;
    unsigned char length[8];
    for (int i = 0; i < 8; i++) length[i] = (unsigned char)((uint64_t)header_size >> (8 * i));
    nmt_atomic_file f;
    int rc = nmt_atomic_open(&f, path);
    if (rc == 0) rc = nmt_io_write(f.fp, length, 8, path);
    if (rc == 0) rc = nmt_io_write(f.fp, header, header_size, path);
    for (int i = 0; i < num_tensors && rc == 0; i++) rc = nmt_io_write(f.fp, tensors[i].data, tensors[i].size, path);
    free(header);
    if (rc < 0) {
        if (f.fp) nmt_atomic_abort(&f);
        return -1;
    }
    return nmt_atomic_commit(&f);
}

/* ---- the header, read with the strict JSON reader ---- */

/* [a, b, ...] of at most `max` integers; *count gets how many. */
static int parse_counts(nmt_json *j, int64_t *values, int max, int *count, const char *what) {
    *count = 0;
    if (nmt_json_expect(j, '[') < 0) return -1;
    if (nmt_json_accept(j, ']')) return 0;
    do {
        if (*count == max) return nmt_json_error(j, "%s has more than %d entries", what, max);
        if (nmt_json_count(j, &values[(*count)++]) < 0) return -1;
    } while (nmt_json_accept(j, ','));
    return nmt_json_expect(j, ']');
}

typedef struct entry {
    nmt_st_tensor tensor;
    int64_t begin, end; /* data_offsets */
} entry;

static int parse_tensor(nmt_json *j, entry *e) {
    int have_dtype = 0, have_shape = 0, have_offsets = 0;
    size_t at = j->pos;
    if (nmt_json_expect(j, '{') < 0) return -1;
    if (!nmt_json_accept(j, '}')) {
        do {
            char *key;
            if (nmt_json_string(j, &key) < 0) return -1;
            int rc = nmt_json_expect(j, ':');
            if (rc == 0 && strcmp(key, "dtype") == 0 && !have_dtype++) {
                char *dtype;
                size_t dtype_at = j->pos;
                rc = nmt_json_string(j, &dtype);
                int found = -1;
                for (int d = 0; rc == 0 && d < NUM_DTYPES; d++)
                    if (strcmp(dtype, dtypes[d].name) == 0) found = d;
                if (rc == 0 && found < 0) {
                    j->pos = dtype_at;
                    rc = nmt_json_error(j, "tensor '%s': dtype %s is not one nmt reads (F32, I64, U8, I8)", e->tensor.name, dtype);
                }
                e->tensor.dtype = (nmt_st_dtype)found;
                free(dtype);
            } else if (rc == 0 && strcmp(key, "shape") == 0 && !have_shape++) {
                rc = parse_counts(j, e->tensor.shape, 4, &e->tensor.rank, "a shape");
            } else if (rc == 0 && strcmp(key, "data_offsets") == 0 && !have_offsets++) {
                int64_t offsets[2];
                int n;
                rc = parse_counts(j, offsets, 2, &n, "data_offsets");
                if (rc == 0 && n != 2) rc = nmt_json_error(j, "tensor '%s': data_offsets needs [begin, end]", e->tensor.name);
                e->begin = offsets[0];
                e->end = offsets[1];
            } else if (rc == 0) {
                rc = nmt_json_error(j, "tensor '%s': unexpected or repeated field '%s'", e->tensor.name, key);
            }
            free(key);
            if (rc < 0) return -1;
        } while (nmt_json_accept(j, ','));
        if (nmt_json_expect(j, '}') < 0) return -1;
    }
    if (!have_dtype || !have_shape || !have_offsets) {
        j->pos = at;
        return nmt_json_error(j, "tensor '%s' lacks %s", e->tensor.name,
                              !have_dtype ? "a dtype" : !have_shape ? "a shape" : "data_offsets");
    }
    return 0;
}

static int parse_metadata(nmt_json *j, nmt_st_file *file) {
    if (nmt_json_expect(j, '{') < 0) return -1;
    if (nmt_json_accept(j, '}')) return 0;
    do {
        nmt_st_metadata *grown = nmt_realloc(file->metadata, (size_t)(file->num_metadata + 1) * sizeof *grown);
        if (!grown) return -1;
        file->metadata = grown;
        nmt_st_metadata *m = &file->metadata[file->num_metadata];
        m->value = NULL;
        if (nmt_json_string(j, &m->key) < 0) return -1;
        file->num_metadata++;
        if (nmt_json_expect(j, ':') < 0 || nmt_json_string(j, &m->value) < 0) return -1;
    } while (nmt_json_accept(j, ','));
    return nmt_json_expect(j, '}');
}

static int parse_header(nmt_json *j, nmt_st_file *file, entry **entries) {
    int have_metadata = 0, cap = 0;
    if (nmt_json_expect(j, '{') < 0) return -1;
    if (!nmt_json_accept(j, '}')) {
        do {
            char *name;
            size_t at = j->pos;
            if (nmt_json_string(j, &name) < 0) return -1;
            if (nmt_json_expect(j, ':') < 0) {
                free(name);
                return -1;
            }
            if (strcmp(name, "__metadata__") == 0) {
                free(name);
                if (have_metadata++) {
                    j->pos = at;
                    return nmt_json_error(j, "__metadata__ appears twice");
                }
                if (parse_metadata(j, file) < 0) return -1;
                continue;
            }
            if (file->num_tensors == cap) {
                cap = cap ? 2 * cap : 64;
                entry *grown = nmt_realloc(*entries, (size_t)cap * sizeof *grown);
                if (!grown) {
                    free(name);
                    return -1;
                }
                *entries = grown;
            }
            entry *e = &(*entries)[file->num_tensors++];
            memset(e, 0, sizeof *e);
            e->tensor.name = name;
            if (name[0] == '\0') return nmt_json_error(j, "a tensor with an empty name");
            if (parse_tensor(j, e) < 0) return -1;
        } while (nmt_json_accept(j, ','));
        if (nmt_json_expect(j, '}') < 0) return -1;
    }
    return nmt_json_end(j);
}

/* ---- checking the byte ranges ---- */

static int compare_offsets(const void *a, const void *b) {
    const entry *x = *(const entry *const *)a, *y = *(const entry *const *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

/* Checks every tensor's range against its dtype and shape, then that the ranges tile [0, data_size). */
static int check_ranges(const char *name, entry *entries, int n, size_t data_size) {
    for (int i = 0; i < n; i++) {
        entry *e = &entries[i];
        size_t bytes;
        if (e->begin > e->end)
            return nmt_error_set("%s: tensor '%s': data_offsets [%lld, %lld] run backwards", name, e->tensor.name,
                                 (long long)e->begin, (long long)e->end);
        if (tensor_bytes(&e->tensor, &bytes) < 0)
            return nmt_error_set("%s: tensor '%s': its shape is too large for memory", name, e->tensor.name);
        if ((uint64_t)(e->end - e->begin) != bytes)
            return nmt_error_set("%s: tensor '%s': its shape and dtype need %zu bytes but data_offsets [%lld, %lld] hold %lld",
                                 name, e->tensor.name, bytes, (long long)e->begin, (long long)e->end,
                                 (long long)(e->end - e->begin));
    }
    entry **order = nmt_malloc((size_t)(n ? n : 1) * sizeof *order);
    if (!order) return -1;
    for (int i = 0; i < n; i++) order[i] = &entries[i];
    int rc = 0;
    qsort(order, (size_t)n, sizeof *order, compare_offsets);
    uint64_t expected = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const entry *e = order[i];
        if ((uint64_t)e->end > data_size)
            rc = nmt_error_set("%s: tensor '%s' ends at data byte %lld, past the end of the data (%zu bytes): truncated file?",
                               name, e->tensor.name, (long long)e->end, data_size);
        else if ((uint64_t)e->begin != expected)
            rc = nmt_error_set("%s: tensor '%s' starts at data byte %lld, but the tensor before it ends at %llu (%s)", name,
                               e->tensor.name, (long long)e->begin, (unsigned long long)expected,
                               (uint64_t)e->begin > expected ? "a gap" : "an overlap");
        expected = (uint64_t)e->end;
    }
    if (rc == 0 && expected != data_size)
        rc = nmt_error_set("%s: the tensors hold %llu data bytes but the file has %zu after the header", name,
                           (unsigned long long)expected, data_size);
    free(order);
    return rc;
}

/* ---- reading ---- */

/* The hash of size bytes at data (inside file->blob), each block let go once hashed. */
static uint64_t hash_data(const nmt_st_file *file, const unsigned char *data, size_t size) {
    nmt_hash hash;
    nmt_hash_init(&hash);
    enum { HASH_BLOCK = 1 << 20 };
    for (size_t at = 0; at < size; at += HASH_BLOCK) {
        const size_t n = size - at < HASH_BLOCK ? size - at : HASH_BLOCK;
        nmt_hash_add(&hash, data + at, n);
        nmt_st_release(file, data + at, n);
    }
    return nmt_hash_final(&hash);
}

/* Files nmt wrote carry the hash of their data; others (and nmt's older files) do not, and load. The
 * entry is the format's own: once checked it leaves the metadata the caller sees. */
static int check_checksum(nmt_st_file *file, const char *name, const unsigned char *data, size_t size) {
    int at = 0;
    while (at < file->num_metadata && strcmp(file->metadata[at].key, checksum_key) != 0) at++;
    if (at == file->num_metadata) return 0;
    const char *text = file->metadata[at].value;
    char *end;
    errno = 0;
    uint64_t want = strtoull(text, &end, 16);
    if (errno || strlen(text) != 16 || *end != '\0')
        return nmt_error_set("%s: damaged: metadata \"%s\" is not 16 hexadecimal digits: \"%s\"", name, checksum_key, text);
    const uint64_t have = hash_data(file, data, size);
    if (have != want)
        return nmt_error_set("%s: damaged: the tensor data does not match the checksum in its header (%016" PRIx64
                             ", the data hashes to %016" PRIx64 "): a changed byte or a bad disk",
                             name, want, have);
    free(file->metadata[at].key);
    free(file->metadata[at].value);
    memmove(&file->metadata[at], &file->metadata[at + 1], (size_t)(file->num_metadata - at - 1) * sizeof *file->metadata);
    file->num_metadata--;
    file->has_checksum = 1;
    file->checksum = want;
    return 0;
}

int nmt_st_unchanged(const nmt_st_file *file) {
#if ST_MMAP
    if (!file->path) return 0;
    struct stat st;
    if (fstat(file->fd, &st) != 0) return nmt_error_set_kind(NMT_ERROR_IO, "%s: %s", file->path, strerror(errno));
    const unsigned char *data = (const unsigned char *)file->blob + file->data_start;
    if ((uintmax_t)st.st_size != file->blob_size ||
        (file->has_checksum && hash_data(file, data, file->blob_size - file->data_start) != file->checksum))
        return nmt_error_set("%s: changed on disk since it was loaded (%zu bytes then, %jd now%s): a file rewritten "
                             "in place cannot be read again; load it anew",
                             file->path, file->blob_size, (intmax_t)st.st_size,
                             (uintmax_t)st.st_size == file->blob_size ? ", other data" : "");
#else
    (void)file;
#endif
    return 0;
}

void nmt_st_release(const nmt_st_file *file, const void *data, size_t size) {
    if (file->mapped) nmt_pages_release(data, size);
}

/* nmt_st_parse on a blob that is malloc's or (mapped) a mapping of the file. */
static int parse_blob(nmt_st_file *file, void *blob, size_t size, const char *name, int mapped) {
    memset(file, 0, sizeof *file);
    file->blob = blob;
    file->blob_size = size;
    file->mapped = mapped;
    const unsigned char *bytes = blob;
    if (size < 8) {
        nmt_st_free(file);
        return nmt_error_set("%s: not a safetensors file: %zu bytes, too short for the header length", name, size);
    }
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; i--) header_len = header_len << 8 | bytes[i];
    if (header_len > size - 8) {
        nmt_st_free(file);
        return nmt_error_set("%s: not a safetensors file, or truncated: the header length %llu is larger than the "
                             "%zu bytes that follow it", name, (unsigned long long)header_len, size - 8);
    }
    if (header_len > MAX_HEADER || header_len < 2 || bytes[8] != '{') {
        nmt_st_free(file);
        return nmt_error_set("%s: not a safetensors file: the header (%llu bytes) is not a JSON object", name,
                             (unsigned long long)header_len);
    }
    nmt_json j;
    entry *entries = NULL;
    int rc = nmt_json_init(&j, (const char *)bytes + 8, (size_t)header_len, name, "safetensors header", 0, 8);
    if (rc == 0) rc = parse_header(&j, file, &entries);
    /* The tensors move into the file (which then owns their names) before the checks. */
    if (rc == 0 && file->num_tensors > 0) {
        file->tensors = nmt_malloc((size_t)file->num_tensors * sizeof *file->tensors);
        if (!file->tensors) rc = -1;
    }
    for (int i = 0; i < file->num_tensors; i++) {
        if (rc == 0) file->tensors[i] = entries[i].tensor;
        else free(entries[i].tensor.name);
    }
    if (rc < 0) file->num_tensors = 0;
    size_t data_start = 8 + (size_t)header_len;
    file->data_start = data_start;
    if (rc == 0) rc = check_names(name, file->tensors, file->num_tensors, file->metadata, file->num_metadata, 0);
    if (rc == 0) rc = check_ranges(name, entries, file->num_tensors, size - data_start);
    if (rc == 0) rc = check_checksum(file, name, bytes + data_start, size - data_start);
    for (int i = 0; rc == 0 && i < file->num_tensors; i++) {
        file->tensors[i].data = bytes + data_start + entries[i].begin;
        file->tensors[i].size = (size_t)(entries[i].end - entries[i].begin);
    }
    free(entries);
    if (rc < 0) nmt_st_free(file);
    return rc;
}

int nmt_st_parse(nmt_st_file *file, void *blob, size_t size, const char *name) {
    return parse_blob(file, blob, size, name, 0);
}

int nmt_st_read(nmt_st_file *file, const char *path) {
    memset(file, 0, sizeof *file);
    FILE *fp;
    size_t size;
    if (nmt_open_regular(path, &fp, &size) < 0) return -1;
#if ST_MMAP
    /* A model is written to a new file and renamed into place, so the mapped file does not change
     * (another program may rewrite it in place: nmt_st_unchanged, for readers that come back). */
    void *mapping = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fileno(fp), 0) : MAP_FAILED;
    if (mapping != MAP_FAILED) {
        const int fd = fcntl(fileno(fp), F_DUPFD_CLOEXEC, 0);
        fclose(fp);
        if (fd < 0) {
            munmap(mapping, size);
            return nmt_error_set_kind(NMT_ERROR_IO, "%s: %s", path, strerror(errno));
        }
        if (parse_blob(file, mapping, size, path, 1) < 0 || !(file->path = nmt_strdup(path))) {
            close(fd);
            nmt_st_free(file);
            return -1;
        }
        file->fd = fd;
        return 0;
    }
#endif
    void *blob = nmt_malloc(size);
    if (!blob) {
        fclose(fp);
        return nmt_error_prefix("%s: reading the file into memory", path);
    }
    size_t got = fread(blob, 1, size, fp);
    int error = ferror(fp), more = got == size && fgetc(fp) != EOF;
    fclose(fp);
    if (got != size || error || more) {
        free(blob);
        return nmt_error_set_kind(NMT_ERROR_IO, "%s: read failed: %s",
                                  path, error ? strerror(errno) : "the file changed size while being read");
    }
    return nmt_st_parse(file, blob, size, path);
}

const nmt_st_tensor *nmt_st_find(const nmt_st_file *file, const char *name) {
    for (int i = 0; i < file->num_tensors; i++)
        if (strcmp(file->tensors[i].name, name) == 0) return &file->tensors[i];
    return NULL;
}

const char *nmt_st_meta(const nmt_st_file *file, const char *key) {
    for (int i = 0; i < file->num_metadata; i++)
        if (strcmp(file->metadata[i].key, key) == 0) return file->metadata[i].value;
    return NULL;
}

void nmt_st_free(nmt_st_file *file) {
    for (int i = 0; i < file->num_tensors; i++) free(file->tensors[i].name);
    for (int i = 0; i < file->num_metadata; i++) {
        free(file->metadata[i].key);
        free(file->metadata[i].value);
    }
    free(file->tensors);
    free(file->metadata);
#if ST_MMAP
    if (file->mapped) munmap(file->blob, file->blob_size);
    else free(file->blob);
    if (file->path) close(file->fd);
    free(file->path);
#else
    free(file->blob);
#endif
    memset(file, 0, sizeof *file);
}
