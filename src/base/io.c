/* io: atomic writes (temp + fsync + rename), fault injection for writes and fsyncs, bounded reading. */
#include "base/io.h"
#include "base/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
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
        return nmt_error_set_kind(NMT_ERROR_IO, "%s: write failed: %s (injected fault)", name, strerror(errno));
    }
    if (size && fwrite(data, 1, size, fp) != size)
        return nmt_error_set_kind(NMT_ERROR_IO, "%s: write failed: %s", name, strerror(errno));
    return 0;
}

int nmt_io_sync(FILE *fp, const char *name) {
    if (fflush(fp) != 0) return nmt_error_set_kind(NMT_ERROR_IO, "%s: write failed: %s", name, strerror(errno));
    if (fault_hit(&fsync_countdown)) return nmt_error_set_kind(NMT_ERROR_IO, "%s: fsync failed: %s (injected fault)",
                                                               name, strerror(EIO));
    if (fsync(fileno(fp)) != 0 && errno != EINVAL && errno != EROFS)
        return nmt_error_set_kind(NMT_ERROR_IO, "%s: fsync failed: %s", name, strerror(errno));
    return 0;
}

/* The file a path names: symbolic links followed (at most 40, like the kernel), relative targets
 * taken from the link's directory. A new string; *st gets the file's lstat, *exists whether it exists. */
static char *resolve_links(const char *path, struct stat *st, int *exists) {
    char *cur = nmt_strdup(path);
    for (int hops = 0; cur; hops++) {
        if (lstat(cur, st) != 0) {
            *exists = 0;
            if (errno == ENOENT) return cur;
            nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot write: %s", cur, strerror(errno));
            break;
        }
        *exists = 1;
        if (!S_ISLNK(st->st_mode)) return cur;
        if (hops == 40) {
            nmt_error_set("%s: too many levels of symbolic links", path);
            break;
        }
        char target[4096];
        ssize_t n = readlink(cur, target, sizeof target - 1);
        if (n < 0) {
            nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot read the symbolic link: %s", cur, strerror(errno));
            break;
        }
        target[n] = '\0';
        char *next;
        if (target[0] == '/') {
            next = nmt_strdup(target);
        } else {
            char *copy = nmt_strdup(cur);
            next = copy ? nmt_path_join(dirname(copy), target) : NULL;
            free(copy);
        }
        free(cur);
        cur = next;
    }
    free(cur);
    return NULL;
}

/* Letters and digits no one can guess: from getrandom, else from the clock and addresses. */
static void random_name(char *out, int n) {
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    unsigned char bytes[32];
    if (n > (int)sizeof bytes) n = (int)sizeof bytes;
    if (getrandom(bytes, (size_t)n, GRND_NONBLOCK) != (ssize_t)n) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)(uintptr_t)out ^ (uint64_t)getpid() << 40;
        for (int i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            bytes[i] = (unsigned char)(x >> 24);
        }
    }
    for (int i = 0; i < n; i++) out[i] = alphabet[bytes[i] % (sizeof alphabet - 1)];
    out[n] = '\0';
}

enum { RANDOM_LETTERS = 12 };

/* Creates a fresh temporary beside `path` (see the header for its name); -1 with the error set. */
static int create_temporary(nmt_atomic_file *f, const char *path) {
    size_t n = strlen(path) + 64;
    if (!(f->tmp_path = nmt_malloc(n))) return -1;
    for (int attempt = 0; attempt < 100; attempt++) {
        char letters[RANDOM_LETTERS + 1];
        random_name(letters, RANDOM_LETTERS);
        snprintf(f->tmp_path, n, "%s.tmp.%ld.%s", path, (long)getpid(), letters);
        int fd = open(f->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno == EEXIST) continue;
        if (fd < 0) return nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot create: %s", f->tmp_path, strerror(errno));
        if (!(f->fp = fdopen(fd, "wb"))) {
            nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot create: %s", f->tmp_path, strerror(errno));
            close(fd);
            unlink(f->tmp_path);
            return -1;
        }
        return 0;
    }
    return nmt_error_set("%s: cannot create a temporary beside it: every name tried exists", path);
}

int nmt_atomic_open(nmt_atomic_file *f, const char *path) {
    memset(f, 0, sizeof *f);
    if (path[0] == '\0') return nmt_error_set("cannot write to an empty path");
    struct stat st;
    int exists = 0;
    if (!(f->path = resolve_links(path, &st, &exists))) return -1;
    if (exists && S_ISDIR(st.st_mode)) {
        nmt_error_set("%s: is a directory, not a file to write", f->path);
        goto fail;
    }
    if (exists && !S_ISREG(st.st_mode)) { /* a FIFO, a terminal, /dev/null: written, never replaced */
        int fd = open(f->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 || !(f->fp = fdopen(fd, "wb"))) {
            nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot open for writing: %s", f->path, strerror(errno));
            if (fd >= 0) close(fd);
            goto fail;
        }
        return 0;
    }
    if (create_temporary(f, f->path) < 0) goto fail;
    /* The replacement keeps the permissions of the file it replaces (a new one gets 0666 less umask). */
    if (exists && fchmod(fileno(f->fp), st.st_mode & 07777) != 0) {
        nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot set its permissions: %s", f->tmp_path, strerror(errno));
        nmt_atomic_abort(f);
        return -1;
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
    const char *name = f->tmp_path ? f->tmp_path : f->path;
    int rc = nmt_io_sync(f->fp, name);
    if (fclose(f->fp) != 0 && rc == 0) rc = nmt_error_set_kind(NMT_ERROR_IO, "%s: close failed: %s",
                                                               name, strerror(errno));
    f->fp = NULL;
    if (f->tmp_path) {
        if (rc == 0 && rename(f->tmp_path, f->path) != 0)
            rc = nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot rename to %s: %s",
                                    f->tmp_path, f->path, strerror(errno));
        if (rc == 0) sync_parent_dir(f->path);
        else unlink(f->tmp_path);
    }
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

/* The process id of a name "NAME.tmp.<pid>.<RANDOM_LETTERS letters and digits>", or -1. */
static long temporary_pid(const char *name) {
    size_t len = strlen(name);
    if (len < RANDOM_LETTERS + 8) return -1;
    const char *letters = name + len - RANDOM_LETTERS;
    for (int i = 0; i < RANDOM_LETTERS; i++)
        if (!isalnum((unsigned char)letters[i])) return -1;
    if (letters[-1] != '.') return -1;
    const char *digits = letters - 1;
    while (digits > name && isdigit((unsigned char)digits[-1])) digits--;
    if (digits == letters - 1 || digits - name < 6 || strncmp(digits - 5, ".tmp.", 5) != 0) return -1;
    return strtol(digits, NULL, 10);
}

void nmt_remove_stale_temporaries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long pid = temporary_pid(e->d_name);
        if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char *path = nmt_path_join(dir, e->d_name);
        struct stat st;
        if (path && lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()) unlink(path);
        free(path);
    }
    closedir(d);
}

int nmt_output_check(const char *path, const char *flag) {
    if (path[0] == '\0') return nmt_error_set("%s '': an empty path; name the file to write", flag);
    struct stat st;
    size_t len = strlen(path);
    if ((stat(path, &st) == 0 && S_ISDIR(st.st_mode)) || path[len - 1] == '/')
        return nmt_error_set("%s %s: a directory; name the file to write in it", flag, path);
    return 0;
}

int nmt_same_file(const char *a, const char *b) {
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int nmt_output_dir_check_inputs(const char *dir, const char *const *names, const char *const *inputs) {
    int rc = 0;
    for (const char *const *name = names; *name && rc == 0; name++) {
        char *path = nmt_path_join(dir, *name);
        if (!path) return -1;
        for (const char *const *in = inputs; *in && rc == 0; in++)
            if (nmt_same_file(path, *in))
                rc = nmt_error_set("%s is %s (the same file, through a link): writing it would destroy what is read; "
                                   "choose another output directory", path, *in);
        free(path);
    }
    return rc;
}

int nmt_staged_dir_open(nmt_staged_dir *s, const char *dir) {
    memset(s, 0, sizeof *s);
    if (!(s->dir = nmt_strdup(dir))) return -1;
    for (size_t len = strlen(s->dir); len > 1 && s->dir[len - 1] == '/';) s->dir[--len] = '\0'; /* "out/" */
    char *parent = nmt_strdup(s->dir), *slash = parent ? strrchr(parent, '/') : NULL;
    if (slash && slash != parent) *slash = '\0';
    const int made = parent && (!slash || slash == parent || nmt_mkdirs(parent) == 0);
    free(parent);
    size_t n = strlen(s->dir) + 64;
    s->tmp = made ? nmt_malloc(n) : NULL;
    for (int attempt = 0; s->tmp && attempt < 100; attempt++) {
        char letters[RANDOM_LETTERS + 1];
        random_name(letters, RANDOM_LETTERS);
        snprintf(s->tmp, n, "%s.tmp.%ld.%s", s->dir, (long)getpid(), letters);
        if (mkdir(s->tmp, 0777) == 0) return 0;
        if (errno != EEXIST) {
            nmt_error_set("%s: cannot create: %s", s->tmp, strerror(errno));
            break;
        }
    }
    if (s->tmp && errno == EEXIST) nmt_error_set("%s: cannot create a temporary beside it: every name tried exists", dir);
    free(s->dir);
    free(s->tmp);
    memset(s, 0, sizeof *s);
    return -1;
}

char *nmt_staged_dir_path(const nmt_staged_dir *s, const char *name) { return nmt_path_join(s->tmp, name); }

/* Renames s->tmp/name over s->dir/name. */
static int move_into_place(const nmt_staged_dir *s, const char *name) {
    char *from = nmt_path_join(s->tmp, name), *to = nmt_path_join(s->dir, name);
    int rc = from && to ? 0 : -1;
    if (rc == 0 && rename(from, to) != 0) rc = nmt_error_set("%s: cannot rename to %s: %s", from, to, strerror(errno));
    free(from);
    free(to);
    return rc;
}

int nmt_staged_dir_commit(nmt_staged_dir *s, const char *last) {
    int rc = 0;
    if (rename(s->tmp, s->dir) != 0) { /* DIR holds files: they are replaced one by one */
        if (errno != EEXIST && errno != ENOTEMPTY && errno != ENOTDIR) { /* ENOTDIR: a link to a directory */
            rc = nmt_error_set("%s: cannot rename to %s: %s", s->tmp, s->dir, strerror(errno));
        } else {
            DIR *d = opendir(s->tmp);
            if (!d) rc = nmt_error_set("%s: cannot list: %s", s->tmp, strerror(errno));
            for (struct dirent *e; rc == 0 && d && (e = readdir(d));)
                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && strcmp(e->d_name, last) != 0)
                    rc = move_into_place(s, e->d_name);
            if (d) closedir(d);
            if (rc == 0) rc = move_into_place(s, last);
        }
    }
    char *inside = rc == 0 ? nmt_path_join(s->dir, last) : NULL;
    if (inside) sync_parent_dir(inside), sync_parent_dir(s->dir);
    free(inside);
    nmt_staged_dir_abort(s); /* what is left of the temporary (nothing, once committed) */
    return rc;
}

void nmt_staged_dir_abort(nmt_staged_dir *s) {
    if (s->tmp) nmt_remove_tree(s->tmp);
    free(s->dir);
    free(s->tmp);
    memset(s, 0, sizeof *s);
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

static const char *file_kind(mode_t mode) {
    return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO" : S_ISCHR(mode) ? "a character device"
         : S_ISBLK(mode) ? "a block device" : S_ISSOCK(mode) ? "a socket" : "not a regular file";
}

int nmt_open_regular(const char *path, FILE **fp, size_t *size) {
    *fp = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int rc = nmt_error_set_kind(NMT_ERROR_IO, "%s: not a regular file (%s)",
                                    path, fstat(fd, &st) == 0 ? file_kind(st.st_mode) : strerror(errno));
        close(fd);
        return rc;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (!(*fp = fdopen(fd, "rb"))) {
        close(fd);
        return nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot open: %s", path, strerror(errno));
    }
    *size = (size_t)st.st_size;
    return 0;
}

int nmt_read_file_max(const char *path, size_t max, const char *what, char **data, size_t *size) {
    *data = NULL;
    *size = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) return nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int known = fstat(fileno(fp), &st) == 0;
    if (known && S_ISDIR(st.st_mode)) {
        fclose(fp);
        return nmt_error_set("%s: a directory, not %s", path, what);
    }
    /* A regular file within the limit is read in one go into a buffer of its size (+2: room for the
     * NUL and for the read that sees the end); anything else (a pipe) grows by doubling. */
    size_t cap = 1 << 16, len = 0;
    if (known && S_ISREG(st.st_mode) && (size_t)st.st_size <= max && (size_t)st.st_size + 2 > cap)
        cap = (size_t)st.st_size + 2;
    char *buf = nmt_malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len - 1, fp);
        if (ferror(fp)) {
            nmt_error_set_kind(NMT_ERROR_IO, "%s: read failed: %s", path, strerror(errno));
            break;
        }
        if (feof(fp)) {
            fclose(fp);
            buf[len] = '\0';
            *data = buf;
            *size = len;
            return 0;
        }
        if (len >= max) {
            nmt_error_set("%s: more than %zu bytes, larger than %s can be", path, max, what);
            break;
        }
        size_t grown_cap = cap * 2 > max + 2 ? max + 2 : cap * 2;
        char *bigger = nmt_realloc(buf, grown_cap);
        if (!bigger) {
            nmt_error_prefix("%s: reading %s", path, what);
            break;
        }
        buf = bigger;
        cap = grown_cap;
    }
    free(buf);
    fclose(fp);
    return -1;
}

int nmt_read_regular_file(const char *path, size_t max, const char *what, char **data, size_t *size) {
    *data = NULL;
    *size = 0;
    FILE *fp;
    size_t length;
    if (nmt_open_regular(path, &fp, &length) < 0) return -1;
    if (length > max) {
        fclose(fp);
        return nmt_error_set("%s: %zu bytes, larger than %s can be (%zu)", path, length, what, max);
    }
    char *buf = nmt_malloc(length + 1);
    if (!buf) {
        fclose(fp);
        return nmt_error_prefix("%s: reading %s", path, what);
    }
    size_t got = fread(buf, 1, length, fp);
    int failed = ferror(fp);
    fclose(fp);
    if (got != length || failed) {
        free(buf);
        return nmt_error_set_kind(NMT_ERROR_IO, "%s: read failed: %s",
                                  path, failed ? strerror(errno) : "the file shrank while being read");
    }
    buf[length] = '\0';
    *data = buf;
    *size = length;
    return 0;
}

int nmt_read_file(const char *path, char **data, size_t *size) {
    return nmt_read_file_max(path, NMT_READ_MAX, "a file nmt reads", data, size);
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
            nmt_error_set_kind(NMT_ERROR_IO, "%s: cannot create directory: %s", copy, strerror(errno));
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

int nmt_file_present(const char *path) {
    struct stat st;
    if (stat(path, &st) == 0) return 1;
    if (errno == ENOENT) return 0;
    if (errno == ELOOP) return nmt_error_set("%s: a loop of symbolic links (ELOOP): no file at its end", path);
    return nmt_error_set("%s: cannot open: %s", path, strerror(errno));
}

void nmt_lines_init(nmt_lines *lines, FILE *fp, const char *name) {
    memset(lines, 0, sizeof *lines);
    lines->fp = fp;
    lines->name = name;
}

int nmt_lines_next(nmt_lines *lines) {
    size_t len = 0;
    int c = EOF;
    flockfile(lines->fp);
    for (;;) {
        c = getc_unlocked(lines->fp);
        if (c == EOF || c == '\n') break;
        if (len == NMT_LINE_MAX) break;
        if (len + 1 >= lines->cap) {
            size_t cap = lines->cap ? lines->cap * 2 : 256;
            if (cap > (size_t)NMT_LINE_MAX + 1) cap = (size_t)NMT_LINE_MAX + 1;
            char *grown = nmt_realloc(lines->line, cap);
            if (!grown) {
                funlockfile(lines->fp);
                return nmt_error_prefix("%s:%ld: reading the line", lines->name, lines->number + 1);
            }
            lines->line = grown;
            lines->cap = cap;
        }
        lines->line[len++] = (char)c;
    }
    funlockfile(lines->fp);
    if (c != EOF && c != '\n')
        return nmt_error_set("%s:%ld: a line longer than %d bytes (the limit of a text line; a binary file?)",
                             lines->name, lines->number + 1, NMT_LINE_MAX);
    if (c == EOF && ferror(lines->fp))
        return nmt_error_set("%s: read failed: %s", lines->name, strerror(errno ? errno : EIO));
    if (c == EOF && len == 0) return 0;
    if (!lines->line) { /* an empty line before any other */
        if (!(lines->line = nmt_malloc(256))) return nmt_error_prefix("%s:%ld", lines->name, lines->number + 1);
        lines->cap = 256;
    }
    lines->line[len] = '\0';
    lines->len = len;
    lines->number++;
    return 1;
}

void nmt_lines_free(nmt_lines *lines) {
    free(lines->line);
    lines->line = NULL;
    lines->cap = 0;
}

char *nmt_temp_dir_create(const char *prefix) {
    const char *tmp = getenv("TMPDIR");
    char *dir = nmt_path_join(tmp && *tmp ? tmp : "/tmp", prefix);
    char *templ = dir ? nmt_malloc(strlen(dir) + 8) : NULL;
    if (templ) sprintf(templ, "%s-XXXXXX", dir);
    free(dir);
    if (templ && !mkdtemp(templ)) {
        nmt_error_set_kind(NMT_ERROR_IO, "cannot create a temporary directory %s: %s", templ, strerror(errno));
        free(templ);
        return NULL;
    }
    return templ;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st, (void)type, (void)ftw;
    return remove(path);
}

void nmt_remove_tree(const char *path) { nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }
