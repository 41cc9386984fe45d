/* train: setup (vocabulary, corpora, model, resume), the step loop, validation, logging, saving. */
#include "train/train.h"
#include "train/batch.h"
#include "eval/bleu.h"
#include "train/checkpoint.h"
#include "base/comm.h"
#include "train/dist.h"
#include "train/ema.h"
#include "train/corpus.h"
#include "train/output_dir.h"
#include "train/precision.h"
#include "train/train_data.h"
#include "train/train_log.h"
#include "base/hash.h"
#include "base/io.h"
#include "base/json.h"
#include "compute/gemm.h"
#include "compute/pool.h"
#include "model/model.h"
#include "model/model_file.h"
#include "train/optim.h"
#include "text/spm.h"
#include "infer/translator.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct trainer {
    const nmt_config *cfg;
    nmt_comm *comm;          /* the run's ranks; rank 0 owns the output directory, logs and validates */
    nmt_comm local_comm;     /* when the caller gives none */
    int root;                /* comm->rank == 0 */
    nmt_dist dist;           /* this rank's pieces of a step and their exact sum */
    FILE *progress, *warnings;
    char *ckpt_dir, *log_path, *model_path, *spm_path;
    char *init_model, *init_spm; /* train.init_from's files (fresh runs only), or NULL */
    int lock_fd;
    char *created;           /* the directory this run created for output (removed if it is refused at start) */
    nmt_spm *spm;
    uint64_t spm_hash;
    nmt_corpus train, valid;
    char **references;       /* [valid.num_pairs] target lines of the validation set */
    nmt_bleu *bleu;          /* the validation BLEU scorer */
    nmt_batcher batches, valid_batches;
    nmt_train_sampler sampler; /* the training corpus's subword sampling, with vocab.sampling_alpha */
    nmt_model model;
    int model_created;
    nmt_adam adam;           /* with train.shard_optimizer on several ranks, this rank's slice (dist.h) */
    nmt_lr_schedule schedule; /* the learning rate of every step, from train.optimizer */
    nmt_ema ema;             /* the weights' moving average (rank 0 keeps it; off without train.ema_decay) */
    nmt_train_state state;
    long resumed_from;
    int data_settings_warned; /* a resume already named a changed data.train or data.max_length */
    nmt_train_log log;       /* train.log.jsonl, appended (rank 0; others leave it closed) */
    int log_every;
    double run_start;        /* budget_now() when this run's loop started */
    double elapsed_base;     /* state.elapsed_s at that moment */
    double interval_start;   /* for tokens/s and ETA: time and tokens since the last log line */
    long interval_tokens, interval_steps;
    double interval_wait;    /* comm->wait_s at interval_start */
    long last_saved_step;
    long model_step;          /* the step whose weights this process wrote to model.safetensors (-1: none) */
    double last_loss;
    double last_grad_norm;   /* of the last step, before clipping (logged on train lines) */
    nmt_precision precision; /* of the products: train.precision as resolved here (products_precision) */
    char precision_why[768]; /* what decided it, for the log ("" for fp32 as set) */
    /* the last step's work, for `nmt bench train` */
    double step_flops, step_optimizer_s, step_wait_s;
    long step_src_tokens, step_sentences;
    int32_t *twins;          /* with train.rdrop_alpha: a piece twice over, its src, tgt_in, tgt_out rows */
    size_t twins_capacity;   /* ids it holds */
} trainer;

static void say(const trainer *t, const char *fmt, ...) NMT_PRINTF(2, 3);
static void say(const trainer *t, const char *fmt, ...) {
    if (!t->progress) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(t->progress, fmt, ap);
    va_end(ap);
    fflush(t->progress);
}

/* ---- vocabulary and corpora ---- */

static int prepare_vocabulary(trainer *t, int resuming) {
    if (nmt_train_data_vocabulary(t->cfg, t->spm_path, t->init_spm, resuming, t->progress, &t->spm) < 0) return -1;
    t->spm_hash = nmt_spm_fingerprint(t->spm);
    return 0;
}

static int prepare_corpora(trainer *t) {
    const nmt_config *cfg = t->cfg;
    /* Rank 0 alone writes the output directory, caches included. */
    const int sampling = cfg->sampling_alpha > 0;
    if (nmt_train_data_corpora(cfg, &t->train, sampling, t->spm, t->root, t->progress) < 0 ||
        (sampling && nmt_train_data_sampler(&t->sampler, cfg, &t->train, t->spm, t->state.seed) < 0))
        return -1;
    /* The key the checkpoint recorded differing: the text changed under the same names (a changed
     * data.train or data.max_length was named already). */
    if (t->state.train_data_key && t->state.train_data_key != t->train.key && t->warnings && !t->data_settings_warned)
        fprintf(t->warnings, "warning: data.train (%s, %s%s) is not the text the run being resumed was trained on (or "
                             "data.max_length or a weight changed): the continuation is not bit-identical to an "
                             "uninterrupted run\n",
                cfg->train[0].src, cfg->train[0].tgt, nmt_config_more_corpora(cfg));
    t->state.train_data_key = t->train.key;
    if (t->train.num_pairs == 0)
        return nmt_error_set("%s and %s%s hold no usable sentence pairs (all empty or longer than %d pieces)",
                             cfg->train[0].src, cfg->train[0].tgt, nmt_config_more_corpora(cfg),
                             cfg->max_length);
    if (nmt_batcher_init_resampled(&t->batches, &t->train, cfg->batch_tokens, t->state.seed, 1,
                                   sampling ? nmt_train_data_resample : NULL, &t->sampler) < 0)
        return -1;
    if (!cfg->valid.src || !t->root) return 0; /* rank 0 validates */
    /* Validation keeps every line, so hypotheses and references stay aligned. */
    if (nmt_train_data_corpus(cfg, &t->valid, &cfg->valid, "corpus-valid.bin", 0, 0, 0, t->spm, t->root,
                              t->progress) < 0 ||
        nmt_train_data_references(cfg->valid.tgt, t->valid.num_pairs, &t->references) < 0)
        return -1;
    if (t->valid.num_pairs == 0) return nmt_error_set("%s: the validation set is empty", cfg->valid.src);
    nmt_bleu_options bleu_options = nmt_bleu_options_default();
    if (!(t->bleu = nmt_bleu_create(&bleu_options))) return -1;
    return nmt_batcher_init(&t->valid_batches, &t->valid, cfg->batch_tokens, 0, 0);
}

/* ---- model, resume ---- */

static int prepare_model(trainer *t, const nmt_st_file *ckpt, const char *ckpt_path) {
    const nmt_config *cfg = t->cfg;
    nmt_model_config mc = cfg->model;
    mc.vocab_size = nmt_spm_vocab_size(t->spm);
    if (nmt_model_config_check(&mc) < 0) return -1;
    if (mc.output_bias || !mc.source_eos || mc.activation != NMT_ACTIVATION_RELU || mc.embedding_norm)
        return nmt_error_set("model.output_bias 1, model.source_eos 0, model.activation other than relu and "
                             "model.embedding_norm 1 are for imported models: training does not implement them");
    if (ckpt && nmt_checkpoint_check_config(ckpt, ckpt_path, &mc) < 0) return -1;
    if (ckpt) {
        uint64_t recorded;
        if (nmt_model_fingerprint_read(ckpt, ckpt_path, &recorded) < 0 ||
            nmt_model_check_vocab(recorded, ckpt_path, nmt_spm_fingerprint(t->spm), t->spm_path) < 0)
            return -1;
    }
    if (nmt_model_init(&t->model, &mc) < 0)
        return nmt_error_prefix("creating the model (%zu parameters; model.d_model, model.ffn and the layer counts set "
                                "its size)", nmt_model_param_count(&mc));
    t->model_created = 1;
    if (nmt_model_zero_grads(&t->model) < 0) return -1;
    t->model.vocab_fingerprint = nmt_spm_fingerprint(t->spm);
    if (nmt_adam_init(&t->adam, t->model.num_params, cfg->beta1, cfg->beta2, cfg->adam_eps) < 0) return -1;
    t->adam.weight_decay = cfg->weight_decay;
    t->schedule = (nmt_lr_schedule){.lr = cfg->lr, .warmup = cfg->warmup, .decay = (nmt_lr_decay)cfg->lr_schedule,
                                     .decay_steps = cfg->decay_steps, .min_lr = cfg->min_lr};
    if (!ckpt) {
        nmt_model_init_weights(&t->model, t->state.seed);
        if (t->init_model && nmt_model_init_from(&t->model, t->init_model) < 0) return -1;
    }
    if (nmt_ema_init(&t->ema, t->model.params, t->model.num_params, t->root ? cfg->ema_decay : 0) < 0) return -1;
    if (!ckpt) return 0;
    int restored = nmt_checkpoint_restore(ckpt, ckpt_path, &t->model, &t->adam, t->ema.weights);
    if (restored == 1 && t->warnings)
        fprintf(t->warnings, "warning: %s holds no average of the weights (it was saved without train.ema_decay): the "
                             "average starts from its weights\n", ckpt_path);
    return restored < 0 ? -1 : 0;
}

/* model.safetensors: the weights' average when the run keeps one. */
static int save_best_model(trainer *t) {
    nmt_ema_swap(&t->ema, t->model.params);
    int rc = nmt_model_save(&t->model, t->model_path);
    nmt_ema_swap(&t->ema, t->model.params);
    return rc;
}

/* Rank 0's; a sharded run's moments are those of the last nmt_dist_gather_moments. */
static int save_checkpoint(trainer *t) {
    nmt_adam whole;
    if (nmt_train_log_sync(&t->log) < 0 || nmt_dist_whole_adam(&t->dist, &t->adam, &whole) < 0) return -1;
    int rc = nmt_checkpoint_save(t->cfg->output, &t->model, &whole, t->ema.weights, &t->state, t->cfg->keep_last);
    nmt_dist_drop_moments(&t->dist);
    if (rc < 0 || (!t->cfg->valid.src && save_best_model(t) < 0)) return -1;
    t->last_saved_step = t->state.step;
    if (!t->cfg->valid.src) t->model_step = t->state.step;
    return 0;
}

/* ---- one step ---- */

/* R-Drop's batch: `piece` followed by itself, in t->twins (grown only when an epoch brings a larger batch). */
static int twice_over(trainer *t, nmt_batch *piece) {
    size_t src = (size_t)piece->batch * piece->src_len, tgt = (size_t)piece->batch * piece->tgt_len;
    size_t need = 2 * (src + 2 * tgt);
    if (need > t->twins_capacity) {
        int32_t *grown = realloc(t->twins, need * sizeof(int32_t));
        if (!grown) return nmt_error_set("out of memory for R-Drop's doubled batch (%zu ids)", need);
        t->twins = grown;
        t->twins_capacity = need;
    }
    const int32_t *rows[3] = {piece->src, piece->tgt_in, piece->tgt_out};
    int32_t *twin[3] = {t->twins, t->twins + 2 * src, t->twins + 2 * (src + tgt)};
    for (int k = 0; k < 3; k++) {
        size_t n = k ? tgt : src;
        memcpy(twin[k], rows[k], n * sizeof(int32_t));
        memcpy(twin[k] + n, rows[k], n * sizeof(int32_t));
    }
    *piece = (nmt_batch){2 * piece->batch, piece->src_len, piece->tgt_len, twin[0], twin[1], twin[2]};
    return 0;
}

/* Forward + backward of rows [lo, hi) of a batch (piece p of the step) into the gradients, told to hook. */
static int piece_step(trainer *t, const nmt_batch *batch, int lo, int hi, long step, int p,
                      const nmt_grad_hook *hook, double slots[NMT_DIST_SLOTS]) {
    nmt_batch piece = *batch;
    piece.batch = hi - lo;
    piece.src += (size_t)lo * batch->src_len;
    piece.tgt_in += (size_t)lo * batch->tgt_len;
    piece.tgt_out += (size_t)lo * batch->tgt_len;
    if (t->cfg->rdrop_alpha > 0 && twice_over(t, &piece) < 0) return nmt_error_prefix("step %ld", step);
    nmt_forward_options fo = {.training = 1,
                              .label_smoothing = (float)t->cfg->label_smoothing,
                              .dropout_seed = nmt_dist_piece_seed(t->state.seed, step, p),
                              .dropout_src = (float)t->cfg->dropout_src,
                              .dropout_trg = (float)t->cfg->dropout_trg,
                              .rdrop_alpha = (float)t->cfg->rdrop_alpha};
    nmt_loss loss;
    if (nmt_model_forward(&t->model, &piece, &fo, &loss) < 0 || nmt_model_backward_hooked(&t->model, 1.0f, hook) < 0) {
        if (strstr(nmt_error(), "out of memory")) /* the batch's activations: say what sizes them */
            return nmt_error_prefix("step %ld, a batch of %d sentences of up to %d source and %d target tokens "
                                    "(train.batch_tokens %d sets its size; lower it)",
                                    step, piece.batch, piece.src_len, piece.tgt_len, t->cfg->batch_tokens);
        return nmt_error_prefix("step %ld", step);
    }
    slots[NMT_DIST_LOSS] = loss.loss_sum;
    slots[NMT_DIST_NLL] = loss.nll_sum;
    slots[NMT_DIST_TOKENS] = (double)loss.tokens;
    nmt_dist_count(&t->model.config, &piece, slots);
    return 0;
}

/* One optimizer step: this rank's pieces of the step's update_freq batches, the exact sum over all
 * ranks, then the same Adam update on every rank. */
static int train_step(trainer *t, nmt_loss *sum) {
    const nmt_config *cfg = t->cfg;
    nmt_dist *d = &t->dist;
    long step = t->state.step + 1;
    double wait_start = t->comm->wait_s;
    for (int k = 0, local = 0; k < cfg->update_freq; k++) {
        nmt_batch batch;
        long tokens;
        if (nmt_batcher_next(&t->batches, &batch, &tokens) < 0) return -1; /* every rank walks the same plan */
        for (int j = 0; j < d->batch_pieces; j++) {
            int p = k * d->batch_pieces + j, lo, hi;
            if (!nmt_dist_owns(d, p)) continue;
            nmt_dist_piece_rows(batch.batch, d->batch_pieces, j, &lo, &hi);
            double slots[NMT_DIST_SLOTS] = {0};
            if (hi > lo && piece_step(t, &batch, lo, hi, step, p, nmt_dist_hook(d, local), slots) < 0) return -1;
            nmt_dist_hold(d, local++, t->model.grads, p, slots);
        }
    }
    double totals[NMT_DIST_SLOTS];
    int finite;
    if (nmt_dist_reduce(d, t->model.grads, totals, &finite) < 0) return nmt_error_prefix("step %ld", step);
    *sum = (nmt_loss){.loss_sum = totals[NMT_DIST_LOSS], .nll_sum = totals[NMT_DIST_NLL],
                      .tokens = (long)totals[NMT_DIST_TOKENS]};
    t->step_flops = totals[NMT_DIST_FLOPS];
    t->step_src_tokens = (long)totals[NMT_DIST_SRC_TOKENS];
    t->step_sentences = (long)totals[NMT_DIST_SENTENCES];
    t->step_wait_s = t->comm->wait_s - wait_start;
    double optimizer_start = nmt_now();
    double scale = 1.0 / (double)sum->tokens;
    double norm = finite ? nmt_adam_grad_norm(&t->adam, t->model.grads) * scale : NAN;
    t->last_grad_norm = norm;
    if (!isfinite(sum->loss_sum) || !isfinite(norm))
        return nmt_error_set("step %ld: the %s is not finite; lower train.optimizer.lr or set train.optimizer.clip_norm",
                             step, isfinite(sum->loss_sum) ? "gradient" : "loss");
    double lr = nmt_lr_at(&t->schedule, step);
    nmt_adam_update(&t->adam, t->model.params, t->model.grads, lr, scale * nmt_clip_factor(norm, cfg->clip_norm));
    if (nmt_dist_gather_params(d, t->model.params) < 0) return nmt_error_prefix("step %ld", step);
    nmt_ema_update(&t->ema, t->model.params, step);
    t->step_optimizer_s = nmt_now() - optimizer_start;
    t->state.step = step;
    t->state.epoch = t->batches.epoch;
    t->state.cursor = t->batches.cursor;
    t->state.log_loss_sum += sum->loss_sum;
    t->state.log_nll_sum += sum->nll_sum;
    t->state.log_tokens += sum->tokens;
    t->state.log_steps++;
    t->interval_tokens += sum->tokens;
    t->interval_steps++;
    return 0;
}

/* Seconds to the nearest stop condition, from the pace since the last log line (inf if none). */
static double eta_seconds(const trainer *t, double seconds_per_step) {
    const nmt_config *cfg = t->cfg;
    double eta = INFINITY;
    if (cfg->max_steps > 0) eta = fmin(eta, (double)(cfg->max_steps - t->state.step) * seconds_per_step);
    if (cfg->max_epochs > 0) {
        double batches = (double)(cfg->max_epochs - t->batches.epoch) * (double)t->batches.num_batches +
                         (double)(t->batches.num_batches - t->batches.cursor);
        eta = fmin(eta, batches / cfg->update_freq * seconds_per_step);
    }
    if (cfg->max_minutes > 0) eta = fmin(eta, cfg->max_minutes * 60.0 - t->state.elapsed_s);
    return eta;
}

static int log_train(trainer *t) {
    nmt_train_state *s = &t->state;
    double now = nmt_now(), took = now - t->interval_start;
    double loss = s->log_loss_sum / (double)s->log_tokens, ppl = exp(s->log_nll_sum / (double)s->log_tokens);
    double lr = nmt_lr_at(&t->schedule, s->step);
    double tokens_per_s = took > 0 ? (double)t->interval_tokens / took : 0.0;
    char line[512], time_text[32];
    nmt_train_log_time(time_text, sizeof time_text);
    snprintf(line, sizeof line,
             "{\"event\":\"train\",\"step\":%ld,\"epoch\":%ld,\"loss\":%.6f,\"lr\":%.6e,\"tokens_per_s\":%.1f,"
             "\"elapsed_s\":%.1f,\"grad_norm\":%.6g,\"time\":\"%s\"}\n",
             s->step, s->epoch, loss, lr, tokens_per_s, s->elapsed_s, t->last_grad_norm, time_text);
    if (nmt_train_log_write(&t->log, line) < 0) return -1;
    char elapsed[32], eta[32];
    nmt_format_duration(elapsed, sizeof elapsed, s->elapsed_s);
    nmt_format_duration(eta, sizeof eta, eta_seconds(t, t->interval_steps ? took / (double)t->interval_steps : 0.0));
    char ranks[96] = "";
    if (t->comm->size > 1) /* the wait: all-reduces, and for slower ranks (rank 0's view) */
        snprintf(ranks, sizeof ranks, " ranks %d x %d threads comm %.1f ms/step", t->comm->size, nmt_pool_threads(),
                 t->interval_steps ? (t->comm->wait_s - t->interval_wait) * 1e3 / (double)t->interval_steps : 0.0);
    say(t, "epoch %ld step %ld loss %.4f ppl %.2f lr %.3e tok/s %.0f elapsed %s eta %s%s\n", s->epoch, s->step, loss,
        ppl, lr, tokens_per_s, elapsed, eta, ranks);
    t->last_loss = loss;
    s->log_loss_sum = s->log_nll_sum = 0;
    s->log_tokens = s->log_steps = 0;
    t->interval_start = now;
    t->interval_wait = t->comm->wait_s;
    t->interval_tokens = t->interval_steps = 0;
    return 0;
}

/* ---- validation ---- */

static int valid_loss(trainer *t, double *loss, double *ppl) {
    nmt_loss sum = {0};
    if (nmt_batcher_seek(&t->valid_batches, 1, 0) < 0) return -1;
    nmt_forward_options fo = {.training = 0, .label_smoothing = (float)t->cfg->label_smoothing};
    for (long k = 0; k < t->valid_batches.num_batches; k++) {
        nmt_batch batch;
        long tokens;
        nmt_loss l;
        if (nmt_batcher_next(&t->valid_batches, &batch, &tokens) < 0) return -1;
        if (nmt_model_forward(&t->model, &batch, &fo, &l) < 0) return nmt_error_prefix("validation");
        sum.loss_sum += l.loss_sum;
        sum.nll_sum += l.nll_sum;
        sum.tokens += l.tokens;
    }
    *loss = sum.loss_sum / (double)sum.tokens;
    *ppl = exp(sum.nll_sum / (double)sum.tokens);
    return 0;
}

/* Translates the validation sources, in the run's product precision, and scores them against the
 * references as `nmt bleu` does (sacreBLEU's corpus BLEU, 13a tokenization, mixed case). */
static int valid_bleu(trainer *t, double *bleu) {
    const nmt_corpus *v = &t->valid;
    int n = (int)v->num_pairs;
    const int32_t **sources = nmt_calloc((size_t)n, sizeof *sources);
    int *lengths = nmt_calloc((size_t)n, sizeof *lengths);
    nmt_translation *out = nmt_calloc((size_t)n, sizeof *out);
    int rc = -1;
    if (!sources || !lengths || !out) goto done;
    for (int i = 0; i < n; i++) {
        sources[i] = v->ids + v->offset[i];
        lengths[i] = v->src_len[i];
    }
    nmt_decode_options options = nmt_decode_options_default();
    options.greedy = t->cfg->valid_beam <= 1;
    options.beam_size = t->cfg->valid_beam;
    options.length_penalty = t->cfg->valid_length_penalty;
    /* In the products the run trains with: bf16 decodes about 1.75x faster than fp32 where it trains
     * faster, and the validations are spent from the run's budget. */
    options.precision = t->precision;
    if (nmt_decode_sentences(&t->model, &options, n, sources, lengths, out) < 0) goto done;
    nmt_bleu_clear(t->bleu);
    for (int i = 0; i < n; i++) {
        const char *refs[1] = {t->references[i]};
        char *hyp = nmt_spm_decode(t->spm, out[i].hyps[0].tokens, (size_t)out[i].hyps[0].length);
        int added = hyp ? nmt_bleu_add(t->bleu, hyp, refs, 1) : -1;
        free(hyp);
        if (added < 0) goto done;
    }
    nmt_bleu_score score;
    nmt_bleu_result(t->bleu, &score);
    *bleu = score.score;
    rc = 0;
done:
    for (int i = 0; out && i < n; i++) nmt_translation_free(&out[i]);
    free(out);
    free(lengths);
    free(sources);
    return rc;
}

/* Validates (the weights' average when the run keeps one), logs, keeps the best model and counts
 * validations without improvement. */
static int validate(trainer *t) {
    nmt_train_state *s = &t->state;
    double start = nmt_now(), loss = 0, ppl = 0, bleu = 0;
    nmt_ema_swap(&t->ema, t->model.params);
    int rc = valid_loss(t, &loss, &ppl) < 0 || valid_bleu(t, &bleu) < 0 ? -1 : 0;
    nmt_ema_swap(&t->ema, t->model.params);
    if (rc < 0) return -1;
    int improved = bleu > s->best_bleu || (bleu == s->best_bleu && loss < s->best_loss);
    if (improved) {
        s->best_bleu = bleu;
        s->best_loss = loss;
        s->best_step = s->step;
        s->bad_validations = 0;
        if (save_best_model(t) < 0) return -1;
    } else {
        s->bad_validations++;
    }
    s->last_valid_step = s->step;
    t->last_saved_step = -1; /* the state changed: the checkpoint of this step must be (re)written */
    char line[256];
    snprintf(line, sizeof line,
             "{\"event\":\"valid\",\"step\":%ld,\"loss\":%.6f,\"ppl\":%.4f,\"bleu\":%.4f,\"elapsed_s\":%.1f}\n", s->step,
             loss, ppl, bleu, s->elapsed_s);
    if (nmt_train_log_write(&t->log, line) < 0) return -1;
    say(t, "valid step %ld loss %.4f ppl %.2f bleu %.2f (best %.2f at step %ld%s) in %.1fs\n", s->step, loss, ppl, bleu,
        s->best_bleu, s->best_step, improved ? ", saved" : "", nmt_now() - start);
    return 0;
}

/* ---- the loop ---- */

static const char *stop_reason(const trainer *t, volatile sig_atomic_t *stop) {
    const nmt_config *cfg = t->cfg;
    if (stop && *stop) return "signal";
    if (cfg->max_steps > 0 && t->state.step >= cfg->max_steps) return "max_steps";
    if (cfg->max_epochs > 0 && nmt_batcher_epochs_done(&t->batches) >= cfg->max_epochs) return "max_epochs";
    if (cfg->max_minutes > 0 && t->state.elapsed_s >= cfg->max_minutes * 60.0) return "max_minutes";
    if (cfg->valid.src && cfg->patience > 0 && t->state.bad_validations >= cfg->patience) return "patience";
    return NULL;
}

static int print_effective_config(trainer *t, const nmt_config *cfg, const char *path) {
    if (!t->progress) return 0;
    char *text = nmt_config_format(cfg);
    if (!text) return nmt_error_prefix("showing the effective config");
    say(t, "effective config (%s):\n%s", path, text);
    free(text);
    return 0;
}

/* ---- the ranks of a run ---- */

/* Rank 0's training state (resumed or fresh) and vocabulary, on every rank: the other ranks load the
 * vocabulary from a private temporary copy, so the output directory need not be shared. */
static int share_start(trainer *t, int *found) {
    struct {
        nmt_train_state state;
        int64_t found;
    } head = {t->state, *found};
    if (nmt_comm_bcast(t->comm, &head, sizeof head, 0) < 0) return -1;
    t->state = head.state;
    *found = (int)head.found;
    char *copy = NULL;
    if (nmt_dist_share_file(t->comm, t->root ? t->spm_path : NULL, &copy) < 0) return -1;
    if (t->root) return 0;
    int rc = nmt_spm_load(&t->spm, copy);
    unlink(copy);
    free(copy);
    if (rc == 0) t->spm_hash = nmt_spm_fingerprint(t->spm);
    return rc;
}

/* Vocabulary, corpora, model and pieces on every rank; the vocabulary and corpus caches are rank 0's
 * to make, the other ranks read them when they are there (a shared directory) and encode otherwise. */
static int prepare_ranks(trainer *t, int found, const nmt_st_file *ckpt, const char *ckpt_path) {
    const nmt_config *cfg = t->cfg;
    if (nmt_dist_check_size(t->comm, cfg->update_freq, cfg->batch_pieces) < 0) return -1;
    if (t->root && (prepare_vocabulary(t, found) < 0 || prepare_corpora(t) < 0)) return -1;
    if (t->comm->size > 1 && (share_start(t, &found) < 0 || (!t->root && prepare_corpora(t) < 0) ||
                              nmt_dist_check_inputs(t->comm, cfg, t->spm_hash, &t->train) < 0))
        return -1;
    if (nmt_train_data_check_positions(cfg, &t->valid) < 0 ||
        prepare_model(t, found && t->root ? ckpt : NULL, ckpt_path) < 0 ||
        nmt_dist_share_model(t->comm, &t->model, &t->adam) < 0)
        return -1;
    return nmt_dist_setup(&t->dist, t->comm, cfg->update_freq, cfg->batch_pieces, &t->model, &t->adam,
                          cfg->shard_optimizer);
}

/* The stop reason every rank agrees on: rank 0's (it alone knows the time and validations), or a
 * signal any rank got. */
static int agree_stop(trainer *t, volatile sig_atomic_t *stop, const char **stopped_by) {
    *stopped_by = stop_reason(t, stop);
    return nmt_dist_agree_stop(t->comm, stop && *stop, stopped_by);
}

/* The products' precision: train.precision resolved against this CPU (precision.h) and switched on
 * for the run (cleanup switches it off). resumed: the precision of the run being resumed, known to
 * rank 0 (-1: a fresh run). Each rank measures its own CPU; where one trains in fp32, all do (bf16
 * set explicitly is then refused), so that the ranks never compute in different precisions. */
static int products_precision(trainer *t, int32_t resumed) {
    const nmt_train_precision setting = (nmt_train_precision)t->cfg->precision;
    if (nmt_comm_bcast(t->comm, &resumed, sizeof resumed, 0) < 0) return -1;
    const int refused =
        nmt_train_precision_choose(setting, resumed, &t->precision, t->precision_why, sizeof t->precision_why) < 0;
    const int32_t fp32_here = refused || t->precision == NMT_PRECISION_FP32;
    int32_t fp32 = fp32_here;
    if (nmt_comm_max_i32(t->comm, &fp32, 1) < 0 || refused) return -1;
    if (fp32 && !fp32_here) {
        if (setting == NMT_TRAIN_PRECISION_BF16)
            return nmt_error_set("train.precision: bf16 is refused on the CPU of another rank");
        t->precision = NMT_PRECISION_FP32;
        snprintf(t->precision_why, sizeof t->precision_why, "auto chose fp32: bf16 does not pay on another rank's CPU");
    }
    return nmt_gemm_set_sgemm_bf16(t->precision == NMT_PRECISION_BF16);
}

/* A fresh start (no usable checkpoint) in a directory that holds a trained model would overwrite it:
 * refused unless `overwrite`, which starts again whatever the directory holds. */
static int setup(trainer *t, const nmt_train_options *opt) {
    const nmt_config *cfg = t->cfg;
    t->ckpt_dir = nmt_path_join(cfg->output, "checkpoints");
    t->log_path = nmt_path_join(cfg->output, "train.log.jsonl");
    t->model_path = nmt_path_join(cfg->output, "model.safetensors");
    t->spm_path = nmt_path_join(cfg->output, "spm.model");
    char *config_path = nmt_config_dir_path(cfg->output); /* never the user's own config.yaml */
    nmt_st_file ckpt = {0};
    char *ckpt_path = NULL;
    /* The settings as this run trains: train.precision auto resolved, so that config.yaml says what
     * ran and a resume that would resolve it otherwise (another CPU) is warned about. */
    nmt_config ran = *cfg; /* shallow: nothing of it is freed */
    nmt_config saved;      /* the settings of the run being resumed, where have_saved */
    int rc = -1, found = 0, have_saved = 0;
    if (!t->ckpt_dir || !t->log_path || !t->model_path || !t->spm_path || !config_path) goto done;
    if (t->root) { /* only reading: a run refused before the lock below leaves no trace */
        struct stat st;
        if (stat(cfg->output, &st) == 0 && !S_ISDIR(st.st_mode)) {
            nmt_error_set("output %s: not a directory (output names the model directory to train into)", cfg->output);
            goto done;
        }
        /* --overwrite starts again: the checkpoints are not looked at. */
        found = opt->overwrite ? 0 : nmt_checkpoint_find_latest(cfg->output, &ckpt, &ckpt_path, t->warnings);
        if (found < 0) goto done;
        have_saved = found && nmt_output_dir_saved_config(cfg->output, &saved, t->warnings);
    }
    if (nmt_pool_set_threads(opt->threads > 0 ? opt->threads : 2) < 0 ||
        products_precision(t, have_saved ? saved.precision : -1) < 0)
        goto done;
    ran.precision = (int)t->precision;
    t->state = nmt_train_state_initial(cfg->seed);
    if (t->root) {
        /* The lock first: the temporaries of a run still training here are not stale (its lock fails this one). */
        t->created = nmt_output_dir_first_missing(cfg->output);
        if (nmt_mkdirs(t->ckpt_dir) < 0 || (t->lock_fd = nmt_output_dir_lock(cfg->output)) < 0) goto done;
        nmt_remove_stale_temporaries(cfg->output);
        nmt_remove_stale_temporaries(t->ckpt_dir);
        if (cfg->init_from && !found) {
            t->init_model = nmt_path_join(cfg->init_from, "model.safetensors");
            t->init_spm = nmt_path_join(cfg->init_from, "spm.model");
            if (!t->init_model || !t->init_spm) goto done;
            if (!nmt_file_exists(t->init_model) || !nmt_file_exists(t->init_spm)) {
                nmt_error_set("train.init_from: %s is not a model directory (it needs model.safetensors and spm.model)",
                              cfg->init_from);
                goto done;
            }
        } else if (cfg->init_from) {
            say(t, "train.init_from is not used: the run resumes from its own checkpoint\n");
        }
        if (found && nmt_checkpoint_state(&ckpt, ckpt_path, &t->state) < 0) goto done;
        if (found && t->state.seed != cfg->seed && t->warnings)
            fprintf(t->warnings, "warning: train.seed is %lu but the checkpoint was trained with %lu; keeping %lu so "
                                 "that the run continues as it began\n",
                    cfg->seed, (unsigned long)t->state.seed, (unsigned long)t->state.seed);
        if ((!cfg->src_lang[0] || !cfg->tgt_lang[0]) && t->warnings)
            fprintf(t->warnings, "warning: the model's languages are not recorded (data.src_lang, data.tgt_lang unset, "
                                 "and the training files' suffixes are not ISO 639-1 codes): `nmt serve` will need "
                                 "--source-lang and --target-lang\n");
        t->state.threads = nmt_pool_threads();
        /* Every check comes before config.yaml is written: a refused run changes no file. */
        if ((have_saved && nmt_output_dir_check_settings(&ran, &saved, t->warnings, &t->data_settings_warned) < 0) ||
            (!found && nmt_output_dir_check_fresh(cfg->output, opt->overwrite) < 0) ||
            print_effective_config(t, &ran, config_path) < 0)
            goto done;
        /* --overwrite deletes what the old run made (never an input of this one). */
        const char *inputs[4] = {NULL, NULL, NULL, NULL}, **in = inputs;
        if (cfg->vocab_model) *in++ = cfg->vocab_model;
        if (t->init_model) *in++ = t->init_model, *in++ = t->init_spm;
        if (!found && opt->overwrite && nmt_output_dir_start_again(cfg->output, inputs, t->progress) < 0) goto done;
    }
    /* The damaged checkpoints a resume skipped are set aside: pruning must not weigh them against the
     * run's own. */
    if (nmt_train_data_check_positions(cfg, NULL) < 0 || prepare_ranks(t, found, &ckpt, ckpt_path) < 0 ||
        (t->root && nmt_config_save(&ran, config_path) < 0) ||
        (t->root && found && nmt_checkpoint_clear_after(cfg->output, t->state.step, 0, t->warnings) < 0))
        goto done;
    t->resumed_from = found ? t->state.step : -1;
    if (nmt_batcher_seek(&t->batches, t->state.epoch, t->state.cursor) < 0) {
        nmt_error_prefix("%s", ckpt_path ? ckpt_path : "the shared training state");
        goto done;
    }
    if (t->root && (nmt_train_log_open(&t->log, t->log_path, t->resumed_from >= 0 ? t->state.step : -1) < 0 ||
                    nmt_train_log_run(&t->log, found ? "resume" : "start", &t->state, nmt_pool_threads(), t->comm->size,
                                      nmt_packed_precision_name(t->precision), t->precision_why) < 0))
        goto done;
    t->last_saved_step = found ? t->state.step : -1;
    if (found) say(t, "resuming from %s (step %ld, epoch %ld)\n", ckpt_path, t->state.step, t->state.epoch);
    char ranks[64] = "";
    if (t->comm->size > 1) snprintf(ranks, sizeof ranks, "%d ranks x ", t->comm->size);
    if (t->dist.num_buckets) say(t, "gradient all-reduce: %d buckets, each started as the backward finishes it\n", t->dist.num_buckets);
    say(t, "model: %zu parameters, vocabulary %d; %ld batches an epoch of at most %d target tokens, %d per step "
           "in %d pieces; %s%d threads; products in %s%s%s%s\n",
        t->model.num_params, t->model.config.vocab_size, t->batches.num_batches, cfg->batch_tokens, cfg->update_freq,
        t->dist.pieces, ranks, nmt_pool_threads(), nmt_packed_precision_name(t->precision),
        t->precision_why[0] ? " (" : "", t->precision_why, t->precision_why[0] ? ")" : "");
    if (cfg->sampling_alpha > 0)
        say(t, "subword sampling: every epoch's pairs segmented by draws at vocab.sampling_alpha %g (this one's: %zu "
               "pieces, %.2fx the best segmentation's)\n",
            cfg->sampling_alpha, t->train.num_ids, (double)t->train.num_ids / (double)t->sampler.best_pieces);
    if (!cfg->max_steps && !cfg->max_epochs && cfg->max_minutes <= 0 && !(cfg->valid.src && cfg->patience > 0))
        say(t, "no stop condition is set: training runs until interrupted\n");
    rc = 0;
done:
    if (have_saved) nmt_config_free(&saved);
    nmt_st_free(&ckpt);
    free(ckpt_path);
    free(config_path);
    return rc;
}

static void cleanup(trainer *t) {
    nmt_gemm_set_sgemm_bf16(0);
    nmt_train_log_close(&t->log);
    if (t->model_created) nmt_model_free(&t->model);
    nmt_adam_free(&t->adam);
    nmt_ema_free(&t->ema);
    nmt_dist_free(&t->dist);
    nmt_batcher_free(&t->batches);
    nmt_batcher_free(&t->valid_batches);
    free(t->twins);
    nmt_train_data_free_lines(t->references, t->valid.num_pairs);
    if (t->bleu) nmt_bleu_free(t->bleu);
    nmt_corpus_free(&t->train);
    nmt_corpus_free(&t->valid);
    if (t->spm) nmt_spm_free(t->spm);
    if (t->lock_fd >= 0) close(t->lock_fd);
    free(t->ckpt_dir);
    free(t->log_path);
    free(t->model_path);
    free(t->spm_path);
    free(t->init_model);
    free(t->init_spm);
}

/* The clock of train.max_minutes, in seconds: the wall clock, or this process's CPU time over its threads
 * (the machine time the run was given). */
static double budget_now(const trainer *t) {
    return t->cfg->budget_clock == NMT_BUDGET_CPU ? nmt_cpu_seconds() / nmt_pool_threads() : nmt_now();
}

static int run(trainer *t, volatile sig_atomic_t *stop, const char **stopped_by) {
    const nmt_config *cfg = t->cfg;
    int has_valid = cfg->valid.src != NULL;
    t->interval_start = nmt_now();
    t->run_start = budget_now(t);
    t->interval_wait = t->comm->wait_s;
    t->elapsed_base = t->state.elapsed_s;
    for (;;) {
        if (agree_stop(t, stop, stopped_by) < 0) return -1;
        if (*stopped_by) break;
        nmt_loss loss;
        if (train_step(t, &loss) < 0) return -1;
        t->state.elapsed_s = t->elapsed_base + (budget_now(t) - t->run_start);
        long step = t->state.step;
        if (step % t->log_every == 0 && log_train(t) < 0) return -1;
        /* Validation and saving count towards max_minutes, not towards tokens/s. */
        double pause = nmt_now();
        int saving = step % cfg->save_every == 0;
        if (saving && nmt_dist_gather_moments(&t->dist, &t->adam) < 0) return -1; /* before rank 0 validates */
        if (t->root && has_valid && step % cfg->valid_every == 0) {
            if (validate(t) < 0) return -1;
            /* Read the budget again: a validation that spends the rest of it stops the run here, not one
             * step later with a second validation of nearly the same weights. */
            t->state.elapsed_s = t->elapsed_base + (budget_now(t) - t->run_start);
        }
        if (t->root && saving && save_checkpoint(t) < 0) return -1;
        t->interval_start += nmt_now() - pause;
    }
    if (nmt_dist_gather_moments(&t->dist, &t->adam) < 0) return -1; /* for a last checkpoint */
    if (!t->root) return 0; /* the rest is rank 0's */
    /* Validation at the end, unless interrupted (a stop request should be quick). */
    if (has_valid && strcmp(*stopped_by, "signal") != 0 && t->state.last_valid_step != t->state.step &&
        t->state.step > 0 && validate(t) < 0)
        return -1;
    if (t->last_saved_step != t->state.step && save_checkpoint(t) < 0) return -1;
    /* Without validation model.safetensors holds the last checkpoint's weights; a run killed between
     * writing the two left the one before, so a run resumed at its end writes it again. With
     * validation, a run stopped before the first one still gets a model to translate with. */
    if ((t->cfg->valid.src ? !nmt_file_exists(t->model_path) : t->model_step != t->state.step) &&
        save_best_model(t) < 0)
        return -1;
    return 0;
}

/* A trainer of cfg on the caller's communicator (or one process). */
static void trainer_init(trainer *t, const nmt_config *cfg, const nmt_train_options *opt) {
    memset(t, 0, sizeof *t);
    t->cfg = cfg;
    nmt_comm_local(&t->local_comm);
    t->comm = opt->comm ? opt->comm : &t->local_comm;
    t->root = t->comm->rank == 0;
    t->lock_fd = -1;
    t->model_step = -1;
    t->progress = opt->progress;
    t->warnings = opt->warnings;
}

int nmt_train(const nmt_config *cfg, const nmt_train_options *opt, nmt_train_result *result) {
    trainer t;
    trainer_init(&t, cfg, opt);
    t.log_every = cfg->valid_every / 5 < 1 ? 1 : cfg->valid_every / 5 > 100 ? 100 : cfg->valid_every / 5;
    t.last_loss = NAN;
    const char *stopped_by = NULL;
    int rc = setup(&t, opt);
    const int started = rc == 0;
    if (rc == 0) rc = run(&t, opt->stop, &stopped_by);
    /* The log says why the run ended (the error kept as it was if writing that fails too). */
    if (t.log.file) {
        char error[1024];
        snprintf(error, sizeof error, "%s", rc == 0 ? "" : nmt_error());
        int logged = nmt_train_log_event(&t.log, "stop", &t.state, rc == 0 ? stopped_by : "error", rc == 0 ? NULL : error);
        if (logged < 0 && rc < 0) nmt_error_set("%s", error);
        else if (logged < 0) rc = -1;
    }
    if (rc == 0 && result) {
        const nmt_train_state *s = &t.state;
        *result = (nmt_train_result){
            .step = s->step,
            .epoch = s->epoch,
            .loss = s->log_tokens ? s->log_loss_sum / (double)s->log_tokens : t.last_loss,
            .best_bleu = s->best_bleu,
            .best_step = s->best_step,
            .resumed_from = t.resumed_from,
            .stopped_by = stopped_by,
        };
        char elapsed[32];
        nmt_format_duration(elapsed, sizeof elapsed, s->elapsed_s);
        say(&t, "stopped by %s at step %ld (epoch %ld) after %s of training%s\n", stopped_by, s->step, s->epoch, elapsed,
            strcmp(stopped_by, "signal") == 0 ? "; run again to resume" : "");
    }
    /* A run refused at start leaves no trace: what it created goes while it still holds the lock (so
     * no trainer that started meanwhile is in there). */
    if (!started && t.created && t.lock_fd >= 0) nmt_remove_tree(t.created);
    cleanup(&t);
    free(t.created);
    return rc;
}

/* ---- benchmark ---- */

void nmt_train_bench_record(nmt_train_bench_result *r, double seconds, const nmt_loss *loss, long source_tokens,
                            long sentences, double flops) {
    double loss_per_token = loss->loss_sum / (double)loss->tokens;
    if (r->steps == 0) r->first_loss = loss_per_token;
    r->last_loss = loss_per_token;
    r->seconds += seconds;
    if (r->fastest_step_s == 0.0 || seconds < r->fastest_step_s) {
        r->fastest_step_s = seconds;
        r->fastest_step_flops = flops;
    }
    r->target_tokens += loss->tokens;
    r->source_tokens += source_tokens;
    r->sentences += sentences;
    r->flops += flops;
    r->steps++;
}

static int bench_steps(trainer *t, long warmup_steps, long steps, nmt_train_bench_result *r) {
    for (long i = 0; i < warmup_steps + steps; i++) {
        if (i == warmup_steps) memset(&t->model.timing, 0, sizeof t->model.timing);
        nmt_loss loss;
        double start = nmt_now();
        if (train_step(t, &loss) < 0) return -1;
        double took = nmt_now() - start, loss_per_token = loss.loss_sum / (double)loss.tokens;
        say(t, "step %ld%s: %.3f s, %ld target tokens, loss %.4f\n", i + 1, i < warmup_steps ? " (warm-up)" : "", took,
            loss.tokens, loss_per_token);
        if (i < warmup_steps) continue;
        nmt_train_bench_record(r, took, &loss, t->step_src_tokens, t->step_sentences, t->step_flops);
        r->optimizer_s += t->step_optimizer_s;
        r->comm_s += t->step_wait_s;
        r->reduce_s += t->dist.reduce_s;
        r->skew_s += t->dist.skew_s;
    }
    r->timing = t->model.timing;
    r->vocab_size = t->model.config.vocab_size;
    r->ranks = t->comm->size;
    r->buckets = t->dist.num_buckets;
    return 0;
}

int nmt_train_bench(const nmt_config *config, const nmt_train_options *opt, long warmup_steps, long steps,
                    nmt_train_bench_result *result) {
    memset(result, 0, sizeof *result);
    char *dir = nmt_temp_dir_create("nmt-bench");
    char *left_spm = nmt_path_join(config->output, "spm.model");
    if (!dir || !left_spm) {
        if (dir) nmt_remove_tree(dir);
        free(dir);
        free(left_spm);
        return -1;
    }
    nmt_config cfg = *config; /* shallow: only pointers are swapped, nothing is freed */
    cfg.output = dir;
    cfg.valid = (nmt_corpus_paths){NULL, NULL, 0};
    if (nmt_file_exists(left_spm)) cfg.vocab_model = left_spm;
    trainer t;
    trainer_init(&t, &cfg, opt);
    t.state = nmt_train_state_initial(cfg.seed);
    int rc = -1;
    if ((t.spm_path = nmt_path_join(dir, "spm.model")) && nmt_pool_set_threads(opt->threads > 0 ? opt->threads : 2) == 0 &&
        products_precision(&t, -1) == 0 && prepare_ranks(&t, 0, NULL, NULL) == 0 &&
        nmt_batcher_seek(&t.batches, 1, 0) == 0) {
        t.state.threads = nmt_pool_threads();
        say(&t, "model: %zu parameters, vocabulary %d (%s); %ld batches an epoch of at most %d target tokens, %d per "
                "step in %d pieces; %d ranks x %d threads\n",
            t.model.num_params, t.model.config.vocab_size, cfg.vocab_model ? cfg.vocab_model : "trained for this run",
            t.batches.num_batches, cfg.batch_tokens, cfg.update_freq, t.dist.pieces, t.comm->size, nmt_pool_threads());
        rc = bench_steps(&t, warmup_steps, steps, result);
        result->precision = t.precision;
    }
    cleanup(&t);
    nmt_remove_tree(dir);
    free(dir);
    free(left_spm);
    return rc;
}
