/* engine: the public translation API of include/nmt/nmt.h -- a model directory opened once, raw lines
 * translated into texts, n-best lists, alignments and attention.
 *
 * The top library layer (src/api) may use every lower one; nothing below includes it. An engine is
 * one nmt_pipeline (infer/pipeline.h), the path `nmt translate` takes, so its translations, bounds and
 * defaults are the command's; only over-long lines differ: without crop they fail the call, naming
 * the line, where the command writes an empty line. A mutex makes the engine shareable: calls take
 * turns; nmt_engine_close waits for the calls in flight and refuses those that come after it began.
 */
#include "nmt/nmt.h"

#include "api/gate.h"
#include "api/stream.h"
#include "base/io.h"
#include "base/utf8.h"
#include "base/util.h"
#include "compute/packed.h"
#include "compute/pool.h"
#include "infer/guide.h"
#include "infer/pipeline.h"
#include "train/config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nmt_engine {
    nmt_engine_options options; /* as given, defaults and threads resolved; precision a static string */
    nmt_pipeline *pipeline;
    pthread_mutex_t lock;       /* one translation at a time */
    nmt_gate gate;              /* the calls in flight, which nmt_engine_close waits for */
    nmt_decode_options decode;  /* the search's options of `options`, as the pipeline opened with them */
    int custom;                 /* the pipeline's search has a call's options instead (restored first) */
    char source_language[16], target_language[16]; /* "" when not recorded */
};

/* One hypothesis of a result, everything derived at translation time. */
typedef struct result_hypothesis {
    char *text;
    const char **pieces; /* [length] pieces (the tokenizer's strings) */
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
    const nmt_pipeline_options p = nmt_pipeline_options_default();
    const nmt_decode_options *d = &p.decode;
    return (nmt_engine_options){
        .beam_size = d->beam_size,
        .n_best = d->n_best,
        .greedy = d->greedy,
        .length_penalty = d->length_penalty,
        .max_length_ratio = d->max_length_ratio,
        .threads = 0,
        .precision = p.precision_of_model ? NULL : nmt_packed_precision_name(d->precision),
        .max_batch = d->batch_size,
        .max_input_length = p.max_input_length,
        .crop = p.crop,
        .alignment = d->attention,
        .sampling = d->sampling.enabled,
        .sampling_topk = d->sampling.top_k,
        .sampling_topp = d->sampling.top_p,
        .temperature = d->sampling.temperature,
        .seed = d->sampling.seed,
        .batch_tokens = d->batch_tokens,
        .shortlist = p.shortlist,
        .repetition_penalty = d->repetition_penalty,
        .no_repeat_ngram_size = d->no_repeat_ngram_size,
        .loop_guard = d->loop_repeats,
        .confidence = d->confidence,
    };
}

const char *nmt_last_error(void) { return nmt_error(); }

/* The language pair recorded in the directory's resolved config (data.src_lang and data.tgt_lang,
 * which default to the training files' suffixes where those are ISO 639-1 codes), or else in a config.yaml there that
 * nmt did not write (the user's own names the same corpus files), if any: a missing or unreadable
 * config, a FIFO in its place included, is no error, the pair is then unknown. */
static void read_languages(nmt_engine *e, const char *dir) {
    nmt_config config;
    int ok = nmt_config_load_dir(&config, dir) == 0;
    if (!ok) {
        char *path = nmt_path_join(dir, "config.yaml");
        ok = path && nmt_config_load_regular(&config, path) == 0;
        free(path);
    }
    if (ok) {
        snprintf(e->source_language, sizeof e->source_language, "%s", config.src_lang);
        snprintf(e->target_language, sizeof e->target_language, "%s", config.tgt_lang);
        nmt_config_free(&config);
    }
    nmt_error_clear();
}

/* The pipeline's options of the public ones (max_input_length 0: the default bound). */
static int pipeline_options(const nmt_engine_options *o, nmt_pipeline_options *p) {
    *p = nmt_pipeline_options_default();
    nmt_decode_options *d = &p->decode;
    d->greedy = o->greedy;
    d->beam_size = o->greedy ? 1 : o->beam_size;
    d->n_best = o->greedy ? 1 : o->n_best;
    d->length_penalty = o->length_penalty;
    d->max_length_ratio = o->max_length_ratio;
    d->batch_size = o->max_batch;
    d->batch_tokens = o->batch_tokens;
    d->attention = o->alignment;
    d->sampling = (nmt_sampling){.enabled = o->sampling != 0, .top_k = o->sampling_topk, .top_p = o->sampling_topp,
                                 .temperature = o->temperature, .seed = o->seed};
    if (o->sampling) d->greedy = 1, d->beam_size = 1, d->n_best = o->n_best; /* n_best samples a line */
    if (o->max_input_length) p->max_input_length = o->max_input_length;
    p->crop = o->crop != 0;
    p->shortlist = o->shortlist != 0;
    d->repetition_penalty = o->repetition_penalty;
    d->no_repeat_ngram_size = o->no_repeat_ngram_size;
    d->loop_repeats = o->loop_guard;
    d->confidence = o->confidence != 0;
    if (o->max_batch < 1 || o->max_batch > 65536) return nmt_error_set("max_batch must be 1..65536, got %d", o->max_batch);
    if (o->max_input_length < 0) return nmt_error_set("max_input_length must be >= 0, got %d", o->max_input_length);
    if (o->threads < 0 || o->threads > 1024) return nmt_error_set("threads must be 0..1024, got %d", o->threads);
    p->precision_of_model = !o->precision;
    if (o->precision && nmt_pipeline_precision_parse(o->precision, &d->precision) < 0) return -1;
    return nmt_pipeline_options_check(p);
}

int nmt_engine_open(nmt_engine **out, const char *model_dir, const nmt_engine_options *options) {
    *out = NULL;
    nmt_engine_options o = options ? *options : nmt_engine_options_default();
    nmt_pipeline_options p;
    if (pipeline_options(&o, &p) < 0) return -1;
    o.max_input_length = p.max_input_length;
    if (o.threads == 0) o.threads = nmt_cpus_available() > 1024 ? 1024 : nmt_cpus_available();
    if (o.greedy || o.sampling) o.beam_size = 1;
    if (o.greedy && !o.sampling) o.n_best = 1;
    nmt_engine *e = nmt_calloc(1, sizeof *e);
    if (!e) return -1;
    e->options = o;
    nmt_pool_set_threads(o.threads);
    if (nmt_pipeline_open(&e->pipeline, model_dir, &p) < 0) {
        free(e);
        return -1;
    }
    e->options.precision = nmt_packed_precision_name(nmt_pipeline_get_options(e->pipeline)->decode.precision);
    e->decode = nmt_pipeline_get_options(e->pipeline)->decode;
    const int locked = pthread_mutex_init(&e->lock, NULL) == 0;
    if (!locked || nmt_gate_init(&e->gate) < 0) {
        if (locked) pthread_mutex_destroy(&e->lock);
        else nmt_error_set("cannot create a mutex");
        nmt_pipeline_free(e->pipeline);
        free(e);
        return -1;
    }
    read_languages(e, nmt_pipeline_dir(e->pipeline));
    *out = e;
    return 0;
}

void nmt_engine_close(nmt_engine *e) {
    if (!e) return;
    nmt_gate_close(&e->gate);
    nmt_pipeline_free(e->pipeline);
    nmt_gate_free(&e->gate);
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

/* How a call bounds its lines: at most `limit` pieces, a longer line cropped with crop, an error
 * naming it without. */
typedef struct line_bound {
    size_t limit;
    int crop;
} line_bound;

/* The engine's bound. */
static line_bound engine_bound(const nmt_engine *e) {
    return (line_bound){nmt_pipeline_limit(e->pipeline), e->options.crop != 0};
}

/* Encodes every line into src[i] / len[i], target side or source side, bounded by `bound`. */
static int encode_lines(nmt_engine *e, int target, line_bound bound, int count, const char *const *lines,
                        int32_t **src, int *len) {
    const nmt_tokenizer *tokenizer = target ? nmt_pipeline_target(e->pipeline) : nmt_pipeline_source(e->pipeline);
    int32_t *ids = NULL;
    size_t cap = 0, n = 0, pieces = 0;
    int rc = -1;
    for (int i = 0; i < count; i++) {
        if (!lines[i]) {
            nmt_error_set("line %d: NULL instead of a string", i + 1);
            goto done;
        }
        nmt_lines view = {.name = "line", .line = (char *)lines[i], .len = strlen(lines[i]), .number = i + 1};
        const int r = nmt_pipeline_encode_with(tokenizer, bound.limit, bound.crop, &view, &ids, &cap, &n, &pieces);
        if (r < 0) goto done;
        if (r == NMT_PIPELINE_OVERLONG && !bound.crop) {
            nmt_error_set("line %d: %zu pieces, more than the limit of %zu", i + 1, pieces, bound.limit);
            goto done;
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
    const nmt_tokenizer *source = nmt_pipeline_source(e->pipeline), *target = nmt_pipeline_target(e->pipeline);
    l->source_count = src_len;
    l->source_pieces = nmt_malloc(((size_t)src_len + 1) * sizeof *l->source_pieces);
    l->hyps = nmt_calloc((size_t)l->translation.count, sizeof *l->hyps);
    if (!l->source_pieces || !l->hyps) return -1;
    for (int i = 0; i < src_len; i++) l->source_pieces[i] = source->piece(source->state, src[i]);
    for (int k = 0; k < l->translation.count; k++) {
        const nmt_hypothesis *h = &l->translation.hyps[k];
        result_hypothesis *rh = &l->hyps[k];
        rh->text = nmt_pipeline_text(e->pipeline, h);
        rh->pieces = nmt_malloc(((size_t)h->length + 1) * sizeof *rh->pieces);
        if (!rh->text || !rh->pieces) return -1;
        for (int j = 0; j < h->length; j++) rh->pieces[j] = target->piece(target->state, h->tokens[j]);
        if (h->attention && h->length > 0) {
            rh->pairs = nmt_malloc(2 * (size_t)h->length * sizeof(int));
            if (!rh->pairs || nmt_pipeline_align(e->pipeline, h, src, src_len, 0, rh->pairs) < 0) return -1;
        }
    }
    return 0;
}

nmt_translate_options nmt_translate_options_default(void) { return (nmt_translate_options){0}; }

/* A call's controls resolved: its search options, its line bound, whether it is guided. */
typedef struct call_plan {
    const nmt_translate_options *call;
    nmt_decode_options decode; /* the search's options for the call */
    int custom;                /* decode is the call's own, not the engine's */
    int guided;                /* prefixes, constraints or a glossary */
    line_bound bound;
} call_plan;

static int plan_call(const nmt_engine *e, const nmt_translate_options *call, call_plan *plan) {
    *plan = (call_plan){.call = call, .decode = e->decode, .bound = engine_bound(e)};
    if (call->options) {
        /* The public options once more through the one conversion, the engine's fixed ones kept. */
        nmt_engine_options o = *call->options;
        o.threads = e->options.threads;
        o.precision = e->options.precision;
        o.max_batch = e->options.max_batch;
        o.shortlist = e->options.shortlist;
        nmt_pipeline_options p;
        if (pipeline_options(&o, &p) < 0) return -1;
        plan->decode = p.decode;
        plan->decode.precision = e->decode.precision;
        plan->decode.shortlist = e->decode.shortlist;
        plan->custom = 1;
        if ((size_t)p.max_input_length < plan->bound.limit) plan->bound.limit = (size_t)p.max_input_length;
        plan->bound.crop = p.crop;
    }
    if (call->glossary_size < 0 || (call->glossary_size > 0 && !call->glossary))
        return nmt_error_set("glossary_size must be >= 0 with that many pairs of terms, got %d", call->glossary_size);
    plan->guided = call->target_prefix || call->constraints || call->glossary_size > 0;
    if ((call->constraints || call->glossary_size > 0) && (plan->decode.sampling.enabled || e->options.shortlist))
        return nmt_error_set("constraints and glossaries need greedy or beam search over the whole vocabulary: not "
                             "with sampling or a shortlist");
    if (call->stream && plan->decode.sampling.enabled && plan->decode.n_best > 1)
        return nmt_error_set("streaming follows one translation a line: not with sampling and n_best > 1");
    return 0;
}

/* Line i's guide in g from the call's prefix, phrases and glossary terms (text of UTF-8 checked). */
static int line_guide(nmt_engine *e, const call_plan *plan, nmt_glossary *glossary, int i, const char *line,
                      nmt_guide *g) {
    const nmt_translate_options *call = plan->call;
    const nmt_tokenizer *target = nmt_pipeline_target(e->pipeline);
    const char *prefix = call->target_prefix ? call->target_prefix[i] : NULL;
    if (prefix) {
        const long bad = nmt_utf8_invalid_at(prefix, strlen(prefix));
        if (bad >= 0) return nmt_error_set("line %d: target prefix: invalid UTF-8 at byte %ld", i + 1, bad + 1);
        if (nmt_guide_set_prefix(g, target, prefix, strlen(prefix)) < 0)
            return nmt_error_prefix("line %d: target prefix", i + 1);
    }
    const char *const *phrases = call->constraints ? call->constraints[i] : NULL;
    for (int k = 0; phrases && phrases[k]; k++) {
        const long bad = nmt_utf8_invalid_at(phrases[k], strlen(phrases[k]));
        if (bad >= 0) return nmt_error_set("line %d: constraint %d: invalid UTF-8 at byte %ld", i + 1, k + 1, bad + 1);
        if (nmt_guide_add_phrase(g, target, phrases[k], strlen(phrases[k])) < 0)
            return nmt_error_prefix("line %d: constraint %d", i + 1, k + 1);
    }
    if (glossary && nmt_glossary_apply(glossary, line, strlen(line), g, target) < 0)
        return nmt_error_prefix("line %d", i + 1);
    if (nmt_guide_pieces(g) > plan->bound.limit)
        return nmt_error_set("line %d: the target prefix and phrases have %zu pieces, more than the limit of %zu", i + 1,
                             nmt_guide_pieces(g), plan->bound.limit);
    return 0;
}

/* Every non-empty line's guide (guides[i] NULL: none; an empty line is not translated). */
static int call_guides(nmt_engine *e, const call_plan *plan, int count, const char *const *lines, const int *len,
                       nmt_guide *store, const nmt_decode_guide **guides) {
    nmt_glossary *glossary = NULL;
    const nmt_translate_options *call = plan->call;
    if (call->glossary_size > 0 &&
        nmt_glossary_create(&glossary, (size_t)call->glossary_size, call->glossary, call->glossary_case) < 0)
        return -1;
    int rc = 0;
    for (int i = 0; i < count && rc == 0; i++) {
        if (len[i] == 0) continue;
        rc = line_guide(e, plan, glossary, i, lines[i], &store[i]);
        nmt_guide_set_source(&store[i], lines[i], (size_t)len[i]);
        if (rc == 0 && nmt_guide_finish(&store[i])) guides[i] = &store[i].guide;
    }
    nmt_glossary_free(glossary);
    return rc;
}

/* The pipeline's search for this call: its own options (and stream), or the engine's again. */
static int set_search(nmt_engine *e, const call_plan *plan, nmt_stream *stream) {
    if (plan->custom || stream) {
        nmt_decode_options d = plan->decode;
        d.stream = stream ? nmt_stream_pieces : NULL;
        d.stream_ctx = stream;
        e->custom = 1; /* even when setting fails: the search may hold anything but the engine's */
        return nmt_pipeline_set_decode(e->pipeline, &d);
    }
    if (!e->custom) return 0;
    if (nmt_pipeline_set_decode(e->pipeline, &e->decode) < 0) return -1;
    e->custom = 0;
    return 0;
}

static const char *result_text_at(const void *r, int i) { return nmt_result_text(r, i); }

static int translate_locked(nmt_engine *e, const call_plan *plan, int count, const char *const *lines, nmt_result *r) {
    const nmt_translate_options *call = plan->call;
    const size_t n = count ? (size_t)count : 1;
    int32_t **src = nmt_calloc(n, sizeof *src);
    int *len = nmt_calloc(n, sizeof *len);
    nmt_translation *out = nmt_calloc(n, sizeof *out);
    nmt_guide *store = plan->guided ? nmt_calloc(n, sizeof *store) : NULL;
    const nmt_decode_guide **guides = plan->guided ? nmt_calloc(n, sizeof *guides) : NULL;
    nmt_stream *stream = NULL;
    int rc = -1;
    if (!src || !len || !out || (plan->guided && (!store || !guides)) ||
        encode_lines(e, 0, plan->bound, count, lines, src, len) < 0)
        goto done;
    if (plan->guided && call_guides(e, plan, count, lines, len, store, guides) < 0) goto done;
    if (call->stream && nmt_stream_create(&stream, nmt_pipeline_target(e->pipeline), call->first_line, count,
                                          call->stream, call->stream_user) < 0)
        goto done;
    if (set_search(e, plan, stream) < 0) goto done;
    if (nmt_pipeline_translate_guided(e->pipeline, call->first_line, count, (const int32_t *const *)src, len, guides,
                                      out) < 0)
        goto done;
    for (int i = 0; i < count; i++) {
        r->lines[i].translation = out[i];
        out[i] = (nmt_translation){0};
    }
    for (int i = 0; i < count; i++)
        if (fill_line(e, &r->lines[i], src[i], len[i]) < 0) goto done;
    if (stream && nmt_stream_finish(stream, result_text_at, r) < 0) goto done;
    rc = 0;
done:
    for (int i = 0; i < count; i++) {
        if (src) free(src[i]);
        if (out) nmt_translation_free(&out[i]);
        if (store) nmt_guide_free(&store[i]);
    }
    nmt_stream_free(stream);
    free(src);
    free(len);
    free(out);
    free(store);
    free(guides);
    return rc;
}

int nmt_engine_translate(nmt_engine *e, int count, const char *const *lines, nmt_result **out) {
    return nmt_engine_translate_from(e, 0, count, lines, out);
}

int nmt_engine_translate_from(nmt_engine *e, unsigned long long first_line, int count, const char *const *lines,
                              nmt_result **out) {
    nmt_translate_options call = nmt_translate_options_default();
    call.first_line = first_line;
    return nmt_engine_translate_with(e, count, lines, &call, out);
}

int nmt_engine_translate_with(nmt_engine *e, int count, const char *const *lines, const nmt_translate_options *call,
                              nmt_result **out) {
    *out = NULL;
    const nmt_translate_options none = nmt_translate_options_default();
    if (!call) call = &none;
    if (count < 0) return nmt_error_set("negative line count %d", count);
    nmt_result *r = nmt_calloc(1, sizeof *r);
    if (!r) return -1;
    r->lines = nmt_calloc(count ? (size_t)count : 1, sizeof *r->lines);
    if (!r->lines) {
        free(r);
        return -1;
    }
    r->count = count;
    int rc = nmt_gate_enter(&e->gate, "the engine");
    call_plan plan;
    if (rc == 0 && (rc = plan_call(e, call, &plan)) < 0) nmt_gate_leave(&e->gate);
    if (rc == 0) {
        pthread_mutex_lock(&e->lock);
        rc = translate_locked(e, &plan, count, lines, r);
        pthread_mutex_unlock(&e->lock);
        nmt_gate_leave(&e->gate);
    }
    if (rc < 0) {
        nmt_result_free(r);
        return -1;
    }
    *out = r;
    return 0;
}

static int logprob_locked(nmt_engine *e, int count, const char *const *sources, const char *const *targets,
                          double *out) {
    const size_t n = count ? (size_t)count : 1;
    int32_t **src = nmt_calloc(n, sizeof *src), **tgt = nmt_calloc(n, sizeof *tgt);
    int *src_len = nmt_calloc(n, sizeof *src_len), *tgt_len = nmt_calloc(n, sizeof *tgt_len);
    int rc = -1;
    if (src && tgt && src_len && tgt_len && encode_lines(e, 0, engine_bound(e), count, sources, src, src_len) == 0 &&
        encode_lines(e, 1, engine_bound(e), count, targets, tgt, tgt_len) == 0)
        rc = nmt_pipeline_forced_logprob(e->pipeline, count, (const int32_t *const *)src, src_len,
                                         (const int32_t *const *)tgt, tgt_len, out);
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

int nmt_engine_logprob(nmt_engine *e, int count, const char *const *sources, const char *const *targets, double *out) {
    if (count < 0) return nmt_error_set("negative line count %d", count);
    if (nmt_gate_enter(&e->gate, "the engine") < 0) return -1;
    pthread_mutex_lock(&e->lock);
    const int rc = logprob_locked(e, count, sources, targets, out);
    pthread_mutex_unlock(&e->lock);
    nmt_gate_leave(&e->gate);
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

int nmt_result_confidence(const nmt_result *r, int i, int k, double *mean_logprob, double *alternatives) {
    const nmt_hypothesis *h = hypothesis_at(r, i, k);
    *mean_logprob = h ? h->mean_logprob : 0;
    *alternatives = h ? h->alternatives : 0;
    return h ? 0 : -1;
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
