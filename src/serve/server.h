/* server: `nmt serve` -- HTTP translation endpoints over libmicrohttpd, in front of one or more
 * models, each with its own batcher (one a language pair; routes.h: a pair without a model is
 * translated through English where both steps are served).
 *
 * Endpoints (request.h has the request bodies):
 *   POST /translate             LibreTranslate: {"translatedText": ...} (+ "alternatives",
 *                               "detectedLanguage": {"confidence", "language"} for source "auto",
 *                               the language found among those the models translate from)
 *   POST /detect                LibreTranslate: [{"confidence", "language"}], best first (langid.h)
 *   GET  /languages             LibreTranslate: [{"code", "name", "targets"}] of every model (routes.h)
 *   GET  /frontend/settings     LibreTranslate: its web frontend's settings (limits, keys, the first
 *                               model's pair)
 *   POST /translate_file        LibreTranslate: a file (multipart) translated (document.h), answered
 *                               {"translatedFileUrl": ".../download_file/NAME"}
 *   GET  /download_file/NAME    the translated file (files.h keeps the last 64, 64 MiB at most)
 *   POST /suggest               LibreTranslate with suggestions off (as the settings say): 403
 *                               {"error": "Suggestions are disabled on this server."}
 *   POST /translator/translate  OpenNMT-py: [[{"src", "tgt", "n_best", "pred_score", "align"}]]; the
 *                               model of the items' "id" (0, 1, ... in the order of the models;
 *                               none: the first)
 *   POST /v1/translate          native: per text the translation, the n-best with scores, alignment
 *                               pairs, and the heat map SVG of the first line on request; the model
 *                               of "source" and "target" (none: the first)
 *   GET  /health                {"status": "ok"}
 *   GET  /metrics               Prometheus text: requests, lines, characters, latency histogram,
 *                               queue depth, batches (the models' queues together)
 *   GET  /                      a self-contained HTML page (text box, button, translation, heat map)
 * API keys (when configured): the body's api_key, or else the X-API-Key header, or else the token of
 * "Authorization: Bearer", for every translating endpoint.
 * Errors are {"error": "..."}, in LibreTranslate's words on its endpoints: 400 (bad body, field
 * named; a LibreTranslate text over char_limit characters; a Content-Length given twice or with a
 * Transfer-Encoding, and then the connection is closed), 403 (API key missing or unknown, when keys
 * are configured), 404/405, 413 (body over max_body bytes, told by its Content-Length before it is
 * read; native and OpenNMT texts over char_limit characters in all; more text than the queue may ever
 * hold), 503 with Retry-After (the queue is full, or shutting down), 504 (timeout passed).
 * docs/serving-limits.md has every limit.
 *
 * A text is cut into its lines and sentences (segment.h); each goes through the batcher alone and the
 * translations are joined again. One thread per connection waits for its job, so a slow request never holds
 * up another; a request whose client has closed its connection is given up (its lines leave the
 * queue). Headers and bodies have bounded times (watchdog.h), connections are bounded in all and per
 * client address. Stopping (nmt_serve_run's *stop turning nonzero) closes the listening socket, lets
 * the requests in flight finish for at most drain_s seconds, then closes what is left and returns 0. Every request writes one JSON line to `log` (time,
 * method, path, status, lines, characters, queue and decode milliseconds) unless log is NULL.
 */
#ifndef NMT_SERVE_SERVER_H
#define NMT_SERVE_SERVER_H

#include "nmt/nmt.h"
#include "serve/routes.h"

#include <signal.h>
#include <stdio.h>

typedef struct nmt_serve_options {
    const char *host;          /* address to bind ("127.0.0.1"; IPv6 literals too) */
    int port;                  /* 0: a free port (see nmt_serve_port) */
    int max_batch;             /* lines per batch (the engine's max_batch) */
    double batch_wait_ms;      /* (5) */
    long char_limit;           /* characters per LibreTranslate text, or per request elsewhere (0: none) */
    long max_queue;            /* lines waiting at most (0: no limit) */
    size_t max_queue_bytes;    /* bytes of text waiting at most (64 MiB; 0: no limit) */
    double timeout_s;          /* a request's longest wait for its translation (0: none) */
    size_t max_body;           /* bytes per request body */
    double header_timeout_s;   /* longest time a request's headers may take to arrive (10) */
    double body_timeout_s;     /* longest time its body may take, from its headers (60) */
    double drain_s;            /* after a stop, longest wait for the requests in flight (30) */
    int max_connections;       /* open connections at most (1024) */
    int max_connections_per_client; /* from one client address at most, fewer than max_connections (64) */
    const char *api_keys_path; /* one key a line ('#' comments); NULL: no keys needed */
    int sentences;             /* 1: cut lines into sentences too (segment.h) */
    FILE *log;                 /* access log (NULL: none) */
} nmt_serve_options;

nmt_serve_options nmt_serve_options_default(void);

typedef struct nmt_serve nmt_serve;

/* A model to serve. */
typedef struct nmt_serve_model {
    nmt_engine *engine; /* opened with alignment on and n_best = the most hypotheses a request may ask for,
                           LibreTranslate's alternatives + 1, every model's the same; it must outlive the server */
    const char *source, *target; /* its language codes (text/langcode.h); NULL: unknown, refused */
    const char *name;   /* what errors call it (its directory) */
} nmt_serve_model;

/* Binds and starts serving models[0..count) (1 to NMT_SERVE_MAX_MODELS, one a language pair). */
int nmt_serve_start(nmt_serve **out, const nmt_serve_model *models, int count, const nmt_serve_options *options);
/* The bound port. */
int nmt_serve_port(const nmt_serve *s);
/* Serves until *stop becomes nonzero, then drains: no new connection, requests in flight finish.
 * Returns 0. */
int nmt_serve_run(nmt_serve *s, volatile sig_atomic_t *stop);
/* Stops at once (after nmt_serve_run, nothing is left to stop) and frees. */
void nmt_serve_free(nmt_serve *s);

#endif
