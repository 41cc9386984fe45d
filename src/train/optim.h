/* optim: Adam on the model's contiguous parameter and gradient buffers, the learning-rate schedule,
 * and global gradient-norm clipping.
 *
 * Adam (Kingma & Ba 2015), in PyTorch's form so runs compare with torch.optim.Adam:
 *     m = b1 m + (1 - b1) g        v = b2 v + (1 - b2) g^2
 *     p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
 * where g = grad_scale * grads: the trainer accumulates summed (not averaged) gradients over the
 * micro-batches of a step and passes 1/tokens times the clipping factor here, so normalising and
 * clipping cost no extra pass. The update also zeroes the gradients for the next step.
 *
 * Schedule (Vaswani et al. 2017, peak-normalised): lr(t) = lr * t / warmup for t <= warmup, then
 * lr * sqrt(warmup / t); warmup = 0 means a constant lr. Steps count from 1.
 *
 * Slice (ZeRO stage 1, nmt_adam_keep_slice): an optimizer may keep the moments of parameters [lo, hi)
 * only and update just those; each element's arithmetic is the same, so the slices of several ranks
 * together give the bits of one whole update.
 *
 * Threads: both passes run on the pool (nmt_pool_for) over fixed blocks of parameters,
 * and the norm adds per-block partial sums in block order, so results do not depend on the thread
 * count. Nothing is allocated after nmt_adam_init.
 */
#ifndef NMT_OPTIM_H
#define NMT_OPTIM_H

#include <stddef.h>

typedef struct nmt_adam {
    size_t n;            /* parameters */
    size_t lo, hi;       /* the slice it updates ([0, n) unless nmt_adam_keep_slice) */
    float *m;            /* [hi - lo] first moments of parameters lo.. */
    float *v;            /* [hi - lo] second moments */
    double beta1, beta2, eps;
    long step;           /* updates done so far (t of the last update) */
    double *block_sums;  /* [num_blocks] scratch for the gradient norm */
    long num_blocks;
} nmt_adam;

int nmt_adam_init(nmt_adam *adam, size_t n, double beta1, double beta2, double eps);
void nmt_adam_free(nmt_adam *adam);
/* Keeps the moments of parameters [lo, hi) only (of a whole optimizer), from now on updating those. */
int nmt_adam_keep_slice(nmt_adam *adam, size_t lo, size_t hi);

/* The learning rate of step t (1-based). */
double nmt_lr_at(double lr, long warmup, long step);

/* sqrt(sum grads^2) over the n gradients, in double. */
double nmt_adam_grad_norm(nmt_adam *adam, const float *grads);

/* The factor that brings a gradient of norm `norm` down to max_norm (1 when it is within it or
 * clipping is off, max_norm <= 0). */
double nmt_clip_factor(double norm, double max_norm);

/* One update of the slice's parameters with learning rate lr on g = grad_scale * grads; increments
 * adam->step; zeroes all n grads. */
void nmt_adam_update(nmt_adam *adam, float *params, float *grads, double lr, double grad_scale);

#endif
