/* util: the per-thread error message, allocation with a fault-injection hook, and arenas. */
#include "base/util.h"

#include <unistd.h>
#include <sched.h>
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static _Thread_local char error_message[2048];
static _Thread_local nmt_error_kind error_kind;

static void error_vset(nmt_error_kind kind, const char *fmt, va_list ap) {
    vsnprintf(error_message, sizeof error_message, fmt, ap);
    error_kind = kind;
}

int nmt_error_set(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    error_vset(NMT_ERROR_FAILED, fmt, ap);
    va_end(ap);
    return -1;
}

int nmt_error_set_kind(nmt_error_kind kind, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    error_vset(kind, fmt, ap);
    va_end(ap);
    return -1;
}

int nmt_error_prefix(const char *fmt, ...) {
    char combined[sizeof error_message];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(combined, sizeof combined, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof combined - 2) return -1;
    size_t len = (size_t)n;
    combined[len++] = ':';
    combined[len++] = ' ';
    size_t rest = strnlen(error_message, sizeof combined - len - 1);
    memcpy(combined + len, error_message, rest);
    combined[len + rest] = '\0';
    memcpy(error_message, combined, len + rest + 1);
    return -1;
}

const char *nmt_error(void) { return error_message; }

nmt_error_kind nmt_error_last_kind(void) { return error_kind; }

void nmt_error_clear(void) {
    error_message[0] = '\0';
    error_kind = NMT_ERROR_NONE;
}

/* Countdown to the allocation that fails: 0 = off, -1 = not yet read from the environment. */
static atomic_long alloc_countdown = -1; /* atomic: the translator's workers allocate concurrently */

void nmt_alloc_fail_at(long n) { atomic_store(&alloc_countdown, n > 0 ? n : 0); }

static int alloc_should_fail(size_t size) {
    if (atomic_load(&alloc_countdown) < 0) {
        const char *env = getenv("NMT_FAULT_ALLOC");
        long n = env ? strtol(env, NULL, 10) : 0;
        atomic_store(&alloc_countdown, n > 0 ? n : 0);
    }
    long left = atomic_load(&alloc_countdown);
    while (left > 0 && !atomic_compare_exchange_weak(&alloc_countdown, &left, left - 1)) {
    }
    if (left == 1) {
        nmt_error_set_kind(NMT_ERROR_NO_MEMORY, "out of memory: %zu bytes (injected fault)", size);
        return 1;
    }
    return 0;
}

void *nmt_malloc(size_t size) {
    if (alloc_should_fail(size)) return NULL;
    void *p = malloc(size ? size : 1);
    if (!p) nmt_error_set_kind(NMT_ERROR_NO_MEMORY, "out of memory: %zu bytes", size);
    return p;
}

void *nmt_malloc_aligned(size_t size) {
    if (alloc_should_fail(size)) return NULL;
    size_t rounded = (size + 63) & ~(size_t)63;
    if (rounded < size) {
        nmt_error_set_kind(NMT_ERROR_NO_MEMORY, "out of memory: %zu bytes", size);
        return NULL;
    }
    void *p = aligned_alloc(64, rounded ? rounded : 64);
    if (!p) nmt_error_set_kind(NMT_ERROR_NO_MEMORY, "out of memory: %zu bytes", size);
    return p;
}

void *nmt_malloc_huge(size_t size) {
    enum { HUGE_PAGE = 2 << 20 };
    if (size < 2 * HUGE_PAGE) return nmt_malloc_aligned(size);
    if (alloc_should_fail(size)) return NULL;
    size_t rounded = (size + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
    void *p = rounded < size ? NULL : aligned_alloc(HUGE_PAGE, rounded);
    if (!p) {
        nmt_error_set_kind(NMT_ERROR_NO_MEMORY, "out of memory: %zu bytes", size);
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    madvise(p, rounded, MADV_HUGEPAGE); /* advice only: without it, ordinary pages */
#endif
    return p;
}

size_t nmt_pages_release(const void *data, size_t size) {
#ifdef MADV_DONTNEED
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t lo = ((uintptr_t)data + page - 1) & ~(page - 1), hi = ((uintptr_t)data + size) & ~(page - 1);
    if (hi > lo && madvise((void *)lo, hi - lo, MADV_DONTNEED) == 0) return hi - lo;
#else
    (void)data, (void)size;
#endif
    return 0;
}

void nmt_pages_populate(void *data, size_t size) {
#ifdef MADV_POPULATE_WRITE
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t lo = ((uintptr_t)data + page - 1) & ~(page - 1), hi = ((uintptr_t)data + size) & ~(page - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE); /* advice: touching faults them in anyway */
#else
    (void)data, (void)size;
#endif
}

int nmt_scratch_reserve(nmt_scratch *s, size_t bytes) {
    if (bytes <= s->cap) return 0;
    size_t grown = s->cap + s->cap / 2;
    if (grown < bytes) grown = bytes;
    free(s->data);
    s->cap = 0;
    s->data = nmt_malloc_huge(grown);
    if (!s->data) return -1;
    s->cap = grown;
    return 0;
}

void *nmt_calloc(size_t count, size_t size) {
    size_t total = 0;
    if (nmt_size_mul(count, size, &total, "allocation") < 0) return NULL;
    if (alloc_should_fail(total)) return NULL;
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) nmt_error_set_kind(NMT_ERROR_NO_MEMORY, "out of memory: %zu bytes", total);
    return p;
}

void *nmt_realloc(void *ptr, size_t size) {
    if (alloc_should_fail(size)) return NULL;
    void *p = realloc(ptr, size ? size : 1);
    if (!p) nmt_error_set_kind(NMT_ERROR_NO_MEMORY, "out of memory: %zu bytes", size);
    return p;
}

char *nmt_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *copy = nmt_malloc(n);
    if (copy) memcpy(copy, s, n);
    return copy;
}

int nmt_size_mul(size_t a, size_t b, size_t *out, const char *what) {
    if (b != 0 && a > SIZE_MAX / b) return nmt_error_set_kind(NMT_ERROR_NO_MEMORY, "%s: size overflow (%zu x %zu)", what, a, b);
    *out = a * b;
    return 0;
}

enum { ARENA_ALIGN = 64 };

struct nmt_arena_chunk {
    nmt_arena_chunk *next; /* older chunk */
    size_t capacity;       /* usable bytes after the header */
    size_t used;
    _Alignas(ARENA_ALIGN) unsigned char data[];
};

void nmt_arena_init(nmt_arena *arena, size_t chunk_size) {
    memset(arena, 0, sizeof *arena);
    arena->chunk_size = chunk_size ? chunk_size : (size_t)1 << 20;
}

static nmt_arena_chunk *arena_chunk_new(size_t capacity) {
    nmt_arena_chunk *chunk = NULL;
    if (alloc_should_fail(capacity)) return NULL;
    if (posix_memalign((void **)&chunk, ARENA_ALIGN, sizeof *chunk + capacity) != 0) {
        nmt_error_set_kind(NMT_ERROR_NO_MEMORY, "out of memory: arena chunk of %zu bytes", capacity);
        return NULL;
    }
    chunk->next = NULL;
    chunk->capacity = capacity;
    chunk->used = 0;
    return chunk;
}

void *nmt_arena_alloc(nmt_arena *arena, size_t size) {
    size_t rounded = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (rounded < size) {
        nmt_error_set_kind(NMT_ERROR_NO_MEMORY, "arena: size overflow (%zu bytes)", size);
        return NULL;
    }
    /* Walk forward through chunks kept from before a reset, then add a new one. */
    while (arena->current && arena->current->capacity - arena->current->used < rounded) {
        nmt_arena_chunk *newer = NULL;
        for (nmt_arena_chunk *c = arena->chunks; c && c != arena->current; c = c->next) newer = c;
        if (!newer) break;
        arena->current = newer;
        arena->current->used = 0;
    }
    if (!arena->current || arena->current->capacity - arena->current->used < rounded) {
        size_t capacity = rounded > arena->chunk_size ? rounded : arena->chunk_size;
        nmt_arena_chunk *chunk = arena_chunk_new(capacity);
        if (!chunk) return NULL;
        /* The new chunk becomes the newest; chunks newer than `current` (too small) stay behind it. */
        chunk->next = arena->chunks;
        arena->chunks = chunk;
        arena->current = chunk;
    }
    void *p = arena->current->data + arena->current->used;
    arena->current->used += rounded;
    arena->used += rounded;
    if (arena->used > arena->high_water) arena->high_water = arena->used;
    return p;
}

float *nmt_arena_floats(nmt_arena *arena, size_t count) {
    size_t bytes = 0;
    if (nmt_size_mul(count, sizeof(float), &bytes, "arena") < 0) return NULL;
    float *p = nmt_arena_alloc(arena, bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

void nmt_arena_reset(nmt_arena *arena) {
    /* Restart from the oldest chunk. */
    nmt_arena_chunk *oldest = arena->chunks;
    while (oldest && oldest->next) oldest = oldest->next;
    arena->current = oldest;
    if (oldest) oldest->used = 0;
    arena->used = 0;
}

void nmt_arena_free(nmt_arena *arena) {
    nmt_arena_chunk *c = arena->chunks;
    while (c) {
        nmt_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    nmt_arena_init(arena, arena->chunk_size);
}

double nmt_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double nmt_cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void nmt_format_duration(char *out, size_t size, double seconds) {
    if (!isfinite(seconds) || seconds < 0) {
        snprintf(out, size, "-");
        return;
    }
    long s = (long)(seconds + 0.5);
    snprintf(out, size, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
}

int nmt_cpus_available(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
