/* activations: the per-batch activation block of the model (see activations.h): planned by one walk
 * over the architecture that first measures (base NULL) and then carves.
 */
#include "model/activations.h"

#include "base/util.h"

#include <stdlib.h>

nmt_activations *nmt_activations_create(const nmt_model_config *c) {
    nmt_activations *A = nmt_calloc(1, sizeof *A);
    if (!A) return NULL;
    A->enc = nmt_calloc((size_t)c->encoder_layers, sizeof *A->enc);
    A->dec = nmt_calloc((size_t)c->decoder_layers, sizeof *A->dec);
    if (!A->enc || !A->dec) {
        nmt_activations_free(A);
        return NULL;
    }
    A->mode = NMT_PASS_EVAL;
    return A;
}

void nmt_activations_free(nmt_activations *A) {
    if (!A) return;
    free(A->block);
    free(A->enc);
    free(A->dec);
    free(A);
}


typedef struct carver {
    unsigned char *base; /* NULL while measuring */
    size_t used;         /* bytes */
} carver;

static void *carve(carver *c, size_t bytes) {
    void *p = c->base ? c->base + c->used : NULL;
    c->used += (bytes + 63) & ~(size_t)63;
    return p;
}

static float *carve_floats(carver *c, size_t n) { return carve(c, n * sizeof(float)); }
static int32_t *carve_ints(carver *c, size_t n) { return carve(c, n * sizeof(int32_t)); }

static void plan_sublayer(carver *c, const nmt_model_config *cf, sublayer_acts *s, size_t M) {
    size_t D = (size_t)cf->d_model;
    s->sum = (cf->norm_position == NMT_NORM_POST) ? carve_floats(c, M * D) : NULL;
    s->normed = carve_floats(c, M * D);
    s->out = (cf->norm_position == NMT_NORM_POST) ? s->normed : carve_floats(c, M * D);
    s->mean = carve_floats(c, M);
    s->rstd = carve_floats(c, M);
}

static void plan_side(carver *c, const nmt_model_config *cf, side *s, int B, int len) {
    size_t M = (size_t)B * len, D = (size_t)cf->d_model;
    s->M = (int)M;
    s->len = len;
    s->lengths = carve_ints(c, (size_t)B);
    s->start = carve_ints(c, (size_t)B);
    s->tokens = carve_ints(c, M);
    s->pos = carve_ints(c, M);
    s->x0 = carve_floats(c, M * D);
    s->final.normed = carve_floats(c, M * D);
    s->final.mean = carve_floats(c, M);
    s->final.rstd = carve_floats(c, M);
}

static void plan_attention(carver *c, attention_acts *a, size_t B, size_t H, size_t Tq, size_t Tk, size_t D,
                           int cross) {
    a->qkv = carve_floats(c, B * Tq * (cross ? D : 3 * D));
    a->kv = cross ? carve_floats(c, B * Tk * 2 * D) : NULL;
    a->weights = carve_floats(c, B * H * Tq * Tk);
    a->context = carve_floats(c, B * Tq * D);
}

/* T = 0 plans the encoder only. */
static void plan(carver *c, nmt_activations *A, const nmt_model_config *cf, int B, int S, int T, int mode) {
    size_t D = (size_t)cf->d_model, F = (size_t)cf->ffn, V = (size_t)cf->vocab_size, H = (size_t)cf->heads;
    size_t Ms = (size_t)B * S, Mt = (size_t)B * T, Mmax = Ms > Mt ? Ms : Mt, L = (size_t)(S > T ? S : T);
    A->positions = carve_floats(c, L * D);
    /* Backward reads every layer's activations. A forward alone needs one layer's at a time, each
     * layer reading only the output of the one before (its last read comes before its own output is
     * written), so evaluation gives the layers of a stack one set of buffers: the memory of a pass
     * no longer grows with depth. */
    const int shared = mode != NMT_PASS_TRAIN;
    plan_side(c, cf, &A->src, B, S);
    for (int l = 0; l < cf->encoder_layers; l++) {
        encoder_layer_acts *e = &A->enc[l];
        if (shared && l > 0) {
            *e = A->enc[0];
            continue;
        }
        plan_attention(c, &e->attn, (size_t)B, H, (size_t)S, (size_t)S, D, 0);
        plan_sublayer(c, cf, &e->attn_sub, Ms);
        e->hidden = carve_floats(c, Ms * F);
        plan_sublayer(c, cf, &e->ffn_sub, Ms);
    }
    if (mode == NMT_PASS_ENCODE) return;
    plan_side(c, cf, &A->tgt, B, T);
    for (int l = 0; l < cf->decoder_layers; l++) {
        decoder_layer_acts *d = &A->dec[l];
        if (shared && l > 0) {
            *d = A->dec[0];
            continue;
        }
        plan_attention(c, &d->self, (size_t)B, H, (size_t)T, (size_t)T, D, 0);
        plan_sublayer(c, cf, &d->self_sub, Mt);
        plan_attention(c, &d->cross, (size_t)B, H, (size_t)T, (size_t)S, D, 1);
        plan_sublayer(c, cf, &d->cross_sub, Mt);
        d->hidden = carve_floats(c, Mt * F);
        plan_sublayer(c, cf, &d->ffn_sub, Mt);
    }
    output_acts *o = &A->out;
    o->rows = carve_ints(c, Mt);
    o->places = carve_ints(c, Mt);
    o->targets = carve_ints(c, Mt);
    /* Chunks of about 4M logits (16 MB): big enough for efficient products, small enough for cache-
     * friendly loss passes and a bounded footprint at any vocabulary size. */
    size_t chunk = ((size_t)1 << 22) / V;
    o->chunk = (int)(chunk < 32 ? 32 : chunk > 2048 ? 2048 : chunk) & ~1; /* even: R-Drop's twins share one */
    o->x = carve_floats(c, (size_t)o->chunk * D);
    o->logits = carve_floats(c, (size_t)o->chunk * V);
    o->dx = carve_floats(c, (size_t)o->chunk * D);
    o->loss = carve_floats(c, (size_t)o->chunk);
    o->nll = carve_floats(c, (size_t)o->chunk);
    if (mode != NMT_PASS_TRAIN) return;
    o->d_out = carve_floats(c, Mt * D);
    o->d_weight = carve_floats(c, V * D);
    grad_acts *g = &A->g;
    g->d = carve_floats(c, Mmax * D);
    g->spare = carve_floats(c, Mmax * D);
    g->denc = carve_floats(c, Mmax * D); /* Mmax, not Ms: it trades places with d in backward */
    g->df = carve_floats(c, Mmax * D);
    g->dfin = carve_floats(c, Mmax * D);
    g->dctx = carve_floats(c, Mmax * D);
    g->dqkv = carve_floats(c, Mmax * 3 * D);
    g->dkv = carve_floats(c, Ms * 2 * D);
    g->dhidden = carve_floats(c, Mmax * F);
    g->dweights = carve_floats(c, (size_t)B * H * L * L);
}

int nmt_activations_plan(nmt_activations *A, const nmt_model_config *cf, int B, int S, int T, int mode) {
    carver measure = {0};
    plan(&measure, A, cf, B, S, T, mode);
    if (measure.used > A->block_capacity) {
        free(A->block);
        A->block = NULL;
        A->block_capacity = 0;
        size_t capacity = measure.used + measure.used / 4; /* headroom for slightly larger batches */
        A->block = nmt_malloc_aligned(capacity);
        if (!A->block) return nmt_error_prefix("activations for a batch of %d x (%d + %d) tokens", B, S, T);
        A->block_capacity = capacity;
    }
    carver c = {(unsigned char *)A->block, 0};
    plan(&c, A, cf, B, S, T, mode);
    return 0;
}

