/* comm: the communicator of a run, one process by itself or several through the installed backend. */
#include "base/comm.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Largest count of one nonblocking all-reduce (MPI counts are int). */
enum { MAX_NONBLOCKING = 1 << 28 };

static const nmt_comm_backend *backend; /* set once by nmt_comm_use, before any communicator */

void nmt_comm_use(const nmt_comm_backend *b) { backend = b; }

/* Processes mpirun says it started (1 when not started by Open MPI). */
static long launched_size(void) {
    const char *s = getenv("OMPI_COMM_WORLD_SIZE");
    long n = s ? strtol(s, NULL, 10) : 1;
    return n > 0 ? n : 1;
}

void nmt_comm_local(nmt_comm *c) {
    memset(c, 0, sizeof *c);
    c->size = 1;
    if (gethostname(c->host, sizeof c->host) != 0) snprintf(c->host, sizeof c->host, "localhost");
    c->host[sizeof c->host - 1] = '\0';
}

int nmt_comm_init(nmt_comm *c) {
    nmt_comm_local(c);
    long n = launched_size();
    if (n == 1) return 0;
    if (!backend)
        return nmt_error_set("started by mpirun as one of %ld processes, but this nmt was built without MPI "
                             "(the nmt program of a build with Open MPI installed and -DNMT_MPI=ON has it)", n);
    return backend->join(c);
}

void nmt_comm_finalize(nmt_comm *c) {
    if (c->mpi) backend->finalize(c);
}

_Noreturn void nmt_comm_abort(const nmt_comm *c, int status) {
    if (c->mpi) backend->abort(c, status);
    exit(status);
}

/* One process: every collective leaves the data as it is, or copies this rank's part into place. */

int nmt_comm_sum_i64(nmt_comm *c, int64_t *data, size_t count) { return c->mpi ? backend->sum_i64(c, data, count) : 0; }

int nmt_comm_sum_f64(nmt_comm *c, double *data, size_t count) { return c->mpi ? backend->sum_f64(c, data, count) : 0; }

int nmt_comm_max_i32(nmt_comm *c, int32_t *data, size_t count) { return c->mpi ? backend->max_i32(c, data, count) : 0; }

int nmt_comm_max_i32_idle(nmt_comm *c, int32_t *data, size_t count) {
    return c->mpi ? backend->max_i32_idle(c, data, count) : 0;
}

int nmt_comm_bcast(nmt_comm *c, void *data, size_t bytes, int root) {
    return c->mpi ? backend->bcast(c, data, bytes, root) : 0;
}

int nmt_comm_allgather(nmt_comm *c, const void *mine, size_t bytes, void *all) {
    if (c->mpi) return backend->allgather(c, mine, bytes, all);
    memcpy(all, mine, bytes);
    return 0;
}

int nmt_comm_barrier(nmt_comm *c) {
    int32_t token = 0;
    return nmt_comm_max_i32_idle(c, &token, 1);
}

int nmt_comm_allgather_f32(nmt_comm *c, float *data, const size_t *bounds) {
    return c->mpi ? backend->allgather_f32(c, data, bounds) : 0;
}

int nmt_comm_gather_f32(nmt_comm *c, const float *mine, float *all, const size_t *bounds, int root) {
    if (c->mpi) return backend->gather_f32(c, mine, all, bounds, root);
    memcpy(all + bounds[0], mine, (bounds[1] - bounds[0]) * sizeof *all);
    return 0;
}

int nmt_comm_start(nmt_comm *c, nmt_comm_op op, void *data, size_t count, nmt_comm_request *r) {
    r->active = 0;
    r->op = op;
    if (count > MAX_NONBLOCKING)
        return nmt_error_set("nonblocking all-reduce of %zu elements: at most %d", count, MAX_NONBLOCKING);
    return c->mpi ? backend->start(c, op, data, count, r) : 0;
}

int nmt_comm_test(nmt_comm *c, nmt_comm_request *r, int *done) {
    if (c->mpi) return backend->finish(c, r, done, 0);
    *done = 1;
    r->active = 0;
    return 0;
}

int nmt_comm_wait(nmt_comm *c, nmt_comm_request *r) {
    int done;
    if (c->mpi) return backend->finish(c, r, &done, 1);
    r->active = 0;
    return 0;
}
