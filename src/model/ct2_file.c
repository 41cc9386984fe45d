/* ct2_file: CTranslate2's model.bin read (ct2_file.h). */
#include "model/ct2_file.h"

#include "compute/kvstore.h"
#include "base/io.h"
#include "base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_VARIABLES = 1 << 20 };
const int nmt_ct2_item_size[NMT_CT2_TYPES] = {4, 1, 2, 4, 2, 2};
static const float global_int16_scale = 1000.0f;

static int read_exact(nmt_ct2_file *r, void *out, size_t n, const char *what) {
    if (n && fread(out, 1, n, r->fp) != n)
        return nmt_error_set("%s: truncated at byte %ld (reading %s)", r->path, ftell(r->fp), what);
    return 0;
}

static int read_u32(nmt_ct2_file *r, uint32_t *v, const char *what) {
    unsigned char b[4];
    if (read_exact(r, b, 4, what) < 0) return -1;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return 0;
}

/* A string: uint16 length (NUL included), bytes, NUL. */
static int read_string(nmt_ct2_file *r, char **out, const char *what) {
    unsigned char b[2];
    if (read_exact(r, b, 2, what) < 0) return -1;
    const size_t n = (size_t)b[0] | (size_t)b[1] << 8;
    if (n == 0 || n > NMT_CT2_MAX_NAME)
        return nmt_error_set("%s: %s of %zu bytes at byte %ld", r->path, what, n, ftell(r->fp) - 2);
    char *s = nmt_malloc(n);
    if (!s) return -1;
    if (read_exact(r, s, n, what) < 0) {
        free(s);
        return -1;
    }
    s[n - 1] = '\0';
    *out = s;
    return 0;
}

/* Replaces the first `from` in *name by `to` (revision 1's names were OpenNMT-tf's). */
static int rename_part(char **name, const char *from, const char *to) {
    char *at = strstr(*name, from);
    if (!at) return 0;
    const size_t head = (size_t)(at - *name), tail = strlen(at + strlen(from));
    char *out = nmt_malloc(head + strlen(to) + tail + 1);
    if (!out) return -1;
    sprintf(out, "%.*s%s%s", (int)head, *name, to, at + strlen(from));
    free(*name);
    *name = out;
    return 1;
}

static int rename_v1(char **name) {
    static const char *const common[][2] = {{"transformer/", ""}, {":0", ""}, {"w_embs", "embeddings/weight"},
                                            {"kernel", "weight"}, {"LayerNorm", "layer_norm"},
                                            {"dense", "projection"}, {"conv1d_", "linear_"}, {"conv1d", "linear_0"}};
    for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
        if (rename_part(name, common[i][0], common[i][1]) < 0) return -1;
    if (strstr(*name, "encoder")) return rename_part(name, "multi_head", "self_attention") < 0 ? -1 : 0;
    if (rename_part(name, "masked_multi_head", "self_attention") < 0) return -1;
    return rename_part(name, "multi_head", "attention") < 0 ? -1 : 0;
}

static int read_variable(nmt_ct2_file *r, nmt_ct2_var *v) {
    char what[64];
    if (read_string(r, &v->name, "a variable name") < 0) return -1;
    unsigned char rank, type;
    if (read_exact(r, &rank, 1, v->name) < 0) return -1;
    if (rank > NMT_CT2_MAX_RANK) return nmt_error_set("%s: variable %s has rank %d", r->path, v->name, rank);
    v->rank = rank;
    size_t elements = 1;
    for (int d = 0; d < rank; d++) {
        uint32_t dim;
        if (read_u32(r, &dim, v->name) < 0) return -1;
        v->shape[d] = dim;
        if (nmt_size_mul(elements, dim, &elements, v->name) < 0) return nmt_error_prefix("%s", r->path);
    }
    uint32_t n;
    if (read_exact(r, &type, 1, v->name) < 0 || read_u32(r, &n, v->name) < 0) return -1;
    if (r->version >= 4) {
        if (type >= NMT_CT2_TYPES) return nmt_error_set("%s: variable %s has an unknown type id %d", r->path, v->name, type);
        v->dtype = type;
        v->bytes = n;
    } else {
        v->dtype = type == 4 ? NMT_CT2_F32 : type == 2 ? NMT_CT2_I16 : type == 1 ? NMT_CT2_I8 : -1;
        if (v->dtype < 0) return nmt_error_set("%s: variable %s has items of %d bytes", r->path, v->name, type);
        v->bytes = (size_t)n * type;
    }
    if (elements * (size_t)nmt_ct2_item_size[v->dtype] != v->bytes)
        return nmt_error_set("%s: variable %s holds %zu bytes, not the %zu of its shape", r->path, v->name, v->bytes,
                             elements * (size_t)nmt_ct2_item_size[v->dtype]);
    v->offset = ftell(r->fp);
    if (v->offset < 0 || (size_t)v->offset + v->bytes > r->size)
        return nmt_error_set("%s: variable %s runs past the end of the file", r->path, v->name);
    snprintf(what, sizeof what, "variable %.40s", v->name);
    if (v->bytes <= sizeof v->scalar) {
        if (read_exact(r, v->scalar, v->bytes, what) < 0) return -1;
    } else if (fseek(r->fp, (long)v->bytes, SEEK_CUR) != 0) {
        return nmt_error_set("%s: %s: %s", r->path, what, strerror(errno));
    }
    return r->revision == 1 ? rename_v1(&v->name) : 0;
}

static int read_header(nmt_ct2_file *r) {
    uint32_t u;
    if (read_u32(r, &u, "the binary version") < 0) return -1;
    if (u < 1 || u > NMT_CT2_BINARY_VERSION)
        return nmt_error_set("%s: binary version %u: nmt reads CTranslate2 models of versions 1 to %d", r->path, u,
                             NMT_CT2_BINARY_VERSION);
    r->version = (int)u;
    r->revision = 1;
    if (r->version >= 2) {
        char *spec;
        if (read_string(r, &spec, "the spec name") < 0) return -1;
        snprintf(r->spec, sizeof r->spec, "%s", spec);
        free(spec);
        if (read_u32(r, &u, "the spec revision") < 0) return -1;
        r->revision = (int)u;
    }
    const char *spec = r->spec;
    if (strcmp(spec, "") != 0 && strcmp(spec, "TransformerBase") != 0 && strcmp(spec, "TransformerBig") != 0 &&
        strcmp(spec, "TransformerSpec") != 0)
        return nmt_error_set("%s: model spec '%s': nmt reads Transformer encoder-decoder models (TransformerSpec) only",
                             r->path, spec);
    if (r->revision < 1 || r->revision > NMT_CT2_REVISION)
        return nmt_error_set("%s: spec revision %d: nmt reads revisions 1 to %d", r->path, r->revision, NMT_CT2_REVISION);
    if (read_u32(r, &u, "the variable count") < 0) return -1;
    /* A variable takes at least 9 bytes (name length, a name of one NUL, rank, type, size): a count the
     * file cannot hold is refused before its table is made. */
    if (u > MAX_VARIABLES || u > r->size / 9)
        return nmt_error_set("%s: %u variables, more than the file can hold", r->path, u);
    if (!(r->vars = nmt_calloc(u ? u : 1, sizeof *r->vars))) return -1;
    for (r->count = 0; r->count < (int)u; r->count++)
        if (read_variable(r, &r->vars[r->count]) < 0) {
            r->count++;
            return -1;
        }
    if (r->version < 3) return 0;
    if (read_u32(r, &u, "the alias count") < 0) return -1;
    if (u > MAX_VARIABLES || u > r->size / 6) /* two names of at least 3 bytes each */
        return nmt_error_set("%s: %u aliases, more than the file can hold", r->path, u);
    if (!(r->aliases = nmt_calloc(u ? u : 1, sizeof *r->aliases))) return -1;
    for (r->alias_count = 0; r->alias_count < (int)u; r->alias_count++) {
        nmt_ct2_alias *a = &r->aliases[r->alias_count];
        if (read_string(r, &a->name, "an alias") < 0 || read_string(r, &a->target, "an alias target") < 0) {
            r->alias_count++;
            return -1;
        }
    }
    return 0;
}

int nmt_ct2_file_open(nmt_ct2_file *r, const char *path) {
    memset(r, 0, sizeof *r);
    r->path = path;
    r->chunk = NMT_CT2_CHUNK;
    if (nmt_open_regular(path, &r->fp, &r->size) < 0) return -1;
    if (read_header(r) == 0) return 0;
    nmt_ct2_file_close(r);
    return -1;
}

void nmt_ct2_file_close(nmt_ct2_file *r) {
    for (int i = 0; r->vars && i < r->count; i++) free(r->vars[i].name);
    for (int i = 0; r->aliases && i < r->alias_count; i++) {
        free(r->aliases[i].name);
        free(r->aliases[i].target);
    }
    free(r->vars);
    free(r->aliases);
    free(r->data);
    free(r->scales);
    if (r->fp) fclose(r->fp);
    memset(r, 0, sizeof *r);
}

/* The variable `name` (following an alias), or NULL; marks it used. */
nmt_ct2_var *nmt_ct2_file_find(nmt_ct2_file *r, const char *name) {
    for (int i = 0; i < r->alias_count; i++)
        if (strcmp(r->aliases[i].name, name) == 0) name = r->aliases[i].target;
    for (int i = 0; i < r->count; i++)
        if (strcmp(r->vars[i].name, name) == 0) {
            r->vars[i].used = 1;
            return &r->vars[i];
        }
    return NULL;
}

/* A float16 or bfloat16 value. */
static float half_value(uint16_t x, int dtype) {
    if (dtype == NMT_CT2_F16) return nmt_kv_half_value(x);
    const uint32_t bits = (uint32_t)x << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* A scalar variable's value (def when v is NULL or not a scalar). */
double nmt_ct2_file_scalar(const nmt_ct2_var *v, double def) {
    if (!v || v->rank != 0 || v->bytes != (size_t)nmt_ct2_item_size[v->dtype]) return def;
    const unsigned char *b = v->scalar;
    switch (v->dtype) {
    case NMT_CT2_I8: return (int8_t)b[0];
    case NMT_CT2_I16: { int16_t x; memcpy(&x, b, 2); return x; }
    case NMT_CT2_I32: { int32_t x; memcpy(&x, b, 4); return x; }
    case NMT_CT2_F32: { float x; memcpy(&x, b, 4); return x; }
    default: { uint16_t x; memcpy(&x, b, 2); return half_value(x, v->dtype); }
    }
}

/* A scalar attribute: scope/name, else the model-wide name (older revisions), else def. */
double nmt_ct2_file_attribute(nmt_ct2_file *r, const char *scope, const char *name, double def) {
    char full[NMT_CT2_MAX_NAME];
    snprintf(full, sizeof full, "%s/%s", scope, name);
    nmt_ct2_var *v = nmt_ct2_file_find(r, full);
    return nmt_ct2_file_scalar(v ? v : nmt_ct2_file_find(r, name), def);
}

/* Bytes [at, at + n) of v's data into out. */
static int read_bytes(nmt_ct2_file *r, const nmt_ct2_var *v, size_t at, void *out, size_t n) {
    if (v->bytes <= sizeof v->scalar) {
        memcpy(out, v->scalar + at, n);
        return 0;
    }
    if (fseek(r->fp, v->offset + (long)at, SEEK_SET) != 0) return nmt_error_set("%s: %s: %s", r->path, v->name, strerror(errno));
    nmt_pages_populate(out, n); /* a float32 matrix read straight into place: its pages in one call */
    return read_exact(r, out, n, v->name);
}

/* *buf holding at least n bytes (*cap: what it holds). */
static int reserve(void **buf, size_t *cap, size_t n) {
    if (n <= *cap) return 0;
    void *grown = nmt_realloc(*buf, n);
    if (!grown) return -1;
    *buf = grown;
    *cap = n;
    return 0;
}

size_t nmt_ct2_var_elements(const nmt_ct2_var *v) {
    size_t n = 1;
    for (int d = 0; d < v->rank; d++) n *= (size_t)v->shape[d];
    return n;
}

/* The scale variable of an int8 or int16 variable (NULL for an int16 one without: the global
 * scale), checked: one float32, or one per row. */
static int find_scale(nmt_ct2_file *r, const nmt_ct2_var *v, size_t rows, nmt_ct2_var **scale) {
    char name[NMT_CT2_MAX_NAME + 8];
    snprintf(name, sizeof name, "%s_scale", v->name);
    nmt_ct2_var *s = *scale = nmt_ct2_file_find(r, name);
    if (!s && v->dtype == NMT_CT2_I8) return nmt_error_set("%s: int8 variable %s has no %s", r->path, v->name, name);
    if (s && (s->dtype != NMT_CT2_F32 || (nmt_ct2_var_elements(s) != 1 && nmt_ct2_var_elements(s) != rows)))
        return nmt_error_set("%s: %s is not one float32 or one per row", r->path, name);
    return 0;
}

/* Items [first, first + n) of v (int8, int16, float16 or bfloat16; n * item size <= r->chunk bytes) as
 * float32 into out; scales[j] is the scale of row first_row + j (one scale: scales[0]). */
static int convert_chunk(nmt_ct2_file *r, nmt_ct2_var *v, size_t first, size_t n, size_t cols, size_t first_row,
                         const float *scales, int per_row, float *out) {
    const size_t item = (size_t)nmt_ct2_item_size[v->dtype];
    if (read_bytes(r, v, first * item, r->data, n * item) < 0) return -1;
    const unsigned char *b = r->data;
    for (size_t i = 0; i < n; i++) {
        const float scale = per_row ? scales[(first + i) / cols - first_row] : scales[0];
        switch (v->dtype) {
        case NMT_CT2_I8: out[i] = (float)(int8_t)b[i] * (1.0f / scale); break;
        case NMT_CT2_I16: { int16_t x; memcpy(&x, b + 2 * i, 2); out[i] = (float)x * (1.0f / scale); break; }
        default: {
            uint16_t x;
            memcpy(&x, b + 2 * i, 2);
            out[i] = half_value(x, v->dtype);
        }
        }
    }
    return 0;
}

/* Elements [first, first + count) of v as float32 into out: dequantized (q * (1 / scale), the scale per
 * row or one) or widened, read r->chunk bytes at a time. */
int nmt_ct2_file_floats_range(nmt_ct2_file *r, nmt_ct2_var *v, size_t first, size_t count, float *out) {
    const size_t n = nmt_ct2_var_elements(v), rows = v->rank == 2 ? (size_t)v->shape[0] : 1, cols = rows ? n / rows : 1;
    if (first > n || count > n - first)
        return nmt_error_set("%s: elements %zu to %zu of variable %s, which has %zu", r->path, first, first + count, v->name, n);
    if (v->dtype == NMT_CT2_I32) return nmt_error_set("%s: variable %s is int32, not a weight", r->path, v->name);
    /* Straight into out: the file's floats are the host's (as convert_chunk's copy assumes). */
    if (v->dtype == NMT_CT2_F32) return read_bytes(r, v, first * sizeof(float), out, count * sizeof(float));
    nmt_ct2_var *s = NULL;
    if ((v->dtype == NMT_CT2_I8 || v->dtype == NMT_CT2_I16) && find_scale(r, v, rows, &s) < 0) return -1;
    const int per_row = s && nmt_ct2_var_elements(s) != 1;
    const size_t item = (size_t)nmt_ct2_item_size[v->dtype], step = r->chunk / item ? r->chunk / item : 1;
    if (reserve(&r->data, &r->data_cap, (count < step ? count : step) * item) < 0) return -1;
    for (size_t at = first; at < first + count;) {
        const size_t k = first + count - at < step ? first + count - at : step;
        /* The scales of the chunk's rows (one for all without per-row scales). */
        const size_t first_row = per_row ? at / cols : 0, scale_count = per_row ? (at + k - 1) / cols - first_row + 1 : 1;
        if (reserve((void **)&r->scales, &r->scales_cap, scale_count * sizeof *r->scales) < 0) return -1;
        if (!s) r->scales[0] = global_int16_scale;
        else if (read_bytes(r, s, first_row * sizeof(float), r->scales, scale_count * sizeof(float)) < 0) return -1;
        if (convert_chunk(r, v, at, k, cols, first_row, r->scales, per_row, out + (at - first)) < 0) return -1;
        at += k;
    }
    return 0;
}

int nmt_ct2_file_floats(nmt_ct2_file *r, nmt_ct2_var *v, float *out) {
    return nmt_ct2_file_floats_range(r, v, 0, nmt_ct2_var_elements(v), out);
}


/* ---- the layout of the layers ---- */

const int nmt_ct2_activation_codes[NMT_ACTIVATION_GELU_SIGMOID + 1] = {
    [NMT_ACTIVATION_RELU] = 0, [NMT_ACTIVATION_GELU_TANH] = 1, [NMT_ACTIVATION_SWISH] = 2,
    [NMT_ACTIVATION_GELU] = 3, [NMT_ACTIVATION_GELU_SIGMOID] = 4};

void nmt_ct2_name(char *name, size_t size, const char *scope, int layer, const char *part) {
    if (layer >= 0) snprintf(name, size, "%.16s/layer_%d/%.200s", scope, layer, part);
    else snprintf(name, size, "%.16s/%.200s", scope, part);
}

typedef struct walk {
    nmt_ct2_part_fn fn;
    void *ctx;
    const char *scope;
    int layer;
} walk;

static int part(walk *w, const char *name, nmt_ct2_part_kind kind, float *data, float *beta, int64_t rows,
                int64_t cols) {
    nmt_ct2_part p = {.kind = kind, .data = data, .beta = beta, .rows = rows, .cols = cols};
    nmt_ct2_name(p.name, sizeof p.name, w->scope, w->layer, name);
    return w->fn(w->ctx, &p);
}

/* BLOCK/linear_I/{weight,bias}. */
static int linear(walk *w, const char *block, int i, float *weight, float *bias, int64_t rows, int64_t cols) {
    char name[64];
    snprintf(name, sizeof name, "%s/linear_%d/weight", block, i);
    if (part(w, name, NMT_CT2_PART_WEIGHT, weight, NULL, rows, cols) < 0) return -1;
    snprintf(name, sizeof name, "%s/linear_%d/bias", block, i);
    return part(w, name, NMT_CT2_PART_BIAS, bias, NULL, rows, 0);
}

static int norm(walk *w, const char *name, const nmt_norm_params *n, int64_t D) {
    return part(w, name, NMT_CT2_PART_NORM, n->weight, n->bias, D, 0);
}

/* Self-attention (linear_0 = q|k|v, linear_1 = out) or cross-attention (linear_0 = q, linear_1 =
 * k|v, linear_2 = out), then its layer_norm. */
static int attention(walk *w, const char *block, const nmt_attention_params *a, const nmt_norm_params *n, int64_t D,
                     int cross) {
    char name[64];
    if (linear(w, block, 0, a->q_weight, a->q_bias, cross ? D : 3 * D, D) < 0 ||
        (cross && linear(w, block, 1, a->k_weight, a->k_bias, 2 * D, D) < 0) ||
        linear(w, block, cross ? 2 : 1, a->o_weight, a->o_bias, D, D) < 0)
        return -1;
    snprintf(name, sizeof name, "%s/layer_norm", block);
    return norm(w, name, n, D);
}

static int ffn(walk *w, const nmt_ffn_params *f, const nmt_norm_params *n, int64_t D, int64_t F) {
    return linear(w, "ffn", 0, f->fc1_weight, f->fc1_bias, F, D) < 0 || linear(w, "ffn", 1, f->fc2_weight, f->fc2_bias, D, F) < 0
               ? -1
               : norm(w, "ffn/layer_norm", n, D);
}

int nmt_ct2_layout_layers(const nmt_model_config *c, const nmt_params *p, nmt_ct2_part_fn fn, void *ctx) {
    const int64_t D = c->d_model, F = c->ffn;
    walk w = {.fn = fn, .ctx = ctx, .scope = "encoder"};
    for (w.layer = 0; w.layer < c->encoder_layers; w.layer++) {
        const nmt_encoder_layer_params *e = &p->encoder[w.layer];
        if (attention(&w, "self_attention", &e->self_attn, &e->self_attn_norm, D, 0) < 0 ||
            ffn(&w, &e->ffn, &e->ffn_norm, D, F) < 0)
            return -1;
    }
    w.scope = "decoder";
    for (w.layer = 0; w.layer < c->decoder_layers; w.layer++) {
        const nmt_decoder_layer_params *d = &p->decoder[w.layer];
        if (attention(&w, "self_attention", &d->self_attn, &d->self_attn_norm, D, 0) < 0 ||
            attention(&w, "attention", &d->cross_attn, &d->cross_attn_norm, D, 1) < 0 ||
            ffn(&w, &d->ffn, &d->ffn_norm, D, F) < 0)
            return -1;
    }
    w.layer = -1;
    if (c->embedding_norm) {
        w.scope = "encoder";
        if (norm(&w, "layernorm_embedding", &p->src_embed_norm, D) < 0) return -1;
        w.scope = "decoder";
        if (norm(&w, "layernorm_embedding", &p->tgt_embed_norm, D) < 0) return -1;
    }
    if (c->norm_position != NMT_NORM_PRE) return 0;
    w.scope = "encoder";
    if (norm(&w, "layer_norm", &p->encoder_norm, D) < 0) return -1;
    w.scope = "decoder";
    return norm(&w, "layer_norm", &p->decoder_norm, D);
}
