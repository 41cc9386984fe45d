/* train_data: a training run's vocabulary, corpora and validation references, read and checked. */
#include "train/train_data.h"

#include "base/hash.h"
#include "base/io.h"
#include "base/random.h"
#include "base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Trains a vocabulary on both sides of every training corpus into OUTPUT/spm.model (and spm.vocab). */
static int train_vocabulary(const nmt_config *cfg, FILE *progress) {
    long lines, pairs = 0, all_lines = 0; /* bad corpora are refused before minutes of vocabulary training, not after */
    if (cfg->valid.src && nmt_corpus_check(cfg->valid.src, cfg->valid.tgt, &lines) < 0) return -1;
    const char *inputs[2 * NMT_CONFIG_MAX_CORPORA];
    for (int i = 0; i < cfg->num_train; i++) {
        long n;
        if (nmt_corpus_check(cfg->train[i].src, cfg->train[i].tgt, &lines) < 0 ||
            nmt_corpus_count_pairs(cfg->train[i].src, cfg->train[i].tgt, &lines, &n) < 0)
            return -1;
        pairs += n;
        all_lines += lines;
        inputs[2 * i] = cfg->train[i].src;
        inputs[2 * i + 1] = cfg->train[i].tgt;
    }
    if (pairs == 0)
        return nmt_error_set("no sentence pairs in %s and %s%s after skipping %ld line%s with an empty side: nothing to "
                             "train on", cfg->train[0].src, cfg->train[0].tgt,
                             nmt_config_more_corpora(cfg), all_lines,
                             all_lines == 1 ? "" : "s");
    if (progress)
        fprintf(progress, "training a %s vocabulary of %d pieces on %s and %s%s\n", cfg->vocab_type, cfg->vocab_size,
                cfg->train[0].src, cfg->train[0].tgt, nmt_config_more_corpora(cfg));
    char *prefix = nmt_path_join(cfg->output, "spm");
    if (!prefix) return -1;
    nmt_spm_train_options options = {
        .inputs = inputs,
        .num_inputs = 2 * cfg->num_train,
        .vocab_size = cfg->vocab_size,
        .model_type = cfg->vocab_type,
        .character_coverage = 1.0,
        .input_sentence_size = 1000000,
        .output_prefix = prefix,
        .quiet = 1,
        .size_name = "vocab.size",
    };
    int rc = nmt_spm_train(&options);
    free(prefix);
    return rc;
}

/* The vocabulary of a fine-tuning run is that of train.init_from; vocab.model may name the same. */
static int init_from_vocabulary(const char *init_spm, const char **given) {
    if (!init_spm) return 0;
    uint64_t a, b;
    if (*given && (nmt_hash_file(*given, &a) < 0 || nmt_hash_file(init_spm, &b) < 0)) return -1;
    if (*given && a != b)
        return nmt_error_set("vocab.model %s differs from %s, the vocabulary of train.init_from: a fine-tuned model "
                             "keeps its vocabulary", *given, init_spm);
    *given = init_spm;
    return 0;
}

int nmt_train_data_vocabulary(const nmt_config *cfg, const char *spm_path, const char *init_spm, int resuming,
                              FILE *progress, nmt_spm **spm) {
    int have = nmt_file_exists(spm_path);
    const char *given_model = cfg->vocab_model;
    if (init_from_vocabulary(init_spm, &given_model) < 0) return -1;
    if (given_model) {
        /* A SentencePiece model from elsewhere (spm_train's ids) is written with nmt's. */
        char *model;
        size_t size;
        uint64_t current = 0;
        if (nmt_spm_model_with_nmt_ids(given_model, &model, &size) < 0) return -1;
        const uint64_t given = nmt_hash_bytes(model, size);
        int rc = have ? nmt_hash_file(spm_path, &current) : 0;
        if (rc == 0 && (!have || given != current)) {
            if (have && resuming)
                rc = nmt_error_set("vocab.model %s differs from %s, which the checkpoints were trained with",
                                   given_model, spm_path);
            else
                rc = nmt_atomic_write(spm_path, model, size);
        }
        free(model);
        if (rc < 0) return -1;
    } else if (!have) {
        if (resuming)
            return nmt_error_set("%s holds checkpoints but no spm.model: the vocabulary they need is gone",
                                 cfg->output);
        if (train_vocabulary(cfg, progress) < 0) return -1;
    }
    if (nmt_spm_load(spm, spm_path) < 0) return -1;
    if (!cfg->vocab_model && have && nmt_spm_vocab_size(*spm) != cfg->vocab_size)
        return nmt_error_set("vocab.size is %d but %s, trained at the first run into this directory, has %d pieces; "
                             "set vocab.size %d, or train into a new output directory for another vocabulary",
                             cfg->vocab_size, spm_path, nmt_spm_vocab_size(*spm), nmt_spm_vocab_size(*spm));
    return 0;
}

static int spm_encode(const void *spm, const char *text, size_t len, int32_t **ids, size_t *cap, size_t *count) {
    return nmt_spm_encode(spm, text, len, ids, cap, count);
}

/* An nmt_corpus_sample_fn over a sampler: nmt_spm_sample, or nmt_spm_encode for seed 0. */
static int spm_sample(const void *ctx, const char *text, size_t len, uint64_t seed, int32_t **ids, size_t *cap,
                      size_t *count) {
    const nmt_train_sampler *s = ctx;
    if (!seed) return nmt_spm_encode(s->spm, text, len, ids, cap, count);
    return nmt_spm_sample(s->spm, text, len, s->alpha, seed, ids, cap, count);
}

int nmt_train_data_sampler(nmt_train_sampler *sampler, const nmt_config *cfg, nmt_corpus *corpus, const nmt_spm *spm,
                           uint64_t seed) {
    if (!nmt_spm_can_sample(spm))
        return nmt_error_set("vocab.sampling_alpha %g needs a unigram vocabulary to draw segmentations from, and "
                             "this run's is BPE", cfg->sampling_alpha);
    *sampler = (nmt_train_sampler){corpus, spm, cfg->sampling_alpha, cfg->max_length, seed, corpus->num_ids};
    return 0;
}

int nmt_train_data_resample(void *ctx, long epoch) {
    const nmt_train_sampler *s = ctx;
    const uint64_t seed = nmt_random_at(s->seed ^ 0x5ab5a3b1e5eedull, (uint64_t)epoch);
    return nmt_corpus_resample(s->corpus, spm_sample, s, seed, s->max_length);
}

int nmt_train_data_references(const char *path, long n, char ***references) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return nmt_error_set("%s: cannot open: %s", path, strerror(errno));
    char **refs = *references = nmt_calloc((size_t)n, sizeof *refs);
    nmt_lines lines;
    nmt_lines_init(&lines, fp, path);
    int rc = refs ? 0 : -1, more = 0;
    for (long i = 0; rc == 0 && i < n; i++) {
        more = nmt_lines_next(&lines);
        if (more <= 0) rc = more < 0 ? -1 : nmt_error_set("%s: changed while being read", path);
        else if (!(refs[i] = nmt_strdup(lines.line))) rc = -1;
    }
    nmt_lines_free(&lines);
    fclose(fp);
    return rc;
}

void nmt_train_data_free_lines(char **lines, long n) {
    for (long i = 0; lines && i < n; i++) free(lines[i]);
    free(lines);
}

int nmt_train_data_corpus(const nmt_config *cfg, nmt_corpus *corpus, const nmt_corpus_paths *paths,
                          const char *cache_name, int max_length, int skip_empty, int keep_text, const nmt_spm *spm,
                          int write_cache, FILE *progress) {
    char *cache = nmt_path_join(cfg->output, cache_name);
    if (!cache) return -1;
    nmt_corpus_options options = {.max_length = max_length,
                                  .skip_empty = skip_empty,
                                  .keep_text = keep_text,
                                  .cache_path = cache,
                                  .encoder_hash = nmt_spm_fingerprint(spm)};
    if (!write_cache && !nmt_file_exists(cache)) options.cache_path = NULL;
    double start = nmt_now();
    int rc = nmt_corpus_read(corpus, paths->src, paths->tgt, spm_encode, spm, &options);
    free(cache);
    if (rc < 0) return -1;
    if (!progress) return 0;
    char took[32];
    nmt_format_duration(took, sizeof took, nmt_now() - start);
    char skipped[128] = "";
    if (skip_empty)
        snprintf(skipped, sizeof skipped, " (%ld skipped as empty, %ld as longer than %d pieces)", corpus->skipped_empty,
                 corpus->skipped_long, max_length);
    fprintf(progress, "%s: %ld pairs of %ld lines%s, %zu pieces, %s %s\n", paths->src, corpus->num_pairs,
            corpus->lines, skipped, corpus->num_ids, corpus->from_cache ? "loaded from the cache in" : "encoded in", took);
    return 0;
}

int nmt_train_data_corpora(const nmt_config *cfg, nmt_corpus *corpus, int keep_text, const nmt_spm *spm,
                           int write_cache, FILE *progress) {
    /* One corpus read once is the epoch as read: no copy (and the key of a run from before weights). */
    if (cfg->num_train == 1 && cfg->train[0].weight == 1)
        return nmt_train_data_corpus(cfg, corpus, &cfg->train[0], "corpus-train.bin", cfg->max_length, 1, keep_text,
                                     spm, write_cache, progress);
    nmt_corpus parts[NMT_CONFIG_MAX_CORPORA] = {{0}}; /* a part that fails to read is left empty */
    int times[NMT_CONFIG_MAX_CORPORA] = {0}, read = 0, rc = 0;
    for (; read < cfg->num_train && rc == 0; read++) {
        char cache[32] = "corpus-train.bin"; /* the first corpus's cache has the name of a lone corpus's */
        if (read > 0) snprintf(cache, sizeof cache, "corpus-train-%d.bin", read + 1);
        times[read] = cfg->train[read].weight;
        rc = nmt_train_data_corpus(cfg, &parts[read], &cfg->train[read], cache, cfg->max_length, 1, keep_text, spm,
                                   write_cache, progress);
    }
    if (rc == 0) rc = nmt_corpus_join(corpus, parts, times, read);
    for (int i = 0; i < read; i++) nmt_corpus_free(&parts[i]);
    if (rc == 0 && progress) {
        fprintf(progress, "an epoch: %ld pairs, %zu pieces, of", corpus->num_pairs, corpus->num_ids);
        for (int i = 0; i < read; i++)
            fprintf(progress, "%s %s x %d", i ? "," : "", cfg->train[i].src, cfg->train[i].weight);
        fputc('\n', progress);
    }
    return rc;
}

/* Rows carry eos or bos: pieces + 1. */
int nmt_train_data_check_positions(const nmt_config *cfg, const nmt_corpus *valid) {
    int limit = cfg->model.max_positions;
    if (cfg->model.positions != NMT_POSITIONS_LEARNED) return 0;
    if (cfg->max_length + 1 > limit)
        return nmt_error_set("data.max_length %d needs model.max_positions of at least %d with learned positions, not %d",
                             cfg->max_length, cfg->max_length + 1, limit);
    for (long i = 0; valid && i < valid->num_pairs; i++) {
        int longest = valid->src_len[i] > valid->tgt_len[i] ? valid->src_len[i] : valid->tgt_len[i];
        if (longest + 1 > limit) /* validation keeps every line: pair i is line i + 1 */
            return nmt_error_set("%s:%ld: %d pieces do not fit model.max_positions %d (learned positions)",
                                 valid->src_len[i] >= valid->tgt_len[i] ? cfg->valid.src : cfg->valid.tgt, i + 1,
                                 longest, limit);
    }
    return 0;
}

