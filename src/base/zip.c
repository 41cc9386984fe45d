/* zip: zip archives extracted (zip.h). */
#include "base/zip.h"

#include "base/io.h"
#include "base/util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum { END_RECORD = 22, MAX_COMMENT = 65535, CENTRAL_ENTRY = 46, LOCAL_HEADER = 30, CHUNK = 1 << 16 };

static uint32_t u16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t u32(const unsigned char *p) { return u16(p) | u16(p + 2) << 16; }

int nmt_zip_is_archive(const char *path) {
    FILE *fp = fopen(path, "rb");
    unsigned char magic[4] = {0};
    if (!fp) return 0;
    const int read = fread(magic, 1, 4, fp) == 4;
    fclose(fp);
    return read && memcmp(magic, "PK\3\4", 4) == 0;
}

typedef struct archive {
    const char *path;
    FILE *fp;
    size_t size;
} archive;

static int read_at(archive *a, long offset, void *out, size_t n, const char *what) {
    if (offset < 0 || (size_t)offset > a->size || n > a->size - (size_t)offset)
        return nmt_error_set("%s: %s lies outside the archive", a->path, what);
    if (fseek(a->fp, offset, SEEK_SET) != 0 || fread(out, 1, n, a->fp) != n)
        return nmt_error_set("%s: cannot read %s: %s", a->path, what, ferror(a->fp) ? strerror(errno) : "short read");
    return 0;
}

/* A name that stays inside the directory: relative, no "..", no backslash, no NUL. */
static int safe_name(const char *name, size_t len) {
    if (len == 0 || name[0] == '/' || memchr(name, '\\', len) || memchr(name, '\0', len)) return 0;
    for (size_t at = 0; at < len;) {
        const char *slash = memchr(name + at, '/', len - at);
        const size_t end = slash ? (size_t)(slash - name) : len;
        if (end - at == 2 && name[at] == '.' && name[at + 1] == '.') return 0;
        at = end + 1;
    }
    return 1;
}

/* Copies (stored) or inflates (deflated) `compressed` bytes from the archive's position into out,
 * checking the size and CRC the central directory gave. */
static int copy_entry(archive *a, const char *name, int method, size_t compressed, size_t size, uint32_t crc,
                      FILE *out, const char *out_path) {
    unsigned char *in = nmt_malloc(CHUNK), *buf = nmt_malloc(CHUNK);
    z_stream z;
    memset(&z, 0, sizeof z);
    int rc = -1, inflating = 0;
    size_t written = 0;
    uLong sum = crc32(0L, Z_NULL, 0);
    if (!in || !buf) goto done;
    if (method == 8) {
        if (inflateInit2(&z, -MAX_WBITS) != Z_OK) {
            nmt_error_set("%s: %s: zlib cannot start", a->path, name);
            goto done;
        }
        inflating = 1;
    }
    int ended = method == 0;
    for (size_t left = compressed; left > 0 || (inflating && !ended);) {
        const size_t n = left < CHUNK ? left : CHUNK;
        if (n && fread(in, 1, n, a->fp) != n) {
            nmt_error_set("%s: %s: the data is cut short", a->path, name);
            goto done;
        }
        left -= n;
        if (!inflating) {
            written += n;
            sum = crc32(sum, in, (uInt)n);
            if (written > size || nmt_io_write(out, in, n, out_path) < 0) goto too_big_or_failed;
            continue;
        }
        z.next_in = in;
        z.avail_in = (uInt)n;
        do {
            z.next_out = buf;
            z.avail_out = CHUNK;
            const int status = inflate(&z, Z_NO_FLUSH);
            if (status != Z_OK && status != Z_STREAM_END && !(status == Z_BUF_ERROR && n == 0)) {
                nmt_error_set("%s: %s: damaged deflate data (%s)", a->path, name, z.msg ? z.msg : "zlib error");
                goto done;
            }
            const size_t got = CHUNK - z.avail_out;
            written += got;
            sum = crc32(sum, buf, (uInt)got);
            if (written > size || (got && nmt_io_write(out, buf, got, out_path) < 0)) goto too_big_or_failed;
            if (status == Z_STREAM_END) ended = 1;
            if (status == Z_BUF_ERROR && n == 0) {
                nmt_error_set("%s: %s: the deflate data ends early", a->path, name);
                goto done;
            }
        } while (z.avail_out == 0 && !ended);
    }
    if (written != size || sum != crc) {
        nmt_error_set("%s: %s: %s", a->path, name, written != size ? "not the size the directory gives" : "CRC mismatch");
        goto done;
    }
    rc = 0;
    goto done;
too_big_or_failed:
    if (written > size) nmt_error_set("%s: %s: more bytes than the directory gives", a->path, name);
done:
    if (inflating) inflateEnd(&z);
    free(in);
    free(buf);
    return rc;
}

/* Entry `name` (its central record at p) written under dir. */
static int extract_entry(archive *a, const unsigned char *p, const char *name, const char *dir) {
    const int method = (int)u16(p + 10), flags = (int)u16(p + 8);
    const uint32_t crc = u32(p + 16), compressed = u32(p + 20), size = u32(p + 24), local = u32(p + 42);
    if (flags & 1) return nmt_error_set("%s: %s is encrypted", a->path, name);
    if (method != 0 && method != 8)
        return nmt_error_set("%s: %s uses compression method %d (only stored and deflated are read)", a->path, name,
                             method);
    char *path = nmt_path_join(dir, name);
    if (!path) return -1;
    const size_t len = strlen(path);
    if (len && path[len - 1] == '/') {
        int rc = nmt_mkdirs(path);
        free(path);
        return rc;
    }
    char *slash = strrchr(path, '/');
    int rc = -1;
    FILE *out = NULL;
    unsigned char header[LOCAL_HEADER];
    if (slash) {
        *slash = '\0';
        rc = nmt_mkdirs(path);
        *slash = '/';
        if (rc < 0) goto done;
        rc = -1;
    }
    if (read_at(a, (long)local, header, LOCAL_HEADER, name) < 0) goto done;
    if (u32(header) != 0x04034b50) {
        nmt_error_set("%s: %s: no local header where the directory says", a->path, name);
        goto done;
    }
    const long data = (long)local + LOCAL_HEADER + (long)u16(header + 26) + (long)u16(header + 28);
    if (data < 0 || (size_t)data > a->size || compressed > a->size - (size_t)data) {
        nmt_error_set("%s: %s: its data lies outside the archive", a->path, name);
        goto done;
    }
    if (fseek(a->fp, data, SEEK_SET) != 0 || !(out = fopen(path, "wb"))) {
        nmt_error_set("%s: %s", out ? a->path : path, strerror(errno));
        goto done;
    }
    rc = copy_entry(a, name, method, compressed, size, crc, out, path);
    if (fclose(out) != 0 && rc == 0) rc = nmt_error_set("%s: %s", path, strerror(errno));
done:
    free(path);
    return rc;
}

int nmt_zip_extract(const char *path, const char *dir, size_t max_bytes) {
    archive a = {.path = path};
    unsigned char *tail = NULL, *central = NULL;
    int rc = -1;
    if (nmt_open_regular(path, &a.fp, &a.size) < 0) return -1;
    const size_t span = a.size < END_RECORD + MAX_COMMENT ? a.size : END_RECORD + MAX_COMMENT;
    if (span < END_RECORD || !(tail = nmt_malloc(span))) {
        if (span < END_RECORD) nmt_error_set("%s: not a zip archive (too short)", path);
        goto done;
    }
    if (read_at(&a, (long)(a.size - span), tail, span, "the end record") < 0) goto done;
    long end = -1;
    for (long i = (long)span - END_RECORD; i >= 0 && end < 0; i--)
        if (u32(tail + i) == 0x06054b50) end = i;
    if (end < 0) {
        nmt_error_set("%s: not a zip archive (no end of central directory)", path);
        goto done;
    }
    const unsigned char *e = tail + end;
    const uint32_t entries = u16(e + 10), bytes = u32(e + 12), offset = u32(e + 16);
    if (u16(e + 8) == 0xFFFF || bytes == 0xFFFFFFFFu || offset == 0xFFFFFFFFu) {
        nmt_error_set("%s: a zip64 archive, which nmt does not read", path);
        goto done;
    }
    /* The directory must lie in the file before the end record: a size the file cannot hold is
     * refused before anything that large is allocated. */
    if ((size_t)offset + bytes > a.size - span + (size_t)end) {
        nmt_error_set("%s: a central directory of %u bytes at byte %u, past the end record", path, bytes, offset);
        goto done;
    }
    if (!(central = nmt_malloc(bytes ? bytes : 1)) || read_at(&a, (long)offset, central, bytes, "the central directory") < 0)
        goto done;
    size_t at = 0, total = 0;
    char name[1024];
    for (uint32_t i = 0; i < entries; i++) {
        if (at + CENTRAL_ENTRY > bytes || u32(central + at) != 0x02014b50) {
            nmt_error_set("%s: central directory entry %u is damaged", path, i + 1);
            goto done;
        }
        const unsigned char *p = central + at;
        const size_t name_len = u16(p + 28), next = at + CENTRAL_ENTRY + name_len + u16(p + 30) + u16(p + 32);
        if (next > bytes || name_len >= sizeof name || !safe_name((const char *)p + CENTRAL_ENTRY, name_len)) {
            nmt_error_set("%s: central directory entry %u has a name that is too long, damaged or leaves the "
                          "directory", path, i + 1);
            goto done;
        }
        memcpy(name, p + CENTRAL_ENTRY, name_len);
        name[name_len] = '\0';
        total += u32(p + 24);
        if (u32(p + 24) == 0xFFFFFFFFu || total > max_bytes) {
            nmt_error_set("%s: %s: the archive holds more than %zu bytes", path, name, max_bytes);
            goto done;
        }
        if (extract_entry(&a, p, name, dir) < 0) goto done;
        at = next;
    }
    rc = 0;
done:
    free(tail);
    free(central);
    fclose(a.fp);
    return rc;
}
