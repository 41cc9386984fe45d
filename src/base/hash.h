/* hash: a streaming 64-bit hash: 8-byte words mixed by multiply-rotate. It tells whether bytes
 * changed (a corpus, a vocabulary, a checkpoint's tensors), not whether someone forged them: it is
 * not cryptographic. The values are stable across versions: caches and files store them.
 */
#ifndef NMT_HASH_H
#define NMT_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct nmt_hash {
    uint64_t h;
    uint64_t length;        /* bytes added */
    unsigned char tail[8];  /* bytes not yet mixed in */
    int tail_len;
} nmt_hash;

void nmt_hash_init(nmt_hash *s);
void nmt_hash_add(nmt_hash *s, const void *data, size_t size);
uint64_t nmt_hash_final(nmt_hash *s);
/* The hash of one buffer. */
uint64_t nmt_hash_bytes(const void *data, size_t size);
/* The hash of a file's bytes (error naming the path when it cannot be read). */
int nmt_hash_file(const char *path, uint64_t *hash);

#endif
