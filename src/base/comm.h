/* comm: the processes of one run and the collective operations between them.
 *
 * The collectives of several processes come from a backend the program installs (nmt_comm_use):
 * comm_mpi's, which the nmt program of a build with MPI installs and libnmt does not contain, so that
 * a program that only translates never links MPI. Under `mpirun` (Open MPI sets OMPI_COMM_WORLD_SIZE
 * in every process it starts) with a backend installed, nmt_comm_init joins MPI_COMM_WORLD. Otherwise
 * (a plain `nmt train`, or no backend) it is the one-process communicator, rank 0 of 1, where every
 * collective leaves the data as it is; a process without a backend started by mpirun with more than
 * one process refuses, rather than train N copies alone.
 *
 * Every collective returns 0, or -1 with the error set naming the operation, this rank and its host.
 * The sums are MPI_SUM, whose order of addition MPI does not fix: they are exact only on integers, and
 * on doubles where at most one rank's value of an element is nonzero (gathering by sum). The seconds
 * each call waits are added to wait_s (transfer plus waiting for the slowest rank).
 *
 * Nonblocking all-reduces (nmt_comm_start, then nmt_comm_test until done or nmt_comm_wait) let a rank
 * compute while its data travels. Each operation runs on its own channel (a duplicate of the world
 * communicator): the starts of one operation must come in the same order on every rank, but a max
 * and a sum may be started in different orders on different ranks, and blocking collectives may come
 * between them. Open MPI moves a started operation on only inside MPI calls, so a rank that computes
 * calls nmt_comm_test now and then. The data must not be touched until the request is done. The
 * seconds spent inside test and wait are added to wait_s: what computation did not hide.
 *
 * A process that fails while the others wait in a collective calls nmt_comm_abort, which ends every
 * process of the run (MPI_Abort: mpirun then exits non-zero).
 */
#ifndef NMT_COMM_H
#define NMT_COMM_H

#include <stddef.h>
#include <stdint.h>

typedef struct nmt_comm {
    int rank, size;   /* this process, of size (1 without MPI) */
    int mpi;          /* 1 = MPI_COMM_WORLD was joined (nmt_comm_finalize leaves it) */
    char host[64];    /* this process's host name, for messages */
    double wait_s;    /* seconds spent in collectives so far */
    void *channels;   /* the backend's duplicated communicators, one per nonblocking operation (MPI only) */
} nmt_comm;

/* The nonblocking operations (each on its own channel). */
typedef enum { NMT_COMM_SUM_I64, NMT_COMM_MAX_I32, NMT_COMM_OPS } nmt_comm_op;

typedef struct nmt_comm_request {
    int active;             /* 1 from nmt_comm_start until a test or wait finds it done */
    nmt_comm_op op;         /* for messages */
    unsigned char mpi[16];  /* the MPI_Request (MPI only) */
} nmt_comm_request;

/* The collectives of a multi-process run (comm_mpi.c's). Each entry is called only for a communicator
 * that joined the run (comm->mpi set by join), with the meaning of the function of the same name. */
typedef struct nmt_comm_backend {
    int (*join)(nmt_comm *comm); /* comm is the local one; sets mpi, rank, size, channels */
    void (*finalize)(nmt_comm *comm);
    void (*abort)(const nmt_comm *comm, int status); /* does not return */
    int (*sum_i64)(nmt_comm *comm, int64_t *data, size_t count);
    int (*sum_f64)(nmt_comm *comm, double *data, size_t count);
    int (*max_i32)(nmt_comm *comm, int32_t *data, size_t count);
    int (*max_i32_idle)(nmt_comm *comm, int32_t *data, size_t count);
    int (*bcast)(nmt_comm *comm, void *data, size_t bytes, int root);
    int (*allgather)(nmt_comm *comm, const void *mine, size_t bytes, void *all);
    int (*allgather_f32)(nmt_comm *comm, float *data, const size_t *bounds);
    int (*gather_f32)(nmt_comm *comm, const float *mine, float *all, const size_t *bounds, int root);
    int (*start)(nmt_comm *comm, nmt_comm_op op, void *data, size_t count, nmt_comm_request *request);
    int (*finish)(nmt_comm *comm, nmt_comm_request *request, int *done, int wait); /* test (0) or wait (1) */
} nmt_comm_backend;

/* Installs the backend of multi-process runs (NULL: none), once, before the first nmt_comm_init and
 * before threads start: the process's communicators use it from then on. */
void nmt_comm_use(const nmt_comm_backend *backend);

/* Joins the run (see above). Call once per process, from the thread that makes every later call. */
int nmt_comm_init(nmt_comm *comm);
/* The one-process communicator, whatever the environment (tests, benchmarks). */
void nmt_comm_local(nmt_comm *comm);
/* Leaves MPI after a successful run (every rank must call it). */
void nmt_comm_finalize(nmt_comm *comm);
/* Ends every process of the run with `status` (just this one without MPI). */
_Noreturn void nmt_comm_abort(const nmt_comm *comm, int status);

/* Element-wise over all ranks, the result on every rank, in place. */
int nmt_comm_sum_i64(nmt_comm *comm, int64_t *data, size_t count);
int nmt_comm_sum_f64(nmt_comm *comm, double *data, size_t count);
int nmt_comm_max_i32(nmt_comm *comm, int32_t *data, size_t count);
/* The same, waiting politely (sleeping between polls), for waits that may last long, e.g. while
 * rank 0 validates: a spinning rank would take a core from it. */
int nmt_comm_max_i32_idle(nmt_comm *comm, int32_t *data, size_t count);
/* Rank `root`'s `bytes` bytes at data, on every rank. */
int nmt_comm_bcast(nmt_comm *comm, void *data, size_t bytes, int root);
/* Every rank's `bytes` bytes of mine, in rank order, into all[size * bytes] on every rank. */
int nmt_comm_allgather(nmt_comm *comm, const void *mine, size_t bytes, void *all);
int nmt_comm_barrier(nmt_comm *comm);
/* Slices of a float array: rank r's is [bounds[r], bounds[r + 1]) (bounds[size] at most 2^31 - 1).
 * allgather: every rank's slice of data, on every rank, in place. gather: every rank's slice (mine,
 * its bounds[r + 1] - bounds[r] floats) into all[bounds[size]] on rank `root` (all is not used elsewhere). */
int nmt_comm_allgather_f32(nmt_comm *comm, float *data, const size_t *bounds);
int nmt_comm_gather_f32(nmt_comm *comm, const float *mine, float *all, const size_t *bounds, int root);

/* Starts the element-wise all-reduce `op` of data[count] in place (int64_t for NMT_COMM_SUM_I64,
 * int32_t for NMT_COMM_MAX_I32; count at most 2^28). Without MPI the request is done at once. */
int nmt_comm_start(nmt_comm *comm, nmt_comm_op op, void *data, size_t count, nmt_comm_request *request);
/* *done = 1 when the request has finished (it is then inactive; an inactive request is done). */
int nmt_comm_test(nmt_comm *comm, nmt_comm_request *request, int *done);
/* Waits until the request has finished (returns at once for an inactive one). */
int nmt_comm_wait(nmt_comm *comm, nmt_comm_request *request);

#endif
