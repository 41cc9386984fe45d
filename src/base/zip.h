/* zip: a zip archive's files extracted into a directory (Argos Translate packages are zip files).
 *
 * The archive is read through its central directory (the end record is found in its last 64 KiB +
 * 22 bytes); each entry's local header gives where its data starts. Entries are stored (method 0)
 * or deflated (8, through zlib) and checked against their CRC-32; other methods, encryption, zip64
 * archives, and names that are absolute or climb out of the directory ("..", backslashes) are refused
 * with the entry named. Every size is bounded: at most 65535 entries, and at most max_bytes written
 * in all (the declared sizes are checked before anything is written, and the inflated bytes while
 * they come). Directories named by entries ("dir/") are made.
 */
#ifndef NMT_ZIP_H
#define NMT_ZIP_H

#include <stddef.h>

/* 1 when the file at path begins as a zip archive does ("PK\3\4"), 0 when it does not or cannot be read. */
int nmt_zip_is_archive(const char *path);
/* Extracts every entry of the archive at path under dir (which must exist). Errors name the archive
 * and the entry. */
int nmt_zip_extract(const char *path, const char *dir, size_t max_bytes);

#endif
