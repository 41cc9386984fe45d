/* comm_mpi: the backend of comm.h's collectives over Open MPI (MPI_COMM_WORLD, one duplicate of it per
 * nonblocking operation). Built only with MPI, outside libnmt; a program installs it with
 * nmt_comm_use(&nmt_comm_mpi) before nmt_comm_init. */
#ifndef NMT_COMM_MPI_H
#define NMT_COMM_MPI_H

#include "base/comm.h"

extern const nmt_comm_backend nmt_comm_mpi;

#endif
