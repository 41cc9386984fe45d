/* gemm_dnnl: nmt's products on packed weights beside oneDNN's sgemm (what CTranslate2's float32
 * products call) at the shapes of one decoder step of a Transformer-base model, on one thread.
 *
 * A step multiplies M rows (greedy: the batch's live sentences; beam K: K rows a sentence) by the
 * matrices of 6 decoder layers (self-attention q|k|v [1536, 512] and output [512, 512], the
 * cross-attention's query and output [512, 512], the feed-forward's [2048, 512] and [512, 2048])
 * and the output layer [8000, 512]: 104 MB of float32 weights, far beyond L2, streamed from memory
 * each step as in decoding. Both engines run every matrix in turn, y = x W^T + b for nmt
 * (nmt_packed_linear) and y = x W^T for oneDNN (dnnl_sgemm 'N', 'T', the weights as they lie);
 * ROUNDS rounds alternate the two (each round the whole step for nmt, then for oneDNN), and the
 * thread CPU time of each shape is summed. Printed: GFLOP/s per shape and the step's milliseconds
 * of each, with oneDNN's time over nmt's (above 1: nmt faster). Comparing that ratio between two
 * builds of nmt cancels most of a shared machine's drift, which slows both alike.
 *
 * Build (Debian: libdnnl-dev; nmt built in build/) and run, from the repository root:
 *   cc -O2 -march=native -Isrc -o build/gemm_dnnl tools/bench/gemm_dnnl.c build/libnmt.a \
 *      -ldnnl -lopenblas -lz -lm -lpthread
 *   OMP_NUM_THREADS=1 build/gemm_dnnl M [ROUNDS]      (M rows, 1..4096; ROUNDS 1..1000, default 10)
 */
#define _GNU_SOURCE
#include "compute/packed.h"
#include "compute/pool.h"

#include <dnnl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { LAYERS = 6, PER_LAYER = 6, MATRICES = LAYERS * PER_LAYER + 1, D = 512, FFN = 2048, VOCAB = 8000 };

typedef struct shape {
    const char *name;
    int N, K;
} shape;

static const shape layer_shapes[PER_LAYER] = {{"qkv", 3 * D, D}, {"o", D, D},     {"cross q", D, D},
                                              {"cross o", D, D}, {"fc1", FFN, D}, {"fc2", D, FFN}};
static const shape output_shape = {"output", VOCAB, D};

static double thread_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A positive integer argument of at most max, or -1. */
static long argument(const char *text, long max) {
    char *end;
    errno = 0;
    const long v = strtol(text, &end, 10);
    return errno || *end || end == text || v < 1 || v > max ? -1 : v;
}

static const shape *shape_of(int i) { return i < LAYERS * PER_LAYER ? &layer_shapes[i % PER_LAYER] : &output_shape; }

int main(int argc, char **argv) {
    const long M = argc >= 2 ? argument(argv[1], 4096) : -1, rounds = argc >= 3 ? argument(argv[2], 1000) : 10;
    if (argc < 2 || argc > 3 || M < 0 || rounds < 0) {
        fprintf(stderr, "usage: gemm_dnnl M [ROUNDS]   (M rows 1..4096, ROUNDS 1..1000)\n");
        return 2;
    }
    if (nmt_pool_set_threads(1) < 0) return 1;
    float *w[MATRICES] = {0};
    nmt_packed p[MATRICES] = {0};
    float *x = malloc(sizeof(float) * (size_t)M * FFN), *y = malloc(sizeof(float) * (size_t)M * VOCAB),
          *bias = calloc(VOCAB, sizeof(float));
    int failed = !x || !y || !bias;
    for (size_t i = 0; !failed && i < (size_t)M * FFN; i++) x[i] = (float)(i % 13) * 0.01f - 0.06f;
    for (int i = 0; !failed && i < MATRICES; i++) {
        const size_t cells = (size_t)shape_of(i)->N * (size_t)shape_of(i)->K;
        if (!(w[i] = malloc(cells * sizeof(float)))) failed = 1;
        for (size_t j = 0; !failed && j < cells; j++) w[i][j] = (float)((j * 5 + (size_t)i) % 11) * 0.01f - 0.05f;
        if (!failed && nmt_packed_init(&p[i], w[i], shape_of(i)->N, shape_of(i)->K, NMT_PRECISION_FP32) < 0) failed = 1;
    }
    if (failed) {
        fprintf(stderr, "gemm_dnnl: out of memory\n");
        return 1;
    }
    double own[MATRICES] = {0}, dnnl[MATRICES] = {0};
    for (long r = 0; r < rounds; r++) {
        for (int i = 0; i < MATRICES; i++) {
            const double t = thread_seconds();
            nmt_packed_linear(y, x, &p[i], bias, (int)M, NULL);
            own[i] += thread_seconds() - t;
        }
        for (int i = 0; i < MATRICES; i++) {
            const shape *s = shape_of(i);
            const double t = thread_seconds();
            if (dnnl_sgemm('N', 'T', M, s->N, s->K, 1.0f, x, s->K, w[i], s->K, 0.0f, y, s->N) != dnnl_success) {
                fprintf(stderr, "gemm_dnnl: dnnl_sgemm failed\n");
                return 1;
            }
            dnnl[i] += thread_seconds() - t;
        }
    }
    double own_step = 0, dnnl_step = 0;
    for (int k = 0; k <= PER_LAYER; k++) {
        const shape *s = k < PER_LAYER ? &layer_shapes[k] : &output_shape;
        double a = 0, b = 0;
        for (int i = 0; i < MATRICES; i++)
            if (shape_of(i) == s) a += own[i], b += dnnl[i];
        const double flops = 2.0 * (double)M * s->N * s->K * (k < PER_LAYER ? LAYERS : 1) * (double)rounds;
        printf("M %4ld %-8s N %5d K %5d  nmt %6.1f  oneDNN %6.1f GFLOP/s\n", M, s->name, s->N, s->K, flops / a / 1e9,
               flops / b / 1e9);
        own_step += a, dnnl_step += b;
    }
    printf("M %4ld step: nmt %.2f ms, oneDNN %.2f ms, oneDNN / nmt %.2f\n", M, own_step / (double)rounds * 1e3,
           dnnl_step / (double)rounds * 1e3, dnnl_step / own_step);
    for (int i = 0; i < MATRICES; i++) {
        nmt_packed_free(&p[i]);
        free(w[i]);
    }
    free(x);
    free(y);
    free(bias);
    return 0;
}
