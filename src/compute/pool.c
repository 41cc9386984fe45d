/* pool: a fixed set of threads that take a task's units one at a time, spinning briefly, then
 * sleeping, between tasks.
 *
 * One 64-bit word publishes the task: the task's generation in the upper half, the units not yet
 * taken in the lower. A thread takes a unit by decrementing the word with a compare-and-swap, which
 * fails if another thread took it first or a newer task replaced it; while a thread holds a unit,
 * the task cannot end, so the task's fields it reads then are that task's. The caller posts the
 * task, takes units like any worker, and waits only for units that others have taken and not yet
 * finished: a worker that wakes late finds nothing left and costs the task nothing. Waits spin for
 * a few tens of microseconds (a task follows another within microseconds while training), then
 * sleep on a condition variable, so that a thread waiting for a descheduled one frees its core and
 * the OS can move the descheduled thread there.
 */
#include "compute/pool.h"

#include "base/util.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define cpu_relax() __builtin_ia32_pause()
#else
#define cpu_relax() ((void)0)
#endif

enum {
    POOL_SPIN_NS = 50000, /* how long a waiting thread spins before it sleeps */
    POOL_GRAIN = 32768,   /* element operations per unit of nmt_pool_work */
    POOL_COLUMNS = 64,    /* the fewest columns in a unit of nmt_pool_columns */
};

static struct {
    alignas(64) _Atomic uint64_t claim; /* (generation << 32) | units not yet taken */
    alignas(64) atomic_long finished;   /* units of the current task done */
    atomic_int sleepers;                /* workers asleep, or about to be, on `wake` */
    atomic_int caller_asleep;           /* the caller is asleep, or about to be, on `done` */
    alignas(64) int threads;            /* the caller + workers; 0 until first use */
    int requested;                      /* the count last set; a forked child starts this many again */
    pthread_t *workers;                 /* [threads - 1] */
    pthread_mutex_t lock;               /* guards sleeping and shutdown */
    pthread_cond_t wake;                /* workers wait here for the next task */
    pthread_cond_t done;                /* the caller waits here for the last unit */
    pthread_mutex_t post;               /* one task at a time */
    uint32_t generation;                /* of the task posted last (the poster's, under `post`) */
    int shutdown;
    nmt_pool_fn fn; /* the current task: its units are [u * grain, min((u + 1) * grain, count)) */
    void *ctx;
    long count, grain, units;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER,
          .wake = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER,
          .post = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local int in_pool_task; /* nested parallel calls run inline */

int nmt_pool_in_task(void) { return in_pool_task; }

static uint32_t generation_of(uint64_t word) { return (uint32_t)(word >> 32); }

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Spins until done(arg) or POOL_SPIN_NS have passed; returns done(arg). */
static int spin_until(int (*done)(uint32_t), uint32_t arg) {
    long deadline = 0;
    for (int i = 0;; i++) {
        if (done(arg)) return 1;
        if ((i & 31) == 31) {
            long t = now_ns();
            if (deadline == 0) deadline = t + POOL_SPIN_NS;
            else if (t >= deadline) return done(arg);
        }
        cpu_relax();
    }
}

/* Sequentially consistent loads: a thread about to sleep announces it (sleepers, caller_asleep),
 * then checks again; the thread that would wake it stores, then reads the announcement. */
static int task_posted(uint32_t seen) { return generation_of(atomic_load(&pool.claim)) != seen; }

static int task_finished(uint32_t units) { return atomic_load(&pool.finished) == (long)units; }

/* Takes and runs units of whatever task is current until none is left. */
static void take_units(void) {
    uint64_t word = atomic_load_explicit(&pool.claim, memory_order_acquire);
    while ((uint32_t)word != 0) {
        if (!atomic_compare_exchange_weak_explicit(&pool.claim, &word, word - 1, memory_order_acq_rel,
                                                   memory_order_acquire))
            continue; /* word now holds the current value */
        const long units = pool.units, unit = units - (long)(uint32_t)word;
        const long begin = unit * pool.grain, end = begin + pool.grain < pool.count ? begin + pool.grain : pool.count;
        pool.fn(pool.ctx, begin, end);
        /* Once the last unit is counted the task is over and its fields may change: units was read before. */
        if (atomic_fetch_add(&pool.finished, 1) + 1 == units && atomic_load(&pool.caller_asleep)) {
            pthread_mutex_lock(&pool.lock);
            pthread_cond_signal(&pool.done);
            pthread_mutex_unlock(&pool.lock);
        }
        word = atomic_load_explicit(&pool.claim, memory_order_acquire);
    }
}

static void *pool_worker(void *arg) {
    uint32_t seen = (uint32_t)(uintptr_t)arg; /* the generation when the workers were started */
    in_pool_task = 1;
    for (;;) {
        if (!spin_until(task_posted, seen)) {
            pthread_mutex_lock(&pool.lock);
            atomic_fetch_add(&pool.sleepers, 1);
            while (!task_posted(seen) && !pool.shutdown) pthread_cond_wait(&pool.wake, &pool.lock);
            atomic_fetch_sub(&pool.sleepers, 1);
            const int stop = pool.shutdown;
            pthread_mutex_unlock(&pool.lock);
            if (stop) return NULL;
        }
        seen = generation_of(atomic_load_explicit(&pool.claim, memory_order_acquire));
        take_units();
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
    atomic_store(&pool.sleepers, 0);
    atomic_store(&pool.caller_asleep, 0);
    pthread_mutex_init(&pool.lock, NULL);
    pthread_mutex_init(&pool.post, NULL);
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
    const uint32_t started = generation_of(atomic_load(&pool.claim));
    for (int i = 0; i < threads - 1; i++) {
        if (pthread_create(&pool.workers[i], NULL, pool_worker, (void *)(uintptr_t)started) != 0) {
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

void nmt_pool_for(long count, long grain, nmt_pool_fn fn, void *ctx) {
    if (count <= 0) return;
    if (grain < 1) grain = 1;
    if (grain < count / UINT32_MAX + 1) grain = count / UINT32_MAX + 1; /* units fit the claim word */
    const long units = (count + grain - 1) / grain;
    if (units == 1 || in_pool_task || nmt_pool_threads() == 1) {
        for (long begin = 0; begin < count; begin += grain) fn(ctx, begin, begin + grain < count ? begin + grain : count);
        return;
    }
    pthread_mutex_lock(&pool.post);
    pool.fn = fn;
    pool.ctx = ctx;
    pool.count = count;
    pool.grain = grain;
    pool.units = units;
    atomic_store(&pool.finished, 0);
    pool.generation = generation_of(atomic_load(&pool.claim)) + 1;
    atomic_store(&pool.claim, (uint64_t)pool.generation << 32 | (uint64_t)units);
    if (atomic_load(&pool.sleepers) > 0) {
        pthread_mutex_lock(&pool.lock);
        pthread_cond_broadcast(&pool.wake);
        pthread_mutex_unlock(&pool.lock);
    }

    in_pool_task = 1;
    take_units();
    in_pool_task = 0;

    if (!spin_until(task_finished, (uint32_t)units)) {
        pthread_mutex_lock(&pool.lock);
        atomic_store(&pool.caller_asleep, 1);
        while (!task_finished((uint32_t)units)) pthread_cond_wait(&pool.done, &pool.lock);
        atomic_store(&pool.caller_asleep, 0);
        pthread_mutex_unlock(&pool.lock);
    }
    pthread_mutex_unlock(&pool.post);
}

static long grain_of(long cost_per_item) {
    return cost_per_item >= POOL_GRAIN ? 1 : POOL_GRAIN / (cost_per_item > 1 ? cost_per_item : 1);
}

void nmt_pool_work(long count, long cost_per_item, nmt_pool_fn fn, void *ctx) {
    nmt_pool_for(count, grain_of(cost_per_item), fn, ctx);
}

void nmt_pool_columns(long columns, long rows, nmt_pool_fn fn, void *ctx) {
    const long grain = grain_of(rows);
    nmt_pool_for(columns, grain > POOL_COLUMNS ? grain : POOL_COLUMNS, fn, ctx);
}
