/* train_log: train.log.jsonl, the training run's record, one JSON object a line.
 *
 * The trainer appends train lines (loss, learning rate, tokens/s, gradient norm), valid lines and
 * the events of a run: {"event":"start"|"resume","step":..,"threads":..,"ranks":..,"precision":..,
 * ["precision_why":..,]"elapsed_s":..,"time":..} and {"event":"stop","step":..,["reason":..,]
 * ["error":..,]"elapsed_s":..,"time":..}. A resumed run first drops the lines after its checkpoint (they will be
 * written again, bit for bit) and any line a kill cut short, so the log of an interrupted and resumed
 * run equals that of a run never interrupted, but for its start/resume events and times. `nmt plot`
 * reads it (viz/curves.h).
 */
#ifndef NMT_TRAIN_LOG_H
#define NMT_TRAIN_LOG_H

#include "train/checkpoint.h"

#include <stddef.h>
#include <stdio.h>

typedef struct nmt_train_log {
    FILE *file;       /* open for appending, or NULL (not opened: a rank other than 0) */
    const char *path; /* borrowed */
} nmt_train_log;

/* Opens path for appending, keeping only the complete lines of steps <= keep_through (a resume), or
 * starting it empty (keep_through < 0). */
int nmt_train_log_open(nmt_train_log *log, const char *path, long keep_through);
/* Appends a whole line (with its newline) and flushes; nothing when the log is not open. */
int nmt_train_log_write(nmt_train_log *log, const char *line);
/* An event line at state's step and elapsed time; reason and error may be NULL. */
int nmt_train_log_event(nmt_train_log *log, const char *event, const nmt_train_state *state, const char *reason,
                        const char *error);
/* A start or resume line: what this run of the trainer computes with (its threads, MPI ranks, the
 * precision of its products and what chose it, "" when the config set fp32). */
int nmt_train_log_run(nmt_train_log *log, const char *event, const nmt_train_state *state, int threads, int ranks,
                      const char *precision, const char *why);
/* fsync, before a checkpoint names the step the log has reached. */
int nmt_train_log_sync(nmt_train_log *log);
void nmt_train_log_close(nmt_train_log *log);
/* "2026-12-01T08:30:00Z": the wall-clock time of a log line, UTC. */
void nmt_train_log_time(char *out, size_t size);

#endif
