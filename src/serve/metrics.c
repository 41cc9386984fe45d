/* metrics: counters and a latency histogram for GET /metrics (Prometheus text format 0.0.4). */
#include "serve/metrics.h"

#include "base/json.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const endpoints[NMT_METRICS_ENDPOINTS] = {
    "/translate", "/languages", "/translator/translate", "/v1/translate", "/health", "/metrics", "/frontend/settings",
    "/translate_file", "/", "/detect", "other"};
static const int codes[NMT_METRICS_CODES] = {200, 400, 403, 404, 405, 413, 499, 500, 503, 504, 0};
static const double bounds[NMT_METRICS_BUCKETS - 1] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

int nmt_serve_metrics_init(nmt_serve_metrics *m) {
    memset(m, 0, sizeof *m);
    return pthread_mutex_init(&m->lock, NULL) == 0 ? 0 : nmt_error_set("cannot create a mutex");
}

void nmt_serve_metrics_destroy(nmt_serve_metrics *m) { pthread_mutex_destroy(&m->lock); }

void nmt_serve_metrics_request(nmt_serve_metrics *m, const char *path, int status, int translation, long lines,
                               long characters, double seconds) {
    int e = NMT_METRICS_ENDPOINTS - 1, c = NMT_METRICS_CODES - 1;
    for (int i = 0; i < NMT_METRICS_ENDPOINTS - 1; i++)
        if (strcmp(path, endpoints[i]) == 0) e = i;
    for (int i = 0; i < NMT_METRICS_CODES - 1; i++)
        if (status == codes[i]) c = i;
    int b = 0;
    while (b < NMT_METRICS_BUCKETS - 1 && seconds > bounds[b]) b++;
    pthread_mutex_lock(&m->lock);
    m->requests[e][c]++;
    if (translation) {
        m->lines += lines;
        m->characters += characters;
        m->buckets[b]++;
        m->duration_sum += seconds;
        m->duration_count++;
    }
    pthread_mutex_unlock(&m->lock);
}

void nmt_serve_metrics_in_flight(nmt_serve_metrics *m, int delta) {
    pthread_mutex_lock(&m->lock);
    m->in_flight += delta;
    pthread_mutex_unlock(&m->lock);
}

long nmt_serve_metrics_get_in_flight(nmt_serve_metrics *m) {
    pthread_mutex_lock(&m->lock);
    const long n = m->in_flight;
    pthread_mutex_unlock(&m->lock);
    return n;
}

void nmt_serve_metrics_write(nmt_serve_metrics *m, FILE *out, long queued, size_t queued_bytes, long batches,
                             long batch_lines, long connections_cut) {
    pthread_mutex_lock(&m->lock);
    fputs("# HELP nmt_requests_total HTTP requests answered, by endpoint and status code.\n"
          "# TYPE nmt_requests_total counter\n", out);
    for (int e = 0; e < NMT_METRICS_ENDPOINTS; e++)
        for (int c = 0; c < NMT_METRICS_CODES; c++)
            if (m->requests[e][c]) {
                if (codes[c]) fprintf(out, "nmt_requests_total{endpoint=\"%s\",code=\"%d\"} %ld\n", endpoints[e], codes[c], m->requests[e][c]);
                else fprintf(out, "nmt_requests_total{endpoint=\"%s\",code=\"other\"} %ld\n", endpoints[e], m->requests[e][c]);
            }
    fprintf(out, "# HELP nmt_lines_total Lines translated.\n# TYPE nmt_lines_total counter\nnmt_lines_total %ld\n",
            m->lines);
    fprintf(out, "# HELP nmt_characters_total Characters translated.\n# TYPE nmt_characters_total counter\n"
                 "nmt_characters_total %ld\n", m->characters);
    fputs("# HELP nmt_request_duration_seconds Time to answer a translation request.\n"
          "# TYPE nmt_request_duration_seconds histogram\n", out);
    long cumulative = 0;
    for (int b = 0; b < NMT_METRICS_BUCKETS; b++) {
        cumulative += m->buckets[b];
        if (b < NMT_METRICS_BUCKETS - 1) fprintf(out, "nmt_request_duration_seconds_bucket{le=\"%g\"} %ld\n", bounds[b], cumulative);
        else fprintf(out, "nmt_request_duration_seconds_bucket{le=\"+Inf\"} %ld\n", cumulative);
    }
    fprintf(out, "nmt_request_duration_seconds_sum %.6f\nnmt_request_duration_seconds_count %ld\n", m->duration_sum,
            m->duration_count);
    fprintf(out, "# HELP nmt_requests_in_flight Requests being answered.\n# TYPE nmt_requests_in_flight gauge\n"
                 "nmt_requests_in_flight %ld\n", m->in_flight);
    pthread_mutex_unlock(&m->lock);
    fprintf(out, "# HELP nmt_queue_depth Lines waiting for a batch.\n# TYPE nmt_queue_depth gauge\nnmt_queue_depth %ld\n",
            queued);
    fprintf(out, "# HELP nmt_queue_bytes Bytes of text waiting for a batch.\n# TYPE nmt_queue_bytes gauge\n"
                 "nmt_queue_bytes %zu\n", queued_bytes);
    fprintf(out, "# HELP nmt_batches_total Batches decoded.\n# TYPE nmt_batches_total counter\nnmt_batches_total %ld\n",
            batches);
    fprintf(out, "# HELP nmt_batch_lines_total Lines decoded in batches.\n# TYPE nmt_batch_lines_total counter\n"
                 "nmt_batch_lines_total %ld\n", batch_lines);
    fprintf(out, "# HELP nmt_connections_cut_total Connections closed for headers or a body that took too long.\n"
                 "# TYPE nmt_connections_cut_total counter\nnmt_connections_cut_total %ld\n", connections_cut);
}

void nmt_serve_metrics_write_models(FILE *out, int n, const char *const *pairs, const long *queued, const long *lines) {
    fputs("# HELP nmt_model_queue_depth Lines waiting for a batch of the model of a language pair.\n"
          "# TYPE nmt_model_queue_depth gauge\n", out);
    for (int m = 0; m < n; m++) fprintf(out, "nmt_model_queue_depth{pair=\"%s\"} %ld\n", pairs[m], queued[m]);
    fputs("# HELP nmt_model_batch_lines_total Lines decoded by the model of a language pair.\n"
          "# TYPE nmt_model_batch_lines_total counter\n", out);
    for (int m = 0; m < n; m++) fprintf(out, "nmt_model_batch_lines_total{pair=\"%s\"} %ld\n", pairs[m], lines[m]);
}

void nmt_serve_metrics_log(FILE *log, pthread_mutex_t *lock, const char *method, const char *url, int status, long lines,
                           long characters, double queue_ms, double decode_ms, double seconds) {
    char stamp[32];
    const time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char *text;
    size_t len;
    FILE *out = open_memstream(&text, &len);
    if (!out) return;
    fprintf(out, "{\"time\":\"%s\",\"method\":", stamp);
    nmt_json_write_string(out, method);
    fputs(",\"path\":", out);
    nmt_json_write_string(out, url);
    fprintf(out, ",\"status\":%d,\"lines\":%ld,\"characters\":%ld,\"queue_ms\":%.3f,\"decode_ms\":%.3f,\"ms\":%.3f}\n",
            status, lines, characters, queue_ms, decode_ms, 1000 * seconds);
    if (fclose(out) != 0) return;
    pthread_mutex_lock(lock);
    fwrite(text, 1, len, log);
    fflush(log);
    pthread_mutex_unlock(lock);
    free(text);
}
