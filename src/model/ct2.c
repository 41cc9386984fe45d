/* ct2: CTranslate2's model.bin, config.json and vocabularies read into an nmt_model (ct2.h). */
#include "model/ct2.h"

#include "model/ct2_file.h"
#include "model/imported.h"
#include "base/io.h"
#include "base/json.h"
#include "base/util.h"
#include "text/vocab.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SINUSOID_POSITIONS = 1024 }; /* rows of the table sinusoidal positions become */
static const float masked_logit = -1e30f; /* the output bias of rows a side lacks: exp() gives 0 */

/* ---- config.json and vocabularies ---- */

typedef struct ct2_config {
    char *unk, *bos, *eos, *start; /* tokens; start NULL: the bos token */
    int add_source_bos, add_source_eos, start_given;
    double layer_norm_epsilon;     /* 0: CTranslate2's default */
} ct2_config;

static void config_free(ct2_config *c) {
    free(c->unk);
    free(c->bos);
    free(c->eos);
    free(c->start);
}

static int json_flag(nmt_json *j, int *out) {
    if (nmt_json_accept_word(j, "true")) *out = 1;
    else if (nmt_json_accept_word(j, "false") || nmt_json_accept_word(j, "null")) *out = 0;
    else return nmt_json_error(j, "expected true or false");
    return 0;
}

static int read_config(const char *dir, ct2_config *c) {
    char *path = nmt_path_join(dir, "config.json"), *text = NULL, *key = NULL;
    size_t len;
    int rc = -1;
    nmt_json j;
    if (!path) return -1;
    if (!nmt_file_exists(path)) {
        rc = 0;
        goto done;
    }
    if (nmt_read_regular_file(path, 1 << 24, "a CTranslate2 config", &text, &len) < 0 ||
        nmt_json_init(&j, text, len, path, "CTranslate2 config", 0, 0) < 0 || nmt_json_expect(&j, '{') < 0)
        goto done;
    if (!nmt_json_accept(&j, '}')) do {
        free(key);
        key = NULL;
        if (nmt_json_string(&j, &key) < 0 || nmt_json_expect(&j, ':') < 0) goto done;
        char **token = strcmp(key, "unk_token") == 0 ? &c->unk : strcmp(key, "bos_token") == 0 ? &c->bos
                     : strcmp(key, "eos_token") == 0 ? &c->eos : strcmp(key, "decoder_start_token") == 0 ? &c->start
                     : NULL;
        int flag = 0;
        if (token && token == &c->start && nmt_json_accept_word(&j, "null")) {
            c->start_given = 1; /* the caller gives start tokens: nmt starts with bos */
        } else if (token) {
            free(*token);
            *token = NULL;
            if (nmt_json_string(&j, token) < 0) goto done;
            if (token == &c->start) c->start_given = 1;
        } else if (strcmp(key, "add_source_bos") == 0) {
            if (json_flag(&j, &c->add_source_bos) < 0) goto done;
        } else if (strcmp(key, "add_source_eos") == 0) {
            if (json_flag(&j, &c->add_source_eos) < 0) goto done;
        } else if (strcmp(key, "multi_query_attention") == 0) {
            if (json_flag(&j, &flag) < 0) goto done;
            if (flag) {
                nmt_error_set("%s: multi_query_attention: nmt does not implement multi-query attention", path);
                goto done;
            }
        } else if (strcmp(key, "layer_norm_epsilon") == 0 && nmt_json_peek(&j) != 'n') {
            if (nmt_json_number(&j, &c->layer_norm_epsilon) < 0) goto done;
        } else if (strcmp(key, "quantization_type") == 0 || strcmp(key, "quantization_bits") == 0) {
            nmt_error_set("%s: %s: nmt does not read AWQ-quantized models", path, key);
            goto done;
        } else if (nmt_json_skip_value(&j) < 0) {
            goto done;
        }
    } while (nmt_json_accept(&j, ','));
    if (nmt_json_expect(&j, '}') < 0 || nmt_json_end(&j) < 0) goto done;
    rc = 0;
done:
    free(key);
    free(text);
    free(path);
    return rc;
}

typedef struct vocab {
    char *path;
    char **tokens;
    int count, cap;
} vocab;

static void vocab_free(vocab *v) {
    for (int i = 0; i < v->count; i++) free(v->tokens[i]);
    free(v->tokens);
    free(v->path);
}

static int vocab_add(vocab *v, const char *token, size_t len) {
    if (v->count >= NMT_MODEL_MAX_VOCAB) return nmt_error_set("%s: more than %d tokens", v->path, NMT_MODEL_MAX_VOCAB);
    if (v->count == v->cap) {
        int cap = v->cap ? 2 * v->cap : 256;
        char **grown = nmt_realloc(v->tokens, (size_t)cap * sizeof *grown);
        if (!grown) return -1;
        v->tokens = grown;
        v->cap = cap;
    }
    char *copy = nmt_malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, token, len);
    copy[len] = '\0';
    v->tokens[v->count++] = copy;
    return 0;
}

static int vocab_index(const vocab *v, const char *token) {
    for (int i = 0; token && i < v->count; i++)
        if (strcmp(v->tokens[i], token) == 0) return i;
    return -1;
}

/* DIR/NAME.json (an array of strings) or DIR/NAME.txt (a token a line; a carriage return that ends
 * every line is dropped); 0 and nothing read when neither exists. */
static int vocab_read(const char *dir, const char *name, vocab *v) {
    char file[64];
    char *text = NULL;
    size_t len;
    int rc = -1, json = 1;
    snprintf(file, sizeof file, "%s.json", name);
    if (!(v->path = nmt_path_join(dir, file))) return -1;
    if (!nmt_file_exists(v->path)) {
        free(v->path);
        snprintf(file, sizeof file, "%s.txt", name);
        json = 0;
        if (!(v->path = nmt_path_join(dir, file))) return -1;
        if (!nmt_file_exists(v->path)) return 0;
    }
    if (nmt_read_regular_file(v->path, (size_t)1 << 30, "a vocabulary", &text, &len) < 0) return -1;
    if (json) {
        nmt_json j;
        char *token = NULL;
        if (nmt_json_init(&j, text, len, v->path, "vocabulary", 0, 0) < 0 || nmt_json_expect(&j, '[') < 0) goto done;
        if (!nmt_json_accept(&j, ']')) do {
            if (nmt_json_string(&j, &token) < 0) goto done;
            int added = vocab_add(v, token, strlen(token));
            free(token);
            if (added < 0) goto done;
        } while (nmt_json_accept(&j, ','));
        if (nmt_json_expect(&j, ']') < 0 || nmt_json_end(&j) < 0) goto done;
    } else {
        int all_cr = 1;
        for (size_t at = 0; at < len;) {
            const char *nl = memchr(text + at, '\n', len - at);
            const size_t end = nl ? (size_t)(nl - text) : len;
            if (end == at || text[end - 1] != '\r') all_cr = 0;
            if (vocab_add(v, text + at, end - at) < 0) goto done;
            at = end + 1;
        }
        for (int i = 0; all_cr && i < v->count; i++) v->tokens[i][strlen(v->tokens[i]) - 1] = '\0';
    }
    rc = v->count > 0 ? 1 : nmt_error_set("%s: an empty vocabulary", v->path);
done:
    free(text);
    return rc;
}

/* nmt ids of one side: from[id] = the CTranslate2 id it takes its rows from, -1 for none. */
typedef struct side {
    vocab *v;
    int32_t *from;
    int count;     /* nmt ids */
} side;

/* Renumbers a vocabulary: pad <- pad_token (if present), unk, bos <- start (if present), eos, then the
 * others in order. A special that is absent gets a row of its own (-1). */
static int side_order(side *s, const char *pad, const char *unk, const char *start, const char *eos,
                      const char *what) {
    const vocab *v = s->v;
    if (!(s->from = nmt_malloc(((size_t)v->count + 4) * sizeof *s->from))) return -1;
    int special[4] = {vocab_index(v, pad), vocab_index(v, unk), vocab_index(v, start), vocab_index(v, eos)};
    if (special[3] < 0) return nmt_error_set("%s: the %s vocabulary has no end token '%s'", v->path, what, eos);
    if (special[2] == special[3]) special[2] = -1; /* eos starts: bos gets a copy of its embedding (take_rows) */
    int n = 0;
    for (int i = 0; i < 4; i++) s->from[n++] = special[i];
    for (int i = 0; i < v->count; i++)
        if (i != special[0] && i != special[1] && i != special[2] && i != special[3]) s->from[n++] = i;
    s->count = n;
    return 0;
}

/* ---- the model ---- */

typedef struct build {
    nmt_ct2_file *r;
    nmt_model *m;
    float *buf;    /* scratch for NMT_CT2_CHUNK bytes of a table's rows as float32 (at least one row) */
    size_t buf_floats;
    int D;
} build;

/* Checks that variable `name` (NULL v: absent) has shape [rows] (cols 0) or [rows, cols]. */
static int check_shape(build *b, const nmt_ct2_var *v, const char *name, int64_t rows, int64_t cols) {
    if (!v) return nmt_error_set("%s: no variable %s", b->r->path, name);
    const int rank = cols ? 2 : 1;
    if (v->rank != rank || v->shape[0] != rows || (cols && v->shape[1] != cols))
        return nmt_error_set("%s: variable %s has shape [%lld%s%lld], not [%lld%s%lld] (a variant nmt does not "
                             "implement?)", b->r->path, v->name, (long long)v->shape[0], v->rank > 1 ? ", " : "",
                             v->rank > 1 ? (long long)v->shape[1] : 0LL, (long long)rows, cols ? ", " : "",
                             (long long)cols);
    b->m->int8_weights |= v->dtype == NMT_CT2_I8;
    return 0;
}

/* Reads variable `name` (NULL v: absent) of shape [rows] (cols 0) or [rows, cols] into dst. */
static int take(build *b, nmt_ct2_var *v, const char *name, float *dst, int64_t rows, int64_t cols) {
    return check_shape(b, v, name, rows, cols) < 0 ? -1 : nmt_ct2_file_floats(b->r, v, dst);
}

/* SCOPE/gamma and SCOPE/beta into gamma and beta; a gamma without a beta is RMSNorm. */
static int take_norm(build *b, const char *scope, float *gamma, float *beta) {
    char gamma_name[NMT_CT2_MAX_NAME + 8], beta_name[NMT_CT2_MAX_NAME + 8];
    snprintf(gamma_name, sizeof gamma_name, "%s/gamma", scope);
    snprintf(beta_name, sizeof beta_name, "%s/beta", scope);
    nmt_ct2_var *g = nmt_ct2_file_find(b->r, gamma_name), *v = nmt_ct2_file_find(b->r, beta_name);
    if (g && !v)
        return nmt_error_set("%s: %s without a beta: RMSNorm, which nmt does not implement", b->r->path, gamma_name);
    return take(b, g, gamma_name, gamma, b->D, 0) < 0 ? -1 : take(b, v, beta_name, beta, b->D, 0);
}

/* One part of the layer layout (ct2_file.h) into the model; a bias that is absent leaves its zeros. */
static int take_layer_part(void *ctx, const nmt_ct2_part *part) {
    build *b = ctx;
    if (part->kind == NMT_CT2_PART_NORM) return take_norm(b, part->name, part->data, part->beta);
    nmt_ct2_var *v = nmt_ct2_file_find(b->r, part->name);
    if (!v && part->kind == NMT_CT2_PART_BIAS) return 0;
    return take(b, v, part->name, part->data, part->rows, part->cols);
}

/* A table [rows, cols] (a vector [rows]: cols 0) of side s into dst [V, cols] in nmt's id order, times
 * `scale`, read a chunk of rows at a time; rows the side lacks are left as they are, and an absent
 * start token (bos) takes the row of `start_from` (-1: none). */
static int take_rows(build *b, nmt_ct2_var *v, const char *name, const side *s, int64_t rows, int64_t cols, float *dst,
                     float scale, int start_from) {
    const size_t W = cols ? (size_t)cols : 1, step = b->buf_floats / W;
    if (check_shape(b, v, name, rows, cols) < 0) return -1;
    for (size_t first = 0; first < (size_t)rows; first += step) {
        const size_t n = (size_t)rows - first < step ? (size_t)rows - first : step;
        if (nmt_ct2_file_floats_range(b->r, v, first * W, n * W, b->buf) < 0) return -1;
        for (int id = 0; id < s->count; id++) {
            const int from = id == NMT_BOS && s->from[id] < 0 ? start_from : s->from[id];
            if (from < 0 || (size_t)from < first || (size_t)from >= first + n) continue;
            for (size_t k = 0; k < W; k++) dst[(size_t)id * W + k] = b->buf[((size_t)from - first) * W + k] * scale;
        }
    }
    return 0;
}

/* CTranslate2's sinusoidal encoding of position t (from 0; it counts from 1) into row[D]: the sines
 * of the D/2 frequencies, then their cosines, computed in float as it does. */
static void sinusoid_row(float *row, int t, int D) {
    const int half = D / 2;
    const float increment = logf(10000.0f) / (float)(half - 1);
    for (int j = 0; j < half; j++) {
        const float angle = (float)(t + 1) * expf(-increment * (float)j);
        row[j] = sinf(angle);
        row[half + j] = cosf(angle);
    }
}

static int take_positions(build *b, const char *scope, float *dst) {
    char name[NMT_CT2_MAX_NAME];
    const int D = b->D, P = b->m->config.max_positions;
    nmt_ct2_name(name, sizeof name, scope, -1, "position_encodings/encodings");
    nmt_ct2_var *v = nmt_ct2_file_find(b->r, name);
    if (!v) {
        for (int t = 0; t < P; t++) sinusoid_row(dst + (size_t)t * (size_t)D, t, D);
        return 0;
    }
    if (v->rank != 2 || v->shape[0] < P) return nmt_error_set("%s: %s has not %d rows", b->r->path, name, P);
    if (check_shape(b, v, name, v->shape[0], D) < 0) return -1;
    return nmt_ct2_file_floats_range(b->r, v, 0, (size_t)P * (size_t)D, dst);
}

/* The scale of the embeddings relative to nmt's sqrt(D): scale_embeddings (multiply_by_sqrt_depth
 * before) is a flag (sqrt(D) or nothing) or a value (1: nothing); without it, sqrt(D). */
static float embedding_scale(build *b, const char *scope) {
    char name[NMT_CT2_MAX_NAME];
    nmt_ct2_name(name, sizeof name, scope, -1, "scale_embeddings");
    nmt_ct2_var *v = nmt_ct2_file_find(b->r, name);
    if (!v) {
        nmt_ct2_name(name, sizeof name, scope, -1, "embeddings/multiply_by_sqrt_depth");
        v = nmt_ct2_file_find(b->r, name);
    }
    const double value = nmt_ct2_file_scalar(v, 1.0);
    const float root = sqrtf((float)b->D);
    if (!v || (v->dtype == NMT_CT2_I8 && value != 0)) return 1.0f;
    return v->dtype == NMT_CT2_I8 || value == 1.0 ? 1.0f / root : (float)value / root;
}

/* Refuses what a scope's attributes ask that nmt does not implement; sets the feed-forward activation,
 * which both scopes must share. */
static int check_scope(build *b, const char *scope, int pre_norm, nmt_activation *activation) {
    const nmt_ct2_file *r = b->r;
    const double code = nmt_ct2_file_attribute(b->r, scope, "activation", 0);
    nmt_activation a = NMT_ACTIVATION_RELU;
    while (a <= NMT_ACTIVATION_GELU_SIGMOID && nmt_ct2_activation_codes[a] != code) a++;
    if (a > NMT_ACTIVATION_GELU_SIGMOID)
        return nmt_error_set("%s: %s/activation %g: nmt's feed-forward layers use ReLU (0), GELUTanh (1), Swish (2), "
                             "GELU (3) or GELUSigmoid (4)", r->path, scope, code);
    if (strcmp(scope, "encoder") != 0 && a != *activation)
        return nmt_error_set("%s: the encoder and the decoder differ in activation: nmt does not implement that",
                             r->path);
    *activation = a;
    static const char *const flags[] = {"alibi", "start_from_zero_embedding", "sliding_window",
                                        "multi_query_attention"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (nmt_ct2_file_attribute(b->r, scope, flags[i], 0) != 0)
            return nmt_error_set("%s: %s/%s: nmt does not implement it", r->path, scope, flags[i]);
    if (nmt_ct2_file_attribute(b->r, scope, "pre_norm", 1) != pre_norm)
        return nmt_error_set("%s: the encoder and the decoder differ in pre_norm: nmt does not implement that", r->path);
    char name[NMT_CT2_MAX_NAME];
    nmt_ct2_name(name, sizeof name, scope, -1, "embeddings_1/weight");
    if (nmt_ct2_file_find(b->r, name)) return nmt_error_set("%s: %s: nmt does not implement source features", r->path, name);
    nmt_ct2_file_attribute(b->r, scope, "embeddings_merge", 0); /* one embedding: nothing to merge */
    nmt_ct2_file_attribute(b->r, scope, "alibi_use_positive_positions", 0); /* without ALiBi: nothing */
    nmt_ct2_file_attribute(b->r, scope, "scale_alibi", 0);
    nmt_ct2_file_attribute(b->r, scope, "alignment_layer", 0);  /* alignments: nmt has its own rule */
    nmt_ct2_file_attribute(b->r, scope, "alignment_heads", 0);
    return 0;
}

/* Rotary positions: 1 when every self-attention layer of both sides carries CTranslate2's rotary_dim
 * as nmt's rope applies it (the whole head, its pairs interleaved, base 10000), 0 when none does;
 * anything else, or rotary cross-attention, is refused by name. */
static int rotary_positions(nmt_ct2_file *r, const nmt_model_config *c) {
    static const struct { const char *side, *attention; } scopes[] = {
        {"encoder", "self_attention"}, {"decoder", "self_attention"}, {"decoder", "attention"}};
    const int head = c->d_model / c->heads;
    int found = 0, layers = 0;
    for (size_t s = 0; s < sizeof scopes / sizeof scopes[0]; s++) {
        const int n = scopes[s].side[0] == 'e' ? c->encoder_layers : c->decoder_layers;
        for (int i = 0; i < n; i++) {
            char scope[64], name[NMT_CT2_MAX_NAME];
            snprintf(scope, sizeof scope, "%s/layer_%d/%s", scopes[s].side, i, scopes[s].attention);
            snprintf(name, sizeof name, "%s/rotary_dim", scope);
            if (!nmt_ct2_file_find(r, name)) continue;
            const double dim = nmt_ct2_file_attribute(r, scope, "rotary_dim", 0);
            if (strcmp(scopes[s].attention, "attention") == 0)
                return nmt_error_set("%s: %s: rotary cross-attention: nmt does not implement it", r->path, name);
            if ((dim != 0 && dim != head) || nmt_ct2_file_attribute(r, scope, "rotary_interleave", 1) != 1 ||
                nmt_ct2_file_attribute(r, scope, "rotary_base", 10000) != 10000 ||
                nmt_ct2_file_attribute(r, scope, "rotary_scaling_type", -1) != -1)
                return nmt_error_set("%s: %s: nmt's rotary positions turn the whole head (rotary_dim 0 or %d), its pairs "
                                     "interleaved, at base 10000, unscaled", r->path, scope, head);
            found++;
        }
        if (s < 2) layers += n;
    }
    if (found != 0 && found != layers)
        return nmt_error_set("%s: rotary_dim in %d of %d self-attention layers: nmt does not implement that", r->path,
                             found, layers);
    return found > 0;
}

static int count_layers(nmt_ct2_file *r, const char *scope) {
    int n = 0;
    char name[NMT_CT2_MAX_NAME];
    for (;; n++) {
        nmt_ct2_name(name, sizeof name, scope, n, "ffn/linear_0/weight");
        int found = 0;
        for (int i = 0; i < r->count && !found; i++) found = strcmp(r->vars[i].name, name) == 0;
        if (!found) return n;
    }
}

static nmt_ct2_var *embeddings(nmt_ct2_file *r, const char *scope, char *name, size_t size) {
    nmt_ct2_name(name, size, scope, -1, "embeddings/weight");
    nmt_ct2_var *v = nmt_ct2_file_find(r, name);
    if (v) return v;
    nmt_ct2_name(name, size, scope, -1, "embeddings_0/weight");
    return nmt_ct2_file_find(r, name);
}

/* The output bias: the projection's (or 0), masked_logit where the target side has no token. */
static int take_output_bias(build *b, const side *t) {
    char name[] = "decoder/projection/bias";
    nmt_ct2_var *v = nmt_ct2_file_find(b->r, name);
    float *bias = b->m->p.output_bias;
    for (int id = 0; id < b->m->config.vocab_size; id++) bias[id] = id < t->count && t->from[id] >= 0 ? 0.0f : masked_logit;
    return v ? take_rows(b, v, name, t, t->v->count, 0, bias, 1.0f, -1) : 0;
}

static int take_layers(build *b) {
    nmt_model *m = b->m;
    if (nmt_ct2_layout_layers(&m->config, &m->p, take_layer_part, b) < 0) return -1;
    const char *const scopes[2] = {"encoder", "decoder"};
    for (int i = 0; i < 2 && m->config.norm_position != NMT_NORM_PRE; i++) {
        char name[NMT_CT2_MAX_NAME];
        nmt_ct2_name(name, sizeof name, scopes[i], -1, "layer_norm/gamma");
        if (nmt_ct2_file_find(b->r, name))
            return nmt_error_set("%s: %s in a post-norm model: nmt does not implement a final norm there", b->r->path,
                                 name);
    }
    for (int i = 0; i < b->r->count; i++)
        if (!b->r->vars[i].used)
            return nmt_error_set("%s: variable %s: nmt does not implement what it is for", b->r->path, b->r->vars[i].name);
    return 0;
}

/* The model's config from its variables; *positions gets the rows of its position tables. */
static int make_config(build *b, const ct2_config *cfg, const side *s, const side *t, nmt_ct2_var *src_embed,
                       nmt_ct2_var *tgt_embed, int source_eos, nmt_model_config *c) {
    nmt_ct2_file *r = b->r;
    *c = nmt_model_config_default();
    if (src_embed->rank != 2 || tgt_embed->rank != 2 || src_embed->shape[1] != tgt_embed->shape[1])
        return nmt_error_set("%s: the embeddings are not two matrices of one width", r->path);
    if (src_embed->shape[0] != s->v->count || tgt_embed->shape[0] != t->v->count)
        return nmt_error_set("%s: embeddings of %lld source and %lld target rows, but the vocabularies %s and %s have "
                             "%d and %d tokens", r->path, (long long)src_embed->shape[0],
                             (long long)tgt_embed->shape[0], s->v->path, t->v->path, s->v->count, t->v->count);
    b->D = c->d_model = (int)src_embed->shape[1];
    c->vocab_size = s->count > t->count ? s->count : t->count;
    const int fallback_heads = strcmp(r->spec, "TransformerBig") == 0 ? 16 : 8;
    c->heads = (int)nmt_ct2_file_attribute(r, "encoder", "num_heads", fallback_heads);
    if ((int)nmt_ct2_file_attribute(r, "decoder", "num_heads", fallback_heads) != c->heads)
        return nmt_error_set("%s: the encoder and the decoder differ in num_heads: nmt does not implement that", r->path);
    nmt_ct2_var *ffn = nmt_ct2_file_find(r, "encoder/layer_0/ffn/linear_0/weight");
    if (!ffn || ffn->rank != 2) return nmt_error_set("%s: no variable encoder/layer_0/ffn/linear_0/weight", r->path);
    c->ffn = (int)ffn->shape[0];
    c->encoder_layers = count_layers(r, "encoder");
    c->decoder_layers = count_layers(r, "decoder");
    c->dropout = 0.0f;
    const int pre_norm = nmt_ct2_file_attribute(r, "encoder", "pre_norm", 1) != 0;
    c->norm_position = pre_norm ? NMT_NORM_PRE : NMT_NORM_POST;
    if (check_scope(b, "encoder", pre_norm, &c->activation) < 0 || check_scope(b, "decoder", pre_norm, &c->activation) < 0)
        return -1;
    const int src_norm = nmt_ct2_file_find(r, "encoder/layernorm_embedding/gamma") != NULL;
    if (src_norm != (nmt_ct2_file_find(r, "decoder/layernorm_embedding/gamma") != NULL))
        return nmt_error_set("%s: %s/layernorm_embedding without %s/layernorm_embedding: nmt does not implement that",
                             r->path, src_norm ? "encoder" : "decoder", src_norm ? "decoder" : "encoder");
    c->embedding_norm = src_norm;
    const int rope = rotary_positions(r, c);
    if (rope < 0) return -1;
    c->positions = rope ? NMT_POSITIONS_ROPE : NMT_POSITIONS_LEARNED;
    c->max_positions = SINUSOID_POSITIONS;
    const char *const tables[2] = {"encoder/position_encodings/encodings", "decoder/position_encodings/encodings"};
    for (int i = 0; i < 2; i++) {
        nmt_ct2_var *v = nmt_ct2_file_find(r, tables[i]);
        if (v && v->rank == 2 && v->shape[0] < c->max_positions) c->max_positions = (int)v->shape[0];
    }
    if (cfg->layer_norm_epsilon > 0) c->norm_eps = (float)cfg->layer_norm_epsilon;
    c->tie_embeddings = NMT_TIE_NONE;
    c->output_bias = 1;
    c->source_eos = source_eos;
    if (nmt_model_config_check(c) < 0) return nmt_error_prefix("%s", r->path);
    return 0;
}

static int fill_model(build *b, const side *s, const side *t, nmt_ct2_var *src_embed, nmt_ct2_var *tgt_embed,
                      const char *src_name, const char *tgt_name) {
    nmt_model *m = b->m;
    nmt_ct2_file *r = b->r;
    b->buf_floats = NMT_CT2_CHUNK / sizeof *b->buf;
    if (b->buf_floats < (size_t)b->D) b->buf_floats = (size_t)b->D;
    if (!(b->buf = nmt_malloc(b->buf_floats * sizeof *b->buf))) return -1;
    nmt_ct2_var *projection = nmt_ct2_file_find(r, "decoder/projection/weight");
    if (take_rows(b, src_embed, src_name, s, s->v->count, b->D, m->p.src_embed, embedding_scale(b, "encoder"), -1) < 0 ||
        take_rows(b, tgt_embed, tgt_name, t, t->v->count, b->D, m->p.tgt_embed, embedding_scale(b, "decoder"),
                  t->from[NMT_BOS] < 0 ? t->from[NMT_EOS] : -1) < 0 ||
        take_rows(b, projection, "decoder/projection/weight", t, t->v->count, b->D, m->p.output, 1.0f, -1) < 0 ||
        take_output_bias(b, t) < 0 ||
        (m->p.src_positions && (take_positions(b, "encoder", m->p.src_positions) < 0 ||
                                take_positions(b, "decoder", m->p.tgt_positions) < 0)))
        return -1;
    return take_layers(b);
}

int nmt_ct2_is_model_dir(const char *dir) {
    char *path = nmt_path_join(dir, "model.bin");
    int found = path && nmt_file_exists(path);
    free(path);
    return found;
}

/* The vocabularies: shared_vocabulary for both sides, else source_vocabulary and target_vocabulary;
 * each gets the unknown token when it lacks it. */
static int read_vocabularies(const char *dir, const char *unk, vocab *shared, vocab *src, vocab *tgt, vocab **s,
                             vocab **t) {
    int found = vocab_read(dir, "shared_vocabulary", shared);
    if (found < 0) return -1;
    if (found) {
        *s = *t = shared;
    } else {
        if ((found = vocab_read(dir, "source_vocabulary", src)) <= 0)
            return found < 0 ? -1 : nmt_error_set("%s: no shared_vocabulary or source_vocabulary (.txt or .json)", dir);
        if ((found = vocab_read(dir, "target_vocabulary", tgt)) <= 0)
            return found < 0 ? -1 : nmt_error_set("%s: no target_vocabulary (.txt or .json)", dir);
        *s = src;
        *t = tgt;
    }
    if (vocab_index(*s, unk) < 0 && vocab_add(*s, unk, strlen(unk)) < 0) return -1;
    if (*t != *s && vocab_index(*t, unk) < 0 && vocab_add(*t, unk, strlen(unk)) < 0) return -1;
    return 0;
}

int nmt_ct2_open(const char *dir, const char *spm_path, nmt_model *model, nmt_spm **spm) {
    memset(model, 0, sizeof *model);
    *spm = NULL;
    nmt_ct2_file r;
    ct2_config cfg = {0};
    vocab shared = {0}, src = {0}, tgt = {0}, *sv = NULL, *tv = NULL;
    side s = {0}, t = {0};
    build b = {.r = &r, .m = model};
    nmt_model_config c;
    char src_name[NMT_CT2_MAX_NAME], tgt_name[NMT_CT2_MAX_NAME];
    int rc = -1;
    char *path = nmt_path_join(dir, "model.bin");
    if (!path) return -1;
    if (nmt_ct2_file_open(&r, path) < 0) {
        free(path);
        return -1;
    }
    if (read_config(dir, &cfg) < 0) goto done;
    const char *unk = cfg.unk ? cfg.unk : "<unk>", *bos = cfg.bos ? cfg.bos : "<s>", *eos = cfg.eos ? cfg.eos : "</s>";
    const int source_bos = cfg.add_source_bos || nmt_ct2_file_attribute(&r, "", "with_source_bos", 0) != 0;
    const int source_eos = cfg.add_source_eos || nmt_ct2_file_attribute(&r, "", "with_source_eos", 0) != 0;
    const char *start = cfg.start_given ? (cfg.start ? cfg.start : bos)
                                        : nmt_ct2_file_attribute(&r, "", "with_target_bos", 1) != 0 ? bos : eos;
    nmt_ct2_file_attribute(&r, "", "user_decoder_start_tokens", 0); /* nmt starts every sentence with `start` */
    if (source_bos) {
        nmt_error_set("%s: the model adds a bos to the source (add_source_bos): nmt does not implement that", dir);
        goto done;
    }
    if (read_vocabularies(dir, unk, &shared, &src, &tgt, &sv, &tv) < 0) goto done;
    s.v = sv;
    t.v = tv;
    if (side_order(&s, "<blank>", unk, bos, eos, "source") < 0 ||
        side_order(&t, vocab_index(tv, "<blank>") >= 0 ? "<blank>" : "<pad>", unk, start, eos, "target") < 0)
        goto done;
    if (s.from[NMT_PAD] < 0 && vocab_index(sv, "<pad>") >= 0) {
        free(s.from);
        if (side_order(&s, "<pad>", unk, bos, eos, "source") < 0) goto done;
    }
    nmt_ct2_var *src_embed = embeddings(&r, "encoder", src_name, sizeof src_name);
    nmt_ct2_var *tgt_embed = embeddings(&r, "decoder", tgt_name, sizeof tgt_name);
    if (!src_embed || !tgt_embed) {
        nmt_error_set("%s: no variable %s", path, src_embed ? tgt_name : src_name);
        goto done;
    }
    if (make_config(&b, &cfg, &s, &t, src_embed, tgt_embed, source_eos, &c) < 0 || nmt_model_init(model, &c) < 0 ||
        fill_model(&b, &s, &t, src_embed, tgt_embed, src_name, tgt_name) < 0)
        goto done;
    const nmt_imported_side source = {s.v->tokens, s.from, s.count}, target = {t.v->tokens, t.from, t.count};
    if (nmt_imported_spm(&source, &target, spm_path, spm_path, model, spm) < 0) goto done;
    rc = 0;
done:
    if (rc < 0) nmt_imported_release(model, spm);
    free(b.buf);
    free(s.from);
    free(t.from);
    vocab_free(&shared);
    vocab_free(&src);
    vocab_free(&tgt);
    config_free(&cfg);
    nmt_ct2_file_close(&r);
    free(path);
    return rc;
}
