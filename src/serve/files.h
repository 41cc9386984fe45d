/* files: the translated files of POST /translate_file, kept in memory for GET /download_file/NAME.
 *
 * A file is stored under a new name, 32 random hexadecimal digits (128 bits from getrandom, so that
 * nobody can guess another client's file), a '.', and its own name made safe: letters, digits, '.', '-'
 * and '_' kept, anything else '_', leading dots dropped, at most 100 bytes -- LibreTranslate's shape
 * (uuid.filename), the part after the first '.' being the name to download it as. The store holds at
 * most max_files files and max_bytes bytes: adding past either drops the oldest first; a file larger
 * than max_bytes alone is refused. Thread-safe (one mutex).
 */
#ifndef NMT_SERVE_FILES_H
#define NMT_SERVE_FILES_H

#include <stddef.h>

typedef struct nmt_serve_files nmt_serve_files;

enum { NMT_SERVE_FILE_NAME_MAX = 32 + 1 + 100 + 1 }; /* a stored name and its NUL */

int nmt_serve_files_create(nmt_serve_files **out, int max_files, size_t max_bytes);
void nmt_serve_files_free(nmt_serve_files *f);

/* Stores a copy of data[0, len) named after `name`; writes its stored name to stored[NMT_SERVE_FILE_NAME_MAX].
 * Returns 0, or -1 (too large, out of memory, no randomness) with a message. */
int nmt_serve_files_put(nmt_serve_files *f, const char *name, const char *data, size_t len, char *stored);
/* A copy of the file stored as `stored` (*data, *len: free *data), or -1 when there is none. */
int nmt_serve_files_get(nmt_serve_files *f, const char *stored, char **data, size_t *len);

#endif
