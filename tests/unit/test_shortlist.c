/* Tests of the vocabulary shortlist (shortlist.h): Dice ranking on a corpus whose associations are
 * known, the M frequent pieces, the sorted union with the special ids, and the file round trip and
 * its validation. */
#include "base/util.h"
#include "infer/shortlist.h"
#include "model/safetensors.h"
#include "text/vocab.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { V = 20, PAIRS = 6 };

/* Source piece 10 always comes with target 15, 11 with 16; target 4 is in every sentence. */
static const int32_t s0[] = {10, 12}, s1[] = {10}, s2[] = {11, 12}, s3[] = {11}, s4[] = {10, 11}, s5[] = {12};
static const int32_t t0[] = {15, 4, 17}, t1[] = {15, 4}, t2[] = {16, 4, 17}, t3[] = {16, 4}, t4[] = {15, 16, 4},
                     t5[] = {4, 17, 17};
static const int32_t *const src[PAIRS] = {s0, s1, s2, s3, s4, s5}, *const tgt[PAIRS] = {t0, t1, t2, t3, t4, t5};
static const int src_len[PAIRS] = {2, 1, 2, 1, 2, 1}, tgt_len[PAIRS] = {3, 2, 3, 2, 3, 3};

START_TEST(shortlist_ranks_and_unions) {
    nmt_shortlist *s;
    ck_assert_int_eq(nmt_shortlist_build(&s, V, 1, 1, PAIRS, src, src_len, tgt, tgt_len), 0);
    uint8_t mark[V] = {0};
    int32_t out[V];
    /* 10 -> 15 (Dice 2*3/(3+3) = 1 beats 4's 2*3/(3+6)), the frequent 4, the specials 0..3. */
    const int32_t only10[] = {10};
    int n = nmt_shortlist_union(s, only10, 1, mark, out);
    const int32_t want10[] = {0, 1, 2, 3, 4, 15};
    ck_assert_int_eq(n, 6);
    ck_assert_mem_eq(out, want10, sizeof want10);
    for (int i = 0; i < V; i++) ck_assert_int_eq(mark[i], 0);
    /* 12 co-occurs with 17 in all three of its sentences (Dice 1); ids out of range are ignored. */
    const int32_t batch[] = {11, 12, -1, V, 11};
    n = nmt_shortlist_union(s, batch, 5, mark, out);
    const int32_t want[] = {0, 1, 2, 3, 4, 16, 17};
    ck_assert_int_eq(n, 7);
    ck_assert_mem_eq(out, want, sizeof want);
    /* The file round trip keeps every list. */
    char path[] = "/tmp/nmt-shortlist-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(nmt_shortlist_save(s, path), 0);
    nmt_shortlist *back;
    ck_assert_int_eq(nmt_shortlist_load(&back, path, V), 0);
    ck_assert_int_eq(nmt_shortlist_k(back), 1);
    ck_assert_int_eq(nmt_shortlist_m(back), 1);
    ck_assert_int_eq(nmt_shortlist_union(back, batch, 5, mark, out), 7);
    ck_assert_mem_eq(out, want, sizeof want);
    nmt_shortlist_free(back);
    /* Another vocabulary is refused. */
    ck_assert_int_eq(nmt_shortlist_load(&back, path, V + 1), -1);
    ck_assert_ptr_null(back);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "vocab_size"));
    unlink(path);
    nmt_shortlist_free(s);
}
END_TEST

/* A file whose ids leave the vocabulary or whose offsets do not add up is refused, naming the tensor. */
START_TEST(shortlist_file_is_validated) {
    char path[] = "/tmp/nmt-shortlist-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    int64_t offsets[V + 1] = {0}, candidates[1] = {V}, frequent[1] = {0};
    for (int i = 1; i <= V; i++) offsets[i] = 1;
    nmt_st_tensor t[] = {
        {.name = "offsets", .dtype = NMT_ST_I64, .rank = 1, .shape = {V + 1}, .data = offsets, .size = sizeof offsets},
        {.name = "candidates", .dtype = NMT_ST_I64, .rank = 1, .shape = {1}, .data = candidates, .size = sizeof candidates},
        {.name = "frequent", .dtype = NMT_ST_I64, .rank = 1, .shape = {1}, .data = frequent, .size = sizeof frequent},
    };
    const nmt_st_metadata md[] = {{"k", "1"}, {"m", "1"}, {"vocab_size", "20"}};
    ck_assert_int_eq(nmt_st_write(path, t, 3, md, 3), 0);
    nmt_shortlist *s;
    ck_assert_int_eq(nmt_shortlist_load(&s, path, V), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "candidates[0] = 20 is outside"));
    candidates[0] = 5;
    offsets[V] = 2;
    ck_assert_int_eq(nmt_st_write(path, t, 3, md, 3), 0);
    ck_assert_int_eq(nmt_shortlist_load(&s, path, V), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "offsets"));
    /* More candidates than K allows, and a file larger than any table of V pieces, are refused before
     * anything is read. */
    offsets[V] = 1;
    const nmt_st_metadata k0[] = {{"k", "0"}, {"m", "1"}, {"vocab_size", "20"}};
    ck_assert_int_eq(nmt_st_write(path, t, 3, k0, 3), 0);
    ck_assert_int_eq(nmt_shortlist_load(&s, path, V), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "candidates holds 1 values, more than the 0 its vocabulary and K allow"));
    ck_assert_int_eq(truncate(path, (off_t)1 << 30), 0);
    ck_assert_int_eq(nmt_shortlist_load(&s, path, V), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), ": 1073741824 bytes, more than a shortlist of a 20-piece vocabulary can be"));
    unlink(path);
    ck_assert_int_eq(nmt_shortlist_load_dir(&s, "/nonexistent-dir", V), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "nmt shortlist -m"));
}
END_TEST

int main(void) {
    Suite *s = suite_create("shortlist");
    TCase *tc = tcase_create("shortlist");
    tcase_add_test(tc, shortlist_ranks_and_unions);
    tcase_add_test(tc, shortlist_file_is_validated);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
