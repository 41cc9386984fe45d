/* zip: the zip format's records read and written, entries' data checked (zip.h). */
#include "base/zip.h"

#include "base/io.h"
#include "base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum {
    LOCAL = NMT_ZIP_LOCAL, CENTRAL = NMT_ZIP_CENTRAL, END = NMT_ZIP_END, LOCATOR = 20, MAX_COMMENT = 65535,
    LOCAL_SIG = 0x04034b50, CENTRAL_SIG = 0x02014b50, END_SIG = 0x06054b50, ZIP64_LOCATOR_SIG = 0x07064b50,
    UTF8_NAMES = 1 << 11
};
static const uint64_t zip32_limit = 0xFFFFFFFFu; /* a plain zip's 32-bit sizes and offsets stay below it */

static uint32_t get16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t get32(const unsigned char *p) { return get16(p) | get16(p + 2) << 16; }
static void put16(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static void put32(unsigned char *p, uint32_t v) {
    put16(p, v & 0xFFFFu);
    put16(p + 2, v >> 16);
}

int nmt_zip_is_archive(const char *path) {
    FILE *fp = fopen(path, "rb");
    unsigned char magic[4] = {0};
    if (!fp) return 0;
    const int read = fread(magic, 1, 4, fp) == 4;
    fclose(fp);
    return read && get32(magic) == LOCAL_SIG;
}

int nmt_zip_safe_name(const char *name) {
    if (!*name || name[0] == '/' || strchr(name, '\\')) return 0;
    for (const char *part = name; part;) {
        const char *slash = strchr(part, '/');
        if ((slash ? (size_t)(slash - part) : strlen(part)) == 2 && part[0] == '.' && part[1] == '.') return 0;
        part = slash ? slash + 1 : NULL;
    }
    return 1;
}

/* n bytes of the archive from offset: in memory where they lie, else read into buf. NULL: refused. */
static const unsigned char *source_at(const nmt_zip_source *s, uint64_t offset, size_t n, unsigned char *buf,
                                      const char *what) {
    if (offset > s->size || n > s->size - offset) {
        nmt_error_set("%s: %s lies outside the archive", s->what, what);
        return NULL;
    }
    if (s->mem) return s->mem + offset;
    if (fseek(s->fp, (long)offset, SEEK_SET) != 0 || fread(buf, 1, n, s->fp) != n) {
        nmt_error_set("%s: cannot read %s: %s", s->what, what, ferror(s->fp) ? strerror(errno) : "short read");
        return NULL;
    }
    return buf;
}

int nmt_zip_open(nmt_zip_reader *r, nmt_zip_source src, size_t max_bytes) {
    memset(r, 0, sizeof *r);
    r->src = src;
    r->max_bytes = max_bytes;
    if (src.size < END) return nmt_error_set("%s: not a zip archive (too short)", src.what);
    const size_t span = src.size < END + MAX_COMMENT ? src.size : END + MAX_COMMENT, start = src.size - span;
    /* r->in holds a chunk of data, or the archive's tail where the end record is looked for. */
    if (!(r->in = nmt_malloc(END + MAX_COMMENT)) || !(r->out = nmt_malloc(NMT_ZIP_CHUNK))) return -1;
    const unsigned char *t = source_at(&r->src, start, span, r->in, "the end record");
    if (!t) return -1;
    long end = -1;
    for (long i = (long)span - END; i >= 0 && end < 0; i--)
        if (get32(t + i) == END_SIG) end = i;
    if (end < 0) return nmt_error_set("%s: not a zip archive (no end of central directory)", src.what);
    const unsigned char *e = t + end;
    const uint32_t bytes = get32(e + 12), offset = get32(e + 16);
    r->count = get16(e + 10);
    if ((end >= LOCATOR && get32(e - LOCATOR) == ZIP64_LOCATOR_SIG) || get16(e + 8) == 0xFFFF ||
        bytes == 0xFFFFFFFFu || offset == 0xFFFFFFFFu)
        return nmt_error_set("%s: a zip64 archive, which nmt does not read", src.what);
    if (get16(e + 4) != 0 || get16(e + 6) != 0 || get16(e + 8) != r->count)
        return nmt_error_set("%s: an archive on several disks, which nmt does not read", src.what);
    /* The directory must lie before the end record: a size the archive cannot hold is refused before
     * anything that large is allocated. */
    if ((uint64_t)offset + bytes > (uint64_t)start + (uint64_t)end)
        return nmt_error_set("%s: a central directory of %u bytes at byte %u, past the end record", src.what, bytes,
                             offset);
    const unsigned char *dir;
    if (!(r->dir = nmt_malloc(bytes ? bytes : 1)) || !(dir = source_at(&r->src, offset, bytes, r->dir, "the central directory")))
        return -1;
    if (dir != r->dir) memcpy(r->dir, dir, bytes);
    r->dir_bytes = bytes;
    return 0;
}

int nmt_zip_next(nmt_zip_reader *r, nmt_zip_record *e) {
    const char *what = r->src.what;
    if (r->index == r->count) return 0;
    const unsigned char *p = r->dir + r->at;
    const unsigned i = ++r->index;
    if (CENTRAL > r->dir_bytes - r->at || get32(p) != CENTRAL_SIG)
        return nmt_error_set("%s: central directory entry %u is damaged", what, i);
    const size_t name_len = get16(p + 28), next = r->at + CENTRAL + name_len + get16(p + 30) + get16(p + 32);
    if (next > r->dir_bytes || name_len > NMT_ZIP_MAX_NAME)
        return nmt_error_set("%s: central directory entry %u has a name that is too long or damaged", what, i);
    memcpy(r->name, p + CENTRAL, name_len);
    r->name[name_len] = '\0';
    if (strlen(r->name) != name_len) return nmt_error_set("%s: an entry's name holds a NUL byte", what);
    r->at = next;
    *e = (nmt_zip_record){.name = r->name, .flags = get16(p + 8), .method = get16(p + 10), .dos_time = get16(p + 12),
                          .dos_date = get16(p + 14), .crc = get32(p + 16), .compressed = get32(p + 20),
                          .size = get32(p + 24), .external = get32(p + 38), .offset = get32(p + 42)};
    if (e->flags & 1) return nmt_error_set("%s: %s is encrypted", what, e->name);
    if (e->method != 0 && e->method != 8)
        return nmt_error_set("%s: %s uses compression method %u (only stored and deflated are read)", what, e->name,
                             e->method);
    if (e->size == 0xFFFFFFFFu || e->compressed == 0xFFFFFFFFu || e->offset == 0xFFFFFFFFu)
        return nmt_error_set("%s: %s: a zip64 entry, which nmt does not read", what, e->name);
    if ((r->total += e->size) > r->max_bytes)
        return nmt_error_set("%s: %s: the archive holds more than %zu bytes", what, e->name, r->max_bytes);
    return 1;
}

/* Where e's data begins, after a local header that carries its name. */
static int data_offset(nmt_zip_reader *r, const nmt_zip_record *e, uint64_t *data) {
    const char *what = r->src.what;
    const unsigned char *h = e->offset <= r->src.size && r->src.size - e->offset >= LOCAL
                                 ? source_at(&r->src, e->offset, LOCAL, r->in, e->name) : NULL;
    if (!h || get32(h) != LOCAL_SIG)
        return nmt_error_set("%s: %s: no local header where the directory says", what, e->name);
    const size_t name_len = get16(h + 26), extra = get16(h + 28);
    const unsigned char *name = source_at(&r->src, (uint64_t)e->offset + LOCAL, name_len, r->in, e->name);
    if (!name) return -1;
    if (name_len != strlen(e->name) || memcmp(name, e->name, name_len) != 0)
        return nmt_error_set("%s: %s: its local header gives another name", what, e->name);
    *data = (uint64_t)e->offset + LOCAL + name_len + extra;
    if (*data > r->src.size || e->compressed > r->src.size - *data)
        return nmt_error_set("%s: %s: its data lies outside the archive", what, e->name);
    return 0;
}

/* n more bytes of e's data (*written so far, *crc of them) to out, never more than e->size in all. */
static int emit(const nmt_zip_record *e, const unsigned char *data, size_t n, size_t *written, uLong *crc,
                nmt_zip_sink *out, const char *what) {
    if (n > e->size - *written) return nmt_error_set("%s: %s: more bytes than the directory gives", what, e->name);
    *written += n;
    *crc = crc32(*crc, data, (uInt)n);
    return nmt_zip_sink_write(out, data, n);
}

int nmt_zip_read(nmt_zip_reader *r, const nmt_zip_record *e, nmt_zip_sink *out) {
    const char *what = r->src.what;
    uint64_t at = 0;
    if (data_offset(r, e, &at) < 0) return -1;
    if (e->method == 0 && e->compressed != e->size)
        return nmt_error_set("%s: %s: stored with two different sizes", what, e->name);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (e->method == 8 && inflateInit2(&z, -MAX_WBITS) != Z_OK)
        return nmt_error_set("%s: %s: zlib cannot start", what, e->name);
    uLong crc = crc32(0L, Z_NULL, 0);
    size_t written = 0, left = e->compressed;
    int rc = 0, ended = 0;
    while (rc == 0 && !ended) {
        /* From memory at once; from a file a chunk at a time. */
        const size_t n = r->src.mem || left < NMT_ZIP_CHUNK ? left : NMT_ZIP_CHUNK;
        const unsigned char *in = n ? source_at(&r->src, at, n, r->in, e->name) : r->in;
        if (!in) {
            rc = -1;
            break;
        }
        at += n;
        left -= n;
        if (e->method == 0) {
            rc = emit(e, in, n, &written, &crc, out, what);
            ended = left == 0;
            continue;
        }
        z.next_in = (unsigned char *)(uintptr_t)in;
        z.avail_in = (uInt)n;
        do {
            z.next_out = r->out;
            z.avail_out = NMT_ZIP_CHUNK;
            const int status = inflate(&z, Z_NO_FLUSH);
            if (status == Z_BUF_ERROR && n == 0)
                rc = nmt_error_set("%s: %s: the deflate data ends early", what, e->name);
            else if (status != Z_OK && status != Z_STREAM_END)
                rc = nmt_error_set("%s: %s: damaged deflate data (%s)", what, e->name, z.msg ? z.msg : "zlib error");
            else rc = emit(e, r->out, NMT_ZIP_CHUNK - z.avail_out, &written, &crc, out, what);
            ended = status == Z_STREAM_END;
        } while (rc == 0 && !ended && z.avail_out == 0);
    }
    if (e->method == 8) inflateEnd(&z);
    if (rc == 0 && written != e->size)
        rc = nmt_error_set("%s: %s: not the size the directory gives", what, e->name);
    if (rc == 0 && (uint32_t)crc != e->crc) rc = nmt_error_set("%s: %s: CRC mismatch", what, e->name);
    return rc;
}

void nmt_zip_close(nmt_zip_reader *r) {
    free(r->dir);
    free(r->in);
    free(r->out);
    r->dir = r->in = r->out = NULL;
}

int nmt_zip_sink_write(nmt_zip_sink *s, const void *data, size_t n) {
    if (n == 0) return 0;
    if (s->fp ? nmt_io_write(s->fp, data, n, s->what) < 0 : nmt_strbuf_append(s->buf, data, n) < 0) return -1;
    s->at += n;
    return 0;
}

/* The fields a local header (from its byte 4) and a central entry (from its byte 6) share: version
 * needed, flags, method, time, date, CRC, sizes, name length, extra length. */
static void common_fields(unsigned char *p, const nmt_zip_record *e) {
    const size_t len = strlen(e->name);
    put16(p, e->method == 8 || (len && e->name[len - 1] == '/') ? 20 : 10); /* 2.0: deflate, folders */
    put16(p + 2, UTF8_NAMES);
    put16(p + 4, e->method);
    put16(p + 6, e->dos_time);
    put16(p + 8, e->dos_date);
    put32(p + 10, e->crc);
    put32(p + 14, e->compressed);
    put32(p + 18, e->size);
    put16(p + 22, (uint32_t)len);
    put16(p + 24, 0);
}

/* A record (header bytes h[n]) and its name, written whole while the archive stays below 4 GiB with
 * `then` bytes more. */
static int put_record(nmt_zip_sink *s, const unsigned char *h, size_t n, const char *name, uint64_t then) {
    const size_t len = strlen(name);
    if (len > NMT_ZIP_MAX_NAME) return nmt_error_set("%s: %.40s...: a name of more than %d bytes", s->what, name,
                                                     NMT_ZIP_MAX_NAME);
    if (s->at + n + len + then >= zip32_limit)
        return nmt_error_set("%s: %s: the archive would reach 4 GiB (zip64)", s->what, name);
    return nmt_zip_sink_write(s, h, n) < 0 || nmt_zip_sink_write(s, name, len) < 0 ? -1 : 0;
}

int nmt_zip_put_local(nmt_zip_sink *s, nmt_zip_record *e) {
    unsigned char h[LOCAL];
    put32(h, LOCAL_SIG);
    common_fields(h + 4, e);
    e->offset = (uint32_t)s->at;
    return put_record(s, h, sizeof h, e->name, e->compressed);
}

int nmt_zip_put_entry(nmt_zip_sink *s, nmt_zip_record *e, const unsigned char *data, size_t size) {
    if (size >= zip32_limit) return nmt_error_set("%s: %s: the archive would reach 4 GiB (zip64)", s->what, e->name);
    e->size = e->compressed = (uint32_t)size;
    e->crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), data, (uInt)size);
    if (e->method != 8) return nmt_zip_put_local(s, e) < 0 || nmt_zip_sink_write(s, data, size) < 0 ? -1 : 0;
    /* zlib's stream is a 2-byte header, the raw deflate data a zip holds, and a 4-byte Adler-32. */
    uLongf n = compressBound((uLong)size);
    unsigned char *packed = nmt_malloc(n);
    if (!packed) return -1;
    int rc = compress2(packed, &n, data, (uLong)size, Z_DEFAULT_COMPRESSION) == Z_OK
                 ? 0 : nmt_error_set("%s: %s: zlib cannot deflate", s->what, e->name);
    if (rc == 0) {
        e->compressed = (uint32_t)(n - 6);
        rc = nmt_zip_put_local(s, e) < 0 || nmt_zip_sink_write(s, packed + 2, n - 6) < 0 ? -1 : 0;
    }
    free(packed);
    return rc;
}

int nmt_zip_put_central(nmt_zip_sink *s, const nmt_zip_record *e) {
    unsigned char h[CENTRAL];
    put32(h, CENTRAL_SIG);
    put16(h + 4, e->external ? 3 << 8 | 20 : 20); /* made by zip 2.0, on Unix where a Unix mode is given */
    common_fields(h + 6, e);
    put16(h + 32, 0); /* no comment */
    put16(h + 34, 0); /* disk 0 */
    put16(h + 36, 0); /* internal attributes */
    put32(h + 38, e->external);
    put32(h + 42, e->offset);
    return put_record(s, h, sizeof h, e->name, END);
}

int nmt_zip_put_end(nmt_zip_sink *s, unsigned count, uint64_t central) {
    if (count > NMT_ZIP_MAX_ENTRIES) return nmt_error_set("%s: more than %d entries", s->what, NMT_ZIP_MAX_ENTRIES);
    unsigned char h[END] = {0};
    put32(h, END_SIG);
    put16(h + 8, count);
    put16(h + 10, count);
    put32(h + 12, (uint32_t)(s->at - central));
    put32(h + 16, (uint32_t)central);
    return nmt_zip_sink_write(s, h, sizeof h);
}
