/* gate: the calls in flight on a shared object (gate.h). */
#include "api/gate.h"

#include "base/util.h"

int nmt_gate_init(nmt_gate *g) {
    g->inside = g->closing = 0;
    if (pthread_mutex_init(&g->lock, NULL) != 0) return nmt_error_set("cannot create a mutex");
    if (pthread_cond_init(&g->idle, NULL) != 0) {
        pthread_mutex_destroy(&g->lock);
        return nmt_error_set("cannot create a condition variable");
    }
    return 0;
}

int nmt_gate_enter(nmt_gate *g, const char *what) {
    pthread_mutex_lock(&g->lock);
    const int closing = g->closing;
    if (!closing) g->inside++;
    pthread_mutex_unlock(&g->lock);
    return closing ? nmt_error_set("%s is being closed", what) : 0;
}

void nmt_gate_leave(nmt_gate *g) {
    pthread_mutex_lock(&g->lock);
    if (--g->inside == 0) pthread_cond_broadcast(&g->idle);
    pthread_mutex_unlock(&g->lock);
}

int nmt_gate_closing(nmt_gate *g) {
    pthread_mutex_lock(&g->lock);
    const int closing = g->closing;
    pthread_mutex_unlock(&g->lock);
    return closing;
}

void nmt_gate_close(nmt_gate *g) {
    pthread_mutex_lock(&g->lock);
    g->closing = 1;
    while (g->inside > 0) pthread_cond_wait(&g->idle, &g->lock);
    pthread_mutex_unlock(&g->lock);
}

void nmt_gate_free(nmt_gate *g) {
    pthread_cond_destroy(&g->idle);
    pthread_mutex_destroy(&g->lock);
}
