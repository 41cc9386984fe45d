/* forced: forced scoring and loss over length-sorted batches of pairs (forced.h). */
#include "infer/forced.h"

#include "infer/order.h"
#include "text/vocab.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* Forced decoding in batches: the pairs sorted by length, batch_size at a time, each batch handed to
 * visit() with the original index of each row. */
typedef int (*pair_batch_fn)(void *ctx, nmt_model *model, const nmt_batch *batch, const nmt_order_entry *rows);

static int for_each_pair_batch(nmt_model *model, int count, const int32_t *const *src, const int *src_len,
                               const int32_t *const *tgt, const int *tgt_len, int batch_size, pair_batch_fn visit,
                               void *ctx) {
    if (count <= 0) return 0;
    if (batch_size < 1) return nmt_error_set("batch size must be at least 1, got %d", batch_size);
    const nmt_model_config *c = &model->config;
    int longest_src = 0, longest_tgt = 0;
    for (int i = 0; i < count; i++) {
        if (src_len[i] < 0 || tgt_len[i] < 0) return nmt_error_set("pair %d: negative length", i);
        if (src_len[i] == 0 && !c->source_eos)
            return nmt_error_set("pair %d: an empty source, which this model (model.source_eos 0) cannot encode", i);
        if (c->positions == NMT_POSITIONS_LEARNED && (src_len[i] + 1 > c->max_positions || tgt_len[i] + 1 > c->max_positions))
            return nmt_error_set("pair %d: %d source and %d target pieces, beyond the model's %d learned positions", i,
                                 src_len[i], tgt_len[i], c->max_positions - 1);
        if (src_len[i] > longest_src) longest_src = src_len[i];
        if (tgt_len[i] > longest_tgt) longest_tgt = tgt_len[i];
    }
    const size_t B = (size_t)batch_size, S = (size_t)longest_src + 1, T = (size_t)longest_tgt + 1;
    nmt_order_entry *order = nmt_malloc((size_t)count * sizeof *order);
    int32_t *src_rows = nmt_malloc(B * S * sizeof(int32_t));
    int32_t *tgt_in = nmt_malloc(B * T * sizeof(int32_t)), *tgt_out = nmt_malloc(B * T * sizeof(int32_t));
    int rc = -1;
    if (!order || !src_rows || !tgt_in || !tgt_out) goto done;
    for (int i = 0; i < count; i++) order[i] = (nmt_order_entry){src_len[i] + tgt_len[i], i};
    nmt_order_sort(order, count);
    for (int first = 0; first < count; first += batch_size) {
        const int n = count - first < batch_size ? count - first : batch_size;
        int s_width = 1, t_width = 1;
        for (int b = 0; b < n; b++) {
            const int i = order[first + b].index;
            if (src_len[i] + 1 > s_width) s_width = src_len[i] + 1;
            if (tgt_len[i] + 1 > t_width) t_width = tgt_len[i] + 1;
        }
        for (int b = 0; b < n; b++) {
            const int i = order[first + b].index;
            nmt_vocab_row(model->config.source_eos ? NMT_ROW_SOURCE : NMT_ROW_PIECES, src[i], src_len[i], src_rows + (size_t)b * (size_t)s_width, s_width);
            nmt_vocab_row(NMT_ROW_DECODER_INPUT, tgt[i], tgt_len[i], tgt_in + (size_t)b * (size_t)t_width, t_width);
            nmt_vocab_row(NMT_ROW_TARGET, tgt[i], tgt_len[i], tgt_out + (size_t)b * (size_t)t_width, t_width);
        }
        const nmt_batch batch = {.batch = n, .src_len = s_width, .tgt_len = t_width, .src = src_rows,
                                 .tgt_in = tgt_in, .tgt_out = tgt_out};
        if (visit(ctx, model, &batch, order + first) < 0) goto done;
    }
    rc = 0;
done:
    free(order);
    free(src_rows);
    free(tgt_in);
    free(tgt_out);
    return rc;
}

typedef struct score_ctx {
    float *logprobs; /* [B, T] of the largest batch */
    const int *tgt_len;
    double *out;
    float *const *tokens; /* or NULL */
} score_ctx;

static int score_batch(void *ctx, nmt_model *model, const nmt_batch *batch, const nmt_order_entry *rows) {
    score_ctx *sc = ctx;
    if (nmt_model_token_logprobs(model, batch, sc->logprobs) < 0) return -1;
    for (int b = 0; b < batch->batch; b++) {
        const int i = rows[b].index;
        double sum = 0;
        const float *row = sc->logprobs + (size_t)b * (size_t)batch->tgt_len;
        for (int j = 0; j <= sc->tgt_len[i]; j++) sum += row[j];
        if (sc->tokens) memcpy(sc->tokens[i], row, ((size_t)sc->tgt_len[i] + 1) * sizeof *row);
        sc->out[i] = sum;
    }
    return 0;
}

int nmt_forced_score(nmt_model *model, int count, const int32_t *const *src, const int *src_len,
                     const int32_t *const *tgt, const int *tgt_len, int batch_size, double *out) {
    return nmt_forced_score_tokens(model, count, src, src_len, tgt, tgt_len, batch_size, out, NULL);
}

int nmt_forced_score_tokens(nmt_model *model, int count, const int32_t *const *src, const int *src_len,
                            const int32_t *const *tgt, const int *tgt_len, int batch_size, double *out,
                            float *const *tokens) {
    int longest_tgt = 0;
    for (int i = 0; i < count; i++)
        if (tgt_len[i] > longest_tgt) longest_tgt = tgt_len[i];
    score_ctx sc = {nmt_malloc((size_t)(batch_size > 0 ? batch_size : 1) * ((size_t)longest_tgt + 1) * sizeof(float)),
                    tgt_len, out, tokens};
    int rc = sc.logprobs ? for_each_pair_batch(model, count, src, src_len, tgt, tgt_len, batch_size, score_batch, &sc) : -1;
    free(sc.logprobs);
    return rc;
}

typedef struct loss_ctx {
    nmt_forward_options options;
    nmt_loss *total;
} loss_ctx;

static int loss_batch(void *ctx, nmt_model *model, const nmt_batch *batch, const nmt_order_entry *rows) {
    (void)rows;
    loss_ctx *lc = ctx;
    nmt_loss loss;
    if (nmt_model_forward(model, batch, &lc->options, &loss) < 0) return -1;
    lc->total->loss_sum += loss.loss_sum;
    lc->total->nll_sum += loss.nll_sum;
    lc->total->tokens += loss.tokens;
    return 0;
}

int nmt_forced_loss(nmt_model *model, int count, const int32_t *const *src, const int *src_len,
                    const int32_t *const *tgt, const int *tgt_len, int batch_size, double label_smoothing,
                    nmt_loss *loss) {
    memset(loss, 0, sizeof *loss);
    loss_ctx lc = {{.training = 0, .label_smoothing = (float)label_smoothing}, loss};
    return for_each_pair_batch(model, count, src, src_len, tgt, tgt_len, batch_size, loss_batch, &lc);
}
