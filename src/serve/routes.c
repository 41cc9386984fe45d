/* routes: a request's language pair mapped onto the served models (one step, or two through
 * English) and LibreTranslate's list of languages (see routes.h). */
#include "serve/routes.h"

#include "serve/document.h"

#include "base/json.h"
#include "base/util.h"
#include "text/langcode.h"
#include "text/langid.h"

#include <stdlib.h>
#include <string.h>

/* The first model of source -> target, or -1. */
static int direct(const nmt_serve_pair *pairs, int n, const char *source, const char *target) {
    for (int i = 0; i < n; i++)
        if (strcmp(pairs[i].source, source) == 0 && strcmp(pairs[i].target, target) == 0) return i;
    return -1;
}

static int known(const nmt_serve_pair *pairs, int n, const char *code) {
    for (int i = 0; i < n; i++)
        if (strcmp(pairs[i].source, code) == 0 || strcmp(pairs[i].target, code) == 0) return 1;
    return 0;
}

/* Finds the route without an error message: 0 or -1. */
static int route(const nmt_serve_pair *pairs, int n, const char *source, const char *target, nmt_serve_route *out) {
    *out = (nmt_serve_route){direct(pairs, n, source, target), -1};
    if (out->first >= 0) return 0;
    if (strcmp(source, target) == 0 || strcmp(source, NMT_SERVE_PIVOT) == 0 || strcmp(target, NMT_SERVE_PIVOT) == 0)
        return -1; /* no round trips */
    out->first = direct(pairs, n, source, NMT_SERVE_PIVOT);
    out->second = direct(pairs, n, NMT_SERVE_PIVOT, target);
    return out->first >= 0 && out->second >= 0 ? 0 : -1;
}

int nmt_serve_route_find(const nmt_serve_pair *pairs, int n, const char *source, const char *target,
                         nmt_serve_route *out) {
    if (route(pairs, n, source, target, out) == 0) return 0;
    char held[512] = "";
    for (int i = 0; i < n; i++) {
        const size_t used = strlen(held);
        snprintf(held + used, sizeof held - used, "%s%s-%s", i ? ", " : "", pairs[i].source, pairs[i].target);
    }
    const char *unknown = !known(pairs, n, source) ? source : !known(pairs, n, target) ? target : NULL;
    if (unknown) return nmt_error_set("%.32s is not supported (this server translates %s)", unknown, held);
    return nmt_error_set("%s (%s) is not available as a target language from %s (%s) (this server translates %s%s)",
                         nmt_langcode_name(target), target, nmt_langcode_name(source), source, held,
                         n > 1 ? ", and through " NMT_SERVE_PIVOT " where both steps are served" : "");
}

/* Adds code to list[0..*n) unless it is there. */
static void add_once(const char **list, int *n, const char *code) {
    for (int i = 0; i < *n; i++)
        if (strcmp(list[i], code) == 0) return;
    list[(*n)++] = code;
}

int nmt_serve_route_sources(const nmt_serve_pair *pairs, int n, const char **out) {
    int count = 0;
    for (int i = 0; i < n; i++) add_once(out, &count, pairs[i].source);
    return count;
}

void nmt_serve_route_languages(FILE *out, const nmt_serve_pair *pairs, int n) {
    const char *codes[2 * NMT_SERVE_MAX_MODELS], *targets[NMT_SERVE_MAX_MODELS];
    int count = 0;
    for (int i = 0; i < n && i < NMT_SERVE_MAX_MODELS; i++) {
        add_once(codes, &count, pairs[i].source);
        add_once(codes, &count, pairs[i].target);
    }
    fputc('[', out);
    for (int c = 0; c < count; c++) {
        fputs(c ? ",{\"code\":" : "{\"code\":", out);
        nmt_json_write_string(out, codes[c]);
        fputs(",\"name\":", out);
        nmt_json_write_string(out, nmt_langcode_name(codes[c]));
        fputs(",\"targets\":[", out);
        int found = 0; /* its own models' targets first, then those through the pivot */
        for (int two_steps = 0; two_steps < 2; two_steps++)
            for (int t = 0; t < n && t < NMT_SERVE_MAX_MODELS; t++) {
                nmt_serve_route r;
                if (strcmp(pairs[t].target, codes[c]) != 0 && route(pairs, n, codes[c], pairs[t].target, &r) == 0 &&
                    (r.second >= 0) == two_steps)
                    add_once(targets, &found, pairs[t].target);
            }
        for (int t = 0; t < found; t++) {
            if (t) fputc(',', out);
            nmt_json_write_string(out, targets[t]);
        }
        fputs("]}", out);
    }
    fputc(']', out);
}

int nmt_serve_route_detect(const nmt_serve_pair *pairs, int n, const char *const *texts, int count,
                           nmt_langid_guess *guesses) {
    const char *sources[NMT_SERVE_MAX_MODELS];
    const int n_sources = nmt_serve_route_sources(pairs, n, sources);
    /* The texts as one, as far as CLD2 reads. */
    size_t len = 0;
    for (int i = 0; i < count && len < NMT_LANGID_MAX_BYTES; i++) len += strlen(texts[i]) + 1;
    char *text = nmt_malloc(len + 1);
    if (!text) return -1;
    size_t at = 0;
    for (int i = 0; i < count && at < NMT_LANGID_MAX_BYTES; i++) {
        const size_t l = strlen(texts[i]);
        memcpy(text + at, texts[i], l);
        text[at + l] = '\n';
        at += l + 1;
    }
    const int found = nmt_langid_detect(text, at, sources, n_sources, guesses);
    free(text);
    return found;
}

int nmt_serve_route_request(const nmt_serve_pair *pairs, int n, const nmt_serve_request *r, nmt_serve_route *route,
                            nmt_langid_guess *detected, int *auto_source) {
    *route = (nmt_serve_route){0, -1};
    *auto_source = 0;
    if (r->api == NMT_SERVE_OPENNMT) {
        if (n > 1 && r->model >= n)
            return nmt_error_set("id %ld: no such model (the ids are 0 to %d, the models in the order of the server's "
                                 "-m options)", r->model, n - 1);
        route->first = n == 1 || r->model < 0 ? 0 : (int)r->model; /* one model: every id is its */
        return 0;
    }
    if (r->api == NMT_SERVE_NATIVE && !r->source && !r->target) return 0;
    if (!r->source || !r->target)
        return nmt_error_set("%s: missing (give source and target, or neither for the first model)",
                             r->source ? "target" : "source");
    const char *source = r->source;
    if (r->api != NMT_SERVE_NATIVE && strcmp(source, "auto") == 0) {
        nmt_langid_guess guesses[NMT_SERVE_MAX_MODELS];
        if (nmt_serve_route_detect(pairs, n, (const char *const *)r->q, r->count, guesses) < 0) return -1;
        *detected = guesses[0];
        *auto_source = 1;
        source = detected->language;
    }
    if (nmt_serve_route_find(pairs, n, source, r->target, route) < 0) return -1;
    if (r->api == NMT_SERVE_NATIVE && route->second >= 0 && (r->alignment || r->alignment_map))
        return nmt_error_set("alignment: not available for a pair translated through " NMT_SERVE_PIVOT
                             " (no one model has it)");
    return 0;
}

/* A {"code", "name"} object of a language. */
static void language_object(FILE *out, const char *code) {
    fputs("{\"code\":", out);
    nmt_json_write_string(out, code);
    fputs(",\"name\":", out);
    nmt_json_write_string(out, nmt_langcode_name(code));
    fputc('}', out);
}

void nmt_serve_route_settings(FILE *out, const nmt_serve_pair *pairs, long char_limit, int keys) {
    fprintf(out,
            "{\"charLimit\":%ld,\"frontendTimeout\":500,\"apiKeys\":%s,\"keyRequired\":%s,\"suggestions\":false,"
            "\"filesTranslation\":true,\"supportedFilesFormat\":[%s]",
            char_limit > 0 ? char_limit : -1L, keys ? "true" : "false", keys ? "true" : "false",
            nmt_serve_document_formats_json);
    fputs(",\"language\":{\"source\":", out);
    language_object(out, pairs[0].source);
    fputs(",\"target\":", out);
    language_object(out, pairs[0].target);
    fputs("}}", out);
}
