/* npz: .npy headers parsed and .npz archives opened (npz.h). */
#include "base/npz.h"

#include "base/io.h"
#include "base/util.h"
#include "base/zip_dir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { MAX_ARRAYS = 65535 };
static const int64_t max_dim = (int64_t)1 << 40;

size_t nmt_npy_item_size(nmt_npy_dtype dtype) {
    switch (dtype) {
    case NMT_NPY_F64: return 8;
    case NMT_NPY_F32: return 4;
    case NMT_NPY_F16: return 2;
    default: return 1;
    }
}

/* The header's Python dict, read strictly: a cursor over [at, end). */
typedef struct dict_reader {
    const char *at, *end, *what;
} dict_reader;

static void skip_space(dict_reader *r) {
    while (r->at < r->end && (*r->at == ' ' || *r->at == '\n' || *r->at == '\t')) r->at++;
}

static int accept(dict_reader *r, char c) {
    skip_space(r);
    if (r->at < r->end && *r->at == c) {
        r->at++;
        return 1;
    }
    return 0;
}

static int expect(dict_reader *r, char c, const char *where) {
    return accept(r, c) ? 0 : nmt_error_set("%s: the .npy header lacks '%c' %s", r->what, c, where);
}

/* A quoted string ('...' or "...", no escapes) into out[size]. */
static int quoted(dict_reader *r, char *out, size_t size, const char *where) {
    skip_space(r);
    if (r->at >= r->end || (*r->at != '\'' && *r->at != '"'))
        return nmt_error_set("%s: the .npy header has no string %s (a structured dtype?)", r->what, where);
    const char quote = *r->at++;
    size_t n = 0;
    while (r->at < r->end && *r->at != quote && *r->at != '\\' && n + 1 < size) out[n++] = *r->at++;
    if (r->at >= r->end || *r->at != quote) return nmt_error_set("%s: the .npy header's string %s is damaged", r->what, where);
    r->at++;
    out[n] = '\0';
    return 0;
}

static int word(dict_reader *r, const char *w) {
    skip_space(r);
    const size_t n = strlen(w);
    if ((size_t)(r->end - r->at) >= n && memcmp(r->at, w, n) == 0) {
        r->at += n;
        return 1;
    }
    return 0;
}

static int read_dtype(dict_reader *r, nmt_npy *a) {
    static const struct { const char *descr; nmt_npy_dtype dtype; } known[] = {
        {"<f4", NMT_NPY_F32}, {"<f2", NMT_NPY_F16}, {"<f8", NMT_NPY_F64}, {"|i1", NMT_NPY_I8},
        {"<i1", NMT_NPY_I8},  {"|u1", NMT_NPY_U8},  {"<u1", NMT_NPY_U8}};
    char descr[32];
    if (quoted(r, descr, sizeof descr, "for descr") < 0) return -1;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(descr, known[i].descr) == 0) {
            a->dtype = known[i].dtype;
            return 0;
        }
    return nmt_error_set("%s: dtype '%s': nmt reads little-endian float32, float16, float64, int8 and uint8 arrays",
                         r->what, descr);
}

static int read_shape(dict_reader *r, nmt_npy *a) {
    if (expect(r, '(', "before the shape") < 0) return -1;
    a->rank = 0;
    while (!accept(r, ')')) {
        if (a->rank == NMT_NPY_MAX_RANK)
            return nmt_error_set("%s: more than %d dimensions", r->what, NMT_NPY_MAX_RANK);
        skip_space(r);
        int64_t dim = 0;
        int digits = 0;
        for (; r->at < r->end && *r->at >= '0' && *r->at <= '9' && dim <= max_dim; r->at++, digits++)
            dim = dim * 10 + (*r->at - '0');
        if (!digits || dim > max_dim) return nmt_error_set("%s: the .npy header's shape is damaged or too large", r->what);
        a->shape[a->rank++] = dim;
        if (!accept(r, ',') && !accept(r, ')')) return nmt_error_set("%s: the .npy header's shape is damaged", r->what);
        if (r->at[-1] == ')') break;
    }
    return 0;
}

/* The dict: 'descr', 'fortran_order' and 'shape', each once. */
static int read_dict(dict_reader *r, nmt_npy *a) {
    int seen = 0;
    if (expect(r, '{', "at its start") < 0) return -1;
    while (!accept(r, '}')) {
        char key[32];
        if (quoted(r, key, sizeof key, "for a key") < 0 || expect(r, ':', "after a key") < 0) return -1;
        const int bit = strcmp(key, "descr") == 0 ? 1 : strcmp(key, "fortran_order") == 0 ? 2
                      : strcmp(key, "shape") == 0 ? 4 : 0;
        if (!bit || (seen & bit)) return nmt_error_set("%s: the .npy header has %s key '%s'", r->what, bit ? "a repeated" : "an unknown", key);
        seen |= bit;
        if (bit == 1 && read_dtype(r, a) < 0) return -1;
        if (bit == 2 && !word(r, "False"))
            return nmt_error_set("%s: fortran_order is not False: nmt reads arrays in C order only", r->what);
        if (bit == 4 && read_shape(r, a) < 0) return -1;
        if (!accept(r, ',')) {
            if (expect(r, '}', "at its end") < 0) return -1;
            break;
        }
    }
    if (seen != 7) return nmt_error_set("%s: the .npy header lacks descr, fortran_order or shape", r->what);
    skip_space(r);
    return r->at == r->end ? 0 : nmt_error_set("%s: the .npy header has bytes after its dict", r->what);
}

int nmt_npy_parse_header(const unsigned char *bytes, size_t len, size_t file_size, const char *what, nmt_npy *a) {
    if (len > file_size) len = file_size;
    if (len < 10 || memcmp(bytes, "\x93NUMPY", 6) != 0)
        return nmt_error_set("%s: not a .npy array (no \\x93NUMPY magic)", what);
    const int major = bytes[6];
    if (major < 1 || major > 3) return nmt_error_set("%s: .npy format version %d.%d, not 1.0 to 3.0", what, major, bytes[7]);
    const size_t prefix = major == 1 ? 10 : 12;
    if (len < prefix) return nmt_error_set("%s: the .npy header is cut short", what);
    size_t header = (size_t)bytes[8] | (size_t)bytes[9] << 8;
    if (major > 1) header |= (size_t)bytes[10] << 16 | (size_t)bytes[11] << 24;
    if (header > NMT_NPY_MAX_HEADER) return nmt_error_set("%s: a .npy header of %zu bytes (at most %d)", what, header, NMT_NPY_MAX_HEADER);
    if (prefix + header > len) return nmt_error_set("%s: the .npy header is cut short", what);
    dict_reader r = {.at = (const char *)bytes + prefix, .end = (const char *)bytes + prefix + header, .what = what};
    if (read_dict(&r, a) < 0) return -1;
    size_t count = 1;
    for (int i = 0; i < a->rank; i++) {
        if (a->shape[i] != 0 && count > (file_size / (size_t)a->shape[i]))
            return nmt_error_set("%s: its shape holds more than the file", what);
        count *= (size_t)a->shape[i];
    }
    a->count = count;
    a->offset = prefix + header;
    const size_t item = nmt_npy_item_size(a->dtype), data = file_size - a->offset;
    if (count > data / item || count * item != data)
        return nmt_error_set("%s: %zu bytes of data, not the %zu x %zu its shape gives", what, data, count, item);
    return 0;
}

/* Reads the header of the array in a->path. */
static int read_header(nmt_npy *a, const char *what) {
    FILE *fp;
    size_t size;
    if (nmt_open_regular(a->path, &fp, &size) < 0) return -1;
    enum { HEAD = NMT_NPY_MAX_HEADER + 12 };
    unsigned char *head = nmt_malloc(HEAD);
    int rc = -1;
    if (head) {
        const size_t want = size < HEAD ? size : HEAD;
        if (fread(head, 1, want, fp) != want) nmt_error_set("%s: cannot read its header", what);
        else rc = nmt_npy_parse_header(head, want, size, what, a);
    }
    free(head);
    fclose(fp);
    return rc;
}

static int by_name(const void *x, const void *y) {
    return strcmp(((const nmt_npy *)x)->name, ((const nmt_npy *)y)->name);
}

/* Adds the extracted entry `entry` of z->dir as an array. */
static int add_array(nmt_npz *z, const char *entry, int *cap) {
    const size_t len = strlen(entry);
    char *path = nmt_path_join(z->dir, entry);
    struct stat st;
    if (!path) return -1;
    if (len <= 4 || strcmp(entry + len - 4, ".npy") != 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        free(path);
        return nmt_error_set("%s: entry %s is not a NAME.npy array", z->path, entry);
    }
    if (z->count == MAX_ARRAYS) {
        free(path);
        return nmt_error_set("%s: more than %d arrays", z->path, MAX_ARRAYS);
    }
    if (z->count == *cap) {
        const int grown_cap = *cap ? 2 * *cap : 64;
        nmt_npy *grown = nmt_realloc(z->arrays, (size_t)grown_cap * sizeof *grown);
        if (!grown) {
            free(path);
            return -1;
        }
        z->arrays = grown;
        *cap = grown_cap;
    }
    nmt_npy *a = &z->arrays[z->count];
    memset(a, 0, sizeof *a);
    a->path = path;
    if (!(a->name = nmt_malloc(len - 3))) {
        free(path);
        return -1;
    }
    memcpy(a->name, entry, len - 4);
    a->name[len - 4] = '\0';
    z->count++;
    char what[256];
    snprintf(what, sizeof what, "%.160s: array %.80s", z->path, a->name);
    return read_header(a, what);
}

int nmt_npz_open(nmt_npz *z, const char *path, size_t max_bytes) {
    memset(z, 0, sizeof *z);
    int cap = 0, rc = -1;
    DIR *d = NULL;
    if (!(z->path = nmt_strdup(path)) || !(z->dir = nmt_temp_dir_create("nmt-npz"))) goto done;
    if (nmt_zip_dir_extract(path, z->dir, max_bytes) < 0) goto done;
    if (!(d = opendir(z->dir))) {
        nmt_error_set("%s: %s", z->dir, strerror(errno));
        goto done;
    }
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && add_array(z, e->d_name, &cap) < 0) goto done;
    if (z->count == 0) {
        nmt_error_set("%s: no arrays", path);
        goto done;
    }
    qsort(z->arrays, (size_t)z->count, sizeof *z->arrays, by_name);
    rc = 0;
done:
    if (d) closedir(d);
    if (rc < 0) nmt_npz_close(z);
    return rc;
}

nmt_npy *nmt_npz_find(const nmt_npz *z, const char *name) {
    const nmt_npy key = {.name = (char *)name};
    return z->count ? bsearch(&key, z->arrays, (size_t)z->count, sizeof *z->arrays, by_name) : NULL;
}

int nmt_npz_read_range(const nmt_npz *z, const nmt_npy *a, size_t first, size_t count, void *dst) {
    if (first > a->count || count > a->count - first)
        return nmt_error_set("%s: array %s: elements %zu to %zu of %zu", z->path, a->name, first, first + count, a->count);
    FILE *fp;
    size_t size;
    if (nmt_open_regular(a->path, &fp, &size) < 0) return -1;
    const size_t item = nmt_npy_item_size(a->dtype), bytes = count * item;
    int rc = 0;
    if (size != a->offset + a->count * item || fseek(fp, (long)(a->offset + first * item), SEEK_SET) != 0 ||
        fread(dst, 1, bytes, fp) != bytes)
        rc = nmt_error_set("%s: array %s: cannot read its data", z->path, a->name);
    fclose(fp);
    return rc;
}

int nmt_npz_read(const nmt_npz *z, const nmt_npy *a, void *dst) { return nmt_npz_read_range(z, a, 0, a->count, dst); }

void nmt_npz_close(nmt_npz *z) {
    for (int i = 0; i < z->count; i++) {
        free(z->arrays[i].name);
        free(z->arrays[i].path);
    }
    free(z->arrays);
    if (z->dir) nmt_remove_tree(z->dir);
    free(z->dir);
    free(z->path);
    memset(z, 0, sizeof *z);
}
