/* score: what BLEU, chrF and TER share: sacreBLEU's signature strings and Python's number formatting.
 *
 * Signature. sacreBLEU prints a reproducibility signature such as
 *     nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0
 * Its fields come in a fixed order: nrefs, bs (bootstrap resamples), ar (randomization trials), seed,
 * then the metric's own fields, and version last. The short form (-sh) abbreviates each key
 * (nrefs -> #, version -> v, case -> c, ...). nmt puts its own version in the version field.
 *
 * Numbers. Scores are printed as Python prints them: f"{x:.{w}f}" (nmt_score_fixed) and, in JSON,
 * repr(float(f"{x:.{w}f}")) (nmt_score_repr: the shortest digits that read back as the same double,
 * in exponent form below 1e-4 and from 1e16 up, like Python's repr).
 */
#ifndef NMT_SCORE_H
#define NMT_SCORE_H

#include <stddef.h>

/* How sacreBLEU's segment statistics are typed when it computes a score from them, which decides
 * the last bits of the result:
 *   NMT_SCORE_PYTHON   Python ints and floats (every normal score): double arithmetic.
 *   NMT_SCORE_FLOAT32  numpy float32 sums (bootstrap resampling): quotients of two statistics are
 *                      taken in single precision, and BLEU's add-k result is stored as float32.
 *   NMT_SCORE_INT64    numpy int64 sums (approximate randomization): BLEU's add-k result is
 *                      truncated to an integer. */
typedef enum nmt_score_arith {
    NMT_SCORE_PYTHON,
    NMT_SCORE_FLOAT32,
    NMT_SCORE_INT64,
} nmt_score_arith;

/* One metric-specific signature field: long key, short key, value. */
typedef struct nmt_score_field {
    const char *key;
    const char *short_key;
    char value[32];
} nmt_score_field;

/* The global part of a signature. */
typedef struct nmt_score_signature {
    long nrefs;       /* references per segment; -1 when it varies ("var") */
    long bootstrap;   /* bs: bootstrap resamples, 0 when none */
    long trials;      /* ar: approximate randomization trials, 0 when none */
    const char *seed; /* seed: "12345" or "none"; NULL when no resampling */
    int short_form;   /* abbreviate keys (sacreBLEU's --short) */
} nmt_score_signature;

/* Writes the signature into out[0..size) (always NUL-terminated). Returns the length it needs
 * (excluding the NUL), so a result >= size means it was cut short. */
size_t nmt_score_signature_format(const nmt_score_signature *global, const nmt_score_field *fields, int count,
                                  char *out, size_t size);

/* f"{x:.{width}f}" into out[0..size). Returns the length it needs. */
size_t nmt_score_fixed(double x, int width, char *out, size_t size);

/* Python's repr(float(x)) into out (room for 32 bytes). Returns the length. */
size_t nmt_score_repr(double x, char *out);

/* float(f"{x:.{width}f}"): the number as it is shown, read back. */
double nmt_score_rounded(double x, int width);

#endif
