/* Tests of the status beside the message in the public API (include/nmt/nmt.h): each failure sets
 * its kind -- memory, the system's files, anything else -- for the calling thread alone, a prefixed
 * message keeps its kind, and a thread that has not failed reads NMT_STATUS_OK; and of the corpus
 * metrics with sacreBLEU's options (nmt_corpus_score): the defaults are nmt_corpus_bleu's, options
 * change the score and the signature, BLEU's numbers are those of its verbose line. */
#include "nmt/nmt.h"

#include "base/util.h"
#include "testing.h"

#include <pthread.h>

static const char *const hyp[] = {"The dog bit the man."}, *const ref[] = {"The dog bit the man."};

START_TEST(test_ok_before_any_failure) {
    ck_assert_int_eq(nmt_last_status(), NMT_STATUS_OK);
    nmt_corpus_metric s;
    ck_assert_int_eq(nmt_corpus_bleu(1, hyp, 1, ref, &s), 0);
    ck_assert_int_eq(nmt_last_status(), NMT_STATUS_OK);
}
END_TEST

START_TEST(test_failed_argument) {
    nmt_corpus_metric s;
    ck_assert_int_lt(nmt_corpus_bleu(-1, hyp, 1, ref, &s), 0);
    ck_assert_int_eq(nmt_last_status(), NMT_STATUS_FAILED);
    ck_assert_msg(strstr(nmt_last_error(), "count"), "%s", nmt_last_error());
}
END_TEST

START_TEST(test_no_memory) {
    nmt_corpus_metric s;
    nmt_alloc_fail_at(1);
    const int rc = nmt_corpus_chrf(1, hyp, 1, ref, &s);
    nmt_alloc_fail_at(0);
    ck_assert_int_lt(rc, 0);
    ck_assert_int_eq(nmt_last_status(), NMT_STATUS_NO_MEMORY);
    ck_assert_msg(strstr(nmt_last_error(), "out of memory"), "%s", nmt_last_error());
    /* A failure of another kind replaces it. */
    ck_assert_int_lt(nmt_corpus_chrf(1, hyp, 0, ref, &s), 0);
    ck_assert_int_eq(nmt_last_status(), NMT_STATUS_FAILED);
}
END_TEST

START_TEST(test_io) {
    char path[128];
    snprintf(path, sizeof path, "%s/no-such-config.yaml", nmt_test_tmpdir);
    ck_assert_int_lt(nmt_train_config(path, NULL, 1, 1, NULL), 0);
    ck_assert_int_eq(nmt_last_status(), NMT_STATUS_IO);
    ck_assert_msg(strstr(nmt_last_error(), "no-such-config.yaml"), "%s", nmt_last_error());
    /* An engine over a directory that lacks the model: a file the system would not open. */
    nmt_engine *e = (nmt_engine *)&e;
    ck_assert_int_lt(nmt_engine_open(&e, nmt_test_tmpdir, NULL), 0);
    ck_assert_ptr_null(e);
    ck_assert_int_eq(nmt_last_status(), NMT_STATUS_IO);
}
END_TEST

START_TEST(test_failed_file) {
    /* A config that reads but is wrong: its content, not the system, failed. */
    char path[128];
    snprintf(path, sizeof path, "%s/bad.yaml", nmt_test_tmpdir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("model: {d_model: -3}\n", f);
    fclose(f);
    ck_assert_int_lt(nmt_train_config(path, NULL, 1, 1, NULL), 0);
    ck_assert_int_eq(nmt_last_status(), NMT_STATUS_FAILED);
    ck_assert_msg(strstr(nmt_last_error(), "bad.yaml"), "%s", nmt_last_error());
}
END_TEST

static void *status_of_this_thread(void *unused) {
    (void)unused;
    static nmt_status status;
    status = nmt_last_status();
    return &status;
}

START_TEST(test_per_thread) {
    nmt_alloc_fail_at(1);
    nmt_corpus_metric s;
    ck_assert_int_lt(nmt_corpus_ter(1, hyp, 1, ref, &s), 0);
    nmt_alloc_fail_at(0);
    ck_assert_int_eq(nmt_last_status(), NMT_STATUS_NO_MEMORY);
    pthread_t thread;
    void *seen;
    ck_assert_int_eq(pthread_create(&thread, NULL, status_of_this_thread, NULL), 0);
    ck_assert_int_eq(pthread_join(thread, &seen), 0);
    ck_assert_int_eq(*(nmt_status *)seen, NMT_STATUS_OK);
    ck_assert_int_eq(nmt_last_status(), NMT_STATUS_NO_MEMORY);
}
END_TEST

START_TEST(test_prefix_keeps_kind) {
    nmt_error_set_kind(NMT_ERROR_IO, "x: cannot open: No such file or directory");
    nmt_error_prefix("loading the model");
    ck_assert_int_eq(nmt_last_status(), NMT_STATUS_IO);
    ck_assert_str_eq(nmt_last_error(), "loading the model: x: cannot open: No such file or directory");
    nmt_error_clear();
    ck_assert_int_eq(nmt_last_status(), NMT_STATUS_OK);
}
END_TEST

START_TEST(test_corpus_options) {
    static const char *const hyps[] = {"The cat sat on the mat .", "a Dog barks"};
    static const char *const refs[] = {"the cat sat on a mat .", "A dog barks loudly"};
    nmt_corpus_metric plain, s;
    nmt_corpus_details d;
    ck_assert_int_eq(nmt_corpus_bleu(2, hyps, 1, refs, &plain), 0);
    ck_assert_int_eq(nmt_corpus_score("bleu", 2, hyps, 1, refs, NULL, &s, &d), 0);
    ck_assert(s.value == plain.value);
    ck_assert_str_eq(s.signature, plain.signature);
    ck_assert_int_eq(d.order, 4);
    ck_assert_int_eq(d.sys_len, 10);
    ck_assert_int_eq(d.ref_len, 11);
    ck_assert(d.counts[0] == 7 && d.totals[0] == 10 && d.counts[1] == 3 && d.counts[3] == 0 && d.totals[3] == 4);
    ck_assert_msg(strstr(d.verbose, "70.0/") == d.verbose && strstr(d.verbose, "hyp_len = 10 ref_len = 11)"), "%s",
                  d.verbose);
    nmt_corpus_options o = nmt_corpus_options_default();
    o.lowercase = 1;
    ck_assert_int_eq(nmt_corpus_score("bleu", 2, hyps, 1, refs, &o, &s, &d), 0);
    ck_assert(s.value > plain.value);
    ck_assert_ptr_nonnull(strstr(s.signature, "case:lc"));
    o = nmt_corpus_options_default();
    o.word_order = 2;
    ck_assert_int_eq(nmt_corpus_score("chrf", 2, hyps, 1, refs, &o, &s, &d), 0);
    ck_assert_str_eq(s.name, "chrF2++");
    ck_assert_str_eq(d.verbose, "");
    ck_assert_int_eq(d.order, 0);
    o = nmt_corpus_options_default();
    o.tokenize = "14a";
    ck_assert_int_eq(nmt_corpus_score("bleu", 2, hyps, 1, refs, &o, &s, NULL), -1);
    ck_assert_ptr_nonnull(strstr(nmt_last_error(), "14a"));
    ck_assert_int_eq(nmt_corpus_score("meteor", 2, hyps, 1, refs, NULL, &s, NULL), -1);
    ck_assert_ptr_nonnull(strstr(nmt_last_error(), "meteor"));
}
END_TEST

int main(void) {
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("status");
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, test_ok_before_any_failure);
    tcase_add_test(tc, test_failed_argument);
    tcase_add_test(tc, test_no_memory);
    tcase_add_test(tc, test_io);
    tcase_add_test(tc, test_failed_file);
    tcase_add_test(tc, test_per_thread);
    tcase_add_test(tc, test_prefix_keeps_kind);
    tcase_add_test(tc, test_corpus_options);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
