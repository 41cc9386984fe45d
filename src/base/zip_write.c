/* zip_write: a directory written as a zip archive of stored entries (zip_write.h). */
#include "base/zip_write.h"

#include "base/io.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

enum { MAX_ENTRIES = 65535, MAX_NAME = 1024, CHUNK = 1 << 16, DOS_DATE = (0 << 9) | (1 << 5) | 1 /* 1980-01-01 */ };
static const uint64_t max_offset = 0xFFFFFFFFu; /* beyond it a plain zip's 32-bit fields overflow */

typedef struct entry {
    char *name;     /* in the archive; a folder's ends with '/' */
    char *path;     /* on disk; NULL for a folder */
    uint64_t size;
    uint32_t crc;
    uint64_t offset; /* of its local header */
} entry;

typedef struct tree {
    entry *entries;
    int count, cap;
    uint64_t bytes;  /* of the archive so far, as planned */
} tree;

static int add_entry(tree *t, char *name, char *path, uint64_t size) {
    if (t->count == MAX_ENTRIES) {
        free(name);
        free(path);
        return nmt_error_set("more than %d files: a zip archive without zip64 holds no more", MAX_ENTRIES);
    }
    if (t->count == t->cap) {
        const int cap = t->cap ? 2 * t->cap : 16;
        entry *grown = nmt_realloc(t->entries, (size_t)cap * sizeof *grown);
        if (!grown) {
            free(name);
            free(path);
            return -1;
        }
        t->entries = grown;
        t->cap = cap;
    }
    t->entries[t->count++] = (entry){.name = name, .path = path, .size = size};
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The entries of folder `path` (named `name` in the archive, "" at the root), depth first in name order. */
static int scan(tree *t, const char *path, const char *name, int depth) {
    if (depth > 32) return nmt_error_set("%s: folders nested more than 32 deep", path);
    DIR *d = opendir(path);
    if (!d) return nmt_error_set("%s: %s", path, strerror(errno));
    char **names = NULL;
    int n = 0, cap = 0, rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (n == cap) {
            char **grown = nmt_realloc(names, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *grown);
            if (!grown) rc = -1;
            else names = grown;
        }
        if (rc == 0 && !(names[n++] = nmt_strdup(e->d_name))) rc = -1;
    }
    closedir(d);
    if (rc == 0) qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 0; rc == 0 && i < n; i++) {
        char *child = nmt_path_join(path, names[i]), *inner = NULL;
        const size_t len = strlen(name) + strlen(names[i]) + 2;
        struct stat st;
        if (!child || !(inner = nmt_malloc(len))) rc = -1;
        else if (lstat(child, &st) != 0) rc = nmt_error_set("%s: %s", child, strerror(errno));
        else if (len > MAX_NAME) rc = nmt_error_set("%s: a name of more than %d bytes", child, MAX_NAME);
        if (rc == 0) snprintf(inner, len, "%s%s", name, names[i]);
        if (rc == 0 && S_ISDIR(st.st_mode)) {
            char *folder = nmt_malloc(len + 1);
            if (!folder) rc = -1;
            else snprintf(folder, len + 1, "%s/", inner);
            rc = rc || add_entry(t, folder, NULL, 0) < 0 || scan(t, child, folder, depth + 1) < 0 ? -1 : 0;
        } else if (rc == 0 && S_ISREG(st.st_mode)) {
            if ((uint64_t)st.st_size >= max_offset)
                rc = nmt_error_set("%s: %lld bytes: a zip archive without zip64 holds files below 4 GiB", child,
                                   (long long)st.st_size);
            else rc = add_entry(t, inner, child, (uint64_t)st.st_size), inner = child = NULL;
        } else if (rc == 0) {
            rc = nmt_error_set("%s: neither a file nor a folder (a link?): not written into the archive", child);
        }
        free(child);
        free(inner);
    }
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    return rc;
}

static void le16(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static void le32(unsigned char *p, uint32_t v) {
    le16(p, v & 0xFFFFu);
    le16(p + 2, v >> 16);
}

/* A file's CRC-32, read once before its header is written. */
static int file_crc(entry *e, unsigned char *buf) {
    FILE *fp = fopen(e->path, "rb");
    if (!fp) return nmt_error_set("%s: %s", e->path, strerror(errno));
    uLong crc = crc32(0L, Z_NULL, 0);
    uint64_t total = 0;
    for (size_t n; (n = fread(buf, 1, CHUNK, fp)) > 0; total += n) crc = crc32(crc, buf, (uInt)n);
    const int failed = ferror(fp);
    fclose(fp);
    if (failed) return nmt_error_set("%s: cannot read it", e->path);
    if (total != e->size) return nmt_error_set("%s: changed while the archive was written", e->path);
    e->crc = (uint32_t)crc;
    return 0;
}

/* The fields a local header (30 bytes from `at` = 0) and a central entry (46 from `at` = 16 - 4:
 * they share version, flags, method, time, date, CRC, sizes, name length) have in common. */
static void common_fields(unsigned char *p, const entry *e) {
    le16(p, 10);         /* version needed: 1.0 (stored) */
    le16(p + 2, 0x0800); /* names in UTF-8 */
    le16(p + 4, 0);      /* stored */
    le16(p + 6, 0);      /* 00:00 */
    le16(p + 8, DOS_DATE);
    le32(p + 10, e->crc);
    le32(p + 14, (uint32_t)e->size);
    le32(p + 18, (uint32_t)e->size);
    le16(p + 22, (uint32_t)strlen(e->name));
    le16(p + 24, 0);     /* no extra field */
}

static int copy_data(const entry *e, FILE *out, unsigned char *buf, const char *archive) {
    FILE *fp = fopen(e->path, "rb");
    if (!fp) return nmt_error_set("%s: %s", e->path, strerror(errno));
    int rc = 0;
    uLong crc = crc32(0L, Z_NULL, 0);
    for (size_t n; rc == 0 && (n = fread(buf, 1, CHUNK, fp)) > 0;) {
        crc = crc32(crc, buf, (uInt)n);
        rc = nmt_io_write(out, buf, n, archive);
    }
    if (rc == 0 && (ferror(fp) || (uint32_t)crc != e->crc))
        rc = nmt_error_set("%s: changed while the archive was written", e->path);
    fclose(fp);
    return rc;
}

static int write_archive(tree *t, FILE *out, const char *archive, unsigned char *buf) {
    uint64_t at = 0;
    for (int i = 0; i < t->count; i++) {
        entry *e = &t->entries[i];
        if (e->path && file_crc(e, buf) < 0) return -1;
        e->offset = at;
        at += 30 + strlen(e->name) + e->size;
    }
    uint64_t central = 0;
    for (int i = 0; i < t->count; i++) central += 46 + strlen(t->entries[i].name);
    if (at + central + 22 > max_offset)
        return nmt_error_set("%s: %llu bytes: a zip archive without zip64 holds less than 4 GiB", archive,
                             (unsigned long long)(at + central + 22));
    for (int i = 0; i < t->count; i++) {
        const entry *e = &t->entries[i];
        unsigned char h[30];
        le32(h, 0x04034b50);
        common_fields(h + 4, e);
        if (nmt_io_write(out, h, sizeof h, archive) < 0 || nmt_io_write(out, e->name, strlen(e->name), archive) < 0 ||
            (e->path && copy_data(e, out, buf, archive) < 0))
            return -1;
    }
    for (int i = 0; i < t->count; i++) {
        const entry *e = &t->entries[i];
        unsigned char h[46];
        le32(h, 0x02014b50);
        le16(h + 4, 3 << 8 | 20); /* made by: Unix, zip 2.0 */
        common_fields(h + 6, e);
        le16(h + 32, 0);          /* no comment */
        le16(h + 34, 0);          /* disk 0 */
        le16(h + 36, 0);
        le32(h + 38, e->path ? 0100644u << 16 : (040755u << 16) | 0x10u); /* Unix mode; MS-DOS folder bit */
        le32(h + 42, (uint32_t)e->offset);
        if (nmt_io_write(out, h, sizeof h, archive) < 0 || nmt_io_write(out, e->name, strlen(e->name), archive) < 0)
            return -1;
    }
    unsigned char end[22] = {0};
    le32(end, 0x06054b50);
    le16(end + 8, (uint32_t)t->count);
    le16(end + 10, (uint32_t)t->count);
    le32(end + 12, (uint32_t)central);
    le32(end + 16, (uint32_t)at);
    return nmt_io_write(out, end, sizeof end, archive);
}

int nmt_zip_write_dir(const char *dir, const char *prefix, const char *path) {
    tree t = {0};
    unsigned char *buf = nmt_malloc(CHUNK);
    int rc = -1;
    char *root = NULL;
    if (!buf) return -1;
    if (prefix && *prefix) {
        const size_t len = strlen(prefix) + 2;
        if (!(root = nmt_malloc(len))) goto done;
        snprintf(root, len, "%s/", prefix);
        char *entry_name = nmt_strdup(root);
        if (!entry_name || add_entry(&t, entry_name, NULL, 0) < 0) goto done;
    }
    if (scan(&t, dir, root ? root : "", 0) < 0) goto done;
    nmt_atomic_file f;
    if (nmt_atomic_open(&f, path) < 0) goto done;
    if (write_archive(&t, f.fp, path, buf) < 0) {
        nmt_atomic_abort(&f);
        goto done;
    }
    rc = nmt_atomic_commit(&f);
done:
    for (int i = 0; i < t.count; i++) {
        free(t.entries[i].name);
        free(t.entries[i].path);
    }
    free(t.entries);
    free(root);
    free(buf);
    return rc;
}
