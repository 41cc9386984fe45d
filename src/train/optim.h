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
 * Threads: both passes run on the pool (nmt_pool_for) over fixed blocks of parameters,
 * and the norm adds per-block partial sums in block order, so results do not depend on the thread
 * count. Nothing is allocated after nmt_adam_init.
 */
#ifndef NMT_OPTIM_H
#define NMT_OPTIM_H

#include <stddef.h>

typedef struct nmt_adam {
    size_t n;            /* parameters */
    float *m;            /* [n] first moments */
    float *v;            /* [n] second moments */
    double beta1, beta2, eps;
    long step;           /* updates done so far (t of the last update) */
    double *block_sums;  /* [num_blocks] scratch for the gradient norm */
    long num_blocks;
} nmt_adam;

int nmt_adam_init(nmt_adam *adam, size_t n, double beta1, double beta2, double eps);
void nmt_adam_free(nmt_adam *adam);

/* The learning rate of step t (1-based). */
double nmt_lr_at(double lr, long warmup, long step);

/* sqrt(sum grads^2) over the n gradients, in double. */
double nmt_adam_grad_norm(nmt_adam *adam, const float *grads);

/* The factor that brings a gradient of norm `norm` down to max_norm (1 when it is within it or
 * clipping is off, max_norm <= 0). */
double nmt_clip_factor(double norm, double max_norm);

/* One update with learning rate lr on g = grad_scale * grads; increments adam->step; zeroes grads. */
void nmt_adam_update(nmt_adam *adam, float *params, float *grads, double lr, double grad_scale);

#endif
