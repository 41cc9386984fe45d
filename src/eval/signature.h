/* signature: sacreBLEU's reproducibility signature strings, such as
 *     nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0
 * Its fields come in a fixed order: nrefs, bs (bootstrap resamples), ar (randomization trials), seed,
 * then the metric's own fields, and version last. The short form (-sh) abbreviates each key
 * (nrefs -> #, version -> v, case -> c, ...). nmt puts its own version in the version field.
 */
#ifndef NMT_SIGNATURE_H
#define NMT_SIGNATURE_H

#include <stddef.h>

/* One metric-specific signature field: long key, short key, value. */
typedef struct nmt_signature_field {
    const char *key;
    const char *short_key;
    char value[32];
} nmt_signature_field;

/* The global part of a signature. */
typedef struct nmt_signature_global {
    long nrefs;       /* references per segment; -1 when it varies ("var") */
    long bootstrap;   /* bs: bootstrap resamples, 0 when none */
    long trials;      /* ar: approximate randomization trials, 0 when none */
    const char *seed; /* seed: "12345" or "none"; NULL when no resampling */
    int short_form;   /* abbreviate keys (sacreBLEU's --short) */
} nmt_signature_global;

/* Writes the signature into out[0..size) (always NUL-terminated). Returns the length it needs
 * (excluding the NUL), so a result >= size means it was cut short. */
size_t nmt_signature_format(const nmt_signature_global *global, const nmt_signature_field *fields, int count,
                            char *out, size_t size);

#endif
