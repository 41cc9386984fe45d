/* metrics: the server's counters and latency histogram, written in Prometheus's text format.
 *
 *   nmt_requests_total{endpoint, code}   requests answered
 *   nmt_lines_total, nmt_characters_total  lines and characters translated
 *   nmt_request_duration_seconds          histogram of translation requests' time to answer
 *   nmt_queue_depth, nmt_queue_bytes, nmt_batches_total, nmt_batch_lines_total, nmt_requests_in_flight,
 *   nmt_connections_cut_total (headers or a body too slow)
 * Thread-safe: every update and the snapshot take one mutex.
 */
#ifndef NMT_SERVE_METRICS_H
#define NMT_SERVE_METRICS_H

#include <pthread.h>
#include <stdio.h>

enum { NMT_METRICS_ENDPOINTS = 11, NMT_METRICS_CODES = 11, NMT_METRICS_BUCKETS = 12 };

typedef struct nmt_serve_metrics {
    pthread_mutex_t lock;
    long requests[NMT_METRICS_ENDPOINTS][NMT_METRICS_CODES];
    long lines, characters;
    long buckets[NMT_METRICS_BUCKETS]; /* translation requests by duration (not cumulative) */
    double duration_sum;
    long duration_count;
    long in_flight;
} nmt_serve_metrics;

int nmt_serve_metrics_init(nmt_serve_metrics *m);
void nmt_serve_metrics_destroy(nmt_serve_metrics *m);
/* Records an answered request: its path, status, and for translations lines, characters, seconds. */
void nmt_serve_metrics_request(nmt_serve_metrics *m, const char *path, int status, int translation, long lines,
                               long characters, double seconds);
void nmt_serve_metrics_in_flight(nmt_serve_metrics *m, int delta);
long nmt_serve_metrics_get_in_flight(nmt_serve_metrics *m);
/* The exposition text, with the batcher's and the watchdog's numbers. */
void nmt_serve_metrics_write(nmt_serve_metrics *m, FILE *out, long queued, size_t queued_bytes, long batches,
                             long batch_lines, long connections_cut);
/* Each model's queue and lines decoded, labelled with its pair ("en-de"): pairs[0..n), queued[n], lines[n]. */
void nmt_serve_metrics_write_models(FILE *out, int n, const char *const *pairs, const long *queued, const long *lines);
/* Writes a request's JSON access-log line to `log` under `lock` (time, method, path, status, lines,
 * characters, queue_ms, decode_ms, ms). */
void nmt_serve_metrics_log(FILE *log, pthread_mutex_t *lock, const char *method, const char *url, int status, long lines,
                           long characters, double queue_ms, double decode_ms, double seconds);

#endif
