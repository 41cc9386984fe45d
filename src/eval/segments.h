/* segments: hypothesis and reference files read into streams of segments, as sacreBLEU reads them.
 *
 * A file is read whole (nmt_read_file), checked for UTF-8 line by line, split on '\n' and each line
 * stripped of trailing whitespace (Python's str.rstrip). Its lines become one stream, or several
 * parallel ones when a line holds tab-separated columns:
 *   NMT_SEGMENTS_LINES    one segment per line;
 *   NMT_SEGMENTS_COLUMNS  `columns` tab-separated segments per line (-nr N: N references), split at
 *                         most columns - 1 times, so the last one keeps any further tabs;
 *   NMT_SEGMENTS_STDIN    sacreBLEU's standard input: lines also end at '\r' (universal newlines),
 *                         the first line's tabs fix the number of systems, every later line must have
 *                         as many, and fields after the first line are stripped one by one; an empty
 *                         input is one empty line.
 * Errors name the file and the line ("h.txt:2: invalid UTF-8 at byte 5"). Gzipped files are refused
 * (by the ".gz" name) rather than scored as bytes.
 */
#ifndef NMT_SEGMENTS_H
#define NMT_SEGMENTS_H

#include <stddef.h>

/* One stream: segment i is lines[i][0..lens[i]), NUL-terminated, inside its file's text. */
typedef struct nmt_segments {
    const char *name;   /* the file's name, for messages (owned by the nmt_segments_file) */
    const char **lines; /* [count] */
    size_t *lens;       /* [count] */
    size_t count, cap;
} nmt_segments;

typedef enum nmt_segments_mode {
    NMT_SEGMENTS_LINES,
    NMT_SEGMENTS_COLUMNS,
    NMT_SEGMENTS_STDIN,
} nmt_segments_mode;

/* A file read into `count` parallel streams, which point into `text`. */
typedef struct nmt_segments_file {
    char *name;              /* as given to nmt_segments_file_read */
    char *text;              /* the file's bytes, cut into NUL-terminated segments */
    nmt_segments *streams;   /* [count] */
    int count;
} nmt_segments_file;

/* Reads `path` (named `name` in messages, e.g. "<stdin>" for "/dev/stdin") in the given mode;
 * `columns` is the number of streams for NMT_SEGMENTS_COLUMNS (ignored otherwise). 0, or -1 with the
 * error set and *file holding nothing to free. */
int nmt_segments_file_read(nmt_segments_file *file, const char *path, const char *name, nmt_segments_mode mode,
                          long columns);
void nmt_segments_file_free(nmt_segments_file *file);

/* Appends a segment to a stream (the text stays the caller's). 0 or -1 (memory). */
int nmt_segments_push(nmt_segments *stream, const char *line, size_t len);

/* How many segments end in " .", the mark of tokenized text (sacreBLEU warns from 100 on). */
long nmt_segments_tokenized_periods(const nmt_segments *stream);

#endif
