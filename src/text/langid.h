/* langid: the language of a text, guessed by CLD2 (Compact Language Detector 2, Debian's libcld2), the
 * answer of LibreTranslate's POST /detect and of "source": "auto".
 *
 * A guess is an ISO 639-1 code ("en"; "zt" for traditional Chinese and "he", "jv", "nb" where CLD2
 * still says "iw", "jw", "no", as LibreTranslate names them) and a confidence from 0 to 100: the
 * percentage of the text's letters that CLD2 gives to the language, halved when CLD2 calls its
 * answer unreliable (short or mixed text). CLD2 answers even on short text (its best effort); text
 * holding no letters gets nothing. Only the first NMT_LANGID_MAX_BYTES bytes are read. Restricted to
 * a set of languages (the ones a server translates), the answer lists every language of the set once:
 * those CLD2 found first, by confidence, then the others with confidence 0, in the set's order.
 */
#ifndef NMT_LANGID_H
#define NMT_LANGID_H

#include <stddef.h>

enum { NMT_LANGID_MAX_BYTES = 1 << 16 };

typedef struct nmt_langid_guess {
    char language[8]; /* ISO 639-1 code, NUL-terminated */
    double confidence; /* 0..100 */
} nmt_langid_guess;

/* Guesses the language of text[0..len) (UTF-8). With `set` (n_set codes, compared case-insensitively;
 * NULL for any language), out needs room for n_set guesses and gets one per code of the set; without
 * it, room for 3 and gets CLD2's candidates (at most 3), best first. Returns the number of guesses,
 * or -1 with a message when the text is not valid UTF-8 ("text: invalid UTF-8 at byte 7") or a code
 * of the set is longer than 7 bytes. */
int nmt_langid_detect(const char *text, size_t len, const char *const *set, int n_set, nmt_langid_guess *out);

#endif
