/* ema: the moving average of the weights, updated and swapped in on the pool. */
#include "train/ema.h"
#include "compute/pool.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* Parameters per block: large enough to amortise a task, small enough to balance two threads. */
enum { BLOCK = 1 << 14 };

int nmt_ema_init(nmt_ema *e, const float *params, size_t n, double decay) {
    memset(e, 0, sizeof *e);
    e->n = n;
    e->decay = decay;
    if (decay <= 0) return 0;
    e->weights = nmt_malloc(n * sizeof *e->weights);
    if (!e->weights) return -1;
    memcpy(e->weights, params, n * sizeof *e->weights);
    return 0;
}

void nmt_ema_free(nmt_ema *e) {
    free(e->weights);
    memset(e, 0, sizeof *e);
}

double nmt_ema_decay_at(double decay, long step) {
    double warm = (1.0 + (double)step) / (10.0 + (double)step);
    return warm < decay ? warm : decay;
}

typedef struct ema_task {
    nmt_ema *ema;
    float *params;
    float keep, take; /* d_t, 1 - d_t */
} ema_task;

/* Units of BLOCK parameters, [begin, end) of the parameter buffer. */
static void update_range(void *ctx, long begin, long end) {
    const ema_task *t = ctx;
    float *restrict w = t->ema->weights;
    const float *restrict p = t->params;
    for (long i = begin; i < end; i++) w[i] = t->keep * w[i] + t->take * p[i];
}

static void swap_range(void *ctx, long begin, long end) {
    const ema_task *t = ctx;
    float *restrict w = t->ema->weights, *restrict p = t->params;
    for (long i = begin; i < end; i++) {
        float x = w[i];
        w[i] = p[i];
        p[i] = x;
    }
}

void nmt_ema_update(nmt_ema *e, const float *params, long step) {
    if (!e->weights) return;
    double d = nmt_ema_decay_at(e->decay, step);
    ema_task t = {e, (float *)params, (float)d, (float)(1.0 - d)};
    nmt_pool_for((long)e->n, BLOCK, update_range, &t);
}

void nmt_ema_swap(nmt_ema *e, float *params) {
    if (!e->weights) return;
    ema_task t = {e, params, 0, 0};
    nmt_pool_for((long)e->n, BLOCK, swap_range, &t);
}
