/* srt: SubRip subtitles (.srt) read into the texts to translate and written back around their
 * translations, as LibreTranslate's file translation (argos-translate-files over pysrt) does.
 *
 * A file is UTF-8 (a leading byte-order mark is dropped), lines ending in "\r\n" or "\n"; cues are
 * separated by blank lines (white space only). A cue is an optional number line, a timing line (one
 * holding "-->") and its text lines; its text is its lines (trailing white space cut) joined with one
 * space. A cue without a timing line, invalid UTF-8 or a NUL byte is refused with its line named.
 *
 * Written back, each cue is its number and timing lines as they were, its translation wrapped at 40
 * columns as Python's textwrap.fill(text, width=40) wraps (nmt_serve_srt_fill), and a blank line; lines
 * end as the file's first line ended ("\r\n" or "\n"); no byte-order mark.
 */
#ifndef NMT_SERVE_SRT_H
#define NMT_SERVE_SRT_H

#include <stddef.h>

#include "base/strbuf.h"

typedef struct nmt_serve_srt_cue {
    const char *number; /* the number line ("" when the cue has none) */
    const char *timing; /* the timing line as it was */
    const char *text;   /* its text lines joined with spaces ("" when it has none) */
} nmt_serve_srt_cue;

typedef struct nmt_serve_srt {
    char *copy;              /* the lines, cut in place */
    char **lines;            /* [lines] into copy */
    nmt_serve_srt_cue *cues; /* [count] */
    int count;
    int crlf; /* lines end with "\r\n" */
} nmt_serve_srt;

/* Reads data[0, len) into *out (release with nmt_serve_srt_free, also after a failure); errors begin
 * with `what` (the file's name) and the line. */
int nmt_serve_srt_read(const char *data, size_t len, const char *what, nmt_serve_srt *out);
/* Appends the file with cue i's text replaced by translations[i] to out (0, or -1: out of memory). */
int nmt_serve_srt_write(const nmt_serve_srt *s, const char *const *translations, nmt_strbuf *out);
void nmt_serve_srt_free(nmt_serve_srt *s);

/* Appends text wrapped as Python's textwrap.fill(text, width) wraps it to out: tabs are expanded to
 * 8 columns and other white space characters become spaces; the text splits into words, runs of spaces, and hyphenated words after their hyphens
 * ("well-|known", as textwrap's break_on_hyphens); lines are filled greedily to `width` characters
 * (code points), spaces at the end of a line and at the start of a following one are dropped, and a
 * word longer than a line fills what is left of its line and goes on in the next (cut after its last
 * hyphen within that room, when it has one). Lines are joined with "\n". */
int nmt_serve_srt_fill(const char *text, int width, nmt_strbuf *out);

#endif
