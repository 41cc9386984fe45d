/* train_log: train.log.jsonl, appended line by line and cut back on resume (see train_log.h). */
#include "train/train_log.h"

#include "base/io.h"
#include "base/json.h"
#include "base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The step a log line is about, or -1 for a line that is not a complete log object. */
static long line_step(const char *line, size_t len) {
    const char *at = strstr(line, "\"step\":");
    if (len < 2 || line[0] != '{' || line[len - 1] != '}' || !at) return -1;
    return strtol(at + 7, NULL, 10);
}

int nmt_train_log_open(nmt_train_log *log, const char *path, long keep_through) {
    *log = (nmt_train_log){.path = path};
    char *kept = NULL;
    size_t kept_len = 0;
    if (keep_through >= 0 && nmt_file_exists(path)) {
        char *data;
        size_t size;
        if (nmt_read_regular_file(path, NMT_READ_MAX, "a training log", &data, &size) < 0) return -1;
        kept = data; /* filtered in place: kept lines only move towards the start */
        for (char *line = data; line < data + size;) {
            char *end = memchr(line, '\n', (size_t)(data + size - line));
            size_t len = end ? (size_t)(end - line) : (size_t)(data + size - line);
            long step = end ? line_step(line, len) : -1;
            if (step >= 0 && step <= keep_through) {
                memmove(kept + kept_len, line, len + 1);
                kept_len += len + 1;
            }
            line += len + 1;
        }
    }
    int rc = nmt_atomic_write(path, kept ? kept : "", kept_len);
    free(kept);
    if (rc < 0) return -1;
    log->file = fopen(path, "ab");
    if (!log->file) return nmt_error_set("%s: cannot open for appending: %s", path, strerror(errno));
    return 0;
}

int nmt_train_log_write(nmt_train_log *log, const char *line) {
    if (!log->file) return 0;
    if (nmt_io_write(log->file, line, strlen(line), log->path) < 0) return -1;
    if (fflush(log->file) != 0) return nmt_error_set("%s: write failed: %s", log->path, strerror(errno));
    return 0;
}

void nmt_train_log_time(char *out, size_t size) {
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || !strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm)) snprintf(out, size, "unknown");
}

/* An event line's start, {"event":..,"step":.. (its fields follow, then event_end). */
static int event_begin(nmt_train_log *log, const char *event, const nmt_train_state *state) {
    char head[160];
    snprintf(head, sizeof head, "{\"event\":\"%s\",\"step\":%ld", event, state->step);
    return nmt_io_write(log->file, head, strlen(head), log->path);
}

static int event_end(nmt_train_log *log, const nmt_train_state *state) {
    char time_text[32], tail[96];
    nmt_train_log_time(time_text, sizeof time_text);
    snprintf(tail, sizeof tail, ",\"elapsed_s\":%.1f,\"time\":\"%s\"}\n", state->elapsed_s, time_text);
    return nmt_train_log_write(log, tail);
}

int nmt_train_log_event(nmt_train_log *log, const char *event, const nmt_train_state *state, const char *reason,
                        const char *error) {
    if (!log->file) return 0;
    if (event_begin(log, event, state) < 0) return -1;
    if (reason) fprintf(log->file, ",\"reason\":\"%s\"", reason);
    if (error) {
        fputs(",\"error\":", log->file);
        nmt_json_write_string(log->file, error);
    }
    return event_end(log, state);
}

int nmt_train_log_run(nmt_train_log *log, const char *event, const nmt_train_state *state, int threads, int ranks,
                      const char *precision, const char *why) {
    if (!log->file) return 0;
    if (event_begin(log, event, state) < 0) return -1;
    fprintf(log->file, ",\"threads\":%d,\"ranks\":%d,\"precision\":\"%s\"", threads, ranks, precision);
    if (why && why[0]) {
        fputs(",\"precision_why\":", log->file);
        nmt_json_write_string(log->file, why);
    }
    return event_end(log, state);
}

int nmt_train_log_sync(nmt_train_log *log) { return log->file ? nmt_io_sync(log->file, log->path) : 0; }

void nmt_train_log_close(nmt_train_log *log) {
    if (log->file) fclose(log->file);
    log->file = NULL;
}
