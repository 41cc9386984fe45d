/* glossary: the /translate request's glossary field, read from JSON and bounded; see glossary.h. */
#include "serve/glossary.h"

#include "base/util.h"

#include <stdlib.h>
#include <string.h>

void nmt_serve_glossary_free(nmt_serve_glossary *g) {
    for (int i = 0; i < 2 * g->size; i++) free(g->terms[i]);
    free(g->terms);
    memset(g, 0, sizeof *g);
}

/* Checks one term of entry `index` (side: "source" or "target"). */
static int check_term(const char *term, int index, const char *side) {
    const size_t n = strlen(term);
    if (n == 0) return nmt_error_set("glossary[%d]: the %s term is empty", index, side);
    if (n > NMT_SERVE_MAX_TERM)
        return nmt_error_set("glossary[%d]: the %s term has %zu bytes, more than %d", index, side, n, NMT_SERVE_MAX_TERM);
    if (strpbrk(term, "\t\r\n")) return nmt_error_set("glossary[%d]: the %s term holds a tab or a line break", index, side);
    return 0;
}

/* Appends the pair (it takes both strings, freeing them on failure). */
static int add_pair(nmt_serve_glossary *g, char *source, char *target) {
    const int index = g->size;
    if (index >= NMT_SERVE_MAX_GLOSSARY) nmt_error_set("glossary: more than %d entries", NMT_SERVE_MAX_GLOSSARY);
    else if (check_term(source, index, "source") == 0 && check_term(target, index, "target") == 0) {
        char **terms = nmt_realloc(g->terms, 2 * ((size_t)index + 1) * sizeof *terms);
        if (terms) {
            g->terms = terms;
            terms[2 * index] = source;
            terms[2 * index + 1] = target;
            g->size++;
            return 0;
        }
    }
    free(source);
    free(target);
    return -1;
}

/* A JSON string that is entry `index`'s term. */
static int term(nmt_json *j, int index, char **out) {
    *out = NULL;
    if (nmt_json_peek(j) != '"') return nmt_json_error(j, "glossary[%d]: expected a string", index);
    return nmt_json_string(j, out);
}

/* Entry g->size: a source term, `between`, a target term and `after` ('\0': nothing), appended to g. */
static int entry(nmt_json *j, nmt_serve_glossary *g, char between, char after) {
    const int index = g->size;
    const char *expected = between == ',' ? "a pair of two terms" : "':' after the source term";
    char *source = NULL, *target = NULL;
    int rc = term(j, index, &source);
    if (rc == 0 && !nmt_json_accept(j, between)) rc = nmt_json_error(j, "glossary[%d]: expected %s", index, expected);
    if (rc == 0) rc = term(j, index, &target);
    if (rc == 0 && after && !nmt_json_accept(j, after)) rc = nmt_json_error(j, "glossary[%d]: expected %s", index, expected);
    if (rc < 0) {
        free(source);
        free(target);
        return -1;
    }
    return add_pair(g, source, target);
}

/* [[source, target], ...] */
static int pairs(nmt_json *j, nmt_serve_glossary *g) {
    nmt_json_expect(j, '[');
    if (nmt_json_accept(j, ']')) return 0;
    do {
        if (!nmt_json_accept(j, '['))
            return nmt_json_error(j, "glossary[%d]: expected a [source term, target term] pair", g->size);
        if (entry(j, g, ',', ']') < 0) return -1;
    } while (nmt_json_accept(j, ','));
    return nmt_json_expect(j, ']');
}

/* {source: target, ...} */
static int object(nmt_json *j, nmt_serve_glossary *g) {
    nmt_json_expect(j, '{');
    if (nmt_json_accept(j, '}')) return 0;
    do {
        if (entry(j, g, ':', '\0') < 0) return -1;
    } while (nmt_json_accept(j, ','));
    return nmt_json_expect(j, '}');
}

int nmt_serve_glossary_json(nmt_json *j, nmt_serve_glossary *g) {
    if (g->given++) return nmt_error_set("glossary: given twice");
    const int c = nmt_json_peek(j);
    if (c == '[') return pairs(j, g);
    if (c == '{') return object(j, g);
    return nmt_json_error(j, "glossary: expected a list of [source term, target term] pairs or an object {source: target}");
}

int nmt_serve_glossary_text(const char *text, size_t len, nmt_serve_glossary *g) {
    nmt_json j;
    if (nmt_json_init(&j, text, len, "glossary", "field", 0, 0) < 0 || nmt_serve_glossary_json(&j, g) < 0) return -1;
    return nmt_json_end(&j);
}
