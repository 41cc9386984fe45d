/* hash: a streaming 64-bit hash of bytes, of a buffer and of a file. */
#include "base/hash.h"
#include "base/io.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

void nmt_hash_init(nmt_hash *s) {
    memset(s, 0, sizeof *s);
    s->h = 0x9E3779B97F4A7C15ull;
}

static void hash_word(nmt_hash *s, uint64_t w) {
    s->h ^= rotl64(w * 0x87C37B91114253D5ull, 31) * 0x4CF5AD432745937Full;
    s->h = rotl64(s->h, 27) * 5 + 0x52DCE729;
}

void nmt_hash_add(nmt_hash *s, const void *data, size_t size) {
    const unsigned char *p = data;
    s->length += size;
    while (size > 0 && s->tail_len > 0) {
        s->tail[s->tail_len++] = *p++;
        size--;
        if (s->tail_len == 8) {
            uint64_t w;
            memcpy(&w, s->tail, 8);
            hash_word(s, w);
            s->tail_len = 0;
        }
    }
    for (; size >= 8; p += 8, size -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        hash_word(s, w);
    }
    if (size > 0) memcpy(s->tail, p, size); /* p may be NULL when size is 0 (an empty corpus's arrays) */
    s->tail_len += (int)size;
}

uint64_t nmt_hash_final(nmt_hash *s) {
    uint64_t w = 0;
    memcpy(&w, s->tail, (size_t)s->tail_len);
    hash_word(s, w ^ ((uint64_t)s->tail_len << 56));
    hash_word(s, s->length);
    uint64_t h = s->h;
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    return h;
}

uint64_t nmt_hash_bytes(const void *data, size_t size) {
    nmt_hash s;
    nmt_hash_init(&s);
    nmt_hash_add(&s, data, size);
    return nmt_hash_final(&s);
}

int nmt_hash_file(const char *path, uint64_t *hash) {
    FILE *fp;
    size_t size;
    if (nmt_open_regular(path, &fp, &size) < 0) return -1;
    enum { CHUNK = 1 << 20 };
    unsigned char *buf = nmt_malloc(CHUNK);
    if (!buf) {
        fclose(fp);
        return -1;
    }
    nmt_hash s;
    nmt_hash_init(&s);
    size_t n;
    while ((n = fread(buf, 1, CHUNK, fp)) > 0) nmt_hash_add(&s, buf, n);
    int failed = ferror(fp);
    free(buf);
    fclose(fp);
    if (failed) return nmt_error_set("%s: read failed", path);
    *hash = nmt_hash_final(&s);
    return 0;
}

