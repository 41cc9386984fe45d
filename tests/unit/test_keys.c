/* Tests of the server's API keys (src/serve/keys.c): the file read with comments, blanks and spaces
 * skipped, a key with a NUL or another control byte refused naming file and line, and keys compared
 * whole (no prefix, no longer string). */
#include "serve/keys.h"

#include "testing.h"

#include <stdio.h>

static const char *write_file(const char *name, const char *text, size_t len) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", nmt_test_tmpdir, name);
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_int_eq(fwrite(text, 1, len, fp), len);
    fclose(fp);
    return path;
}

START_TEST(test_keys) {
    static const char text[] = "# keys\n\n  QRS  \r\nsecret-2\t\n";
    nmt_serve_keys k;
    ck_assert_msg(nmt_serve_keys_init(&k, write_file("keys.txt", text, sizeof text - 1)) == 0, "%s", nmt_error());
    ck_assert_int_eq(k.count, 2);
    ck_assert(nmt_serve_keys_known(&k, "QRS"));
    ck_assert(nmt_serve_keys_known(&k, "secret-2"));
    ck_assert(!nmt_serve_keys_known(&k, "Q"));
    ck_assert(!nmt_serve_keys_known(&k, "QR"));
    ck_assert(!nmt_serve_keys_known(&k, "QRST"));
    ck_assert(!nmt_serve_keys_known(&k, ""));
    ck_assert(!nmt_serve_keys_known(&k, " QRS"));
    nmt_serve_keys_free(&k);
}
END_TEST

/* The file `name` holding text[0, len) is refused with a message containing `want`. */
static void refused(const char *name, const char *text, size_t len, const char *want) {
    nmt_serve_keys k;
    ck_assert_int_eq(nmt_serve_keys_init(&k, name ? write_file(name, text, len) : "/nonexistent/keys"), -1);
    ck_assert_msg(strstr(nmt_error(), want), "%s: '%s', want '%s'", name, nmt_error(), want);
    nmt_serve_keys_free(&k);
    ck_assert_int_eq(k.count, 0);
}

START_TEST(test_refused) {
    static const char nul[] = "ok\nQ\0rest\n", tab[] = "ok\nbad\tkey\n", del[] = "k\x7f\n", none[] = "# only\n\n";
    refused("nul.txt", nul, sizeof nul - 1, "nul.txt:2: the key holds the control byte 0x00 at byte 2: refused");
    refused("tab.txt", tab, sizeof tab - 1, "tab.txt:2: the key holds the control byte 0x09 at byte 4");
    refused("del.txt", del, sizeof del - 1, "del.txt:1: the key holds the control byte 0x7f");
    refused("none.txt", none, sizeof none - 1, "none.txt: no API key in the file");
    refused(NULL, "", 0, "cannot open the API keys file");
}
END_TEST

int main(void) {
    Suite *s = suite_create("keys");
    TCase *tc = tcase_create("keys");
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    tcase_add_test(tc, test_keys);
    tcase_add_test(tc, test_refused);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
