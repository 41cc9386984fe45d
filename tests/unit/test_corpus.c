/* Tests of corpus: pairs and their lengths, skipping and counting, the errors for mismatched line
 * counts and bad UTF-8, the cache (used when nothing changed, refreshed when anything did), and the
 * resampling of a corpus read with its text (the same on any thread count, failures on any thread reported).
 *
 * The encoder is a byte encoder (id = 4 + byte, one piece per byte, spaces dropped), so expected
 * lengths are byte counts that can be read off the test text. */
#include "train/corpus.h"
#include "base/hash.h"
#include "base/io.h"
#include "base/util.h"
#include "compute/pool.h"

#include "testing.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int encode_calls;

/* One piece per byte, spaces dropped; pure, so that pool threads may call it at once. */
static int bytes_encode(const char *text, size_t len, int32_t **ids, size_t *cap, size_t *count) {
    if (*cap < len + 1) {
        int32_t *p = nmt_realloc(*ids, (len + 1) * sizeof *p);
        if (!p) return -1;
        *ids = p;
        *cap = len + 1;
    }
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] != ' ') (*ids)[n++] = 4 + (unsigned char)text[i];
    *count = n;
    return 0;
}

static int byte_encode(const void *ctx, const char *text, size_t len, int32_t **ids, size_t *cap, size_t *count) {
    (void)ctx;
    encode_calls++;
    return bytes_encode(text, len, ids, cap, count);
}

static int failing_encode(const void *ctx, const char *text, size_t len, int32_t **ids, size_t *cap, size_t *count) {
    (void)ctx;
    if (len > 0 && text[0] == '!') return nmt_error_set("cannot encode '!'");
    return byte_encode(ctx, text, len, ids, cap, count);
}

static char *write_file(const char *name, const char *text) {
    char *path = nmt_path_join(nmt_test_tmpdir, name);
    ck_assert_int_eq(nmt_atomic_write(path, text, strlen(text)), 0);
    return path;
}

static void setup(void) {
    nmt_test_tmpdir_make();
    encode_calls = 0;
}

START_TEST(pairs_lengths_and_skips) {
    char *src = write_file("a.en", "ab\n\ncdef\nabcdefghij\nx y\n \nlast");
    char *tgt = write_file("a.de", "xyz\nq\nrs\nk\nuv w\nm\nend\n");
    nmt_corpus c;
    nmt_corpus_options opt = {.max_length = 5, .skip_empty = 1};
    ck_assert_int_eq(nmt_corpus_read(&c, src, tgt, byte_encode, NULL, &opt), 0);
    /* Line 2 (empty source) and 6 (" " encodes to nothing) are empty; line 4 (10 pieces) is too long. */
    ck_assert_int_eq(c.lines, 7);
    ck_assert_int_eq(c.skipped_empty, 2);
    ck_assert_int_eq(c.skipped_long, 1);
    ck_assert_int_eq(c.num_pairs, 4);
    const int32_t src_len[] = {2, 4, 2, 4}, tgt_len[] = {3, 2, 3, 3};
    size_t total = 0;
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(c.src_len[i], src_len[i]);
        ck_assert_int_eq(c.tgt_len[i], tgt_len[i]);
        ck_assert_uint_eq(c.offset[i], total);
        total += (size_t)(src_len[i] + tgt_len[i]);
    }
    ck_assert_uint_eq(c.num_ids, total);
    /* Pair 2 is "x y" / "uv w": pieces x, y then u, v, w. */
    const int32_t *p = c.ids + c.offset[2];
    ck_assert_int_eq(p[0], 4 + 'x');
    ck_assert_int_eq(p[1], 4 + 'y');
    ck_assert_int_eq(p[2], 4 + 'u');
    ck_assert_int_eq(p[4], 4 + 'w');
    nmt_corpus_free(&c);

    /* Without limits everything is kept. */
    nmt_corpus_options keep_all = {0};
    ck_assert_int_eq(nmt_corpus_read(&c, src, tgt, byte_encode, NULL, &keep_all), 0);
    ck_assert_int_eq(c.num_pairs, 7);
    ck_assert_int_eq(c.src_len[1], 0);
    nmt_corpus_free(&c);
    free(src);
    free(tgt);
}
END_TEST

/* Writes x.en and x.de, reads them expecting failure, and returns the error with the test
 * directory's path taken out ("x.en:2: ..."). */
static const char *read_error(const char *src_text, const char *tgt_text, nmt_corpus_encode_fn encode) {
    static char message[512];
    char *src = write_file("x.en", src_text), *tgt = write_file("x.de", tgt_text);
    nmt_corpus c;
    nmt_corpus_options opt = {0};
    ck_assert_int_eq(nmt_corpus_read(&c, src, tgt, encode, NULL, &opt), -1);
    size_t n = 0, skip = strlen(nmt_test_tmpdir) + 1;
    for (const char *e = nmt_error(); *e && n < sizeof message - 1;)
        if (strncmp(e, nmt_test_tmpdir, skip - 1) == 0 && e[skip - 1] == '/') e += skip;
        else message[n++] = *e++;
    message[n] = '\0';
    free(src);
    free(tgt);
    return message;
}

START_TEST(mismatched_line_counts_name_both_files) {
    ck_assert_str_eq(read_error("one\ntwo\nthree\n", "eins\nzwei", byte_encode),
                     "x.en has 3 lines but x.de has 2: the two sides of a parallel corpus must have one line per "
                     "sentence pair");
    ck_assert_int_eq(encode_calls, 0);
    long lines;
    char *path = nmt_path_join(nmt_test_tmpdir, "x.en");
    ck_assert_int_eq(nmt_corpus_check(path, path, &lines), 0);
    ck_assert_int_eq(lines, 3);
    free(path);
}
END_TEST

START_TEST(bad_utf8_names_file_line_and_byte) {
    /* Line 2 of the target: "ab" then a lone continuation byte, byte 3. */
    ck_assert_str_eq(read_error("fine\nal\xc3\xa9 ok\n", "gut\nab\x80z\n", byte_encode),
                     "x.de:2: invalid UTF-8 at byte 3");
    /* An overlong encoding of '/' on line 1 of the source. */
    ck_assert_str_eq(read_error("a\xc0\xaf\n", "b\n", byte_encode), "x.en:1: invalid UTF-8 at byte 2");
}
END_TEST

START_TEST(encoder_error_names_the_line) {
    ck_assert_str_eq(read_error("a\n!b\n", "c\nd\n", failing_encode), "x.en:2: cannot encode '!'");
}
END_TEST

static void read_cached(nmt_corpus *c, const char *src, const char *tgt, const char *cache, uint64_t encoder) {
    nmt_corpus_options opt = {.max_length = 100, .skip_empty = 1, .cache_path = cache, .encoder_hash = encoder};
    encode_calls = 0;
    ck_assert_int_eq(nmt_corpus_read(c, src, tgt, byte_encode, NULL, &opt), 0);
}

START_TEST(cache_is_used_until_something_changes) {
    char *src = write_file("e.en", "hello\nworld\n\n");
    char *tgt = write_file("e.de", "hallo\nwelt\nleer\n");
    char *cache = nmt_path_join(nmt_test_tmpdir, "corpus.bin");
    nmt_corpus c;
    read_cached(&c, src, tgt, cache, 7);
    ck_assert_int_eq(c.from_cache, 0);
    ck_assert_int_eq(encode_calls, 6);
    ck_assert(nmt_file_exists(cache));
    nmt_corpus first = c;

    /* Same files, same encoder: loaded, identical, no encoding. */
    read_cached(&c, src, tgt, cache, 7);
    ck_assert_int_eq(c.from_cache, 1);
    ck_assert_int_eq(encode_calls, 0);
    ck_assert_int_eq(c.num_pairs, 2);
    ck_assert_int_eq(c.skipped_empty, 1);
    ck_assert_uint_eq(c.num_ids, first.num_ids);
    ck_assert_mem_eq(c.ids, first.ids, c.num_ids * sizeof *c.ids);
    ck_assert_mem_eq(c.tgt_len, first.tgt_len, 2 * sizeof *c.tgt_len);
    nmt_corpus_free(&c);
    nmt_corpus_free(&first);

    /* A different encoder (another spm model) re-encodes. */
    read_cached(&c, src, tgt, cache, 8);
    ck_assert_int_eq(c.from_cache, 0);
    nmt_corpus_free(&c);

    /* Changed content of the same size re-encodes. */
    free(write_file("e.de", "hallo\nwald\nleer\n"));
    read_cached(&c, src, tgt, cache, 8);
    ck_assert_int_eq(c.from_cache, 0);
    ck_assert_int_eq(c.ids[c.offset[1] + 5 + 1], 4 + 'a');
    nmt_corpus_free(&c);

    /* A corrupted cache (one flipped byte in the ids) is ignored and rewritten. */
    char *blob;
    size_t size;
    ck_assert_int_eq(nmt_read_file(cache, &blob, &size), 0);
    blob[size - 12] ^= 1;
    ck_assert_int_eq(nmt_atomic_write(cache, blob, size), 0);
    read_cached(&c, src, tgt, cache, 8);
    ck_assert_int_eq(c.from_cache, 0);
    nmt_corpus_free(&c);
    read_cached(&c, src, tgt, cache, 8);
    ck_assert_int_eq(c.from_cache, 1);
    nmt_corpus_free(&c);

    /* A truncated cache likewise. */
    ck_assert_int_eq(nmt_atomic_write(cache, blob, 30), 0);
    read_cached(&c, src, tgt, cache, 8);
    ck_assert_int_eq(c.from_cache, 0);
    nmt_corpus_free(&c);
    free(blob);
    free(cache);
    free(src);
    free(tgt);
}
END_TEST

static int read_attempt(void *cache_path) {
    char *src = nmt_path_join(nmt_test_tmpdir, "f.en"), *tgt = nmt_path_join(nmt_test_tmpdir, "f.de");
    nmt_corpus c;
    nmt_corpus_options opt = {.max_length = 3, .skip_empty = 1, .cache_path = cache_path};
    int rc = src && tgt ? nmt_corpus_read(&c, src, tgt, byte_encode, NULL, &opt) : -1;
    if (rc == 0) nmt_corpus_free(&c);
    free(src);
    free(tgt);
    return rc;
}

/* A stand-in for subword sampling: seed 0 is byte_encode; another seed doubles byte k's piece where
 * bit k of the seed is set, so that draws differ in length and content and undoubling recovers the text. */
static int doubling_sample(const void *ctx, const char *text, size_t len, uint64_t seed, int32_t **ids, size_t *cap,
                           size_t *count) {
    (void)ctx;
    if (bytes_encode(text, len, ids, cap, count) < 0) return -1;
    if (seed == 0) return 0;
    int32_t bytes[64];
    size_t n = *count;
    if (n > 64) return nmt_error_set("doubling_sample takes at most 64 bytes");
    memcpy(bytes, *ids, n * sizeof *bytes);
    if (*cap < 2 * n) {
        int32_t *p = nmt_realloc(*ids, 2 * n * sizeof *p);
        if (!p) return -1;
        *ids = p;
        *cap = 2 * n;
    }
    *count = 0;
    for (size_t k = 0; k < n; k++) {
        (*ids)[(*count)++] = bytes[k];
        if (seed >> (k % 64) & 1) (*ids)[(*count)++] = -bytes[k];
    }
    return 0;
}

/* Fails on the text of line 1400 (its first bytes "1400 "), whichever thread draws it. */
static int failing_sample(const void *ctx, const char *text, size_t len, uint64_t seed, int32_t **ids, size_t *cap,
                          size_t *count) {
    if (len > 5 && memcmp(text, "1400 ", 5) == 0) return nmt_error_set("cannot draw pair 1400");
    return doubling_sample(ctx, text, len, seed, ids, cap, count);
}

/* The corpus's pieces with the doubled ones (negative) left out. */
static void undoubled(const nmt_corpus *c, int32_t *out, size_t *n) {
    *n = 0;
    for (size_t i = 0; i < c->num_ids; i++)
        if (c->ids[i] > 0) out[(*n)++] = c->ids[i];
}

START_TEST(resampling_redraws_every_side_from_the_seed) {
    char *src = write_file("s.en", "abc\nde\n\nfghij\n"), *tgt = write_file("s.de", "xy\nzzz\nq\nuvw\n");
    char *cache = nmt_path_join(nmt_test_tmpdir, "s.bin");
    nmt_corpus c, d;
    nmt_corpus_options opt = {.max_length = 5, .skip_empty = 1, .cache_path = cache, .keep_text = 1};
    ck_assert_int_eq(nmt_corpus_read(&c, src, tgt, byte_encode, NULL, &opt), 0);
    ck_assert_int_eq(nmt_corpus_read(&d, src, tgt, byte_encode, NULL, &opt), 0);
    ck_assert_int_eq(d.from_cache, 0); /* the text is needed, so it is read, not the cache */
    ck_assert_int_eq(c.num_pairs, 3);
    int32_t plain[64], drawn[64];
    size_t n_plain, n_drawn;
    undoubled(&c, plain, &n_plain);
    /* A draw is a function of the seed: equal corpora stay equal, another seed draws otherwise. */
    ck_assert_int_eq(nmt_corpus_resample(&c, doubling_sample, NULL, 42, opt.max_length), 0);
    ck_assert_int_eq(nmt_corpus_resample(&d, doubling_sample, NULL, 42, opt.max_length), 0);
    ck_assert_uint_eq(c.num_ids, d.num_ids);
    ck_assert_mem_eq(c.ids, d.ids, c.num_ids * sizeof *c.ids);
    ck_assert_mem_eq(c.src_len, d.src_len, 3 * sizeof *c.src_len);
    int differ = 0;
    for (uint64_t seed = 1; seed < 20; seed++) {
        ck_assert_int_eq(nmt_corpus_resample(&d, doubling_sample, NULL, seed, opt.max_length), 0);
        differ += d.num_ids != c.num_ids || memcmp(d.ids, c.ids, c.num_ids * sizeof *c.ids) != 0;
        /* Every side holds its own text's pieces, within max_length (a longer draw gives way to the
         * undrawn segmentation), and the offsets and lengths agree. */
        undoubled(&d, drawn, &n_drawn);
        ck_assert_uint_eq(n_drawn, n_plain);
        ck_assert_mem_eq(drawn, plain, n_plain * sizeof *plain);
        size_t total = 0;
        for (long i = 0; i < d.num_pairs; i++) {
            ck_assert_uint_eq(d.offset[i], total);
            ck_assert_int_le(d.src_len[i], opt.max_length);
            ck_assert_int_le(d.tgt_len[i], opt.max_length);
            total += (size_t)d.src_len[i] + (size_t)d.tgt_len[i];
        }
        ck_assert_uint_eq(total, d.num_ids);
    }
    ck_assert_int_gt(differ, 15);
    nmt_corpus_free(&c);
    nmt_corpus_free(&d);
    /* Without its text a corpus cannot be resampled. */
    opt.keep_text = 0;
    ck_assert_int_eq(nmt_corpus_read(&c, src, tgt, byte_encode, NULL, &opt), 0);
    ck_assert_int_eq(nmt_corpus_resample(&c, doubling_sample, NULL, 1, 0), -1);
    ck_assert_str_eq(nmt_error(), "the corpus was read without its text: nothing to resample");
    nmt_corpus_free(&c);
    free(src);
    free(tgt);
    free(cache);
}
END_TEST

/* Writes a corpus of `pairs` numbered lines on each side, more pairs than one unit of resampling holds. */
static void write_numbered(const char *name, long pairs, const char *words) {
    char *text = nmt_malloc((size_t)pairs * 64), *at = text;
    ck_assert_ptr_nonnull(text);
    for (long i = 0; i < pairs; i++) at += sprintf(at, "%ld %s %ld\n", i, words, i * 7919 % 1000);
    free(write_file(name, text));
    free(text);
}

static int resample_attempt(void *corpus) {
    nmt_corpus *c = corpus;
    char *src = nmt_path_join(nmt_test_tmpdir, "n.en"), *tgt = nmt_path_join(nmt_test_tmpdir, "n.de");
    nmt_corpus_options opt = {.max_length = 40, .skip_empty = 1, .keep_text = 1};
    int rc = src && tgt ? nmt_corpus_read(c, src, tgt, byte_encode, NULL, &opt) : -1;
    if (rc == 0 && (rc = nmt_corpus_resample(c, doubling_sample, NULL, 7, opt.max_length)) < 0) nmt_corpus_free(c);
    free(src);
    free(tgt);
    return rc;
}

START_TEST(resampling_is_the_same_on_any_thread_count) {
    write_numbered("n.en", 1500, "a man rides a bike");
    write_numbered("n.de", 1500, "ein Mann faehrt Rad");
    nmt_corpus one, three;
    ck_assert_int_eq(nmt_pool_set_threads(1), 0);
    ck_assert_int_eq(resample_attempt(&one), 0);
    ck_assert_int_eq(nmt_pool_set_threads(3), 0);
    ck_assert_int_eq(resample_attempt(&three), 0);
    ck_assert_int_eq(one.num_pairs, 1500);
    ck_assert_uint_eq(one.num_ids, three.num_ids);
    ck_assert_mem_eq(one.ids, three.ids, one.num_ids * sizeof *one.ids);
    ck_assert_mem_eq(one.src_len, three.src_len, 1500 * sizeof *one.src_len);
    ck_assert_mem_eq(one.tgt_len, three.tgt_len, 1500 * sizeof *one.tgt_len);
    ck_assert_mem_eq(one.offset, three.offset, 1500 * sizeof *one.offset);
    /* A failure on any thread is reported, and leaves the corpus as it was. */
    const size_t num_ids = three.num_ids;
    ck_assert_int_eq(nmt_corpus_resample(&three, failing_sample, NULL, 7, 40), -1);
    ck_assert_str_eq(nmt_error(), "cannot draw pair 1400");
    ck_assert_uint_eq(three.num_ids, num_ids);
    ck_assert_mem_eq(one.ids, three.ids, num_ids * sizeof *one.ids);
    ck_assert_mem_eq(one.src_len, three.src_len, 1500 * sizeof *one.src_len);
    nmt_corpus_free(&one);
    nmt_corpus_free(&three);
    /* Every allocation, on the workers too, is checked. */
    ck_assert_int_gt(nmt_test_alloc_sweep(resample_attempt, &one), 10);
    nmt_corpus_free(&one);
    ck_assert_int_eq(nmt_pool_set_threads(1), 0);
}
END_TEST

/* Two corpora joined, the second twice: its pairs, pieces and text follow the first's in order, the
 * joined corpus resamples like any other, and its key changes with the weights. */
static nmt_corpus join_parts[2];

static int join_attempt(void *out) {
    const int times[2] = {1, 2};
    return nmt_corpus_join(out, join_parts, times, 2);
}

START_TEST(joined_corpora_repeat_in_order) {
    char *a_src = write_file("j.en", "ab\ncde\n"), *a_tgt = write_file("j.de", "x\nyz\n");
    char *b_src = write_file("k.en", "fghi\n"), *b_tgt = write_file("k.de", "uvw\n");
    nmt_corpus_options opt = {.skip_empty = 1, .keep_text = 1};
    ck_assert_int_eq(nmt_corpus_read(&join_parts[0], a_src, a_tgt, byte_encode, NULL, &opt), 0);
    ck_assert_int_eq(nmt_corpus_read(&join_parts[1], b_src, b_tgt, byte_encode, NULL, &opt), 0);
    nmt_corpus j, once;
    ck_assert_int_eq(join_attempt(&j), 0);
    ck_assert_int_eq(j.num_pairs, 4);
    ck_assert_int_eq(j.lines, 3); /* each file's lines counted once */
    const int32_t src_len[] = {2, 3, 4, 4}, tgt_len[] = {1, 2, 3, 3};
    const char *text[] = {"ab", "x", "cde", "yz", "fghi", "uvw", "fghi", "uvw"};
    size_t total = 0;
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(j.src_len[i], src_len[i]);
        ck_assert_int_eq(j.tgt_len[i], tgt_len[i]);
        ck_assert_uint_eq(j.offset[i], total);
        ck_assert_int_eq(j.ids[total], 4 + text[2 * i][0]);
        total += (size_t)(src_len[i] + tgt_len[i]);
        for (int k = 0; k < 2; k++) {
            const size_t from = j.text_offset[2 * i + k], len = j.text_offset[2 * i + k + 1] - from;
            ck_assert_uint_eq(len, strlen(text[2 * i + k]));
            ck_assert(memcmp(j.text + from, text[2 * i + k], len) == 0);
        }
    }
    ck_assert_uint_eq(j.num_ids, total);
    /* The repeated pairs are drawn apart: each pair's draw is seeded by its place in the epoch. */
    ck_assert_int_eq(nmt_corpus_resample(&j, doubling_sample, NULL, 5, 0), 0);
    size_t n;
    int32_t plain[64];
    undoubled(&j, plain, &n);
    ck_assert_uint_eq(n, total);
    const size_t len2 = (size_t)(j.src_len[2] + j.tgt_len[2]), len3 = (size_t)(j.src_len[3] + j.tgt_len[3]);
    ck_assert(len2 != len3 || memcmp(j.ids + j.offset[2], j.ids + j.offset[3], len2 * sizeof *j.ids) != 0);
    const int times[2] = {1, 1};
    ck_assert_int_eq(nmt_corpus_join(&once, join_parts, times, 2), 0);
    ck_assert_int_eq(once.num_pairs, 3);
    ck_assert(once.key != j.key);
    nmt_corpus_free(&once);
    nmt_corpus_free(&j);
    ck_assert_int_gt(nmt_test_alloc_sweep(join_attempt, &j), 3);
    nmt_corpus_free(&j);
    nmt_corpus_free(&join_parts[0]);
    nmt_corpus_free(&join_parts[1]);
    free(a_src);
    free(a_tgt);
    free(b_src);
    free(b_tgt);
}
END_TEST

START_TEST(allocation_failures_are_reported) {
    free(write_file("f.en", "one\ntwo\n\nthree\nfour\n"));
    free(write_file("f.de", "eins\nzwei\nnull\ndrei\nvier\n"));
    char *cache = nmt_path_join(nmt_test_tmpdir, "f.bin");
    /* Encoding without a cache, encoding and writing the cache, then loading it. */
    ck_assert_int_gt(nmt_test_alloc_sweep(read_attempt, NULL), 5);
    ck_assert_int_gt(nmt_test_alloc_sweep(read_attempt, cache), 5);
    ck_assert(nmt_file_exists(cache));
    ck_assert_int_gt(nmt_test_alloc_sweep(read_attempt, cache), 2);
    free(cache);
}
END_TEST

START_TEST(file_hash_sees_content) {
    char *a = write_file("h1", "same size");
    char *b = write_file("h2", "same sizf");
    char *c = write_file("h3", "same size");
    uint64_t ha, hb, hc;
    ck_assert_int_eq(nmt_hash_file(a, &ha), 0);
    ck_assert_int_eq(nmt_hash_file(b, &hb), 0);
    ck_assert_int_eq(nmt_hash_file(c, &hc), 0);
    ck_assert(ha != hb);
    ck_assert(ha == hc);
    ck_assert_int_eq(nmt_hash_file("/nonexistent/spm.model", &ha), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "/nonexistent/spm.model"));
    free(a);
    free(b);
    free(c);
}
END_TEST

int main(void) {
    Suite *s = suite_create("corpus");
    TCase *tc = tcase_create("corpus");
    tcase_add_checked_fixture(tc, setup, nmt_test_tmpdir_remove);
    tcase_add_test(tc, pairs_lengths_and_skips);
    tcase_add_test(tc, mismatched_line_counts_name_both_files);
    tcase_add_test(tc, bad_utf8_names_file_line_and_byte);
    tcase_add_test(tc, encoder_error_names_the_line);
    tcase_add_test(tc, cache_is_used_until_something_changes);
    tcase_add_test(tc, file_hash_sees_content);
    tcase_add_test(tc, resampling_redraws_every_side_from_the_seed);
    tcase_add_test(tc, resampling_is_the_same_on_any_thread_count);
    tcase_add_test(tc, joined_corpora_repeat_in_order);
    tcase_add_test(tc, allocation_failures_are_reported);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
