/* marian: Marian's Transformer models (.npz, as OPUS-MT releases them) read into nmt's model and a
 * token vocabulary.
 *
 * A model is a folder with decoder.yml (its `models` names the .npz, its `vocabs` the source and target
 * vocabularies: YAML maps piece -> id), or the path of a .npz whose folder holds decoder.yml (for the
 * vocabularies) or vocab.yml (one shared one). source.spm and target.spm beside them, when present, cut
 * text into pieces (and join output pieces); without them text is pieces separated by spaces, as
 * Marian reads it with .yml vocabularies. The model's options are the YAML of its `special:model.yml`
 * array. What becomes what:
 *   - ids: nmt's specials sit at vocab.h's ids (pad <- <pad> if the vocabulary has one, unk <- <unk>,
 *     eos <- </s>), the other pieces after them in their order; bos is Marian's decoder start, a zero
 *     embedding (Marian's first decoder input is a zero vector). Ids a side lacks (bos, a missing pad)
 *     get an output bias of -1e30, so they are never produced and take nothing from the softmax;
 *   - Marian's matrices ([in, out], y = x W + b) are transposed to nmt's [out, in]; the embeddings
 *     scaled by sqrt(D) as nmt does (trained position tables, Wpos, and no positions: unscaled, as
 *     Marian); its sinusoids (sin of the D/2 frequencies 10000^(-i/(D/2-1)), then cos, positions from
 *     0) become a learned table; LayerNorm epsilon 1e-6; ReLU, swish or gelu (Marian's: x sigmoid(1.702x))
 *     feed-forward layers; a layernorm of the embeddings + positions (transformer-postprocess-emb "n",
 *     arrays encoder_emb_ln_{scale,bias}_pre and decoder_...);
 *   - post-norm (transformer-preprocess "", postprocess "dan") and pre-norm (preprocess "n",
 *     postprocess "da", postprocess-top "n") Transformers; dropout ("d") does nothing at inference;
 *   - the embeddings as saved (Wemb for all, or encoder_Wemb and decoder_Wemb; no output matrix
 *     decoder_ff_logit_out_W: tied to the target one) become nmt's tie all, decoder or none.
 * Refused with the model.yml key or the array named: other types, transformer-decoder-autoreg other than
 * self-attention (rnn: SSRU, average-attention), other pre/postprocess combinations, feed-forward
 * depths other than 2, activations other than relu, swish and gelu, right-left,
 * tied layers, no output projection, ensembles, and every array nmt would not use. Guided alignment
 * options are ignored (nmt aligns by its own rule).
 */
#ifndef NMT_MARIAN_H
#define NMT_MARIAN_H

#include "model/model.h"
#include "text/spm.h"

/* 1 when path is a Marian model: a folder with decoder.yml, or a file named *.npz. */
int nmt_marian_is_model(const char *path);
/* Reads the Marian model at path into *model (free with nmt_model_free) and its vocabularies into
 * *spm (a token vocabulary, nmt_spm_tokens_sides). Errors name the file and the key or array; on
 * failure nothing is left to free. */
int nmt_marian_open(const char *path, nmt_model *model, nmt_spm **spm);

#endif
