/* gradcheck: finite-difference checks of analytic gradients, shared by test_kernels and test_model
 * (and its random fill by test_gemm).
 *
 * A loss is a function of float arrays computed by float code and summed in double. For a tensor
 * x with analytic gradient g it compares central differences (L(x + h u) - L(x - h u)) against
 * g . (x+ - x-) (the exact float perturbation, so rounding of x +- h u does not count), extrapolated
 * from steps h and 2h so that the loss's curvature does not count either:
 *   - along a random +-1 direction u over the whole tensor (an error anywhere shows up), and
 *   - for a few single entries (an error confined to one entry or a sign flip shows up).
 * An entry passes when |numeric - analytic| <= atol + rtol * max(|numeric|, |analytic|).
 */
#ifndef NMT_TEST_GRADCHECK_H
#define NMT_TEST_GRADCHECK_H

#include "base/random.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef double (*gc_loss_fn)(void *ctx);

typedef struct gc_tolerance {
    double h;    /* step */
    double rtol; /* relative tolerance */
    double atol; /* absolute floor, for gradients near zero */
} gc_tolerance;

static inline uint64_t gc_rng(uint64_t *s) { return nmt_random_next(s); }

/* x[0..n) uniform in [-scale, scale) from the seed. */
static inline void gc_fill(float *x, long n, uint64_t seed, float scale) {
    for (long i = 0; i < n; i++) x[i] = scale * (float)((double)(gc_rng(&seed) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* One central difference along u at step h, and the analytic derivative over the same float steps. */
static inline void gc_central(float *x, const float *orig, const float *grad, long n, const signed char *u, double h,
                              gc_loss_fn loss, void *ctx, double *numeric, double *analytic) {
    double dot = 0.0;
    for (long i = 0; i < n; i++) {
        float plus = orig[i] + (float)(h * u[i]), minus = orig[i] - (float)(h * u[i]);
        dot += (double)grad[i] * ((double)plus - (double)minus);
    }
    for (long i = 0; i < n; i++) x[i] = orig[i] + (float)(h * u[i]);
    double loss_plus = loss(ctx);
    for (long i = 0; i < n; i++) x[i] = orig[i] - (float)(h * u[i]);
    double loss_minus = loss(ctx);
    for (long i = 0; i < n; i++) x[i] = orig[i];
    *numeric = (loss_plus - loss_minus) / (2.0 * h);
    *analytic = dot / (2.0 * h);
}

/* The derivative along u (u[i] in {-1, 0, +1}) by Richardson's extrapolation of central differences
 * at steps h and 2h, (4 D(h) - D(2h)) / 3, which cancels their h^2 error: a model's losses curve
 * enough (softmax, LayerNorm) that a plain central difference at a step large enough for float
 * losses misses by more than the tolerance. Compared with the analytic derivative combined the same
 * way. Returns 1 when it passes; prints the numbers when failing. */
static inline int gc_direction(const char *what, float *x, const float *grad, long n, const signed char *u, gc_loss_fn loss,
                        void *ctx, gc_tolerance tol) {
    float *orig = (float *)malloc((size_t)n * sizeof(float));
    for (long i = 0; i < n; i++) orig[i] = x[i];
    double numeric_h, analytic_h, numeric_2h, analytic_2h;
    gc_central(x, orig, grad, n, u, tol.h, loss, ctx, &numeric_h, &analytic_h);
    gc_central(x, orig, grad, n, u, 2 * tol.h, loss, ctx, &numeric_2h, &analytic_2h);
    free(orig);
    double numeric = (4.0 * numeric_h - numeric_2h) / 3.0, analytic = (4.0 * analytic_h - analytic_2h) / 3.0;
    double bound = tol.atol + tol.rtol * fmax(fabs(numeric), fabs(analytic));
    int ok = fabs(numeric - analytic) <= bound;
    if (!ok)
        fprintf(stderr, "gradcheck %s: numeric %.9g analytic %.9g (diff %.3g > %.3g)\n", what, numeric, analytic,
                fabs(numeric - analytic), bound);
    return ok;
}

/* Checks a tensor along one random direction (+-1 on up to `spread` random entries; all of them
 * when the tensor is smaller) and at `entries` random single entries. A sparse direction keeps the
 * step from crossing many ReLU kinks, where a central difference is wrong by O(h). */
static inline int gc_check(const char *what, float *x, const float *grad, long n, gc_loss_fn loss, void *ctx,
                    gc_tolerance tol, int entries, uint64_t seed) {
    enum { spread = 16 };
    signed char *u = (signed char *)calloc((size_t)n, 1);
    int ok = 1;
    for (long k = 0; k < (n < spread ? n : spread); k++) {
        long i = n <= spread ? k : (long)(gc_rng(&seed) % (uint64_t)n);
        u[i] = (gc_rng(&seed) & 1) ? 1 : -1;
    }
    ok &= gc_direction(what, x, grad, n, u, loss, ctx, tol);
    for (long i = 0; i < n; i++) u[i] = 0;
    for (int e = 0; e < entries && e < n; e++) {
        long i = entries >= n ? e : (long)(gc_rng(&seed) % (uint64_t)n);
        u[i] = 1;
        char name[160];
        snprintf(name, sizeof name, "%s[%ld]", what, i);
        ok &= gc_direction(name, x, grad, n, u, loss, ctx, tol);
        u[i] = 0;
    }
    free(u);
    return ok;
}

#endif
