/* spm: SentencePiece through a small C interface (src/text/spm.cc is the project's only C++ file).
 *
 * nmt's vocabularies reserve ids pad=0, unk=1, bos=2, eos=3 (nmt_spm_train sets them so; a loaded
 * model with other ids is refused; nmt_spm_model_with_nmt_ids renumbers one). Encoding returns pieces only: callers add bos/eos themselves.
 */
#ifndef NMT_SPM_H
#define NMT_SPM_H

#include <stddef.h>
#include <stdint.h>

typedef struct nmt_spm nmt_spm;

typedef struct nmt_spm_train_options {
    const char *const *inputs;   /* text files, one sentence a line */
    int num_inputs;
    int vocab_size;
    const char *model_type;      /* "unigram" or "bpe" */
    double character_coverage;   /* e.g. 1.0 or 0.9995 */
    long input_sentence_size;    /* sample at most this many sentences (0 = all) */
    const char *output_prefix;   /* writes PREFIX.model and PREFIX.vocab */
    int quiet;                   /* silence SentencePiece's own logging */
    const char *size_name;       /* how the caller's user sets vocab_size ("vocab.size", "--size"), for
                                  * the error of a size the corpus cannot give (NULL: "the vocabulary size") */
} nmt_spm_train_options;

/* Trains PREFIX.model and PREFIX.vocab. A vocab_size larger than the corpus allows is an error naming
 * size_name and the largest size SentencePiece accepts. */
int nmt_spm_train(const nmt_spm_train_options *options);
/* Loads a model file: a regular file of at most 256 MiB (a FIFO or a device is refused at once). */
int nmt_spm_load(nmt_spm **spm, const char *path);
/* A token vocabulary, as models imported from other toolkits have (model_dir.h): source[i] and
 * target[i] are the pieces of id i on each side ("" where a side has none), the ids 0-3 those of
 * vocab.h. With spm_path (a SentencePiece model; NULL: none) text is cut into pieces by it, each looked
 * up in source, and output pieces are joined by it (Argos Translate packages); without, text is split
 * at spaces and tabs and output tokens are joined by one space (CTranslate2's token mode). A piece not
 * in source reads as unk. Such a vocabulary cannot sample (nmt_spm_can_sample 0). */
int nmt_spm_tokens(nmt_spm **spm, const char *const *source, const char *const *target, int count,
                   const char *spm_path);
/* The same with a SentencePiece model for each side: source text is cut by source_spm, target text
 * by target_spm, which also joins output pieces (Marian's OPUS-MT models: source.spm, target.spm). */
int nmt_spm_tokens_sides(nmt_spm **spm, const char *const *source, const char *const *target, int count,
                         const char *source_spm, const char *target_spm);
/* The bytes of the SentencePiece model at path with nmt's special ids (*data from nmt_malloc, for
 * free): its own bytes where it has them; a model from elsewhere (spm_train's pad=-1 unk=0 bos=1
 * eos=2, or any other order) with its unk, bos and eos pieces moved to ids 1-3 and pad to 0 (a <pad>
 * control piece added where it has none), the other pieces after them in their order: the same text
 * gives the same pieces. A model without bos or eos pieces is refused. */
int nmt_spm_model_with_nmt_ids(const char *path, char **data, size_t *len);
void nmt_spm_free(nmt_spm *spm);
int nmt_spm_vocab_size(const nmt_spm *spm);
/* The vocabulary's fingerprint: nmt_hash_bytes of the model file (models record it; two different
 * vocabularies of one size differ in it); of a token vocabulary, a hash of its pieces. */
uint64_t nmt_spm_fingerprint(const nmt_spm *spm);
/* Encodes text (len bytes, valid UTF-8) into *ids (grown with nmt_realloc as needed; *cap tracks
 * its capacity) and sets *count. */
int nmt_spm_encode(const nmt_spm *spm, const char *text, size_t len, int32_t **ids, size_t *cap, size_t *count);
/* The same for target text: a token vocabulary's target ids (its source ones above), else as above. */
int nmt_spm_encode_target(const nmt_spm *spm, const char *text, size_t len, int32_t **ids, size_t *cap,
                          size_t *count);
/* Subword sampling (Kudo 2018, "subword regularization"): draws one segmentation of text from the
 * unigram model's distribution over all of them, P(pieces) proportional to exp(alpha x the sum of their
 * scores) -- SentencePiece's SampleEncode with nbest_size -1 -- with nmt's own generator started at
 * seed, so that a draw is a pure function of (model, text, alpha, seed): training on samples stays
 * bit-identical across resumes and thread counts. alpha 0 makes every segmentation equally likely; a
 * large alpha concentrates on nmt_spm_encode's best one. Pieces that no normal piece covers become
 * unk, as in encoding. Needs a unigram model (nmt_spm_can_sample); *ids, *cap, *count as encode's. */
int nmt_spm_sample(const nmt_spm *spm, const char *text, size_t len, double alpha, uint64_t seed, int32_t **ids,
                   size_t *cap, size_t *count);
/* 1 for a unigram model (which nmt_spm_sample can sample), 0 for BPE. */
int nmt_spm_can_sample(const nmt_spm *spm);
/* Decodes ids (pad/bos/eos skipped) into a new NUL-terminated string. */
char *nmt_spm_decode(const nmt_spm *spm, const int32_t *ids, size_t count);
/* The piece of an id ("▁tea"), for alignment maps; "" when out of range. */
const char *nmt_spm_piece(const nmt_spm *spm, int32_t id);
/* 1 when the target piece of id, decoded after another piece, continues that piece's word: a piece
 * without SentencePiece's word-start mark whose first character is a letter or a digit (an ASCII one,
 * or any non-ASCII character); 0 for the rest, special and byte pieces, and every token of a token
 * vocabulary that spaces join. */
int nmt_spm_joins_word(const nmt_spm *spm, int32_t id);
/* The same on the source side: a token vocabulary's source piece of id ("" where the source has
 * none), else nmt_spm_piece's. */
const char *nmt_spm_source_piece(const nmt_spm *spm, int32_t id);

#endif
