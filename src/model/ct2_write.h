/* ct2_write: an nmt model written out as a CTranslate2 model directory.
 *
 * The directory is what CTranslate2's converters write for a TransformerSpec (binary version 6, spec
 * revision 7; python/ctranslate2/specs): model.bin, config.json and the vocabularies. model.bin
 * holds the layers as ct2_file.h lays them out (the description the reader walks too), the
 * embeddings (encoder/embeddings_0, decoder/embeddings), the position tables (nmt's sinusoids or
 * learned rows as position_encodings/encodings: CTranslate2's own sinusoids differ in layout), the
 * output projection (and its bias with model.output_bias), the final norms of a pre-norm model, and
 * each scope's attributes (num_heads, pre_norm, ReLU, scale_embeddings: nmt scales by sqrt(D)).
 * Variables are sorted by name; one equal to an earlier one (tied embeddings, equal position tables)
 * is written as an alias of it, as the converters do. Quantization is the converters' too: int8
 * weights per row (scale 127 / max|row|, values rounded to nearest even), int16 weights per matrix
 * (scale 2^10 / max|W|), float16 and bfloat16 for every float (round to nearest even), float32 as
 * nmt holds them. config.json: bos, eos and unk tokens (the vocabulary's ids 2, 3, 1), the decoder
 * starting from bos, no source bos, a source eos as model.source_eos says, layer_norm_epsilon.
 * Vocabularies: shared_vocabulary.json when every id has one piece on both sides, else
 * source_vocabulary.json and target_vocabulary.json (an id a side lacks is written "<blank>" for pad,
 * the special token for unk, bos and eos, else "<nmt_unused_ID>", so that ids keep their places).
 * What CTranslate2's Transformer cannot express is refused naming the config field (rotary positions).
 */
#ifndef NMT_CT2_WRITE_H
#define NMT_CT2_WRITE_H

#include "model/model.h"
#include "text/spm.h"

typedef enum {
    NMT_CT2_QUANT_FLOAT32,
    NMT_CT2_QUANT_INT8,
    NMT_CT2_QUANT_INT16,
    NMT_CT2_QUANT_FLOAT16,
    NMT_CT2_QUANT_BFLOAT16,
} nmt_ct2_quantization;

/* "float32", "int8", "int16", "float16", "bfloat16" (indexed by nmt_ct2_quantization), NULL-terminated. */
extern const char *const nmt_ct2_quantization_names[];

/* Writes model.bin, config.json and the vocabularies of model and spm into dir (an existing directory;
 * each file written whole). Errors name the file. */
int nmt_ct2_write(const char *dir, const nmt_model *model, const nmt_spm *spm, nmt_ct2_quantization quantization);

#endif
