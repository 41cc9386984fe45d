/* model_dir: opening a model directory written by `nmt train`, and encoding input lines for it.
 *
 * A model directory holds model.safetensors (the parameters and their config, model_file.h) and
 * spm.model (the SentencePiece vocabulary, spm.h); the two must agree on the vocabulary size. A
 * directory with a model.bin is CTranslate2's instead (ct2.h): its model and token vocabulary; an
 * Argos Translate package (argos.h: a .argosmodel archive or its folder), the same with SentencePiece.
 * Translating and scoring read lines of text, check them (UTF-8, and the model's learned positions
 * when it has them) and encode them into pieces here.
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
 * (nmt_translator_release_model): where its packed matrices hold them whole
 * (nmt_packed_self_contained), they are deferred (nmt_model_load_deferred: never all in memory),
 * and for int8 the rest is rounded by nmt_model_quantize_int8. The model then serves translators of
 * that precision only. */
int nmt_model_dir_open_for(const char *dir, nmt_precision precision, nmt_model *model, nmt_spm **spm);

/* Encodes the current line of `lines` into *ids (grown as needed; *cap its capacity) and sets
 * *count. Returns 0; NMT_MODEL_DIR_INVALID_UTF8 when the line is not UTF-8; -1 on other errors (too
 * many pieces for a model with learned positions: *count and *ids are then the pieces; out of
 * memory). Errors read "NAME:LINE: ...". */
enum { NMT_MODEL_DIR_INVALID_UTF8 = -2 };
int nmt_model_dir_encode_line(const nmt_model *model, const nmt_spm *spm, const nmt_lines *lines, int32_t **ids,
                              size_t *cap, size_t *count);
/* The same for a line of the target side (scoring given translations): the target vocabulary's ids
 * where the model has two (nmt_spm_encode_target). */
int nmt_model_dir_encode_target_line(const nmt_model *model, const nmt_spm *spm, const nmt_lines *lines, int32_t **ids,
                                     size_t *cap, size_t *count);

#endif
