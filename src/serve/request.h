/* request: the bodies of the translation server's POST requests, parsed strictly, and the JSON of
 * its answers.
 *
 * The serve layer (src/serve) sits on top of src/api: request (bodies in, JSON out), batcher (one
 * queue and decoding thread shared by all requests), server (HTTP over libmicrohttpd, the endpoints,
 * metrics, access log) and page (the HTML page at GET /). Nothing below src/serve includes it.
 *
 * Four request shapes, each accepted as their reference servers accept them:
 *   LibreTranslate  POST /translate, JSON {"q": string | [string], "source", "target", "format",
 *                   "alternatives", "api_key", "glossary" (glossary.h)} or the same fields as a form
 *                   (application/x-www-form-urlencoded, as libretranslatepy may send them, or
 *                   multipart/form-data, as LibreTranslate's web page posts them; q a single string);
 *   LibreTranslate  POST /translate_file, multipart/form-data with "file" (a part with a filename),
 *   files           "source", "target", "api_key"; the file becomes q[0] (file_len bytes, any bytes:
 *                   serve/document.h reads it), its name `filename`;
 *   LibreTranslate  POST /detect, JSON {"q": string | [string], "api_key"} or the same as a form;
 *   detection
 *   OpenNMT-py      POST /translator/translate, JSON [{"src": string, "id": integer}, ...] (the
 *                   model: the first item's id, as OpenNMT-py's server reads it);
 *   native          POST /v1/translate, JSON {"q": string | [string], "source", "target", "n_best":
 *                   integer, "alignment": bool, "alignment_map": bool, "api_key"}.
 * A body is read as JSON whatever its Content-Type says (as OpenNMT-py's server does), except a
 * LibreTranslate body sent as a form. Unknown fields are skipped; a field given twice, a wrong type, a
 * missing q or src, a body that is not valid UTF-8 (a NUL byte included; a file's bytes are any) or not
 * strict JSON (json.h), a multipart body without its boundary or with more than NMT_SERVE_MAX_PARTS
 * parts is refused with a message naming the field or the byte (for LibreTranslate's endpoints in
 * LibreTranslate's words where it has them: "Invalid request: missing q parameter").
 */
#ifndef NMT_SERVE_REQUEST_H
#define NMT_SERVE_REQUEST_H

#include "serve/glossary.h"

#include <stddef.h>
#include <stdio.h>

typedef enum nmt_serve_api {
    NMT_SERVE_LIBRE,   /* LibreTranslate */
    NMT_SERVE_OPENNMT, /* OpenNMT-py */
    NMT_SERVE_NATIVE,  /* nmt's own */
    NMT_SERVE_FILE,    /* LibreTranslate's /translate_file */
    NMT_SERVE_DETECT,  /* LibreTranslate's /detect */
} nmt_serve_api;

typedef struct nmt_serve_request {
    nmt_serve_api api;
    char **q;          /* [count] texts to translate (LibreTranslate q, OpenNMT src, native q) */
    int count;
    int q_list;        /* q was a list: the answer is a list too */
    char *source;      /* source and target language codes, or NULL when absent */
    char *target;
    char *format;      /* "text" or "html" (LibreTranslate), or NULL */
    char *api_key;     /* or NULL */
    char *filename;    /* the file's name (NMT_SERVE_FILE), or NULL */
    size_t file_len;   /* the file's bytes in q[0] (NUL-terminated, and it may hold NUL bytes) */
    long alternatives; /* LibreTranslate: alternative translations wanted (0) */
    long model;        /* OpenNMT-py: the first item's id (-1: none given) */
    long n_best;       /* native: hypotheses wanted per text (1) */
    int alignment;     /* native: alignment pairs wanted (0) */
    int alignment_map; /* native: the SVG heat map of the first sentence wanted (0) */
    nmt_serve_glossary glossary; /* LibreTranslate /translate: glossary.h (none: size 0) */
} nmt_serve_request;

enum { NMT_SERVE_MAX_TEXTS = 10000, /* texts in one request */
       NMT_SERVE_MAX_PARTS = 64,     /* parts of a multipart body */
       NMT_SERVE_MAX_ALTERNATIVES = 100 };

/* Parses a body (`len` bytes, not necessarily NUL-terminated) sent with `content_type` (NULL: JSON)
 * into *out (free it with nmt_serve_request_free, also after a failure). Returns 0, or -1 with a
 * message for the client ("q: expected a string or a list of strings"). */
int nmt_serve_request_parse(nmt_serve_api api, const char *content_type, const char *body, size_t len,
                            nmt_serve_request *out);
void nmt_serve_request_free(nmt_serve_request *r);

/* One hypothesis of a translated text. */
typedef struct nmt_serve_hypothesis {
    char *text;
    double score;   /* logprob / length penalty: the rank */
    double logprob; /* natural log */
} nmt_serve_hypothesis;

/* The translation of one text of a request (its lines translated one by one and joined with '\n'). */
typedef struct nmt_serve_text {
    nmt_serve_hypothesis *hyps; /* [count], best first */
    int count;
    int *pairs;                 /* [2 * pair_count] (source piece, target piece), lines concatenated */
    int pair_count;
    int source_pieces;          /* pieces of the source and of the best translation */
    int target_pieces;
    int *source_word;           /* [source_pieces], [target_pieces]: the word of each piece (0-based, a piece */
    int *target_word;           /* starting with U+2581 starts one), or NULL: for HTML's inline tags */
} nmt_serve_text;

/* A language found in a text (LibreTranslate's detectedLanguage). */
typedef struct nmt_serve_detected {
    const char *language; /* a code */
    double confidence;    /* 0..100 */
} nmt_serve_detected;

/* Writes the answer to request r (texts[r->count]; alignment_map: an SVG document or NULL) as the
 * endpoint's JSON to out. `detected`: the language found for source "auto" (LibreTranslate), or NULL. */
void nmt_serve_response_write(FILE *out, const nmt_serve_request *r, const nmt_serve_text *texts,
                              const char *alignment_map, const nmt_serve_detected *detected);
/* LibreTranslate's /detect answer: [{"confidence", "language"}] of guesses[0..n). */
void nmt_serve_detect_write(FILE *out, const nmt_serve_detected *guesses, int n);
/* {"error": message}. */
void nmt_serve_error_write(FILE *out, const char *message);

#endif
