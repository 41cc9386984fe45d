/* bench: the measurements of `nmt bench` (bench.h). */
#include "api/bench.h"

#include "base/input.h"
#include "base/io.h"
#include "base/random.h"
#include "base/utf8.h"
#include "base/util.h"
#include "compute/packed.h"
#include "compute/pool.h"
#include "infer/guide.h"
#include "infer/shortlist.h"
#include "text/vocab.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

const nmt_bench_shape nmt_bench_shapes[NMT_BENCH_SHAPES] = {
    {"square", 0, 0, 0},
    {"qkv projection", 4096, 768, 256}, {"fc1", 4096, 1024, 256}, {"fc2", 4096, 256, 1024},
    {"o projection", 4096, 256, 256},   {"output logits", 512, 8000, 256},
};

const nmt_precision nmt_bench_precisions[NMT_BENCH_PRECISIONS] = {NMT_PRECISION_FP32, NMT_PRECISION_BF16,
                                                                  NMT_PRECISION_INT8};

double nmt_bench_peak_rss_gib(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)usage.ru_maxrss / (1024.0 * 1024.0);
}

double nmt_bench_gemm_gflops(int M, int N, int K, double min_seconds) {
    float *A = nmt_malloc(sizeof(float) * (size_t)M * K), *B = nmt_malloc(sizeof(float) * (size_t)N * K);
    float *C = nmt_malloc(sizeof(float) * (size_t)M * N);
    double best = -1.0;
    if (A && B && C) {
        for (long i = 0; i < (long)M * K; i++) A[i] = (float)(i % 17) * 0.01f;
        for (long i = 0; i < (long)N * K; i++) B[i] = (float)(i % 13) * 0.01f;
        nmt_sgemm(0, 1, M, N, K, 1.0f, A, K, B, K, 0.0f, C, N); /* warm-up: threads, packing buffers */
        double start = nmt_now(), elapsed = 0.0;
        best = 0.0;
        for (int reps = 0; reps < 3 || elapsed < min_seconds; reps++) {
            double t = nmt_now();
            nmt_sgemm(0, 1, M, N, K, 1.0f, A, K, B, K, 0.0f, C, N);
            double gflops = 2.0 * M * N * K / (nmt_now() - t) / 1e9;
            if (gflops > best) best = gflops;
            elapsed = nmt_now() - start;
        }
    }
    free(A);
    free(B);
    free(C);
    return best;
}

double nmt_bench_bf16_gemm_gops(int M, int N, int K, double min_seconds) {
    const int was = nmt_gemm_sgemm_bf16();
    if (nmt_gemm_set_sgemm_bf16(1) < 0) return -1.0;
    const double gops = nmt_bench_gemm_gflops(M, N, K, min_seconds);
    nmt_gemm_set_sgemm_bf16(was);
    return gops;
}

int nmt_bench_gemm(int n, nmt_bench_gemm_result *r) {
    memset(r, 0, sizeof *r);
    r->size = n;
    const nmt_gemm_kernel used = nmt_gemm_kernel_used(), sgemm = nmt_gemm_sgemm_kernel(), best = nmt_gemm_best();
    r->sgemm = sgemm;
    for (int s = 0; s < NMT_BENCH_SHAPES; s++) {
        for (int k = 0; k < NMT_BENCH_KERNELS; k++) r->gflops[k][s] = -1.0;
        for (int round = 0; round < 3; round++)
            for (int k = 0; k <= (int)best; k++) {
                nmt_gemm_set_sgemm_kernel((nmt_gemm_kernel)k);
                const nmt_bench_shape *shape = &nmt_bench_shapes[s];
                const double g = s == 0 ? nmt_bench_gemm_gflops(n, n, n, 0.33)
                                        : nmt_bench_gemm_gflops(shape->M, shape->N, shape->K, 0.1);
                if (g < 0) {
                    nmt_gemm_set_sgemm_kernel(sgemm);
                    return -1;
                }
                if (g > r->gflops[k][s]) r->gflops[k][s] = g;
            }
    }
    nmt_gemm_set_sgemm_kernel(sgemm);
    for (int i = 0; i < NMT_BENCH_PRECISIONS; i++) {
        r->packed_peak[i] = nmt_packed_gops(nmt_bench_precisions[i], n, n, n, 1.0);
        r->packed_step[i] = nmt_packed_gops(nmt_bench_precisions[i], NMT_BENCH_STEP_M, NMT_BENCH_STEP_N,
                                            NMT_BENCH_STEP_K, 0.3);
    }
    r->blas_row = used != NMT_GEMM_OPENBLAS;
    if (r->blas_row) {
        nmt_gemm_set_kernel(NMT_GEMM_OPENBLAS);
        r->packed_peak[NMT_BENCH_PRECISIONS] = nmt_packed_gops(NMT_PRECISION_FP32, n, n, n, 1.0);
        r->packed_step[NMT_BENCH_PRECISIONS] =
            nmt_packed_gops(NMT_PRECISION_FP32, NMT_BENCH_STEP_M, NMT_BENCH_STEP_N, NMT_BENCH_STEP_K, 0.3);
        nmt_gemm_set_kernel(used);
    }
    return 0;
}

/* B sentences padded to S and T; each sentence's lengths are S or T minus 0-3, as in a batch of
 * sentences of similar length. Source rows end in eos; decoder input is bos + pieces, target
 * pieces + eos. */
static void synthetic_batch(int32_t *src, int32_t *tgt_in, int32_t *tgt_out, int B, int S, int T, int V) {
    uint64_t seed = 12345;
    memset(src, 0, sizeof(int32_t) * (size_t)B * S);
    memset(tgt_in, 0, sizeof(int32_t) * (size_t)B * T);
    memset(tgt_out, 0, sizeof(int32_t) * (size_t)B * T);
    for (int b = 0; b < B; b++) {
        int ls = S - (int)(nmt_random_next(&seed) % 4), lt = T - (int)(nmt_random_next(&seed) % 4);
        if (ls < 1) ls = 1;
        if (lt < 1) lt = 1;
        for (int i = 0; i < ls - 1; i++) src[b * S + i] = NMT_EOS + 1 + (int32_t)(nmt_random_next(&seed) % (uint64_t)(V - 4));
        src[b * S + ls - 1] = NMT_EOS;
        tgt_in[b * T] = NMT_BOS;
        for (int i = 0; i < lt - 1; i++) {
            int32_t w = NMT_EOS + 1 + (int32_t)(nmt_random_next(&seed) % (uint64_t)(V - 4));
            tgt_out[b * T + i] = w;
            tgt_in[b * T + i + 1] = w;
        }
        tgt_out[b * T + lt - 1] = NMT_EOS;
    }
}

int nmt_bench_train_synthetic(const nmt_model_config *config, long batch_tokens, int S, int T, long warmup, long steps,
                              FILE *progress, nmt_train_bench_result *r) {
    *r = (nmt_train_bench_result){.optimizer_s = -1.0};
    nmt_model_config c = *config;
    if (nmt_model_config_check(&c) < 0) return -1;
    if (c.vocab_size < 5) return nmt_error_set("a synthetic batch needs a vocabulary of 5 or more, got %d", c.vocab_size);
    int B = (int)(batch_tokens / T);
    if (B < 1) B = 1;
    nmt_model m;
    if (nmt_model_init(&m, &c) < 0) return -1;
    nmt_model_init_weights(&m, 1);
    int32_t *src = nmt_malloc(sizeof(int32_t) * (size_t)B * S), *tgt_in = nmt_malloc(sizeof(int32_t) * (size_t)B * T);
    int32_t *tgt_out = nmt_malloc(sizeof(int32_t) * (size_t)B * T);
    int rc = src && tgt_in && tgt_out ? 0 : -1;
    if (rc == 0) {
        synthetic_batch(src, tgt_in, tgt_out, B, S, T, c.vocab_size);
        nmt_batch batch = {B, S, T, src, tgt_in, tgt_out};
        long src_tokens = 0;
        for (long i = 0; i < (long)B * S; i++) src_tokens += src[i] != NMT_PAD;
        const double flops = nmt_model_flops(&c, &batch);
        for (long step = 0; rc == 0 && step < warmup + steps; step++) {
            if (step == warmup) memset(&m.timing, 0, sizeof m.timing);
            nmt_forward_options opts = {.training = 1, .label_smoothing = 0.1f, .dropout_seed = (uint64_t)step};
            nmt_loss loss;
            const double start = nmt_now();
            if (nmt_model_zero_grads(&m) < 0 || nmt_model_forward(&m, &batch, &opts, &loss) < 0 ||
                nmt_model_backward(&m, 1.0f / (float)loss.tokens) < 0) {
                rc = -1;
                break;
            }
            const double took = nmt_now() - start;
            if (progress)
                fprintf(progress, "nmt bench: step %ld%s: %.3f s, loss %.4f\n", step + 1, step < warmup ? " (warm-up)" : "",
                        took, loss.loss_sum / (double)loss.tokens);
            if (step >= warmup) nmt_train_bench_record(r, took, &loss, src_tokens, B, flops);
        }
        r->timing = m.timing;
    }
    free(src);
    free(tgt_in);
    free(tgt_out);
    nmt_model_free(&m);
    return rc;
}

/* The lines of a run: sources encoded, and with constraints each line's guide. */
typedef struct sources {
    int32_t **src;
    int *src_len;
    nmt_guide *guide;                /* [count] with constraints, else NULL */
    const nmt_decode_guide **guides; /* [count]: NULL where a line has no phrases */
    int count, capacity;
    long phrases;
} sources;

static void sources_free(sources *s) {
    for (int i = 0; i < s->count; i++) {
        free(s->src[i]);
        if (s->guide) nmt_guide_free(&s->guide[i]);
    }
    free(s->src);
    free(s->src_len);
    free(s->guide);
    free(s->guides);
}

/* Room for one more line. */
static int sources_grow(sources *s, int constraints) {
    if (s->count < s->capacity) return 0;
    const int capacity = s->capacity ? 2 * s->capacity : 1024;
    int32_t **src = nmt_realloc(s->src, sizeof *src * (size_t)capacity);
    if (!src) return -1;
    s->src = src;
    int *len = nmt_realloc(s->src_len, sizeof *len * (size_t)capacity);
    if (!len) return -1;
    s->src_len = len;
    if (constraints) {
        nmt_guide *guide = nmt_realloc(s->guide, sizeof *guide * (size_t)capacity);
        if (!guide) return -1;
        s->guide = guide;
        const nmt_decode_guide **guides = nmt_realloc(s->guides, sizeof *guides * (size_t)capacity);
        if (!guides) return -1;
        s->guides = guides;
    }
    s->capacity = capacity;
    return 0;
}

/* Reads and encodes every line of input with the pipeline (bounded as nmt translate bounds them); with
 * constraints each line is SOURCE<TAB>PHRASE... as `nmt translate --constraints` reads it. */
static int read_sources(const nmt_pipeline *p, const char *input, int constraints, sources *s) {
    FILE *fp = nmt_input_open(input);
    if (!fp) return -1;
    nmt_lines lines;
    nmt_lines_init(&lines, fp, strcmp(input, "-") == 0 ? "<stdin>" : input);
    int32_t *ids = NULL;
    size_t cap = 0, n = 0, pieces = 0;
    int rc = 0, more;
    while (rc == 0 && (more = nmt_lines_next(&lines)) != 0) {
        const char *fields = NULL;
        size_t fields_len = 0;
        if (more > 0 && constraints && nmt_utf8_invalid_at(lines.line, lines.len) < 0) /* else encode says where */
            nmt_guide_split_line(lines.line, &lines.len, &fields, &fields_len);
        if (more < 0 || nmt_pipeline_encode(p, &lines, &ids, &cap, &n, &pieces) < 0 || sources_grow(s, constraints) < 0) {
            rc = -1;
            break;
        }
        int32_t *copy = nmt_malloc(sizeof *copy * (n ? n : 1));
        if (!copy) {
            rc = -1;
            break;
        }
        if (n) memcpy(copy, ids, sizeof *copy * n);
        const int i = s->count++;
        s->src[i] = copy;
        s->src_len[i] = (int)n;
        if (!constraints) continue;
        nmt_guide *g = &s->guide[i];
        memset(g, 0, sizeof *g);
        s->guides[i] = NULL;
        if (fields && nmt_guide_parse(g, nmt_pipeline_target(p), 0, 1, fields, fields_len) < 0) {
            rc = nmt_error_prefix("%s:%ld", lines.name, lines.number);
            break;
        }
        nmt_guide_set_source(g, lines.line, lines.len);
        if (nmt_guide_finish(g)) s->guides[i] = &g->guide;
        s->phrases += g->phrase_count;
    }
    free(ids);
    nmt_lines_free(&lines);
    if (nmt_input_close(fp, input) < 0) rc = -1;
    return rc;
}

int nmt_bench_translate(const char *model, const char *input, const nmt_pipeline_options *options, int constraints,
                        FILE *progress, nmt_bench_translate_result *r) {
    memset(r, 0, sizeof *r);
    nmt_pipeline *p;
    if (nmt_pipeline_open(&p, model, options) < 0) return -1;
    const nmt_pipeline_options *o = nmt_pipeline_get_options(p);
    sources s = {0};
    nmt_translation *out = NULL;
    int rc = -1;
    if (read_sources(p, input, constraints, &s) < 0 || !(out = nmt_calloc((size_t)s.count + 1, sizeof *out)))
        goto done;
    const int count = s.count;
    if (progress)
        fprintf(progress, "nmt bench: translating %d sentences of %s%s, %s, batches of %d, %d threads\n", count, input,
                constraints ? " with their constraints" : "", o->decode.greedy ? "greedy" : "beam search",
                o->decode.batch_size, nmt_pool_threads());
    const double start = nmt_now();
    if (nmt_pipeline_translate_guided(p, 0, count, (const int32_t *const *)s.src, s.src_len, s.guides, out) < 0)
        goto done;
    r->seconds = nmt_now() - start;
    r->sentences = count;
    r->phrases = s.phrases;
    for (int i = 0; i < count; i++) {
        r->target_tokens += out[i].hyps[0].length + 1;
        r->source_tokens += s.src_len[i] + 1;
    }
    r->precision = o->decode.precision;
    if (o->decode.shortlist) {
        r->shortlist_k = nmt_shortlist_k(o->decode.shortlist);
        r->shortlist_m = nmt_shortlist_m(o->decode.shortlist);
    }
    rc = 0;
done:
    for (int i = 0; out && i < s.count; i++) nmt_translation_free(&out[i]);
    free(out);
    sources_free(&s);
    nmt_pipeline_free(p);
    return rc;
}
