/* io: atomic writes (temp + fsync + rename), fault injection for writes and fsyncs, line reading. */
#include "base/io.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Countdowns to the failing call: 0 = off, -1 = not yet read from NMT_FAULT. */
static long write_countdown = -1, fsync_countdown = -1;

static void fault_read_env(void) {
    if (write_countdown >= 0) return;
    write_countdown = fsync_countdown = 0;
    const char *env = getenv("NMT_FAULT");
    if (!env) return;
    long n;
    if (sscanf(env, "write:%ld", &n) == 1 && n > 0) write_countdown = n;
    if (sscanf(env, "fsync:%ld", &n) == 1 && n > 0) fsync_countdown = n;
}

void nmt_io_fault_set(const char *kind, long n) {
    fault_read_env();
    if (n < 0) n = 0;
    if (strcmp(kind, "write") == 0) write_countdown = n;
    else if (strcmp(kind, "fsync") == 0) fsync_countdown = n;
}

static int fault_hit(long *countdown) {
    fault_read_env();
    return *countdown > 0 && --*countdown == 0;
}

int nmt_io_write(FILE *fp, const void *data, size_t size, const char *name) {
    if (fault_hit(&write_countdown)) {
        errno = ENOSPC;
        return nmt_error_set("%s: write failed: %s (injected fault)", name, strerror(errno));
    }
    if (size && fwrite(data, 1, size, fp) != size)
        return nmt_error_set("%s: write failed: %s", name, strerror(errno));
    return 0;
}

int nmt_io_sync(FILE *fp, const char *name) {
    if (fflush(fp) != 0) return nmt_error_set("%s: write failed: %s", name, strerror(errno));
    if (fault_hit(&fsync_countdown)) return nmt_error_set("%s: fsync failed: %s (injected fault)", name, strerror(EIO));
    if (fsync(fileno(fp)) != 0 && errno != EINVAL && errno != EROFS)
        return nmt_error_set("%s: fsync failed: %s", name, strerror(errno));
    return 0;
}

int nmt_atomic_open(nmt_atomic_file *f, const char *path) {
    memset(f, 0, sizeof *f);
    size_t n = strlen(path) + 32;
    f->path = nmt_strdup(path);
    f->tmp_path = nmt_malloc(n);
    if (!f->path || !f->tmp_path) goto fail;
    snprintf(f->tmp_path, n, "%s.tmp.%ld", path, (long)getpid());
    f->fp = fopen(f->tmp_path, "wb");
    if (!f->fp) {
        nmt_error_set("%s: cannot create: %s", f->tmp_path, strerror(errno));
        goto fail;
    }
    return 0;
fail:
    free(f->path);
    free(f->tmp_path);
    memset(f, 0, sizeof *f);
    return -1;
}

static void sync_parent_dir(const char *path) {
    char *copy = nmt_strdup(path);
    if (!copy) return;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(copy);
}

int nmt_atomic_commit(nmt_atomic_file *f) {
    int rc = nmt_io_sync(f->fp, f->tmp_path);
    if (fclose(f->fp) != 0 && rc == 0) rc = nmt_error_set("%s: close failed: %s", f->tmp_path, strerror(errno));
    f->fp = NULL;
    if (rc == 0 && rename(f->tmp_path, f->path) != 0)
        rc = nmt_error_set("%s: cannot rename to %s: %s", f->tmp_path, f->path, strerror(errno));
    if (rc == 0) sync_parent_dir(f->path);
    else unlink(f->tmp_path);
    free(f->path);
    free(f->tmp_path);
    memset(f, 0, sizeof *f);
    return rc;
}

void nmt_atomic_abort(nmt_atomic_file *f) {
    if (f->fp) fclose(f->fp);
    if (f->tmp_path) unlink(f->tmp_path);
    free(f->path);
    free(f->tmp_path);
    memset(f, 0, sizeof *f);
}

int nmt_atomic_write(const char *path, const void *data, size_t size) {
    nmt_atomic_file f;
    if (nmt_atomic_open(&f, path) < 0) return -1;
    if (nmt_io_write(f.fp, data, size, path) < 0) {
        nmt_atomic_abort(&f);
        return -1;
    }
    return nmt_atomic_commit(&f);
}

int nmt_read_stream(FILE *fp, const char *name, char **data, size_t *size) {
    *data = NULL;
    *size = 0;
    size_t cap = 1 << 16, len = 0;
    char *buf = nmt_malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len - 1, fp);
        if (ferror(fp)) {
            nmt_error_set("%s: read failed: %s", name, strerror(errno));
            break;
        }
        if (feof(fp)) {
            buf[len] = '\0';
            *data = buf;
            *size = len;
            return 0;
        }
        char *bigger = nmt_realloc(buf, cap * 2);
        if (!bigger) break;
        buf = bigger;
        cap *= 2;
    }
    free(buf);
    return -1;
}

int nmt_read_file(const char *path, char **data, size_t *size) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return nmt_error_set("%s: cannot open: %s", path, strerror(errno));
    int rc = nmt_read_stream(fp, path, data, size);
    fclose(fp);
    return rc;
}

int nmt_copy_file(const char *from, const char *to) {
    char *data;
    size_t size;
    if (nmt_read_file(from, &data, &size) < 0) return -1;
    int rc = nmt_atomic_write(to, data, size);
    free(data);
    return rc;
}

int nmt_mkdirs(const char *path) {
    char *copy = nmt_strdup(path);
    if (!copy) return -1;
    for (char *p = copy + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(copy, 0777) != 0 && errno != EEXIST) {
            nmt_error_set("%s: cannot create directory: %s", copy, strerror(errno));
            free(copy);
            return -1;
        }
        *p = saved;
        if (saved == '\0') break;
    }
    free(copy);
    return 0;
}

char *nmt_path_join(const char *dir, const char *name) {
    if (name[0] == '/' || dir[0] == '\0') return nmt_strdup(name);
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = nmt_malloc(n);
    if (path) snprintf(path, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
    return path;
}

int nmt_file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

void nmt_lines_init(nmt_lines *lines, FILE *fp, const char *name) {
    memset(lines, 0, sizeof *lines);
    lines->fp = fp;
    lines->name = name;
}

int nmt_lines_next(nmt_lines *lines) {
    errno = 0;
    ssize_t n = getline(&lines->line, &lines->cap, lines->fp);
    if (n < 0) {
        if (ferror(lines->fp)) return nmt_error_set("%s: read failed: %s", lines->name, strerror(errno ? errno : EIO));
        if (errno == ENOMEM) return nmt_error_set("%s: out of memory reading line %ld", lines->name, lines->number + 1);
        return 0;
    }
    lines->number++;
    if (n > 0 && lines->line[n - 1] == '\n') lines->line[--n] = '\0';
    lines->len = (size_t)n;
    return 1;
}

void nmt_lines_free(nmt_lines *lines) {
    free(lines->line);
    lines->line = NULL;
    lines->cap = 0;
}
