/* server: the HTTP side of `nmt serve` on libmicrohttpd (one thread per connection), the routing
 * of server.h's endpoints, API keys, limits, the access log and draining on stop. */
#include "serve/server.h"

#include "base/io.h"
#include "base/json.h"
#include "base/util.h"
#include "serve/batcher.h"
#include "serve/document.h"
#include "serve/files.h"
#include "serve/keys.h"
#include "serve/metrics.h"
#include "serve/page.h"
#include "serve/request.h"
#include "serve/routes.h"
#include "serve/segment.h"
#include "serve/sse.h"
#include "serve/watchdog.h"
#include "text/langcode.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdatomic.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

struct nmt_serve {
    nmt_serve_options options;
    nmt_engine *engines[NMT_SERVE_MAX_MODELS];
    nmt_serve_batcher *batchers[NMT_SERVE_MAX_MODELS]; /* one queue a model */
    nmt_serve_pair pairs[NMT_SERVE_MAX_MODELS];        /* the pair of each model */
    int model_count;
    struct MHD_Daemon *daemon;
    int port;
    nmt_serve_keys keys;         /* none: no key needed */
    nmt_serve_watchdog *watchdog;
    nmt_serve_files *files;      /* translated files for download */
    nmt_serve_metrics metrics;
    pthread_mutex_t log_lock;
    atomic_int stopping;         /* requests that arrive from now on are refused (503) */
    atomic_int abandon;          /* the drain is over: requests still waiting give up (503) */
};

/* One request's state across libmicrohttpd's calls of the handler. */
typedef struct connection {
    char *body;
    size_t len, cap;
    int too_large;
    int refused;  /* arrived while stopping */
    int answered; /* refused from its headers alone: the body is not read */
    double start;
    nmt_serve_watch *watch; /* the connection's phases (NULL: not watched) */
} connection;

nmt_serve_options nmt_serve_options_default(void) {
    return (nmt_serve_options){.host = "127.0.0.1", .port = 5000, .max_batch = 64, .batch_wait_ms = 5,
                               .char_limit = 0, .max_queue = 0, .max_queue_bytes = 64 << 20, .timeout_s = 0,
                               .max_body = 1 << 20, .header_timeout_s = 10, .body_timeout_s = 60, .drain_s = 30,
                               .max_connections = 1024, .max_connections_per_client = 64, .sentences = 1};
}

/* ---- answers ---- */

typedef struct answer {
    int status;
    char *body;            /* owned, NUL-terminated */
    size_t len;
    const char *type;      /* Content-Type */
    int retry_after;       /* seconds, 0 = no header */
    long lines, characters;
    double queue_ms, decode_ms;
    int translation;       /* a translation endpoint (for the metrics' histogram) */
    int close;             /* close the connection after the answer */
    int abandoned;         /* the client went away: no answer, the connection is closed */
    char attachment[128];  /* a file to download: its name ("" = not a download) */
    int streamed;          /* the answer is the events of `events` (serve/sse.h), not body */
    nmt_serve_sse_source events;
} answer;

static void set_body(answer *a, int status, const char *type, char *body, size_t len) {
    free(a->body);
    a->status = status;
    a->type = type;
    a->body = body;
    a->len = len;
}

/* The answer {"error": message} with `status`. */
static void set_error(answer *a, int status, const char *message) {
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (out) {
        nmt_serve_error_write(out, message);
        if (fclose(out) != 0) {
            free(text);
            text = NULL;
        }
    }
    if (!text) { /* out of memory: a static answer is all there is */
        a->status = 500;
        return;
    }
    set_body(a, status, "application/json", text, len);
}

/* The answer to what nmt_error() says is wrong with a request: 400, or 500 when memory ran out. */
static void refuse(answer *a) { set_error(a, strstr(nmt_error(), "out of memory") ? 500 : 400, nmt_error()); }

/* Starts a JSON answer in a memory stream; end_json() sets it (500 when memory ran out). */
static FILE *begin_json(char **text, size_t *len) {
    *text = NULL;
    *len = 0;
    return open_memstream(text, len);
}

/* Closes the stream (which sets *text and *len) and makes it the answer. */
static void end_json(answer *a, FILE *out, char **text, size_t *len) {
    if (!out || fclose(out) != 0) {
        if (out) free(*text);
        set_error(a, 500, "out of memory");
        return;
    }
    set_body(a, 200, "application/json", *text, *len);
}

/* ---- translation ---- */

/* Characters (code points) of a UTF-8 string. */
static long characters(const char *s) {
    long n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static void texts_free(nmt_serve_text *texts, int count) {
    if (!texts) return;
    for (int i = 0; i < count; i++) nmt_serve_text_free(&texts[i]);
    free(texts);
}

/* The headers a translation endpoint reads. */
typedef struct request_headers {
    const char *content_type;
    const char *api_key; /* X-API-Key, or Authorization's Bearer token, or NULL */
    const char *host;
    const char *accept;
} request_headers;

static void read_headers(struct MHD_Connection *conn, request_headers *h) {
    h->content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    h->host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
    h->accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");
    h->api_key = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-API-Key");
    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    if (!h->api_key && auth && strncasecmp(auth, "Bearer ", 7) == 0) h->api_key = auth + 7;
}

/* Checks the fields a translation endpoint cares about, in LibreTranslate's words for its endpoints;
 * 0, or the answer set. The key is the body's api_key, or else the header's. */
static int check_request(nmt_serve *s, const nmt_serve_request *r, const request_headers *h, answer *a) {
    char message[256];
    const char *key = r->api_key ? r->api_key : h->api_key;
    if (s->keys.count && !(key && nmt_serve_keys_known(&s->keys, key))) {
        set_error(a, 403, key ? "Invalid API key" : "Please provide an API key (api_key, or the X-API-Key header)");
        return -1;
    }
    const int n_best = nmt_engine_get_options(s->engines[0])->n_best; /* every engine's, opened alike */
    const int libre = r->api == NMT_SERVE_LIBRE || r->api == NMT_SERVE_DETECT;
    if (r->api == NMT_SERVE_LIBRE || r->api == NMT_SERVE_FILE) {
        if (!r->source || !r->target) {
            snprintf(message, sizeof message, "Invalid request: missing %s parameter", r->source ? "target" : "source");
            set_error(a, 400, message);
            return -1;
        }
        if (r->format && strcmp(r->format, "text") != 0 && strcmp(r->format, "html") != 0) {
            snprintf(message, sizeof message, "%.32s format is not supported", r->format);
            set_error(a, 400, message);
            return -1;
        }
    }
    if (r->api == NMT_SERVE_NATIVE && (r->n_best < 1 || r->n_best > n_best)) {
        snprintf(message, sizeof message, "n_best: expected 1 to %d (the server's --n-best), got %ld", n_best, r->n_best);
        set_error(a, 400, message);
        return -1;
    }
    long chars = 0, longest = 0;
    for (int i = 0; i < r->count; i++) {
        const long n = characters(r->q[i]);
        chars += n;
        if (n > longest) longest = n;
    }
    a->characters = chars;
    if (libre && s->options.char_limit > 0 && longest > s->options.char_limit) {
        snprintf(message, sizeof message, "Invalid request: request (%ld) exceeds text limit (%ld)", longest,
                 s->options.char_limit);
        set_error(a, 400, message);
        return -1;
    }
    if (!libre && r->api != NMT_SERVE_FILE && s->options.char_limit > 0 && chars > s->options.char_limit) {
        snprintf(message, sizeof message, "q: %ld characters, more than the limit of %ld", chars, s->options.char_limit);
        set_error(a, 413, message);
        return -1;
    }
    return 0;
}

/* Waits for the job in steps of a tenth of a second, giving it up (cancelled: its lines leave the queue)
 * when its deadline passes (504), when its client has gone (no answer), or when the drain after a stop
 * is over (503). Returns nmt_serve_job_wait's 0 or -1, or 1 with the answer set. */
static int wait_job(nmt_serve *s, const connection *c, nmt_serve_job *job, answer *a) {
    const double deadline = s->options.timeout_s > 0 ? c->start + s->options.timeout_s : 0;
    for (;;) {
        const double step = nmt_now() + 0.1;
        const int waited = nmt_serve_job_wait(job, deadline > 0 && deadline < step ? deadline : step);
        if (waited != 1) return waited;
        if (deadline > 0 && nmt_now() >= deadline) {
            char message[128];
            snprintf(message, sizeof message, "the translation took more than %g s (--timeout-s)", s->options.timeout_s);
            set_error(a, 504, message);
        } else if (c->watch && nmt_serve_watch_client_gone(c->watch)) {
            set_error(a, 499, "the client closed the connection");
            a->abandoned = 1;
        } else if (atomic_load(&s->abandon)) {
            set_error(a, 503, "the server is shutting down");
            a->close = 1;
        } else {
            continue;
        }
        nmt_serve_job_cancel(job);
        return 1;
    }
}

/* Keeps the translated file for download and answers LibreTranslate's {"translatedFileUrl": ...}, an
 * address on the host the client asked for (its Host header, when it is a plain host[:port]). */
static void store_file(nmt_serve *s, const nmt_serve_request *r, const nmt_serve_document *doc, const nmt_serve_text *texts,
                       const request_headers *h, answer *a) {
    char stored[NMT_SERVE_FILE_NAME_MAX], host[300], *data;
    size_t size;
    if (nmt_serve_document_write_texts(doc, texts, &data, &size) < 0) return set_error(a, 500, nmt_error());
    const int put = nmt_serve_files_put(s->files, r->filename, data, size, stored);
    free(data);
    if (put < 0) return set_error(a, strstr(nmt_error(), "more than") ? 413 : 500, nmt_error());
    const int plain = h->host && h->host[0] && strlen(h->host) < 256 && strspn(h->host, "abcdefghijklmnopqrstuvwxyz"
                      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") == strlen(h->host);
    if (plain) snprintf(host, sizeof host, "%s", h->host);
    else snprintf(host, sizeof host, strchr(s->options.host, ':') ? "[%s]:%d" : "%s:%d", s->options.host, s->port);
    char *json;
    size_t len;
    FILE *out = begin_json(&json, &len);
    if (out) {
        char url[sizeof host + sizeof stored + 32];
        snprintf(url, sizeof url, "http://%s/download_file/%s", host, stored);
        fputs("{\"translatedFileUrl\":", out);
        nmt_json_write_string(out, url);
        fputc('}', out);
    }
    end_json(a, out, &json, &len);
}

/* One step of a translation: texts[0..n) cut into segments (by the rules of `language`), queued on
 * model m's batcher (with the glossary g, or NULL), waited for and joined into *out (n texts, free
 * with texts_free); *job is kept for its map (release it). With `stream` the job is streamed and not
 * waited for: the segments move to *stream. Returns 0, or -1 with the answer set. */
static int run_model(nmt_serve *s, int m, const connection *c, const char *const *texts, int n, int html,
                     const char *language, int want_map, int hypotheses, const nmt_serve_glossary *g,
                     nmt_serve_segments *stream, answer *a, nmt_serve_job **job, nmt_serve_text **out) {
    nmt_serve_segments sp = {0};
    int rc = -1;
    *job = NULL;
    *out = NULL;
    if (nmt_serve_segment(texts, n, s->options.sentences, html, language, &sp) < 0) {
        set_error(a, strstr(nmt_error(), "out of memory") ? 500 : 413, nmt_error());
        goto done;
    }
    a->lines += sp.count;
    const nmt_serve_controls controls = {g ? (const char *const *)g->terms : NULL, g ? g->size : 0, stream != NULL,
                                         hypotheses};
    const int submitted = nmt_serve_batcher_submit_with(s->batchers[m], sp.count, sp.segments, want_map, &controls, job);
    if (submitted == NMT_SERVE_JOB_TOO_LARGE) {
        set_error(a, 413, nmt_error());
        goto done;
    }
    if (submitted < 0) {
        set_error(a, 503, nmt_error());
        a->retry_after = 1;
        if (submitted != NMT_SERVE_QUEUE_FULL && strstr(nmt_error(), "out of memory")) a->status = 500;
        goto done;
    }
    if (stream) {
        *stream = sp;
        return 0;
    }
    const int waited = wait_job(s, c, *job, a);
    if (waited == 1) goto done;
    a->queue_ms += nmt_serve_job_queue_ms(*job);
    a->decode_ms += nmt_serve_job_decode_ms(*job);
    if (waited < 0) {
        refuse(a);
        goto done;
    }
    *out = nmt_calloc(n ? (size_t)n : 1, sizeof **out);
    if (!*out || nmt_serve_join(&sp, n, nmt_serve_job_lines(*job), *out) < 0) {
        set_error(a, 500, "out of memory");
        goto done;
    }
    rc = 0;
done:
    nmt_serve_segments_free(&sp);
    return rc;
}

/* A request's texts translated along its route: one model, or two through English (the second
 * translates the first's best translations, so alternatives are the second step's). */
static void translate(nmt_serve *s, nmt_serve_api api, const request_headers *h, const connection *c, answer *a) {
    nmt_serve_request r;
    nmt_serve_job *job = NULL;
    nmt_serve_text *texts = NULL;
    nmt_serve_document *doc = NULL;
    nmt_serve_route route;
    nmt_langid_guess guess;
    int auto_source;
    a->translation = 1;
    const int parsed = nmt_serve_request_parse(api, h->content_type, c->body ? c->body : "", c->len, &r) == 0;
    if (parsed && check_request(s, &r, h, a) < 0) goto done;
    if (!parsed || (api == NMT_SERVE_FILE && nmt_serve_document_take(&r, &doc) < 0) || /* "auto" reads its texts */
        nmt_serve_route_request(s->pairs, s->model_count, &r, &route, &guess, &auto_source) < 0) {
        refuse(a);
        goto done;
    }
    if (doc) { /* the characters of the file's texts, not of its bytes */
        a->characters = 0;
        for (int i = 0; i < r.count; i++) a->characters += characters(r.q[i]);
    }
    if (r.glossary.size > 0 && route.second >= 0) { /* its source terms are not in the English step's source */
        refuse((nmt_error_set("glossary: not through English (%s-en-%s): a glossary needs a model of the pair",
                              s->pairs[route.first].source, s->pairs[route.second].target), a));
        goto done;
    }
    const int html = doc ? nmt_serve_document_html(doc) : r.format && strcmp(r.format, "html") == 0;
    nmt_serve_segments *stream = api == NMT_SERVE_LIBRE && h->accept && strstr(h->accept, "text/event-stream")
                                     ? &a->events.segments : NULL;
    if (stream && html) {
        set_error(a, 400, "format html is not streamed (Accept: text/event-stream): ask without it");
        goto done;
    }
    /* Hypotheses of each text: native n_best, LibreTranslate's alternatives + 1 (none for HTML). */
    const int hypotheses = api == NMT_SERVE_NATIVE         ? (int)r.n_best
                           : r.alternatives > 0 && !html ? (int)r.alternatives + 1
                                                         : 1;
    if (run_model(s, route.first, c, (const char *const *)r.q, r.count, html, s->pairs[route.first].source,
                  r.alignment_map && route.second < 0, route.second < 0 ? hypotheses : 1, &r.glossary,
                  route.second < 0 ? stream : NULL, a, &job, &texts) < 0)
        goto done;
    if (route.second >= 0) {
        const char **middle = nmt_calloc(r.count ? (size_t)r.count : 1, sizeof *middle);
        if (!middle) {
            set_error(a, 500, "out of memory");
            goto done;
        }
        for (int i = 0; i < r.count; i++) middle[i] = texts[i].hyps[0].text;
        nmt_serve_text *final;
        nmt_serve_job *second;
        const int rc = run_model(s, route.second, c, middle, r.count, html, NMT_SERVE_PIVOT, 0, hypotheses, NULL, stream, a,
                                 &second, &final);
        free(middle);
        texts_free(texts, r.count);
        nmt_serve_job_release(job);
        texts = final;
        job = second;
        if (rc < 0) goto done;
    }
    if (api == NMT_SERVE_FILE) {
        store_file(s, &r, doc, texts, h, a);
        goto done;
    }
    const nmt_serve_detected detected = {.language = guess.language, .confidence = guess.confidence};
    if (stream) { /* the events take the job and the request */
        nmt_serve_sse_source *e = &a->events;
        e->job = job;
        e->request = r;
        if (auto_source) snprintf(e->language, sizeof e->language, "%s", guess.language);
        e->confidence = guess.confidence;
        e->deadline = s->options.timeout_s > 0 ? c->start + s->options.timeout_s : 0;
        e->abandon = &s->abandon;
        a->streamed = 1;
        a->status = 200;
        job = NULL;
        memset(&r, 0, sizeof r);
        goto done;
    }
    char *text;
    size_t len;
    FILE *out = begin_json(&text, &len);
    if (out) nmt_serve_response_write(out, &r, texts, nmt_serve_job_map(job), auto_source ? &detected : NULL);
    end_json(a, out, &text, &len);
done:
    texts_free(texts, r.count);
    nmt_serve_document_free(doc);
    nmt_serve_job_release(job);
    nmt_serve_request_free(&r);
}

/* LibreTranslate's POST /detect: the languages of q among those the models translate from, best
 * first: those CLD2 found, or else the first of them with confidence 0. */
static void detect(nmt_serve *s, const request_headers *h, const connection *c, answer *a) {
    nmt_serve_request r;
    nmt_langid_guess guesses[NMT_SERVE_MAX_MODELS];
    nmt_serve_detected found[NMT_SERVE_MAX_MODELS];
    const int parsed = nmt_serve_request_parse(NMT_SERVE_DETECT, h->content_type, c->body ? c->body : "", c->len, &r) == 0;
    if (parsed && check_request(s, &r, h, a) < 0) goto done;
    const int n = parsed ? nmt_serve_route_detect(s->pairs, s->model_count, (const char *const *)r.q, r.count, guesses) : -1;
    if (n < 0) {
        refuse(a);
        goto done;
    }
    int kept = 0;
    while (kept < n && (kept == 0 || guesses[kept].confidence > 0)) {
        found[kept] = (nmt_serve_detected){.language = guesses[kept].language, .confidence = guesses[kept].confidence};
        kept++;
    }
    char *text;
    size_t len;
    FILE *out = begin_json(&text, &len);
    if (out) nmt_serve_detect_write(out, found, kept);
    end_json(a, out, &text, &len);
done:
    nmt_serve_request_free(&r);
}

/* ---- the other endpoints ---- */

static void languages(nmt_serve *s, answer *a) {
    char *text;
    size_t len;
    FILE *out = begin_json(&text, &len);
    if (out) nmt_serve_route_languages(out, s->pairs, s->model_count);
    end_json(a, out, &text, &len);
}

/* LibreTranslate's settings for its web frontend and clients (routes.h). */
static void frontend_settings(nmt_serve *s, answer *a) {
    char *text;
    size_t len;
    FILE *out = begin_json(&text, &len);
    if (out) nmt_serve_route_settings(out, s->pairs, s->options.char_limit, s->keys.count > 0);
    end_json(a, out, &text, &len);
}

static void metrics(nmt_serve *s, answer *a) {
    char *text;
    size_t len;
    nmt_serve_batcher_stats all = {0}; /* the queues of every model together */
    long queued[NMT_SERVE_MAX_MODELS], lines[NMT_SERVE_MAX_MODELS];
    char names[NMT_SERVE_MAX_MODELS][2 * NMT_LANGCODE_MAX];
    const char *pairs[NMT_SERVE_MAX_MODELS];
    for (int m = 0; m < s->model_count; m++) {
        nmt_serve_batcher_stats st;
        nmt_serve_batcher_stats_get(s->batchers[m], &st);
        all.queued += queued[m] = st.queued;
        all.queued_bytes += st.queued_bytes;
        all.batches += st.batches;
        all.lines += lines[m] = st.lines;
        snprintf(names[m], sizeof names[m], "%s-%s", s->pairs[m].source, s->pairs[m].target);
        pairs[m] = names[m];
    }
    FILE *out = begin_json(&text, &len);
    if (out) {
        nmt_serve_metrics_write(&s->metrics, out, all.queued, all.queued_bytes, all.batches, all.lines,
                                nmt_serve_watchdog_closed(s->watchdog));
        nmt_serve_metrics_write_models(out, s->model_count, pairs, queued, lines);
    }
    end_json(a, out, &text, &len);
    a->type = "text/plain; version=0.0.4";
}

static void static_text(answer *a, const char *type, const char *text) {
    char *copy = nmt_strdup(text);
    if (!copy) return set_error(a, 500, "out of memory");
    set_body(a, 200, type, copy, strlen(copy));
}

/* GET /download_file/NAME: a translated file, as an attachment named after the original. */
static void download_file(nmt_serve *s, const char *name, answer *a) {
    char *data;
    size_t len;
    if (nmt_serve_files_get(s->files, name, &data, &len) < 0) return set_error(a, 404, "Invalid filename");
    set_body(a, 200, nmt_serve_document_type(name), data, len);
    snprintf(a->attachment, sizeof a->attachment, "%s", strchr(name, '.') + 1);
}

static void route(nmt_serve *s, const char *method, const char *url, const request_headers *h, const connection *c,
                  answer *a) {
    const int get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0, post = strcmp(method, "POST") == 0;
    static const struct {
        const char *path;
        int post;
    } known[] = {{"/translate", 1}, {"/translator/translate", 1}, {"/v1/translate", 1}, {"/languages", 0},
                 {"/health", 0},    {"/metrics", 0},              {"/frontend/settings", 0}, {"/translate_file", 1},
                 {"/download_file/", 0}, {"/", 0}, {"/detect", 1}, {"/suggest", 1}};
    enum { DOWNLOAD = 8 }; /* known[DOWNLOAD] is a prefix: /download_file/NAME */
    static const char download[] = "/download_file/";
    int found = -1;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(url, known[i].path) == 0) found = (int)i;
    if (strncmp(url, download, sizeof download - 1) == 0 && url[sizeof download - 1]) found = DOWNLOAD;
    if (c->refused) {
        a->retry_after = 1;
        return set_error(a, 503, "the server is shutting down");
    }
    if (found < 0) return set_error(a, 404, "not found");
    if (strcmp(method, "OPTIONS") == 0) { /* a browser's CORS preflight */
        char *empty = nmt_strdup("");
        if (!empty) return set_error(a, 500, "out of memory");
        return set_body(a, 204, "text/plain", empty, 0);
    }
    if (known[found].post ? !post : !get) return set_error(a, 405, known[found].post ? "use POST" : "use GET");
    if (c->too_large) {
        char message[128];
        snprintf(message, sizeof message, "the body is larger than %zu bytes", s->options.max_body);
        return set_error(a, 413, message);
    }
    switch (found) {
    case 0: return translate(s, NMT_SERVE_LIBRE, h, c, a);
    case 1: return translate(s, NMT_SERVE_OPENNMT, h, c, a);
    case 2: return translate(s, NMT_SERVE_NATIVE, h, c, a);
    case 3: return languages(s, a);
    case 4: return static_text(a, "application/json", "{\"status\":\"ok\"}");
    case 5: return metrics(s, a);
    case 6: return frontend_settings(s, a);
    case 7: return translate(s, NMT_SERVE_FILE, h, c, a);
    case DOWNLOAD: return download_file(s, url + sizeof download - 1, a);
    case 10: return detect(s, h, c, a);
    case 11: /* LibreTranslate's answer with its --suggestions off, which its page and settings say */
        return set_error(a, 403, "Suggestions are disabled on this server.");
    default: return static_text(a, "text/html; charset=utf-8", nmt_serve_page);
    }
}

static enum MHD_Result send_answer(struct MHD_Connection *conn, answer *a) {
    static const char oom[] = "{\"error\":\"out of memory\"}";
    struct MHD_Response *response =
        a->streamed ? nmt_serve_sse_response(&a->events)
        : a->body   ? MHD_create_response_from_buffer(a->len, a->body, MHD_RESPMEM_MUST_COPY)
                    : MHD_create_response_from_buffer(sizeof oom - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
    if (!response) return MHD_NO;
    MHD_add_response_header(response, "Content-Type", a->streamed ? "text/event-stream" : a->body ? a->type : "application/json");
    if (a->streamed) MHD_add_response_header(response, "Cache-Control", "no-cache");
    MHD_add_response_header(response, "Access-Control-Allow-Origin", "*");
    if (a->status == 204) {
        MHD_add_response_header(response, "Access-Control-Allow-Methods", "GET, POST, OPTIONS");
        MHD_add_response_header(response, "Access-Control-Allow-Headers", "Content-Type, Authorization, X-API-Key");
    }
    if (a->status == 503 || a->close) MHD_add_response_header(response, "Connection", "close");
    if (a->attachment[0]) {
        char value[160];
        snprintf(value, sizeof value, "attachment; filename=\"%s\"", a->attachment);
        MHD_add_response_header(response, "Content-Disposition", value);
    }
    if (a->retry_after) {
        char value[16];
        snprintf(value, sizeof value, "%d", a->retry_after);
        MHD_add_response_header(response, "Retry-After", value);
    }
    const enum MHD_Result rc = MHD_queue_response(conn, (unsigned)(a->body || a->streamed ? a->status : 500), response);
    MHD_destroy_response(response);
    return rc;
}

/* Records, logs and sends an answer (none when its client has gone: the connection is closed). */
static enum MHD_Result finish(nmt_serve *s, struct MHD_Connection *conn, const char *method, const char *url,
                              const connection *c, answer *a) {
    const double seconds = nmt_now() - c->start;
    nmt_serve_metrics_request(&s->metrics, url, a->body || a->streamed ? a->status : 500, a->translation, a->status == 200 ? a->lines : 0,
                              a->status == 200 ? a->characters : 0, seconds);
    if (s->options.log)
        nmt_serve_metrics_log(s->options.log, &s->log_lock, method, url, a->status, a->lines, a->characters,
                              a->queue_ms, a->decode_ms, seconds);
    const enum MHD_Result rc = a->abandoned ? MHD_NO : send_answer(conn, a);
    nmt_serve_sse_source_free(&a->events); /* what no stream took */
    free(a->body);
    return rc;
}

typedef struct header_count {
    int content_length, transfer_encoding;
    const char *length; /* the Content-Length value */
} header_count;

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    header_count *h = cls;
    if (strcasecmp(key, "Content-Length") == 0) {
        h->content_length++;
        h->length = value;
    } else if (strcasecmp(key, "Transfer-Encoding") == 0) {
        h->transfer_encoding++;
    }
    return MHD_YES;
}

/* What the headers alone refuse, before any byte of the body is read (so that no "100 Continue" is
 * sent for it): a Content-Length given twice, or together with a Transfer-Encoding (two ways to find
 * where the body ends: a request smuggled behind a proxy that reads the other one), 400 and the
 * connection closed as RFC 9112 (6.3) asks; a Content-Length over the body limit, 413. Returns 1 with
 * the answer set. */
static int refuse_headers(nmt_serve *s, struct MHD_Connection *conn, answer *a) {
    header_count h = {0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, count_header, &h);
    if (h.content_length > 1 || (h.content_length && h.transfer_encoding)) {
        set_error(a, 400, h.content_length > 1 ? "Content-Length: given more than once"
                                               : "Content-Length and Transfer-Encoding: only one may be given");
        a->close = 1;
        return 1;
    }
    char *end;
    errno = 0;
    const unsigned long long length = h.length ? strtoull(h.length, &end, 10) : 0;
    if (h.length && (errno == ERANGE || length > s->options.max_body)) {
        char message[128];
        snprintf(message, sizeof message, "the body is larger than %zu bytes", s->options.max_body);
        set_error(a, 413, message);
        a->close = 1;
        return 1;
    }
    return 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size, void **state) {
    (void)version;
    nmt_serve *s = cls;
    connection *c = *state;
    if (!c) { /* the headers have arrived */
        c = nmt_calloc(1, sizeof *c);
        if (!c) return MHD_NO;
        c->start = nmt_now();
        c->refused = atomic_load(&s->stopping);
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        c->watch = info ? info->socket_context : NULL;
        *state = c;
        nmt_serve_metrics_in_flight(&s->metrics, 1);
        if (c->watch) nmt_serve_watch_phase(s->watchdog, c->watch, NMT_SERVE_BODY);
        answer a = {0};
        if (!refuse_headers(s, conn, &a)) return MHD_YES;
        c->answered = 1;
        return finish(s, conn, method, url, c, &a);
    }
    if (c->answered) { /* anything after an early answer is not read */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size) { /* a piece of the body */
        if (!c->too_large && c->len + *upload_data_size > s->options.max_body) {
            c->too_large = 1;
            free(c->body);
            c->body = NULL;
            c->len = c->cap = 0;
        }
        if (!c->too_large) {
            if (c->len + *upload_data_size + 1 > c->cap) {
                size_t cap = c->cap ? c->cap : 4096;
                while (cap < c->len + *upload_data_size + 1) cap *= 2;
                char *body = nmt_realloc(c->body, cap);
                if (!body) return MHD_NO;
                c->body = body;
                c->cap = cap;
            }
            memcpy(c->body + c->len, upload_data, *upload_data_size);
            c->len += *upload_data_size;
            c->body[c->len] = '\0';
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (c->watch) nmt_serve_watch_phase(s->watchdog, c->watch, NMT_SERVE_BUSY);
    answer a = {0};
    request_headers h;
    read_headers(conn, &h);
    route(s, method, url, &h, c, &a);
    return finish(s, conn, method, url, c, &a);
}

static void completed(void *cls, struct MHD_Connection *conn, void **state, enum MHD_RequestTerminationCode why) {
    (void)conn, (void)why;
    nmt_serve *s = cls;
    connection *c = *state;
    if (!c) return;
    /* A kept-alive connection waits for its next request's headers from now. */
    if (c->watch) nmt_serve_watch_phase(s->watchdog, c->watch, NMT_SERVE_HEADERS);
    free(c->body);
    free(c);
    *state = NULL;
    nmt_serve_metrics_in_flight(&s->metrics, -1);
}

/* Each connection watched from its opening to its closing (watchdog.h). */
static void connection_event(void *cls, struct MHD_Connection *conn, void **socket_context,
                             enum MHD_ConnectionNotificationCode code) {
    nmt_serve *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = info ? nmt_serve_watchdog_add(s->watchdog, info->connect_fd) : NULL;
    } else if (*socket_context) {
        nmt_serve_watchdog_remove(s->watchdog, *socket_context);
        *socket_context = NULL;
    }
}

/* ---- setup ---- */

static int start_daemon(nmt_serve *s) {
    struct sockaddr_in in4 = {0};
    struct sockaddr_in6 in6 = {0};
    struct sockaddr *addr;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC;
    if (inet_pton(AF_INET, s->options.host, &in4.sin_addr) == 1) {
        in4.sin_family = AF_INET;
        in4.sin_port = htons((uint16_t)s->options.port);
        addr = (struct sockaddr *)&in4;
    } else if (inet_pton(AF_INET6, s->options.host, &in6.sin6_addr) == 1) {
        in6.sin6_family = AF_INET6;
        in6.sin6_port = htons((uint16_t)s->options.port);
        addr = (struct sockaddr *)&in6;
        flags |= MHD_USE_IPv6;
    } else {
        return nmt_error_set("--host: '%s' is not an IPv4 or IPv6 address", s->options.host);
    }
    s->daemon = MHD_start_daemon(
        flags, (uint16_t)s->options.port, NULL, NULL, handle, s, MHD_OPTION_SOCK_ADDR, addr, MHD_OPTION_NOTIFY_COMPLETED,
        completed, s, MHD_OPTION_NOTIFY_CONNECTION, connection_event, s, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)s->options.max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        (unsigned)s->options.max_connections_per_client, MHD_OPTION_CONNECTION_TIMEOUT, 120u, MHD_OPTION_END);
    if (!s->daemon)
        return nmt_error_set("cannot listen on %s port %d (in use, or not an address of this machine)", s->options.host,
                             s->options.port);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : s->options.port;
    return 0;
}

/* The limits that make sense together; 0 or an error naming the option. */
static int check_options(const nmt_serve_options *o) {
    if (o->max_connections < 2 || o->max_connections_per_client < 1 ||
        o->max_connections_per_client >= o->max_connections)
        return nmt_error_set("--max-connections-per-client %d must be at least 1 and less than --max-connections %d "
                             "(a slot kept for other clients)",
                             o->max_connections_per_client, o->max_connections);
    if (!(o->header_timeout_s > 0) || !(o->body_timeout_s > 0) || !(o->drain_s >= 0))
        return nmt_error_set("--header-timeout-s and --body-timeout-s must be more than 0, --drain-s at least 0");
    return 0;
}

/* The models' pairs: language codes, one model a pair. */
static int set_pairs(nmt_serve *s, const nmt_serve_model *models, int count) {
    if (count < 1 || count > NMT_SERVE_MAX_MODELS)
        return nmt_error_set("%d models: a server holds 1 to %d", count, NMT_SERVE_MAX_MODELS);
    for (int m = 0; m < count; m++) {
        nmt_serve_pair *p = &s->pairs[m];
        if (!models[m].source || !models[m].target)
            return nmt_error_set("%s: its languages are not recorded (a CTranslate2 directory, or a model trained "
                                 "without data.src_lang and data.tgt_lang): give --source-lang and --target-lang after "
                                 "its -m", models[m].name);
        if (nmt_langcode_check(models[m].source, "--source-lang") < 0 ||
            nmt_langcode_check(models[m].target, "--target-lang") < 0)
            return nmt_error_prefix("%s", models[m].name);
        snprintf(p->source, sizeof p->source, "%s", models[m].source);
        snprintf(p->target, sizeof p->target, "%s", models[m].target);
        for (int e = 0; e < m; e++)
            if (strcmp(s->pairs[e].source, p->source) == 0 && strcmp(s->pairs[e].target, p->target) == 0)
                return nmt_error_set("%s and %s both translate %s-%s: one model a pair", models[e].name,
                                     models[m].name, p->source, p->target);
        s->engines[m] = models[m].engine;
    }
    s->model_count = count;
    return 0;
}

int nmt_serve_start(nmt_serve **out, const nmt_serve_model *models, int count, const nmt_serve_options *options) {
    *out = NULL;
    if (check_options(options) < 0) return -1;
    nmt_serve *s = nmt_calloc(1, sizeof *s);
    if (!s) return -1;
    s->options = *options;
    int metrics = -1, lock = -1, batchers = 0;
    const nmt_serve_batcher_options bo = {.max_batch = options->max_batch, .wait_ms = options->batch_wait_ms,
                                          .max_queue = options->max_queue, .max_queue_bytes = options->max_queue_bytes};
    int failed = set_pairs(s, models, count) < 0 ||
                 (options->api_keys_path && nmt_serve_keys_init(&s->keys, options->api_keys_path) < 0) ||
                 nmt_serve_files_create(&s->files, 64, 64 << 20) < 0 ||
                 (metrics = nmt_serve_metrics_init(&s->metrics)) < 0 ||
                 (lock = pthread_mutex_init(&s->log_lock, NULL)) != 0;
    for (; !failed && batchers < count; batchers++)
        failed = nmt_serve_batcher_create(&s->batchers[batchers], s->engines[batchers], &bo) < 0;
    if (failed || nmt_serve_watchdog_create(&s->watchdog, options->max_connections, options->header_timeout_s,
                                            options->body_timeout_s) < 0 ||
        start_daemon(s) < 0) {
        if (lock > 0) nmt_error_set("cannot create a mutex");
        if (metrics == 0) nmt_serve_metrics_destroy(&s->metrics);
        if (lock == 0) pthread_mutex_destroy(&s->log_lock);
        nmt_serve_watchdog_free(s->watchdog);
        for (int m = 0; m < batchers; m++) nmt_serve_batcher_free(s->batchers[m]);
        nmt_serve_keys_free(&s->keys);
        nmt_serve_files_free(s->files);
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

int nmt_serve_port(const nmt_serve *s) { return s->port; }

int nmt_serve_run(nmt_serve *s, volatile sig_atomic_t *stop) {
    while (!*stop) usleep(20000);
    /* Drain: no new connections; what is in flight may finish for drain_s seconds. Then the requests
     * still waiting for their translation give up (503), and stopping the daemon closes every
     * connection (a body still arriving, a kept-alive connection) and waits for their threads. */
    atomic_store(&s->stopping, 1);
    const MHD_socket listener = MHD_quiesce_daemon(s->daemon);
    if (listener != MHD_INVALID_SOCKET) close(listener);
    const double give_up = nmt_now() + s->options.drain_s;
    while (nmt_serve_metrics_get_in_flight(&s->metrics) > 0 && nmt_now() < give_up) usleep(10000);
    atomic_store(&s->abandon, 1);
    MHD_stop_daemon(s->daemon);
    s->daemon = NULL;
    return 0;
}

void nmt_serve_free(nmt_serve *s) {
    if (!s) return;
    if (s->daemon) {
        atomic_store(&s->abandon, 1);
        MHD_stop_daemon(s->daemon);
    }
    nmt_serve_watchdog_free(s->watchdog);
    for (int m = 0; m < s->model_count; m++) nmt_serve_batcher_free(s->batchers[m]);
    nmt_serve_metrics_destroy(&s->metrics);
    pthread_mutex_destroy(&s->log_lock);
    nmt_serve_keys_free(&s->keys);
    nmt_serve_files_free(s->files);
    free(s);
}
