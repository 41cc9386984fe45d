/* corpus: read, validate and encode a parallel corpus; cache the encoding in a checksummed file.
 *
 * Two passes over the text: the first validates UTF-8, counts lines and hashes both files (cheap, and
 * it refuses bad input before any encoding); when the cache does not match, the second reads line
 * pairs, encodes them, and keeps or skips each pair.
 *
 * Cache file (host byte order, which the magic's byte-order word checks):
 *   "NMTCORP1"  u64 byte_order  u64 key  u64 num_pairs  u64 num_ids  u64 lines  u64 skipped_empty
 *   u64 skipped_long  i32 src_len[num_pairs]  i32 tgt_len[num_pairs]  i32 ids[num_ids]  u64 checksum
 * The checksum hashes everything between the magic and itself.
 */
#include "train/corpus.h"
#include "base/hash.h"
#include "base/input.h"
#include "base/io.h"
#include "base/random.h"
#include "base/utf8.h"
#include "base/util.h"
#include "compute/pool.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char cache_magic[8] = {'N', 'M', 'T', 'C', 'O', 'R', 'P', '1'};
enum { CACHE_HEADER_WORDS = 7 };
static const uint64_t cache_byte_order = 0x0102030405060708ull;

/* Resampling draws units of DRAW_UNIT consecutive pairs on the pool, each into its own buffers (kept
 * for the next epoch), so that no draw depends on the thread count; the caller then joins the units. */
enum { DRAW_UNIT = 256 };

typedef struct nmt_corpus_draws {
    int32_t *ids;       /* [cap] the unit's pieces, pair by pair, source then target */
    size_t cap, count;
    int32_t len[2 * DRAW_UNIT]; /* [DRAW_UNIT, 2] source and target pieces of each of its pairs */
    int32_t *side;      /* [side_cap] one side's draw */
    size_t side_cap;
} nmt_corpus_draws;

static int check_utf8(const nmt_lines *lines) {
    long bad = nmt_utf8_invalid_at(lines->line, lines->len);
    if (bad >= 0) return nmt_error_set("%s:%ld: invalid UTF-8 at byte %ld", lines->name, lines->number, bad + 1);
    return 0;
}

/* Validates every line of a text file as UTF-8, counts the lines and hashes them (a missing final
 * newline hashes like a present one). */
static int scan_text(const char *path, uint64_t *hash, long *count) {
    FILE *fp = nmt_input_open(path);
    if (!fp) return -1;
    nmt_lines lines;
    nmt_lines_init(&lines, fp, path);
    nmt_hash s;
    nmt_hash_init(&s);
    int more;
    while ((more = nmt_lines_next(&lines)) > 0 && check_utf8(&lines) == 0) {
        nmt_hash_add(&s, lines.line, lines.len);
        nmt_hash_add(&s, "\n", 1);
    }
    *count = lines.number;
    nmt_lines_free(&lines);
    if (nmt_input_close(fp, path) < 0 && more == 0) return -1;
    if (more != 0) return -1;
    *hash = nmt_hash_final(&s);
    return 0;
}

static int check_pair(const char *src_path, const char *tgt_path, uint64_t hash[2], long *lines) {
    long tgt_lines;
    if (scan_text(src_path, &hash[0], lines) < 0 || scan_text(tgt_path, &hash[1], &tgt_lines) < 0) return -1;
    if (*lines != tgt_lines)
        return nmt_error_set("%s has %ld lines but %s has %ld: the two sides of a parallel corpus must have one "
                             "line per sentence pair",
                             src_path, *lines, tgt_path, tgt_lines);
    return 0;
}

int nmt_corpus_check(const char *src_path, const char *tgt_path, long *lines) {
    uint64_t hash[2];
    return check_pair(src_path, tgt_path, hash, lines);
}

void nmt_corpus_free(nmt_corpus *corpus) {
    free(corpus->ids);
    free(corpus->offset);
    free(corpus->src_len);
    free(corpus->tgt_len);
    free(corpus->text);
    free(corpus->text_offset);
    for (long u = 0; u < corpus->num_draws; u++) {
        free(corpus->draws[u].ids);
        free(corpus->draws[u].side);
    }
    free(corpus->draws);
    memset(corpus, 0, sizeof *corpus);
}

/* Grows an array to hold at least `need` elements of `elem` bytes (capacity doubles). */
static int grow(void **array, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t new_cap = *cap ? *cap : 1024;
    while (new_cap < need) new_cap *= 2;
    size_t bytes;
    if (nmt_size_mul(new_cap, elem, &bytes, "corpus") < 0) return -1;
    void *p = nmt_realloc(*array, bytes);
    if (!p) return -1;
    *array = p;
    *cap = new_cap;
    return 0;
}

/* offset[] from the lengths (which must add up to num_ids). */
static int compute_offsets(nmt_corpus *c) {
    c->offset = nmt_malloc(((size_t)c->num_pairs + 1) * sizeof *c->offset);
    if (!c->offset) return -1;
    size_t at = 0;
    for (long i = 0; i < c->num_pairs; i++) {
        c->offset[i] = at;
        at += (size_t)c->src_len[i] + (size_t)c->tgt_len[i];
    }
    return 0;
}

/* Reads one line of each side; returns 1, 0 at the end of both, -1 on error or uneven ends. */
static int next_pair(nmt_lines *src, nmt_lines *tgt) {
    int a = nmt_lines_next(src);
    if (a < 0) return -1;
    int b = nmt_lines_next(tgt);
    if (b < 0) return -1;
    if (a != b)
        return nmt_error_set("%s has %ld lines but %s has more: the files changed while being read", a ? tgt->name : src->name,
                             a ? tgt->number : src->number, a ? src->name : tgt->name);
    return a;
}

int nmt_corpus_count_pairs(const char *src_path, const char *tgt_path, long *lines, long *pairs) {
    *lines = *pairs = 0;
    FILE *fs = nmt_input_open(src_path), *ft = fs ? nmt_input_open(tgt_path) : NULL;
    if (!fs || !ft) {
        nmt_input_close(fs, src_path);
        return -1;
    }
    nmt_lines src, tgt;
    nmt_lines_init(&src, fs, src_path);
    nmt_lines_init(&tgt, ft, tgt_path);
    int more;
    while ((more = next_pair(&src, &tgt)) > 0) *pairs += src.len > 0 && tgt.len > 0;
    *lines = src.number;
    nmt_lines_free(&src);
    nmt_lines_free(&tgt);
    const int src_closed = nmt_input_close(fs, src_path), tgt_closed = nmt_input_close(ft, tgt_path); /* both */
    if (src_closed < 0 || tgt_closed < 0) more = -1;
    return more;
}

static int encode_text(nmt_corpus *c, const char *src_path, const char *tgt_path, nmt_corpus_encode_fn encode,
                       const void *ctx, const nmt_corpus_options *opt) {
    FILE *fs = nmt_input_open(src_path);
    if (!fs) return -1;
    FILE *ft = nmt_input_open(tgt_path);
    if (!ft) {
        nmt_input_close(fs, src_path);
        return -1;
    }
    nmt_lines src, tgt;
    nmt_lines_init(&src, fs, src_path);
    nmt_lines_init(&tgt, ft, tgt_path);
    int32_t *src_ids = NULL, *tgt_ids = NULL;
    size_t src_cap = 0, tgt_cap = 0, src_len_cap = 0, tgt_len_cap = 0, text_cap = 0, text_offset_cap = 0,
           text_bytes = 0;
    int rc = -1, more;
    if (opt->keep_text) {
        if (grow((void **)&c->text_offset, &text_offset_cap, 1, sizeof *c->text_offset) < 0) goto done;
        c->text_offset[0] = 0;
    }
    while ((more = next_pair(&src, &tgt)) > 0) {
        size_t ns, nt;
        if (encode(ctx, src.line, src.len, &src_ids, &src_cap, &ns) < 0) {
            nmt_error_prefix("%s:%ld", src.name, src.number);
            goto done;
        }
        if (encode(ctx, tgt.line, tgt.len, &tgt_ids, &tgt_cap, &nt) < 0) {
            nmt_error_prefix("%s:%ld", tgt.name, tgt.number);
            goto done;
        }
        if (opt->skip_empty && (ns == 0 || nt == 0)) {
            c->skipped_empty++;
            continue;
        }
        if (opt->max_length > 0 && (ns > (size_t)opt->max_length || nt > (size_t)opt->max_length)) {
            c->skipped_long++;
            continue;
        }
        if (grow((void **)&c->ids, &c->ids_cap, c->num_ids + ns + nt, sizeof *c->ids) < 0) goto done;
        if (opt->keep_text) {
            if (grow((void **)&c->text, &text_cap, text_bytes + src.len + tgt.len, 1) < 0 ||
                grow((void **)&c->text_offset, &text_offset_cap, 2 * (size_t)c->num_pairs + 3,
                     sizeof *c->text_offset) < 0)
                goto done;
            if (src.len > 0) memcpy(c->text + text_bytes, src.line, src.len);
            if (tgt.len > 0) memcpy(c->text + text_bytes + src.len, tgt.line, tgt.len);
            c->text_offset[2 * c->num_pairs + 1] = text_bytes + src.len;
            c->text_offset[2 * c->num_pairs + 2] = text_bytes += src.len + tgt.len;
        }
        if (grow((void **)&c->src_len, &src_len_cap, (size_t)c->num_pairs + 1, sizeof *c->src_len) < 0 ||
            grow((void **)&c->tgt_len, &tgt_len_cap, (size_t)c->num_pairs + 1, sizeof *c->tgt_len) < 0)
            goto done;
        /* An empty side (kept when skip_empty is off) may have no buffer at all: memcpy must not see NULL. */
        if (ns > 0) memcpy(c->ids + c->num_ids, src_ids, ns * sizeof *src_ids);
        if (nt > 0) memcpy(c->ids + c->num_ids + ns, tgt_ids, nt * sizeof *tgt_ids);
        c->num_ids += ns + nt;
        c->src_len[c->num_pairs] = (int32_t)ns;
        c->tgt_len[c->num_pairs] = (int32_t)nt;
        c->num_pairs++;
    }
    if (more == 0) rc = compute_offsets(c);
done:
    free(src_ids);
    free(tgt_ids);
    nmt_lines_free(&src);
    nmt_lines_free(&tgt);
    if (nmt_input_close(fs, src_path) < 0 || nmt_input_close(ft, tgt_path) < 0) rc = -1;
    return rc;
}

/* Loads the cache if it exists and carries `key` and a good checksum: 1 = loaded, 0 = absent or
 * stale or damaged (to be rewritten), -1 = an error (a cache that cannot be read, out of memory). */
static int cache_load(nmt_corpus *c, const char *path, uint64_t key, long lines) {
    char *blob;
    size_t size;
    if (!nmt_file_exists(path)) return 0;
    if (nmt_read_regular_file(path, NMT_READ_MAX, "a corpus cache", &blob, &size) < 0) return -1;
    int loaded = 0;
    uint64_t head[CACHE_HEADER_WORDS];
    const size_t head_bytes = sizeof cache_magic + sizeof head;
    if (size < head_bytes + sizeof(uint64_t) || memcmp(blob, cache_magic, sizeof cache_magic) != 0) goto done;
    memcpy(head, blob + sizeof cache_magic, sizeof head);
    uint64_t pairs = head[2], ids = head[3];
    if (head[0] != cache_byte_order || head[1] != key || (long)head[4] != lines || pairs > size || ids > size ||
        size != head_bytes + (2 * pairs + ids) * sizeof(int32_t) + sizeof(uint64_t))
        goto done;
    uint64_t checksum;
    memcpy(&checksum, blob + size - sizeof checksum, sizeof checksum);
    if (checksum != nmt_hash_bytes(blob + sizeof cache_magic, size - sizeof cache_magic - sizeof checksum)) goto done;
    c->num_pairs = (long)pairs;
    c->num_ids = (size_t)ids;
    c->lines = lines;
    c->skipped_empty = (long)head[5];
    c->skipped_long = (long)head[6];
    c->src_len = nmt_malloc(pairs * sizeof(int32_t));
    c->tgt_len = nmt_malloc(pairs * sizeof(int32_t));
    c->ids = nmt_malloc(ids * sizeof(int32_t));
    if (!c->src_len || !c->tgt_len || !c->ids) {
        loaded = -1;
        goto done;
    }
    const char *p = blob + head_bytes;
    memcpy(c->src_len, p, pairs * sizeof(int32_t));
    memcpy(c->tgt_len, p + pairs * sizeof(int32_t), pairs * sizeof(int32_t));
    memcpy(c->ids, p + 2 * pairs * sizeof(int32_t), ids * sizeof(int32_t));
    uint64_t total = 0;
    for (uint64_t i = 0; i < pairs; i++) {
        if (c->src_len[i] < 0 || c->tgt_len[i] < 0) goto done;
        total += (uint64_t)c->src_len[i] + (uint64_t)c->tgt_len[i];
    }
    if (total != ids) goto done;
    loaded = compute_offsets(c) < 0 ? -1 : 1;
done:
    free(blob);
    if (loaded != 1) {
        int failed = loaded < 0;
        nmt_corpus_free(c);
        return failed ? -1 : 0;
    }
    c->from_cache = 1;
    return 1;
}

static int cache_save(const nmt_corpus *c, const char *path, uint64_t key) {
    uint64_t head[CACHE_HEADER_WORDS] = {cache_byte_order, key, (uint64_t)c->num_pairs, c->num_ids, (uint64_t)c->lines,
                                         (uint64_t)c->skipped_empty, (uint64_t)c->skipped_long};
    nmt_hash s;
    nmt_hash_init(&s);
    const void *parts[] = {head, c->src_len, c->tgt_len, c->ids};
    const size_t sizes[] = {sizeof head, (size_t)c->num_pairs * sizeof(int32_t), (size_t)c->num_pairs * sizeof(int32_t),
                            c->num_ids * sizeof(int32_t)};
    nmt_atomic_file f;
    if (nmt_atomic_open(&f, path) < 0) return -1;
    if (nmt_io_write(f.fp, cache_magic, sizeof cache_magic, path) < 0) goto fail;
    for (int i = 0; i < 4; i++) {
        nmt_hash_add(&s, parts[i], sizes[i]);
        if (nmt_io_write(f.fp, parts[i], sizes[i], path) < 0) goto fail;
    }
    uint64_t checksum = nmt_hash_final(&s);
    if (nmt_io_write(f.fp, &checksum, sizeof checksum, path) < 0) goto fail;
    return nmt_atomic_commit(&f);
fail:
    nmt_atomic_abort(&f);
    return -1;
}

int nmt_corpus_read(nmt_corpus *c, const char *src_path, const char *tgt_path, nmt_corpus_encode_fn encode,
                    const void *encode_ctx, const nmt_corpus_options *opt) {
    memset(c, 0, sizeof *c);
    uint64_t hash[2];
    long src_lines;
    if (check_pair(src_path, tgt_path, hash, &src_lines) < 0) return -1;
    uint64_t key_words[] = {1 /* cache format */, hash[0], hash[1], opt->encoder_hash, (uint64_t)opt->max_length,
                            (uint64_t)opt->skip_empty};
    const uint64_t key = nmt_hash_bytes(key_words, sizeof key_words);
    if (opt->cache_path && !opt->keep_text) {
        int loaded = cache_load(c, opt->cache_path, key, src_lines);
        if (loaded < 0) return -1;
        if (loaded) {
            c->key = key;
            return 0;
        }
    }
    c->lines = src_lines;
    if (encode_text(c, src_path, tgt_path, encode, encode_ctx, opt) < 0 ||
        (opt->cache_path && cache_save(c, opt->cache_path, key) < 0)) {
        nmt_corpus_free(c);
        return -1;
    }
    c->key = key;
    return 0;
}

int nmt_corpus_join(nmt_corpus *out, const nmt_corpus *parts, const int *times, int n) {
    memset(out, 0, sizeof *out);
    size_t ids = 0, text = 0, pairs = 0;
    int with_text = n > 0;
    nmt_hash key;
    nmt_hash_init(&key);
    const uint64_t head[2] = {2 /* join format */, (uint64_t)n};
    nmt_hash_add(&key, head, sizeof head);
    for (int p = 0; p < n; p++) {
        const nmt_corpus *c = &parts[p];
        const size_t r = (size_t)times[p], chars = c->text_offset ? c->text_offset[2 * c->num_pairs] : 0;
        ids += r * c->num_ids;
        pairs += r * (size_t)c->num_pairs;
        text += r * chars;
        with_text &= c->text_offset != NULL;
        out->lines += c->lines;
        out->skipped_empty += c->skipped_empty;
        out->skipped_long += c->skipped_long;
        const uint64_t part[2] = {c->key, (uint64_t)r};
        nmt_hash_add(&key, part, sizeof part);
    }
    if (pairs > (size_t)LONG_MAX || ids > (size_t)INT64_MAX / 2) return nmt_error_set("the joined corpus is too large");
    out->num_pairs = (long)pairs;
    out->num_ids = out->ids_cap = ids;
    out->ids = nmt_malloc((ids ? ids : 1) * sizeof *out->ids);
    out->src_len = nmt_malloc((pairs ? pairs : 1) * sizeof *out->src_len);
    out->tgt_len = nmt_malloc((pairs ? pairs : 1) * sizeof *out->tgt_len);
    if (with_text) {
        out->text = nmt_malloc(text ? text : 1);
        out->text_offset = nmt_malloc((2 * pairs + 1) * sizeof *out->text_offset);
    }
    if (!out->ids || !out->src_len || !out->tgt_len || (with_text && (!out->text || !out->text_offset))) goto fail;
    size_t at_ids = 0, at_pairs = 0, at_text = 0;
    for (int p = 0; p < n; p++) {
        const nmt_corpus *c = &parts[p];
        const size_t m = (size_t)c->num_pairs, chars = with_text ? c->text_offset[2 * m] : 0;
        for (int r = 0; r < times[p]; r++) {
            if (c->num_ids) memcpy(out->ids + at_ids, c->ids, c->num_ids * sizeof *c->ids);
            if (m) {
                memcpy(out->src_len + at_pairs, c->src_len, m * sizeof *c->src_len);
                memcpy(out->tgt_len + at_pairs, c->tgt_len, m * sizeof *c->tgt_len);
            }
            if (with_text) {
                if (chars) memcpy(out->text + at_text, c->text, chars);
                for (size_t j = 0; j < 2 * m; j++) out->text_offset[2 * at_pairs + j] = at_text + c->text_offset[j];
            }
            at_ids += c->num_ids;
            at_pairs += m;
            at_text += chars;
        }
    }
    if (with_text) out->text_offset[2 * pairs] = at_text;
    if (compute_offsets(out) < 0) goto fail;
    out->key = nmt_hash_final(&key);
    return 0;
fail:
    nmt_corpus_free(out);
    return -1;
}

typedef struct resample_task {
    nmt_corpus *corpus;
    nmt_corpus_sample_fn sample;
    const void *ctx;
    uint64_t seed;
    int max_length;
    atomic_int failed;
    char error[1024]; /* the first failure's message, from the worker's thread */
} resample_task;

static int draw_unit(const resample_task *t, long unit) {
    const nmt_corpus *c = t->corpus;
    nmt_corpus_draws *d = &c->draws[unit];
    const long first = unit * DRAW_UNIT, end = first + DRAW_UNIT < c->num_pairs ? first + DRAW_UNIT : c->num_pairs;
    size_t count = 0;
    d->count = 0;
    for (long i = first; i < end; i++)
        for (int k = 0; k < 2; k++) {
            const size_t from = c->text_offset[2 * i + k], len = c->text_offset[2 * i + k + 1] - from;
            const uint64_t draw = nmt_random_at(t->seed, 2 * (uint64_t)i + (uint64_t)k) | 1;
            if (t->sample(t->ctx, c->text + from, len, draw, &d->side, &d->side_cap, &count) < 0 ||
                (t->max_length > 0 && count > (size_t)t->max_length &&
                 t->sample(t->ctx, c->text + from, len, 0, &d->side, &d->side_cap, &count) < 0) ||
                grow((void **)&d->ids, &d->cap, d->count + count, sizeof *d->ids) < 0)
                return -1;
            if (count > 0) memcpy(d->ids + d->count, d->side, count * sizeof *d->side);
            d->len[2 * (i - first) + k] = (int32_t)count;
            d->count += count;
        }
    return 0;
}

static void draw_units(void *ctx, long begin, long end) {
    resample_task *t = ctx;
    for (long u = begin; u < end && !atomic_load(&t->failed); u++)
        if (draw_unit(t, u) < 0 && atomic_exchange(&t->failed, 1) == 0)
            snprintf(t->error, sizeof t->error, "%s", nmt_error());
}

int nmt_corpus_resample(nmt_corpus *c, nmt_corpus_sample_fn sample, const void *ctx, uint64_t seed, int max_length) {
    if (!c->text_offset) return nmt_error_set("the corpus was read without its text: nothing to resample");
    const long units = (c->num_pairs + DRAW_UNIT - 1) / DRAW_UNIT;
    if (!c->draws) {
        if (!(c->draws = nmt_calloc((size_t)units, sizeof *c->draws))) return -1;
        c->num_draws = units;
    }
    resample_task t = {.corpus = c, .sample = sample, .ctx = ctx, .seed = seed, .max_length = max_length};
    atomic_init(&t.failed, 0);
    nmt_pool_for(units, 1, draw_units, &t);
    if (atomic_load(&t.failed)) return nmt_error_set("%s", t.error);
    size_t total = 0;
    for (long u = 0; u < units; u++) total += c->draws[u].count;
    if (grow((void **)&c->ids, &c->ids_cap, total, sizeof *c->ids) < 0) return -1;
    size_t at = 0;
    for (long u = 0; u < units; u++) {
        const nmt_corpus_draws *d = &c->draws[u];
        if (d->count > 0) memcpy(c->ids + at, d->ids, d->count * sizeof *d->ids);
        for (long i = u * DRAW_UNIT, j = 0; i < c->num_pairs && j < DRAW_UNIT; i++, j++) {
            c->offset[i] = at;
            c->src_len[i] = d->len[2 * j];
            c->tgt_len[i] = d->len[2 * j + 1];
            at += (size_t)d->len[2 * j] + (size_t)d->len[2 * j + 1];
        }
    }
    c->num_ids = total;
    return 0;
}
