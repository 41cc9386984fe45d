/* optim: fused Adam update, gradient norm and the learning-rate schedules. */
#include "train/optim.h"
#include "compute/pool.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Parameters per block: large enough to amortise a task, small enough to balance two threads. */
enum { BLOCK = 1 << 14 };

int nmt_adam_init(nmt_adam *a, size_t n, double beta1, double beta2, double eps) {
    memset(a, 0, sizeof *a);
    a->n = n;
    a->hi = n;
    a->beta1 = beta1;
    a->beta2 = beta2;
    a->eps = eps;
    a->num_blocks = (long)((n + BLOCK - 1) / BLOCK);
    a->m = nmt_calloc(n, sizeof *a->m);
    a->v = nmt_calloc(n, sizeof *a->v);
    a->block_sums = nmt_calloc((size_t)a->num_blocks, sizeof *a->block_sums);
    if (!a->m || !a->v || !a->block_sums) {
        nmt_adam_free(a);
        return -1;
    }
    return 0;
}

void nmt_adam_free(nmt_adam *a) {
    free(a->m);
    free(a->v);
    free(a->block_sums);
    memset(a, 0, sizeof *a);
}

int nmt_adam_keep_slice(nmt_adam *a, size_t lo, size_t hi) {
    if (lo > hi || hi > a->n || a->lo != 0 || a->hi != a->n)
        return nmt_error_set("optimizer: slice [%zu, %zu) of %zu parameters (already a slice: [%zu, %zu))", lo, hi, a->n,
                             a->lo, a->hi);
    size_t count = hi - lo ? hi - lo : 1;
    float *m = nmt_malloc(count * sizeof *m), *v = nmt_malloc(count * sizeof *v);
    if (!m || !v) {
        free(m);
        free(v);
        return -1;
    }
    memcpy(m, a->m + lo, (hi - lo) * sizeof *m);
    memcpy(v, a->v + lo, (hi - lo) * sizeof *v);
    free(a->m);
    free(a->v);
    a->m = m;
    a->v = v;
    a->lo = lo;
    a->hi = hi;
    return 0;
}

double nmt_lr_at(const nmt_lr_schedule *s, long step) {
    if (step < s->warmup) return s->lr * (double)step / (double)s->warmup;
    if (s->decay == NMT_LR_INVERSE_SQRT) return s->warmup > 0 ? s->lr * sqrt((double)s->warmup / (double)step) : s->lr;
    if (step >= s->decay_steps) return s->min_lr;
    double done = (double)(step - s->warmup) / (double)(s->decay_steps - s->warmup); /* in [0, 1) */
    double left = s->decay == NMT_LR_LINEAR ? 1.0 - done : 0.5 * (1.0 + cos(M_PI * done));
    return s->min_lr + (s->lr - s->min_lr) * left;
}

double nmt_clip_factor(double norm, double max_norm) {
    if (max_norm <= 0 || !(norm > max_norm)) return 1.0;
    return max_norm / norm;
}

typedef struct norm_task {
    nmt_adam *adam;
    const float *grads;
} norm_task;

static void norm_blocks(void *ctx, long begin, long end) {
    norm_task *t = ctx;
    for (long k = begin; k < end; k++) {
        size_t lo = (size_t)k * BLOCK, hi = lo + BLOCK < t->adam->n ? lo + BLOCK : t->adam->n;
        double sum = 0;
        for (size_t i = lo; i < hi; i++) sum += (double)t->grads[i] * t->grads[i];
        t->adam->block_sums[k] = sum;
    }
}

double nmt_adam_grad_norm(nmt_adam *a, const float *grads) {
    norm_task t = {a, grads};
    nmt_pool_for(a->num_blocks, 1, norm_blocks, &t);
    double sum = 0;
    for (long k = 0; k < a->num_blocks; k++) sum += a->block_sums[k];
    return sqrt(sum);
}

typedef struct update_task {
    nmt_adam *adam;
    float *params, *grads;
    float grad_scale, beta1, beta2, one_minus_beta1, one_minus_beta2;
    float keep;           /* 1 - lr wd: the share of each parameter that weight decay keeps */
    float step_size;      /* lr / (1 - b1^t) */
    float inv_bc2_sqrt;   /* 1 / sqrt(1 - b2^t) */
    float eps;
} update_task;

/* Units of BLOCK parameters of the slice, [begin, end) counted from its first parameter, where p,
 * g, m and v start. */
static void update_range(void *ctx, long begin, long end) {
    const update_task *t = ctx;
    const size_t lo = (size_t)begin, hi = (size_t)end;
    float *restrict p = t->params + t->adam->lo, *restrict g = t->grads + t->adam->lo, *restrict m = t->adam->m,
                    *restrict v = t->adam->v;
    for (size_t i = lo; i < hi; i++) {
        float gi = g[i] * t->grad_scale;
        m[i] = t->beta1 * m[i] + t->one_minus_beta1 * gi;
        v[i] = t->beta2 * v[i] + t->one_minus_beta2 * gi * gi;
        p[i] = p[i] * t->keep - t->step_size * m[i] / (sqrtf(v[i]) * t->inv_bc2_sqrt + t->eps);
        g[i] = 0.0f;
    }
}

void nmt_adam_update(nmt_adam *a, float *params, float *grads, double lr, double grad_scale) {
    a->step++;
    double bc1 = 1.0 - pow(a->beta1, (double)a->step), bc2 = 1.0 - pow(a->beta2, (double)a->step);
    update_task t = {
        .adam = a,
        .params = params,
        .grads = grads,
        .grad_scale = (float)grad_scale,
        .beta1 = (float)a->beta1,
        .beta2 = (float)a->beta2,
        .one_minus_beta1 = (float)(1.0 - a->beta1),
        .one_minus_beta2 = (float)(1.0 - a->beta2),
        .keep = (float)(1.0 - lr * a->weight_decay),
        .step_size = (float)(lr / bc1),
        .inv_bc2_sqrt = (float)(1.0 / sqrt(bc2)),
        .eps = (float)a->eps,
    };
    nmt_pool_for((long)(a->hi - a->lo), BLOCK, update_range, &t);
    memset(grads, 0, a->lo * sizeof *grads);
    memset(grads + a->hi, 0, (a->n - a->hi) * sizeof *grads);
}
