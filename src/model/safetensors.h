/* safetensors: read and write the safetensors file format (8-byte little-endian header length, a
 * JSON header naming each tensor's dtype, shape and byte range, then the raw little-endian data), with
 * string metadata under "__metadata__". F32 holds parameters (I8 with F32 row factors in int8
 * models), I64/U8 checkpoint bookkeeping.
 *
 * Reading validates everything before trusting it: the header length against the file size, the
 * JSON syntax, every dtype, shape and offset, overlaps and gaps; a truncated or foreign file gives an
 * error naming the file and what is wrong, never a crash.
 */
#ifndef NMT_SAFETENSORS_H
#define NMT_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

typedef enum { NMT_ST_F32, NMT_ST_I64, NMT_ST_U8, NMT_ST_I8 } nmt_st_dtype;

typedef struct nmt_st_tensor {
    char *name;
    nmt_st_dtype dtype;
    int rank;           /* 0..4 */
    int64_t shape[4];
    const void *data;   /* writer: caller's memory; reader: points into the loaded file (8-byte aligned in
                         * files nmt wrote; a file from elsewhere may leave it unaligned: memcpy it) */
    size_t size;        /* bytes */
} nmt_st_tensor;

typedef struct nmt_st_metadata {
    char *key;
    char *value;
} nmt_st_metadata;

typedef struct nmt_st_file {
    nmt_st_tensor *tensors;
    int num_tensors;
    nmt_st_metadata *metadata;
    int num_metadata;
    void *blob;         /* the whole file, owned (reader) */
    size_t blob_size;
    int mapped;         /* blob is a read-only mapping of the file (nmt_st_read), else malloc's */
    char *path;         /* mapped: the file's path, and fd the file, kept open for nmt_st_unchanged */
    int fd;
    size_t data_start;  /* offset of the tensor data in blob */
    int has_checksum;   /* the data's "data_checksum" was checked: checksum */
    uint64_t checksum;
} nmt_st_file;

size_t nmt_st_dtype_size(nmt_st_dtype dtype);        /* bytes of one element */
const char *nmt_st_dtype_name(nmt_st_dtype dtype);   /* "F32", "I64", "U8", "I8" */

/* Writer: tensors are written in the order given, with metadata (may be 0 entries) and the writer's
 * own "data_checksum" entry, atomically. Each tensor's size must equal its shape times its dtype's size. */
int nmt_st_write(const char *path, const nmt_st_tensor *tensors, int num_tensors,
                 const nmt_st_metadata *metadata, int num_metadata);
/* Reader: loads and validates the whole file (a regular file only: a FIFO is refused without
 * blocking), the data against its "data_checksum" when the file has one. The file is mapped
 * (read into memory where it cannot be), and the checksum pass lets each block go again once
 * hashed, so the file's pages do not all stay in the process's memory beside their copies. */
int nmt_st_read(nmt_st_file *file, const char *path);
/* A reader done with size bytes at data (inside file->blob) lets a mapped file's pages there leave
 * this process's memory (they are read back from the file if touched again); nothing otherwise. */
void nmt_st_release(const nmt_st_file *file, const void *data, size_t size);
/* 0 while a mapped file still holds what nmt_st_read validated: its size, and its data hashed again
 * to its checksum when it has one. Pages given back by nmt_st_release are read from the file when
 * touched again, so a reader that comes back to them later asks first: a file rewritten in place
 * (by cp, say, where nmt writes a new file and renames it) would give other bytes, or a SIGBUS where
 * it is shorter. An error naming the file otherwise; always 0 for a file read into memory. */
int nmt_st_unchanged(const nmt_st_file *file);
/* Parses a file already in memory (for fuzzing); takes ownership of blob (freed by nmt_st_free, or
 * at once when parsing fails; *file is then empty). Tensors keep the header's order. */
int nmt_st_parse(nmt_st_file *file, void *blob, size_t size, const char *name);
const nmt_st_tensor *nmt_st_find(const nmt_st_file *file, const char *name);
const char *nmt_st_meta(const nmt_st_file *file, const char *key);
void nmt_st_free(nmt_st_file *file);

#endif
