/* json: a strict JSON (RFC 8259) reader pulled token by token, and a string writer.
 *
 * The reader has no tree: the caller knows the shape it expects (the safetensors header, a line of
 * train.log.jsonl) and asks for each token in turn, so unexpected fields are refused or skipped where
 * the caller decides, and every error points at the byte where the text went wrong:
 *     nmt_json j;
 *     if (nmt_json_init(&j, text, len, "model.safetensors", "safetensors header", 0, 8) < 0) ...;
 *     if (nmt_json_expect(&j, '{') < 0) ...;
 *     if (!nmt_json_accept(&j, '}')) do { char *key; nmt_json_string(&j, &key); ... } while (nmt_json_accept(&j, ','));
 *
 * Strict means: UTF-8 only (checked by nmt_json_init), no trailing commas, no comments, escapes checked
 * (\u0000 and unpaired surrogates refused, since the strings become C strings), numbers in the RFC's
 * grammar (no leading zeros, no "+1", no ".5", no NaN or Infinity), nesting at most NMT_JSON_MAX_DEPTH.
 *
 * Messages name the place: with line = 0, "NAME: bad WHAT at byte N: ..." (N counts from the start of
 * the file: `offset` is where the text begins in it); with line > 0 (one line of a JSON Lines file),
 * "NAME:LINE:COLUMN: bad WHAT: ..." (COLUMN in bytes, from 1).
 */
#ifndef NMT_JSON_H
#define NMT_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/strbuf.h"
#include "base/util.h"

enum { NMT_JSON_MAX_DEPTH = 64 };

typedef struct nmt_json {
    const char *text;
    size_t len, pos;   /* pos: the next byte to read */
    const char *name;  /* the file, for messages */
    const char *what;  /* what the text is, for messages ("safetensors header", "log record") */
    long line;         /* > 0: the text is this line of the file */
    size_t offset;     /* bytes of the file before the text (line = 0) */
} nmt_json;

/* Sets up a reader over text[0, len) (not necessarily NUL-terminated); fails (error set, at the
 * offending byte) when the text is not valid UTF-8. */
int nmt_json_init(nmt_json *j, const char *text, size_t len, const char *name, const char *what, long line,
                  size_t offset);
/* Sets the error "<place>: <message>" for the reader's current position; returns -1. */
int nmt_json_error(const nmt_json *j, const char *fmt, ...) NMT_PRINTF(2, 3);

/* Skips whitespace; consumes `c` and returns 1 if it comes next, else returns 0. */
int nmt_json_accept(nmt_json *j, char c);
/* Skips whitespace; the next byte (without consuming it), or -1 at the end of the text: callers whose
 * value may have several types ('"', '[', '{', a digit, ...) look before they read. */
int nmt_json_peek(nmt_json *j);
/* Skips whitespace and consumes `c`, or fails with "expected 'c', found ...". */
int nmt_json_expect(nmt_json *j, char c);
/* Skips whitespace; consumes the literal `word` (null, true, false) and returns 1 if it comes next. */
int nmt_json_accept_word(nmt_json *j, const char *word);
/* A string, unescaped into a new NUL-terminated buffer (*out; the caller frees it). */
int nmt_json_string(nmt_json *j, char **out);
/* A non-negative integer that fits in int64 (no fraction, no exponent). */
int nmt_json_count(nmt_json *j, int64_t *out);
/* Any number, as the nearest double; one that overflows a double is refused. */
int nmt_json_number(nmt_json *j, double *out);
/* Any value (string, number, object, array, true, false, null), checked and discarded. */
int nmt_json_skip_value(nmt_json *j);
/* Skips trailing whitespace; fails if anything else is left. */
int nmt_json_end(nmt_json *j);

/* Writes s as a JSON string: quotes, \" and \\ escaped, control characters as \u00XX. */
void nmt_json_write_string(FILE *out, const char *s);
/* The same appended to out (a failed append marks out->failed). */
void nmt_json_append_string(nmt_strbuf *out, const char *s);

#endif
