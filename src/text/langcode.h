/* langcode: language codes as models record them and LibreTranslate's clients send them.
 *
 * A code is ISO 639-1 (two lowercase letters of the standard's list, plus "zt", LibreTranslate's
 * traditional Chinese) or ISO 639-3 (three lowercase letters, not checked against the list), with
 * at most one subtag after a '-' (2 to 8 letters or digits: "zh-Hans", "pt-BR"), 15 bytes in all.
 * A file name's suffix counts as a language only when it is a listed ISO 639-1 code ("train.en"),
 * since common suffixes such as "src", "tgt" or "txt" have the shape of ISO 639-3 codes.
 */
#ifndef NMT_LANGCODE_H
#define NMT_LANGCODE_H

#include <stddef.h>

enum { NMT_LANGCODE_MAX = 16 }; /* bytes of a code with its NUL */

/* 0 when code is a language code as above, else -1 with a message naming `what` and the code. */
int nmt_langcode_check(const char *code, const char *what);
/* 1 when code is a listed ISO 639-1 code ("en"), else 0. */
int nmt_langcode_is_iso639_1(const char *code);
/* The language of a file name's suffix ("/data/train.en" -> "en"; before a ".gz": "train.en.gz") into
 * out[NMT_LANGCODE_MAX]: 1 when the suffix is a listed ISO 639-1 code, else 0 with out empty. */
int nmt_langcode_of_path(const char *path, char out[NMT_LANGCODE_MAX]);
/* The English name of a code's language ("de" -> "German", "zh-Hans" -> "Chinese"); the code itself
 * when it is not listed. */
const char *nmt_langcode_name(const char *code);

#endif
