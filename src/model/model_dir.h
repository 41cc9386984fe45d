/* model_dir: opening a model directory written by `nmt train`, or one of the formats nmt imports.
 *
 * A model directory holds model.safetensors (the parameters and their config, model_file.h) and
 * spm.model (the SentencePiece vocabulary, spm.h); the two must agree on the vocabulary size. A
 * directory with a model.bin is CTranslate2's instead (ct2.h): its model and token vocabulary; an
 * Argos Translate package (argos.h: a .argosmodel archive or its folder), the same with SentencePiece;
 * a Marian model (marian.h: a folder with decoder.yml, or a .npz), its model and vocabularies.
 * Lines are encoded for the model by the pipeline (infer/pipeline.h).
 */
#ifndef NMT_MODEL_DIR_H
#define NMT_MODEL_DIR_H

#include <stddef.h>
#include <stdint.h>

#include "base/io.h"
#include "compute/packed.h"
#include "model/model.h"
#include "text/spm.h"

/* Opens DIR/model.safetensors into *model and DIR/spm.model into *spm. Errors name the file; on
 * failure nothing is left to free. */
int nmt_model_dir_open(const char *dir, nmt_model *model, nmt_spm **spm);
/* The same for a translator of this precision that will release the model's float32 matrices
 * as it packs them (nmt_translator_create_releasing): where its products read only the packed copies
 * (nmt_packed_products_self_contained), the matrices are deferred (nmt_model_load_deferred: never all
 * in memory; bf16 reads the output matrix's rows, the embeddings tied to it, from the file),
 * and for int8 the rest is rounded by nmt_model_quantize_int8. The model then serves translators of
 * that precision only. */
int nmt_model_dir_open_for(const char *dir, nmt_precision precision, nmt_model *model, nmt_spm **spm);
/* 1 when `path` is a model of another toolkit that nmt reads (a CTranslate2 directory, an Argos
 * Translate package or its archive, a Marian model), 0 otherwise. */
int nmt_model_dir_foreign(const char *path);

#endif
