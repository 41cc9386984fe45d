/* shortlist: the target pieces a batch of source sentences may translate into, so that the decoder's
 * output layer scores those instead of the whole vocabulary (as Marian's lexical shortlists).
 *
 * For each source piece s the table holds the K target pieces t most associated with it in a
 * parallel corpus, by the Dice coefficient of their sentence co-occurrence, 2 c(s, t) / (c(s) +
 * c(t)) (c: sentence pairs holding the piece(s); ties to the higher c(s, t), then the lower id);
 * plus the M target pieces in the most sentences. A batch's candidates are the union of its source
 * pieces' lists, the M frequent pieces and the special ids 0 .. NMT_EOS, sorted.
 *
 * Stored as MODEL_DIR/shortlist.bin, a safetensors file: "offsets" I64 [V + 1] (piece s's list is
 * candidates[offsets[s] .. offsets[s + 1]), at most K of them), "candidates" I64, "frequent" I64 [M],
 * metadata "k", "m", "vocab_size" and "vocab_fingerprint" (the spm.model it was built with, as
 * nmt_spm_fingerprint: 16 hex digits). Loading checks the sizes against V, K and M before reading
 * anything, and nmt_shortlist_load_dir the fingerprint against the spm.model beside it.
 */
#ifndef NMT_SHORTLIST_H
#define NMT_SHORTLIST_H

#include <stdint.h>
#include <stdio.h>

#define NMT_SHORTLIST_FILE "shortlist.bin"
/* The defaults of K and M, chosen on Multi30k's val set (`nmt shortlist --help` says how). */
enum { NMT_SHORTLIST_K = 50, NMT_SHORTLIST_M = 100 };

typedef struct nmt_shortlist nmt_shortlist;

/* Builds the table from `pairs` sentence pairs of piece ids in [0, vocab_size). */
int nmt_shortlist_build(nmt_shortlist **out, int vocab_size, int k, int m, long pairs, const int32_t *const *src,
                        const int *src_len, const int32_t *const *tgt, const int *tgt_len);
int nmt_shortlist_save(const nmt_shortlist *s, const char *path);
/* Builds MODEL_DIR/shortlist.bin from the parallel corpora src[i], tgt[i], i < corpora (text or gzip;
 * encoded with the directory's spm.model). With `fit`, K and M larger than the vocabulary are cut to
 * it; otherwise they are an error. Says what it wrote on `progress` (NULL: nothing). */
int nmt_shortlist_build_dir(const char *model_dir, int corpora, const char *const *src, const char *const *tgt, int k,
                            int m, int fit, FILE *progress);
/* Loads and validates a table for a vocabulary of vocab_size pieces (a file larger than such a table
 * can be is refused unread). */
int nmt_shortlist_load(nmt_shortlist **out, const char *path, int vocab_size);
/* MODEL_DIR/shortlist.bin, refused when its vocabulary fingerprint is not MODEL_DIR/spm.model's; its
 * absence is an error saying how to build it. */
int nmt_shortlist_load_dir(nmt_shortlist **out, const char *model_dir, int vocab_size);
void nmt_shortlist_free(nmt_shortlist *s);
int nmt_shortlist_k(const nmt_shortlist *s);
int nmt_shortlist_m(const nmt_shortlist *s);

/* The candidates of the source pieces src[0 .. count) (ids outside the vocabulary are ignored)
 * into out (room for the vocabulary size), ascending; returns how many. mark: vocabulary-size
 * bytes of scratch, all 0 on entry and on return. */
int nmt_shortlist_union(const nmt_shortlist *s, const int32_t *src, long count, uint8_t *mark, int32_t *out);

#endif
