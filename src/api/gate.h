/* gate: the calls in flight on a shared object, so that freeing it waits for them.
 *
 * A call enters the gate before it touches the object and leaves it after; nmt_gate_close, called by
 * the one who frees the object, shuts the gate (later entries fail, saying so) and returns when no
 * call is inside, so that what follows it can free the object. Nothing may enter once close has
 * returned: the gate is then destroyed with the object.
 */
#ifndef NMT_GATE_H
#define NMT_GATE_H

#include <pthread.h>

typedef struct nmt_gate {
    pthread_mutex_t lock;
    pthread_cond_t idle; /* signalled when inside drops to 0 */
    int inside;          /* calls in flight */
    int closing;         /* nmt_gate_close has begun */
} nmt_gate;

int nmt_gate_init(nmt_gate *g);
/* Enters; -1 with the error "WHAT is being closed" once the gate is closing. */
int nmt_gate_enter(nmt_gate *g, const char *what);
void nmt_gate_leave(nmt_gate *g);
/* 1 once nmt_gate_close has begun. */
int nmt_gate_closing(nmt_gate *g);
/* Shuts the gate and waits until no call is inside. */
void nmt_gate_close(nmt_gate *g);
/* Releases a closed (or never entered) gate. */
void nmt_gate_free(nmt_gate *g);

#endif
