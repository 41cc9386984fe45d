/* keys: the API keys of `nmt serve --api-keys FILE`, read strictly and compared whole.
 *
 * The file holds one key a line; blank lines and lines starting with '#' are skipped, spaces and tabs
 * around a key dropped (and a '\r' before the line end). A key holding a NUL or another control byte
 * (below 0x20, or 0x7F) is refused, naming the file and line: no request could send it whole, and a
 * key read only up to a NUL would let its prefix in. A key given is known when it equals one of the
 * keys whole, its length included, compared in a time that does not depend on where it differs.
 */
#ifndef NMT_SERVE_KEYS_H
#define NMT_SERVE_KEYS_H

#include <stddef.h>

typedef struct nmt_serve_keys {
    char **keys;   /* [count] */
    size_t *lens;  /* [count] their lengths */
    int count;
} nmt_serve_keys;

/* Reads the file into *k (zeroed first; free it with nmt_serve_keys_free, also after a failure).
 * Returns 0, or -1 with a message ("keys.txt:2: the key holds the control byte 0x00 at byte 2: refused",
 * "keys.txt: no API key in the file"). */
int nmt_serve_keys_init(nmt_serve_keys *k, const char *path);
/* 1 when `given` (NUL-terminated) is one of the keys. */
int nmt_serve_keys_known(const nmt_serve_keys *k, const char *given);
void nmt_serve_keys_free(nmt_serve_keys *k);

#endif
