/* routes: the language pairs of the models a server holds, and how a request's pair is translated
 * with them -- by the model of that pair, or in two steps through English (source -> en by one
 * model, en -> target by another) where no model has the pair -- and LibreTranslate's /languages.
 *
 * /languages lists every language a model reads or writes, in the order the models first name
 * them, each with its LibreTranslate name and its targets: the targets of its own models, then those
 * reachable through English, each once. A pair no route serves is refused in LibreTranslate's words
 * ("xx is not supported" for a language no model knows; "German (de) is not available as a target
 * language from Arabic (ar)" for a pair without a route), followed by the pairs this server holds.
 */
#ifndef NMT_SERVE_ROUTES_H
#define NMT_SERVE_ROUTES_H

#include "serve/request.h"
#include "text/langid.h"

#include <stdio.h>

typedef struct nmt_serve_pair {
    char source[16], target[16]; /* language codes (text/langcode.h) */
} nmt_serve_pair;

/* The models that translate a pair: first, then second (-1: one step). */
typedef struct nmt_serve_route {
    int first, second;
} nmt_serve_route;

enum { NMT_SERVE_MAX_MODELS = 64 }; /* models one server holds at most */

/* The pivot language of two-step routes. */
#define NMT_SERVE_PIVOT "en"

/* Finds the route of source -> target over pairs[0..n): the first model of the pair, else the first
 * models of source -> en and en -> target. Returns 0, or -1 with LibreTranslate's message. */
int nmt_serve_route_find(const nmt_serve_pair *pairs, int n, const char *source, const char *target,
                         nmt_serve_route *out);
/* The languages models translate from (those with a target), each once in the order of the models,
 * into out[0..n); returns their count. */
int nmt_serve_route_sources(const nmt_serve_pair *pairs, int n, const char **out);
/* The languages of texts[0..count) (as one text) among those the models translate from, as
 * nmt_langid_detect with that set answers (guesses[0]: the best one CLD2 scored, else the first
 * of them with confidence 0; room for NMT_SERVE_MAX_MODELS). Returns the number of guesses or -1. */
int nmt_serve_route_detect(const nmt_serve_pair *pairs, int n, const char *const *texts, int count,
                           nmt_langid_guess *guesses);
/* The route of a request: OpenNMT-py's id (none: the first model; any id when there is one model,
 * as OpenNMT-py's own configurations number theirs freely); the native source and target
 * (neither: the first model; alignments only in one step); LibreTranslate's source and target, source
 * "auto" being the language detected (into *detected, *auto_source = 1). 0, or -1 with a message
 * for the client. */
int nmt_serve_route_request(const nmt_serve_pair *pairs, int n, const nmt_serve_request *r, nmt_serve_route *route,
                            nmt_langid_guess *detected, int *auto_source);
/* Writes LibreTranslate's /languages answer: [{"code", "name", "targets"}]. */
void nmt_serve_route_languages(FILE *out, const nmt_serve_pair *pairs, int n);
/* Writes LibreTranslate's /frontend/settings answer: the limits and keys of this server (char_limit
 * <= 0: none, -1; keys: a key is needed), no suggestions, file translation of the formats
 * serve/document.h takes, the first model's language pair, and frontendTimeout, the pause after typing
 * before a frontend asks, at LibreTranslate's 500 ms. */
void nmt_serve_route_settings(FILE *out, const nmt_serve_pair *pairs, long char_limit, int keys);

#endif
