/* batcher: the server's one decoding queue -- lines from all concurrent requests decoded together.
 *
 * Each request submits its lines as a job. One thread takes lines from the queue into batches: a
 * batch starts when max_batch lines wait, or when wait_ms have passed since the oldest waiting line
 * arrived or the last batch ended, whichever is later (so that lines which waited for the engine
 * are joined by those their answers bring). Lines are taken round-robin over the waiting jobs (one line of each job in turn, oldest job
 * first), so a long document shares every batch with the short requests that arrive behind it
 * instead of blocking them. A job with a glossary or a stream is kept out of the others' batches (both
 * apply to a whole engine call): its lines make batches of their own, every other batch while jobs
 * without one wait. A batch is one nmt_engine_translate call; since a line's translation does
 * not depend on its batch, every line gets what `nmt translate` gives it alone. When a batch fails
 * (a line the engine refuses), its lines are translated one by one, so only the job with the bad line
 * fails.
 *
 * The queue is bounded in lines and in bytes of text (both optional): a job that would take it past
 * either bound is refused, so that a burst of large requests cannot grow memory without end.
 *
 * Jobs are reference-counted: a request that stops waiting (its deadline passed, its client went
 * away, the server gives up draining) cancels its job -- lines not yet decoded leave the queue at
 * once -- and releases it; a batch still decoding its other lines keeps it alive until done. The
 * batcher is freed after every job has been released.
 */
#ifndef NMT_SERVE_BATCHER_H
#define NMT_SERVE_BATCHER_H

#include "nmt/nmt.h"
#include "base/strbuf.h"
#include "serve/request.h"

typedef struct nmt_serve_batcher nmt_serve_batcher;
typedef struct nmt_serve_job nmt_serve_job;

typedef struct nmt_serve_batcher_options {
    int max_batch;    /* lines per batch (the engine's max_batch) */
    double wait_ms;   /* longest wait for a fuller batch after the oldest line arrived or the last
                       * batch ended (5) */
    long max_queue;   /* lines waiting at most; a job that would exceed it is refused (0: no limit) */
    size_t max_queue_bytes; /* bytes of text waiting at most, the same way (0: no limit) */
} nmt_serve_batcher_options;

/* The engine must have been opened with alignment when jobs want maps or pairs. */
int nmt_serve_batcher_create(nmt_serve_batcher **out, nmt_engine *engine, const nmt_serve_batcher_options *options);
/* Stops the thread and frees; every job must have been released. */
void nmt_serve_batcher_free(nmt_serve_batcher *b);

enum { NMT_SERVE_QUEUE_FULL = -2, NMT_SERVE_JOB_TOO_LARGE = -3 };
/* Queues lines[0..count) (copied), each to get every hypothesis of the engine's n_best; want_map: draw
 * the attention heat map of line 0. Returns 0 with *job set, NMT_SERVE_QUEUE_FULL when the queue has no
 * room now (error set), NMT_SERVE_JOB_TOO_LARGE when the job alone is more than the queue may ever
 * hold, -1 on other errors. */
int nmt_serve_batcher_submit(nmt_serve_batcher *b, int count, const char *const *lines, int want_map,
                             nmt_serve_job **job);
/* A job's controls. A glossary or a stream makes its lines decoded in batches of their own, through
 * nmt_engine_translate_with, taking turns with the shared batches of the other jobs. hypotheses does
 * not: a batch in which every job wants the best translation alone is searched for one hypothesis a
 * line, which ends the search of a sentence as soon as nothing can beat its best (the engine's n_best
 * would search on until that many have finished), and any other batch for the engine's n_best. */
typedef struct nmt_serve_controls {
    const char *const *glossary; /* [2 * glossary_size]: source and target terms (copied), or NULL */
    int glossary_size;
    int stream;                  /* 1: keep each line's text as decided (nmt_serve_job_stream_next) */
    int hypotheses;              /* hypotheses wanted of each line (0 or 1: the best alone) */
} nmt_serve_controls;

/* nmt_serve_batcher_submit with controls (NULL: none, nmt_serve_batcher_submit). */
int nmt_serve_batcher_submit_with(nmt_serve_batcher *b, int count, const char *const *lines, int want_map,
                                  const nmt_serve_controls *controls, nmt_serve_job **job);

/* Waits until every line of the job is translated or `deadline` (nmt_now() seconds; 0 = none) passes.
 * Returns 0 when done, 1 when the deadline passed first (the job goes on: wait again, or cancel it),
 * -1 when a line could not be translated (error set: "line N: ..."). */
int nmt_serve_job_wait(nmt_serve_job *job, double deadline);
/* A streamed job's line `line`: waits until a piece of its text after the first `*have` bytes is
 * decided (the engine's stream callback's text), or the line is complete, or the job failed, or
 * `deadline` (nmt_now() seconds) passes; appends that one piece to out and moves *have past it.
 * Returns 1 when the line is complete and every piece taken, 0 when a piece was taken and more are to
 * come, 2 when the deadline passed with nothing new, -1 when the job failed (error set) or memory ran
 * out. */
int nmt_serve_job_stream_next(nmt_serve_job *job, int line, size_t *have, double deadline, nmt_strbuf *out);
/* Gives the job up: its lines still waiting leave the queue, those in a batch are not copied out.
 * Afterwards the job may only be released. */
void nmt_serve_job_cancel(nmt_serve_job *job);
/* After a wait that returned 0: each line's hypotheses and alignment pairs (NULL without alignment),
 * [count], and the SVG map (NULL unless wanted and drawable). */
const nmt_serve_text *nmt_serve_job_lines(const nmt_serve_job *job);
const char *nmt_serve_job_map(const nmt_serve_job *job);
/* Milliseconds from submission to the first batch with a line of the job, and from there to done. */
double nmt_serve_job_queue_ms(const nmt_serve_job *job);
double nmt_serve_job_decode_ms(const nmt_serve_job *job);
void nmt_serve_job_release(nmt_serve_job *job);

typedef struct nmt_serve_batcher_stats {
    long queued;     /* lines waiting now */
    size_t queued_bytes; /* bytes of their text */
    long batches;    /* batches decoded */
    long lines;      /* lines decoded */
    long largest;    /* lines of the largest batch */
} nmt_serve_batcher_stats;

void nmt_serve_batcher_stats_get(nmt_serve_batcher *b, nmt_serve_batcher_stats *out);

#endif
