/* input: "-" as stdin and transparent gzip decompression behind a stdio FILE (fopencookie). */
#include "base/input.h"

#include "base/io.h"
#include "base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

static ssize_t gz_read(void *cookie, char *buf, size_t size) {
    unsigned chunk = size > (1u << 30) ? 1u << 30 : (unsigned)size;
    int n = gzread((gzFile)cookie, buf, chunk);
    if (n < 0) {
        errno = EIO; /* damaged or truncated compressed data */
        return -1;
    }
    return n;
}

static int gz_close(void *cookie) { return gzclose_r((gzFile)cookie) == Z_OK ? 0 : EOF; }

FILE *nmt_input_open(const char *path) {
    if (strcmp(path, "-") == 0) return stdin;
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    /* Only a regular file is looked at for gzip's magic: the bytes of a pipe cannot be put back. */
    struct stat st;
    if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) return fp;
    unsigned char magic[2];
    size_t got = fread(magic, 1, 2, fp);
    if (got < 2 || magic[0] != 0x1f || magic[1] != 0x8b) {
        if (fseek(fp, 0, SEEK_SET) == 0) return fp;
        nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot rewind: %s", path, strerror(errno));
        fclose(fp);
        return NULL;
    }
    fclose(fp);
    gzFile gz = gzopen(path, "rb");
    if (!gz) {
        nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot open: %s", path, errno ? strerror(errno) : "out of memory");
        return NULL;
    }
    gzbuffer(gz, 1 << 17);
    cookie_io_functions_t io = {.read = gz_read, .close = gz_close};
    fp = fopencookie(gz, "rb", io);
    if (!fp) {
        gzclose_r(gz);
        nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot open: %s", path, strerror(errno));
    }
    return fp;
}

int nmt_input_close(FILE *fp, const char *path) {
    if (!fp || fp == stdin) return 0;
    int failed = ferror(fp);
    if (fclose(fp) != 0 || failed) return nmt_error_set("%s: read failed (damaged or truncated compressed data?)", path);
    return 0;
}

int nmt_input_read_all(const char *path, char **data, size_t *size) {
    *data = NULL;
    *size = 0;
    FILE *fp = nmt_input_open(path);
    if (!fp) return -1;
    size_t cap = 1 << 16, len = 0;
    char *buf = nmt_malloc(cap);
    while (buf && !ferror(fp) && !feof(fp)) {
        len += fread(buf + len, 1, cap - len - 1, fp);
        if (len + 1 < cap) continue;
        if (len >= NMT_READ_MAX) { /* a decompression bomb, or a file far beyond any corpus */
            nmt_error_set("%s: more than %zu bytes, larger than a text nmt reads whole can be", path, NMT_READ_MAX);
            free(buf);
            buf = NULL;
            break;
        }
        char *bigger = nmt_realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
        }
        buf = bigger;
        cap *= 2;
    }
    int failed = nmt_input_close(fp, path) < 0 || !buf;
    if (failed) {
        free(buf);
        return -1;
    }
    buf[len] = '\0';
    *data = buf;
    *size = len;
    return 0;
}
