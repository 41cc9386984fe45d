/* marian: Marian's .npz models and their YAML read into an nmt_model (marian.h). */
#include "model/marian.h"

#include "base/io.h"
#include "base/npz.h"
#include "base/util.h"
#include "compute/kvstore.h"
#include "model/imported.h"
#include "text/vocab.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

enum { SINUSOID_POSITIONS = 1024, NAME = 160, CHUNK = 1 << 20 /* bytes of float32 an array is read in */ };
static const float masked_logit = -1e30f; /* the output bias of ids a side lacks: exp() gives 0 */
static const size_t max_unpacked = (size_t)8 << 30;
static const size_t max_yaml = (size_t)64 << 20;

/* ---- YAML ---- */

typedef struct yml {
    yaml_document_t doc;
    int loaded;
    const char *what; /* the file, for errors */
} yml;

static int yml_load(yml *y, const char *text, size_t len, const char *what) {
    yaml_parser_t parser;
    y->what = what;
    if (!yaml_parser_initialize(&parser)) return nmt_error_set("%s: cannot start the YAML parser", what);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int rc = 0;
    if (!yaml_parser_load(&parser, &y->doc)) {
        rc = nmt_error_set("%s:%zu: YAML error: %s", what, parser.problem_mark.line + 1,
                           parser.problem ? parser.problem : "damaged");
    } else {
        y->loaded = 1;
        const yaml_node_t *root = yaml_document_get_root_node(&y->doc);
        if (!root || root->type != YAML_MAPPING_NODE) rc = nmt_error_set("%s: not a YAML map", what);
    }
    yaml_parser_delete(&parser);
    return rc;
}

static void yml_free(yml *y) {
    if (y->loaded) yaml_document_delete(&y->doc);
    y->loaded = 0;
}

static const char *scalar(const yaml_node_t *n) {
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The value of key in the root map, or NULL. */
static yaml_node_t *yml_get(yml *y, const char *key) {
    const yaml_node_t *root = yaml_document_get_root_node(&y->doc);
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        const char *k = scalar(yaml_document_get_node(&y->doc, p->key));
        if (k && strcmp(k, key) == 0) return yaml_document_get_node(&y->doc, p->value);
    }
    return NULL;
}

/* A scalar option (def when absent); a sequence or map is an error naming the key. */
static int opt_string(yml *y, const char *key, const char *def, const char **out) {
    const yaml_node_t *n = yml_get(y, key);
    *out = n ? scalar(n) : def;
    return *out ? 0 : nmt_error_set("%s: %s is not a single value", y->what, key);
}

static int opt_bool(yml *y, const char *key, int *out) {
    const char *v;
    if (opt_string(y, key, "false", &v) < 0) return -1;
    *out = strcmp(v, "true") == 0;
    return *out || strcmp(v, "false") == 0 ? 0 : nmt_error_set("%s: %s is '%s', not true or false", y->what, key, v);
}

static int parse_int(const char *v, long max, long *out) {
    char *end;
    *out = v && *v ? strtol(v, &end, 10) : -1;
    return v && *v && !*end && *out >= 0 && *out <= max ? 0 : -1;
}

static int opt_int(yml *y, const char *key, long def, long *out) {
    const char *v;
    char text[32];
    snprintf(text, sizeof text, "%ld", def);
    if (opt_string(y, key, text, &v) < 0) return -1;
    return parse_int(v, 1 << 20, out) == 0 ? 0 : nmt_error_set("%s: %s is '%s', not a count", y->what, key, v);
}

/* Reads a YAML file of at most max_yaml bytes. */
static int yml_read(yml *y, const char *path, const char *what_file) {
    char *text = NULL;
    size_t len;
    if (nmt_read_regular_file(path, max_yaml, what_file, &text, &len) < 0) return -1;
    int rc = yml_load(y, text, len, path);
    free(text);
    return rc;
}

/* ---- the options of special:model.yml ---- */

typedef struct options {
    long heads;
    nmt_activation activation;
    int pre_norm, unscaled, positions; /* positions: 0 none, 1 sinusoid, 2 trained (Wpos) */
    int embedding_norm;                /* transformer-postprocess-emb "n" */
} options;

/* Drops the dropouts ('d') of a pre/postprocess string: they do nothing at inference. */
static void without_dropout(const char *ops, char *out, size_t size) {
    size_t n = 0;
    for (; *ops && n + 1 < size; ops++)
        if (*ops != 'd') out[n++] = *ops;
    out[n] = '\0';
}

static int read_options(yml *y, options *o) {
    const char *type, *autoreg, *act, *pre, *post, *top, *emb;
    long depth;
    int flag;
    if (opt_string(y, "type", "", &type) < 0) return -1;
    if (strcmp(type, "transformer") != 0)
        return nmt_error_set("%s: type '%s': nmt reads Marian's transformer models only", y->what, type);
    if (opt_string(y, "transformer-decoder-autoreg", "self-attention", &autoreg) < 0) return -1;
    if (strcmp(autoreg, "self-attention") != 0)
        return nmt_error_set("%s: transformer-decoder-autoreg '%s'%s: nmt implements self-attention only", y->what,
                             autoreg, strcmp(autoreg, "rnn") == 0 ? " (SSRU)" : "");
    if (opt_string(y, "transformer-ffn-activation", "swish", &act) < 0) return -1;
    static const struct { const char *name; nmt_activation kind; } activations[] = {
        {"relu", NMT_ACTIVATION_RELU}, {"swish", NMT_ACTIVATION_SWISH},
        {"gelu", NMT_ACTIVATION_GELU_SIGMOID}}; /* Marian's gelu is x * sigmoid(1.702 x) */
    size_t a = 0, n = sizeof activations / sizeof activations[0];
    while (a < n && strcmp(act, activations[a].name) != 0) a++;
    if (a == n)
        return nmt_error_set("%s: transformer-ffn-activation '%s': nmt implements relu, swish and gelu", y->what, act);
    o->activation = activations[a].kind;
    static const char *const depths[] = {"transformer-ffn-depth", "transformer-decoder-ffn-depth"};
    for (int i = 0; i < 2; i++) {
        if (opt_int(y, depths[i], i ? 0 : 2, &depth) < 0) return -1;
        if (depth != 2 && !(i && depth == 0))
            return nmt_error_set("%s: %s %ld: nmt's feed-forward layers have 2 layers", y->what, depths[i], depth);
    }
    if (opt_int(y, "transformer-heads", 8, &o->heads) < 0) return -1;
    if (opt_string(y, "transformer-preprocess", "", &pre) < 0 || opt_string(y, "transformer-postprocess", "dan", &post) < 0 ||
        opt_string(y, "transformer-postprocess-top", "", &top) < 0 ||
        opt_string(y, "transformer-postprocess-emb", "d", &emb) < 0)
        return -1;
    char p[16], q[16], t[16], e[16];
    without_dropout(pre, p, sizeof p);
    without_dropout(post, q, sizeof q);
    without_dropout(top, t, sizeof t);
    without_dropout(emb, e, sizeof e);
    if (*e && strcmp(e, "n") != 0)
        return nmt_error_set("%s: transformer-postprocess-emb '%s': nmt implements '' and 'n' (a layernorm), with or "
                             "without dropout 'd'", y->what, emb);
    o->embedding_norm = *e != '\0';
    o->pre_norm = strcmp(p, "n") == 0 && strcmp(q, "a") == 0 && strcmp(t, "n") == 0;
    if (!o->pre_norm && !(!*p && strcmp(q, "an") == 0 && !*t))
        return nmt_error_set("%s: transformer-preprocess '%s', transformer-postprocess '%s', transformer-postprocess-top "
                             "'%s': nmt implements post-norm ('', 'dan', '') and pre-norm ('n', 'da', 'n') only",
                             y->what, pre, post, top);
    static const char *const refused[] = {"right-left", "transformer-no-projection", "transformer-pool"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        if (opt_bool(y, refused[i], &flag) < 0) return -1;
        if (flag) return nmt_error_set("%s: %s: nmt does not implement it", y->what, refused[i]);
    }
    const yaml_node_t *tied = yml_get(y, "transformer-tied-layers");
    if (tied && !(tied->type == YAML_SEQUENCE_NODE && tied->data.sequence.items.start == tied->data.sequence.items.top))
        return nmt_error_set("%s: transformer-tied-layers: nmt does not implement tied layers", y->what);
    int trained, disabled;
    /* Tied embeddings need no option: Marian saves a tied table once (Wemb, or no output matrix). */
    if (opt_bool(y, "transformer-train-positions", &trained) < 0 ||
        opt_bool(y, "transformer-disable-position-embeddings", &disabled) < 0)
        return -1;
    o->positions = disabled ? 0 : trained ? 2 : 1;
    o->unscaled = o->positions != 1; /* Marian scales by sqrt(D) only with its sinusoids */
    return 0;
}

/* ---- vocabularies ---- */

typedef struct vocab {
    char *path;
    char **pieces; /* by Marian id */
    int count;
} vocab;

static void vocab_free(vocab *v) {
    for (int i = 0; v->pieces && i < v->count; i++) free(v->pieces[i]);
    free(v->pieces);
    free(v->path);
    memset(v, 0, sizeof *v);
}

static int vocab_index(const vocab *v, const char *piece) {
    for (int i = 0; i < v->count; i++)
        if (strcmp(v->pieces[i], piece) == 0) return i;
    return -1;
}

/* A YAML map piece -> id whose ids are 0 .. count-1, each once. */
static int vocab_read(vocab *v, const char *path) {
    yml y = {0};
    int rc = -1;
    if (!(v->path = nmt_strdup(path)) || yml_read(&y, path, "a Marian vocabulary") < 0) goto done;
    const yaml_node_t *root = yaml_document_get_root_node(&y.doc);
    const long n = (long)(root->data.mapping.pairs.top - root->data.mapping.pairs.start);
    if (n < 2 || n > NMT_MODEL_MAX_VOCAB) {
        nmt_error_set("%s: %ld pieces (2 to %d)", path, n, NMT_MODEL_MAX_VOCAB);
        goto done;
    }
    if (!(v->pieces = nmt_calloc((size_t)n, sizeof *v->pieces))) goto done;
    v->count = (int)n;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        const yaml_node_t *key = yaml_document_get_node(&y.doc, p->key);
        const char *piece = scalar(key), *value = scalar(yaml_document_get_node(&y.doc, p->value));
        long id;
        if (!piece || parse_int(value, n - 1, &id) < 0 || v->pieces[id]) {
            nmt_error_set("%s:%zu: %s", path, key->start_mark.line + 1,
                          !piece ? "a key that is not a piece" : "an id that is not a number below the vocabulary's "
                                                                  "size or is given twice");
            goto done;
        }
        if (!(v->pieces[id] = nmt_strdup(piece))) goto done;
    }
    rc = 0;
done:
    yml_free(&y);
    return rc;
}

/* nmt ids of one side: from[id] = the Marian id whose rows it takes, -1 for none. */
typedef struct side {
    const vocab *v;
    int32_t *from;
    int count;
} side;

/* pad <- <pad> (if present), unk <- <unk>, bos: none (a zero embedding), eos <- </s>, then the rest. */
static int side_order(side *s, const vocab *v) {
    s->v = v;
    if (!(s->from = nmt_malloc(((size_t)v->count + 4) * sizeof *s->from))) return -1;
    const int special[4] = {vocab_index(v, "<pad>"), vocab_index(v, "<unk>"), -1, vocab_index(v, "</s>")};
    if (special[NMT_UNK] < 0 || special[NMT_EOS] < 0)
        return nmt_error_set("%s: no %s piece (Marian's %s token)", v->path, special[NMT_EOS] < 0 ? "</s>" : "<unk>",
                             special[NMT_EOS] < 0 ? "end" : "unknown");
    int n = 0;
    for (int i = 0; i < 4; i++) s->from[n++] = special[i];
    for (int i = 0; i < v->count; i++)
        if (i != special[NMT_PAD] && i != special[NMT_UNK] && i != special[NMT_EOS]) s->from[n++] = i;
    s->count = n;
    return 0;
}

static int same_sides(const vocab *a, const vocab *b) {
    if (a->count != b->count) return 0;
    for (int i = 0; i < a->count; i++)
        if (strcmp(a->pieces[i], b->pieces[i]) != 0) return 0;
    return 1;
}

/* ---- the model ---- */

typedef struct build {
    nmt_npz *z;
    nmt_model *m;
    float *buf;        /* a chunk of an array's rows as float32: CHUNK bytes, or one row if wider */
    size_t buf_floats;
    void *raw;         /* the same rows as stored (float16, float64) */
    int D;
} build;

/* Array `name` checked to hold floats of shape [rows, cols] (a bias: [1, cols] or [cols]) and marked
 * used, or NULL with the error set. */
static nmt_npy *find_array(build *b, const char *name, int64_t rows, int64_t cols) {
    nmt_npy *a = nmt_npz_find(b->z, name);
    if (!a) return nmt_error_set("%s: no array %s", b->z->path, name), NULL;
    const int bias = rows == 1;
    if (!((a->rank == 2 && a->shape[0] == rows && a->shape[1] == cols) || (bias && a->rank == 1 && a->shape[0] == cols)))
        return nmt_error_set("%s: array %s has not the shape [%lld, %lld] (a variant nmt does not implement?)",
                             b->z->path, name, (long long)rows, (long long)cols), NULL;
    if (a->dtype == NMT_NPY_I8 || a->dtype == NMT_NPY_U8)
        return nmt_error_set("%s: array %s holds bytes, not floats", b->z->path, name), NULL;
    a->used = 1;
    return a;
}

/* The stored rows of cols floats that one chunk holds. */
static size_t chunk_rows(const build *b, size_t cols) { return b->buf_floats / cols; }

/* Rows [first, first + n) of array a (cols floats each, n <= chunk_rows) into b->buf as float32. */
static int read_rows(build *b, const nmt_npy *a, size_t first, size_t n, size_t cols) {
    const size_t count = n * cols;
    if (nmt_npz_read_range(b->z, a, first * cols, count, a->dtype == NMT_NPY_F32 ? (void *)b->buf : b->raw) < 0)
        return -1;
    for (size_t i = 0; a->dtype == NMT_NPY_F16 && i < count; i++) b->buf[i] = nmt_kv_half_value(((uint16_t *)b->raw)[i]);
    for (size_t i = 0; a->dtype == NMT_NPY_F64 && i < count; i++) b->buf[i] = (float)((double *)b->raw)[i];
    return 0;
}

/* The name PREFIX_SUFFIX into name[NAME]. */
static const char *part_name(char *name, const char *prefix, const char *suffix) {
    snprintf(name, NAME, "%.120s_%s", prefix, suffix);
    return name;
}

/* PREFIX_SUFFIX of Marian's shape [in, out] into dst [out, in] (transposed), a chunk of rows at a time. */
static int take_matrix(build *b, const char *prefix, const char *suffix, float *dst, int in, int out) {
    char name[NAME];
    const nmt_npy *a = find_array(b, part_name(name, prefix, suffix), in, out);
    if (!a) return -1;
    const size_t step = chunk_rows(b, (size_t)out);
    for (size_t first = 0; first < (size_t)in; first += step) {
        const size_t n = (size_t)in - first < step ? (size_t)in - first : step;
        if (read_rows(b, a, first, n, (size_t)out) < 0) return -1;
        for (size_t i = 0; i < n; i++)
            for (int o = 0; o < out; o++) dst[(size_t)o * (size_t)in + first + i] = b->buf[i * (size_t)out + (size_t)o];
    }
    return 0;
}

static int take_vector(build *b, const char *prefix, const char *suffix, float *dst, int n) {
    char name[NAME];
    const nmt_npy *a = find_array(b, part_name(name, prefix, suffix), 1, n);
    if (!a || read_rows(b, a, 0, 1, (size_t)n) < 0) return -1;
    memcpy(dst, b->buf, (size_t)n * sizeof *dst);
    return 0;
}

/* PREFIX_ln_scale and PREFIX_ln_bias, with "_pre" for a pre-norm model's sublayer norms. */
static int take_norm(build *b, const char *prefix, const char *suffix, nmt_norm_params *n) {
    char scale[32], bias[32];
    snprintf(scale, sizeof scale, "ln_scale%s", suffix);
    snprintf(bias, sizeof bias, "ln_bias%s", suffix);
    return take_vector(b, prefix, scale, n->weight, b->D) < 0 ? -1 : take_vector(b, prefix, bias, n->bias, b->D);
}

/* PREFIX_W{q,k,v,o}, _b{q,k,v,o} and the norm PREFIX_Wo_ln_*. */
static int take_attention(build *b, const char *prefix, const char *norm_suffix, nmt_attention_params *a,
                          nmt_norm_params *norm) {
    const int D = b->D;
    float *w[4] = {a->q_weight, a->k_weight, a->v_weight, a->o_weight}, *bias[4] = {a->q_bias, a->k_bias, a->v_bias, a->o_bias};
    static const char *const parts = "qkvo";
    for (int i = 0; i < 4; i++) {
        const char wname[3] = {'W', parts[i], '\0'}, bname[3] = {'b', parts[i], '\0'};
        if (take_matrix(b, prefix, wname, w[i], D, D) < 0 || take_vector(b, prefix, bname, bias[i], D) < 0) return -1;
    }
    char wo[NAME];
    snprintf(wo, sizeof wo, "%.120s_Wo", prefix);
    return take_norm(b, wo, norm_suffix, norm);
}

static int take_ffn(build *b, const char *prefix, const char *norm_suffix, nmt_ffn_params *f, nmt_norm_params *norm) {
    const int D = b->D, F = b->m->config.ffn;
    char ffn[NAME];
    snprintf(ffn, sizeof ffn, "%.120s_ffn", prefix);
    if (take_matrix(b, prefix, "W1", f->fc1_weight, D, F) < 0 || take_vector(b, prefix, "b1", f->fc1_bias, F) < 0 ||
        take_matrix(b, prefix, "W2", f->fc2_weight, F, D) < 0 || take_vector(b, prefix, "b2", f->fc2_bias, D) < 0)
        return -1;
    return take_norm(b, ffn, norm_suffix, norm);
}

static int take_layers(build *b, int pre_norm) {
    nmt_model *m = b->m;
    const char *suffix = pre_norm ? "_pre" : "";
    char prefix[NAME];
    /* The embeddings' norm is a preprocess step in Marian's code: "_pre" whatever the model's norm position. */
    if (m->config.embedding_norm && (take_norm(b, "encoder_emb", "_pre", &m->p.src_embed_norm) < 0 ||
                                     take_norm(b, "decoder_emb", "_pre", &m->p.tgt_embed_norm) < 0))
        return -1;
    for (int l = 0; l < m->config.encoder_layers; l++) {
        nmt_encoder_layer_params *e = &m->p.encoder[l];
        snprintf(prefix, sizeof prefix, "encoder_l%d_self", l + 1);
        if (take_attention(b, prefix, suffix, &e->self_attn, &e->self_attn_norm) < 0) return -1;
        snprintf(prefix, sizeof prefix, "encoder_l%d_ffn", l + 1);
        if (take_ffn(b, prefix, suffix, &e->ffn, &e->ffn_norm) < 0) return -1;
    }
    for (int l = 0; l < m->config.decoder_layers; l++) {
        nmt_decoder_layer_params *d = &m->p.decoder[l];
        snprintf(prefix, sizeof prefix, "decoder_l%d_self", l + 1);
        if (take_attention(b, prefix, suffix, &d->self_attn, &d->self_attn_norm) < 0) return -1;
        snprintf(prefix, sizeof prefix, "decoder_l%d_context", l + 1);
        if (take_attention(b, prefix, suffix, &d->cross_attn, &d->cross_attn_norm) < 0) return -1;
        snprintf(prefix, sizeof prefix, "decoder_l%d_ffn", l + 1);
        if (take_ffn(b, prefix, suffix, &d->ffn, &d->ffn_norm) < 0) return -1;
    }
    if (pre_norm && (take_norm(b, "encoder_top", "", &m->p.encoder_norm) < 0 ||
                     take_norm(b, "decoder_top", "", &m->p.decoder_norm) < 0))
        return -1;
    return 0;
}

/* Table `name` [rows of side s, D] into dst [V, D] in nmt's id order, times scale; with transposed, the
 * table is Marian's output matrix [D, rows]. Read a chunk of stored rows at a time; ids without a row
 * stay zero. */
static int take_rows(build *b, const char *name, const side *s, float *dst, float scale, int transposed) {
    const size_t D = (size_t)b->D, rows = (size_t)s->v->count, stored = transposed ? D : rows, cols = transposed ? rows : D;
    const nmt_npy *a = find_array(b, name, (int64_t)stored, (int64_t)cols);
    if (!a) return -1;
    const size_t step = chunk_rows(b, cols);
    for (size_t first = 0; first < stored; first += step) {
        const size_t n = stored - first < step ? stored - first : step;
        if (read_rows(b, a, first, n, cols) < 0) return -1;
        for (int id = 0; id < s->count; id++) {
            const int from = s->from[id];
            if (from < 0) continue;
            if (transposed) {
                for (size_t k = 0; k < n; k++) dst[(size_t)id * D + first + k] = scale * b->buf[k * rows + (size_t)from];
            } else if ((size_t)from >= first && (size_t)from < first + n) {
                for (size_t k = 0; k < D; k++) dst[(size_t)id * D + k] = scale * b->buf[((size_t)from - first) * D + k];
            }
        }
    }
    return 0;
}

/* Marian's sinusoid of position t (from 0) into row[D]: the sines of the D/2 frequencies, then their
 * cosines, in float as it computes them. */
static void sinusoid_row(float *row, int t, int D) {
    const int half = D / 2;
    const float increment = logf(10000.0f) / ((float)half - 1.0f);
    for (int i = 0; i < D; i++) {
        const float angle = (float)t * expf((float)(i % half) * -increment);
        row[i] = i < half ? sinf(angle) : cosf(angle);
    }
}

static int take_positions(build *b, const options *o) {
    nmt_model *m = b->m;
    const int D = b->D, P = m->config.max_positions;
    const nmt_npy *a = o->positions == 2 ? find_array(b, "Wpos", P, D) : NULL;
    if (o->positions == 2 && !a) return -1;
    for (size_t first = 0, step = chunk_rows(b, (size_t)D); a && first < (size_t)P; first += step) {
        const size_t n = (size_t)P - first < step ? (size_t)P - first : step;
        if (read_rows(b, a, first, n, (size_t)D) < 0) return -1;
        memcpy(m->p.src_positions + first * (size_t)D, b->buf, n * (size_t)D * sizeof(float));
    }
    for (int t = 0; o->positions == 1 && t < P; t++) sinusoid_row(m->p.src_positions + (size_t)t * (size_t)D, t, D);
    memcpy(m->p.tgt_positions, m->p.src_positions, (size_t)P * (size_t)D * sizeof(float));
    return 0;
}

/* The output bias: Marian's decoder_ff_logit_out_b (or 0), masked_logit where the target side has no
 * piece. */
static int take_output_bias(build *b, const side *t) {
    static const char name[] = "decoder_ff_logit_out_b";
    const int present = nmt_npz_find(b->z, name) != NULL;
    const nmt_npy *a = present ? find_array(b, name, 1, t->v->count) : NULL;
    if (present && (!a || read_rows(b, a, 0, 1, (size_t)t->v->count) < 0)) return -1;
    for (int id = 0; id < b->m->config.vocab_size; id++) {
        const int from = id < t->count ? t->from[id] : -1;
        b->m->p.output_bias[id] = from < 0 ? masked_logit : present ? b->buf[from] : 0.0f;
    }
    return 0;
}

/* Layers counted by their feed-forward matrices (PREFIX_l{N}_ffn_W1). */
static int count_layers(const nmt_npz *z, const char *scope) {
    char name[NAME];
    int n = 0;
    for (;; n++) {
        snprintf(name, sizeof name, "%s_l%d_ffn_W1", scope, n + 1);
        if (!nmt_npz_find(z, name)) return n;
    }
}

static const char *source_table(const nmt_npz *z) { return nmt_npz_find(z, "encoder_Wemb") ? "encoder_Wemb" : "Wemb"; }
static const char *target_table(const nmt_npz *z) { return nmt_npz_find(z, "decoder_Wemb") ? "decoder_Wemb" : "Wemb"; }

static int make_config(build *b, const options *o, const side *s, const side *t, nmt_model_config *c) {
    nmt_npz *z = b->z;
    const nmt_npy *emb = nmt_npz_find(z, target_table(z)), *ffn = nmt_npz_find(z, "encoder_l1_ffn_W1");
    if (!emb || emb->rank != 2) return nmt_error_set("%s: no array %s (a matrix)", z->path, target_table(z));
    if (!ffn || ffn->rank != 2) return nmt_error_set("%s: no array encoder_l1_ffn_W1 (a matrix)", z->path);
    *c = nmt_model_config_default();
    b->D = c->d_model = (int)emb->shape[1];
    c->vocab_size = s->count > t->count ? s->count : t->count;
    c->heads = (int)o->heads;
    c->ffn = (int)ffn->shape[1];
    c->encoder_layers = count_layers(z, "encoder");
    c->decoder_layers = count_layers(z, "decoder");
    c->dropout = 0.0f;
    c->norm_position = o->pre_norm ? NMT_NORM_PRE : NMT_NORM_POST;
    c->positions = NMT_POSITIONS_LEARNED;
    const nmt_npy *wpos = nmt_npz_find(z, "Wpos");
    c->max_positions = o->positions == 2 && wpos && wpos->rank == 2 && wpos->shape[0] <= 1 << 16 ? (int)wpos->shape[0]
                                                                                                 : SINUSOID_POSITIONS;
    c->norm_eps = 1e-6f;
    const int output_tied = !nmt_npz_find(z, "decoder_ff_logit_out_W") && !o->unscaled;
    c->tie_embeddings = !output_tied ? NMT_TIE_NONE
                      : strcmp(source_table(z), target_table(z)) == 0 && same_sides(s->v, t->v) ? NMT_TIE_ALL
                      : NMT_TIE_DECODER;
    c->output_bias = 1;
    c->source_eos = 1;
    c->activation = o->activation;
    c->embedding_norm = o->embedding_norm;
    if (nmt_model_config_check(c) < 0) return nmt_error_prefix("%s", z->path);
    return 0;
}

static int fill_model(build *b, const options *o, const side *s, const side *t) {
    nmt_model *m = b->m;
    nmt_npz *z = b->z;
    /* A chunk holds at least the widest row of any array. */
    b->buf_floats = CHUNK / sizeof(float);
    for (int i = 0; i < z->count; i++) {
        const nmt_npy *a = &z->arrays[i];
        const size_t row = a->rank > 0 ? (size_t)a->shape[a->rank - 1] : 1;
        if (row > b->buf_floats) b->buf_floats = row;
    }
    if (!(b->buf = nmt_malloc(b->buf_floats * sizeof *b->buf)) || !(b->raw = nmt_malloc(b->buf_floats * sizeof(double))))
        return -1;
    const float scale = o->unscaled ? 1.0f / sqrtf((float)b->D) : 1.0f;
    const int untied = nmt_npz_find(z, "decoder_ff_logit_out_W") != NULL;
    if (take_rows(b, source_table(z), s, m->p.src_embed, scale, 0) < 0 ||
        take_rows(b, target_table(z), t, m->p.tgt_embed, scale, 0) < 0 ||
        take_rows(b, untied ? "decoder_ff_logit_out_W" : target_table(z), t, m->p.output, 1.0f, untied) < 0 ||
        take_output_bias(b, t) < 0 || take_positions(b, o) < 0 || take_layers(b, o->pre_norm) < 0)
        return -1;
    for (int i = 0; i < z->count; i++)
        if (!z->arrays[i].used && strncmp(z->arrays[i].name, "special:", 8) != 0)
            return nmt_error_set("%s: array %s: nmt does not implement what it is for", z->path, z->arrays[i].name);
    return 0;
}

/* ---- files ---- */

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int has_suffix(const char *s, const char *suffix) {
    const size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

int nmt_marian_is_model(const char *path) {
    if (!is_dir(path)) return has_suffix(path, ".npz") && nmt_file_exists(path);
    char *decoder = nmt_path_join(path, "decoder.yml");
    const int found = decoder && nmt_file_exists(decoder);
    free(decoder);
    return found;
}

/* The files of a model: the .npz, the two vocabularies, the SentencePiece models (or NULL). */
typedef struct files {
    char *dir, *npz, *vocab[2], *spm[2];
} files;

static void files_free(files *f) {
    free(f->dir);
    free(f->npz);
    for (int i = 0; i < 2; i++) {
        free(f->vocab[i]);
        free(f->spm[i]);
    }
}

/* Item i of the sequence `key` of decoder.yml, joined to dir; *count gets the sequence's length. */
static int decoder_item(yml *y, const char *dir, const char *key, int i, int *count, char **out) {
    const yaml_node_t *n = yml_get(y, key);
    if (!n || n->type != YAML_SEQUENCE_NODE) return nmt_error_set("%s: no list %s", y->what, key);
    *count = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (i >= *count) return nmt_error_set("%s: %s lists %d files", y->what, key, *count);
    const char *name = scalar(yaml_document_get_node(&y->doc, n->data.sequence.items.start[i]));
    if (!name || !*name) return nmt_error_set("%s: %s item %d is not a file name", y->what, key, i + 1);
    *out = name[0] == '/' ? nmt_strdup(name) : nmt_path_join(dir, name);
    return *out ? 0 : -1;
}

static int find_files(const char *path, files *f) {
    const int folder = is_dir(path);
    if (folder) {
        f->dir = nmt_strdup(path);
    } else {
        const char *slash = strrchr(path, '/');
        f->dir = slash ? nmt_malloc((size_t)(slash - path) + 2) : nmt_strdup(".");
        if (slash && f->dir) snprintf(f->dir, (size_t)(slash - path) + 2, "%.*s", (int)(slash - path + 1), path);
        if (f->dir && !(f->npz = nmt_strdup(path))) return -1;
    }
    if (!f->dir) return -1;
    char *decoder = nmt_path_join(f->dir, "decoder.yml");
    yml y = {0};
    int rc = -1, count = 0;
    if (!decoder) return -1;
    if (nmt_file_exists(decoder)) {
        if (yml_read(&y, decoder, "a Marian decoder config") < 0) goto done;
        if (folder && decoder_item(&y, f->dir, "models", 0, &count, &f->npz) < 0) goto done;
        if (count > 1) {
            nmt_error_set("%s: models lists %d models: nmt does not translate with ensembles", decoder, count);
            goto done;
        }
        if (decoder_item(&y, f->dir, "vocabs", 0, &count, &f->vocab[0]) < 0 ||
            decoder_item(&y, f->dir, "vocabs", count > 1, &count, &f->vocab[1]) < 0)
            goto done;
        if (count > 2) {
            nmt_error_set("%s: vocabs lists %d files: nmt reads one source and one target", decoder, count);
            goto done;
        }
    } else if (!(f->vocab[0] = nmt_path_join(f->dir, "vocab.yml")) || !(f->vocab[1] = nmt_strdup(f->vocab[0]))) {
        goto done;
    }
    static const char *const spm_names[2] = {"source.spm", "target.spm"};
    for (int i = 0; i < 2; i++) {
        if (!(f->spm[i] = nmt_path_join(f->dir, spm_names[i]))) goto done;
        if (!nmt_file_exists(f->spm[i])) {
            free(f->spm[i]);
            f->spm[i] = NULL;
        }
    }
    if (!f->spm[0] != !f->spm[1]) {
        nmt_error_set("%s: %s without %s: give both SentencePiece models or neither (pieces separated by spaces)",
                      f->dir, spm_names[!f->spm[0]], spm_names[!!f->spm[0]]);
        goto done;
    }
    rc = 0;
done:
    yml_free(&y);
    free(decoder);
    return rc;
}

/* The options of special:model.yml (bytes, NUL-terminated by Marian). */
static int read_model_options(nmt_npz *z, options *o) {
    nmt_npy *a = nmt_npz_find(z, "special:model.yml");
    if (!a || (a->dtype != NMT_NPY_I8 && a->dtype != NMT_NPY_U8) || a->count > max_yaml)
        return nmt_error_set("%s: no array special:model.yml holding the model's options (not a Marian model?)", z->path);
    char *text = nmt_malloc(a->count + 1), what[NAME + 32];
    if (!text) return -1;
    int rc = -1;
    snprintf(what, sizeof what, "%.*s: special:model.yml", NAME, z->path);
    if (nmt_npz_read(z, a, text) == 0) {
        text[a->count] = '\0';
        yml y = {0};
        rc = yml_load(&y, text, strlen(text), what) < 0 ? -1 : read_options(&y, o);
        yml_free(&y);
    }
    free(text);
    return rc;
}

int nmt_marian_open(const char *path, nmt_model *model, nmt_spm **spm) {
    memset(model, 0, sizeof *model);
    *spm = NULL;
    files f = {0};
    nmt_npz z = {0};
    vocab v[2] = {{0}};
    side s = {0}, t = {0};
    options o = {0};
    build b = {.z = &z, .m = model};
    nmt_model_config c;
    int rc = -1;
    if (find_files(path, &f) < 0 || nmt_npz_open(&z, f.npz, max_unpacked) < 0 || read_model_options(&z, &o) < 0 ||
        vocab_read(&v[0], f.vocab[0]) < 0 || vocab_read(&v[1], f.vocab[1]) < 0 || side_order(&s, &v[0]) < 0 ||
        side_order(&t, &v[1]) < 0 || make_config(&b, &o, &s, &t, &c) < 0 || nmt_model_init(model, &c) < 0 ||
        fill_model(&b, &o, &s, &t) < 0)
        goto done;
    const nmt_imported_side source = {v[0].pieces, s.from, s.count}, target = {v[1].pieces, t.from, t.count};
    if (nmt_imported_spm(&source, &target, f.spm[0], f.spm[1], model, spm) < 0) goto done;
    rc = 0;
done:
    if (rc < 0) nmt_imported_release(model, spm);
    free(b.buf);
    free(b.raw);
    free(s.from);
    free(t.from);
    vocab_free(&v[0]);
    vocab_free(&v[1]);
    nmt_npz_close(&z);
    files_free(&f);
    return rc;
}
