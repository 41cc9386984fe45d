/* fuzz_corpus: the parallel-corpus reader (nmt_corpus_check, nmt_corpus_read and its cache) on
 * arbitrary text.
 *
 * Input: one options byte (bit 0: skip_empty; bits 1-3: max_length, 0 = none), then the source file's
 * bytes, a 0xFF byte, and the target file's bytes (no 0xFF: the target is empty). 0xFF never occurs in
 * UTF-8, and every other invalid byte still can. The encoder maps byte b to id 4 + b, one piece per
 * byte, so the expected pieces of each line are its bytes.
 *
 * Properties, against expectations the harness works out itself from the two texts:
 *   - a side that is not UTF-8 is refused with exactly "FILE:LINE: invalid UTF-8 at byte B" (the first
 *     bad line of the source, else of the target), and sides of different line counts with the
 *     message naming both files and counts; otherwise the corpus is read;
 *   - every line pair is kept or counted as skipped (empty or too long) exactly as the options say,
 *     and each kept pair holds its lines' bytes at the offsets given;
 *   - a second read loads the cache and gives the same corpus; a cache with one byte changed (which
 *     byte chosen by the input) or cut short is never loaded, and the text is read again instead;
 *   - with the 1st, 2nd, ... allocation failing, reading fails with "out of memory".
 */
#include "fuzz.h"
#include "train/corpus.h"
#include "base/io.h"
#include "base/utf8.h"

static int byte_encode(const void *ctx, const char *text, size_t len, int32_t **ids, size_t *cap, size_t *count) {
    (void)ctx;
    if (*cap < len) {
        int32_t *grown = nmt_realloc(*ids, len * sizeof *grown);
        if (!grown) return -1;
        *ids = grown;
        *cap = len;
    }
    for (size_t i = 0; i < len; i++) (*ids)[i] = 4 + (unsigned char)text[i];
    *count = len;
    return 0;
}

/* One side's text split into lines as nmt_lines splits it ('\n' ends a line; a final line needs none). */
typedef struct side {
    const char *path;
    const uint8_t *text;
    size_t size;
    long lines;
} side;

static long count_lines(const uint8_t *text, size_t size) {
    long n = 0;
    for (size_t i = 0; i < size; i++) n += text[i] == '\n';
    return n + (size > 0 && text[size - 1] != '\n');
}

/* The line after *at (which starts a line): its start, its length, and *at moved past it. */
static const uint8_t *next_line(const side *s, size_t *at, size_t *len) {
    const uint8_t *start = s->text + *at;
    const uint8_t *end = memchr(start, '\n', s->size - *at);
    *len = end ? (size_t)(end - start) : s->size - *at;
    *at += *len + (end != NULL);
    return start;
}

/* The error nmt must give for the first invalid line of a side, or "" when the side is UTF-8. */
static void utf8_error(const side *s, char *message, size_t cap) {
    message[0] = '\0';
    size_t at = 0, len;
    for (long line = 1; at < s->size; line++) {
        const uint8_t *start = next_line(s, &at, &len);
        long bad = nmt_utf8_invalid_at((const char *)start, len);
        if (bad >= 0) {
            snprintf(message, cap, "%s:%ld: invalid UTF-8 at byte %ld", s->path, line, bad + 1);
            return;
        }
    }
}

static void check_corpus(const nmt_corpus *c, const side *src, const side *tgt, const nmt_corpus_options *opt) {
    FUZZ_CHECK(c->lines == src->lines, "%ld lines, expected %ld", c->lines, src->lines);
    size_t src_at = 0, tgt_at = 0, total = 0;
    long kept = 0, empty = 0, too_long = 0;
    for (long line = 0; line < src->lines; line++) {
        size_t ns, nt;
        const uint8_t *s = next_line(src, &src_at, &ns), *t = next_line(tgt, &tgt_at, &nt);
        if (opt->skip_empty && (ns == 0 || nt == 0)) {
            empty++;
            continue;
        }
        if (opt->max_length > 0 && (ns > (size_t)opt->max_length || nt > (size_t)opt->max_length)) {
            too_long++;
            continue;
        }
        FUZZ_CHECK(kept < c->num_pairs, "line %ld: only %ld pairs kept", line + 1, c->num_pairs);
        FUZZ_CHECK(c->src_len[kept] == (int32_t)ns && c->tgt_len[kept] == (int32_t)nt && c->offset[kept] == total,
                   "pair %ld: lengths %d/%d at %zu, expected %zu/%zu at %zu", kept, c->src_len[kept], c->tgt_len[kept],
                   c->offset[kept], ns, nt, total);
        for (size_t i = 0; i < ns + nt; i++) {
            int32_t id = c->ids[c->offset[kept] + i];
            FUZZ_CHECK(id == 4 + (i < ns ? s[i] : t[i - ns]), "pair %ld: piece %zu is %d", kept, i, id);
        }
        total += ns + nt;
        kept++;
    }
    FUZZ_CHECK(c->num_pairs == kept && c->skipped_empty == empty && c->skipped_long == too_long && c->num_ids == total,
               "%ld pairs, %ld empty, %ld long, %zu ids; expected %ld, %ld, %ld, %zu", c->num_pairs, c->skipped_empty,
               c->skipped_long, c->num_ids, kept, empty, too_long, total);
}

/* memcmp for arrays that may be NULL when empty (memcmp itself must not be given NULL). */
static int same_bytes(const void *a, const void *b, size_t size) { return size == 0 || memcmp(a, b, size) == 0; }

static int same_corpus(const nmt_corpus *a, const nmt_corpus *b) {
    size_t pairs = (size_t)a->num_pairs;
    return a->num_pairs == b->num_pairs && a->num_ids == b->num_ids && a->lines == b->lines &&
           a->skipped_empty == b->skipped_empty && a->skipped_long == b->skipped_long &&
           same_bytes(a->ids, b->ids, a->num_ids * sizeof *a->ids) &&
           same_bytes(a->src_len, b->src_len, pairs * sizeof *a->src_len) &&
           same_bytes(a->tgt_len, b->tgt_len, pairs * sizeof *a->tgt_len) &&
           same_bytes(a->offset, b->offset, pairs * sizeof *a->offset);
}

typedef struct reading {
    const side *src, *tgt;
    const nmt_corpus_options *opt;
} reading;

static int read_and_free(void *context) {
    const reading *r = context;
    nmt_corpus c;
    int rc = nmt_corpus_read(&c, r->src->path, r->tgt->path, byte_encode, NULL, r->opt);
    if (rc == 0) nmt_corpus_free(&c);
    return rc;
}

/* Reads with the cache again after `damage` bytes of it were changed or cut; must equal `expected`. */
static void check_damaged_cache(const char *cache, const reading *r, const nmt_corpus *expected, size_t where,
                                int cut) {
    char *blob;
    size_t size;
    FUZZ_CHECK(nmt_read_file(cache, &blob, &size) == 0 && size > 0, "cannot read the cache: %s", nmt_error());
    where %= size;
    if (cut) size = where;
    else blob[where] ^= 0x5A;
    fuzz_file(2, "corpus.cache", blob, size);
    free(blob);
    nmt_corpus c;
    FUZZ_CHECK(nmt_corpus_read(&c, r->src->path, r->tgt->path, byte_encode, NULL, r->opt) == 0, "%s", nmt_error());
    FUZZ_CHECK(!c.from_cache, "a cache %s at byte %zu was loaded", cut ? "cut" : "changed", where);
    FUZZ_CHECK(same_corpus(&c, expected), "reading past a damaged cache gave another corpus");
    nmt_corpus_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    nmt_corpus_options opt = {.skip_empty = data[0] & 1, .max_length = (data[0] >> 1) & 7};
    const uint8_t *text = data + 1, *split = memchr(text, 0xFF, size - 1);
    size_t src_size = split ? (size_t)(split - text) : size - 1;
    side src = {.text = text, .size = src_size}, tgt = {.text = split ? split + 1 : text + size, .size = 0};
    tgt.size = split ? (size_t)(data + size - tgt.text) : 0;
    src.path = fuzz_file(0, "train.src", src.text, src.size);
    tgt.path = fuzz_file(1, "train.tgt", tgt.text, tgt.size);
    src.lines = count_lines(src.text, src.size);
    tgt.lines = count_lines(tgt.text, tgt.size);

    char expected_error[512];
    utf8_error(&src, expected_error, sizeof expected_error);
    if (!expected_error[0]) utf8_error(&tgt, expected_error, sizeof expected_error);
    if (!expected_error[0] && src.lines != tgt.lines)
        snprintf(expected_error, sizeof expected_error,
                 "%s has %ld lines but %s has %ld: the two sides of a parallel corpus must have one line per sentence pair",
                 src.path, src.lines, tgt.path, tgt.lines);

    long lines = -1;
    int rc = nmt_corpus_check(src.path, tgt.path, &lines);
    if (expected_error[0]) {
        FUZZ_CHECK(rc == -1 && strcmp(nmt_error(), expected_error) == 0, "expected '%s', got rc %d, '%s'",
                   expected_error, rc, rc ? nmt_error() : "");
        nmt_corpus c;
        rc = nmt_corpus_read(&c, src.path, tgt.path, byte_encode, NULL, &opt);
        FUZZ_CHECK(rc == -1 && strcmp(nmt_error(), expected_error) == 0, "expected '%s', got rc %d, '%s'",
                   expected_error, rc, rc ? nmt_error() : "");
        return 0;
    }
    FUZZ_CHECK(rc == 0 && lines == src.lines, "check: rc %d, %ld lines, expected %ld: %s", rc, lines, src.lines,
               nmt_error());

    const char *cache = fuzz_file(2, "corpus.cache", "", 0);
    unlink(cache);
    nmt_corpus_options cached = opt;
    cached.cache_path = cache;
    reading r = {&src, &tgt, &cached};
    nmt_corpus first, second;
    FUZZ_CHECK(nmt_corpus_read(&first, src.path, tgt.path, byte_encode, NULL, &cached) == 0, "%s", nmt_error());
    FUZZ_CHECK(!first.from_cache, "a cache that was not there was loaded");
    check_corpus(&first, &src, &tgt, &opt);
    FUZZ_CHECK(nmt_corpus_read(&second, src.path, tgt.path, byte_encode, NULL, &cached) == 0, "%s", nmt_error());
    FUZZ_CHECK(second.from_cache, "the cache just written was not loaded");
    FUZZ_CHECK(same_corpus(&first, &second), "the cache gave another corpus");
    nmt_corpus_free(&second);

    size_t where = 0;
    for (size_t i = 0; i < size; i++) where = where * 31 + data[i];
    check_damaged_cache(cache, &r, &first, where, 0);
    check_damaged_cache(cache, &r, &first, where, 1);
    nmt_corpus_free(&first);

    reading plain = {&src, &tgt, &opt};
    fuzz_alloc_sweep(read_and_free, &plain, 64);
    return 0;
}
