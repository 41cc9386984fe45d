/* placement: where the weights of a translator's model lie while it decodes. A translator that packs
 * its matrices (incremental_weights) reads each where it lies -- in the parameters, in the model file
 * mapped in place, or read from the file into the parameters only while it is packed -- and gives the
 * pages back once its packed copy holds it, so that a model is never wholly in memory twice. The
 * model file's format and checks are model_file's; this module only decides where tensors stay.
 */
#ifndef NMT_PLACEMENT_H
#define NMT_PLACEMENT_H

#include <stddef.h>

#include "model/model.h"

/* nmt_model_load for a reader that packs the matrices itself (an int8 translator): the matrices
 * (rank-2 tensors but embedding and position tables other than the output matrix) are not copied
 * into params; the file stays mapped in the model and nmt_model_matrix reads them there, its pages
 * in memory only while they are read. Where the file is not laid out like the parameters (an int8
 * file, another writer's order) nmt_model_matrix reads the matrices asked for into params, and
 * nmt_model_matrix_done gives their pages back. Every tensor is checked here, so those later reads
 * cannot fail. params hold 0 at deferred tensors: the forward passes must not run on such a model
 * (a deferred load is for translators). */
int nmt_model_load_deferred(nmt_model *m, const char *path);
/* *whole = what nmt_model_load (and nmt_model_quantize_int8, when m was rounded) makes of the file
 * m was loaded from deferred and keeps mapped, so that the forward passes, which refuse m, accept
 * *whole (a translator's model scoring given translations). Refuses a model not loaded deferred,
 * and a file changed since it was loaded (nmt_st_unchanged). */
int nmt_model_load_whole(nmt_model *whole, const nmt_model *m);
/* 1 when params pointer p lies in a deferred tensor (nmt_model_load_deferred). */
int nmt_model_matrix_deferred(const nmt_model *m, const float *p);
/* The count floats at params pointer p: p itself, or for a deferred range the same floats in the
 * file, or p once the range's tensors were read into params (a file laid out otherwise). That read
 * writes params: not while another thread reads the same model's deferred tensors (translators
 * call it while they pack, before they decode). */
const float *nmt_model_matrix(const nmt_model *m, const float *p, size_t count);
/* A reader done with count floats at params pointer p lets a deferred range's pages leave this
 * process's memory: the file's (nmt_st_release), or those of params it was read into (which read 0
 * until nmt_model_matrix reads them again); nothing for others. */
void nmt_model_matrix_done(const nmt_model *m, const float *p, size_t count);

/* Gives the memory pages that lie wholly inside params[first - params, + count) back to the system
 * (madvise MADV_DONTNEED; nothing where that does not exist) and returns their bytes: an int8
 * translator's float32 copies of the matrices it has quantized. Those floats then read as 0, so
 * from the first call on the forward passes (model.h) refuse the model; only the translator that
 * asked (which no longer reads them) may use it. A range outside params releases nothing. */
size_t nmt_model_release(nmt_model *m, const float *first, size_t count);

#endif
