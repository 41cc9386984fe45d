/* keys: API keys read strictly from their file and compared whole; see keys.h. */
#include "serve/keys.h"

#include "base/io.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nmt_serve_keys_free(nmt_serve_keys *k) {
    for (int i = 0; i < k->count; i++) free(k->keys[i]);
    free(k->keys);
    free(k->lens);
    memset(k, 0, sizeof *k);
}

/* Appends a copy of key[0, n). */
static int add_key(nmt_serve_keys *k, const char *key, size_t n) {
    char **keys = nmt_realloc(k->keys, ((size_t)k->count + 1) * sizeof *keys);
    if (!keys) return -1;
    k->keys = keys;
    size_t *lens = nmt_realloc(k->lens, ((size_t)k->count + 1) * sizeof *lens);
    if (!lens) return -1;
    k->lens = lens;
    if (!(keys[k->count] = nmt_malloc(n + 1))) return -1;
    memcpy(keys[k->count], key, n);
    keys[k->count][n] = '\0';
    lens[k->count++] = n;
    return 0;
}

int nmt_serve_keys_init(nmt_serve_keys *k, const char *path) {
    memset(k, 0, sizeof *k);
    FILE *fp = fopen(path, "r");
    if (!fp) return nmt_error_set("%s: cannot open the API keys file", path);
    nmt_lines lines;
    nmt_lines_init(&lines, fp, path);
    int r, rc = 0;
    while (rc == 0 && (r = nmt_lines_next(&lines)) > 0) {
        const char *line = lines.line;
        size_t n = lines.len;
        while (n && (*line == ' ' || *line == '\t')) line++, n--;
        while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r')) n--;
        if (n == 0 || line[0] == '#') continue;
        for (size_t i = 0; i < n && rc == 0; i++)
            if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
                rc = nmt_error_set("%s:%ld: the key holds the control byte 0x%02x at byte %zu: refused", path,
                                   lines.number, (unsigned char)line[i], (size_t)(line - lines.line) + i + 1);
        if (rc == 0) rc = add_key(k, line, n);
    }
    if (r < 0) rc = -1;
    nmt_lines_free(&lines);
    fclose(fp);
    if (rc == 0 && k->count == 0) rc = nmt_error_set("%s: no API key in the file", path);
    return rc;
}

int nmt_serve_keys_known(const nmt_serve_keys *k, const char *given) {
    const size_t len = strlen(given);
    int known = 0;
    for (int i = 0; i < k->count; i++) {
        unsigned char diff = k->lens[i] != len;
        for (size_t j = 0; j < len && j < k->lens[i]; j++) diff |= (unsigned char)(given[j] ^ k->keys[i][j]);
        known |= diff == 0;
    }
    return known;
}
