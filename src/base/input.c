/* input: "-" as stdin and transparent gzip decompression behind a stdio FILE (fopencookie), for
 * files and pipes alike; other compressed formats and directories named. */
#include "base/input.h"

#include "base/io.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
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

/* The compressed formats told by their first bytes: gzip is read, the others are named and refused. */
static const struct {
    const char *name, *tool;
    unsigned char magic[6];
    size_t len;
} formats[] = {
    {"gzip", "", {0x1f, 0x8b}, 2},
    {"bzip2", "bzcat", {'B', 'Z', 'h'}, 3},
    {"xz", "xzcat", {0xfd, '7', 'z', 'X', 'Z', 0}, 6},
    {"zstd", "zstdcat", {0x28, 0xb5, 0x2f, 0xfd}, 4},
};
enum { NUM_FORMATS = sizeof formats / sizeof formats[0], MAGIC_MAX = 6, GZIP = 0 };

/* The format the n bytes at head begin; -1 for none; -2 while they are only the start of a magic. */
static int format_of(const unsigned char *head, size_t n) {
    int partial = 0;
    for (int f = 0; f < NUM_FORMATS; f++) {
        const size_t len = formats[f].len;
        if (memcmp(head, formats[f].magic, n < len ? n : len) != 0) continue;
        if (n >= len) return f;
        partial = 1;
    }
    return partial ? -2 : -1;
}

static int refuse_format(const char *path, int f) {
    return nmt_error_set("%s: %s-compressed data, which nmt does not read (only gzip): decompress it first, e.g. "
                         "`%s FILE | nmt ...`", path, formats[f].name, formats[f].tool);
}

/* The format of the data waiting in pipe fd, looked at without taking it (tee(2) copies it to a pipe
 * of our own): as format_of, -1 for text or what is no pipe (a terminal, a socket), -3 on an error. */
static int pipe_format(int fd, const char *path) {
    struct stat st;
    int peek[2];
    if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode) || pipe(peek) != 0) return -1;
    ssize_t n;
    while ((n = tee(fd, peek[1], MAGIC_MAX, 0)) < 0 && errno == EINTR) {
    }
    unsigned char head[MAGIC_MAX];
    const ssize_t got = n > 0 ? read(peek[0], head, (size_t)n) : 0;
    close(peek[0]);
    close(peek[1]);
    if (n < 0 && errno != EINVAL) return nmt_error_set("%s: read failed: %s", path, strerror(errno)), -3;
    return got > 0 ? format_of(head, (size_t)got) : -1;
}

/* gzip data on a pipe (or stdin): inflated through a buffer of its own, members one after another. */
typedef struct stream {
    int fd, own_fd, eof, member_open;
    z_stream z;
    unsigned char buf[1 << 16];
} stream;

static ssize_t stream_read(void *cookie, char *out, size_t size) {
    stream *s = cookie;
    s->z.next_out = (unsigned char *)out;
    s->z.avail_out = size > (1u << 30) ? 1u << 30 : (unsigned)size;
    const unsigned want = s->z.avail_out;
    while (s->z.avail_out == want) {
        if (s->z.avail_in == 0 && !s->eof) {
            ssize_t n = read(s->fd, s->buf, sizeof s->buf);
            if (n < 0) return -1;
            s->eof = n == 0;
            s->z.next_in = s->buf;
            s->z.avail_in = (unsigned)n;
        }
        if (s->z.avail_in == 0) break; /* the end of the input */
        s->member_open = 1;
        int rc = inflate(&s->z, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) {
            s->member_open = 0;
            if (inflateReset(&s->z) != Z_OK) rc = Z_DATA_ERROR;
        }
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            errno = EIO; /* damaged compressed data */
            return -1;
        }
    }
    if (s->z.avail_out == want && s->member_open) {
        errno = EIO; /* truncated compressed data */
        return -1;
    }
    return (ssize_t)(want - s->z.avail_out);
}

static int stream_close(void *cookie) {
    stream *s = cookie;
    inflateEnd(&s->z);
    int rc = s->own_fd && close(s->fd) != 0 ? EOF : 0;
    free(s);
    return rc;
}

/* fp (a pipe's; stdin not closed) as it is, or behind a stream inflating it when it holds gzip data;
 * NULL with the error set when it holds another compressor's. */
static FILE *pipe_open(FILE *fp, const char *path) {
    const int f = pipe_format(fileno(fp), path);
    if (f == -3 || f > GZIP) {
        if (f > GZIP) refuse_format(path, f);
        if (fp != stdin) fclose(fp);
        return NULL;
    }
    if (f != GZIP) return fp;
    FILE *inflated = NULL;
    stream *s = nmt_calloc(1, sizeof *s);
    if (s) {
        s->own_fd = fp != stdin;
        s->fd = s->own_fd ? dup(fileno(fp)) : fileno(fp);
        if (s->fd < 0 || inflateInit2(&s->z, 16 + MAX_WBITS) != Z_OK) {
            nmt_error_set("%s: cannot open: %s", path, s->fd < 0 ? strerror(errno) : "out of memory");
            if (s->own_fd && s->fd >= 0) close(s->fd);
            free(s);
        } else {
            cookie_io_functions_t io = {.read = stream_read, .close = stream_close};
            if (!(inflated = fopencookie(s, "rb", io))) {
                nmt_error_set("%s: cannot open: %s", path, strerror(errno));
                stream_close(s);
            }
        }
    }
    if (fp != stdin) fclose(fp);
    return inflated;
}

FILE *nmt_input_open(const char *path) {
    if (strcmp(path, "-") == 0) return pipe_open(stdin, "<stdin>");
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(fp), &st) != 0 || S_ISDIR(st.st_mode)) {
        nmt_error_set("%s: %s", path, S_ISDIR(st.st_mode) ? "a directory, not a text file to read" : strerror(errno));
        fclose(fp);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) return pipe_open(fp, path); /* a FIFO, a device: its bytes cannot be put back */
    unsigned char magic[MAGIC_MAX];
    size_t got = fread(magic, 1, MAGIC_MAX, fp);
    const int f = format_of(magic, got);
    if (f > GZIP) {
        refuse_format(path, f);
        fclose(fp);
        return NULL;
    }
    if (f != GZIP) {
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
