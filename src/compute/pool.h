/* pool: the one thread pool that runs every parallel loop of nmt.
 *
 * The pool has `threads` threads: the caller plus threads-1 workers, made once (by
 * nmt_pool_set_threads or at the first parallel call) and asleep between tasks. A task is a
 * function over an index range [0, count); nested parallel calls, made from inside a task, run
 * inline on the calling thread. The pool is the only source of parallelism (gemm sets OpenBLAS to
 * one thread), so no thread ever spins waiting while another computes.
 */
#ifndef NMT_POOL_H
#define NMT_POOL_H

/* Sets the pool size (1 = everything on the caller's thread). Not to be called from a pool task. */
int nmt_pool_set_threads(int threads);
/* The pool size: the size set last, or at first use the number of CPUs online (at most 64). */
int nmt_pool_threads(void);

/* Runs fn(ctx, begin, end) over [0, count) split into one contiguous range per pool thread (fewer
 * when count is small); returns when all are done. Calls made from inside a task run inline. */
typedef void (*nmt_pool_fn)(void *ctx, long begin, long end);
void nmt_pool_for(long count, nmt_pool_fn fn, void *ctx);
/* The same, but small work (count * cost_per_item under ~32k element operations) stays on the
 * caller's thread, where waking the pool would cost more than it saves. */
void nmt_pool_work(long count, long cost_per_item, nmt_pool_fn fn, void *ctx);

#endif
