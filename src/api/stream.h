/* stream: a call's translations passed on to nmt.h's nmt_stream_callback as the search decides them.
 *
 * The search (infer/search.h, options.stream) hands on each sentence's decided pieces; a stream keeps
 * each line's pieces so far, decodes them with the target tokenizer and passes on the text beyond
 * what it passed before, holding back the trailing whitespace and replacement characters (an
 * incomplete character of byte pieces) that a later piece may still change, so that the texts of a
 * line join to the decoding of its best hypothesis. The search calls it from several decoding threads
 * at once (different sentences); the user's callback is called under the stream's lock, one at a
 * time. Decoding the whole line again at each step costs a string a step, for streamed calls only.
 */
#ifndef NMT_API_STREAM_H
#define NMT_API_STREAM_H

#include "nmt/nmt.h"

#include "infer/pipeline.h"

#include <stdint.h>

typedef struct nmt_stream nmt_stream;

/* A stream for `count` lines keyed first_key, first_key + 1, ... (the translator's sampling keys),
 * decoded with `target` (which must outlive it). */
int nmt_stream_create(nmt_stream **out, const nmt_tokenizer *target, uint64_t first_key, int count,
                      nmt_stream_callback callback, void *user);
void nmt_stream_free(nmt_stream *stream);
/* The search's nmt_decode_stream; ctx is an nmt_stream. */
void nmt_stream_pieces(void *ctx, uint64_t key, const int32_t *pieces, int count, int final);
/* After the run: ends every line the search did not end (empty lines) with the rest of
 * texts(i, ctx); returns -1 with the error of a failure during the run (memory, decoding), else 0. */
int nmt_stream_finish(nmt_stream *stream, const char *(*texts)(const void *ctx, int line), const void *ctx);

#endif
