/* gemm: C = alpha op(A) op(B) + beta C on nmt's own AVX-512 or AVX2 kernel or OpenBLAS, over the pool.
 *
 * A product is cut by its shape alone into row (or column) blocks of C, the pool's units; each is
 * one single-threaded product (OpenBLAS is set to one thread before its first use), so only the
 * pool's threads compute and no result depends on which thread computed it.
 *
 * OpenBLAS is opened (dlopen) when a product or a question first needs it, not linked: Debian's
 * threaded build starts a worker per core as it loads, each spinning on sched_yield for about a
 * tenth of a second of a core, which every process would pay, although nmt's own kernels do the
 * products everywhere except on CPUs without AVX2 (and with NMT_GEMM=openblas or in the benchmarks'
 * comparison).
 */
#include "compute/gemm.h"

#include "compute/bf16.h"
#include "compute/pool.h"
#include "base/util.h"

#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The library's name on Debian, whichever of its builds (pthread, openmp, serial) is installed. */
#define BLAS_LIBRARY "libopenblas.so.0"

/* OpenBLAS's functions nmt calls, with the declarations' own types (cblas.h). */
static struct {
    __typeof__(&cblas_sgemm) sgemm;
    __typeof__(&openblas_get_corename) corename;
    char error[512]; /* why it could not be opened */
} blas;

static void blas_open(void) {
    void *lib = dlopen(BLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    __typeof__(&openblas_set_num_threads) set_threads = NULL;
    if (lib) {
        *(void **)&blas.sgemm = dlsym(lib, "cblas_sgemm");
        *(void **)&blas.corename = dlsym(lib, "openblas_get_corename");
        *(void **)&set_threads = dlsym(lib, "openblas_set_num_threads");
    }
    if (!blas.sgemm || !blas.corename || !set_threads) {
        const char *why = dlerror();
        snprintf(blas.error, sizeof blas.error, "OpenBLAS (%s) cannot be opened: %s", BLAS_LIBRARY,
                 why ? why : "a function is missing");
        blas.sgemm = NULL;
        return;
    }
    set_threads(1);
}

/* 1 once OpenBLAS is open and set to one thread (at the first call), 0 where it cannot be. */
static int blas_ready(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, blas_open);
    return blas.sgemm != NULL;
}

/* cblas_sgemm, row-major. OpenBLAS runs only where nmt has no kernel of its own for the CPU or
 * where it was asked for; without it there is nothing to compute with, so the process stops,
 * naming the library. */
static void blas_sgemm(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                       const float *B, int ldb, float beta, float *C, int ldc) {
    if (!blas_ready()) {
        fprintf(stderr, "nmt: %s (install Debian's libopenblas0)\n", blas.error);
        abort();
    }
    blas.sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, M, N, K, alpha,
               A, lda, B, ldb, beta, C, ldc);
}

/* Own sgemm. op(B) is packed in blocks of KC x NC as 32-column panels (a block stays in L2, one
 * panel, KC x 32, in L1); op(A) is read where it lies, a tile of rows at a time. The AVX-512
 * micro-kernel holds a 12 x 32 tile of C in 24 zmm registers and per k loads two vectors of B and
 * broadcasts twelve elements of A into 24 FMAs; the AVX2 one walks a panel in two strips of 16
 * columns, a 6 x 16 tile in 12 ymm registers, two loads of B and six broadcasts into 12 FMAs per k.
 * Both give each element of C the same operations in the same order: one sum over k in order per
 * KC block, whatever M, N and the split between threads, so products are row-invariant,
 * deterministic, and the same bits on either kernel. */
enum { GEMM_NR = NMT_GEMM_PANEL, GEMM_KC = 256, GEMM_MC = 96, GEMM_NC = 512 };
enum { AVX512_ROWS = NMT_GEMM_TILE_ROWS, AVX2_ROWS = 6, AVX2_VECS = 2 };
/* Bytes of the panel ahead of its row k that the AVX-512 tile prefetches at k. A tile's first pass
 * over a panel streams weights that decoding cycles through (megabytes a step, beyond L2) and
 * waits on every line where other processes contend for memory (measured on a loaded 2-core VM;
 * no gain measured when it was quiet): the hardware prefetchers stop at each 4 KiB page. 24 rows
 * of 128 bytes ahead is about one memory latency of the kernel's pace; past the panel's end it
 * fetches the next panel, which follows in memory. */
enum { GEMM_PREFETCH = 3072 };
/* While the tiles of a row block of at most GEMM_PULL_TILES tiles walk one panel block, they pull
 * the block that follows (the next panel, or the next k block) into L2, one or two lines a k, each
 * tile its own part, so that the weights stream from memory all through the block's work instead
 * of during its first tile alone. Decoding's few rows (greedy: one to three tiles) left the memory
 * idle while the later tiles reread the block. The products of a base-size decoder step on cold
 * weights, one thread, ran 1.12x, 1.06x and 1.03x faster at 4, 18 and 32 rows (medians of five
 * alternating runs, each timed against oneDNN's sgemm in the same process); with more tiles the
 * first one's wait weighs little, and the pull measured nothing (0.98x at 128 rows). */
enum { GEMM_LINE = 64, GEMM_PULL_TILES = 4 };

/* The kernels of packed products and of nmt_sgemm; -1 until the first call. */
static int kernel_set = -1, sgemm_set = -1;
static int sgemm_bf16; /* nmt_sgemm on bf16.h's kernel */

nmt_gemm_kernel nmt_gemm_best(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx512f")) return NMT_GEMM_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return NMT_GEMM_AVX2;
#endif
    return NMT_GEMM_OPENBLAS;
}

/* The defaults, or NMT_GEMM's choice (where this CPU has that kernel). */
static void kernels_init(void) {
    if (kernel_set >= 0) return;
    const nmt_gemm_kernel best = nmt_gemm_best();
    kernel_set = (int)best;
    sgemm_set = best == NMT_GEMM_AVX512 ? NMT_GEMM_AVX512 : NMT_GEMM_OPENBLAS;
    const char *env = getenv("NMT_GEMM");
    for (int k = NMT_GEMM_OPENBLAS; env && k <= (int)best; k++) {
        static const char *const names[] = {"openblas", "avx2", "avx512"};
        if (strcmp(env, names[k]) == 0) kernel_set = sgemm_set = k;
    }
}

nmt_gemm_kernel nmt_gemm_kernel_used(void) {
    kernels_init();
    return (nmt_gemm_kernel)kernel_set;
}

nmt_gemm_kernel nmt_gemm_sgemm_kernel(void) {
    kernels_init();
    return (nmt_gemm_kernel)sgemm_set;
}

/* *slot = kernel, where the CPU has it. */
static int set_kernel(int *slot, nmt_gemm_kernel kernel) {
    if (kernel < NMT_GEMM_OPENBLAS || kernel > nmt_gemm_best())
        return nmt_error_set("matrix-product kernel %s: not on this CPU", nmt_gemm_kernel_name(kernel));
    kernels_init();
    *slot = (int)kernel;
    return 0;
}

int nmt_gemm_set_kernel(nmt_gemm_kernel kernel) { return set_kernel(&kernel_set, kernel); }
int nmt_gemm_set_sgemm_kernel(nmt_gemm_kernel kernel) { return set_kernel(&sgemm_set, kernel); }

int nmt_gemm_set_sgemm_bf16(int on) {
    if (on && !nmt_bf16_available()) return nmt_error_set("bf16 products need a CPU with AVX512_BF16");
    sgemm_bf16 = on != 0;
    return 0;
}

int nmt_gemm_sgemm_bf16(void) { return sgemm_bf16; }

int nmt_gemm_own(void) { return nmt_gemm_sgemm_kernel() != NMT_GEMM_OPENBLAS; }

const char *nmt_gemm_kernel_name(nmt_gemm_kernel kernel) {
    return kernel == NMT_GEMM_AVX512 ? "AVX-512" : kernel == NMT_GEMM_AVX2 ? "AVX2+FMA" : "OpenBLAS";
}

/* A product cut into a grid of units, row_block x col_block elements of C each (the last row and
 * column of units smaller), unit u at grid row u % row_blocks, grid column u / row_blocks. */
typedef struct sgemm_task {
    int trans_a, trans_b, M, N, K, lda, ldb, ldc;
    int row_block, col_block, row_blocks;
    float alpha, beta;
    const float *A, *B;
    float *C;
    nmt_gemm_kernel kernel; /* own, or NMT_GEMM_OPENBLAS */
    float *panels; /* own kernel on several threads: op(B) packed once, [ceil(N/32), K, 32]; else NULL */
} sgemm_task;

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* Each thread packs B into its own block. */
static _Thread_local float gemm_b[GEMM_NC * GEMM_KC] __attribute__((aligned(64)));

/* How a tile meets C: C = alpha AB; C += alpha AB; C = alpha AB + beta C; C = alpha AB + bias
 * (the bias row's values in the place of C's: the operations of adding to a C that holds the bias,
 * without writing it there first). */
typedef enum { TILE_SET, TILE_ADD, TILE_SCALE, TILE_BIAS } tile_mode;

/* How the tiles of one block meet C (read by the tiles after their loop over k, from memory: no
 * scalar stays live in a vector register beside the accumulators). */
typedef struct tile_out {
    float alpha, beta;
    tile_mode mode;
    int ldc;
    const float *bias; /* TILE_BIAS: the tile's first column of the bias */
    const char *next;  /* lines of the next block this tile pulls into L2, next_lines a k; or NULL */
    int next_lines;
} tile_out;

/* Where A lies: element (i, k) of op(A) at a[i * row + k * step]. */
typedef struct a_view {
    const float *a;
    size_t row, step;
} a_view;

/* C[rows, cols] (rows ldc apart) += or = alpha * A[rows, kc] b for b a panel [kc, 32]; `rows` is a
 * constant wherever this is inlined, so the accumulators live in registers. */
__attribute__((target("avx512f"), always_inline)) static inline void tile_avx512(int rows, a_view A, const float *b,
                                                                                 size_t ldp, int kc, float *c, int cols,
                                                                                 const tile_out *o) {
    const __mmask16 lo = (__mmask16)(cols >= 16 ? 0xffff : (1u << cols) - 1),
                    hi = (__mmask16)(cols >= 32 ? 0xffff : cols <= 16 ? 0 : (1u << (cols - 16)) - 1);
    __m512 acc[AVX512_ROWS][2];
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    const char *next = o->next;
    const size_t next_step = (size_t)o->next_lines * GEMM_LINE;
    for (int k = 0; k < kc; k++) {
        const char *ahead = (const char *)(b + (size_t)k * ldp) + GEMM_PREFETCH;
        _mm_prefetch(ahead, _MM_HINT_T0);
        _mm_prefetch(ahead + GEMM_LINE, _MM_HINT_T0);
        if (next) {
            _mm_prefetch(next + (size_t)k * next_step, _MM_HINT_T1);
            if (next_step > GEMM_LINE) _mm_prefetch(next + (size_t)k * next_step + GEMM_LINE, _MM_HINT_T1);
        }
        const __m512 b0 = _mm512_load_ps(b + (size_t)k * ldp), b1 = _mm512_load_ps(b + (size_t)k * ldp + 16);
        const float *ak = A.a + (size_t)k * A.step;
#pragma GCC unroll 12
        for (int i = 0; i < rows; i++) {
            const __m512 x = _mm512_set1_ps(ak[(size_t)i * A.row]);
            acc[i][0] = _mm512_fmadd_ps(x, b0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(x, b1, acc[i][1]);
        }
    }
    const __m512 va = _mm512_set1_ps(o->alpha), vb = _mm512_set1_ps(o->beta);
    const tile_mode mode = o->mode;
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++) {
        float *row = c + (size_t)i * (size_t)o->ldc;
        __m512 y0 = _mm512_mul_ps(va, acc[i][0]), y1 = _mm512_mul_ps(va, acc[i][1]);
        if (mode != TILE_SET) {
            const float *from = mode == TILE_BIAS ? o->bias : row;
            __m512 c0 = _mm512_maskz_loadu_ps(lo, from), c1 = _mm512_maskz_loadu_ps(hi, from + 16);
            if (mode == TILE_SCALE) c0 = _mm512_mul_ps(vb, c0), c1 = _mm512_mul_ps(vb, c1);
            y0 = _mm512_add_ps(y0, c0), y1 = _mm512_add_ps(y1, c1);
        }
        _mm512_mask_storeu_ps(row, lo, y0);
        _mm512_mask_storeu_ps(row + 16, hi, y1);
    }
}

/* Lanes [0, n) of a vector of 8 set (n in 0 .. 8): the mask at avx2_mask + 8 - n. */
static const int32_t avx2_mask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

/* tile_avx512's arithmetic in ymm registers on AVX2_VECS x 8 columns of a panel (b steps
 * GEMM_NR floats per k): per k, AVX2_VECS loads of b and one broadcast of A per row feed
 * rows x AVX2_VECS FMAs. Each element gets the same operations in the same order as in
 * tile_avx512, so both kernels give the same bits. */
__attribute__((target("avx2,fma"), always_inline)) static inline void tile_avx2(int rows, a_view A, const float *b,
                                                                                size_t ldp, int kc, float *c, int cols,
                                                                                const tile_out *o) {
    __m256 acc[AVX2_ROWS][AVX2_VECS];
#pragma GCC unroll 6
    for (int i = 0; i < rows; i++)
#pragma GCC unroll 4
        for (int v = 0; v < AVX2_VECS; v++) acc[i][v] = _mm256_setzero_ps();
    for (int k = 0; k < kc; k++) {
        __m256 bv[AVX2_VECS];
#pragma GCC unroll 4
        for (int v = 0; v < AVX2_VECS; v++) bv[v] = _mm256_load_ps(b + (size_t)k * ldp + 8 * v);
        const float *ak = A.a + (size_t)k * A.step;
#pragma GCC unroll 6
        for (int i = 0; i < rows; i++) {
            const __m256 x = _mm256_broadcast_ss(ak + (size_t)i * A.row);
#pragma GCC unroll 4
            for (int v = 0; v < AVX2_VECS; v++) acc[i][v] = _mm256_fmadd_ps(x, bv[v], acc[i][v]);
        }
    }
    /* Masked stores are slow on AMD's cores (microcoded): full strips store plainly. */
    const int full = cols >= 8 * AVX2_VECS;
    const __m256 va = _mm256_set1_ps(o->alpha), vb = _mm256_set1_ps(o->beta);
    const tile_mode mode = o->mode;
    __m256i mask[AVX2_VECS];
#pragma GCC unroll 4
    for (int v = 0; v < AVX2_VECS; v++) {
        const int n = cols - 8 * v < 0 ? 0 : cols - 8 * v > 8 ? 8 : cols - 8 * v;
        mask[v] = _mm256_loadu_si256((const __m256i *)(avx2_mask + 8 - n));
    }
#pragma GCC unroll 6
    for (int i = 0; i < rows; i++) {
        float *row = c + (size_t)i * (size_t)o->ldc;
#pragma GCC unroll 4
        for (int v = 0; v < AVX2_VECS; v++) {
            __m256 y = _mm256_mul_ps(va, acc[i][v]);
            if (mode != TILE_SET) {
                const float *from = mode == TILE_BIAS ? o->bias : row;
                __m256 old = full ? _mm256_loadu_ps(from + 8 * v) : _mm256_maskload_ps(from + 8 * v, mask[v]);
                if (mode == TILE_SCALE) old = _mm256_mul_ps(vb, old);
                y = _mm256_add_ps(y, old);
            }
            if (full) _mm256_storeu_ps(row + 8 * v, y);
            else _mm256_maskstore_ps(row + 8 * v, mask[v], y);
        }
    }
}

/* A tile function for each kernel, `rows` from 1 to the kernel's height: one specialisation of
 * the inlined tile per height, so that its accumulators live in registers. */
#define TILE_CASE(tile, r) \
    case r: tile(r, A, b, ldp, kc, c, cols, o); break;
#define TILE_CASES_TO_6(tile) \
    TILE_CASE(tile, 1) TILE_CASE(tile, 2) TILE_CASE(tile, 3) TILE_CASE(tile, 4) TILE_CASE(tile, 5) TILE_CASE(tile, 6)
#define TILE_CASES_TO_12(tile) \
    TILE_CASES_TO_6(tile) TILE_CASE(tile, 7) TILE_CASE(tile, 8) TILE_CASE(tile, 9) TILE_CASE(tile, 10) \
    TILE_CASE(tile, 11) TILE_CASE(tile, 12)
#define DEFINE_TILES(name, isa, tile, cases)                                                                      \
    __attribute__((target(isa))) static void name(int rows, a_view A, const float *b, size_t ldp, int kc, float *c, \
                                                  int cols, const tile_out *o) {                                 \
        switch (rows) {                                                                                          \
            cases(tile) default : break;                                                                         \
        }                                                                                                        \
    }
DEFINE_TILES(tiles_avx512, "avx512f", tile_avx512, TILE_CASES_TO_12)
DEFINE_TILES(tiles_avx2, "avx2,fma", tile_avx2, TILE_CASES_TO_6)
#undef DEFINE_TILES
#undef TILE_CASES_TO_12
#undef TILE_CASES_TO_6
#undef TILE_CASE

/* A micro-kernel: tiles of up to `rows` rows by `width` columns of one panel (a panel is walked in
 * GEMM_NR / width strips). */
typedef void tile_fn(int rows, a_view A, const float *b, size_t ldp, int kc, float *c, int cols, const tile_out *o);
typedef struct gemm_kernel {
    tile_fn *tile;
    int rows, width, panel;
    int nc; /* columns of B in one block (KC x nc floats stay in L2) */
} gemm_kernel;

static const gemm_kernel *kernel_of(nmt_gemm_kernel k) {
    static const gemm_kernel avx2 = {tiles_avx2, AVX2_ROWS, 8 * AVX2_VECS, 8 * AVX2_VECS, GEMM_NC / 2},
                             avx512 = {tiles_avx512, AVX512_ROWS, GEMM_NR, GEMM_NR, GEMM_NC};
    return k == NMT_GEMM_AVX512 ? &avx512 : &avx2;
}

/* C[M, nc] for all M rows of A over kc values of k, from panels `panel_stride` floats apart: a block
 * of MC rows of A (in L2) meets every strip of every panel, each strip (in L1) all tiles of the
 * block. `after` is the panel block read next (kc rows of a panel, contiguous), or NULL: the tiles
 * of a first row block of at most GEMM_PULL_TILES tiles pull each panel's successor into L2. */
static void gemm_block(const gemm_kernel *kern, int pw, int M, int nc, int kc, a_view A, const float *panels,
                       size_t panel_stride, float *C, int ldc, float alpha, float beta, tile_mode mode,
                       const float *bias, const float *after) {
    tile_out out = {alpha, beta, mode, ldc, NULL, NULL, 0};
    const size_t block_lines = (size_t)kc * (size_t)pw * sizeof(float) / GEMM_LINE;
    for (int ic = 0; ic < M; ic += GEMM_MC) {
        const int mc = M - ic < GEMM_MC ? M - ic : GEMM_MC;
        /* Each tile's share of the next block's lines: one or two a k. */
        const size_t tiles = (size_t)((mc + kern->rows - 1) / kern->rows), share = (block_lines + tiles - 1) / tiles;
        out.next_lines = share > (size_t)kc ? 2 : 1;
        for (int j = 0; j < nc; j += pw) {
            const float *b = panels + (size_t)(j / pw) * panel_stride;
            const char *next =
                ic > 0 || tiles > GEMM_PULL_TILES ? NULL : (const char *)(j + pw < nc ? b + panel_stride : after);
            for (int s = 0; s < pw && j + s < nc; s += kern->width) {
                const int cols = nc - j - s < kern->width ? nc - j - s : kern->width;
                out.bias = mode == TILE_BIAS ? bias + j + s : NULL;
                for (int i = ic; i < ic + mc; i += kern->rows) {
                    const a_view at = {A.a + (size_t)i * A.row, A.row, A.step};
                    const size_t first_line = (size_t)((i - ic) / kern->rows) * (size_t)out.next_lines * (size_t)kc;
                    out.next = next && s == 0 && first_line < block_lines ? next + first_line * GEMM_LINE : NULL;
                    kern->tile(ic + mc - i < kern->rows ? ic + mc - i : kern->rows, at, b + s, (size_t)pw, kc,
                               C + (size_t)i * (size_t)ldc + (size_t)(j + s), cols, &out);
                }
            }
        }
    }
}

/* dst = op(B)[k0 .. k0 + kc, j0 .. j0 + nc) as 32-column panels [kc, 32], short panels zero-padded. */
static void pack_b(float *dst, int pw, const float *B, int ldb, int trans, int k0, int kc, int j0, int nc) {
    for (int p = 0; p < nc; p += pw) {
        const int cols = nc - p < pw ? nc - p : pw;
        float *d = dst + (size_t)(p / pw) * (size_t)kc * (size_t)pw;
        if (cols < pw) memset(d, 0, (size_t)kc * (size_t)pw * sizeof(float));
        if (!trans) {
            for (int k = 0; k < kc; k++)
                memcpy(d + (size_t)k * (size_t)pw, B + (size_t)(k0 + k) * (size_t)ldb + (size_t)(j0 + p), (size_t)cols * sizeof(float));
            continue;
        }
        for (int c = 0; c < cols; c++) {
            const float *src = B + (size_t)(j0 + p + c) * (size_t)ldb + (size_t)k0;
            for (int k = 0; k < kc; k++) d[(size_t)k * (size_t)pw + (size_t)c] = src[k];
        }
    }
}

/* The first k block meets C as beta asks; later ones add. */
static tile_mode first_mode(float beta) { return beta == 0.0f ? TILE_SET : beta == 1.0f ? TILE_ADD : TILE_SCALE; }

/* C[M, N] = alpha op(A) op(B) + beta C on this thread. */
static void own_sgemm(const gemm_kernel *kern, int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                      const float *B, int ldb, float beta, float *C, int ldc) {
    if (K <= 0) {
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                float *c = C + (size_t)i * (size_t)ldc + (size_t)j;
                *c = beta == 0.0f ? 0.0f : beta * *c;
            }
        return;
    }
    const size_t row = trans_a ? 1 : (size_t)lda, step = trans_a ? (size_t)lda : 1;
    for (int jc = 0; jc < N; jc += kern->nc) {
        const int nc = N - jc < kern->nc ? N - jc : kern->nc;
        for (int pc = 0; pc < K; pc += GEMM_KC) {
            const int kc = K - pc < GEMM_KC ? K - pc : GEMM_KC;
            pack_b(gemm_b, kern->panel, B, ldb, trans_b, pc, kc, jc, nc);
            const a_view at = {A + (size_t)pc * step, row, step};
            gemm_block(kern, kern->panel, M, nc, kc, at, gemm_b, (size_t)kc * (size_t)kern->panel, C + (size_t)jc, ldc, alpha, beta,
                       pc == 0 ? first_mode(beta) : TILE_ADD, NULL, NULL);
        }
    }
}

/* C[M, N] = alpha A B + beta C (bias NULL) or alpha A B + bias (beta unused) for B in the panel
 * layout, each panel K rows of 32, panel_stride floats apart: the k blocks of own_sgemm, from panels
 * packed beforehand. */
static void panels_product(const gemm_kernel *kern, int pw, int M, int N, int K, a_view A, const float *panels,
                           size_t panel_stride, float *C, int ldc, float alpha, float beta, const float *bias) {
    for (int jc = 0; jc < N; jc += kern->nc) {
        const int nc = N - jc < kern->nc ? N - jc : kern->nc;
        const float *p = panels + (size_t)(jc / pw) * panel_stride;
        for (int pc = 0; pc < K; pc += GEMM_KC) {
            const int kc = K - pc < GEMM_KC ? K - pc : GEMM_KC;
            const a_view at = {A.a + (size_t)pc * A.step, A.row, A.step};
            /* Read next: this column block's first panel at the next k block, or the next column
             * block's at k = 0. */
            const float *after = pc + kc < K ? p + (size_t)(pc + kc) * (size_t)pw
                                 : jc + nc < N ? panels + (size_t)((jc + nc) / pw) * panel_stride : NULL;
            gemm_block(kern, pw, M, nc, kc, at, p + (size_t)pc * (size_t)pw, panel_stride, C + jc, ldc, alpha, beta,
                       pc > 0 ? TILE_ADD : bias ? TILE_BIAS : first_mode(beta), bias ? bias + jc : NULL, after);
        }
    }
}

/* The own kernel for panels of `width` columns: the AVX-512 one reads only 32-column panels. */
static nmt_gemm_kernel panels_kernel(int width) {
    const nmt_gemm_kernel used = nmt_gemm_kernel_used(), own = used != NMT_GEMM_OPENBLAS ? used : nmt_gemm_best();
    return own == NMT_GEMM_AVX512 && width != GEMM_NR ? NMT_GEMM_AVX2 : own;
}

int nmt_gemm_panel_width(void) { return kernel_of(panels_kernel(GEMM_NR))->panel; }

void nmt_gemm_panels(float *y, int ldy, const float *x, int M, int K, const float *panels, int width, int N,
                     int accumulate) {
    const a_view at = {x, (size_t)K, 1};
    panels_product(kernel_of(panels_kernel(width)), width, M, N, K, at, panels, (size_t)K * (size_t)width, y, ldy, 1.0f,
                   accumulate ? 1.0f : 0.0f, NULL);
}

void nmt_gemm_panels_bias(float *y, int ldy, const float *x, int M, int K, const float *panels, int width, int N,
                          const float *bias) {
    const a_view at = {x, (size_t)K, 1};
    panels_product(kernel_of(panels_kernel(width)), width, M, N, K, at, panels, (size_t)K * (size_t)width, y, ldy, 1.0f,
                   1.0f, bias);
}

/* Panels [begin, end) of op(B) into t->panels. */
static void pack_panels(void *ctx, long begin, long end) {
    const sgemm_task *t = ctx;
    const int pw = kernel_of(t->kernel)->panel;
    for (long j = begin; j < end; j++) {
        const int column = (int)j * pw, cols = t->N - column < pw ? t->N - column : pw;
        pack_b(t->panels + (size_t)j * (size_t)t->K * (size_t)pw, pw, t->B, t->ldb, t->trans_b, 0, t->K, column, cols);
    }
}

/* C[i0 .. i0 + m, j0 .. j0 + n) from the packed panels (j0 a multiple of 32). */
static void panels_unit(const sgemm_task *t, int i0, int j0, int m, int n) {
    const size_t row = t->trans_a ? 1 : (size_t)t->lda, step = t->trans_a ? (size_t)t->lda : 1;
    const a_view at = {t->A + (size_t)i0 * row, row, step};
    const gemm_kernel *kern = kernel_of(t->kernel);
    const size_t pw = (size_t)kern->panel;
    panels_product(kern, kern->panel, m, n, t->K, at, t->panels + (size_t)j0 / pw * (size_t)t->K * pw, (size_t)t->K * pw, t->C + (size_t)i0 * (size_t)t->ldc + (size_t)j0, t->ldc, t->alpha, t->beta, NULL);
}

static int panel_of(nmt_gemm_kernel k) { return kernel_of(k)->panel; }

#define GEMM_X86 1
#else
#define GEMM_X86 0
typedef struct gemm_kernel gemm_kernel; /* none: nmt_gemm_best() is OpenBLAS */
static const gemm_kernel *kernel_of(nmt_gemm_kernel k) { return (void)k, NULL; }
static int panel_of(nmt_gemm_kernel k) { return (void)k, GEMM_NR; }
static void own_sgemm(const gemm_kernel *kern, int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                      const float *B, int ldb, float beta, float *C, int ldc) {
    (void)kern;
    blas_sgemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

int nmt_gemm_panel_width(void) { return GEMM_NR; }

void nmt_gemm_panels(float *y, int ldy, const float *x, int M, int K, const float *panels, int width, int N,
                     int accumulate) {
    (void)y, (void)ldy, (void)x, (void)M, (void)K, (void)panels, (void)width, (void)N, (void)accumulate;
}

void nmt_gemm_panels_bias(float *y, int ldy, const float *x, int M, int K, const float *panels, int width, int N,
                          const float *bias) {
    (void)y, (void)ldy, (void)x, (void)M, (void)K, (void)panels, (void)width, (void)N, (void)bias;
}
#endif

/* A product is cut along its longer side (rows of C when M >= N, else columns) into blocks of
 * equal size, whole multiples of the kernel's blocks: about one per `per_unit` rows or columns, and
 * between GEMM_UNITS_MIN and GEMM_UNITS_MAX of them where the side allows. Several blocks a thread
 * let threads that run slower (sharing a core with another process) take fewer of them; but each
 * block repeats the packing of the other operand (OpenBLAS packs all of it per call; the own kernel
 * only reads A again, from op(B) packed once), which costs OpenBLAS, measured on one thread of an
 * AMD EPYC at K = 256, 4-7% with blocks of 1024 and 10-14% with blocks of 512, against one call. */
enum { GEMM_UNITS_MIN = 4, GEMM_UNITS_MAX = 16 };

/* The grid of t's product. It depends on the shape and the kernel only, never on the threads. */
static void gemm_grid(sgemm_task *t, int own) {
    const int rows = t->M >= t->N, side = rows ? t->M : t->N;
    /* Own: a block of MC rows (whole tiles of either kernel) or 4 panels; OpenBLAS: its 16 x 4 micro-tiles. */
    const int step = own ? (rows ? GEMM_MC : 4 * GEMM_NR) : 16, per_unit = own ? 192 : 1024;
    int units = side / per_unit;
    if (units < GEMM_UNITS_MIN) units = GEMM_UNITS_MIN;
    if (units > GEMM_UNITS_MAX) units = GEMM_UNITS_MAX;
    /* Below about a million multiply-adds splitting costs more than it saves. */
    if ((double)t->M * t->N * (t->K > 0 ? t->K : 1) < 1e6) units = 1;
    int block = ((side + units - 1) / units + step - 1) / step * step;
    t->row_block = rows ? block : t->M;
    t->col_block = rows ? t->N : block;
    t->row_blocks = (t->M + t->row_block - 1) / t->row_block;
}

static void sgemm_units(void *ctx, long begin, long end) {
    const sgemm_task *t = ctx;
    for (long u = begin; u < end; u++) {
        const int i0 = (int)(u % t->row_blocks) * t->row_block, j0 = (int)(u / t->row_blocks) * t->col_block;
        const int m = t->M - i0 < t->row_block ? t->M - i0 : t->row_block;
        const int n = t->N - j0 < t->col_block ? t->N - j0 : t->col_block;
#if GEMM_X86
        if (t->panels) {
            panels_unit(t, i0, j0, m, n);
            continue;
        }
#endif
        const float *A = t->A + (t->trans_a ? (size_t)i0 : (size_t)i0 * (size_t)t->lda);
        const float *B = t->B + (t->trans_b ? (size_t)j0 * (size_t)t->ldb : (size_t)j0);
        float *C = t->C + (size_t)i0 * (size_t)t->ldc + (size_t)j0;
        if (t->kernel != NMT_GEMM_OPENBLAS)
            own_sgemm(kernel_of(t->kernel), t->trans_a, t->trans_b, m, n, t->K, t->alpha, A, t->lda, B, t->ldb, t->beta, C, t->ldc);
        else
            blas_sgemm(t->trans_a, t->trans_b, m, n, t->K, t->alpha, A, t->lda, B, t->ldb, t->beta, C, t->ldc);
    }
}

/* The own kernel's packed op(B), shared by the units of one product at a time; only grows. */
static struct {
    pthread_mutex_t lock;
    float *data;
    size_t size; /* floats */
} shared_panels = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Room for `size` floats in shared_panels (locked by the caller), or NULL when memory runs out. */
static float *shared_panels_reserve(size_t size) {
    if (size <= shared_panels.size) return shared_panels.data;
    float *data = nmt_malloc_aligned(size * sizeof(float));
    if (!data) return NULL;
    free(shared_panels.data);
    shared_panels.data = data;
    shared_panels.size = size;
    return data;
}

void nmt_sgemm(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda, const float *B,
               int ldb, float beta, float *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    /* Only when memory for the converted operands runs out does a bf16 product run in fp32 instead. */
    if (sgemm_bf16 && nmt_bf16_gemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) == 0) return;
    const nmt_gemm_kernel kernel = nmt_gemm_sgemm_kernel();
    const int own = kernel != NMT_GEMM_OPENBLAS;
    sgemm_task t = {trans_a, trans_b, M, N, K, lda, ldb, ldc, 0, 0, 0, alpha, beta, A, B, C, kernel, NULL};
    gemm_grid(&t, own);
    const long units = (long)t.row_blocks * ((N + t.col_block - 1) / t.col_block);
    if (own && (units == 1 || K <= 0 || nmt_pool_in_task() || nmt_pool_threads() == 1)) {
        /* One thread: the whole product at once, which packs each block of B once (the same sums). */
        own_sgemm(kernel_of(kernel), trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    if (!own) {
        nmt_pool_for(units, 1, sgemm_units, &t);
        return;
    }
    /* Own kernel on several threads: op(B) packed once for all units (without the memory for it,
     * each unit packs its own part: slower, the same sums). */
    const int pw = panel_of(kernel);
    const long panels = (N + pw - 1) / pw;
    pthread_mutex_lock(&shared_panels.lock);
    t.panels = GEMM_X86 ? shared_panels_reserve((size_t)panels * (size_t)K * (size_t)pw) : NULL;
#if GEMM_X86
    if (t.panels) nmt_pool_work(panels, (long)K * pw, pack_panels, &t);
#endif
    nmt_pool_for(units, 1, sgemm_units, &t);
    pthread_mutex_unlock(&shared_panels.lock);
}

const char *nmt_gemm_blas_core(void) { return blas_ready() ? blas.corename() : "unavailable"; }

const char *nmt_gemm_blas_core_advice(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    const char *core = nmt_gemm_blas_core();
    int avx2_core = strcmp(core, "Haswell") == 0 || strcmp(core, "Zen") == 0;
    if (avx2_core && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
#endif
    return NULL;
}
