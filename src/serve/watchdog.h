/* watchdog: the server's open connections, each in its phase, and a thread that closes those whose
 * phase has lasted too long -- so that clients who send their headers or their body a byte at a time
 * cannot hold connection slots (and their threads) for ever, whatever idle timer each byte restarts.
 *
 * A connection is in one of three phases: HEADERS from its opening (and again after each answer, while
 * a kept-alive connection waits for its next request) until its request's headers have all arrived;
 * BODY until its body has all arrived; BUSY while its request is answered (bounded by the request's
 * own timeout, not here). Once a HEADERS phase has lasted header_s seconds, or a BODY phase body_s
 * seconds, the thread shuts the socket down (both ways): the HTTP library sees the end of the stream
 * and closes the connection. The thread looks every tenth of a second.
 *
 * Slots are allocated once (as many as the server's connection limit); a connection is removed before
 * its socket is closed, and the thread shuts sockets down only under the lock that removal takes, so it
 * never touches a descriptor that has been reused. nmt_serve_watch_client_gone tells whether the client
 * of a BUSY connection has closed its end (a request whose answer nobody waits for any more).
 */
#ifndef NMT_SERVE_WATCHDOG_H
#define NMT_SERVE_WATCHDOG_H

#include <stddef.h>

typedef struct nmt_serve_watchdog nmt_serve_watchdog;
typedef struct nmt_serve_watch nmt_serve_watch; /* one connection */

typedef enum nmt_serve_phase { NMT_SERVE_HEADERS, NMT_SERVE_BODY, NMT_SERVE_BUSY } nmt_serve_phase;

/* slots: connections watched at most; header_s, body_s: the longest phases (> 0). */
int nmt_serve_watchdog_create(nmt_serve_watchdog **out, int slots, double header_s, double body_s);
/* Stops the thread and frees (every connection removed or not). */
void nmt_serve_watchdog_free(nmt_serve_watchdog *w);

/* Watches socket fd from now, in phase HEADERS; NULL when every slot is taken. */
nmt_serve_watch *nmt_serve_watchdog_add(nmt_serve_watchdog *w, int fd);
/* Stops watching (before the socket is closed). */
void nmt_serve_watchdog_remove(nmt_serve_watchdog *w, nmt_serve_watch *c);
/* Enters a phase; its clock starts now. */
void nmt_serve_watch_phase(nmt_serve_watchdog *w, nmt_serve_watch *c, nmt_serve_phase phase);
/* 1 when the client has closed its end of the connection or reset it (peeked, nothing read). */
int nmt_serve_watch_client_gone(const nmt_serve_watch *c);
/* Connections shut down for taking too long, so far. */
long nmt_serve_watchdog_closed(nmt_serve_watchdog *w);

#endif
