/* pynum: Python's numbers as sacreBLEU computes and prints them.
 *
 * Arithmetic. How sacreBLEU types a metric's summed statistics decides the last bits of a score
 * (nmt_pynum_arith, below).
 *
 * Printing. Scores are printed as Python prints them: f"{x:.{w}f}" (nmt_pynum_fixed) and, in JSON,
 * repr(float(f"{x:.{w}f}")) (nmt_pynum_repr: the shortest digits that read back as the same double,
 * in exponent form below 1e-4 and from 1e16 up, like Python's repr).
 */
#ifndef NMT_PYNUM_H
#define NMT_PYNUM_H

#include <stddef.h>

/* How sacreBLEU's segment statistics are typed when it computes a score from them, which decides
 * the last bits of the result:
 *   NMT_PYNUM_PYTHON   Python ints and floats (every normal score): double arithmetic.
 *   NMT_PYNUM_FLOAT32  numpy float32 sums (bootstrap resampling): quotients of two statistics are
 *                      taken in single precision, and BLEU's add-k result is stored as float32.
 *   NMT_PYNUM_INT64    numpy int64 sums (approximate randomization): BLEU's add-k result is
 *                      truncated to an integer. */
typedef enum nmt_pynum_arith {
    NMT_PYNUM_PYTHON,
    NMT_PYNUM_FLOAT32,
    NMT_PYNUM_INT64,
} nmt_pynum_arith;

/* f"{x:.{width}f}" into out[0..size). Returns the length it needs. */
size_t nmt_pynum_fixed(double x, int width, char *out, size_t size);

/* Python's repr(float(x)) into out (room for 32 bytes). Returns the length. */
size_t nmt_pynum_repr(double x, char *out);

/* float(f"{x:.{width}f}"): the number as it is shown, read back. */
double nmt_pynum_rounded(double x, int width);

#endif
