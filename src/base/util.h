/* util: errors, checked allocation, arenas.
 *
 * Errors. Library functions report failure by returning a negative value (or NULL) after calling
 * nmt_error_set(); the message, such as "train.en:12: invalid UTF-8 at byte 7", is read back with
 * nmt_error(). The library never prints: the CLI prints the message and chooses the exit code.
 * The message is per thread.
 *
 * Allocation. nmt_malloc/nmt_calloc/nmt_realloc never abort: on failure they set the error
 * ("out of memory: N bytes") and return NULL. Tests make the Nth allocation fail with
 * nmt_alloc_fail_at(N) to prove every error path; NMT_FAULT_ALLOC=N in the environment does the
 * same for a whole process.
 *
 * Arenas. An arena hands out 64-byte aligned blocks by bumping a pointer through chunks that it
 * keeps across nmt_arena_reset(), so a loop that allocates the same sizes every iteration only
 * mallocs during its first iteration.
 */
#ifndef NMT_UTIL_H
#define NMT_UTIL_H

#include <stdarg.h>
#include <stddef.h>

#if defined(__GNUC__)
#define NMT_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define NMT_PRINTF(fmt, args)
#endif

/* The kind of failure an error reports, beside its message (nmt.h's nmt_status gives it to programs):
 * memory that ran out, a file the system would not open, read or write, or anything else. */
typedef enum nmt_error_kind { NMT_ERROR_NONE, NMT_ERROR_FAILED, NMT_ERROR_NO_MEMORY, NMT_ERROR_IO } nmt_error_kind;

/* Sets this thread's error message (of kind NMT_ERROR_FAILED); returns -1 so that
 * `return nmt_error_set(...)` reads well. */
int nmt_error_set(const char *fmt, ...) NMT_PRINTF(1, 2);
/* The same with the kind of the failure. Returns -1. */
int nmt_error_set_kind(nmt_error_kind kind, const char *fmt, ...) NMT_PRINTF(2, 3);
/* Prepends "prefix: " to the current message (e.g. a file name added by a caller); the kind stays.
 * Returns -1. */
int nmt_error_prefix(const char *fmt, ...) NMT_PRINTF(1, 2);
/* The last error message of this thread ("" when none) and its kind (NMT_ERROR_NONE when none). */
const char *nmt_error(void);
nmt_error_kind nmt_error_last_kind(void);
void nmt_error_clear(void);

void *nmt_malloc(size_t size);
/* The same, 64-byte aligned (a cache line: vector loads never straddle two); free() releases it. */
void *nmt_malloc_aligned(size_t size);
/* The same for big buffers that are read all over (a decoder's caches): from 4 MiB up, aligned to
 * and backed by 2 MiB pages where the kernel allows, so that touching it costs few page faults and
 * TLB entries. free() releases it. */
void *nmt_malloc_huge(size_t size);
/* Gives the memory pages lying wholly inside [data, data + size) back to the system (madvise
 * MADV_DONTNEED; nothing where that does not exist) and returns their bytes. Anonymous pages then
 * read as zeros; a file mapping's are read from the file again when touched. */
size_t nmt_pages_release(const void *data, size_t size);
/* Faults in, writable, the anonymous pages lying wholly inside [data, data + size) in one call
 * (madvise MADV_POPULATE_WRITE, Linux 5.14 on; nothing elsewhere): cheaper than a fault a page for
 * a buffer about to be written whole. */
void nmt_pages_populate(void *data, size_t size);
void *nmt_calloc(size_t count, size_t size);
void *nmt_realloc(void *ptr, size_t size);
char *nmt_strdup(const char *s);
/* Fault injection: the n-th allocation from now (1 = the next one) fails; 0 turns it off. */
void nmt_alloc_fail_at(long n);

/* Multiplies two sizes, or sets an error naming `what` and returns -1 on overflow. */
int nmt_size_mul(size_t a, size_t b, size_t *out, const char *what);

typedef struct nmt_arena_chunk nmt_arena_chunk;
typedef struct nmt_arena {
    nmt_arena_chunk *chunks;  /* all chunks, newest first */
    nmt_arena_chunk *current; /* the chunk being filled */
    size_t chunk_size;        /* default size of a new chunk in bytes */
    size_t high_water;        /* most bytes ever in use at once */
    size_t used;              /* bytes in use since the last reset */
} nmt_arena;

void nmt_arena_init(nmt_arena *arena, size_t chunk_size);
/* 64-byte aligned, uninitialised memory; NULL with the error set when memory runs out. */
void *nmt_arena_alloc(nmt_arena *arena, size_t size);
/* Same, for `count` floats set to zero. */
float *nmt_arena_floats(nmt_arena *arena, size_t count);
/* Forgets every block but keeps the chunks for reuse. */
void nmt_arena_reset(nmt_arena *arena);
void nmt_arena_free(nmt_arena *arena);

/* A block that only grows, for buffers refilled on every use (a batch's). Its contents do not survive
 * growth, so it grows by a fresh allocation (nmt_malloc_huge) rather than a copying realloc, and by at
 * least half its size: the batches of a length-sorted window each need a little more, and would
 * otherwise reallocate (and fault in fresh pages) every time. Zero-initialise; free() data. */
typedef struct nmt_scratch {
    void *data;
    size_t cap; /* bytes */
} nmt_scratch;

/* Room for `bytes` (the contents are lost when it grows). 0, or -1 with the error set. */
int nmt_scratch_reserve(nmt_scratch *scratch, size_t bytes);

/* Monotonic wall-clock seconds. */
double nmt_now(void);
/* CPU seconds that all of this process's threads have run, summed (less than threads x wall-clock
 * seconds where they waited or other processes held the CPUs). */
double nmt_cpu_seconds(void);
/* seconds as H:MM:SS (rounded), or "-" when negative or not finite. */
void nmt_format_duration(char *out, size_t size, double seconds);
/* The CPUs this process may run on (sched_getaffinity: taskset and container limits count), at
 * least 1: the default thread count of every command and of the C API. */
int nmt_cpus_available(void);

#endif
