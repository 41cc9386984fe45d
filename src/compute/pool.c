/* pool: a fixed set of threads that run each task's index ranges, spinning briefly between tasks.
 *
 * A task posts (fn, ctx, count) and bumps a generation counter; workers spin on it for a few tens
 * of microseconds, then sleep on a condition variable. Each thread runs one fixed contiguous range
 * of the task, and the caller waits for the last worker to finish.
 */
#include "compute/pool.h"

#include "base/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define cpu_relax() __builtin_ia32_pause()
#else
#define cpu_relax() ((void)0)
#endif

enum { POOL_SPIN = 20000 }; /* pause-loop iterations before a thread blocks (tens of microseconds) */

static struct {
    int threads;              /* the caller + workers; 0 until first use */
    int requested;            /* the count last set; a forked child starts this many again */
    pthread_t *workers;       /* [threads - 1] */
    pthread_mutex_t lock;
    pthread_cond_t wake;      /* workers wait here for the next task */
    pthread_cond_t done;      /* the caller waits here for the last worker */
    atomic_ulong generation;  /* bumped once per task */
    unsigned long start_generation; /* the generation when the workers were started */
    atomic_int running;       /* workers not yet finished with the current task */
    int shutdown;
    nmt_pool_fn fn;       /* the current task */
    void *ctx;
    long count;
    int parts;                /* ranges in the current task (<= threads) */
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};

static _Thread_local int in_pool_task; /* nested parallel calls run inline */

static void pool_run_part(int part) {
    long begin = pool.count * part / pool.parts, end = pool.count * (part + 1) / pool.parts;
    if (begin < end) pool.fn(pool.ctx, begin, end);
}

static void *pool_worker(void *arg) {
    int part = (int)(intptr_t)arg;
    unsigned long seen = pool.start_generation; /* not the current value: a task may already be posted */
    in_pool_task = 1;
    for (;;) {
        for (int i = 0; i < POOL_SPIN && atomic_load_explicit(&pool.generation, memory_order_acquire) == seen; i++)
            cpu_relax();
        pthread_mutex_lock(&pool.lock);
        while (atomic_load(&pool.generation) == seen && !pool.shutdown) pthread_cond_wait(&pool.wake, &pool.lock);
        if (pool.shutdown) {
            pthread_mutex_unlock(&pool.lock);
            return NULL;
        }
        seen = atomic_load(&pool.generation);
        pthread_mutex_unlock(&pool.lock);
        if (part < pool.parts) pool_run_part(part);
        if (atomic_fetch_sub_explicit(&pool.running, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&pool.lock);
            pthread_cond_signal(&pool.done);
            pthread_mutex_unlock(&pool.lock);
        }
    }
}

static void pool_stop(void) {
    if (pool.threads <= 1) return;
    pthread_mutex_lock(&pool.lock);
    pool.shutdown = 1;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
    for (int i = 0; i < pool.threads - 1; i++) pthread_join(pool.workers[i], NULL);
    free(pool.workers);
    pool.workers = NULL;
    pool.shutdown = 0;
    pool.threads = 1;
}

/* A forked child has only the forking thread: it forgets the parent's workers (its first parallel
 * call starts as many of its own), instead of waiting for threads that do not exist. */
static void pool_forget_after_fork(void) {
    free(pool.workers);
    pool.workers = NULL;
    pool.threads = 0;
    pool.shutdown = 0;
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.done, NULL);
    in_pool_task = 0;
}

static void register_atfork(void) { pthread_atfork(NULL, NULL, pool_forget_after_fork); }

int nmt_pool_set_threads(int threads) {
    static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
    if (threads < 1) return nmt_error_set("threads must be at least 1, not %d", threads);
    pool.requested = threads;
    if (threads == pool.threads) return 0;
    pool_stop();
    pool.threads = 1;
    if (threads == 1) return 0;
    pthread_once(&atfork_once, register_atfork);
    pool.workers = nmt_calloc((size_t)threads - 1, sizeof *pool.workers);
    if (!pool.workers) return -1;
    pool.start_generation = atomic_load(&pool.generation);
    for (int i = 0; i < threads - 1; i++) {
        if (pthread_create(&pool.workers[i], NULL, pool_worker, (void *)(intptr_t)(i + 1)) != 0) {
            pool.threads = i + 1; /* the workers made so far, for pool_stop */
            pool_stop();
            return nmt_error_set("cannot start thread %d of %d", i + 2, threads);
        }
    }
    pool.threads = threads;
    return 0;
}

int nmt_pool_threads(void) {
    if (pool.threads == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        int want = pool.requested ? pool.requested : cpus > 1 ? (int)(cpus < 64 ? cpus : 64) : 1;
        if (nmt_pool_set_threads(want) < 0) nmt_pool_set_threads(1);
    }
    return pool.threads;
}

void nmt_pool_for(long count, nmt_pool_fn fn, void *ctx) {
    if (count <= 0) return;
    int threads = nmt_pool_threads();
    if (threads == 1 || count == 1 || in_pool_task) {
        fn(ctx, 0, count);
        return;
    }
    pthread_mutex_lock(&pool.lock);
    pool.fn = fn;
    pool.ctx = ctx;
    pool.count = count;
    pool.parts = count < threads ? (int)count : threads;
    atomic_store(&pool.running, threads - 1);
    atomic_fetch_add_explicit(&pool.generation, 1, memory_order_release);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);

    in_pool_task = 1;
    pool_run_part(0);
    in_pool_task = 0;

    for (int i = 0; i < POOL_SPIN && atomic_load_explicit(&pool.running, memory_order_acquire) > 0; i++) cpu_relax();
    if (atomic_load(&pool.running) > 0) {
        pthread_mutex_lock(&pool.lock);
        while (atomic_load(&pool.running) > 0) pthread_cond_wait(&pool.done, &pool.lock);
        pthread_mutex_unlock(&pool.lock);
    }
}

void nmt_pool_work(long count, long cost_per_item, nmt_pool_fn fn, void *ctx) {
    if (count * cost_per_item < 32768)
        fn(ctx, 0, count);
    else
        nmt_pool_for(count, fn, ctx);
}
