/* ema: an exponential moving average of the model's weights (Marian's exponential smoothing, Polyak
 * averaging), kept beside the weights Adam trains and used wherever the run shows or saves a model:
 * validation, model.safetensors and the checkpoints' "ema.<name>" tensors.
 *
 *     ema = d_t ema + (1 - d_t) params        d_t = min(decay, (1 + t) / (10 + t))
 *
 * after update t (1-based). The warm-up of d_t (as TensorFlow's ExponentialMovingAverage with
 * num_updates) keeps the random initial weights from dominating the average of a short run: at
 * t = 10 the average already forgets 45% per update, at t = 1,000 1%, and only from
 * t = 9 / (1 - decay) - 1 on does `decay` hold.
 *
 * Threads: one pass on the pool over fixed blocks; every element is computed alone, so the average
 * does not depend on the thread count. Nothing is allocated after nmt_ema_init.
 */
#ifndef NMT_EMA_H
#define NMT_EMA_H

#include <stddef.h>

typedef struct nmt_ema {
    size_t n;        /* parameters */
    float *weights;  /* [n] the average; NULL when the average is off */
    double decay;    /* train.ema_decay, in (0, 1); 0 = off */
} nmt_ema;

/* An average of n parameters starting at `params`, or an empty one (weights NULL) when decay is 0. */
int nmt_ema_init(nmt_ema *ema, const float *params, size_t n, double decay);
void nmt_ema_free(nmt_ema *ema);

/* The decay of update `step` (1-based): d_t above. */
double nmt_ema_decay_at(double decay, long step);

/* Folds the parameters after update `step` into the average (nothing when off). */
void nmt_ema_update(nmt_ema *ema, const float *params, long step);

/* Exchanges the average and the parameters in place: called twice, it restores both exactly, so a
 * validation or a save can run on the averaged weights between two calls (nothing when off). */
void nmt_ema_swap(nmt_ema *ema, float *params);

#endif
