/* pool: the one thread pool that runs every parallel loop of nmt.
 *
 * The pool has `threads` threads: the caller plus threads-1 workers, made once (by
 * nmt_pool_set_threads or at the first parallel call). A task is a function over an index range
 * [0, count) cut into units of `grain` consecutive indices; each thread takes the next unit not
 * yet taken until none is left, so a thread that the OS holds back (a core shared with another
 * process) takes fewer units instead of delaying the others, and the task ends when its last unit
 * is done. The units are the same whatever the thread count and whichever thread runs them: a task
 * whose units each compute their own outputs gives bit-identical results on any number of threads.
 * Nested parallel calls, made from inside a task, run their units inline on the calling thread.
 * Tasks posted by several threads at once take turns. The pool is the only source of
 * parallelism (gemm sets OpenBLAS to one thread), so no thread ever spins against another's work.
 */
#ifndef NMT_POOL_H
#define NMT_POOL_H

/* Sets the pool size (1 = everything on the caller's thread). Not to be called from a pool task. */
int nmt_pool_set_threads(int threads);
/* The pool size: the size set last, or at first use the number of CPUs online (at most 64). */
int nmt_pool_threads(void);
/* 1 on a thread that is running a pool task (where parallel calls run inline), else 0. */
int nmt_pool_in_task(void);

/* Runs fn(ctx, begin, end) once for each unit [u * grain, min((u + 1) * grain, count)) of
 * [0, count), on the pool's threads, and returns when all are done. grain < 1 counts as 1. */
typedef void (*nmt_pool_fn)(void *ctx, long begin, long end);
void nmt_pool_for(long count, long grain, nmt_pool_fn fn, void *ctx);
/* The same with units of about 32k element operations (grain = 32768 / cost_per_item, at least
 * 1): work smaller than one unit stays on the caller's thread, where waking the pool would cost
 * more than it saves. */
void nmt_pool_work(long count, long cost_per_item, nmt_pool_fn fn, void *ctx);
/* For loops over the columns of a [rows, columns] matrix read row by row (column sums): the same,
 * with units of at least 64 columns, so that a unit reads whole cache lines of each row. */
void nmt_pool_columns(long columns, long rows, nmt_pool_fn fn, void *ctx);

#endif
