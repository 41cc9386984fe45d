/* signature: sacreBLEU's reproducibility signature strings. */
#include "eval/signature.h"

#include "nmt/version.h"

#include <stdio.h>
#include <string.h>

/* Appends text to out[0..size) at *len, counting what does not fit. */
static void append(char *out, size_t size, size_t *len, const char *text) {
    size_t n = strlen(text);
    if (*len < size) {
        size_t room = size - *len - 1;
        memcpy(out + *len, text, n < room ? n : room);
        out[*len + (n < room ? n : room)] = '\0';
    }
    *len += n;
}

static void append_pair(char *out, size_t size, size_t *len, const char *key, const char *value) {
    if (*len) append(out, size, len, "|");
    append(out, size, len, key);
    append(out, size, len, ":");
    append(out, size, len, value);
}

size_t nmt_signature_format(const nmt_signature_global *global, const nmt_signature_field *fields, int count,
                                  char *out, size_t size) {
    size_t len = 0;
    char value[32];
    if (size) out[0] = '\0';
    if (global->nrefs < 0) snprintf(value, sizeof value, "var");
    else snprintf(value, sizeof value, "%ld", global->nrefs);
    append_pair(out, size, &len, global->short_form ? "#" : "nrefs", value);
    if (global->bootstrap > 0) {
        snprintf(value, sizeof value, "%ld", global->bootstrap);
        append_pair(out, size, &len, "bs", value);
    }
    if (global->trials > 0) {
        snprintf(value, sizeof value, "%ld", global->trials);
        append_pair(out, size, &len, "ar", value);
    }
    if (global->seed) append_pair(out, size, &len, global->short_form ? "rs" : "seed", global->seed);
    for (int i = 0; i < count; i++)
        append_pair(out, size, &len, global->short_form ? fields[i].short_key : fields[i].key, fields[i].value);
    /* "nmt-0.1.0", so that the signature is never read as sacreBLEU 0.1.0's */
    append_pair(out, size, &len, global->short_form ? "v" : "version", "nmt-" NMT_VERSION);
    return len;
}
