/* train: the training loop of `nmt train`, from a resolved config to a model directory.
 *
 * The output directory becomes a model directory that `nmt translate -m DIR` reads directly:
 *   model.safetensors   the best model by validation BLEU (ties broken by validation loss); without a
 *                       validation set, the latest
 *   spm.model           the SentencePiece model (vocab.model copied, or trained at the first run)
 *   config.yaml         the resolved config of the latest run
 *   train.log.jsonl     one JSON object a line:
 *                       {"event":"train","step":..,"epoch":..,"loss":..,"lr":..,"tokens_per_s":..,"elapsed_s":..,
 *                        "grad_norm":.. (the last step's, before clipping),"time":"2026-12-01T08:30:00Z" (UTC)},
 *                       {"event":"valid","step":..,"loss":..,"ppl":..,"bleu":..,"elapsed_s":..},
 *                       {"event":"start"|"resume","step":..,"elapsed_s":..,"time":..} when a run begins and
 *                       {"event":"stop","step":..,"reason":R,["error":MESSAGE,]"elapsed_s":..,"time":..} when
 *                       it ends, R one of max_steps, max_epochs, max_minutes, patience, signal, error
 *   checkpoints/        step-00001234.safetensors, the newest keep_last
 *   corpus-*.bin        the encoded corpora (a cache; deleting it only costs re-encoding)
 * Every file except the log is written atomically; the log is appended a line at a time and, on
 * resume, rewritten to hold only the lines up to the checkpoint's step.
 *
 * Resume. When the directory holds a checkpoint, training continues from the newest readable one and
 * the result is bit-identical to a run that was never interrupted (with the same thread count): the
 * checkpoint stores parameters, Adam moments, the data position and the log accumulators, and
 * everything random is a pure function of (seed, step) or (seed, epoch). The train section may change
 * between runs (e.g. a larger max_steps); a change of the data, the batching or the optimizer is
 * used and named in a warning (the run is then no longer bit-identical); a different model section or
 * vocabulary (vocab.size, another spm.model, even of the same size) is refused. The checks come
 * before any file is written: a refused run leaves the directory as it was.
 *
 * A fresh start (no usable checkpoint) in a directory that already holds model.safetensors or
 * checkpoints (all damaged) is refused unless options->overwrite: it would replace that model. A
 * directory holding only a log (a run killed before its first checkpoint) starts again. Damaged
 * checkpoints after the one resumed are set aside (NAME.damaged). options->overwrite starts again
 * even where a checkpoint could be resumed, deleting what the old run made.
 *
 * Fine-tuning. train.init_from: MODEL_DIR starts a fresh run (step 0, new optimizer, schedule and
 * data) from MODEL_DIR/model.safetensors with MODEL_DIR/spm.model as its vocabulary; a model section
 * of another architecture (dropout aside) or a vocab.model other than that vocabulary is refused.
 * Once the run has a checkpoint, resuming ignores init_from.
 *
 * A step: update_freq batches, each split into batch_pieces pieces whose forward + backward give
 * summed gradients, the pieces added exactly (train/dist.h), then one Adam update with the gradient
 * divided by the step's target tokens and clipped to clip_norm.
 *
 * Ranks. With options->comm of N > 1 processes (mpirun) each computes its share of every step's pieces
 * and the result is bit for bit that of one process: rank 0 alone writes the output directory, logs,
 * validates and decides when to stop; the others receive the vocabulary and the (resumed) state from
 * it and must read the same settings and training data (refused otherwise, naming the rank and host).
 * A rank whose nmt_train fails must end the run (nmt_comm_abort): the others wait for it.
 *
 * Validation every valid_every steps and when training ends: label-smoothed loss and perplexity
 * (teacher forcing), and BLEU of greedy (valid_beam 1) or beam decoding (with valid_length_penalty),
 * computed as `nmt bleu` computes it. A train log line every min(100, valid_every/5) steps (at least 1), averaged over those
 * steps.
 *
 * Stops at the first of max_steps, max_epochs, max_minutes (training time summed over all runs, checked
 * every step; wall-clock, or with budget_clock cpu the CPU time the run was given over its threads), patience (validations without improvement), or a stop request (the CLI's
 * SIGINT/SIGTERM handler sets *stop): the current step finishes, a checkpoint is written, and
 * nmt_train returns 0.
 */
#ifndef NMT_TRAIN_H
#define NMT_TRAIN_H

#include <signal.h>
#include <stdio.h>

#include "base/comm.h"
#include "compute/packed.h"
#include "train/config.h"
#include "model/model.h"

typedef struct nmt_train_options {
    int threads;                 /* kernel threads (2) */
    FILE *progress;              /* progress lines and the effective config (stderr); NULL = quiet */
    FILE *warnings;              /* warnings, e.g. a damaged checkpoint skipped (stderr); may be NULL */
    volatile sig_atomic_t *stop; /* nonzero = stop after the current step (may be NULL) */
    nmt_comm *comm;              /* the ranks of a data-parallel run (NULL = this process alone) */
    int overwrite;               /* start again, replacing what the directory holds (--overwrite) */
} nmt_train_options;

typedef struct nmt_train_result {
    long step;              /* optimizer steps done, over all runs */
    long epoch;             /* epoch of the last batch */
    double loss;            /* label-smoothed train loss per token, over the last logged steps */
    double best_bleu;       /* -1 without a validation set */
    long best_step;
    long resumed_from;      /* the checkpoint step resumed from (-1 = fresh start) */
    const char *stopped_by; /* "max_steps", "max_epochs", "max_minutes", "patience" or "signal" */
} nmt_train_result;

int nmt_train(const nmt_config *config, const nmt_train_options *options, nmt_train_result *result);

/* Training throughput on the config's real batches (`nmt bench train CONFIG`): warmup_steps steps,
 * then `steps` measured ones, each exactly a step of nmt_train (forward, backward, gradient norm,
 * Adam) on the batches a fresh run would see, from freshly initialised weights. Nothing in the
 * config's output directory is written: the encoded corpus lives in a temporary directory removed
 * at the end, and the vocabulary is the output directory's spm.model when a run left one there
 * (else vocab.model, else one trained into the temporary directory first). Validation is skipped. */
typedef struct nmt_train_bench_result {
    long steps;                 /* measured steps */
    double seconds;             /* their wall-clock time */
    double fastest_step_s;
    double fastest_step_flops;  /* the FLOPs of that step (batches differ in size) */
    long target_tokens;         /* non-pad target tokens of the measured steps */
    long source_tokens;         /* non-pad source tokens */
    long sentences;
    double flops;               /* nmt_model_flops summed over their batches */
    nmt_model_timing timing;    /* forward/backward seconds per stage over the measured steps */
    double optimizer_s;         /* gradient norm + Adam, over the measured steps */
    double reduce_s;            /* summing the step's pieces after the backward (exact sum, all-reduces included;
                                 * with buckets only what the backward did not hide) */
    double comm_s;              /* waiting in all-reduces (transfer and slower ranks), in the backward or after */
    double skew_s;              /* of reduce_s, waiting for the slowest rank to end its backward */
    int ranks;                  /* processes of the run */
    nmt_precision precision;    /* of the products (train.precision as resolved on this CPU) */
    int buckets;                /* buckets of the all-reduce overlapped with the backward (0: none) */
    double first_loss, last_loss; /* label-smoothed loss per token of the first and last step */
    int vocab_size;
} nmt_train_bench_result;

int nmt_train_bench(const nmt_config *config, const nmt_train_options *options, long warmup_steps, long steps,
                    nmt_train_bench_result *result);
/* Adds one measured step to *result (for benchmarks that drive the model themselves). */
void nmt_train_bench_record(nmt_train_bench_result *result, double seconds, const nmt_loss *loss, long source_tokens,
                            long sentences, double flops);

#endif
