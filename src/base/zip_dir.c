/* zip_dir: archives extracted into directories, directories written as archives (zip_dir.h). */
#include "base/zip_dir.h"

#include "base/io.h"
#include "base/util.h"
#include "base/zip.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

enum { MAX_NAME = NMT_ZIP_MAX_NAME + 1, DOS_DATE = (0 << 9) | (1 << 5) | 1 /* 1980-01-01 */ };
static const uint64_t max_offset = 0xFFFFFFFFu; /* beyond it a plain zip's 32-bit fields overflow */

/* Entry e written under dir: a folder made, a file's data streamed into it. */
static int extract_entry(nmt_zip_reader *r, const nmt_zip_record *e, const char *dir) {
    if (!nmt_zip_safe_name(e->name))
        return nmt_error_set("%s: central directory entry %u has a name that leaves the directory", r->src.what,
                             r->index);
    char *path = nmt_path_join(dir, e->name);
    if (!path) return -1;
    char *slash = strrchr(path, '/');
    int rc = 0;
    if (slash) { /* the entry's folder, or the folder it lies in */
        *slash = '\0';
        rc = nmt_mkdirs(path);
        *slash = '/';
    }
    if (rc == 0 && (!slash || slash[1] != '\0')) {
        nmt_zip_sink out = {.what = path};
        if (!(out.fp = fopen(path, "wb"))) rc = nmt_error_set("%s: %s", path, strerror(errno));
        else rc = nmt_zip_read(r, e, &out);
        if (out.fp && fclose(out.fp) != 0 && rc == 0) rc = nmt_error_set("%s: %s", path, strerror(errno));
    }
    free(path);
    return rc;
}

int nmt_zip_dir_extract(const char *path, const char *dir, size_t max_bytes) {
    nmt_zip_source src = {.what = path};
    if (nmt_open_regular(path, &src.fp, &src.size) < 0) return -1;
    nmt_zip_reader r;
    nmt_zip_record e;
    int rc = nmt_zip_open(&r, src, max_bytes);
    while (rc == 0 && (rc = nmt_zip_next(&r, &e)) > 0) rc = extract_entry(&r, &e, dir);
    nmt_zip_close(&r);
    fclose(src.fp);
    return rc;
}

typedef struct entry {
    nmt_zip_record z; /* z.name is name */
    char *name;       /* in the archive; a folder's ends with '/' */
    char *path;       /* on disk; NULL for a folder */
} entry;

typedef struct tree {
    entry *entries;
    int count, cap;
} tree;

static int add_entry(tree *t, char *name, char *path, uint64_t size) {
    if (t->count == NMT_ZIP_MAX_ENTRIES) {
        free(name);
        free(path);
        return nmt_error_set("more than %d files: a zip archive without zip64 holds no more", NMT_ZIP_MAX_ENTRIES);
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
    /* Stored, dated 1980-01-01, with a Unix mode (and MS-DOS's folder bit). */
    const uint32_t external = path ? 0100644u << 16 : (040755u << 16) | 0x10u;
    t->entries[t->count++] = (entry){{.name = name, .size = (uint32_t)size, .compressed = (uint32_t)size,
                                      .dos_date = DOS_DATE, .external = external}, name, path};
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

/* A file's bytes read for their CRC-32 (out NULL: the first pass, before its header is written), or
 * copied to out and checked against it (the second pass). */
static int pass_file(entry *e, unsigned char *buf, nmt_zip_sink *out) {
    FILE *fp = fopen(e->path, "rb");
    if (!fp) return nmt_error_set("%s: %s", e->path, strerror(errno));
    uLong crc = crc32(0L, Z_NULL, 0);
    uint64_t total = 0;
    int rc = 0;
    for (size_t n; rc == 0 && (n = fread(buf, 1, NMT_ZIP_CHUNK, fp)) > 0; total += n) {
        crc = crc32(crc, buf, (uInt)n);
        if (out) rc = nmt_zip_sink_write(out, buf, n);
    }
    const int failed = ferror(fp);
    fclose(fp);
    if (rc < 0) return -1;
    if (failed) return nmt_error_set("%s: cannot read it", e->path);
    if (total != e->z.size || (out && (uint32_t)crc != e->z.crc))
        return nmt_error_set("%s: changed while the archive was written", e->path);
    e->z.crc = (uint32_t)crc;
    return 0;
}

static int write_archive(tree *t, nmt_zip_sink *out, unsigned char *buf) {
    uint64_t bytes = NMT_ZIP_END;
    for (int i = 0; i < t->count; i++) {
        entry *e = &t->entries[i];
        if (e->path && pass_file(e, buf, NULL) < 0) return -1;
        bytes += NMT_ZIP_LOCAL + NMT_ZIP_CENTRAL + 2 * strlen(e->name) + e->z.size;
    }
    if (bytes > max_offset)
        return nmt_error_set("%s: %llu bytes: a zip archive without zip64 holds less than 4 GiB", out->what,
                             (unsigned long long)bytes);
    for (int i = 0; i < t->count; i++)
        if (nmt_zip_put_local(out, &t->entries[i].z) < 0 || (t->entries[i].path && pass_file(&t->entries[i], buf, out) < 0))
            return -1;
    const uint64_t central = out->at;
    for (int i = 0; i < t->count; i++)
        if (nmt_zip_put_central(out, &t->entries[i].z) < 0) return -1;
    return nmt_zip_put_end(out, (unsigned)t->count, central);
}

int nmt_zip_dir_write(const char *dir, const char *prefix, const char *path) {
    tree t = {0};
    unsigned char *buf = nmt_malloc(NMT_ZIP_CHUNK);
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
    nmt_zip_sink out = {.what = path, .fp = f.fp};
    if (write_archive(&t, &out, buf) < 0) {
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
