/* io: files that are never left half-written, bounded reading, and line-by-line reading with line numbers.
 *
 * Writing. nmt_atomic_open(path) writes through what is there. A symbolic link is followed to the
 * file it names (the link stays). A regular file (or none yet) is written to a temporary beside it,
 * "NAME.tmp.<pid>.<12 random letters and digits>", created with O_EXCL | O_NOFOLLOW so that nothing
 * planted at a guessed name can redirect the write, and given the old file's permissions;
 * nmt_atomic_commit() flushes, fsyncs, renames it over the file and fsyncs the directory, so a reader
 * (or a process killed at any moment) sees either the old file or the whole new one. Anything else
 * (a FIFO, a terminal, /dev/null) is opened and written directly, never replaced. A directory is
 * refused. nmt_atomic_abort() removes the temporary. nmt_remove_stale_temporaries() deletes only
 * files of exactly that name pattern, owned by this user, whose process is gone.
 *
 * Output paths on a command line. nmt_output_check() refuses an empty path and a directory before any
 * work; nmt_same_file() tells whether an output would overwrite one of the inputs.
 *
 * Fault injection. NMT_FAULT=write:N makes the N-th nmt_io_write of the process fail with ENOSPC,
 * NMT_FAULT=fsync:N the N-th fsync with EIO (tests prove that a failed save keeps the old file);
 * nmt_io_fault_set() does the same from a test.
 *
 * Reading. nmt_read_file() slurps a file of at most NMT_READ_MAX bytes (nmt_read_file_max with a
 * smaller bound); nmt_open_regular() opens a file without blocking (a FIFO in its place must not hang)
 * and refuses anything but a regular file, for the files of a model directory. nmt_lines iterates
 * over a stream's lines, numbered from 1, with the '\n' removed (a missing final newline is fine);
 * a line longer than NMT_LINE_MAX bytes is an error naming the file and the line, so that no input
 * (/dev/zero included) makes it use more memory than that.
 */
#ifndef NMT_IO_H
#define NMT_IO_H

#include <stdio.h>
#include <stddef.h>

enum {
    NMT_LINE_MAX = 1 << 20,  /* bytes of one text line (without its '\n') */
};
#define NMT_READ_MAX ((size_t)1 << 30) /* bytes nmt_read_file reads at most */

typedef struct nmt_atomic_file {
    FILE *fp;           /* write through nmt_io_write or fprintf */
    char *path;         /* final path (a symbolic link resolved) */
    char *tmp_path;     /* temporary path beside it; NULL when the file is written directly */
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

/* Removes the temporaries of nmt_atomic_open that killed processes left in `dir`. */
void nmt_remove_stale_temporaries(const char *dir);

/* For an output path given as `flag`: refuses (error set, e.g. "-o '': an empty path" or "-o out/: a
 * directory") an empty path and an existing directory. */
int nmt_output_check(const char *path, const char *flag);
/* 1 when both paths exist and are the same file (symbolic links followed), else 0. */
int nmt_same_file(const char *a, const char *b);

/* Refuses (error naming both, e.g. "out/model.safetensors is in/model.safetensors (the same file): ...")
 * writing any of the files `names` (NULL-terminated) of directory dir when it is one of the files
 * `inputs` (NULL-terminated; device and inode compared, symbolic links followed). */
int nmt_output_dir_check_inputs(const char *dir, const char *const *names, const char *const *inputs);

/* A directory written whole (a model directory): its files are written into a fresh directory beside
 * it, "DIR.tmp.<pid>.<letters>", and nmt_staged_dir_commit moves them into place: the directory renamed
 * whole where DIR does not exist (or is empty), else each file renamed over its namesake in DIR -- the
 * name is replaced, never a file a symbolic link there names -- with `last` (the file that makes DIR
 * look like a model) last. A failed or aborted build leaves DIR as it was. Opening creates DIR's
 * parents. */
typedef struct nmt_staged_dir {
    char *dir; /* the directory to write */
    char *tmp; /* where its files are written meanwhile */
} nmt_staged_dir;
int nmt_staged_dir_open(nmt_staged_dir *s, const char *dir);
/* The path to write file `name` of the directory at (a new string). */
char *nmt_staged_dir_path(const nmt_staged_dir *s, const char *name);
int nmt_staged_dir_commit(nmt_staged_dir *s, const char *last);
void nmt_staged_dir_abort(nmt_staged_dir *s);

/* Reads a whole file into a NUL-terminated buffer (*size excludes the NUL); a file (or a pipe) of more
 * than NMT_READ_MAX bytes is refused. */
int nmt_read_file(const char *path, char **data, size_t *size);
/* Copies a file to `to` atomically (nmt_atomic_write of its bytes). */
int nmt_copy_file(const char *from, const char *to);
/* The same with at most `max` bytes; the error names `what` the file is (e.g. "a config"). */
int nmt_read_file_max(const char *path, size_t max, const char *what, char **data, size_t *size);
/* The same for a file that must be a regular one (a model directory's, a training log): opened with
 * nmt_open_regular, so a FIFO in its place is refused at once. */
int nmt_read_regular_file(const char *path, size_t max, const char *what, char **data, size_t *size);
/* Opens path for reading without blocking and refuses (error naming the path and what it is) anything
 * but a regular file; *size gets its size. */
int nmt_open_regular(const char *path, FILE **fp, size_t *size);

/* Creates a directory and its parents (like mkdir -p). */
int nmt_mkdirs(const char *path);
/* Joins a directory and a name into a new string ("dir/name"). */
char *nmt_path_join(const char *dir, const char *name);
int nmt_file_exists(const char *path);
/* 1 when path names a file (links followed), 0 when nothing is there (ENOENT); -1 when it cannot be
 * told, the error naming path and why, e.g. "a loop of symbolic links (ELOOP)". */
int nmt_file_present(const char *path);

typedef struct nmt_lines {
    FILE *fp;
    const char *name;   /* for messages: the file name or "<stdin>" */
    char *line;         /* current line without '\n', NUL-terminated */
    size_t len;         /* its length in bytes */
    size_t cap;
    long number;        /* 1-based number of the current line */
} nmt_lines;

void nmt_lines_init(nmt_lines *lines, FILE *fp, const char *name);
/* 1 = a line was read, 0 = end of input, -1 = read error or a line longer than NMT_LINE_MAX
 * (error set: "NAME:LINE: a line longer than 1048576 bytes ..."). */
int nmt_lines_next(nmt_lines *lines);
void nmt_lines_free(nmt_lines *lines);

/* A new directory $TMPDIR/PREFIX-XXXXXX (or under /tmp), made by mkdtemp: its path, to free. */
char *nmt_temp_dir_create(const char *prefix);
/* Removes path and, for a directory, everything below it, not following symbolic links. */
void nmt_remove_tree(const char *path);

#endif
