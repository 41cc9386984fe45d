/* ct2_write: an nmt model as a CTranslate2 model directory (ct2_write.h). */
#include "model/ct2_write.h"

#include "model/ct2_file.h"
#include "base/io.h"
#include "base/json.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "compute/kernels.h"
#include "compute/kvstore.h"
#include "text/vocab.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *const nmt_ct2_quantization_names[] = {"float32", "int8", "int16", "float16", "bfloat16", NULL};

/* What a variable of model.bin is: an attribute, floats (biases, norms, position tables: converted to
 * float16 or bfloat16 when asked), a weight (quantized when asked), the scale of a quantized weight
 * (data and shape are the weight's), or an alias of another variable. */
typedef enum { VAR_SCALAR, VAR_FLOATS, VAR_WEIGHT, VAR_SCALE, VAR_ALIAS } var_kind;

enum { NAME = 128 }; /* bytes of the names written (the longest is about 50) */

typedef struct var {
    char name[NAME];
    var_kind kind;
    int scalar_type;          /* VAR_SCALAR: NMT_CT2_I8, I16, I32 or F32 */
    double scalar;
    const float *data;        /* [rows, cols] (cols 0: [rows]) */
    int64_t rows, cols;
    char target[NAME];        /* VAR_ALIAS: the variable it names */
} var;

typedef struct writer {
    var *vars;
    int count, cap;
    nmt_ct2_quantization q;
    float *sinusoids;         /* [max_positions, D]: nmt's sinusoidal positions as a table */
} writer;

static var *add(writer *w, const char *name, var_kind kind) {
    if (w->count == w->cap) {
        const int cap = w->cap ? 2 * w->cap : 128;
        var *grown = nmt_realloc(w->vars, (size_t)cap * sizeof *grown);
        if (!grown) return NULL;
        w->vars = grown;
        w->cap = cap;
    }
    var *v = &w->vars[w->count++];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%.127s", name);
    v->kind = kind;
    return v;
}

static int add_scalar(writer *w, const char *scope, const char *name, int type, double value) {
    char full[NAME];
    nmt_ct2_name(full, sizeof full, scope, -1, name);
    var *v = add(w, full, VAR_SCALAR);
    if (!v) return -1;
    v->scalar_type = type;
    v->scalar = value;
    return 0;
}

static int add_floats(writer *w, const char *name, var_kind kind, const float *data, int64_t rows, int64_t cols) {
    var *v = add(w, name, kind);
    if (!v) return -1;
    v->data = data;
    v->rows = rows;
    v->cols = cols;
    return 0;
}

/* A part of the layer layout (ct2_file.h) as its variables. */
static int add_layer_part(void *ctx, const nmt_ct2_part *part) {
    writer *w = ctx;
    if (part->kind != NMT_CT2_PART_NORM)
        return add_floats(w, part->name, part->kind == NMT_CT2_PART_WEIGHT ? VAR_WEIGHT : VAR_FLOATS, part->data,
                          part->rows, part->cols);
    char name[NAME];
    snprintf(name, sizeof name, "%.100s/gamma", part->name);
    if (add_floats(w, name, VAR_FLOATS, part->data, part->rows, 0) < 0) return -1;
    snprintf(name, sizeof name, "%.100s/beta", part->name);
    return add_floats(w, name, VAR_FLOATS, part->beta, part->rows, 0);
}

/* The attributes TransformerSpec gives each scope, as its converters write them for nmt's variant. */
static int add_attributes(writer *w, const nmt_model_config *c) {
    const int pre = c->norm_position == NMT_NORM_PRE;
    const char *const scopes[2] = {"encoder", "decoder"};
    for (int i = 0; i < 2; i++)
        if (add_scalar(w, scopes[i], "activation", NMT_CT2_I8, nmt_ct2_activation_codes[c->activation]) < 0 ||
            add_scalar(w, scopes[i], "num_heads", NMT_CT2_I16, c->heads) < 0 ||
            add_scalar(w, scopes[i], "pre_norm", NMT_CT2_I8, pre) < 0 ||
            add_scalar(w, scopes[i], "scale_embeddings", NMT_CT2_I8, 1) < 0)
            return -1;
    return add_scalar(w, "encoder", "embeddings_merge", NMT_CT2_I8, 0) < 0 ||
                   add_scalar(w, "encoder", "multi_query_attention", NMT_CT2_I8, 0) < 0 ||
                   add_scalar(w, "decoder", "alibi", NMT_CT2_I8, 0) < 0 ||
                   add_scalar(w, "decoder", "alibi_use_positive_positions", NMT_CT2_I8, 0) < 0 ||
                   add_scalar(w, "decoder", "scale_alibi", NMT_CT2_I8, 0) < 0 ||
                   add_scalar(w, "decoder", "alignment_heads", NMT_CT2_I16, 1) < 0 ||
                   add_scalar(w, "decoder", "alignment_layer", NMT_CT2_I16, -1) < 0 ||
                   add_scalar(w, "decoder", "start_from_zero_embedding", NMT_CT2_I8, 0) < 0
               ? -1
               : 0;
}

static int by_name(const void *a, const void *b) { return strcmp(((const var *)a)->name, ((const var *)b)->name); }

/* A variable equal to one earlier in name order becomes its alias (the converters' _alias_variables;
 * equality here is bitwise). */
static void find_aliases(writer *w) {
    for (int i = 0; i < w->count; i++) {
        var *v = &w->vars[i];
        if (v->kind == VAR_SCALAR) continue;
        const size_t n = (size_t)v->rows * (size_t)(v->cols ? v->cols : 1);
        for (int j = 0; j < i; j++) {
            const var *o = &w->vars[j];
            if (o->kind == v->kind && o->rows == v->rows && o->cols == v->cols &&
                (o->data == v->data || memcmp(o->data, v->data, n * sizeof *v->data) == 0)) {
                v->kind = VAR_ALIAS;
                memcpy(v->target, o->name, sizeof v->target);
                break;
            }
        }
    }
}

/* Every weight to quantize (not an alias) gets its NAME_scale. */
static int add_scales(writer *w) {
    if (w->q != NMT_CT2_QUANT_INT8 && w->q != NMT_CT2_QUANT_INT16) return 0;
    const int count = w->count;
    for (int i = 0; i < count; i++) {
        if (w->vars[i].kind != VAR_WEIGHT) continue;
        char name[NAME];
        snprintf(name, sizeof name, "%.100s_scale", w->vars[i].name);
        const var weight = w->vars[i];
        if (add_floats(w, name, VAR_SCALE, weight.data, weight.rows, weight.cols) < 0) return -1;
    }
    return 0;
}

static int stored_type(const writer *w, const var *v) {
    if (v->kind == VAR_SCALAR) return v->scalar_type;
    if (v->kind == VAR_SCALE) return NMT_CT2_F32;
    switch (w->q) {
    case NMT_CT2_QUANT_INT8: return v->kind == VAR_WEIGHT ? NMT_CT2_I8 : NMT_CT2_F32;
    case NMT_CT2_QUANT_INT16: return v->kind == VAR_WEIGHT ? NMT_CT2_I16 : NMT_CT2_F32;
    case NMT_CT2_QUANT_FLOAT16: return NMT_CT2_F16;
    case NMT_CT2_QUANT_BFLOAT16: return NMT_CT2_BF16;
    default: return NMT_CT2_F32;
    }
}

/* The shape model.bin gives v: a scalar, [rows] or [rows, cols]; an int8 scale [rows], an int16 one a
 * scalar. */
static int stored_shape(const writer *w, const var *v, uint32_t *dims) {
    if (v->kind == VAR_SCALAR || (v->kind == VAR_SCALE && w->q == NMT_CT2_QUANT_INT16)) return 0;
    dims[0] = (uint32_t)v->rows;
    if (v->kind == VAR_SCALE || !v->cols) return 1;
    dims[1] = (uint32_t)v->cols;
    return 2;
}

static uint16_t bfloat16_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* a NaN stays a quiet NaN */
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* The scale of row r (int8: 127 / max|row|, 127 for a row of zeros) or of the matrix (int16: 2^10 /
 * max|W|), as the converters compute it in float32. */
static float row_scale(const writer *w, const var *v, int64_t r) {
    const size_t cols = (size_t)(v->cols ? v->cols : 1);
    const float *x = v->data + (w->q == NMT_CT2_QUANT_INT8 ? (size_t)r * cols : 0);
    const size_t n = w->q == NMT_CT2_QUANT_INT8 ? cols : (size_t)v->rows * cols;
    float amax = 0.0f;
    for (size_t i = 0; i < n; i++) amax = fmaxf(amax, fabsf(x[i]));
    if (w->q == NMT_CT2_QUANT_INT8) return 127.0f / (amax == 0.0f ? 127.0f : amax);
    return amax == 0.0f ? 1.0f : 1024.0f / amax;
}

/* v's bytes as stored into out (sized for the widest variable). */
static size_t encode(const writer *w, const var *v, int type, unsigned char *out) {
    if (v->kind == VAR_SCALAR) {
        const int8_t i8 = (int8_t)v->scalar;
        const int16_t i16 = (int16_t)v->scalar;
        const int32_t i32 = (int32_t)v->scalar;
        const float f = (float)v->scalar;
        memcpy(out, type == NMT_CT2_I8    ? (const void *)&i8
                    : type == NMT_CT2_I16 ? (const void *)&i16
                    : type == NMT_CT2_I32 ? (const void *)&i32
                                          : (const void *)&f,
               (size_t)nmt_ct2_item_size[type]);
        return (size_t)nmt_ct2_item_size[type];
    }
    const size_t cols = (size_t)(v->cols ? v->cols : 1), n = (size_t)v->rows * cols;
    if (v->kind == VAR_SCALE) {
        const int64_t scales = w->q == NMT_CT2_QUANT_INT8 ? v->rows : 1;
        for (int64_t r = 0; r < scales; r++) {
            const float s = row_scale(w, v, r);
            memcpy(out + 4 * r, &s, 4);
        }
        return 4 * (size_t)scales;
    }
    float scale = type == NMT_CT2_I16 ? row_scale(w, v, 0) : 1.0f;
    for (size_t i = 0; i < n; i++) {
        if (type == NMT_CT2_I8 && i % cols == 0) scale = row_scale(w, v, (int64_t)(i / cols));
        const float x = v->data[i];
        if (type == NMT_CT2_F32) {
            memcpy(out + 4 * i, &x, 4);
        } else if (type == NMT_CT2_I8) {
            out[i] = (unsigned char)(int8_t)nearbyintf(x * scale);
        } else if (type == NMT_CT2_I16) {
            const int16_t q = (int16_t)fminf(fmaxf(nearbyintf(x * scale), -32768.0f), 32767.0f);
            memcpy(out + 2 * i, &q, 2);
        } else {
            const uint16_t h = type == NMT_CT2_F16 ? nmt_kv_half_bits(x) : bfloat16_bits(x);
            memcpy(out + 2 * i, &h, 2);
        }
    }
    return n * (size_t)nmt_ct2_item_size[type];
}

static int put(nmt_atomic_file *f, const void *data, size_t n, const char *path) {
    return nmt_io_write(f->fp, data, n, path);
}

static int put_u32(nmt_atomic_file *f, uint32_t x, const char *path) {
    const unsigned char b[4] = {(unsigned char)x, (unsigned char)(x >> 8), (unsigned char)(x >> 16),
                                (unsigned char)(x >> 24)};
    return put(f, b, 4, path);
}

/* A string as ct2_file.h reads it: uint16 length with the NUL, the bytes, the NUL. */
static int put_string(nmt_atomic_file *f, const char *s, const char *path) {
    const size_t n = strlen(s) + 1;
    const unsigned char len[2] = {(unsigned char)n, (unsigned char)(n >> 8)};
    return put(f, len, 2, path) < 0 || put(f, s, n, path) < 0 ? -1 : 0;
}

static int write_model_bin(writer *w, const char *path) {
    size_t widest = 8;
    int aliases = 0;
    for (int i = 0; i < w->count; i++) {
        const var *v = &w->vars[i];
        const size_t n = (size_t)v->rows * (size_t)(v->cols ? v->cols : 1) * 4;
        if (n > widest) widest = n;
        aliases += v->kind == VAR_ALIAS;
    }
    unsigned char *buf = nmt_malloc(widest);
    nmt_atomic_file f;
    if (!buf || nmt_atomic_open(&f, path) < 0) {
        free(buf);
        return -1;
    }
    int rc = put_u32(&f, NMT_CT2_BINARY_VERSION, path) < 0 || put_string(&f, "TransformerSpec", path) < 0 ||
             put_u32(&f, NMT_CT2_REVISION, path) < 0 || put_u32(&f, (uint32_t)(w->count - aliases), path) < 0;
    for (int i = 0; !rc && i < w->count; i++) {
        const var *v = &w->vars[i];
        if (v->kind == VAR_ALIAS) continue;
        uint32_t dims[2];
        const int rank = stored_shape(w, v, dims), type = stored_type(w, v);
        const unsigned char r = (unsigned char)rank, t = (unsigned char)type;
        const size_t bytes = encode(w, v, type, buf);
        if (bytes > UINT32_MAX) {
            rc = nmt_error_set("%s: variable %s of %zu bytes: CTranslate2's layout holds at most 4 GiB a variable",
                               path, v->name, bytes);
            break;
        }
        rc = put_string(&f, v->name, path) < 0 || put(&f, &r, 1, path) < 0;
        for (int d = 0; !rc && d < rank; d++) rc = put_u32(&f, dims[d], path) < 0;
        rc = rc || put(&f, &t, 1, path) < 0 || put_u32(&f, (uint32_t)bytes, path) < 0 || put(&f, buf, bytes, path) < 0;
    }
    rc = rc || put_u32(&f, (uint32_t)aliases, path) < 0;
    for (int i = 0; !rc && i < w->count; i++)
        if (w->vars[i].kind == VAR_ALIAS)
            rc = put_string(&f, w->vars[i].name, path) < 0 || put_string(&f, w->vars[i].target, path) < 0;
    free(buf);
    if (rc) {
        nmt_atomic_abort(&f);
        return -1;
    }
    return nmt_atomic_commit(&f);
}

/* Rotary positions as CTranslate2's attention spec writes them in each self-attention layer: the whole
 * head (rotary_dim 0), its pairs interleaved, base 10000: nmt's rope. */
static int add_rotary(writer *w, const nmt_model_config *c) {
    const char *const sides[2] = {"encoder", "decoder"};
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < (s ? c->decoder_layers : c->encoder_layers); i++) {
            static const char *const names[3] = {"rotary_dim", "rotary_interleave", "rotary_base"};
            static const int types[3] = {NMT_CT2_I32, NMT_CT2_I8, NMT_CT2_F32};
            static const double values[3] = {0, 1, 10000};
            for (int k = 0; k < 3; k++) {
                char name[NAME];
                snprintf(name, sizeof name, "layer_%d/self_attention/%s", i, names[k]);
                if (add_scalar(w, sides[s], name, types[k], values[k]) < 0) return -1;
            }
        }
    return 0;
}

/* The variables of model in name order, aliases found, scales added. */
static int collect(writer *w, const nmt_model *model) {
    const nmt_model_config *c = &model->config;
    const nmt_params *p = &model->p;
    const int64_t V = c->vocab_size, D = c->d_model, P = c->max_positions;
    const float *src_positions = p->src_positions, *tgt_positions = p->tgt_positions;
    if (c->positions == NMT_POSITIONS_SINUSOIDAL) {
        if (!(w->sinusoids = nmt_malloc((size_t)P * (size_t)D * sizeof *w->sinusoids))) return -1;
        nmt_sinusoidal_positions(w->sinusoids, (int)P, (int)D);
        src_positions = tgt_positions = w->sinusoids;
    }
    const int rope = c->positions == NMT_POSITIONS_ROPE;
    if (add_attributes(w, c) < 0 || nmt_ct2_layout_layers(c, p, add_layer_part, w) < 0 ||
        add_floats(w, "encoder/embeddings_0/weight", VAR_WEIGHT, p->src_embed, V, D) < 0 ||
        add_floats(w, "decoder/embeddings/weight", VAR_WEIGHT, p->tgt_embed, V, D) < 0 ||
        add_floats(w, "decoder/projection/weight", VAR_WEIGHT, p->output, V, D) < 0 ||
        (c->output_bias && add_floats(w, "decoder/projection/bias", VAR_FLOATS, p->output_bias, V, 0) < 0) ||
        (rope ? add_rotary(w, c) < 0
              : add_floats(w, "encoder/position_encodings/encodings", VAR_FLOATS, src_positions, P, D) < 0 ||
                    add_floats(w, "decoder/position_encodings/encodings", VAR_FLOATS, tgt_positions, P, D) < 0))
        return -1;
    qsort(w->vars, (size_t)w->count, sizeof *w->vars, by_name);
    find_aliases(w);
    if (add_scales(w) < 0) return -1;
    qsort(w->vars, (size_t)w->count, sizeof *w->vars, by_name);
    return 0;
}

/* The shortest decimal that reads back as the float x (Python's repr of a float32 value's double would
 * print all its digits). */
static void shortest_float(char *out, size_t size, float x) {
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(out, size, "%.*g", digits, (double)x);
        if (strtof(out, NULL) == x) return;
    }
}

/* The piece of id on one side. An id the side lacks gets a name that keeps its place (ct2_write.h):
 * pad "<blank>", unk, bos and eos the other side's piece or CTranslate2's default token. */
static const char *piece_name(const nmt_spm *spm, int id, int source, char *scratch, size_t size) {
    static const char *const specials[] = {"<blank>", "<unk>", "<s>", "</s>"};
    const char *piece = source ? nmt_spm_source_piece(spm, id) : nmt_spm_piece(spm, id);
    if (*piece) return piece;
    if (id <= NMT_EOS) return id != NMT_PAD && *nmt_spm_piece(spm, id) ? nmt_spm_piece(spm, id) : specials[id];
    snprintf(scratch, size, "<nmt_unused_%d>", id);
    return scratch;
}

/* DIR/NAME.json: the pieces of one side as a JSON array, one a line as the converters indent it. */
static int write_vocabulary(const char *dir, const char *name, const nmt_spm *spm, int source) {
    nmt_strbuf b = {0};
    char scratch[32], file[64];
    const int V = nmt_spm_vocab_size(spm);
    nmt_strbuf_puts(&b, "[");
    for (int id = 0; id < V; id++) {
        nmt_strbuf_puts(&b, id ? ",\n  " : "\n  ");
        nmt_json_append_string(&b, piece_name(spm, id, source, scratch, sizeof scratch));
    }
    nmt_strbuf_puts(&b, "\n]");
    snprintf(file, sizeof file, "%s.json", name);
    char *path = nmt_path_join(dir, file);
    const int rc = !path || b.failed ? -1 : nmt_atomic_write(path, b.data, b.len);
    free(path);
    nmt_strbuf_free(&b);
    return rc;
}

/* config.json as the converters write it (keys sorted, indent 2). */
static int write_config(const char *dir, const nmt_model *model, const nmt_spm *spm) {
    nmt_strbuf b = {0};
    char eps[32], scratch[32];
    shortest_float(eps, sizeof eps, model->config.norm_eps);
    const char *bos = piece_name(spm, NMT_BOS, 0, scratch, sizeof scratch);
    nmt_strbuf_printf(&b, "{\n  \"add_source_bos\": false,\n  \"add_source_eos\": %s,\n  \"bos_token\": ",
                      model->config.source_eos ? "true" : "false");
    nmt_json_append_string(&b, bos);
    nmt_strbuf_puts(&b, ",\n  \"decoder_start_token\": ");
    nmt_json_append_string(&b, bos);
    nmt_strbuf_puts(&b, ",\n  \"eos_token\": ");
    nmt_json_append_string(&b, piece_name(spm, NMT_EOS, 0, scratch, sizeof scratch));
    nmt_strbuf_printf(&b, ",\n  \"layer_norm_epsilon\": %s,\n  \"multi_query_attention\": false,\n  \"unk_token\": ",
                      eps);
    nmt_json_append_string(&b, piece_name(spm, NMT_UNK, 0, scratch, sizeof scratch));
    nmt_strbuf_puts(&b, "\n}\n");
    char *path = nmt_path_join(dir, "config.json");
    const int rc = !path || b.failed ? -1 : nmt_atomic_write(path, b.data, b.len);
    free(path);
    nmt_strbuf_free(&b);
    return rc;
}

/* 1 when every id has the same piece on both sides. */
static int shared_pieces(const nmt_spm *spm) {
    char a[32], b[32];
    for (int id = 0; id < nmt_spm_vocab_size(spm); id++)
        if (strcmp(piece_name(spm, id, 1, a, sizeof a), piece_name(spm, id, 0, b, sizeof b)) != 0) return 0;
    return 1;
}

int nmt_ct2_write(const char *dir, const nmt_model *model, const nmt_spm *spm, nmt_ct2_quantization quantization) {
    if (nmt_spm_vocab_size(spm) != model->config.vocab_size)
        return nmt_error_set("the vocabulary has %d pieces but the model %d", nmt_spm_vocab_size(spm),
                             model->config.vocab_size);
    writer w = {.q = quantization};
    char *bin = nmt_path_join(dir, "model.bin");
    int rc = !bin || collect(&w, model) < 0 || write_model_bin(&w, bin) < 0 || write_config(dir, model, spm) < 0 ? -1 : 0;
    if (rc == 0)
        rc = shared_pieces(spm) ? write_vocabulary(dir, "shared_vocabulary", spm, 0)
             : write_vocabulary(dir, "source_vocabulary", spm, 1) < 0 ? -1
                                                                      : write_vocabulary(dir, "target_vocabulary", spm, 0);
    free(w.vars);
    free(w.sinusoids);
    free(bin);
    return rc;
}
