/* Tests of comm's one-process communicator: what a plain `nmt train` (and a build without MPI) runs
 * on. Rank 0 of 1, every collective leaves the data as it is, the all-gather copies, the host is named;
 * a nonblocking all-reduce is done at once, leaves its data, and refuses more than 2^28 elements; the
 * float all-gather leaves the data, the gather copies the one slice. */
#include "base/comm.h"

#include "testing.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

START_TEST(one_process_is_rank_0_of_1) {
    unsetenv("OMPI_COMM_WORLD_SIZE");
    nmt_comm c;
    ck_assert_int_eq(nmt_comm_init(&c), 0);
    ck_assert_int_eq(c.rank, 0);
    ck_assert_int_eq(c.size, 1);
    ck_assert_int_eq(c.mpi, 0);
    ck_assert_uint_gt(strlen(c.host), 0);
    nmt_comm_finalize(&c);
    /* mpirun -np 1 says one process: still no MPI needed. */
    setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
    ck_assert_int_eq(nmt_comm_init(&c), 0);
    ck_assert_int_eq(c.size, 1);
    ck_assert_int_eq(c.mpi, 0);
    unsetenv("OMPI_COMM_WORLD_SIZE");
}
END_TEST

START_TEST(collectives_leave_one_process_data) {
    nmt_comm c;
    nmt_comm_local(&c);
    int64_t i64[3] = {1, -2, INT64_MAX};
    double f64[2] = {0.5, -1e300};
    int32_t i32[2] = {INT32_MIN, 7};
    ck_assert_int_eq(nmt_comm_sum_i64(&c, i64, 3), 0);
    ck_assert_int_eq(nmt_comm_sum_f64(&c, f64, 2), 0);
    ck_assert_int_eq(nmt_comm_max_i32(&c, i32, 2), 0);
    ck_assert_int_eq(nmt_comm_max_i32_idle(&c, i32, 2), 0);
    ck_assert(i64[0] == 1 && i64[1] == -2 && i64[2] == INT64_MAX);
    ck_assert(f64[0] == 0.5 && f64[1] == -1e300);
    ck_assert(i32[0] == INT32_MIN && i32[1] == 7);
    char data[5] = "abcd", all[5] = "";
    ck_assert_int_eq(nmt_comm_bcast(&c, data, 4, 0), 0);
    ck_assert_str_eq(data, "abcd");
    ck_assert_int_eq(nmt_comm_allgather(&c, data, 5, all), 0);
    ck_assert_str_eq(all, "abcd");
    ck_assert_int_eq(nmt_comm_barrier(&c), 0);
    float whole[3] = {1.5f, -2.0f, 3.0f}, gathered[3] = {0};
    size_t bounds[2] = {0, 3};
    ck_assert_int_eq(nmt_comm_allgather_f32(&c, whole, bounds), 0);
    ck_assert(whole[0] == 1.5f && whole[1] == -2.0f && whole[2] == 3.0f);
    ck_assert_int_eq(nmt_comm_gather_f32(&c, whole, gathered, bounds, 0), 0);
    ck_assert_mem_eq(gathered, whole, sizeof whole);
    ck_assert(c.wait_s == 0.0);
}
END_TEST

START_TEST(nonblocking_all_reduce_on_one_process) {
    nmt_comm c;
    nmt_comm_local(&c);
    int64_t i64[2] = {INT64_MIN, 3};
    int32_t i32[3] = {-1, 0, INT32_MAX};
    nmt_comm_request sum = {.active = 1}, max = {.active = 1};
    ck_assert_int_eq(nmt_comm_start(&c, NMT_COMM_SUM_I64, i64, 2, &sum), 0);
    ck_assert_int_eq(nmt_comm_start(&c, NMT_COMM_MAX_I32, i32, 3, &max), 0);
    ck_assert_int_eq(sum.op, NMT_COMM_SUM_I64);
    ck_assert_int_eq(max.op, NMT_COMM_MAX_I32);
    int done = 0;
    ck_assert_int_eq(nmt_comm_test(&c, &max, &done), 0);
    ck_assert_int_eq(done, 1);
    ck_assert_int_eq(max.active, 0);
    ck_assert_int_eq(nmt_comm_wait(&c, &sum), 0);
    ck_assert_int_eq(sum.active, 0);
    ck_assert_int_eq(nmt_comm_wait(&c, &sum), 0); /* done already */
    done = 0;
    ck_assert_int_eq(nmt_comm_test(&c, &sum, &done), 0);
    ck_assert_int_eq(done, 1);
    ck_assert(i64[0] == INT64_MIN && i64[1] == 3);
    ck_assert(i32[0] == -1 && i32[1] == 0 && i32[2] == INT32_MAX);
    ck_assert_int_eq(nmt_comm_start(&c, NMT_COMM_SUM_I64, i64, ((size_t)1 << 28) + 1, &sum), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "at most 268435456"));
    ck_assert_int_eq(sum.active, 0);
    ck_assert(c.wait_s == 0.0);
}
END_TEST

int main(void) {
    Suite *s = suite_create("comm");
    TCase *tc = tcase_create("comm");
    tcase_add_test(tc, one_process_is_rank_0_of_1);
    tcase_add_test(tc, collectives_leave_one_process_data);
    tcase_add_test(tc, nonblocking_all_reduce_on_one_process);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
