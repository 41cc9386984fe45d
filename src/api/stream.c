/* stream: the search's decided pieces as text for nmt_stream_callback (stream.h).
 *
 * Each line keeps its pieces and the bytes of its text already passed on; a line is touched by one
 * decoding thread at a time (its sentence is in one batch), the callback and the first error under
 * the stream's lock.
 */
#include "api/stream.h"

#include "base/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct stream_line {
    int32_t *pieces;
    size_t count, cap;
    size_t sent; /* bytes of the line's text passed on */
    int ended;   /* the final call was made */
} stream_line;

struct nmt_stream {
    const nmt_tokenizer *target;
    uint64_t first_key;
    int count;
    stream_line *lines; /* [count] */
    nmt_stream_callback callback;
    void *user;
    pthread_mutex_t lock;
    int failed;
    char error[512];
};

int nmt_stream_create(nmt_stream **out, const nmt_tokenizer *target, uint64_t first_key, int count,
                      nmt_stream_callback callback, void *user) {
    *out = NULL;
    nmt_stream *s = nmt_calloc(1, sizeof *s);
    if (!s) return -1;
    s->lines = nmt_calloc(count > 0 ? (size_t)count : 1, sizeof *s->lines);
    if (!s->lines || pthread_mutex_init(&s->lock, NULL) != 0) {
        if (s->lines) nmt_error_set("cannot create a mutex");
        free(s->lines);
        free(s);
        return -1;
    }
    s->target = target;
    s->first_key = first_key;
    s->count = count;
    s->callback = callback;
    s->user = user;
    *out = s;
    return 0;
}

void nmt_stream_free(nmt_stream *s) {
    if (!s) return;
    for (int i = 0; i < s->count; i++) free(s->lines[i].pieces);
    free(s->lines);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* Passes text[sent..n) of a line on (text is the caller's, cut at n here). */
static void pass_on(nmt_stream *s, int i, char *text, size_t n, int final) {
    stream_line *l = &s->lines[i];
    pthread_mutex_lock(&s->lock);
    if ((n > l->sent || final) && !l->ended) {
        text[n] = '\0';
        s->callback(s->user, i, text + l->sent, final);
        if (n > l->sent) l->sent = n;
        l->ended = final;
    }
    pthread_mutex_unlock(&s->lock);
}

static void fail(nmt_stream *s) {
    pthread_mutex_lock(&s->lock);
    if (!s->failed) snprintf(s->error, sizeof s->error, "%s", nmt_error());
    s->failed = 1;
    pthread_mutex_unlock(&s->lock);
}

/* The bytes of text that no later piece can change: without trailing whitespace and replacement
 * characters (U+FFFD, EF BF BD: bytes of a character not complete yet). */
static size_t settled(const char *text, size_t n) {
    for (;;) {
        if (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t' || text[n - 1] == '\n')) n--;
        else if (n >= 3 && memcmp(text + n - 3, "\xEF\xBF\xBD", 3) == 0) n -= 3;
        else return n;
    }
}

void nmt_stream_pieces(void *ctx, uint64_t key, const int32_t *pieces, int count, int final) {
    nmt_stream *s = ctx;
    if (key < s->first_key || key - s->first_key >= (uint64_t)s->count) return;
    const int i = (int)(key - s->first_key);
    stream_line *l = &s->lines[i];
    if (count > 0 && l->count + (size_t)count > l->cap) {
        size_t cap = l->cap ? l->cap : 64;
        while (cap < l->count + (size_t)count) cap *= 2;
        int32_t *grown = nmt_realloc(l->pieces, cap * sizeof *grown);
        if (!grown) return fail(s);
        l->pieces = grown;
        l->cap = cap;
    }
    if (count > 0) memcpy(l->pieces + l->count, pieces, (size_t)count * sizeof *pieces);
    l->count += (size_t)(count > 0 ? count : 0);
    char *text = s->target->decode(s->target->state, l->pieces, l->count);
    if (!text) return fail(s);
    const size_t n = strlen(text);
    pass_on(s, i, text, final ? n : settled(text, n), final);
    free(text);
}

int nmt_stream_finish(nmt_stream *s, const char *(*texts)(const void *ctx, int line), const void *ctx) {
    if (s->failed) return nmt_error_set("%s", s->error);
    for (int i = 0; i < s->count; i++) {
        if (s->lines[i].ended) continue;
        const char *text = texts(ctx, i);
        const size_t n = text ? strlen(text) : 0;
        char *copy = nmt_malloc(n + 1);
        if (!copy) return -1;
        if (n) memcpy(copy, text, n);
        if (s->lines[i].sent > n) s->lines[i].sent = n;
        pass_on(s, i, copy, n, 1);
        free(copy);
    }
    return 0;
}
