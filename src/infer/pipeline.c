/* pipeline: raw lines to translations for every front end (pipeline.h).
 *
 * The model released by the translator (int8, bf16, fp32 on a packed kernel) cannot run forward passes, so
 * forced scoring reads the float32 model whole at its first call and keeps it: nmt's own from the
 * same mapping, another toolkit's by reading its directory again as the translator's was read (the
 * same int8 rounding), refused when that is not the model the translator holds. A model file or
 * checkpoint named instead of a directory is read whole (no deferred matrices), and the translator
 * then keeps it, so that scoring needs no second copy.
 */
#include "infer/pipeline.h"

#include "base/utf8.h"
#include "base/util.h"
#include "compute/packed.h"
#include "infer/align.h"
#include "infer/forced.h"
#include "infer/shortlist.h"
#include "infer/translator.h"
#include "model/model_dir.h"
#include "model/model_file.h"
#include "model/placement.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct nmt_pipeline {
    nmt_pipeline_options options;
    nmt_model model;       /* the translator's (matrices released where it packs them whole) */
    nmt_model scorer;      /* the model whole for forced scoring, made at its first call when model is not */
    nmt_spm *spm;
    nmt_tokenizer source, target;
    nmt_shortlist *shortlist;
    unsigned char *word_joins; /* [V] the target tokenizer's joins: constraint phrases stand as whole words */
    const char **piece_text;   /* [V] the target pieces' text where pieces join (constraints match it), else NULL */
    nmt_translator *translator;
    size_t limit;          /* nmt_pipeline_input_limit of the model */
    char *dir;             /* the model directory (of the file named, for a file) */
};

static int spm_encode(const void *s, const char *text, size_t len, int32_t **ids, size_t *cap, size_t *count) {
    return nmt_spm_encode(s, text, len, ids, cap, count);
}

static char *spm_decode(const void *s, const int32_t *ids, size_t count) { return nmt_spm_decode(s, ids, count); }

static const char *spm_piece(const void *s, int32_t id) { return nmt_spm_piece(s, id); }

static int spm_joins(const void *s, int32_t id) { return nmt_spm_joins_word(s, id); }

nmt_tokenizer nmt_tokenizer_spm(const nmt_spm *spm) {
    return (nmt_tokenizer){.state = spm, .encode = spm_encode, .decode = spm_decode, .piece = spm_piece,
                           .joins = spm_joins};
}

static int spm_encode_target(const void *s, const char *text, size_t len, int32_t **ids, size_t *cap, size_t *count) {
    return nmt_spm_encode_target(s, text, len, ids, cap, count);
}

nmt_tokenizer nmt_tokenizer_spm_target(const nmt_spm *spm) {
    nmt_tokenizer t = nmt_tokenizer_spm(spm);
    t.encode = spm_encode_target;
    return t;
}

nmt_pipeline_options nmt_pipeline_options_default(void) {
    nmt_pipeline_options o = {.decode = nmt_decode_options_default(), .max_input_length = NMT_PIPELINE_MAX_INPUT,
                              .precision_of_model = 1};
    o.decode.batch_tokens = NMT_PIPELINE_BATCH_TOKENS;
    return o;
}

int nmt_pipeline_options_check(const nmt_pipeline_options *o) {
    if (o->max_input_length < 1 || o->max_input_length > 1000000)
        return nmt_error_set("max_input_length must be 1..1000000, got %d", o->max_input_length);
    if (o->decode.batch_tokens < 1) return nmt_error_set("batch_tokens must be >= 1, got %d", o->decode.batch_tokens);
    if (o->shortlist && o->decode.sampling.enabled)
        return nmt_error_set("sampling draws from the whole vocabulary: it takes no shortlist");
    return nmt_decode_options_check(&o->decode);
}

int nmt_pipeline_precision_parse(const char *text, nmt_precision *out) {
    if (strcmp(text, "auto") == 0) {
        /* One decoding step's feed-forward product of a d256/ff1024 model at beam 5 x 8 sentences. */
        *out = nmt_packed_fastest(40, 1024, 256, 0.05, NULL);
        return 0;
    }
    static const nmt_precision all[] = {NMT_PRECISION_FP32, NMT_PRECISION_BF16, NMT_PRECISION_INT8};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(text, nmt_packed_precision_name(all[i])) != 0) continue;
        if (all[i] == NMT_PRECISION_BF16 && !nmt_packed_available(all[i]))
            return nmt_error_set("precision bf16 needs a CPU with AVX512_BF16 instructions; this one has none "
                                 "(or NMT_GEMM=openblas is set)");
        if (all[i] == NMT_PRECISION_INT8 && !nmt_packed_available(all[i]))
            return nmt_error_set("precision int8 needs a CPU with AVX2 or AVX-512 VNNI instructions; this one has "
                                 "neither");
        *out = all[i];
        return 0;
    }
    return nmt_error_set("precision: expected fp32, bf16, int8 or auto, got '%s'", text);
}

size_t nmt_pipeline_input_limit(const nmt_model_config *c, int max_input_length) {
    size_t limit = max_input_length > 0 ? (size_t)max_input_length : (size_t)NMT_PIPELINE_MAX_INPUT;
    /* A model with learned positions has no position beyond its table. */
    if (c->positions == NMT_POSITIONS_LEARNED && (size_t)c->max_positions - 1 < limit) limit = (size_t)c->max_positions - 1;
    return limit;
}

int nmt_pipeline_encode_with(const nmt_tokenizer *tokenizer, size_t limit, int crop, const nmt_lines *in,
                             int32_t **ids, size_t *cap, size_t *count, size_t *pieces) {
    *count = *pieces = 0;
    long bad = nmt_utf8_invalid_at(in->line, in->len);
    if (bad >= 0) {
        nmt_error_set("%s:%ld: invalid UTF-8 at byte %ld", in->name, in->number, bad + 1);
        return NMT_PIPELINE_INVALID_UTF8;
    }
    if (tokenizer->encode(tokenizer->state, in->line, in->len, ids, cap, pieces) < 0)
        return nmt_error_prefix("%s:%ld", in->name, in->number);
    if (*pieces <= limit) {
        *count = *pieces;
        return 0;
    }
    *count = crop ? limit : 0;
    return NMT_PIPELINE_OVERLONG;
}

/* 1 when the model file holds int8 matrices (`nmt convert --precision int8` wrote it). */
static int file_is_int8(const nmt_st_file *file) {
    for (int i = 0; i < file->num_tensors; i++)
        if (file->tensors[i].dtype == NMT_ST_I8) return 1;
    return 0;
}

/* The precision a model file was written in, for a translator that runs it as it was converted:
 * int8 for an int8 file where this CPU has int8 products, else *precision unchanged. */
static int precision_of_file(const char *path, const nmt_st_file *mapped, nmt_precision *precision) {
    nmt_st_file file;
    if (!mapped) {
        if (nmt_st_read(&file, path) < 0) return -1;
        mapped = &file;
    }
    if (file_is_int8(mapped) && nmt_packed_available(NMT_PRECISION_INT8)) *precision = NMT_PRECISION_INT8;
    if (mapped == &file) nmt_st_free(&file);
    return 0;
}

/* The directory of a model file: DIR for DIR/FILE, and for a checkpoint DIR/checkpoints/FILE, DIR. */
static char *dir_of_file(const char *path) {
    char *dir = nmt_strdup(path);
    if (!dir) return NULL;
    char *slash = strrchr(dir, '/');
    if (!slash) return strcpy(dir, "."), dir;
    *slash = '\0';
    if (slash == dir) return strcpy(dir, "/"), dir;
    const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    if (strcmp(base, "checkpoints") == 0) {
        if (base == dir) strcpy(dir, ".");
        else if (base - 1 == dir) strcpy(dir, "/");
        else dir[base - 1 - dir] = '\0';
    }
    return dir;
}

/* A model file or checkpoint read whole into *m, with the vocabulary of dir; an int8 file sets
 * *precision to int8 with precision_of_model, and an int8 precision rounds the model as
 * nmt_model_dir_open_for does. */
static int open_file(const char *path, const char *dir, int precision_of_model, nmt_precision *precision,
                     nmt_model *m, nmt_spm **spm) {
    nmt_st_file file;
    if (nmt_st_read(&file, path) < 0) return -1;
    nmt_model_config config;
    uint64_t fingerprint = 0;
    char *spm_path = nmt_path_join(dir, "spm.model");
    int rc = -1;
    if (!spm_path || nmt_model_metadata_read(&config, &file, path) < 0 ||
        nmt_model_fingerprint_read(&file, path, &fingerprint) < 0)
        goto done;
    if (precision_of_model && precision_of_file(path, &file, precision) < 0) goto done;
    if (nmt_model_init(m, &config) < 0) goto done;
    m->vocab_fingerprint = fingerprint;
    if (nmt_model_tensor_read(m, m->params, "", &file, path) < 0 || nmt_spm_load(spm, spm_path) < 0) goto done;
    if (nmt_spm_vocab_size(*spm) != config.vocab_size) {
        nmt_error_set("%s has %d pieces but %s has a vocabulary of %d", spm_path, nmt_spm_vocab_size(*spm), path,
                      config.vocab_size);
        goto done;
    }
    if (nmt_model_check_vocab(fingerprint, path, nmt_spm_fingerprint(*spm), spm_path) < 0) goto done;
    if (*precision == NMT_PRECISION_INT8 && nmt_model_quantize_int8(m) < 0) goto done;
    rc = 0;
done:
    nmt_st_free(&file);
    free(spm_path);
    return rc;
}

/* A model directory for a translator of *precision, which becomes the precision its file was written
 * in with precision_of_model (an int8 file is read again for int8: a model serves translators of one
 * precision). */
static int open_dir(const char *dir, int precision_of_model, nmt_precision *precision, nmt_model *m, nmt_spm **spm) {
    if (nmt_model_dir_open_for(dir, *precision, m, spm) < 0) return -1;
    if (!precision_of_model || *precision == NMT_PRECISION_INT8) return 0;
    char *path = nmt_path_join(dir, "model.safetensors");
    const nmt_precision given = *precision;
    const int rc = path ? precision_of_file(path, m->source, precision) : -1;
    free(path);
    if (rc == 0 && *precision == given) return 0;
    nmt_spm_free(*spm);
    *spm = NULL;
    nmt_model_free(m);
    return rc < 0 ? -1 : nmt_model_dir_open_for(dir, *precision, m, spm);
}

int nmt_pipeline_load(const char *model, int whole, int precision_of_model, nmt_precision *precision, nmt_model *m,
                      nmt_spm **spm, char **dir) {
    memset(m, 0, sizeof *m);
    *spm = NULL;
    struct stat st;
    if (stat(model, &st) != 0) return nmt_error_set("%s: cannot open the model: %s", model, strerror(errno));
    const int foreign = nmt_model_dir_foreign(model), file = S_ISREG(st.st_mode) && !foreign;
    *dir = file ? dir_of_file(model) : nmt_strdup(model);
    if (!*dir) return -1;
    nmt_precision fp32 = NMT_PRECISION_FP32;
    int rc;
    if (foreign) {
        /* Another toolkit's weights are read whole into float32; they run as asked (fp32 unless told). */
        if (whole || precision_of_model) *precision = NMT_PRECISION_FP32;
        rc = nmt_model_dir_open_for(model, whole ? fp32 : *precision, m, spm);
    } else if (file) rc = open_file(model, *dir, precision_of_model && !whole, whole ? &fp32 : precision, m, spm);
    else if (whole) rc = nmt_model_dir_open(*dir, m, spm);
    else rc = open_dir(*dir, precision_of_model, precision, m, spm);
    if (rc == 0) return 0;
    nmt_spm_free(*spm);
    *spm = NULL;
    nmt_model_free(m);
    memset(m, 0, sizeof *m);
    free(*dir);
    *dir = NULL;
    return -1;
}

int nmt_pipeline_open(nmt_pipeline **out, const char *model, const nmt_pipeline_options *options) {
    *out = NULL;
    if (nmt_pipeline_options_check(options) < 0) return -1;
    nmt_pipeline *p = nmt_calloc(1, sizeof *p);
    if (!p) return -1;
    p->options = *options;
    if (nmt_pipeline_load(model, 0, options->precision_of_model, &p->options.decode.precision, &p->model, &p->spm,
                          &p->dir) < 0)
        goto fail;
    p->source = nmt_tokenizer_spm(p->spm);
    p->target = nmt_tokenizer_spm_target(p->spm);
    p->limit = nmt_pipeline_input_limit(&p->model.config, options->max_input_length);
    if (options->shortlist && nmt_shortlist_load_dir(&p->shortlist, p->dir, p->model.config.vocab_size) < 0) goto fail;
    p->options.decode.shortlist = p->shortlist;
    const int V = p->model.config.vocab_size;
    if (!(p->word_joins = nmt_malloc((size_t)V))) goto fail;
    int joining = 0;
    for (int v = 0; v < V; v++) joining |= p->word_joins[v] = (unsigned char)p->target.joins(p->target.state, v);
    p->options.decode.word_joins = p->word_joins;
    /* Pieces written one after another spell the output only where some join (not a token
     * vocabulary's, which spaces join): only then may constraints match their text. */
    if (joining) {
        if (!(p->piece_text = nmt_malloc((size_t)V * sizeof *p->piece_text))) goto fail;
        for (int v = 0; v < V; v++) p->piece_text[v] = p->target.piece(p->target.state, v);
    }
    p->options.decode.piece_text = p->piece_text;
    /* Only a model that forced scoring can read again: from its mapped file, or another toolkit's
     * directory. */
    size_t released;
    if ((p->model.source || nmt_model_dir_foreign(model)
             ? nmt_translator_create_releasing(&p->translator, &p->model, &p->options.decode, &released)
             : nmt_translator_create(&p->translator, &p->model, &p->options.decode)) < 0)
        goto fail;
    *out = p;
    return 0;
fail:
    nmt_pipeline_free(p);
    return -1;
}

void nmt_pipeline_free(nmt_pipeline *p) {
    if (!p) return;
    nmt_translator_free(p->translator);
    nmt_shortlist_free(p->shortlist);
    free(p->word_joins);
    free(p->piece_text);
    nmt_spm_free(p->spm);
    nmt_model_free(&p->model);
    nmt_model_free(&p->scorer);
    free(p->dir);
    free(p);
}

const nmt_pipeline_options *nmt_pipeline_get_options(const nmt_pipeline *p) { return &p->options; }

int nmt_pipeline_set_decode(nmt_pipeline *p, const nmt_decode_options *decode) {
    nmt_pipeline_options o = p->options;
    o.decode = *decode;
    o.decode.precision = p->options.decode.precision;
    o.decode.shortlist = p->options.decode.shortlist;
    o.decode.batch_size = p->options.decode.batch_size;
    o.decode.word_joins = p->options.decode.word_joins;
    o.decode.piece_text = p->options.decode.piece_text;
    if (nmt_pipeline_options_check(&o) < 0 || nmt_translator_set_search(p->translator, &o.decode) < 0) return -1;
    p->options.decode = o.decode;
    return 0;
}

const char *nmt_pipeline_dir(const nmt_pipeline *p) { return p->dir; }

size_t nmt_pipeline_limit(const nmt_pipeline *p) { return p->limit; }

const nmt_tokenizer *nmt_pipeline_source(const nmt_pipeline *p) { return &p->source; }

const nmt_tokenizer *nmt_pipeline_target(const nmt_pipeline *p) { return &p->target; }

int nmt_pipeline_encode(const nmt_pipeline *p, const nmt_lines *in, int32_t **ids, size_t *cap, size_t *count,
                        size_t *pieces) {
    return nmt_pipeline_encode_with(&p->source, p->limit, p->options.crop, in, ids, cap, count, pieces);
}

int nmt_pipeline_encode_target(const nmt_pipeline *p, const nmt_lines *in, int32_t **ids, size_t *cap, size_t *count,
                               size_t *pieces) {
    return nmt_pipeline_encode_with(&p->target, p->limit, p->options.crop, in, ids, cap, count, pieces);
}

int nmt_pipeline_translate(nmt_pipeline *p, uint64_t first_key, int count, const int32_t *const *src,
                           const int *src_len, nmt_translation *out) {
    return nmt_translator_run_guided(p->translator, first_key, count, src, src_len, NULL, out);
}

int nmt_pipeline_translate_guided(nmt_pipeline *p, uint64_t first_key, int count, const int32_t *const *src,
                                  const int *src_len, const nmt_decode_guide *const *guides, nmt_translation *out) {
    return nmt_translator_run_guided(p->translator, first_key, count, src, src_len, guides, out);
}

/* 1 when the model read again (reread) is the one the translator holds (kept, whose matrices are
 * gone): the same tensors and vocabulary, and the same vectors (biases, norms), which it kept. */
static int same_model(const nmt_model *kept, const nmt_model *reread) {
    if (kept->num_tensors != reread->num_tensors || kept->num_params != reread->num_params ||
        kept->vocab_fingerprint != reread->vocab_fingerprint)
        return 0;
    for (int i = 0; i < kept->num_tensors; i++) {
        const nmt_tensor_info *a = &kept->tensors[i], *b = &reread->tensors[i];
        if (strcmp(a->name, b->name) != 0 || a->rank != b->rank || a->shape[0] != b->shape[0] ||
            a->shape[1] != b->shape[1] || a->offset != b->offset ||
            (a->rank == 1 && memcmp(kept->params + a->offset, reread->params + b->offset, a->count * sizeof(float)) != 0))
            return 0;
    }
    return 1;
}

/* p->scorer: the translator's model whole, read again (see the top of this file; another toolkit's
 * model is p->dir itself). */
static int open_scorer(nmt_pipeline *p) {
    if (p->model.source) return nmt_model_load_whole(&p->scorer, &p->model);
    nmt_spm *spm = NULL;
    if (nmt_model_dir_open_for(p->dir, p->options.decode.precision, &p->scorer, &spm) < 0) return -1;
    nmt_spm_free(spm);
    if (same_model(&p->model, &p->scorer)) return 0;
    nmt_model_free(&p->scorer);
    memset(&p->scorer, 0, sizeof p->scorer);
    return nmt_error_set("%s: changed since it was loaded: forced scoring cannot read it again; load it anew", p->dir);
}

int nmt_pipeline_forced_logprob(nmt_pipeline *p, int count, const int32_t *const *src, const int *src_len,
                                const int32_t *const *tgt, const int *tgt_len, double *out) {
    nmt_model *model = &p->model;
    if (p->model.release_marked) {
        if (!p->scorer.params && open_scorer(p) < 0) return -1;
        model = &p->scorer;
    }
    return nmt_forced_score(model, count, src, src_len, tgt, tgt_len, p->options.decode.batch_size, out);
}

char *nmt_pipeline_text(const nmt_pipeline *p, const nmt_hypothesis *h) {
    return p->target.decode(p->target.state, h->tokens, (size_t)h->length);
}

int nmt_pipeline_align(const nmt_pipeline *p, const nmt_hypothesis *h, const int32_t *src, int src_len, int words,
                       int *pairs) {
    return nmt_align_pairs(h, src, src_len, p->spm, words, pairs);
}
