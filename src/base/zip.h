/* zip: the zip format in one place. Its three records (local header, central directory entry, end of
 * central directory) are read from a file or from memory and written to a file or to memory, and an
 * entry's data is checked while it is read. zip_dir (a directory extracted from or written as an
 * archive) and zip_mem (an archive read and rewritten in memory) use it.
 *
 * Reading goes through the central directory: the end record is found in the archive's last 64 KiB +
 * 22 bytes, and the directory must lie before it. Each entry's local header, where the directory says,
 * must carry the entry's name; its data follows. Entries are stored (method 0) or deflated (8, zlib),
 * and checked against the CRC-32 and the size the directory gives while they are read (never more than
 * it gives is inflated). Refused, with the archive (and the entry) named: other methods, encryption,
 * zip64 archives and entries, archives on several disks, names over 1023 bytes or holding a NUL byte,
 * more than max_bytes declared in all, records cut short or lying outside the archive. Where names
 * become paths, nmt_zip_safe_name tells those that stay inside a directory.
 *
 * Writing puts each entry's local header (its CRC-32 and sizes in it: no data descriptors, names
 * flagged UTF-8) before its data, then the central directory and the end record. What a zip without
 * zip64 cannot hold is refused: an archive of 4 GiB, more than 65535 entries, names over 1023 bytes.
 */
#ifndef NMT_ZIP_H
#define NMT_ZIP_H

#include "base/strbuf.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { NMT_ZIP_MAX_ENTRIES = 65535, NMT_ZIP_MAX_NAME = 1023, NMT_ZIP_CHUNK = 1 << 16 };
/* The records' sizes before their names: local header, central directory entry, end record. */
enum { NMT_ZIP_LOCAL = 30, NMT_ZIP_CENTRAL = 46, NMT_ZIP_END = 22 };

/* The archive's bytes: a file (fp) or memory (mem), size bytes in all; `what` names it in errors. */
typedef struct nmt_zip_source {
    const char *what;
    FILE *fp;
    const unsigned char *mem;
    size_t size;
} nmt_zip_source;

/* Where bytes go: a file (fp, named `what` in errors) or a growable buffer (buf); `at` counts them. */
typedef struct nmt_zip_sink {
    const char *what;
    FILE *fp;
    nmt_strbuf *buf;
    uint64_t at;
} nmt_zip_sink;

/* One entry, as its central directory entry gives it. */
typedef struct nmt_zip_record {
    const char *name;      /* NUL-terminated; a reader's lasts until its next entry */
    unsigned method;       /* 0 stored, 8 deflated */
    unsigned flags;        /* read only: bit 0, encrypted */
    unsigned dos_time, dos_date;
    uint32_t crc, compressed, size;
    uint32_t external;     /* a Unix mode << 16 (| 0x10 for a folder), or 0 */
    uint32_t offset;       /* of the local header */
} nmt_zip_record;

/* An archive being read: its central directory, read whole, and buffers for the data. */
typedef struct nmt_zip_reader {
    nmt_zip_source src;
    size_t max_bytes, total; /* declared bytes allowed in all, and met so far */
    unsigned count, index;   /* entries in all, and read so far */
    unsigned char *dir;      /* the central directory, dir_bytes long */
    size_t dir_bytes, at;
    unsigned char *in, *out; /* [NMT_ZIP_CHUNK] each */
    char name[NMT_ZIP_MAX_NAME + 1];
} nmt_zip_reader;

/* 1 when the file at path begins as a zip archive does ("PK\3\4"), 0 when it does not or cannot be read. */
int nmt_zip_is_archive(const char *path);
/* 1 when name stays inside the directory it is extracted to: relative, without a ".." part, a
 * backslash or an empty name. */
int nmt_zip_safe_name(const char *name);

/* Opens the archive src for reading (close r with nmt_zip_close, also after a failure). */
int nmt_zip_open(nmt_zip_reader *r, nmt_zip_source src, size_t max_bytes);
/* The next entry in *e: 1; 0 after the last; -1 with the error set. */
int nmt_zip_next(nmt_zip_reader *r, nmt_zip_record *e);
/* Entry e's data, inflated and checked, written to out. */
int nmt_zip_read(nmt_zip_reader *r, const nmt_zip_record *e, nmt_zip_sink *out);
void nmt_zip_close(nmt_zip_reader *r);

int nmt_zip_sink_write(nmt_zip_sink *s, const void *data, size_t n);
/* e's local header (e->crc, compressed and size set), its offset kept in e->offset; its data follows. */
int nmt_zip_put_local(nmt_zip_sink *s, nmt_zip_record *e);
/* e's local header and data[0, size), deflated when e->method is 8 (e's CRC, sizes and offset set). */
int nmt_zip_put_entry(nmt_zip_sink *s, nmt_zip_record *e, const unsigned char *data, size_t size);
/* e's central directory entry. */
int nmt_zip_put_central(nmt_zip_sink *s, const nmt_zip_record *e);
/* The end record of the count central entries written from byte `central` on. */
int nmt_zip_put_end(nmt_zip_sink *s, unsigned count, uint64_t central);

#endif
