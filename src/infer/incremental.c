/* incremental: encoder once per batch, decoder one position at a time with key/value caches.
 *
 * Shapes: B sentences, S source width, R live rows, P = max_steps cache positions, D, H, dh = D/H,
 * F, V, Ld decoder layers. Buffers only grow (to the largest batch seen), so steps allocate nothing.
 *   cross_kv[Ld, B, 2, S, D] each decoder layer's cross-attention keys and values of the encoder
 *                           output: per sentence of the batch its [S, D] keys, then its [S, D]
 *                           values (finished sentences are skipped; each read in order, whole rows)
 *   cache[l][K], cache[l][V] [max_rows, Pc, D] self-attention keys and values of the fed positions:
 *                           the row that was row i when position t was fed left its key at [i, t],
 *                           so a row's keys follow one another (the decode attention reads them in
 *                           order, at the memory's rate) and the pages touched grow with the
 *                           positions actually fed; Pc >= P is the most positions any batch so far
 *                           has needed, so that every batch's rows start where the first one's did
 *                           and touch no page the longest batch did not
 *   path[max_rows, P]       where each live row finds its keys: position t at [path[r, t], t]
 * Keys and values are stored in the weights' cache format (kvstore.h: float32, or float16 / int8
 * for int8 weights), converted once when written; I8 keeps one factor per head beside them
 * (cross_factor[Ld, B, 2, S, H], cache[l][K_FACTOR] [max_rows, Pc, H], ...). The caches and cross_kv
 * are ordinary pages (no huge pages), so that what a batch does not reach is never touched.
 *   history[max_rows, P]    the tokens fed to each row (uncached mode replays them)
 * Rows are contiguous per sentence (search.h), so a sentence's rows are the queries of one
 * cross-attention over its block, and sentences with as many rows each make one batched call
 * (reaching their blocks through a list of sentence ids, so nothing moves when a sentence ends).
 * A reorder moves no cache data: a row takes over its parent's path (the keys its ancestors left,
 * which no later step overwrites: position t is fed once), as it takes over its history. Copying
 * the fed keys and values of every second child of a parent (about a third of a beam's rows) cost
 * 12% of beam-5 float32 decoding at news lengths.
 */
#include "infer/incremental.h"

#include "compute/pool.h"
#include "compute/attention.h"
#include "compute/kernels.h"
#include "compute/packed.h"
#include "infer/shortlist.h"
#include "model/placement.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every buffer only grows (nmt_scratch: each batch refills it). */
typedef nmt_scratch buffer;

static int buffer_reserve(buffer *b, size_t count, size_t size, const char *what) {
    size_t bytes = 0;
    if (nmt_size_mul(count ? count : 1, size, &bytes, what) < 0) return -1;
    return nmt_scratch_reserve(b, bytes);
}

/* The same in ordinary pages: memory that is reserved for the longest batch but touched only as
 * far as a batch reaches (huge pages would fault in 2 MiB at the first byte). */
static int plain_reserve(buffer *b, size_t count, size_t size) {
    size_t bytes = 0;
    if (nmt_size_mul(count ? count : 1, size ? size : 1, &bytes, "decoder cache") < 0) return -1;
    if (bytes <= b->cap) return 0;
    free(b->data);
    b->cap = 0;
    if (!(b->data = nmt_malloc_aligned(bytes))) return -1;
    b->cap = bytes;
    return 0;
}

enum { OUTPUT_COLUMNS = 256 }; /* vocabulary entries per chunk of the fused output layer */

/* Every buffer, so that reserve and free walk one list. */
enum {
    BUF_SRC_LEN,   /* int32 [B] source tokens (pieces + eos) */
    BUF_SRC_FIRST, /* int32 [B]: the encoder's first row of each sentence of a part */
    BUF_SENTENCE,  /* int [max_rows]: the sentence (its index in the batch) of each live row */
    BUF_SENTENCE_SPARE,
    BUF_GROUP,     /* int32 [B]: the sentences of one cross-attention call */
    BUF_GROUP_LEN, /* int32 [B]: their source tokens */
    BUF_HISTORY,   /* int32 [max_rows, P] */
    BUF_HISTORY_SPARE,
    BUF_CROSS_KV,  /* [Ld, B, 2, S, D] stored values (kvstore.h) */
    BUF_CROSS_FACTOR, /* I8: float [Ld, B, 2, S, H] */
    BUF_PATH,      /* int32 [max_rows, P]: where each row's cached keys and values lie */
    BUF_PATH_SPARE,
    BUF_X,         /* [M, D] the residual stream; M = max(B*S, max_rows) */
    BUF_NORMED,    /* [M, D] */
    BUF_QKV,       /* [M, 3D] */
    BUF_CTX,       /* [M, D] */
    BUF_DELTA,     /* [M, D] */
    BUF_HIDDEN,    /* [M, F] */
    BUF_MEAN,      /* [M] LayerNorm statistics (unused at inference, required by the kernel) */
    BUF_RSTD,      /* [M] */
    BUF_WEIGHTS,   /* attention weights: [B, H, S, S] or [R, H, max(P, S)] */
    BUF_LOGITS,    /* [max_rows, OUTPUT_COLUMNS] one chunk of the output layer */
    BUF_PAIRS,     /* uint32 [nmt_packed_scratch_rows(M, max(D, F))]: a product's x in bf16 pairs or int8 */
    BUF_LSE,       /* nmt_logsumexp [max_rows] */
    BUF_POS,       /* int32 [M] positions of the rows being computed */
    BUF_TOKENS,    /* int32 [M] tokens being embedded */
    BUF_POSITIONS, /* sinusoidal [n, D] or rope [n, dh] table */
    BUF_COUNT
};

/* The buffers of one decoder layer's self-attention cache. */
enum { CACHE_K, CACHE_V, CACHE_K_FACTOR, CACHE_V_FACTOR, CACHE_PARTS };

struct nmt_incremental {
    const nmt_model *model;
    const nmt_incremental_weights *w;
    nmt_incremental_weights *own_weights; /* when not shared */
    int D, H, dh, F, V, layers;
    int cached;
    int row_invariant; /* matrix products one row at a time */
    float scale; /* 1/sqrt(dh) on attention scores */

    int batch, width, rows, fed; /* fed: tokens fed to every live row so far */
    int max_rows, max_steps;
    int cache_steps;             /* positions a cache row block holds: the most any batch has needed */
    int positions_len;           /* positions in the BUF_POSITIONS table */
    buffer buf[BUF_COUNT];
    nmt_kv_format kv;            /* the stored keys' and values' format */
    buffer *cache;               /* [layers * CACHE_PARTS]: K, V [max_rows, cache_steps, D] (row, then position), I8 factors */
    /* With a shortlist: the batch's candidate pieces, their output rows and those packed. */
    int shortlisted;             /* candidates of this batch; 0: no shortlist */
    int32_t *candidates;         /* [V] ascending */
    uint8_t *marks;              /* [V] scratch of nmt_shortlist_union */
    float *candidate_rows;       /* [V, D] */
    nmt_packed candidate_w;      /* [shortlisted, D] */
};

#define BUF(inc, name, type) ((type *)(inc)->buf[name].data)

int nmt_incremental_create(nmt_incremental **out, const nmt_model *model) {
    nmt_incremental_weights *w;
    if (nmt_incremental_weights_create(&w, model, NMT_PRECISION_FP32) < 0) return -1;
    if (nmt_incremental_create_shared(out, w) < 0) {
        nmt_incremental_weights_free(w);
        return -1;
    }
    (*out)->own_weights = w;
    return 0;
}

int nmt_incremental_create_shared(nmt_incremental **out, const nmt_incremental_weights *weights) {
    *out = NULL;
    const nmt_model *model = weights->model;
    const nmt_model_config *c = &model->config;
    nmt_incremental *inc = nmt_calloc(1, sizeof *inc);
    if (!inc) return -1;
    inc->model = model;
    inc->w = weights;
    inc->D = c->d_model;
    inc->H = c->heads;
    inc->dh = c->d_model / c->heads;
    inc->F = c->ffn;
    inc->V = c->vocab_size;
    inc->layers = c->decoder_layers;
    inc->cached = 1;
    inc->scale = 1.0f / sqrtf((float)inc->dh);
    inc->kv = weights->cache_format;
    inc->cache = nmt_calloc((size_t)inc->layers * CACHE_PARTS, sizeof(buffer));
    if (!inc->cache) {
        nmt_incremental_free(inc);
        return -1;
    }
    *out = inc;
    return 0;
}

void nmt_incremental_free(nmt_incremental *inc) {
    if (!inc) return;
    for (int i = 0; inc->cache && i < inc->layers * CACHE_PARTS; i++) free(inc->cache[i].data);
    free(inc->cache);
    for (int i = 0; i < BUF_COUNT; i++) free(inc->buf[i].data);
    free(inc->candidates);
    free(inc->marks);
    free(inc->candidate_rows);
    nmt_packed_free(&inc->candidate_w);
    nmt_incremental_weights_free(inc->own_weights);
    free(inc);
}

void nmt_incremental_set_cached(nmt_incremental *inc, int cached) { inc->cached = cached; }

void nmt_incremental_set_row_invariant(nmt_incremental *inc, int on) { inc->row_invariant = on; }

/* y[M,N] = x[M,K] w^T + b, as one product or (row_invariant) one product per row. */
static void linear(const nmt_incremental *inc, float *y, const float *x, const nmt_packed *w, const float *b, int M) {
    uint32_t *scratch = BUF(inc, BUF_PAIRS, uint32_t);
    if (!inc->row_invariant || nmt_packed_fast(w)) {
        nmt_packed_linear(y, x, w, b, M, scratch);
        return;
    }
    for (int r = 0; r < M; r++)
        nmt_packed_linear(y + (size_t)r * (size_t)w->N, x + (size_t)r * (size_t)w->K, w, b, 1, scratch);
}

/* Sentences of width S encoded at once: as many as fit in max(ENCODE_ROWS, max_rows) rows (at
 * least one), so that the encoder's activations are no bigger than the decoder's. */
enum { ENCODE_ROWS = 256 };
static int encode_sentences(int batch, int width, int max_rows) {
    const int rows = max_rows > ENCODE_ROWS ? max_rows : ENCODE_ROWS, n = rows / width;
    return n < 1 ? 1 : n < batch ? n : batch;
}

/* Sizes every buffer for a batch and prepares the position table for n positions. */
int nmt_incremental_reserve(nmt_incremental *inc, int batch, int width, int max_rows, int max_steps) {
    const size_t D = (size_t)inc->D, bs = (size_t)batch * (size_t)width, rows = (size_t)max_rows;
    const size_t encoded = (size_t)encode_sentences(batch, width, max_rows), part = encoded * (size_t)width;
    const size_t m = part > rows ? part : rows, steps = (size_t)max_steps;
    const size_t keys = steps > (size_t)width ? steps : (size_t)width;
    const size_t f = sizeof(float), i32 = sizeof(int32_t);
    size_t cache = 0, enc_weights = 0, dec_weights = 0, cross = 0;
    const size_t kv = nmt_kv_value_bytes(inc->kv), factors = inc->kv == NMT_KV_I8 ? (size_t)inc->H : 0;
    const size_t cache_steps = steps > (size_t)inc->cache_steps ? steps : (size_t)inc->cache_steps;
    if (nmt_size_mul(rows * cache_steps, D, &cache, "decoder cache") < 0 ||
        nmt_size_mul(part * (size_t)width, (size_t)inc->H, &enc_weights, "encoder attention") < 0 ||
        nmt_size_mul(rows * keys, (size_t)inc->H, &dec_weights, "decoder attention") < 0 ||
        nmt_size_mul(bs * 2 * D, (size_t)inc->layers, &cross, "cross-attention keys") < 0)
        return -1;
    const struct {
        int id;
        size_t count, size;
    } sizes[] = {
        {BUF_SRC_LEN, (size_t)batch, i32},   {BUF_SRC_FIRST, (size_t)batch, i32},
        {BUF_SENTENCE, rows, sizeof(int)},   {BUF_SENTENCE_SPARE, rows, sizeof(int)},
        {BUF_GROUP, (size_t)batch, i32},     {BUF_GROUP_LEN, (size_t)batch, i32},
        {BUF_HISTORY, rows * steps, i32},    {BUF_HISTORY_SPARE, rows * steps, i32}, 
        {BUF_PATH, rows * steps, i32},       {BUF_PATH_SPARE, rows * steps, i32},
        {BUF_X, m * D, f},                   {BUF_NORMED, m * D, f},
        {BUF_QKV, m * 3 * D, f},             {BUF_CTX, m * D, f},                 {BUF_DELTA, m * D, f},
        {BUF_HIDDEN, m * (size_t)inc->F, f}, {BUF_MEAN, m, f},                    {BUF_RSTD, m, f},
        {BUF_WEIGHTS, enc_weights > dec_weights ? enc_weights : dec_weights, f},
        {BUF_POS, m, i32},                   {BUF_TOKENS, m, i32},
        {BUF_LOGITS, rows * OUTPUT_COLUMNS, f}, {BUF_LSE, rows, sizeof(nmt_logsumexp)},
        {BUF_PAIRS, nmt_packed_scratch_rows(&inc->w->output, (int)m, inc->F > inc->D ? inc->F : inc->D), sizeof(uint32_t)},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (buffer_reserve(&inc->buf[sizes[i].id], sizes[i].count, sizes[i].size, "decoder buffer") < 0) return -1;
    if (plain_reserve(&inc->buf[BUF_CROSS_KV], cross, kv) < 0 ||
        plain_reserve(&inc->buf[BUF_CROSS_FACTOR], cross / (2 * D), 2 * factors * sizeof(float)) < 0)
        return -1;
    for (int l = 0; l < inc->layers; l++) {
        buffer *part = inc->cache + (size_t)l * CACHE_PARTS;
        if (plain_reserve(&part[CACHE_K], cache, kv) < 0 || plain_reserve(&part[CACHE_V], cache, kv) < 0 ||
            plain_reserve(&part[CACHE_K_FACTOR], cache / D, factors * sizeof(float)) < 0 ||
            plain_reserve(&part[CACHE_V_FACTOR], cache / D, factors * sizeof(float)) < 0)
            return -1;
    }
    inc->cache_steps = (int)cache_steps;
    /* Positions 0 .. max(S, P) - 1 are used; learned ones are parameters. */
    const nmt_model_config *c = &inc->model->config;
    int n = (int)keys;
    if (c->positions != NMT_POSITIONS_LEARNED && n > inc->positions_len) {
        if (buffer_reserve(&inc->buf[BUF_POSITIONS], (size_t)n * D, f, "position table") < 0) return -1;
        if (c->positions == NMT_POSITIONS_SINUSOIDAL) nmt_sinusoidal_positions(BUF(inc, BUF_POSITIONS, float), n, inc->D);
        else nmt_rope_table(BUF(inc, BUF_POSITIONS, float), n, inc->dh);
        inc->positions_len = n;
    }
    return 0;
}

/* Row `token` of an embedding table, or of the packed output matrix that replaced it (the same
 * values: fp32 panels hold the weight's own, and an int8 model was rounded to its int8 copy). */
static const float *embedding_row(const nmt_incremental *inc, const float *table, int32_t token, float *scratch) {
    if (!inc->w->released || table != inc->model->p.output)
        return nmt_model_matrix(inc->model, table + (size_t)token * (size_t)inc->D, (size_t)inc->D);
    nmt_packed_row(&inc->w->output, token, scratch);
    return scratch;
}

/* x[n, D] = embedding[tokens] * sqrt(D) + the position's vector (none with rope), then its LayerNorm
 * where the model has one (norm's pointers not NULL). */
static void embed(nmt_incremental *inc, const float *table, const float *learned, const nmt_norm_params *norm, int n) {
    const nmt_model_config *c = &inc->model->config;
    const int D = inc->D;
    const float scale = sqrtf((float)D);
    const int32_t *tokens = BUF(inc, BUF_TOKENS, int32_t), *pos = BUF(inc, BUF_POS, int32_t);
    const float *sinusoids = BUF(inc, BUF_POSITIONS, float);
    float *x = BUF(inc, BUF_X, float);
    for (int i = 0; i < n; i++) {
        float *xi = x + (size_t)i * (size_t)D;
        const float *e = embedding_row(inc, table, tokens[i], xi);
        const float *p = c->positions == NMT_POSITIONS_SINUSOIDAL ? sinusoids + (size_t)pos[i] * (size_t)D
                         : c->positions == NMT_POSITIONS_LEARNED ? learned + (size_t)pos[i] * (size_t)D
                                                                 : NULL;
        for (int j = 0; j < D; j++) xi[j] = e[j] * scale + (p ? p[j] : 0.0f);
    }
    if (norm->weight)
        nmt_layernorm_forward(x, BUF(inc, BUF_MEAN, float), BUF(inc, BUF_RSTD, float), x, norm->weight, norm->bias, n, D,
                              c->norm_eps);
}

/* The input of a sublayer: the stream itself (post-LN) or its LayerNorm (pre-LN). */
static const float *sublayer_input(nmt_incremental *inc, const nmt_norm_params *norm, int n) {
    if (inc->model->config.norm_position == NMT_NORM_POST) return BUF(inc, BUF_X, float);
    nmt_layernorm_forward(BUF(inc, BUF_NORMED, float), BUF(inc, BUF_MEAN, float), BUF(inc, BUF_RSTD, float),
                          BUF(inc, BUF_X, float), norm->weight, norm->bias, n, inc->D, inc->model->config.norm_eps);
    return BUF(inc, BUF_NORMED, float);
}

/* Adds the sublayer's output (in BUF_DELTA) to the stream: x = LN(x + delta) post-LN, x += delta pre-LN. */
static void residual(nmt_incremental *inc, const nmt_norm_params *norm, int n) {
    const nmt_dropout none = {0};
    float *x = BUF(inc, BUF_X, float), *delta = BUF(inc, BUF_DELTA, float);
    long count = (long)n * inc->D;
    if (inc->model->config.norm_position == NMT_NORM_PRE) {
        nmt_dropout_add(x, x, delta, none, count);
        return;
    }
    nmt_dropout_add(delta, x, delta, none, count);
    nmt_layernorm_forward(x, BUF(inc, BUF_MEAN, float), BUF(inc, BUF_RSTD, float), delta, norm->weight, norm->bias, n,
                          inc->D, inc->model->config.norm_eps);
}

/* The feed-forward sublayer; w = the layer's packed matrices. */
static void feed_forward(nmt_incremental *inc, const nmt_ffn_params *ffn, const nmt_packed *w,
                         const nmt_norm_params *norm, int n) {
    const float *in = sublayer_input(inc, norm, n);
    float *hidden = BUF(inc, BUF_HIDDEN, float);
    linear(inc, hidden, in, &w[NMT_WEIGHT_FC1], ffn->fc1_bias, n);
    nmt_activation_forward(inc->model->config.activation, hidden, (long)n * inc->F);
    linear(inc, BUF(inc, BUF_DELTA, float), hidden, &w[NMT_WEIGHT_FC2], ffn->fc2_bias, n);
    residual(inc, norm, n);
}

/* Turns the queries and keys of n rows of the fused q|k|v buffer by their positions (BUF_POS). */
static void rope(nmt_incremental *inc, int n) {
    if (inc->model->config.positions != NMT_POSITIONS_ROPE) return;
    float *qkv = BUF(inc, BUF_QKV, float), *table = BUF(inc, BUF_POSITIONS, float);
    const int32_t *pos = BUF(inc, BUF_POS, int32_t);
    nmt_rope_apply(qkv, 3L * inc->D, table, pos, n, inc->H, inc->dh, 0);
    nmt_rope_apply(qkv + inc->D, 3L * inc->D, table, pos, n, inc->H, inc->dh, 0);
}

static nmt_heads heads(float *data, long batch_stride, long row_stride) {
    return (nmt_heads){data, batch_stride, row_stride, NULL, NULL, 0};
}

/* Rows of `width` floats, batch row b's from row first[b] on. */
static nmt_heads sentence_rows(float *data, long width, const int32_t *first) {
    return (nmt_heads){data, width, width, first, NULL, 0};
}

/* The encoder over sentences [first, first + count) of src[B, S]; leaves each decoder layer's
 * cross-attention k|v of them in BUF_CROSS_KV. The sentences' tokens are packed one after another
 * without their padding (a batch's sources differ in length: a third of news sentences' rows were
 * padding), each its own rows of the products and its own queries and keys of attention, so a
 * sentence's numbers are those it has alone. */
static void encode_part(nmt_incremental *inc, const int32_t *src, int first, int count) {
    const nmt_model *m = inc->model;
    const nmt_params *p = &m->p;
    const int S = inc->width, D = inc->D;
    const int32_t *len = BUF(inc, BUF_SRC_LEN, int32_t) + first;
    int32_t *tokens = BUF(inc, BUF_TOKENS, int32_t), *pos = BUF(inc, BUF_POS, int32_t);
    int32_t *rows_of = BUF(inc, BUF_SRC_FIRST, int32_t);
    int n = 0;
    for (int i = 0; i < count; i++) {
        rows_of[i] = n;
        for (int t = 0; t < len[i]; t++, n++) {
            tokens[n] = src[(size_t)(first + i) * (size_t)S + (size_t)t];
            pos[n] = t;
        }
    }
    embed(inc, p->src_embed, p->src_positions, &p->src_embed_norm, n);
    float *qkv = BUF(inc, BUF_QKV, float), *ctx = BUF(inc, BUF_CTX, float);
    const nmt_attention_dims dims = {.batch = count, .heads = inc->H, .head_dim = inc->dh, .q_len = S, .k_len = S,
                                     .k_lengths = len, .q_lengths = len, .scale = inc->scale};
    for (int l = 0; l < m->config.encoder_layers; l++) {
        const nmt_encoder_layer_params *layer = &p->encoder[l];
        const nmt_packed *w = inc->w->encoder + (size_t)l * NMT_WEIGHTS_PER_LAYER;
        const float *in = sublayer_input(inc, &layer->self_attn_norm, n);
        linear(inc, qkv, in, &w[NMT_WEIGHT_QKV], layer->self_attn.q_bias, n);
        rope(inc, n);
        nmt_attention_forward(sentence_rows(ctx, D, rows_of), BUF(inc, BUF_WEIGHTS, float), sentence_rows(qkv, 3L * D, rows_of),
                              sentence_rows(qkv + D, 3L * D, rows_of), sentence_rows(qkv + 2 * D, 3L * D, rows_of), &dims);
        linear(inc, BUF(inc, BUF_DELTA, float), ctx, &w[NMT_WEIGHT_O], layer->self_attn.o_bias, n);
        residual(inc, &layer->self_attn_norm, n);
        feed_forward(inc, &layer->ffn, w, &layer->ffn_norm, n);
    }
    const float *memory = BUF(inc, BUF_X, float);
    if (m->config.norm_position == NMT_NORM_PRE) {
        nmt_layernorm_forward(BUF(inc, BUF_NORMED, float), BUF(inc, BUF_MEAN, float), BUF(inc, BUF_RSTD, float), memory,
                              p->encoder_norm.weight, p->encoder_norm.bias, n, D, m->config.norm_eps);
        memory = BUF(inc, BUF_NORMED, float);
    }
    /* k and v weights are consecutive: one [2D, D] projection per decoder layer, through BUF_QKV
     * into each sentence's [2, S, D] block in the cache format (the padding's rows never written:
     * cross-attention reads a sentence's keys below its length only). */
    for (int l = 0; l < inc->layers; l++) {
        linear(inc, qkv, memory, &inc->w->decoder[(size_t)l * NMT_WEIGHTS_PER_LAYER + NMT_WEIGHT_CROSS_KV], p->decoder[l].cross_attn.k_bias, n);
        for (int i = 0; i < count; i++) {
            const size_t at = ((size_t)l * (size_t)inc->batch + (size_t)(first + i)) * 2 * (size_t)S * (size_t)D;
            const float *rows = qkv + (size_t)rows_of[i] * 2 * (size_t)D;
            for (int part = 0; part < 2; part++)
                nmt_kv_store(inc->kv, inc->buf[BUF_CROSS_KV].data, BUF(inc, BUF_CROSS_FACTOR, float),
                             at + (size_t)part * (size_t)S * (size_t)D, rows + (size_t)part * (size_t)D, 2L * D, len[i],
                             inc->H, inc->dh);
        }
    }
}

/* The encoder over src[B, S], a few sentences at a time (encode_sentences). */
static void encode(nmt_incremental *inc, const int32_t *src) {
    const int step = encode_sentences(inc->batch, inc->width, inc->max_rows);
    for (int first = 0; first < inc->batch; first += step)
        encode_part(inc, src, first, inc->batch - first < step ? inc->batch - first : step);
}

/* Attention over stored keys and values: float32 ones through nmt_attention_forward itself. */
static void attention_stored(nmt_incremental *inc, nmt_heads out, nmt_heads q, nmt_kv_heads k, nmt_kv_heads v,
                             const nmt_attention_dims *dims) {
    float *weights = BUF(inc, BUF_WEIGHTS, float);
    if (inc->kv == NMT_KV_F32) {
        const nmt_heads keys = {(float *)k.data, k.batch_stride, k.row_stride, k.slot, k.path, k.path_stride},
                        values = {(float *)v.data, v.batch_stride, v.row_stride, v.slot, v.path, v.path_stride};
        nmt_attention_forward(out, weights, q, keys, values, dims);
        return;
    }
    nmt_attention_forward_stored(out, weights, q, k, v, dims);
}

/* Keys or values `first` values into a stored array (I8 factors alongside). */
static nmt_kv_heads stored(const nmt_incremental *inc, const buffer *data, const buffer *factor, size_t first,
                           long batch_stride, long row_stride, const int32_t *slot, const int32_t *path) {
    const size_t bytes = nmt_kv_value_bytes(inc->kv);
    return (nmt_kv_heads){(const char *)data->data + first * bytes,
                          inc->kv == NMT_KV_I8 ? (const float *)factor->data + first / (size_t)inc->dh : NULL,
                          batch_stride, row_stride, slot, inc->kv, path, inc->max_steps};
}

/* Cross-attention of the R rows (queries in BUF_QKV[R, D]) over their sentences' encoder output.
 * Sentences with the same number of rows n form one kernel call: a batch of sentences with n
 * queries each, whose key and value blocks the call finds through their sentence ids. With
 * `attention`, the weights averaged over heads. */
static void cross_attention(nmt_incremental *inc, int l, float *attention) {
    const int D = inc->D, S = inc->width, H = inc->H, R = inc->rows;
    const int *sentence = BUF(inc, BUF_SENTENCE, int);
    const int32_t *src_len = BUF(inc, BUF_SRC_LEN, int32_t);
    int32_t *group = BUF(inc, BUF_GROUP, int32_t), *group_len = BUF(inc, BUF_GROUP_LEN, int32_t);
    float *q = BUF(inc, BUF_QKV, float), *ctx = BUF(inc, BUF_CTX, float), *w = BUF(inc, BUF_WEIGHTS, float);
    const size_t kv = (size_t)l * (size_t)inc->batch * (size_t)S * 2 * (size_t)D;
    for (int first = 0, last = 0; first < R; first = last) {
        /* The group: the sentence of row `first` with its n rows, and the sentences after it that
         * have exactly n rows too. */
        int n = 1, count = 0;
        while (first + n < R && sentence[first + n] == sentence[first]) n++;
        while (last + n <= R && sentence[last + n - 1] == sentence[last] &&
               (last + n == R || sentence[last + n] != sentence[last])) {
            group[count] = sentence[last];
            group_len[count++] = src_len[sentence[last]];
            last += n;
        }
        const nmt_attention_dims dims = {.batch = count, .heads = H, .head_dim = inc->dh, .q_len = n, .k_len = S,
                                         .k_lengths = group_len, .scale = inc->scale};
        const long q_stride = (long)n * D, kv_stride = 2L * S * D;
        const buffer *data = &inc->buf[BUF_CROSS_KV], *factor = &inc->buf[BUF_CROSS_FACTOR];
        attention_stored(inc, heads(ctx + (size_t)first * D, q_stride, D), heads(q + (size_t)first * D, q_stride, D),
                         stored(inc, data, factor, kv, kv_stride, D, group, NULL),
                         stored(inc, data, factor, kv + (size_t)S * (size_t)D, kv_stride, D, group, NULL), &dims);
        if (!attention) continue;
        /* w[count, H, n, S] -> attention[row, :] = the mean over heads. */
        for (int r = first; r < last; r++) {
            const size_t i = (size_t)(r - first) / (size_t)n, k = (size_t)(r - first) % (size_t)n;
            float *row = attention + (size_t)r * (size_t)S;
            for (int j = 0; j < S; j++) {
                float sum = 0;
                for (int h = 0; h < H; h++) sum += w[((i * (size_t)H + (size_t)h) * (size_t)n + k) * (size_t)S + (size_t)j];
                row[j] = sum / (float)H;
            }
        }
    }
}

/* What a step returns: full log-probabilities, or each row's top list and eos log-probability;
 * neither when a position is only replayed. */
typedef struct step_output {
    float *logprobs;        /* [R, V] or NULL */
    int raw;                /* 1: logprobs gets the logits (not normalised) */
    nmt_scored_token *best; /* [R, k] or NULL */
    float *eos;             /* [R] with best */
    int k;
    float *attention; /* [R, S] or NULL */
    int extra;                   /* with best: E tokens per row to score besides (constrained decoding) */
    const int32_t *extra_tokens; /* [R, E] (-1: none; pieces, not shortlist columns) */
    float *extra_logprobs;       /* [R, E] their log-probabilities (-infinity outside a shortlist) */
} step_output;

typedef struct output_task {
    nmt_incremental *inc;
    const float *x; /* [R, D] the decoder's output */
    const step_output *out;
} output_task;

/* The output layer for rows [first, first + n): logits OUTPUT_COLUMNS vocabulary entries at a time,
 * each chunk folded into the rows' log-sum-exp and top lists while it is in cache, so that the
 * [R, V] logits never exist. */
static void output_best_rows(const output_task *o, int first, int n) {
    nmt_incremental *inc = o->inc;
    /* With a shortlist, column j scores piece candidates[j]. */
    const nmt_packed *output = inc->shortlisted ? &inc->candidate_w : &inc->w->output;
    const int V = inc->shortlisted ? inc->shortlisted : inc->V, D = inc->D, k = o->out->k;
    float *logits = BUF(inc, BUF_LOGITS, float) + (size_t)first * OUTPUT_COLUMNS;
    nmt_logsumexp *lse = BUF(inc, BUF_LSE, nmt_logsumexp) + first;
    nmt_scored_token *best = o->out->best + (size_t)first * (size_t)k;
    float *eos = o->out->eos + first;
    const float *x = o->x + (size_t)first * (size_t)D;
    uint32_t *pairs = BUF(inc, BUF_PAIRS, uint32_t) + nmt_packed_scratch(output, first);
    nmt_packed_to_pairs(output, pairs, x, n);
    const int E = o->out->extra;
    const int32_t *extra = E ? o->out->extra_tokens + (size_t)first * (size_t)E : NULL;
    float *extra_lp = E ? o->out->extra_logprobs + (size_t)first * (size_t)E : NULL;
    for (int r = 0; r < n; r++) {
        lse[r] = (nmt_logsumexp){-INFINITY, 0.0f};
        nmt_scored_clear(best + (size_t)r * (size_t)k, k);
        for (int e = 0; e < E; e++) extra_lp[(size_t)r * E + e] = -INFINITY;
    }
    for (int c = 0; c < V; c += OUTPUT_COLUMNS) {
        const int cols = V - c < OUTPUT_COLUMNS ? V - c : OUTPUT_COLUMNS;
        nmt_packed_linear_columns(logits, x, pairs, output, inc->model->p.output_bias, n, c, cols);
        for (int r = 0; r < n; r++) {
            const float *row = logits + (size_t)r * (size_t)cols;
            nmt_logsumexp_add(&lse[r], row, cols);
            nmt_scored_merge(best + (size_t)r * (size_t)k, k, row, cols, c);
            if (c == 0) eos[r] = row[NMT_EOS];
            for (int e = 0; e < E && !inc->shortlisted; e++) {
                const int32_t token = extra[(size_t)r * E + e];
                if (token >= c && token < c + cols) extra_lp[(size_t)r * E + e] = row[token - c];
            }
        }
    }
    for (int r = 0; r < n; r++) {
        const float z = nmt_logsumexp_value(lse[r]);
        for (int i = 0; i < k && best[(size_t)r * (size_t)k + (size_t)i].token >= 0; i++) {
            nmt_scored_token *b = &best[(size_t)r * (size_t)k + (size_t)i];
            b->logprob -= z;
            if (inc->shortlisted) b->token = inc->candidates[b->token];
        }
        eos[r] -= z;
        for (int e = 0; e < E; e++) extra_lp[(size_t)r * E + e] -= z;
    }
}

/* A unit's rows, together, or one at a time in row-invariant mode (where a product's row must
 * not see the others). */
static void output_best_range(void *ctx, long begin, long end) {
    const output_task *o = ctx;
    if (!o->inc->row_invariant) {
        output_best_rows(o, (int)begin, (int)(end - begin));
        return;
    }
    for (long r = begin; r < end; r++) output_best_rows(o, (int)r, 1);
}

/* The output layer of R rows: full log-probabilities, or the fused top lists. */
static void output_layer(nmt_incremental *inc, const float *x, const step_output *out) {
    const int R = inc->rows;
    if (out->logprobs) {
        linear(inc, out->logprobs, x, &inc->w->output, inc->model->p.output_bias, R);
        if (!out->raw) nmt_log_softmax_rows(out->logprobs, R, inc->V);
        return;
    }
    output_task task = {inc, x, out};
    /* One unit per thread (inside a pool task, one in all): each unit streams all the weights. */
    const int units = nmt_pool_in_task() ? 1 : nmt_pool_threads();
    nmt_pool_for(R, (R + units - 1) / units, output_best_range, &task);
}

/* Feeds position `t` of every live row (tokens from the history) through the decoder, appending
 * the position's keys and values to the caches; finishes with the output layer unless `out` is
 * NULL (a replayed position). */
static void decode_position(nmt_incremental *inc, int t, const step_output *out) {
    const nmt_model *m = inc->model;
    const nmt_params *p = &m->p;
    const int R = inc->rows, D = inc->D, P = inc->max_steps;
    int32_t *tokens = BUF(inc, BUF_TOKENS, int32_t), *pos = BUF(inc, BUF_POS, int32_t);
    const int32_t *history = BUF(inc, BUF_HISTORY, int32_t);
    int32_t *path = BUF(inc, BUF_PATH, int32_t);
    for (int r = 0; r < R; r++) {
        tokens[r] = history[(size_t)r * (size_t)P + (size_t)t];
        pos[r] = t;
        path[(size_t)r * (size_t)P + (size_t)t] = r;
    }
    embed(inc, p->tgt_embed, p->tgt_positions, &p->tgt_embed_norm, R);
    float *qkv = BUF(inc, BUF_QKV, float), *ctx = BUF(inc, BUF_CTX, float);
    const nmt_attention_dims self = {.batch = R, .heads = inc->H, .head_dim = inc->dh, .q_len = 1, .k_len = t + 1,
                                     .scale = inc->scale};
    for (int l = 0; l < inc->layers; l++) {
        const nmt_decoder_layer_params *layer = &p->decoder[l];
        const nmt_packed *w = inc->w->decoder + (size_t)l * NMT_WEIGHTS_PER_LAYER;
        const buffer *part = inc->cache + (size_t)l * CACHE_PARTS;
        const float *in = sublayer_input(inc, &layer->self_attn_norm, R);
        linear(inc, qkv, in, &w[NMT_WEIGHT_QKV], layer->self_attn.q_bias, R);
        rope(inc, R);
        for (int r = 0; r < R; r++) {
            const size_t at = ((size_t)r * (size_t)inc->cache_steps + (size_t)t) * (size_t)D;
            const float *row = qkv + (size_t)r * 3 * (size_t)D;
            nmt_kv_store(inc->kv, part[CACHE_K].data, part[CACHE_K_FACTOR].data, at, row + D, 3L * D, 1, inc->H, inc->dh);
            nmt_kv_store(inc->kv, part[CACHE_V].data, part[CACHE_V_FACTOR].data, at, row + 2 * D, 3L * D, 1, inc->H,
                         inc->dh);
        }
        const long row_block = (long)inc->cache_steps * D;
        attention_stored(inc, heads(ctx, D, D), heads(qkv, 3L * D, 3L * D),
                         stored(inc, &part[CACHE_K], &part[CACHE_K_FACTOR], 0, row_block, D, NULL, path),
                         stored(inc, &part[CACHE_V], &part[CACHE_V_FACTOR], 0, row_block, D, NULL, path), &self);
        linear(inc, BUF(inc, BUF_DELTA, float), ctx, &w[NMT_WEIGHT_O], layer->self_attn.o_bias, R);
        residual(inc, &layer->self_attn_norm, R);

        in = sublayer_input(inc, &layer->cross_attn_norm, R);
        linear(inc, qkv, in, &w[NMT_WEIGHT_CROSS_Q], layer->cross_attn.q_bias, R);
        cross_attention(inc, l, out && l == inc->layers - 1 ? out->attention : NULL);
        linear(inc, BUF(inc, BUF_DELTA, float), ctx, &w[NMT_WEIGHT_CROSS_O], layer->cross_attn.o_bias, R);
        residual(inc, &layer->cross_attn_norm, R);
        feed_forward(inc, &layer->ffn, w, &layer->ffn_norm, R);
    }
    if (!out) return;
    const float *x = BUF(inc, BUF_X, float);
    if (m->config.norm_position == NMT_NORM_PRE) {
        nmt_layernorm_forward(BUF(inc, BUF_NORMED, float), BUF(inc, BUF_MEAN, float), BUF(inc, BUF_RSTD, float), x,
                              p->decoder_norm.weight, p->decoder_norm.bias, R, D, m->config.norm_eps);
        x = BUF(inc, BUF_NORMED, float);
    }
    output_layer(inc, x, out);
}

/* The batch's candidates (shortlist.h) and their output rows, packed like the other weights. */
static int shortlist_batch(nmt_incremental *inc, const int32_t *src, long count) {
    if (inc->model->p.output_bias)
        return nmt_error_set("decoder: the vocabulary shortlist does not implement an output bias (this model's "
                             "model.output_bias)");
    const size_t V = (size_t)inc->V, D = (size_t)inc->D;
    if (!inc->candidates) {
        inc->candidates = nmt_malloc(V * sizeof(int32_t));
        inc->marks = nmt_calloc(V, 1);
        inc->candidate_rows = nmt_malloc(V * D * sizeof(float));
        if (!inc->candidates || !inc->marks || !inc->candidate_rows) return -1;
    }
    const int n = nmt_shortlist_union(inc->w->shortlist, src, count, inc->marks, inc->candidates);
    for (int i = 0; i < n; i++) {
        float *row = inc->candidate_rows + (size_t)i * D;
        const float *from = embedding_row(inc, inc->model->p.output, inc->candidates[i], row);
        if (from != row) memcpy(row, from, D * sizeof(float));
    }
    nmt_packed_free(&inc->candidate_w);
    inc->shortlisted = 0;
    if (nmt_packed_init(&inc->candidate_w, inc->candidate_rows, n, inc->D, inc->w->precision) < 0) return -1;
    inc->shortlisted = n;
    return 0;
}

int nmt_incremental_start(nmt_incremental *inc, const int32_t *src, const int *src_lengths, int batch, int src_width,
                          int max_rows, int max_steps) {
    const nmt_model_config *c = &inc->model->config;
    if (batch < 1 || src_width < 1 || max_rows < batch || max_steps < 1)
        return nmt_error_set("decoder: bad batch shape (%d sentences of width %d, %d rows, %d steps)", batch, src_width,
                             max_rows, max_steps);
    if (c->positions == NMT_POSITIONS_LEARNED && src_width > c->max_positions)
        return nmt_error_set("source of %d tokens is longer than the model's %d learned positions", src_width,
                             c->max_positions);
    for (long i = 0; i < (long)batch * src_width; i++)
        if (src[i] < 0 || src[i] >= inc->V)
            return nmt_error_set("decoder: source token id %d outside the vocabulary of %d", src[i], inc->V);
    for (int b = 0; b < batch; b++)
        if (src_lengths[b] < 1 || src_lengths[b] > src_width)
            return nmt_error_set("decoder: sentence %d has %d source tokens (width %d)", b, src_lengths[b], src_width);
    if (nmt_incremental_reserve(inc, batch, src_width, max_rows, max_steps) < 0) return -1;
    inc->batch = batch;
    inc->width = src_width;
    inc->rows = batch;
    inc->fed = 0;
    inc->max_rows = max_rows;
    inc->max_steps = max_steps;
    int32_t *len = BUF(inc, BUF_SRC_LEN, int32_t);
    int *sentence = BUF(inc, BUF_SENTENCE, int);
    for (int b = 0; b < batch; b++) {
        len[b] = src_lengths[b];
        sentence[b] = b;
    }
    if (inc->w->shortlist && shortlist_batch(inc, src, (long)batch * src_width) < 0) return -1;
    encode(inc, src);
    return 0;
}

/* Checks and records the tokens of a step, replays the prefix when uncached, and decodes the new
 * position into `out`. */
static int advance(nmt_incremental *inc, int rows, const int32_t *tokens, const step_output *out) {
    const nmt_model_config *c = &inc->model->config;
    if (rows != inc->rows) return nmt_error_set("decoder: step on %d rows, %d are live", rows, inc->rows);
    if (inc->fed >= inc->max_steps) return nmt_error_set("decoder: more than %d steps", inc->max_steps);
    if (c->positions == NMT_POSITIONS_LEARNED && inc->fed >= c->max_positions)
        return nmt_error_set("target position %d is beyond the model's %d learned positions", inc->fed, c->max_positions);
    int32_t *history = BUF(inc, BUF_HISTORY, int32_t);
    for (int r = 0; r < rows; r++) {
        if (tokens[r] < 0 || tokens[r] >= inc->V)
            return nmt_error_set("decoder: token id %d outside the vocabulary of %d", tokens[r], inc->V);
        history[(size_t)r * (size_t)inc->max_steps + (size_t)inc->fed] = tokens[r];
    }
    int t = inc->fed++;
    for (int replay = inc->cached ? t : 0; replay < t; replay++) decode_position(inc, replay, NULL);
    decode_position(inc, t, out);
    return 0;
}

int nmt_incremental_step(nmt_incremental *inc, int rows, const int32_t *tokens, float *logprobs, float *attention) {
    const step_output out = {.logprobs = logprobs, .attention = attention};
    return advance(inc, rows, tokens, &out);
}

int nmt_incremental_step_best(nmt_incremental *inc, int rows, const int32_t *tokens, int k, nmt_scored_token *best,
                              float *eos_logprob, float *attention) {
    if (k < 1) return nmt_error_set("decoder: top lists of %d tokens", k);
    const step_output out = {.best = best, .eos = eos_logprob, .k = k, .attention = attention};
    return advance(inc, rows, tokens, &out);
}

/* dst[r] = src[parents[r]] for rows of `len` elements of `size` bytes (row stride `stride` elements). */
static void gather_rows(void *dst, const void *src, const int32_t *parents, int rows, size_t stride, size_t len,
                        size_t size) {
    for (int r = 0; r < rows; r++)
        memcpy((char *)dst + (size_t)r * stride * size, (const char *)src + (size_t)parents[r] * stride * size, len * size);
}

static void swap_buffers(buffer *a, buffer *b) {
    buffer t = *a;
    *a = *b;
    *b = t;
}

int nmt_incremental_reorder(nmt_incremental *inc, int rows, const int32_t *parents) {
    if (rows < 0 || rows > inc->max_rows) return nmt_error_set("decoder: reorder to %d rows (at most %d)", rows, inc->max_rows);
    for (int r = 0; r < rows; r++)
        if (parents[r] < 0 || parents[r] >= inc->rows)
            return nmt_error_set("decoder: reorder from row %d of %d", parents[r], inc->rows);
    const size_t P = (size_t)inc->max_steps, fed = (size_t)inc->fed;
    gather_rows(inc->buf[BUF_HISTORY_SPARE].data, inc->buf[BUF_HISTORY].data, parents, rows, P, fed, sizeof(int32_t));
    swap_buffers(&inc->buf[BUF_HISTORY_SPARE], &inc->buf[BUF_HISTORY]);
    gather_rows(inc->buf[BUF_PATH_SPARE].data, inc->buf[BUF_PATH].data, parents, rows, P, fed, sizeof(int32_t));
    swap_buffers(&inc->buf[BUF_PATH_SPARE], &inc->buf[BUF_PATH]);
    gather_rows(inc->buf[BUF_SENTENCE_SPARE].data, inc->buf[BUF_SENTENCE].data, parents, rows, 1, 1, sizeof(int));
    swap_buffers(&inc->buf[BUF_SENTENCE_SPARE], &inc->buf[BUF_SENTENCE]);
    inc->rows = rows;
    return 0;
}

static int step_callback(void *ctx, int rows, const int32_t *tokens, int k, nmt_scored_token *best, float *eos_logprob,
                         float *attention) {
    return nmt_incremental_step_best(ctx, rows, tokens, k, best, eos_logprob, attention);
}

static int logprobs_callback(void *ctx, int rows, const int32_t *tokens, float *logprobs, float *attention) {
    return nmt_incremental_step(ctx, rows, tokens, logprobs, attention);
}

static int extra_callback(void *ctx, int rows, const int32_t *tokens, int k, nmt_scored_token *best, float *eos_logprob,
                          float *attention, int extra, const int32_t *extra_tokens, float *extra_logprobs) {
    if (k < 1 || extra < 0) return nmt_error_set("decoder: top lists of %d tokens, %d extra", k, extra);
    const step_output out = {.best = best, .eos = eos_logprob, .k = k, .attention = attention, .extra = extra,
                             .extra_tokens = extra_tokens, .extra_logprobs = extra_logprobs};
    return advance(ctx, rows, tokens, &out);
}

static int logits_callback(void *ctx, int rows, const int32_t *tokens, float *logits, float *attention) {
    const step_output out = {.logprobs = logits, .raw = 1, .attention = attention};
    return advance(ctx, rows, tokens, &out);
}

static int reorder_callback(void *ctx, int rows, const int32_t *parents) {
    return nmt_incremental_reorder(ctx, rows, parents);
}

nmt_decode_step nmt_incremental_decode_step(nmt_incremental *inc) {
    const nmt_model_config *c = &inc->model->config;
    return (nmt_decode_step){
        .ctx = inc,
        .vocab_size = inc->V,
        .max_steps = c->positions == NMT_POSITIONS_LEARNED ? c->max_positions : 0,
        .step = step_callback,
        .reorder = reorder_callback,
        .step_logprobs = logprobs_callback,
        .step_logits = logits_callback,
        .step_extra = extra_callback,
    };
}
