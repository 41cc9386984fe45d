/* sse: a streamed /translate answer, its events written as the batcher decides the text; see sse.h. */
#include "serve/sse.h"

#include "base/json.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

static const char timeout_message[] = "the translation took longer than --timeout-s";

typedef struct sse {
    nmt_serve_sse_source src;
    int segment;      /* the segment being streamed */
    size_t have;      /* bytes of its pieces taken (nmt_serve_job_stream_next) */
    int glued;        /* its glue is in `text` already */
    nmt_strbuf text;  /* what the next piece event carries */
    nmt_strbuf out;   /* bytes of events not sent yet, from `sent` */
    size_t sent;
    int ended;        /* the last event is in out */
} sse;

void nmt_serve_sse_source_free(nmt_serve_sse_source *src) {
    if (src->job) {
        nmt_serve_job_cancel(src->job);
        nmt_serve_job_release(src->job);
    }
    nmt_serve_segments_free(&src->segments);
    nmt_serve_request_free(&src->request);
    memset(src, 0, sizeof *src);
}

/* Appends `event: NAME` (NULL: none) and `data: ` + what write() writes, the stream's last when named. */
static void add_event(sse *e, const char *name, char *json, size_t len) {
    if (name) nmt_strbuf_printf(&e->out, "event: %s\n", name);
    nmt_strbuf_puts(&e->out, "data: ");
    nmt_strbuf_append(&e->out, json, len);
    nmt_strbuf_puts(&e->out, "\n\n");
    if (name) e->ended = 1;
}

static void error_event(sse *e, const char *message) {
    char *json = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&json, &len);
    if (f) nmt_serve_error_write(f, message);
    if (f && fclose(f) == 0) add_event(e, "error", json, len);
    else e->ended = 1; /* out of memory: the stream just ends */
    free(json);
}

/* The answer /translate gives, as the last event. */
static void done_event(sse *e) {
    nmt_serve_sse_source *s = &e->src;
    const int n = s->request.count;
    const int waited = nmt_serve_job_wait(s->job, s->deadline);
    if (waited != 0) return error_event(e, waited > 0 ? timeout_message : nmt_error());
    nmt_serve_text *texts = nmt_calloc(n ? (size_t)n : 1, sizeof *texts);
    char *json = NULL;
    size_t len = 0;
    FILE *f = NULL;
    if (texts && nmt_serve_join(&s->segments, n, nmt_serve_job_lines(s->job), texts) == 0 &&
        (f = open_memstream(&json, &len))) {
        const nmt_serve_detected detected = {.language = s->language, .confidence = s->confidence};
        nmt_serve_response_write(f, &s->request, texts, NULL, s->language[0] ? &detected : NULL);
    }
    if (f && fclose(f) == 0) add_event(e, "done", json, len);
    else error_event(e, "out of memory");
    free(json);
    for (int i = 0; texts && i < n; i++) nmt_serve_text_free(&texts[i]);
    free(texts);
}

/* The text of q that segment `segment` belongs to. */
static int text_of(const nmt_serve_segments *s, int count, int segment) {
    int i = 0;
    while (i + 1 < count && s->first[i + 1] <= segment) i++;
    return i;
}

/* Adds the next event to out, or nothing when a tenth of a second passed without news. */
static void next_event(sse *e) {
    nmt_serve_sse_source *s = &e->src;
    if (e->segment == s->segments.count) return done_event(e);
    if (atomic_load(s->abandon)) return error_event(e, "the server is shutting down");
    const double now = nmt_now();
    if (s->deadline > 0 && now >= s->deadline) return error_event(e, timeout_message);
    if (!e->glued) {
        nmt_strbuf_puts(&e->text, s->segments.glue[e->segment]);
        e->glued = 1;
    }
    const double step = s->deadline > 0 && s->deadline < now + 0.1 ? s->deadline : now + 0.1;
    const int rc = nmt_serve_job_stream_next(s->job, e->segment, &e->have, step, &e->text);
    if (rc < 0 || e->text.failed) return error_event(e, rc < 0 ? nmt_error() : "out of memory");
    const int segment = e->segment;
    if (rc == 1) {
        e->segment++;
        e->have = 0;
        e->glued = 0;
    }
    if (rc == 2 || e->text.len == 0) return;
    nmt_strbuf json = {0};
    nmt_strbuf_printf(&json, "{\"index\":%d,\"text\":", text_of(&s->segments, s->request.count, segment));
    nmt_json_append_string(&json, e->text.data);
    nmt_strbuf_puts(&json, "}");
    if (json.failed) error_event(e, "out of memory");
    else add_event(e, NULL, json.data, json.len);
    nmt_strbuf_free(&json);
    e->text.len = 0;
    e->text.data[0] = '\0';
}

static ssize_t read_events(void *cls, uint64_t pos, char *buf, size_t max) {
    (void)pos;
    sse *e = cls;
    while (e->sent == e->out.len) {
        if (e->ended || e->out.failed) return MHD_CONTENT_READER_END_OF_STREAM;
        e->out.len = e->sent = 0;
        next_event(e);
    }
    const size_t n = e->out.len - e->sent < max ? e->out.len - e->sent : max;
    memcpy(buf, e->out.data + e->sent, n);
    e->sent += n;
    return (ssize_t)n;
}

static void free_events(void *cls) {
    sse *e = cls;
    nmt_serve_sse_source_free(&e->src);
    nmt_strbuf_free(&e->text);
    nmt_strbuf_free(&e->out);
    free(e);
}

struct MHD_Response *nmt_serve_sse_response(nmt_serve_sse_source *source) {
    sse *e = nmt_calloc(1, sizeof *e);
    if (!e) {
        nmt_serve_sse_source_free(source);
        return NULL;
    }
    e->src = *source;
    memset(source, 0, sizeof *source);
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, read_events, e, free_events);
    if (!r) free_events(e);
    return r;
}
