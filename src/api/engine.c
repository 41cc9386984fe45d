/* engine: the public translation API of include/nmt/nmt.h -- a model directory opened once, raw lines
 * translated into texts, n-best lists, alignments and attention.
 *
 * The top library layer (src/api) may use every lower one; nothing below includes it. An engine is
 * the model, its SentencePiece model and one nmt_translator, the same calls `nmt translate` makes, so
 * its translations are the command's, and with the command's memory: a translator whose packed
 * matrices hold the weights whole (int8, fp32 on nmt's own kernels) reads them from the mapped file
 * and keeps no float32 copy. Scoring given translations needs the full forward pass, so the first
 * nmt_engine_score of such an engine reads the float32 model whole from the same mapping (the file
 * it translates with, even if the directory has changed since) and keeps it. A mutex makes the
 * engine shareable: calls take turns.
 */
#include "nmt/nmt.h"

#include "base/utf8.h"
#include "base/util.h"
#include "compute/pool.h"
#include "compute/packed.h"
#include "infer/forced.h"
#include "infer/translator.h"
#include "model/model_dir.h"
#include "model/placement.h"
#include "model/model.h"
#include "text/spm.h"
#include "train/config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct nmt_engine {
    nmt_engine_options options; /* as given, threads resolved; precision points at a static string */
    nmt_model model;            /* the translator's (matrices deferred and released where it packs them whole) */
    nmt_model scorer;           /* model whole for nmt_engine_score, made at its first call when model is not
                                 * (params NULL until then) */
    nmt_spm *spm;
    nmt_translator *translator;
    pthread_mutex_t lock;       /* one translation at a time */
    char source_language[16], target_language[16]; /* "" when not recorded */
};

/* One hypothesis of a result, everything derived at translation time. */
typedef struct result_hypothesis {
    char *text;
    const char **pieces; /* [length] pieces (the spm model's strings) */
    int *pairs;          /* [2 * length] (source, target) pieces, or NULL without attention */
} result_hypothesis;

typedef struct result_line {
    nmt_translation translation; /* hyps with tokens, scores and attention */
    result_hypothesis *hyps;     /* [translation.count] */
    const char **source_pieces;  /* [source_count] */
    int source_count;
} result_line;

struct nmt_result {
    int count;
    result_line *lines; /* [count] */
};

nmt_engine_options nmt_engine_options_default(void) {
    nmt_decode_options d = nmt_decode_options_default();
    return (nmt_engine_options){
        .beam_size = d.beam_size,
        .n_best = d.n_best,
        .greedy = d.greedy,
        .length_penalty = d.length_penalty,
        .max_length_ratio = d.max_length_ratio,
        .threads = 0,
        .precision = "fp32",
        .max_batch = d.batch_size,
        .max_input_length = 0,
        .crop = 0,
        .alignment = 0,
        .sampling = 0,
        .sampling_topk = d.sampling.top_k,
        .sampling_topp = d.sampling.top_p,
        .temperature = d.sampling.temperature,
        .seed = d.sampling.seed,
    };
}

const char *nmt_last_error(void) { return nmt_error(); }

/* "/data/train.en" -> "en": the suffix after the file name's last dot, when it looks like a language
 * code (2 to 15 letters, digits, '-' or '_'). */
static void language_of(const char *path, char *out, size_t size) {
    out[0] = '\0';
    if (!path) return;
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash)) return;
    size_t n = strlen(dot + 1);
    if (n < 2 || n >= size) return;
    for (size_t i = 0; i < n; i++) {
        char c = dot[1 + i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) return;
    }
    memcpy(out, dot + 1, n + 1);
}

/* The language pair recorded in DIR/config.yaml, if any (a missing or unreadable config is no error:
 * the pair is then unknown). */
static void read_languages(nmt_engine *e, const char *dir) {
    char *path = nmt_path_join(dir, "config.yaml");
    if (path && nmt_file_exists(path)) {
        nmt_config config;
        if (nmt_config_load(&config, path, NULL) == 0) {
            language_of(config.train.src, e->source_language, sizeof e->source_language);
            language_of(config.train.tgt, e->target_language, sizeof e->target_language);
            nmt_config_free(&config);
        }
    }
    free(path);
    nmt_error_clear();
}

static int decode_options(const nmt_engine_options *o, nmt_decode_options *d) {
    *d = nmt_decode_options_default();
    d->greedy = o->greedy;
    d->beam_size = o->greedy ? 1 : o->beam_size;
    d->n_best = o->greedy ? 1 : o->n_best;
    d->length_penalty = o->length_penalty;
    d->max_length_ratio = o->max_length_ratio;
    d->batch_size = o->max_batch;
    d->attention = o->alignment;
    d->sampling = (nmt_sampling){.enabled = o->sampling != 0, .top_k = o->sampling_topk, .top_p = o->sampling_topp,
                                 .temperature = o->temperature, .seed = o->seed};
    if (o->sampling) d->greedy = 1, d->beam_size = 1, d->n_best = o->n_best; /* n_best samples a line */
    if (o->max_batch < 1 || o->max_batch > 65536) return nmt_error_set("max_batch must be 1..65536, got %d", o->max_batch);
    if (o->max_input_length < 0) return nmt_error_set("max_input_length must be >= 0, got %d", o->max_input_length);
    if (o->threads < 0 || o->threads > 1024) return nmt_error_set("threads must be 0..1024, got %d", o->threads);
    if (!o->precision || strcmp(o->precision, "fp32") == 0) {
        d->precision = NMT_PRECISION_FP32;
    } else if (strcmp(o->precision, "bf16") == 0) {
        if (!nmt_packed_available(NMT_PRECISION_BF16))
            return nmt_error_set("precision bf16 needs a CPU with AVX512_BF16 instructions; this one has none "
                                 "(or NMT_GEMM=openblas is set)");
        d->precision = NMT_PRECISION_BF16;
    } else if (strcmp(o->precision, "int8") == 0) {
        if (!nmt_packed_available(NMT_PRECISION_INT8))
            return nmt_error_set("precision int8 needs a CPU with AVX2 or AVX-512 VNNI instructions; this one has neither");
        d->precision = NMT_PRECISION_INT8;
    } else {
        return nmt_error_set("precision: expected fp32, bf16 or int8, got '%s'", o->precision);
    }
    return nmt_decode_options_check(d);
}

int nmt_engine_open(nmt_engine **out, const char *model_dir, const nmt_engine_options *options) {
    *out = NULL;
    nmt_engine_options o = options ? *options : nmt_engine_options_default();
    nmt_decode_options d;
    if (decode_options(&o, &d) < 0) return -1;
    o.precision = nmt_packed_precision_name(d.precision);
    if (o.threads == 0) o.threads = nmt_cpus_available() > 1024 ? 1024 : nmt_cpus_available();
    if (o.greedy || o.sampling) o.beam_size = 1;
    if (o.greedy && !o.sampling) o.n_best = 1;
    nmt_engine *e = nmt_calloc(1, sizeof *e);
    if (!e) return -1;
    e->options = o;
    if (nmt_model_dir_open_for(model_dir, d.precision, &e->model, &e->spm) < 0) {
        free(e);
        return -1;
    }
    nmt_pool_set_threads(o.threads);
    if (nmt_translator_create(&e->translator, &e->model, &d) < 0 || pthread_mutex_init(&e->lock, NULL) != 0) {
        if (e->translator) nmt_error_set("cannot create a mutex");
        nmt_translator_free(e->translator);
        nmt_spm_free(e->spm);
        nmt_model_free(&e->model);
        free(e);
        return -1;
    }
    /* Only matrices the file still holds: scoring can read those again. */
    if (e->model.source) nmt_translator_release_model(e->translator, &e->model);
    read_languages(e, model_dir);
    *out = e;
    return 0;
}

void nmt_engine_close(nmt_engine *e) {
    if (!e) return;
    nmt_translator_free(e->translator);
    nmt_spm_free(e->spm);
    nmt_model_free(&e->model);
    nmt_model_free(&e->scorer);
    pthread_mutex_destroy(&e->lock);
    free(e);
}

const nmt_engine_options *nmt_engine_get_options(const nmt_engine *e) { return &e->options; }

const char *nmt_engine_source_language(const nmt_engine *e) {
    return e->source_language[0] ? e->source_language : NULL;
}

const char *nmt_engine_target_language(const nmt_engine *e) {
    return e->target_language[0] ? e->target_language : NULL;
}

void nmt_result_free(nmt_result *r) {
    if (!r) return;
    for (int i = 0; i < r->count; i++) {
        result_line *l = &r->lines[i];
        if (l->hyps)
            for (int k = 0; k < l->translation.count; k++) {
                free(l->hyps[k].text);
                free(l->hyps[k].pieces);
                free(l->hyps[k].pairs);
            }
        free(l->hyps);
        free(l->source_pieces);
        nmt_translation_free(&l->translation);
    }
    free(r->lines);
    free(r);
}

/* Encodes every line into src[i] / len[i] (cropped or refused beyond max_input_length). */
static int encode_lines(nmt_engine *e, int count, const char *const *lines, int target, int32_t **src, int *len) {
    int32_t *ids = NULL;
    size_t cap = 0, n = 0;
    int rc = -1;
    const int limit = e->options.max_input_length;
    for (int i = 0; i < count; i++) {
        if (!lines[i]) {
            nmt_error_set("line %d: NULL instead of a string", i + 1);
            goto done;
        }
        nmt_lines view = {.name = "line", .line = (char *)lines[i], .len = strlen(lines[i]), .number = i + 1};
        if ((target ? nmt_model_dir_encode_target_line : nmt_model_dir_encode_line)(&e->model, e->spm, &view, &ids, &cap,
                                                                                   &n) < 0)
            goto done;
        if (limit > 0 && n > (size_t)limit) {
            if (!e->options.crop) {
                nmt_error_set("line %d: %zu pieces, more than the limit of %d", i + 1, n, limit);
                goto done;
            }
            n = (size_t)limit;
        }
        src[i] = nmt_malloc((n ? n : 1) * sizeof(int32_t));
        if (!src[i]) goto done;
        if (n) memcpy(src[i], ids, n * sizeof(int32_t));
        len[i] = (int)n;
    }
    rc = 0;
done:
    free(ids);
    return rc;
}

/* Texts, pieces and alignment pairs of one translated line. */
static int fill_line(nmt_engine *e, result_line *l, const int32_t *src, int src_len) {
    l->source_count = src_len;
    l->source_pieces = nmt_malloc(((size_t)src_len + 1) * sizeof *l->source_pieces);
    l->hyps = nmt_calloc((size_t)l->translation.count, sizeof *l->hyps);
    if (!l->source_pieces || !l->hyps) return -1;
    for (int i = 0; i < src_len; i++) l->source_pieces[i] = nmt_spm_piece(e->spm, src[i]);
    for (int k = 0; k < l->translation.count; k++) {
        const nmt_hypothesis *h = &l->translation.hyps[k];
        result_hypothesis *rh = &l->hyps[k];
        rh->text = nmt_spm_decode(e->spm, h->tokens, (size_t)h->length);
        rh->pieces = nmt_malloc(((size_t)h->length + 1) * sizeof *rh->pieces);
        if (!rh->text || !rh->pieces) return -1;
        for (int j = 0; j < h->length; j++) rh->pieces[j] = nmt_spm_piece(e->spm, h->tokens[j]);
        if (h->attention && h->length > 0) {
            int *src_of = nmt_malloc((size_t)h->length * sizeof(int));
            rh->pairs = nmt_malloc(2 * (size_t)h->length * sizeof(int));
            if (!src_of || !rh->pairs) {
                free(src_of);
                return -1;
            }
            nmt_hypothesis_alignment(h, src_of);
            for (int j = 0; j < h->length; j++) {
                rh->pairs[2 * j] = src_of[j];
                rh->pairs[2 * j + 1] = j;
            }
            free(src_of);
        }
    }
    return 0;
}

static int translate_locked(nmt_engine *e, uint64_t first_line, int count, const char *const *lines, nmt_result *r) {
    int32_t **src = nmt_calloc((size_t)count, sizeof *src);
    int *len = nmt_calloc((size_t)count, sizeof *len);
    nmt_translation *out = nmt_calloc((size_t)count, sizeof *out);
    int rc = -1;
    if (!src || !len || !out || encode_lines(e, count, lines, 0, src, len) < 0) goto done;
    if (nmt_translator_run_from(e->translator, first_line, count, (const int32_t *const *)src, len, out) < 0) goto done;
    for (int i = 0; i < count; i++) {
        r->lines[i].translation = out[i];
        out[i] = (nmt_translation){0};
    }
    for (int i = 0; i < count; i++)
        if (fill_line(e, &r->lines[i], src[i], len[i]) < 0) goto done;
    rc = 0;
done:
    if (src)
        for (int i = 0; i < count; i++) free(src[i]);
    if (out)
        for (int i = 0; i < count; i++) nmt_translation_free(&out[i]);
    free(src);
    free(len);
    free(out);
    return rc;
}

int nmt_engine_translate(nmt_engine *e, int count, const char *const *lines, nmt_result **out) {
    return nmt_engine_translate_from(e, 0, count, lines, out);
}

int nmt_engine_translate_from(nmt_engine *e, unsigned long long first_line, int count, const char *const *lines,
                              nmt_result **out) {
    *out = NULL;
    if (count < 0) return nmt_error_set("negative line count %d", count);
    nmt_result *r = nmt_calloc(1, sizeof *r);
    if (!r) return -1;
    r->lines = nmt_calloc(count ? (size_t)count : 1, sizeof *r->lines);
    if (!r->lines) {
        free(r);
        return -1;
    }
    r->count = count;
    pthread_mutex_lock(&e->lock);
    int rc = translate_locked(e, first_line, count, lines, r);
    pthread_mutex_unlock(&e->lock);
    if (rc < 0) {
        nmt_result_free(r);
        return -1;
    }
    *out = r;
    return 0;
}

/* The model the forward passes accept: the engine's own, or its whole copy (made at the first call). */
static nmt_model *scoring_model(nmt_engine *e) {
    if (!e->model.release_marked) return &e->model;
    if (!e->scorer.params && nmt_model_load_whole(&e->scorer, &e->model) < 0) return NULL;
    return &e->scorer;
}

int nmt_engine_score(nmt_engine *e, int count, const char *const *sources, const char *const *targets, double *out) {
    if (count < 0) return nmt_error_set("negative line count %d", count);
    int32_t **src = nmt_calloc(count ? (size_t)count : 1, sizeof *src), **tgt = nmt_calloc(count ? (size_t)count : 1, sizeof *tgt);
    int *src_len = nmt_calloc(count ? (size_t)count : 1, sizeof *src_len);
    int *tgt_len = nmt_calloc(count ? (size_t)count : 1, sizeof *tgt_len);
    int rc = -1;
    nmt_model *model;
    pthread_mutex_lock(&e->lock);
    if (src && tgt && src_len && tgt_len && encode_lines(e, count, sources, 0, src, src_len) == 0 &&
        encode_lines(e, count, targets, 1, tgt, tgt_len) == 0 && (model = scoring_model(e)))
        rc = nmt_forced_score(model, count, (const int32_t *const *)src, src_len, (const int32_t *const *)tgt,
                              tgt_len, e->options.max_batch, out);
    pthread_mutex_unlock(&e->lock);
    for (int i = 0; i < count && src && tgt; i++) {
        free(src[i]);
        free(tgt[i]);
    }
    free(src);
    free(tgt);
    free(src_len);
    free(tgt_len);
    return rc;
}

int nmt_result_count(const nmt_result *r) { return r->count; }

/* Line i's hypothesis k, or NULL out of range. */
static const result_line *line_at(const nmt_result *r, int i) {
    return i >= 0 && i < r->count ? &r->lines[i] : NULL;
}

static const nmt_hypothesis *hypothesis_at(const nmt_result *r, int i, int k) {
    const result_line *l = line_at(r, i);
    return l && k >= 0 && k < l->translation.count ? &l->translation.hyps[k] : NULL;
}

const char *nmt_result_text(const nmt_result *r, int i) { return nmt_result_hypothesis(r, i, 0); }

int nmt_result_hypotheses(const nmt_result *r, int i) {
    const result_line *l = line_at(r, i);
    return l ? l->translation.count : 0;
}

const char *nmt_result_hypothesis(const nmt_result *r, int i, int k) {
    return hypothesis_at(r, i, k) ? r->lines[i].hyps[k].text : NULL;
}

double nmt_result_score(const nmt_result *r, int i, int k) {
    const nmt_hypothesis *h = hypothesis_at(r, i, k);
    return h ? h->score : 0;
}

double nmt_result_logprob(const nmt_result *r, int i, int k) {
    const nmt_hypothesis *h = hypothesis_at(r, i, k);
    return h ? h->logprob : 0;
}

int nmt_result_alignment(const nmt_result *r, int i, int k, const int **pairs) {
    const nmt_hypothesis *h = hypothesis_at(r, i, k);
    *pairs = h ? r->lines[i].hyps[k].pairs : NULL;
    return *pairs ? h->length : 0;
}

const char *const *nmt_result_source_pieces(const nmt_result *r, int i, int *count) {
    const result_line *l = line_at(r, i);
    *count = l ? l->source_count : 0;
    return l ? l->source_pieces : NULL;
}

const char *const *nmt_result_target_pieces(const nmt_result *r, int i, int k, int *count) {
    const nmt_hypothesis *h = hypothesis_at(r, i, k);
    *count = h ? h->length : 0;
    return h ? r->lines[i].hyps[k].pieces : NULL;
}

const float *nmt_result_attention(const nmt_result *r, int i, int k) {
    const nmt_hypothesis *h = hypothesis_at(r, i, k);
    return h ? h->attention : NULL;
}
