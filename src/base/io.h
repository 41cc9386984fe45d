/* io: files that are never left half-written, and line-by-line reading with line numbers.
 *
 * Writing. nmt_atomic_open(path) writes to "path.tmp.<pid>"; nmt_atomic_commit() flushes,
 * fsyncs, renames it over `path` and fsyncs the directory, so a reader (or a process killed at any
 * moment) sees either the old file or the whole new one. nmt_atomic_abort() removes the temporary.
 *
 * Fault injection. NMT_FAULT=write:N makes the N-th nmt_io_write of the process fail with ENOSPC,
 * NMT_FAULT=fsync:N the N-th fsync with EIO (tests prove that a failed save keeps the old file);
 * nmt_io_fault_set() does the same from a test.
 *
 * Reading. nmt_read_file() slurps a file; nmt_lines iterates over a stream's lines, numbered
 * from 1, with the '\n' removed (a missing final newline is fine).
 */
#ifndef NMT_IO_H
#define NMT_IO_H

#include <stdio.h>
#include <stddef.h>

typedef struct nmt_atomic_file {
    FILE *fp;           /* write through nmt_io_write or fprintf */
    char *path;         /* final path */
    char *tmp_path;     /* temporary path beside it */
} nmt_atomic_file;

int nmt_atomic_open(nmt_atomic_file *f, const char *path);
/* Flush, fsync, close, rename, fsync the directory. On failure the temporary is removed, the old
 * file at `path` is untouched, and the error names the path. */
int nmt_atomic_commit(nmt_atomic_file *f);
void nmt_atomic_abort(nmt_atomic_file *f);
/* Writes a whole buffer to a file atomically. */
int nmt_atomic_write(const char *path, const void *data, size_t size);

/* fwrite that fails cleanly (error names `name`) and honours NMT_FAULT=write:N. */
int nmt_io_write(FILE *fp, const void *data, size_t size, const char *name);
/* fflush + fsync, honouring NMT_FAULT=fsync:N. */
int nmt_io_sync(FILE *fp, const char *name);
/* kind is "write" or "fsync"; n-th call from now fails (1 = next); n = 0 turns it off. */
void nmt_io_fault_set(const char *kind, long n);

/* Copies a file to `to` atomically (nmt_atomic_write of its bytes). */
int nmt_copy_file(const char *from, const char *to);

/* Reads a whole file into a NUL-terminated buffer (*size excludes the NUL). */
int nmt_read_file(const char *path, char **data, size_t *size);
/* The same from an open stream to its end (errors name `name`). */
int nmt_read_stream(FILE *fp, const char *name, char **data, size_t *size);

/* Creates a directory and its parents (like mkdir -p). */
int nmt_mkdirs(const char *path);
/* Joins a directory and a name into a new string ("dir/name"). */
char *nmt_path_join(const char *dir, const char *name);
int nmt_file_exists(const char *path);

typedef struct nmt_lines {
    FILE *fp;
    const char *name;   /* for messages: the file name or "<stdin>" */
    char *line;         /* current line without '\n', NUL-terminated */
    size_t len;         /* its length in bytes */
    size_t cap;
    long number;        /* 1-based number of the current line */
} nmt_lines;

void nmt_lines_init(nmt_lines *lines, FILE *fp, const char *name);
/* 1 = a line was read, 0 = end of input, -1 = read error (error set). */
int nmt_lines_next(nmt_lines *lines);
void nmt_lines_free(nmt_lines *lines);

#endif
