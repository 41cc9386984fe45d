/* input: opening text to read, the way every reader of nmt takes it: "-" is standard input, and a
 * gzip file (a regular file whose first bytes are gzip's magic, whatever its name) is decompressed on the fly
 * with zlib, behind an ordinary stdio FILE, so nmt_lines and fread read it unchanged.
 */
#ifndef NMT_INPUT_H
#define NMT_INPUT_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens `path` for reading ("-": stdin). NULL with the error set ("PATH: cannot open: ..."). */
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
