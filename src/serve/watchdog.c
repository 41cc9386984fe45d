/* watchdog: connection phases and the thread that shuts down connections whose headers or body take
 * too long; see watchdog.h. */
#include "serve/watchdog.h"

#include "base/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

struct nmt_serve_watch {
    int fd;             /* -1: the slot is free */
    nmt_serve_phase phase;
    double since;       /* nmt_now() when the phase began */
    int shut;           /* shut down already */
};

struct nmt_serve_watchdog {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* stop */
    pthread_t thread;
    int stopping;
    double header_s, body_s;
    nmt_serve_watch *slots;
    int count;
    long closed;
};

/* Shuts down the connections past their phase's time (the lock held). */
static void sweep(nmt_serve_watchdog *w, double now) {
    for (int i = 0; i < w->count; i++) {
        nmt_serve_watch *c = &w->slots[i];
        if (c->fd < 0 || c->shut || c->phase == NMT_SERVE_BUSY) continue;
        const double limit = c->phase == NMT_SERVE_HEADERS ? w->header_s : w->body_s;
        if (now - c->since < limit) continue;
        shutdown(c->fd, SHUT_RDWR);
        c->shut = 1;
        w->closed++;
    }
}

static void *watchdog_main(void *arg) {
    nmt_serve_watchdog *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->stopping) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += 100000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->wake, &w->lock, &ts);
        if (!w->stopping) sweep(w, nmt_now());
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

int nmt_serve_watchdog_create(nmt_serve_watchdog **out, int slots, double header_s, double body_s) {
    *out = NULL;
    if (slots < 1 || !(header_s > 0) || !(body_s > 0))
        return nmt_error_set("watchdog: %d slots, %g s for headers, %g s for a body: expected more than 0", slots,
                             header_s, body_s);
    nmt_serve_watchdog *w = nmt_calloc(1, sizeof *w);
    if (!w) return -1;
    w->slots = nmt_malloc((size_t)slots * sizeof *w->slots);
    if (!w->slots) {
        free(w);
        return -1;
    }
    for (int i = 0; i < slots; i++) w->slots[i].fd = -1;
    w->count = slots;
    w->header_s = header_s;
    w->body_s = body_s;
    pthread_condattr_t attr;
    int mutex = -1, cond = -1;
    if (pthread_condattr_init(&attr) == 0) {
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        cond = pthread_cond_init(&w->wake, &attr);
        pthread_condattr_destroy(&attr);
    }
    if (cond != 0 || (mutex = pthread_mutex_init(&w->lock, NULL)) != 0 ||
        pthread_create(&w->thread, NULL, watchdog_main, w) != 0) {
        if (cond == 0) pthread_cond_destroy(&w->wake);
        if (mutex == 0) pthread_mutex_destroy(&w->lock);
        free(w->slots);
        free(w);
        return nmt_error_set("cannot start the connection watchdog thread");
    }
    *out = w;
    return 0;
}

void nmt_serve_watchdog_free(nmt_serve_watchdog *w) {
    if (!w) return;
    pthread_mutex_lock(&w->lock);
    w->stopping = 1;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w->slots);
    free(w);
}

nmt_serve_watch *nmt_serve_watchdog_add(nmt_serve_watchdog *w, int fd) {
    nmt_serve_watch *c = NULL;
    pthread_mutex_lock(&w->lock);
    for (int i = 0; i < w->count && !c; i++)
        if (w->slots[i].fd < 0) c = &w->slots[i];
    if (c) *c = (nmt_serve_watch){.fd = fd, .phase = NMT_SERVE_HEADERS, .since = nmt_now()};
    pthread_mutex_unlock(&w->lock);
    return c;
}

void nmt_serve_watchdog_remove(nmt_serve_watchdog *w, nmt_serve_watch *c) {
    pthread_mutex_lock(&w->lock);
    c->fd = -1;
    pthread_mutex_unlock(&w->lock);
}

void nmt_serve_watch_phase(nmt_serve_watchdog *w, nmt_serve_watch *c, nmt_serve_phase phase) {
    pthread_mutex_lock(&w->lock);
    c->phase = phase;
    c->since = nmt_now();
    pthread_mutex_unlock(&w->lock);
}

int nmt_serve_watch_client_gone(const nmt_serve_watch *c) {
    char byte;
    const ssize_t n = recv(c->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0) return 0; /* a pipelined request: still there */
    if (n == 0) return 1;
    return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

long nmt_serve_watchdog_closed(nmt_serve_watchdog *w) {
    pthread_mutex_lock(&w->lock);
    const long n = w->closed;
    pthread_mutex_unlock(&w->lock);
    return n;
}
