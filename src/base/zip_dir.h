/* zip_dir: a zip archive's files extracted into a directory, and a directory written as a zip archive
 * (Argos Translate packages and NumPy's .npz files are zip files). The format is zip.h's.
 *
 * Extracting streams each entry from the archive file to its file under the directory; besides what
 * zip.h refuses, names that are absolute or climb out of the directory ("..", backslashes) are refused
 * with the entry named. Every size is bounded: at most 65535 entries, and at most max_bytes written in
 * all (the declared sizes are checked before anything is written, and the inflated bytes while they
 * come). Directories named by entries ("dir/") are made.
 *
 * Writing makes every regular file under the directory a stored entry (method 0, no compression: model
 * weights hardly compress) named PREFIX/<its path below the directory>, and every folder an entry
 * "PREFIX/<path>/", in name order, each file's CRC-32 computed in a first pass so that no data
 * descriptors are needed; entries are dated 1980-01-01 00:00, so that the same directory always gives
 * the same bytes. What a plain zip cannot hold is refused before anything is written: a file or an
 * archive of 4 GiB or more (zip64), more than 65535 entries, a name longer than 1 KiB, anything but
 * files and folders (links included). The archive is written whole (beside its path, then renamed), as
 * Python's zipfile reads it.
 */
#ifndef NMT_ZIP_DIR_H
#define NMT_ZIP_DIR_H

#include <stddef.h>

/* Extracts every entry of the archive at path under dir (which must exist). Errors name the archive
 * and the entry. */
int nmt_zip_dir_extract(const char *path, const char *dir, size_t max_bytes);
/* Writes the tree under dir as the archive at path, its entries under prefix (a relative name without
 * "/" at its ends; NULL or "": at the archive's root). Errors name the file. */
int nmt_zip_dir_write(const char *dir, const char *prefix, const char *path);

#endif
