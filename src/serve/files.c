/* files: translated files kept for download, oldest dropped first; see files.h. */
#include "serve/files.h"

#include "base/util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

typedef struct stored_file {
    char name[NMT_SERVE_FILE_NAME_MAX]; /* "" = a free slot */
    char *data;
    size_t len;
    unsigned long long order; /* when it was put: the smallest goes first */
} stored_file;

struct nmt_serve_files {
    pthread_mutex_t lock;
    stored_file *slots;  /* [max_files] */
    int max_files;
    size_t max_bytes, bytes;
    unsigned long long puts;
};

int nmt_serve_files_create(nmt_serve_files **out, int max_files, size_t max_bytes) {
    *out = NULL;
    nmt_serve_files *f = nmt_calloc(1, sizeof *f);
    if (!f) return -1;
    f->slots = nmt_calloc(max_files > 0 ? (size_t)max_files : 1, sizeof *f->slots);
    if (!f->slots || pthread_mutex_init(&f->lock, NULL) != 0) {
        free(f->slots);
        free(f);
        return nmt_error_set("cannot create the store of translated files");
    }
    f->max_files = max_files;
    f->max_bytes = max_bytes;
    *out = f;
    return 0;
}

void nmt_serve_files_free(nmt_serve_files *f) {
    if (!f) return;
    for (int i = 0; i < f->max_files; i++) free(f->slots[i].data);
    free(f->slots);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

static void drop(nmt_serve_files *f, stored_file *s) {
    f->bytes -= s->len;
    free(s->data);
    *s = (stored_file){0};
}

/* The oldest file held, or NULL (the lock held). */
static stored_file *oldest(nmt_serve_files *f) {
    stored_file *o = NULL;
    for (int i = 0; i < f->max_files; i++)
        if (f->slots[i].name[0] && (!o || f->slots[i].order < o->order)) o = &f->slots[i];
    return o;
}

/* name made safe into out (at most 100 bytes and a NUL). */
static void safe_name(const char *name, char *out) {
    while (*name == '.') name++;
    size_t n = 0;
    for (; *name && n < 100; name++) {
        const char c = *name;
        const int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                       c == '-' || c == '_';
        out[n++] = ok ? c : '_';
    }
    out[n] = '\0';
}

int nmt_serve_files_put(nmt_serve_files *f, const char *name, const char *data, size_t len, char *stored) {
    if (len > f->max_bytes || f->max_files < 1)
        return nmt_error_set("the translated file has %zu bytes, more than the %zu kept for download", len, f->max_bytes);
    unsigned char random[16];
    if (getrandom(random, sizeof random, 0) != (ssize_t)sizeof random)
        return nmt_error_set("cannot draw a random name for the translated file");
    for (int i = 0; i < 16; i++) {
        stored[2 * i] = "0123456789abcdef"[random[i] >> 4];
        stored[2 * i + 1] = "0123456789abcdef"[random[i] & 15];
    }
    stored[32] = '.';
    safe_name(name, stored + 33);
    char *copy = nmt_malloc(len ? len : 1);
    if (!copy) return -1;
    if (len) memcpy(copy, data, len);
    pthread_mutex_lock(&f->lock);
    stored_file *slot = NULL;
    for (int i = 0; i < f->max_files && !slot; i++)
        if (!f->slots[i].name[0]) slot = &f->slots[i];
    if (!slot) drop(f, slot = oldest(f));
    while (f->bytes + len > f->max_bytes) drop(f, oldest(f));
    memcpy(slot->name, stored, sizeof slot->name);
    slot->data = copy;
    slot->len = len;
    slot->order = ++f->puts;
    f->bytes += len;
    pthread_mutex_unlock(&f->lock);
    return 0;
}

int nmt_serve_files_get(nmt_serve_files *f, const char *stored, char **data, size_t *len) {
    *data = NULL;
    *len = 0;
    int rc = -1;
    pthread_mutex_lock(&f->lock);
    for (int i = 0; i < f->max_files; i++) {
        const stored_file *s = &f->slots[i];
        if (!s->name[0] || strcmp(s->name, stored) != 0) continue;
        if ((*data = nmt_malloc(s->len ? s->len : 1))) {
            if (s->len) memcpy(*data, s->data, s->len);
            *len = s->len;
            rc = 0;
        }
        break;
    }
    pthread_mutex_unlock(&f->lock);
    return rc;
}
