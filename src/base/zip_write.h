/* zip_write: a directory written as a zip archive (Argos Translate packages are zip files).
 *
 * Every regular file under the directory becomes a stored entry (method 0, no compression: model
 * weights hardly compress) named PREFIX/<its path below the directory>, and every folder an entry
 * "PREFIX/<path>/", in name order, each file's CRC-32 computed in a first pass so that no data
 * descriptors are needed; names are flagged UTF-8 and dated 1980-01-01 00:00, so that the same
 * directory always gives the same bytes. What a plain zip cannot hold is refused before anything is
 * written: a file or an archive of 4 GiB or more (zip64), more than 65535 entries, a name longer than
 * 1 KiB, anything but files and folders (links included). The archive is written whole (beside its
 * path, then renamed), as zip.h's reader and Python's zipfile read it.
 */
#ifndef NMT_ZIP_WRITE_H
#define NMT_ZIP_WRITE_H

/* Writes the tree under dir as the archive at path, its entries under prefix (a relative name without
 * "/" at its ends; NULL or "": at the archive's root). Errors name the file. */
int nmt_zip_write_dir(const char *dir, const char *prefix, const char *path);

#endif
