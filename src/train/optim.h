/* optim: Adam on the model's contiguous parameter and gradient buffers, the learning-rate schedule,
 * and global gradient-norm clipping.
 *
 * Adam (Kingma & Ba 2015), in PyTorch's form so runs compare with torch.optim.Adam:
 *     m = b1 m + (1 - b1) g        v = b2 v + (1 - b2) g^2
 *     p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
 * where g = grad_scale * grads: the trainer accumulates summed (not averaged) gradients over the
 * micro-batches of a step and passes 1/tokens times the clipping factor here, so normalising and
 * clipping cost no extra pass. The update also zeroes the gradients for the next step.
 * With weight decay wd > 0 it is AdamW (Loshchilov & Hutter 2019) as torch.optim.AdamW computes it:
 * p *= 1 - lr wd first, on every parameter (fairseq's --weight-decay; embeddings, biases and LayerNorm
 * gains alike), decoupled from the gradient so Adam's per-parameter scaling does not weaken it. At
 * wd = 0 the factor is exactly 1 and the update's bits are plain Adam's.
 *
 * Schedule: a linear warm-up to the peak lr at step `warmup` (none when warmup = 0), then one of
 *   inverse_sqrt  lr * sqrt(warmup / t) (Vaswani et al. 2017, peak-normalised; constant when warmup = 0)
 *   linear        straight down to min_lr at step decay_steps        (fairseq's polynomial_decay, power 1)
 *   cosine        half a cosine down to min_lr at step decay_steps   (Loshchilov & Hutter 2017, one cycle)
 * and min_lr after decay_steps. A schedule that ends suits a fixed budget: the rate reaches its floor
 * as the steps the budget allows run out, instead of staying at a fraction of its peak. The rate is a
 * function of the step alone, so a resumed run, any thread count and any rank count follow it exactly.
 * Steps count from 1.
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
    double weight_decay; /* decoupled (AdamW), 0 = plain Adam; 0 after nmt_adam_init, set by the caller */
    long step;           /* updates done so far (t of the last update) */
    double *block_sums;  /* [num_blocks] scratch for the gradient norm */
    long num_blocks;
} nmt_adam;

int nmt_adam_init(nmt_adam *adam, size_t n, double beta1, double beta2, double eps);
void nmt_adam_free(nmt_adam *adam);
/* Keeps the moments of parameters [lo, hi) only (of a whole optimizer), from now on updating those. */
int nmt_adam_keep_slice(nmt_adam *adam, size_t lo, size_t hi);

typedef enum { NMT_LR_INVERSE_SQRT, NMT_LR_LINEAR, NMT_LR_COSINE } nmt_lr_decay;

typedef struct nmt_lr_schedule {
    double lr;          /* the peak rate, reached at step warmup */
    long warmup;        /* linear warm-up steps (0 = start at the peak) */
    nmt_lr_decay decay; /* the shape after the warm-up */
    long decay_steps;   /* linear, cosine: the step (counted from 1, warm-up included) where min_lr is reached;
                           must exceed warmup */
    double min_lr;      /* linear, cosine: the floor */
} nmt_lr_schedule;

/* The learning rate of step t (1-based). */
double nmt_lr_at(const nmt_lr_schedule *schedule, long step);

/* sqrt(sum grads^2) over the n gradients, in double. */
double nmt_adam_grad_norm(nmt_adam *adam, const float *grads);

/* The factor that brings a gradient of norm `norm` down to max_norm (1 when it is within it or
 * clipping is off, max_norm <= 0). */
double nmt_clip_factor(double norm, double max_norm);

/* One update of the slice's parameters with learning rate lr on g = grad_scale * grads; increments
 * adam->step; zeroes all n grads. */
void nmt_adam_update(nmt_adam *adam, float *params, float *grads, double lr, double grad_scale);

#endif
