/* model_dir: opening a model directory written by `nmt train`, and encoding input lines for it.
 *
 * A model directory holds model.safetensors (the parameters and their config, model_file.h) and
 * spm.model (the SentencePiece vocabulary, spm.h); the two must agree on the vocabulary size.
 * Translating and scoring read lines of text, check them (UTF-8, and the model's learned positions
 * when it has them) and encode them into pieces here.
 */
#ifndef NMT_MODEL_DIR_H
#define NMT_MODEL_DIR_H

#include <stddef.h>
#include <stdint.h>

#include "base/io.h"
#include "model/model.h"
#include "text/spm.h"

/* Opens DIR/model.safetensors into *model and DIR/spm.model into *spm. Errors name the file; on
 * failure nothing is left to free. */
int nmt_model_dir_open(const char *dir, nmt_model *model, nmt_spm **spm);
/* The same for an int8 translator (nmt_translator_release_model): the matrices deferred
 * (nmt_model_load_deferred), the rest rounded by nmt_model_quantize_int8. The model then serves
 * int8 translators only. */
int nmt_model_dir_open_int8(const char *dir, nmt_model *model, nmt_spm **spm);

/* Encodes the current line of `lines` into *ids (grown as needed; *cap its capacity) and sets
 * *count. Returns 0; NMT_MODEL_DIR_INVALID_UTF8 when the line is not UTF-8; -1 on other errors (too
 * many pieces for a model with learned positions: *count and *ids are then the pieces; out of
 * memory). Errors read "NAME:LINE: ...". */
enum { NMT_MODEL_DIR_INVALID_UTF8 = -2 };
int nmt_model_dir_encode_line(const nmt_model *model, const nmt_spm *spm, const nmt_lines *lines, int32_t **ids,
                              size_t *cap, size_t *count);

#endif
