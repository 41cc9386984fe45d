/* pipeline: raw lines to translations, the one path every front end takes (`nmt translate`, the C
 * API's engine and through it Python and the server, `nmt score`'s input bound).
 *
 * A pipeline is a model directory opened for one precision (its model, its tokenizer, the shortlist
 * when asked for) and the translator over it. A line is checked (UTF-8), encoded by the tokenizer and
 * bounded: a line of more than the limit's pieces (max_input_length, and fewer for a model whose
 * learned positions end sooner) is cropped to the limit with `crop`, otherwise emptied; the caller
 * learns it from the return value and says so (a warning naming file:line, or an error). The
 * encoded lines are translated in batches bounded by sentences and tokens (translator.h), and each
 * hypothesis turned back into text, pieces and alignment pairs here. nmt_pipeline_options_default()
 * is the single place of every default; the public options of include/nmt/nmt.h take theirs from it.
 */
#ifndef NMT_PIPELINE_H
#define NMT_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "base/io.h"
#include "infer/search.h"
#include "model/model.h"
#include "text/spm.h"

/* The tokenizer of one side: SentencePiece today; a model without it (pieces separated by spaces)
 * provides these three functions instead. */
typedef struct nmt_tokenizer {
    const void *state;
    /* text[0..len) (valid UTF-8) into *ids (grown; *cap its capacity), *count pieces. */
    int (*encode)(const void *state, const char *text, size_t len, int32_t **ids, size_t *cap, size_t *count);
    char *(*decode)(const void *state, const int32_t *ids, size_t count); /* a new string */
    const char *(*piece)(const void *state, int32_t id);                 /* the piece's own string */
    int (*joins)(const void *state, int32_t id); /* 1: the piece continues the word before it (spm.h) */
} nmt_tokenizer;

/* SentencePiece as a tokenizer (spm must outlive it): of the source side, and of the target side,
 * which differs where the model has two vocabularies (nmt_spm_encode_target). */
nmt_tokenizer nmt_tokenizer_spm(const nmt_spm *spm);
nmt_tokenizer nmt_tokenizer_spm_target(const nmt_spm *spm);

enum { NMT_PIPELINE_MAX_INPUT = 1000, NMT_PIPELINE_BATCH_TOKENS = 8192 };

typedef struct nmt_pipeline_options {
    nmt_decode_options decode; /* search, batches (batch_size 64, batch_tokens 8192), precision, attention,
                                * sampling; decode.shortlist is the pipeline's own */
    int max_input_length;      /* source pieces a line (1000, as Marian's) */
    int crop;                  /* 1: a longer line is cropped to the limit; 0: emptied (0) */
    int shortlist;             /* 1: the output layer scores MODEL_DIR/shortlist.bin's candidates (0) */
    int precision_of_model;    /* 1: run the model in the precision its file was written in (int8 for a
                                * file of `nmt convert --precision int8` where the CPU has int8
                                * products, else decode.precision); 0: decode.precision, as given (1) */
} nmt_pipeline_options;

nmt_pipeline_options nmt_pipeline_options_default(void);
/* Checks what nmt_decode_options_check does and the bounds (max_input_length 1..1000000, batch_tokens
 * >= 1, no shortlist with sampling); errors name the option. */
int nmt_pipeline_options_check(const nmt_pipeline_options *options);
/* "fp32", "bf16", "int8" or "auto" (the fastest of those here, measured) into *out; a precision this
 * CPU lacks is an error saying what it needs. */
int nmt_pipeline_precision_parse(const char *text, nmt_precision *out);

/* The most source pieces a line may keep: max_input_length, less where learned positions end. */
size_t nmt_pipeline_input_limit(const nmt_model_config *config, int max_input_length);

/* nmt_pipeline_encode's results besides 0 and -1. */
enum { NMT_PIPELINE_INVALID_UTF8 = -2, NMT_PIPELINE_OVERLONG = 1 };
/* Checks and encodes the current line of `in` with `tokenizer`, bounded to `limit` pieces: *count is
 * what is kept, *pieces what the line has. Returns 0; NMT_PIPELINE_OVERLONG when the line had more
 * (then *count = limit with crop, else 0); NMT_PIPELINE_INVALID_UTF8 (error "NAME:LINE: invalid UTF-8
 * at byte B", *count 0); -1 on other errors. */
int nmt_pipeline_encode_with(const nmt_tokenizer *tokenizer, size_t limit, int crop, const nmt_lines *in,
                             int32_t **ids, size_t *cap, size_t *count, size_t *pieces);

/* Opens `model` -- a model directory (what `nmt train` writes), a model file in one (its vocabulary
 * DIR/spm.model) or a checkpoint DIR/checkpoints/step-N.safetensors (the vocabulary of DIR) -- into
 * *m and *spm, and *dir (a new string): the directory the vocabulary came from. With `whole` the model
 * is read whole in float32 (the forward passes accept it: scoring); otherwise it is opened for a
 * translator of *precision as nmt_model_dir_open_for opens it (a file is still read whole), and
 * with precision_of_model *precision becomes int8 for an int8 file where this CPU has int8
 * products. On failure nothing is left to free. */
int nmt_pipeline_load(const char *model, int whole, int precision_of_model, nmt_precision *precision, nmt_model *m,
                      nmt_spm **spm, char **dir);

typedef struct nmt_pipeline nmt_pipeline;

/* Opens `model` (nmt_pipeline_load) for options->decode.precision, or the model's own with
 * precision_of_model (the precision in effect is that of nmt_pipeline_get_options). A directory's
 * (nmt's or another toolkit's) float32 matrices are released as the translator packs them where it
 * holds them whole (the model then serves this pipeline only). */
int nmt_pipeline_open(nmt_pipeline **out, const char *model, const nmt_pipeline_options *options);
void nmt_pipeline_free(nmt_pipeline *p);
const nmt_pipeline_options *nmt_pipeline_get_options(const nmt_pipeline *p);
/* Replaces the search's options for the translations that follow (nmt_translator_set_search: the
 * precision, shortlist, batch_size, word_joins and piece_text stay the pipeline's), checked as
 * nmt_pipeline_options_check checks them; on failure the pipeline keeps those it had. Not while it
 * translates. */
int nmt_pipeline_set_decode(nmt_pipeline *p, const nmt_decode_options *decode);
/* The model directory (for a file, the directory its vocabulary comes from). */
const char *nmt_pipeline_dir(const nmt_pipeline *p);
/* The most source pieces a line keeps (nmt_pipeline_input_limit of its model and options). */
size_t nmt_pipeline_limit(const nmt_pipeline *p);
const nmt_tokenizer *nmt_pipeline_source(const nmt_pipeline *p);
const nmt_tokenizer *nmt_pipeline_target(const nmt_pipeline *p);
/* nmt_pipeline_encode_with for the source side of this pipeline's model and options. */
int nmt_pipeline_encode(const nmt_pipeline *p, const nmt_lines *in, int32_t **ids, size_t *cap, size_t *count,
                        size_t *pieces);
/* The same for the target side (forced scoring). */
int nmt_pipeline_encode_target(const nmt_pipeline *p, const nmt_lines *in, int32_t **ids, size_t *cap, size_t *count,
                               size_t *pieces);
/* Translates src[i] (src_len[i] pieces) for i < count into out[i], sentence first_key + i keying its
 * sampling draws (nmt_translator_run_from). */
int nmt_pipeline_translate(nmt_pipeline *p, uint64_t first_key, int count, const int32_t *const *src,
                           const int *src_len, nmt_translation *out);
/* The same with guides[i] for line i (nmt_translator_run_guided; NULL: none): target pieces encoded
 * with nmt_pipeline_target. */
int nmt_pipeline_translate_guided(nmt_pipeline *p, uint64_t first_key, int count, const int32_t *const *src,
                                  const int *src_len, const nmt_decode_guide *const *guides, nmt_translation *out);
/* out[i] = the natural-log probability of tgt[i] (and eos) given src[i] (forced decoding), with the
 * model the pipeline translates with (read whole again at the first call where the translator
 * released it: from the mapped file, or another toolkit's directory read as it was for the
 * translator, refused when it changed since). Not concurrently with itself. */
int nmt_pipeline_forced_logprob(nmt_pipeline *p, int count, const int32_t *const *src, const int *src_len,
                                const int32_t *const *tgt, const int *tgt_len, double *out);

/* The text of hypothesis h (a new string). */
char *nmt_pipeline_text(const nmt_pipeline *p, const nmt_hypothesis *h);
/* h's alignment (with attention) with the source src[src_len] as pairs (source, target), in pieces
 * or in words (nmt_align_pairs); pairs has room for 2 * h->length ints. Returns the count or -1. */
int nmt_pipeline_align(const nmt_pipeline *p, const nmt_hypothesis *h, const int32_t *src, int src_len, int words,
                       int *pairs);

#endif
