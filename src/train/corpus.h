/* corpus: a parallel corpus read from two line-aligned text files and encoded into token ids.
 *
 * Reading checks what a day of training must not discover late: both files are valid UTF-8 (the
 * error names file, line and 1-based byte, "train.en:12: invalid UTF-8 at byte 7") and have the same
 * number of lines (the error names both files and both counts). Pairs with an empty side, or a side
 * longer than max_length pieces, are skipped and counted.
 *
 * The encoder is a callback with nmt_spm_encode's shape, so the reader does not depend on
 * SentencePiece (tests pass a byte encoder). Encoded pieces never include bos/eos.
 *
 * Caching. Encoding a large corpus takes minutes, so the result can be cached in a binary file: its
 * key hashes the content of both text files, the encoder (a hash of the SentencePiece model file,
 * given by the caller) and the reading options. A cache whose key or checksum does not match is
 * ignored and rewritten (atomically); a repeated or resumed run loads the cache instead of encoding.
 *
 * Layout in memory: the pieces of pair i are ids[offset[i] .. offset[i] + src_len[i]) for the source,
 * followed directly by its target's tgt_len[i] pieces.
 *
 * Subword sampling. With keep_text the corpus also holds the text of every kept pair, and
 * nmt_corpus_resample replaces all pieces by a fresh draw of segmentations (an epoch's, in training).
 * Such a corpus is encoded from the text, not loaded from the cache, since the text is needed anyway.
 */
#ifndef NMT_CORPUS_H
#define NMT_CORPUS_H

#include <stddef.h>
#include <stdint.h>

/* Encodes text (len bytes of valid UTF-8) into *ids, growing it with nmt_realloc (*cap tracks the
 * capacity) and setting *count; returns 0, or -1 with the error set. nmt_spm_encode fits (ctx = spm). */
typedef int (*nmt_corpus_encode_fn)(const void *ctx, const char *text, size_t len, int32_t **ids, size_t *cap,
                                    size_t *count);

/* Draws a segmentation of text seeded by seed (!= 0); seed 0 asks for the encoder's own, undrawn one.
 * Returns and grows like nmt_corpus_encode_fn; nmt_spm_sample fits. */
typedef int (*nmt_corpus_sample_fn)(const void *ctx, const char *text, size_t len, uint64_t seed, int32_t **ids,
                                    size_t *cap, size_t *count);

typedef struct nmt_corpus_options {
    int max_length;         /* skip pairs with a side of more pieces than this (0 = no limit) */
    int skip_empty;         /* skip pairs with a side of zero pieces */
    int keep_text;          /* keep the text of the kept pairs, for nmt_corpus_resample */
    const char *cache_path; /* binary cache file, or NULL for none */
    uint64_t encoder_hash;  /* identifies the encoder in the cache key (hash of the model file) */
} nmt_corpus_options;

typedef struct nmt_corpus {
    long num_pairs;         /* pairs kept */
    int32_t *ids;           /* [num_ids] pieces of every kept pair, source then target */
    size_t num_ids;
    size_t *offset;         /* [num_pairs] where pair i starts in ids */
    int32_t *src_len;       /* [num_pairs] source pieces (without eos) */
    int32_t *tgt_len;       /* [num_pairs] target pieces (without eos) */
    long lines;             /* lines of each file */
    long skipped_empty;     /* pairs skipped because a side was empty */
    long skipped_long;      /* pairs skipped because a side was longer than max_length */
    int from_cache;         /* 1 when loaded from the cache file */
    char *text;             /* with keep_text: the text of every kept pair's sides, end to end */
    size_t *text_offset;    /* [2 num_pairs + 1] with keep_text: side k (0 source, 1 target) of pair i is
                             * text[text_offset[2i + k] .. text_offset[2i + k + 1]) */
    size_t ids_cap;         /* ids' capacity */
    struct nmt_corpus_draws *draws; /* [num_draws] nmt_corpus_resample's buffers, one per unit of pairs */
    long num_draws;
    uint64_t key;           /* hash of both texts, the encoder and the reading options (the cache key):
                             * equal keys mean the same pairs, encoded the same way */
} nmt_corpus;

/* Reads, validates and encodes src_path/tgt_path (or loads the cache). */
int nmt_corpus_read(nmt_corpus *corpus, const char *src_path, const char *tgt_path, nmt_corpus_encode_fn encode,
                    const void *encode_ctx, const nmt_corpus_options *options);
void nmt_corpus_free(nmt_corpus *corpus);
/* Re-segments every pair of a corpus read with keep_text: side k of pair i becomes sample's draw with
 * seed nmt_random_at(seed, 2i + k) | 1, so that the whole corpus is a pure function of seed. A draw of
 * more than max_length pieces (> 0) is replaced by the encoder's own segmentation (seed 0), which the
 * reading kept within it. The pairs are drawn on the pool's threads (sample must be thread-safe), with
 * the same result on any number of threads. Allocates only when the pieces outgrow every earlier
 * segmentation; on failure the corpus keeps the segmentation it had. */
int nmt_corpus_resample(nmt_corpus *corpus, nmt_corpus_sample_fn sample, const void *ctx, uint64_t seed,
                        int max_length);

/* The corpora parts[0 .. n) one after the other, part i repeated times[i] (>= 1) times, into *out (an
 * epoch's data when several corpora are weighted, train/train_data.h). The pairs are copied, text too
 * when every part kept its text; line and skip counts are the parts' sums, each counted once; the key
 * hashes the parts' keys and times. The parts are left as they were. */
int nmt_corpus_join(nmt_corpus *out, const nmt_corpus *parts, const int *times, int n);

/* Only the checks of nmt_corpus_read (UTF-8, equal line counts), e.g. before training a vocabulary on
 * the files; *lines = lines of each file. */
int nmt_corpus_check(const char *src_path, const char *tgt_path, long *lines);
/* Counts the line pairs with text on both sides (*pairs), of *lines; an error names the file and line. */
int nmt_corpus_count_pairs(const char *src_path, const char *tgt_path, long *lines, long *pairs);

#endif
