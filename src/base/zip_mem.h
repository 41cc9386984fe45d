/* zip_mem: a zip archive held in memory read into its entries, and entries written back as one (the
 * office documents and e-books that nmt serve translates are zip archives). The format, and what is
 * refused when read, are zip.h's: at most max_bytes inflated in all, the declared sizes checked before
 * anything is inflated and the inflated bytes while they come.
 *
 * Writing puts the entries in their order (an ODF `mimetype` that comes first stays first), each stored
 * or deflated as its `method` says, with the date and time it came with, its CRC-32 and sizes in the
 * local header (no data descriptors), names flagged UTF-8: an archive that Python's zipfile,
 * LibreOffice and Word read. What a plain zip cannot hold (4 GiB, more than 65535 entries) is refused.
 */
#ifndef NMT_ZIP_MEM_H
#define NMT_ZIP_MEM_H

#include <stddef.h>

typedef struct nmt_zip_entry {
    char *name;          /* NUL-terminated */
    unsigned char *data; /* [size] inflated; read ones are followed by a NUL byte (text entries are strings) */
    size_t size;
    int method; /* 0 stored, 8 deflated */
    unsigned dos_time, dos_date;
} nmt_zip_entry;

typedef struct nmt_zip_mem {
    nmt_zip_entry *entries; /* [count] in the archive's order */
    int count;
} nmt_zip_mem;

/* Reads the archive data[0, len) into *out (release with nmt_zip_mem_free, also after a failure).
 * Errors begin with `what` (the archive's name) and name the entry. */
int nmt_zip_mem_read(const void *data, size_t len, size_t max_bytes, const char *what, nmt_zip_mem *out);
/* Writes z's entries as an archive in *out (free it), *len bytes. */
int nmt_zip_mem_write(const nmt_zip_mem *z, unsigned char **out, size_t *len);
/* The entry named `name`, or NULL. */
nmt_zip_entry *nmt_zip_mem_find(const nmt_zip_mem *z, const char *name);
void nmt_zip_mem_free(nmt_zip_mem *z);

#endif
