/* nmt bench: measured speed of this machine and of nmt on it.
 *
 *   nmt bench gemm    sgemm GFLOP/s at 2048^3 (the reference peak) and at the model's shapes
 *   nmt bench train --synthetic
 *                     forward+backward throughput of a model on synthetic batches, with the sgemm
 *                     peak measured in the same run, the fraction of it achieved, peak RSS and a
 *                     time breakdown per stage
 *
 * --json prints one JSON object on stdout (keys shared with tools/bench/torch_reference.py);
 * otherwise a readable table. Progress goes to stderr.
 */
#include "cli.h"

#include "nmt/kernels.h"
#include "nmt/model.h"
#include "nmt/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

const char nmt_cmd_bench_summary[] = "measure sgemm peak and training throughput";

static void usage(FILE *out) {
    fprintf(out,
            "Usage: nmt bench gemm [--size N] [--threads T] [--json]\n"
            "       nmt bench train --synthetic [options] [--json]\n"
            "\n"
            "gemm: GFLOP/s of C = A B^T through OpenBLAS on the thread pool, at N^3 (default 2048,\n"
            "the reference peak) and at the shapes of the d256/h4/ff1024 model with 4096-token batches.\n"
            "\n"
            "train --synthetic: forward+backward of a freshly initialised model on a synthetic batch\n"
            "(random ids; source and target lengths spread a little below --src-len/--tgt-len), after\n"
            "warm-up steps; reports target tokens/s, GFLOP/s from the exact matrix-product FLOP count,\n"
            "the fraction of the sgemm peak measured in the same run, peak RSS and seconds per stage.\n"
            "The optimizer is not included.\n"
            "  --d-model D (256)  --heads H (4)  --ffn F (1024)  --layers L (3, encoder and decoder)\n"
            "  --vocab V (8000)  --norm post|pre (post)  --positions sinusoidal|learned|rope\n"
            "  --batch-tokens N (4096 padded target tokens)  --src-len S (13)  --tgt-len T (14)\n"
            "  --steps N (10 measured)  --warmup N (2)  --dropout P (0.1)\n"
            "\n"
            "Common: --threads T (all CPUs)  --json  --help\n");
}

typedef struct bench_options {
    int threads, json, synthetic;
    long size, steps, warmup, batch_tokens, src_len, tgt_len;
    double dropout;
    nmt_model_config model;
} bench_options;

/* Best GFLOP/s of C[M,N] = A[M,K] B[N,K]^T over repetitions lasting at least min_seconds. */
static double gemm_gflops(int M, int N, int K, double min_seconds) {
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

static int bench_gemm(const bench_options *o) {
    int n = (int)o->size;
    double peak = gemm_gflops(n, n, n, 1.0);
    if (peak < 0) return nmt_cli_fail("bench");
    /* The products of one training step of d256/h4/ff1024/V8000 on 4096 target tokens. */
    static const struct {
        const char *what;
        int M, N, K;
    } shapes[] = {
        {"qkv projection", 4096, 768, 256}, {"fc1", 4096, 1024, 256}, {"fc2", 4096, 256, 1024},
        {"o projection", 4096, 256, 256},   {"output logits", 512, 8000, 256},
    };
    double results[sizeof shapes / sizeof shapes[0]];
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        results[i] = gemm_gflops(shapes[i].M, shapes[i].N, shapes[i].K, 0.3);
    if (o->json) {
        printf("{\"command\": \"bench gemm\", \"threads\": %d, \"blas_core\": \"%s\", \"size\": %d, "
               "\"peak_gflops\": %.2f, \"shapes\": [",
               o->threads, nmt_kernels_blas_core(), n, peak);
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            printf("%s{\"what\": \"%s\", \"M\": %d, \"N\": %d, \"K\": %d, \"gflops\": %.2f}", i ? ", " : "",
                   shapes[i].what, shapes[i].M, shapes[i].N, shapes[i].K, results[i]);
        printf("]}\n");
    } else {
        printf("sgemm on %d threads (C = A B^T, float32, OpenBLAS %s kernels inside the nmt thread pool)\n",
               o->threads, nmt_kernels_blas_core());
        printf("  %-16s %5d %5d %5d  %8.1f GFLOP/s (reference peak)\n", "square", n, n, n, peak);
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            printf("  %-16s %5d %5d %5d  %8.1f GFLOP/s\n", shapes[i].what, shapes[i].M, shapes[i].N, shapes[i].K,
                   results[i]);
    }
    return NMT_EXIT_OK;
}

/* splitmix64 for the synthetic ids */
static uint64_t next_random(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
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
        int ls = S - (int)(next_random(&seed) % 4), lt = T - (int)(next_random(&seed) % 4);
        if (ls < 1) ls = 1;
        if (lt < 1) lt = 1;
        for (int i = 0; i < ls - 1; i++) src[b * S + i] = NMT_EOS + 1 + (int32_t)(next_random(&seed) % (uint64_t)(V - 4));
        src[b * S + ls - 1] = NMT_EOS;
        tgt_in[b * T] = NMT_BOS;
        for (int i = 0; i < lt - 1; i++) {
            int32_t w = NMT_EOS + 1 + (int32_t)(next_random(&seed) % (uint64_t)(V - 4));
            tgt_out[b * T + i] = w;
            tgt_in[b * T + i + 1] = w;
        }
        tgt_out[b * T + lt - 1] = NMT_EOS;
    }
}

static int bench_train(const bench_options *o) {
    if (!o->synthetic)
        return nmt_cli_usage_error("bench", "train needs --synthetic (training configs are read by `nmt train`)");
    nmt_model_config c = o->model;
    if (nmt_model_config_check(&c) < 0) return nmt_cli_fail("bench");
    int S = (int)o->src_len, T = (int)o->tgt_len, B = (int)(o->batch_tokens / T);
    if (B < 1) B = 1;
    fprintf(stderr, "nmt bench: measuring the sgemm peak (2048^3)\n");
    double peak = gemm_gflops(2048, 2048, 2048, 1.0);
    nmt_model m;
    if (peak < 0 || nmt_model_create(&m, &c) < 0) return nmt_cli_fail("bench");
    nmt_model_init_weights(&m, 1);
    int32_t *src = nmt_malloc(sizeof(int32_t) * (size_t)B * S), *tgt_in = nmt_malloc(sizeof(int32_t) * (size_t)B * T);
    int32_t *tgt_out = nmt_malloc(sizeof(int32_t) * (size_t)B * T);
    if (!src || !tgt_in || !tgt_out) {
        free(src);
        free(tgt_in);
        free(tgt_out);
        nmt_model_free(&m);
        return nmt_cli_fail("bench");
    }
    synthetic_batch(src, tgt_in, tgt_out, B, S, T, c.vocab_size);
    nmt_batch batch = {B, S, T, src, tgt_in, tgt_out};
    long src_tokens = 0;
    for (long i = 0; i < (long)B * S; i++) src_tokens += src[i] != NMT_PAD;
    double flops = nmt_model_flops(&c, &batch), seconds = 0.0, fastest = 0.0, loss_per_token = 0.0;
    long tgt_tokens = 0;
    int rc = NMT_EXIT_OK;
    for (long step = 0; step < o->warmup + o->steps; step++) {
        if (step == o->warmup) {
            memset(&m.timing, 0, sizeof m.timing);
            seconds = 0.0;
        }
        nmt_forward_options opts = {1, 0.1f, (uint64_t)step};
        nmt_loss loss;
        double start = nmt_now();
        nmt_model_zero_grads(&m);
        if (nmt_model_forward(&m, &batch, &opts, &loss) < 0 || nmt_model_backward(&m, 1.0f / (float)loss.tokens) < 0) {
            rc = nmt_cli_fail("bench");
            break;
        }
        double took = nmt_now() - start;
        seconds += took;
        if (step >= o->warmup && (fastest == 0.0 || took < fastest)) fastest = took;
        tgt_tokens = loss.tokens;
        loss_per_token = loss.loss_sum / (double)loss.tokens;
        fprintf(stderr, "nmt bench: step %ld%s: %.3f s, loss %.4f\n", step + 1, step < o->warmup ? " (warm-up)" : "",
                took, loss_per_token);
    }
    if (rc == NMT_EXIT_OK) {
        struct rusage usage;
        getrusage(RUSAGE_SELF, &usage);
        double step_s = seconds / (double)o->steps, gflops = flops / step_s / 1e9;
        double rss_gib = (double)usage.ru_maxrss / (1024.0 * 1024.0);
        static const char *stage_names[NMT_STAGES] = {"embed", "attention", "ffn", "norm", "output"};
        if (o->json) {
            printf("{\"command\": \"bench train\", \"threads\": %d, \"blas_core\": \"%s\", \"batch_sentences\": %d, "
                   "\"target_tokens\": %ld, "
                   "\"source_tokens\": %ld, \"steps\": %ld, \"step_seconds\": %.4f, \"target_tokens_per_s\": %.1f, "
                   "\"source_target_tokens_per_s\": %.1f, \"flops_per_target_token\": %.0f, \"gflops_per_s\": %.2f, "
                   "\"peak_gflops\": %.2f, \"fraction_of_peak\": %.4f, \"fastest_step_seconds\": %.4f, "
                   "\"fastest_fraction_of_peak\": %.4f, \"peak_rss_gib\": %.3f, \"loss\": %.4f, "
                   "\"stages\": {",
                   o->threads, nmt_kernels_blas_core(), B, tgt_tokens, src_tokens, o->steps, step_s, tgt_tokens / step_s,
                   (tgt_tokens + src_tokens) / step_s, flops / (double)tgt_tokens, gflops, peak, gflops / peak, fastest,
                   flops / fastest / 1e9 / peak, rss_gib, loss_per_token);
            for (int i = 0; i < NMT_STAGES; i++)
                printf("%s\"%s\": {\"forward_s\": %.4f, \"backward_s\": %.4f}", i ? ", " : "", stage_names[i],
                       m.timing.forward[i] / (double)o->steps, m.timing.backward[i] / (double)o->steps);
            printf("}}\n");
        } else {
            printf("model d%d h%d ff%d %d+%d V%d, %d threads, OpenBLAS %s; batch %d sentences, %ld target + %ld "
                   "source tokens\n",
                   c.d_model, c.heads, c.ffn, c.encoder_layers, c.decoder_layers, c.vocab_size, o->threads,
                   nmt_kernels_blas_core(), B, tgt_tokens, src_tokens);
            printf("step (forward+backward)  %.3f s\n", step_s);
            printf("target tokens/s          %.0f\n", tgt_tokens / step_s);
            printf("source+target tokens/s   %.0f\n", (tgt_tokens + src_tokens) / step_s);
            printf("FLOP per target token    %.1f M\n", flops / (double)tgt_tokens / 1e6);
            printf("achieved                 %.1f GFLOP/s = %.1f%% of the sgemm peak %.1f GFLOP/s\n", gflops,
                   100.0 * gflops / peak, peak);
            printf("fastest step             %.3f s = %.1f%% of the peak (on a busy machine the mean suffers first)\n",
                   fastest, 100.0 * flops / fastest / 1e9 / peak);
            printf("peak RSS                 %.3f GiB\n", rss_gib);
            printf("seconds per step         forward  backward\n");
            for (int i = 0; i < NMT_STAGES; i++)
                printf("  %-22s %7.3f  %8.3f\n", stage_names[i], m.timing.forward[i] / (double)o->steps,
                       m.timing.backward[i] / (double)o->steps);
        }
    }
    free(src);
    free(tgt_in);
    free(tgt_out);
    nmt_model_free(&m);
    return rc;
}

int nmt_cmd_bench(int argc, char **argv) {
    enum { OPT_SIZE = 256, OPT_D, OPT_HEADS, OPT_FFN, OPT_LAYERS, OPT_VOCAB, OPT_NORM, OPT_POSITIONS, OPT_BATCH,
           OPT_SRC, OPT_TGT, OPT_STEPS, OPT_WARMUP, OPT_DROPOUT, OPT_THREADS, OPT_JSON, OPT_SYNTHETIC };
    static const struct option long_options[] = {
        {"size", required_argument, NULL, OPT_SIZE},       {"d-model", required_argument, NULL, OPT_D},
        {"heads", required_argument, NULL, OPT_HEADS},     {"ffn", required_argument, NULL, OPT_FFN},
        {"layers", required_argument, NULL, OPT_LAYERS},   {"vocab", required_argument, NULL, OPT_VOCAB},
        {"norm", required_argument, NULL, OPT_NORM},       {"positions", required_argument, NULL, OPT_POSITIONS},
        {"batch-tokens", required_argument, NULL, OPT_BATCH}, {"src-len", required_argument, NULL, OPT_SRC},
        {"tgt-len", required_argument, NULL, OPT_TGT},     {"steps", required_argument, NULL, OPT_STEPS},
        {"warmup", required_argument, NULL, OPT_WARMUP},   {"dropout", required_argument, NULL, OPT_DROPOUT},
        {"threads", required_argument, NULL, OPT_THREADS}, {"json", no_argument, NULL, OPT_JSON},
        {"synthetic", no_argument, NULL, OPT_SYNTHETIC},   {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bench_options o = {.size = 2048, .steps = 10, .warmup = 2, .batch_tokens = 4096, .src_len = 13, .tgt_len = 14,
                       .dropout = 0.1};
    o.model = nmt_model_config_default(); /* d256, h4, ff1024, 3+3 */
    o.model.vocab_size = 8000;
    long v, threads = 0;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
        switch (opt) {
        case 'h': usage(stdout); return NMT_EXIT_OK;
        case OPT_SIZE: if (nmt_cli_long("bench", "--size", optarg, 16, 8192, &o.size) < 0) return NMT_EXIT_USAGE; break;
        case OPT_D: if (nmt_cli_long("bench", "--d-model", optarg, 2, 8192, &v) < 0) return NMT_EXIT_USAGE; o.model.d_model = (int)v; break;
        case OPT_HEADS: if (nmt_cli_long("bench", "--heads", optarg, 1, 256, &v) < 0) return NMT_EXIT_USAGE; o.model.heads = (int)v; break;
        case OPT_FFN: if (nmt_cli_long("bench", "--ffn", optarg, 1, 65536, &v) < 0) return NMT_EXIT_USAGE; o.model.ffn = (int)v; break;
        case OPT_LAYERS:
            if (nmt_cli_long("bench", "--layers", optarg, 1, 64, &v) < 0) return NMT_EXIT_USAGE;
            o.model.encoder_layers = o.model.decoder_layers = (int)v;
            break;
        case OPT_VOCAB: if (nmt_cli_long("bench", "--vocab", optarg, 5, 1 << 20, &v) < 0) return NMT_EXIT_USAGE; o.model.vocab_size = (int)v; break;
        case OPT_NORM:
            if (strcmp(optarg, "post") == 0) o.model.norm_position = NMT_NORM_POST;
            else if (strcmp(optarg, "pre") == 0) o.model.norm_position = NMT_NORM_PRE;
            else return nmt_cli_usage_error("bench", "--norm: expected post or pre, got '%s'", optarg);
            break;
        case OPT_POSITIONS:
            if (strcmp(optarg, "sinusoidal") == 0) o.model.positions = NMT_POSITIONS_SINUSOIDAL;
            else if (strcmp(optarg, "learned") == 0) o.model.positions = NMT_POSITIONS_LEARNED;
            else if (strcmp(optarg, "rope") == 0) o.model.positions = NMT_POSITIONS_ROPE;
            else return nmt_cli_usage_error("bench", "--positions: expected sinusoidal, learned or rope, got '%s'", optarg);
            break;
        case OPT_BATCH: if (nmt_cli_long("bench", "--batch-tokens", optarg, 1, 1 << 22, &o.batch_tokens) < 0) return NMT_EXIT_USAGE; break;
        case OPT_SRC: if (nmt_cli_long("bench", "--src-len", optarg, 1, 1024, &o.src_len) < 0) return NMT_EXIT_USAGE; break;
        case OPT_TGT: if (nmt_cli_long("bench", "--tgt-len", optarg, 1, 1024, &o.tgt_len) < 0) return NMT_EXIT_USAGE; break;
        case OPT_STEPS: if (nmt_cli_long("bench", "--steps", optarg, 1, 100000, &o.steps) < 0) return NMT_EXIT_USAGE; break;
        case OPT_WARMUP: if (nmt_cli_long("bench", "--warmup", optarg, 0, 100000, &o.warmup) < 0) return NMT_EXIT_USAGE; break;
        case OPT_DROPOUT:
            if (nmt_cli_double("bench", "--dropout", optarg, 0.0, 0.99, &o.dropout) < 0) return NMT_EXIT_USAGE;
            break;
        case OPT_THREADS: if (nmt_cli_long("bench", "--threads", optarg, 1, 256, &threads) < 0) return NMT_EXIT_USAGE; break;
        case OPT_JSON: o.json = 1; break;
        case OPT_SYNTHETIC: o.synthetic = 1; break;
        default: return nmt_cli_usage_error("bench", "unknown option");
        }
    }
    if (optind != argc - 1) return nmt_cli_usage_error("bench", "expected one of: gemm, train");
    o.model.dropout = (float)o.dropout;
    if (threads > 0 && nmt_kernels_set_threads((int)threads) < 0) return nmt_cli_fail("bench");
    o.threads = nmt_kernels_threads();
    const char *advice = nmt_kernels_blas_core_advice();
    if (advice)
        fprintf(stderr,
                "nmt bench: OpenBLAS runs its %s kernels on this AVX-512 CPU; OPENBLAS_CORETYPE=%s in the "
                "environment makes sgemm faster\n",
                nmt_kernels_blas_core(), advice);
    const char *what = argv[optind];
    if (strcmp(what, "gemm") == 0) return bench_gemm(&o);
    if (strcmp(what, "train") == 0) return bench_train(&o);
    return nmt_cli_usage_error("bench", "unknown benchmark '%s' (expected gemm or train)", what);
}
