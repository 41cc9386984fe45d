/* Tests of the gate (src/api/gate.c): closing waits for the call inside, which another thread holds
 * there until it has seen the close begin, and refuses calls that come after it began. */
#include "api/gate.h"

#include "testing.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

typedef struct shared {
    nmt_gate gate;
    atomic_int entered, closed, closed_while_inside;
    int entry; /* nmt_gate_enter's result in the caller */
} shared;

/* Enters, stays inside until the close has begun, notes whether it has returned yet, leaves. */
static void *caller(void *arg) {
    shared *s = arg;
    s->entry = nmt_gate_enter(&s->gate, "the test object");
    atomic_store(&s->entered, 1);
    if (s->entry < 0) return NULL;
    while (!nmt_gate_closing(&s->gate)) sched_yield();
    atomic_store(&s->closed_while_inside, atomic_load(&s->closed));
    nmt_gate_leave(&s->gate);
    return NULL;
}

static void *closer(void *arg) {
    shared *s = arg;
    nmt_gate_close(&s->gate);
    atomic_store(&s->closed, 1);
    return NULL;
}

START_TEST(test_close_waits) {
    shared s = {0};
    ck_assert_int_eq(nmt_gate_init(&s.gate), 0);
    pthread_t a, b;
    ck_assert_int_eq(pthread_create(&a, NULL, caller, &s), 0);
    while (!atomic_load(&s.entered)) sched_yield();
    ck_assert_int_eq(s.entry, 0);
    ck_assert_int_eq(pthread_create(&b, NULL, closer, &s), 0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    ck_assert_int_eq(atomic_load(&s.closed_while_inside), 0); /* close returned only after the call left */
    ck_assert_int_eq(atomic_load(&s.closed), 1);
    ck_assert_int_eq(nmt_gate_enter(&s.gate, "the test object"), -1);
    ck_assert_str_eq(nmt_error(), "the test object is being closed");
    nmt_gate_free(&s.gate);
}
END_TEST

/* With no call inside, close returns at once; calls that entered and left do not hold it. */
START_TEST(test_close_idle) {
    nmt_gate g;
    ck_assert_int_eq(nmt_gate_init(&g), 0);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(nmt_gate_enter(&g, "x"), 0);
        nmt_gate_leave(&g);
    }
    ck_assert_int_eq(nmt_gate_closing(&g), 0);
    nmt_gate_close(&g);
    ck_assert_int_eq(nmt_gate_closing(&g), 1);
    nmt_gate_free(&g);
}
END_TEST

int main(void) {
    Suite *s = suite_create("gate");
    TCase *tc = tcase_create("gate");
    tcase_add_test(tc, test_close_waits);
    tcase_add_test(tc, test_close_idle);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
