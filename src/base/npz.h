/* npz: NumPy's arrays read from .npy files and from .npz archives of them (Marian's model files).
 *
 * A .npy file is the magic "\x93NUMPY", a format version (1.0: a 16-bit header length; 2.0 and 3.0:
 * 32-bit), a header that is a Python dict literal ({'descr': '<f4', 'fortran_order': False, 'shape':
 * (512, 512), }) and the data, C order, little-endian. Read: dtypes <f4, <f2, <f8 (floats) and |i1,
 * |u1 (bytes, as Marian stores its config), ranks 0 to 4, C order. Big-endian data, Fortran order,
 * structured dtypes, other keys and a data section that is not exactly the shape's bytes are refused
 * with the file and the array named. Headers are at most 64 KiB.
 *
 * An .npz archive (numpy.savez, Marian's cnpy) is a zip of NAME.npy entries, stored or deflated: it is
 * extracted (zip_dir.h) into a temporary directory that stays until nmt_npz_close, and each array's data
 * is read from there when asked for, whole or a range of it, so that memory holds at most one array.
 */
#ifndef NMT_NPZ_H
#define NMT_NPZ_H

#include <stddef.h>
#include <stdint.h>

enum { NMT_NPY_MAX_RANK = 4, NMT_NPY_MAX_HEADER = 1 << 16 };

typedef enum { NMT_NPY_F32, NMT_NPY_F16, NMT_NPY_F64, NMT_NPY_I8, NMT_NPY_U8 } nmt_npy_dtype;

/* One array: its shape and where its data lies in its file. */
typedef struct nmt_npy {
    char *name;                       /* the archive's entry without ".npy" (NULL for a lone file) */
    char *path;                       /* the .npy file */
    nmt_npy_dtype dtype;
    int rank;
    int64_t shape[NMT_NPY_MAX_RANK];
    size_t count;                     /* elements (1 for rank 0) */
    size_t offset;                    /* bytes before the data */
    int used;                         /* for the caller: set by whoever takes the array */
} nmt_npy;

/* Bytes of one element of a dtype. */
size_t nmt_npy_item_size(nmt_npy_dtype dtype);
/* Parses the header at the start of a .npy file of file_size bytes (bytes holds its first len bytes,
 * len >= min(file_size, NMT_NPY_MAX_HEADER + 12)) into *a's dtype, rank, shape, count and offset.
 * Errors name `what` (the file, or the archive and the array). */
int nmt_npy_parse_header(const unsigned char *bytes, size_t len, size_t file_size, const char *what, nmt_npy *a);

typedef struct nmt_npz {
    char *path;      /* the archive */
    char *dir;       /* where it is extracted */
    nmt_npy *arrays; /* [count], sorted by name */
    int count;
} nmt_npz;

/* Extracts the archive at path (at most max_bytes unpacked) and reads every entry's header. Every
 * entry must be a NAME.npy file. On failure nothing is left to close. */
int nmt_npz_open(nmt_npz *z, const char *path, size_t max_bytes);
/* The array called name, or NULL. */
nmt_npy *nmt_npz_find(const nmt_npz *z, const char *name);
/* Reads the array's data (count * item size bytes, as stored: little-endian) into dst. */
int nmt_npz_read(const nmt_npz *z, const nmt_npy *a, void *dst);
/* The same for elements [first, first + count) (C order) of the array: count * item size bytes. */
int nmt_npz_read_range(const nmt_npz *z, const nmt_npy *a, size_t first, size_t count, void *dst);
/* Removes the extracted files and frees everything. */
void nmt_npz_close(nmt_npz *z);

#endif
