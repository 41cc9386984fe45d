/* comm_mpi: the collectives of a multi-process run over MPI_COMM_WORLD, the only module that calls
 * MPI. It is not part of libnmt: the nmt program of a build with Open MPI links it and installs it
 * (nmt_comm_use), so that a program that only translates never links MPI. */
#include "base/comm_mpi.h"
#include "base/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

/* MPI counts are int: large buffers go in pieces of this many elements. */
enum { CHUNK = 1 << 28 };

static int mpi_error(const nmt_comm *c, const char *what, int code) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "MPI error %d", code);
    return nmt_error_set("%s failed on rank %d of %d (host %s): %s", what, c->rank, c->size, c->host, text);
}

static int join(nmt_comm *c) {
    int provided, rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) return nmt_error_set("MPI_Init failed on host %s (error %d)", c->host, rc);
    c->mpi = 1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    MPI_Comm *channels = nmt_malloc(NMT_COMM_OPS * sizeof *channels);
    if (!channels) return -1;
    for (int op = 0; op < NMT_COMM_OPS; op++) {
        rc = MPI_Comm_dup(MPI_COMM_WORLD, &channels[op]);
        if (rc != MPI_SUCCESS) {
            free(channels);
            return mpi_error(c, "duplicating the world communicator", rc);
        }
        MPI_Comm_set_errhandler(channels[op], MPI_ERRORS_RETURN);
    }
    c->channels = channels;
    return 0;
}

static void finalize(nmt_comm *c) {
    MPI_Comm *channels = c->channels;
    for (int op = 0; channels && op < NMT_COMM_OPS; op++) MPI_Comm_free(&channels[op]);
    free(channels);
    c->channels = NULL;
    if (c->mpi) MPI_Finalize();
    c->mpi = 0;
}

static void abort_run(const nmt_comm *c, int status) {
    (void)c;
    MPI_Abort(MPI_COMM_WORLD, status);
    exit(status);
}

static int allreduce(nmt_comm *c, void *data, size_t count, MPI_Datatype type, size_t elem, MPI_Op op,
                     const char *what) {
    double start = nmt_now();
    for (size_t at = 0; at < count; at += CHUNK) {
        int n = (int)(count - at < CHUNK ? count - at : CHUNK);
        int rc = MPI_Allreduce(MPI_IN_PLACE, (char *)data + at * elem, n, type, op, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) return mpi_error(c, what, rc);
    }
    c->wait_s += nmt_now() - start;
    return 0;
}

static int sum_i64(nmt_comm *c, int64_t *data, size_t count) {
    return allreduce(c, data, count, MPI_INT64_T, sizeof *data, MPI_SUM, "all-reduce (sum of int64)");
}

static int sum_f64(nmt_comm *c, double *data, size_t count) {
    return allreduce(c, data, count, MPI_DOUBLE, sizeof *data, MPI_SUM, "all-reduce (sum of doubles)");
}

static int max_i32(nmt_comm *c, int32_t *data, size_t count) {
    return allreduce(c, data, count, MPI_INT32_T, sizeof *data, MPI_MAX, "all-reduce (max of int32)");
}

static int max_i32_idle(nmt_comm *c, int32_t *data, size_t count) {
    if (count > CHUNK) return max_i32(c, data, count);
    double start = nmt_now();
    MPI_Request request;
    int rc = MPI_Iallreduce(MPI_IN_PLACE, data, (int)count, MPI_INT32_T, MPI_MAX, MPI_COMM_WORLD, &request);
    int done = 0;
    for (long polls = 0; rc == MPI_SUCCESS && !done; polls++) {
        rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (!done && polls > 1000) nanosleep(&(struct timespec){0, 200000}, NULL); /* 0.2 ms */
    }
    if (rc != MPI_SUCCESS) return mpi_error(c, "all-reduce (max of int32)", rc);
    c->wait_s += nmt_now() - start;
    return 0;
}

static int bcast(nmt_comm *c, void *data, size_t bytes, int root) {
    double start = nmt_now();
    for (size_t at = 0; at < bytes; at += CHUNK) {
        int n = (int)(bytes - at < CHUNK ? bytes - at : CHUNK);
        int rc = MPI_Bcast((char *)data + at, n, MPI_BYTE, root, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) return mpi_error(c, "broadcast", rc);
    }
    c->wait_s += nmt_now() - start;
    return 0;
}

static int allgather(nmt_comm *c, const void *mine, size_t bytes, void *all) {
    if (bytes > CHUNK) return nmt_error_set("all-gather of %zu bytes a rank: at most %d", bytes, CHUNK);
    double start = nmt_now();
    int rc = MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return mpi_error(c, "all-gather", rc);
    c->wait_s += nmt_now() - start;
    return 0;
}

/* MPI's int counts and displacements of the slices `bounds` (nmt_comm_allgather_f32). */
static int slice_counts(const nmt_comm *c, const size_t *bounds, int **counts, int **displs) {
    *counts = *displs = NULL;
    if (bounds[c->size] > INT_MAX)
        return nmt_error_set("gathering %zu floats: at most %d", bounds[c->size], INT_MAX);
    *counts = nmt_malloc(2 * (size_t)c->size * sizeof **counts);
    if (!*counts) return -1;
    *displs = *counts + c->size;
    for (int r = 0; r < c->size; r++) {
        (*counts)[r] = (int)(bounds[r + 1] - bounds[r]);
        (*displs)[r] = (int)bounds[r];
    }
    return 0;
}

static int allgather_f32(nmt_comm *c, float *data, const size_t *bounds) {
    int *counts, *displs;
    if (slice_counts(c, bounds, &counts, &displs) < 0) return -1;
    double start = nmt_now();
    int rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, counts, displs, MPI_FLOAT, MPI_COMM_WORLD);
    c->wait_s += nmt_now() - start;
    free(counts);
    return rc == MPI_SUCCESS ? 0 : mpi_error(c, "all-gather (floats)", rc);
}

static int gather_f32(nmt_comm *c, const float *mine, float *all, const size_t *bounds, int root) {
    int *counts, *displs;
    if (slice_counts(c, bounds, &counts, &displs) < 0) return -1;
    double start = nmt_now();
    int rc;
    if (c->rank == root) {
        memcpy(all + bounds[root], mine, (size_t)counts[root] * sizeof *all);
        rc = MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, counts, displs, MPI_FLOAT, root, MPI_COMM_WORLD);
    } else {
        rc = MPI_Gatherv(mine, counts[c->rank], MPI_FLOAT, NULL, NULL, NULL, MPI_FLOAT, root, MPI_COMM_WORLD);
    }
    c->wait_s += nmt_now() - start;
    free(counts);
    return rc == MPI_SUCCESS ? 0 : mpi_error(c, "gather (floats)", rc);
}

_Static_assert(sizeof(MPI_Request) <= sizeof(((nmt_comm_request *)0)->mpi), "MPI_Request fits a request");

static const char *const op_names[NMT_COMM_OPS] = {"nonblocking all-reduce (sum of int64)",
                                                   "nonblocking all-reduce (max of int32)"};

static int start_op(nmt_comm *c, nmt_comm_op op, void *data, size_t count, nmt_comm_request *r) {
    double start = nmt_now();
    MPI_Request request;
    MPI_Datatype type = op == NMT_COMM_SUM_I64 ? MPI_INT64_T : MPI_INT32_T;
    int rc = MPI_Iallreduce(MPI_IN_PLACE, data, (int)count, type, op == NMT_COMM_SUM_I64 ? MPI_SUM : MPI_MAX,
                            ((MPI_Comm *)c->channels)[op], &request);
    c->wait_s += nmt_now() - start;
    if (rc != MPI_SUCCESS) return mpi_error(c, op_names[op], rc);
    memcpy(r->mpi, &request, sizeof request);
    r->active = 1;
    return 0;
}

static int finish_op(nmt_comm *c, nmt_comm_request *r, int *done, int wait) {
    *done = !r->active;
    if (*done) return 0;
    double start = nmt_now();
    MPI_Request request;
    memcpy(&request, r->mpi, sizeof request);
    int rc = wait ? MPI_Wait(&request, MPI_STATUS_IGNORE) : MPI_Test(&request, done, MPI_STATUS_IGNORE);
    c->wait_s += nmt_now() - start;
    if (rc != MPI_SUCCESS) return mpi_error(c, op_names[r->op], rc);
    memcpy(r->mpi, &request, sizeof request);
    *done |= wait;
    r->active = !*done;
    return 0;
}

const nmt_comm_backend nmt_comm_mpi = {
    .join = join,
    .finalize = finalize,
    .abort = abort_run,
    .sum_i64 = sum_i64,
    .sum_f64 = sum_f64,
    .max_i32 = max_i32,
    .max_i32_idle = max_i32_idle,
    .bcast = bcast,
    .allgather = allgather,
    .allgather_f32 = allgather_f32,
    .gather_f32 = gather_f32,
    .start = start_op,
    .finish = finish_op,
};
