/* ct2: a CTranslate2 model directory read into nmt's model and a token vocabulary.
 *
 * The directory holds model.bin (CTranslate2's variables: binary layout versions 1 to 6, the
 * Transformer encoder-decoder spec of every revision up to 7), config.json when the converter wrote one,
 * and its vocabularies: shared_vocabulary or source_vocabulary + target_vocabulary, as .txt (one token a
 * line) or .json (an array of strings); a vocabulary without the unknown token gets it last, as
 * CTranslate2 does. The model becomes an nmt_model (nothing of CTranslate2 runs):
 *   - ids are renumbered so that the specials sit at vocab.h's ids (pad <- <blank> or <pad>, unk,
 *     bos <- the decoder start token, eos), the other tokens after them in their order; embedding and
 *     projection rows move with them, so the model computes exactly what it computed before. One id
 *     range serves both sides (the larger vocabulary's): rows a side does not have are zero, and the
 *     output layer gives them a bias of -1e30 (model.output_bias), so they are never produced and
 *     take nothing from the softmax;
 *   - positions: sinusoidal ones as CTranslate2 lays them out (sin of every frequency, then cos,
 *     positions counted from 1), or the learned table, become a learned table (model.positions
 *     learned) of the model's max_positions rows;
 *   - int8 and int16 weights are dequantized to float32 as CTranslate2 does (q / scale, scale per row
 *     or one per matrix, 1000 for int16 without one); float16 and bfloat16 become float32. An int8
 *     translator (nmt_model_quantize_int8_weights) quantizes them back per row: an int8 model's
 *     own values.
 *   - the feed-forward activation (ReLU, GELU, its tanh and sigmoid forms, Swish) and the embeddings'
 *     layernorm_embedding (both sides or neither) become model.activation and model.embedding_norm.
 * What nmt does not implement is refused with the variable or config field named: Tanh and Sigmoid
 * activations, gated FFNs, RMSNorm, relative positions, rotary or ALiBi, multi-query attention,
 * source features, a source bos, and any variable the reader does not know. The
 * decoder's alignment_layer and alignment_heads are read and ignored (nmt aligns by its own rule).
 */
#ifndef NMT_CT2_H
#define NMT_CT2_H

#include "model/model.h"
#include "text/spm.h"

/* 1 when dir holds a CTranslate2 model (a file model.bin). */
int nmt_ct2_is_model_dir(const char *dir);
/* Reads the CTranslate2 model in dir into *model (nmt_model_init'ed, free with nmt_model_free) and
 * its vocabularies into *spm (a token vocabulary, nmt_spm_tokens; with spm_path, a SentencePiece
 * model that cuts text into the vocabulary's pieces, NULL: space-separated tokens). Errors name the
 * file and the variable or field; on failure nothing is left to free. */
int nmt_ct2_open(const char *dir, const char *spm_path, nmt_model *model, nmt_spm **spm);

#endif
