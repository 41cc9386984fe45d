/* sse: a /translate answer streamed as Server-Sent Events (text/event-stream), as its sentences are
 * decoded.
 *
 * The stream reads a job queued with nmt_serve_controls.stream: for each segment in order, one event
 * per piece of text as the search decides it (the engine's stream callback's texts, empty ones left
 * out), `data: {"index":I,"text":"..."}` where I is the text's place in q (0 for a single
 * string) and the first piece of a segment carries the line break or space that joins it to the one
 * before, so that a text's pieces joined are its translatedText. Then `event: done` with `data:` the
 * JSON answer /translate gives without streaming. A failure (a line the engine refuses, the deadline,
 * the server's drain ending) ends the stream with `event: error` and `data: {"error": "..."}`.
 */
#ifndef NMT_SERVE_SSE_H
#define NMT_SERVE_SSE_H

#include "serve/batcher.h"
#include "serve/request.h"
#include "serve/segment.h"

#include <microhttpd.h>
#include <stdatomic.h>

typedef struct nmt_serve_sse_source {
    nmt_serve_job *job;           /* queued with a stream (released by the stream) */
    nmt_serve_segments segments;  /* its lines, cut from request.q (text, not HTML) */
    nmt_serve_request request;    /* the request, for the final answer */
    char language[16];            /* the language detected for source "auto", or "" */
    double confidence;
    double deadline;              /* nmt_now() seconds when it gives up (0: never) */
    const atomic_int *abandon;    /* set: the server's drain is over, the stream ends */
} nmt_serve_sse_source;

/* A response streaming the source's events; it takes everything in *source (zeroed), also when it
 * fails (NULL: out of memory). */
struct MHD_Response *nmt_serve_sse_response(nmt_serve_sse_source *source);
/* Releases what a source holds (when no response took it). */
void nmt_serve_sse_source_free(nmt_serve_sse_source *source);

#endif
