/* input: opening text to read, the way every reader of nmt takes it: "-" is standard input, and
 * gzip data (a file or a pipe whose first bytes are gzip's magic, whatever its name) is decompressed
 * on the fly with zlib, behind an ordinary stdio FILE, so nmt_lines and fread read it unchanged. A
 * pipe's first bytes are looked at without being taken (tee), so that plain text on one stays the
 * FILE it was (stdin itself). bzip2, xz and zstd data, and a directory, are refused with an error
 * that says what they are.
 */
#ifndef NMT_INPUT_H
#define NMT_INPUT_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens `path` for reading ("-": stdin, returned as it is unless it carries gzip data). NULL with the
 * error set ("PATH: cannot open: ...", "PATH: a directory, ...", "PATH: bzip2-compressed data, ..."). */
FILE *nmt_input_open(const char *path);
/* Closes what nmt_input_open returned (stdin stays open). Returns -1 with the error set when a
 * compressed input turned out to be damaged or truncated, naming `path`. */
int nmt_input_close(FILE *fp, const char *path);
/* Reads a whole input (as nmt_input_open takes it) into a NUL-terminated buffer; *size excludes the NUL. */
int nmt_input_read_all(const char *path, char **data, size_t *size);

#ifdef __cplusplus
}
#endif

#endif
