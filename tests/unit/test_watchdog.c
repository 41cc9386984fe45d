/* Tests of the server's connection watchdog (src/serve/watchdog.c) over socket pairs: a connection
 * whose headers or body take too long is shut down, one that is busy (or moved on to its next phase in
 * time) is not, slots are reused and limited, and a client that closed its end is seen gone while
 * one that pipelines its next request is not. */
#include "serve/watchdog.h"

#include "base/util.h"
#include "testing.h"

#include <sys/socket.h>
#include <unistd.h>

/* Whether the watchdog has shut s[0] down: its peer s[1] reads the end of the stream. */
static int was_shut(const int s[2]) {
    char byte;
    return recv(s[1], &byte, 1, MSG_DONTWAIT) == 0;
}

/* Waits up to 5 s for the watchdog to shut s[0] down (it looks every tenth of a second). */
static int until_shut(const int s[2]) {
    for (int i = 0; i < 500; i++) {
        if (was_shut(s)) return 1;
        usleep(10000);
    }
    return 0;
}

START_TEST(test_phases) {
    nmt_serve_watchdog *w;
    ck_assert_int_eq(nmt_serve_watchdog_create(&w, 3, 0.3, 3), 0);
    int headers[2], body[2], busy[2], moved[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, headers), 0);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, body), 0);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, busy), 0);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, moved), 0);
    nmt_serve_watch *h = nmt_serve_watchdog_add(w, headers[0]), *b = nmt_serve_watchdog_add(w, body[0]),
                    *u = nmt_serve_watchdog_add(w, busy[0]);
    ck_assert_ptr_nonnull(h);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_nonnull(u);
    ck_assert_ptr_null(nmt_serve_watchdog_add(w, moved[0])); /* three slots */
    nmt_serve_watch_phase(w, b, NMT_SERVE_BODY);
    nmt_serve_watch_phase(w, u, NMT_SERVE_BUSY);
    /* Headers past 0.3 s: shut down, while the body has 3 s; then the body's turn. A busy connection is
     * not the watchdog's. */
    ck_assert(until_shut(headers));
    ck_assert(!was_shut(body));
    ck_assert_int_eq(nmt_serve_watchdog_closed(w), 1);
    ck_assert(until_shut(body));
    ck_assert(!was_shut(busy));
    ck_assert_int_eq(nmt_serve_watchdog_closed(w), 2);
    /* A slot freed is taken again, its connection in HEADERS phase with its time afresh. */
    nmt_serve_watchdog_remove(w, h);
    nmt_serve_watch *m = nmt_serve_watchdog_add(w, moved[0]);
    ck_assert_ptr_eq(m, h);
    ck_assert(!was_shut(moved));
    ck_assert(until_shut(moved));
    ck_assert(!was_shut(busy));
    nmt_serve_watchdog_free(w);
    for (int i = 0; i < 2; i++) {
        close(headers[i]);
        close(body[i]);
        close(busy[i]);
        close(moved[i]);
    }
}
END_TEST

START_TEST(test_client_gone) {
    nmt_serve_watchdog *w;
    ck_assert_int_eq(nmt_serve_watchdog_create(&w, 2, 100, 100), 0);
    int s[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
    nmt_serve_watch *c = nmt_serve_watchdog_add(w, s[0]);
    ck_assert(!nmt_serve_watch_client_gone(c));
    ck_assert_int_eq(send(s[1], "GET", 3, 0), 3); /* a pipelined request: still there, and not read */
    ck_assert(!nmt_serve_watch_client_gone(c));
    char buf[4];
    ck_assert_int_eq(recv(s[0], buf, sizeof buf, MSG_DONTWAIT), 3);
    close(s[1]);
    ck_assert(nmt_serve_watch_client_gone(c));
    nmt_serve_watchdog_remove(w, c);
    close(s[0]);
    ck_assert_int_eq(nmt_serve_watchdog_create(&(nmt_serve_watchdog *){NULL}, 0, 1, 1), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "expected more than 0"));
    nmt_serve_watchdog_free(w);
}
END_TEST

int main(void) {
    Suite *s = suite_create("watchdog");
    TCase *tc = tcase_create("watchdog");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_phases);
    tcase_add_test(tc, test_client_gone);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
