/* nmt bench: measured speed of this machine and of nmt on it.
 *
 *   nmt bench gemm    sgemm GFLOP/s of every kernel here at 2048^3 (the reference peak) and at the
 *                     model's shapes, and decoding's products on packed weights
 *   nmt bench train CONFIG.yaml
 *                     steady-state training throughput on the config's real batches (whole steps:
 *                     forward, backward, Adam), with the sgemm peak measured in the same run, the
 *                     fraction of it achieved, peak RSS and a time breakdown per stage
 *   nmt bench train --synthetic
 *                     the same for forward+backward on a synthetic batch of a model given by flags
 *   nmt bench translate -m MODEL_DIR -i FILE
 *                     sentences/s and target tokens/s of beam search (or greedy) on a file
 *   mpirun -np N nmt bench allreduce
 *                     the all-reduces of a training step's exact gradient sum for the model of the
 *                     model flags, and the latency of a one-element all-reduce
 *
 * --json prints one JSON object on stdout (keys shared with tools/bench/torch_reference.py);
 * otherwise a readable table. Progress goes to stderr. The measuring is the library's (api/bench.h):
 * this file parses flags and prints.
 */
#include "cli.h"

#include "api/bench.h"
#include "base/comm.h"
#include "base/json.h"
#include "base/util.h"
#include "compute/gemm.h"
#include "compute/packed.h"
#include "compute/pool.h"
#include "train/config.h"
#include "train/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char nmt_cmd_bench_summary[] = "measure the sgemm peak, training and translation throughput";

static void usage(FILE *out) {
    fprintf(out,
            "Usage: nmt bench gemm [--size N] [--threads T] [--json]\n"
            "       nmt bench train CONFIG.yaml [--set KEY=VALUE ...] [--steps N] [--warmup N] [--json]\n"
            "       nmt bench train --synthetic [model options] [--json]\n"
            "       nmt bench translate -m MODEL_DIR -i FILE [--beam-size K] [--constraints] [--json]\n"
            "       mpirun -np N nmt bench allreduce [model options] [--steps N] [--json]\n"
            "\n"
            "gemm: GFLOP/s of C = A B^T on the thread pool through every sgemm this CPU has (OpenBLAS,\n"
            "nmt's AVX2+FMA and AVX-512 kernels; best of three rounds in turns), at N^3 (default 2048,\n"
            "the reference peak) and at the shapes of the d256/h4/ff1024 model with 4096-token batches;\n"
            "then the products decoding runs on packed weights in fp32, bf16 (AVX512_BF16 vdpbf16ps) and\n"
            "int8 (AVX-512 VNNI vpdpbusd, else AVX2 vpmaddubsw) side by side, and fp32 through OpenBLAS\n"
            "(weights repacked every call), in GOP/s at N^3 and at one beam step's shape\n"
            "(40 x 1024 x 256); `--precision auto` picks among them the same way.\n"
            "\n"
            "train CONFIG.yaml: whole training steps (forward, backward, gradient norm, Adam) on the batches\n"
            "a fresh `nmt train CONFIG.yaml` would see, after --warmup steps (3); --steps measured (20).\n"
            "Reports target and source+target tokens/s, GFLOP/s from the exact matrix-product FLOP count, the\n"
            "fraction of the sgemm peak measured in the same run (and, when the products are bf16, of the\n"
            "bf16 product peak measured after it), peak RSS and seconds per stage, and with\n"
            "train.max_minutes the steps that budget allows at this pace (train.optimizer.decay_steps for a\n"
            "schedule that ends with the budget). Writes nothing to the config's output directory (its\n"
            "spm.model is used when a run left one).\n"
            "\n"
            "train --synthetic: forward+backward (no optimizer) of a freshly initialised model on one\n"
            "synthetic batch (random ids; lengths a little below --src-len/--tgt-len):\n"
            "  --d-model D (256)  --heads H (4)  --ffn F (1024)  --layers L (3, encoder and decoder)\n"
            "  --vocab V (8000)  --norm post|pre (post)  --positions sinusoidal|learned|rope\n"
            "  --batch-tokens N (4096 padded target tokens)  --src-len S (13)  --tgt-len T (14)\n"
            "  --dropout P (0.1)\n"
            "\n"
            "translate: sentences/s and target tokens/s (pieces + eos) of `nmt translate` on FILE, with its\n"
            "defaults (batches of at most 8192 source pieces, lines of at most 1000), timing the search only\n"
            "(model loading and SentencePiece encoding excluded).\n"
            "  --beam-size K (5; 1 = the greedy path)  --batch-size N (64)  --length-penalty A (0.6)\n"
            "  --precision fp32|bf16|int8|auto (as translate)  --shortlist (MODEL_DIR/shortlist.bin)\n"
            "  --constraints (each line SOURCE<TAB>PHRASE..., as translate --constraints: the cost of\n"
            "  lexically constrained search beside the same FILE's sources alone)\n"
            "\n"
            "allreduce (under mpirun): the all-reduces of one training step's exact gradient sum for the\n"
            "model given by the model options of train --synthetic: an int64 per parameter and an int32 per\n"
            "256; --steps timed after --warmup, each after a barrier; and a one-element all-reduce (latency).\n"
            "\n"
            "Common: --threads T (the CPUs this process may use)  --json (one JSON object on stdout)\n"
            "        -q, --quiet (no progress)  --help\n");
}

typedef struct bench_options {
    int threads, json, synthetic, quiet;
    int constraints;            /* bench translate: SOURCE<TAB>PHRASE... lines */
    long size, steps, warmup, batch_tokens, src_len, tgt_len;
    double dropout;
    nmt_model_config model;
    const char **overrides;     /* --set, NULL-terminated */
    const char *model_dir, *input;
    nmt_pipeline_options pipe; /* translate's: the library's defaults, as nmt translate's */
} bench_options;

/* Which sgemm nmt_sgemm runs, for reports: "nmt AVX-512", "nmt AVX2+FMA" or "OpenBLAS <core>". */
static const char *gemm_name(void) {
    static char name[64];
    if (nmt_gemm_own()) snprintf(name, sizeof name, "nmt %s", nmt_gemm_kernel_name(nmt_gemm_kernel_used()));
    else snprintf(name, sizeof name, "OpenBLAS %s", nmt_gemm_blas_core());
    return name;
}

static int bench_gemm(const bench_options *o) {
    nmt_bench_gemm_result r;
    if (nmt_bench_gemm((int)o->size, &r) < 0) return nmt_cli_fail("bench");
    const int n = r.size, blas_row = r.blas_row;
    const double *peak = r.gflops[r.sgemm];
    if (o->json) {
        printf("{\"command\": \"bench gemm\", \"threads\": %d, \"gemm\": \"%s\", \"blas_core\": \"%s\", "
               "\"size\": %d, \"peak_gflops\": %.2f, \"openblas_peak_gflops\": %.2f, \"shapes\": [",
               o->threads, gemm_name(), nmt_gemm_blas_core(), n, peak[0], r.gflops[NMT_GEMM_OPENBLAS][0]);
        for (int s = 1; s < NMT_BENCH_SHAPES; s++) {
            printf("%s{\"what\": \"%s\", \"M\": %d, \"N\": %d, \"K\": %d, \"gflops\": %.2f, \"kernels\": {", s > 1 ? ", " : "",
                   nmt_bench_shapes[s].what, nmt_bench_shapes[s].M, nmt_bench_shapes[s].N, nmt_bench_shapes[s].K, peak[s]);
            for (int k = 0, first = 1; k < NMT_BENCH_KERNELS; k++)
                if (r.gflops[k][s] >= 0) printf("%s\"%s\": %.2f", first ? "" : ", ", nmt_gemm_kernel_name((nmt_gemm_kernel)k), r.gflops[k][s]), first = 0;
            printf("}}");
        }
        printf("], \"packed\": [");
        for (int i = 0; i < NMT_BENCH_PRECISIONS + blas_row; i++) {
            const nmt_precision precision = i < NMT_BENCH_PRECISIONS ? nmt_bench_precisions[i] : NMT_PRECISION_FP32;
            const char *kernels = i == NMT_BENCH_PRECISIONS ? "OpenBLAS" : r.packed_peak[i] < 0 ? "" : nmt_packed_kernel_name(precision);
            printf("%s{\"precision\": \"%s\", \"kernels\": \"%s\", \"peak_gops\": %.2f, \"step_gops\": %.2f}",
                   i ? ", " : "", nmt_packed_precision_name(precision), kernels, r.packed_peak[i], r.packed_step[i]);
        }
        printf("]}\n");
        return NMT_EXIT_OK;
    }
    printf("sgemm on %d threads (C = A B^T, float32, inside the nmt thread pool), GFLOP/s; nmt_sgemm runs %s\n",
           o->threads, gemm_name());
    printf("  %-16s %5s %5s %5s", "", "M", "N", "K");
    for (int k = 0; k < NMT_BENCH_KERNELS; k++)
        if (r.gflops[k][0] >= 0) printf(" %14s", k == NMT_GEMM_OPENBLAS ? "OpenBLAS" : nmt_gemm_kernel_name((nmt_gemm_kernel)k));
    printf("\n");
    for (int s = 0; s < NMT_BENCH_SHAPES; s++) {
        printf("  %-16s %5d %5d %5d", nmt_bench_shapes[s].what, s ? nmt_bench_shapes[s].M : n, s ? nmt_bench_shapes[s].N : n,
               s ? nmt_bench_shapes[s].K : n);
        for (int k = 0; k < NMT_BENCH_KERNELS; k++)
            if (r.gflops[k][s] >= 0) printf(" %14.1f", r.gflops[k][s]);
        printf("%s\n", s == 0 ? "  (reference peak)" : "");
    }
    printf("decoding products on packed weights (y = x W^T), GOP/s: square %d^3 (peak), one beam step's fc1 "
           "%dx%dx%d\n", n, NMT_BENCH_STEP_M, NMT_BENCH_STEP_N, NMT_BENCH_STEP_K);
    for (int i = 0; i < NMT_BENCH_PRECISIONS + blas_row; i++) {
        const nmt_precision precision = i < NMT_BENCH_PRECISIONS ? nmt_bench_precisions[i] : NMT_PRECISION_FP32;
        char kernels[64];
        if (i == NMT_BENCH_PRECISIONS) snprintf(kernels, sizeof kernels, "OpenBLAS %s", nmt_gemm_blas_core());
        else snprintf(kernels, sizeof kernels, "%s", nmt_packed_kernel_name(precision));
        if (r.packed_peak[i] < 0) {
            printf("  %-5s %-24s %8s %8s\n", nmt_packed_precision_name(precision), "(not on this CPU)", "-", "-");
            continue;
        }
        printf("  %-5s %-24s %8.1f %8.1f  (%.2fx, %.2fx fp32)\n", nmt_packed_precision_name(precision), kernels,
               r.packed_peak[i], r.packed_step[i], r.packed_peak[i] / r.packed_peak[0], r.packed_step[i] / r.packed_step[0]);
    }
    return NMT_EXIT_OK;
}

static const char *const stage_names[NMT_STAGES] = {"embed", "attention", "ffn", "norm", "output"};

/* The report of either training benchmark; r->optimizer_s < 0 when the optimizer was not run. */
/* data: the training config whose data.train was read (NULL for a synthetic batch). */
/* precision: train.precision's word, the products' arithmetic. */
/* peak: the sgemm peak; bf16_peak: that of the bf16 products a bf16 run multiplies with (< 0: not measured). */
/* budget_minutes: the config's train.max_minutes (0: none), turned into the steps it allows at this pace. */
static void report_train(const bench_options *o, const nmt_model_config *c, const nmt_config *data,
                         const char *precision, double peak, double bf16_peak, double budget_minutes,
                         const nmt_train_bench_result *r) {
    double n = (double)r->steps, step_s = r->seconds / n, gflops = r->flops / r->seconds / 1e9;
    long budget_steps = budget_minutes > 0 ? (long)(budget_minutes * 60.0 / step_s) : 0;
    double fastest_gflops = r->fastest_step_flops / r->fastest_step_s / 1e9;
    if (o->json) {
        printf("{\"command\": \"bench train\", \"data\": ");
        if (data) {
            printf("[");
            for (int i = 0; i < data->num_train; i++) {
                printf("%s{\"src\": ", i ? ", " : "");
                nmt_json_write_string(stdout, data->train[i].src);
                printf(", \"tgt\": ");
                nmt_json_write_string(stdout, data->train[i].tgt);
                printf(", \"weight\": %d}", data->train[i].weight);
            }
            printf("]");
        } else {
            printf("\"synthetic\"");
        }
        printf(", \"threads\": %d, \"gemm\": \"%s\", \"blas_core\": \"%s\", \"precision\": \"%s\", "
               "\"model\": {\"d_model\": %d, \"heads\": %d, \"ffn\": %d, \"encoder_layers\": %d, \"decoder_layers\": %d, "
               "\"vocab_size\": %d}, \"steps\": %ld, \"step_seconds\": %.6f, \"sentences_per_step\": %.1f, "
               "\"target_tokens_per_step\": %.1f, \"source_tokens_per_step\": %.1f, \"target_tokens_per_s\": %.1f, "
               "\"source_target_tokens_per_s\": %.1f, \"flops_per_target_token\": %.0f, \"gflops_per_s\": %.2f, "
               "\"peak_gflops\": %.2f, \"fraction_of_peak\": %.4f, \"fastest_step_seconds\": %.4f, "
               "\"fastest_fraction_of_peak\": %.4f, \"peak_rss_gib\": %.3f, \"first_loss\": %.4f, \"last_loss\": %.4f, "
               "\"budget_steps\": %ld, \"ranks\": %d, \"buckets\": %d, \"compute_seconds\": %.4f, \"comm_seconds\": %.4f, \"reduce_seconds\": %.4f, \"skew_seconds\": %.4f, "
               "\"stages\": {",
               o->threads, gemm_name(), nmt_gemm_blas_core(), precision, c->d_model, c->heads, c->ffn, c->encoder_layers,
               c->decoder_layers, c->vocab_size, r->steps, step_s, r->sentences / n, r->target_tokens / n,
               r->source_tokens / n, r->target_tokens / r->seconds, (r->target_tokens + r->source_tokens) / r->seconds,
               r->flops / (double)r->target_tokens, gflops, peak, gflops / peak, r->fastest_step_s, fastest_gflops / peak,
               nmt_bench_peak_rss_gib(), r->first_loss, r->last_loss, budget_steps, r->ranks > 0 ? r->ranks : 1, r->buckets, (r->seconds - r->comm_s) / n,
               r->comm_s / n, r->reduce_s / n, r->skew_s / n);
        if (bf16_peak > 0)
            printf("\"bf16_peak_gops\": %.2f, \"fraction_of_bf16_peak\": %.4f, ", bf16_peak, gflops / bf16_peak);
        else
            printf("\"bf16_peak_gops\": null, \"fraction_of_bf16_peak\": null, ");
        for (int i = 0; i < NMT_STAGES; i++)
            printf("\"%s\": {\"forward_s\": %.4f, \"backward_s\": %.4f}, ", stage_names[i], r->timing.forward[i] / n,
                   r->timing.backward[i] / n);
        if (r->optimizer_s >= 0) printf("\"optimizer\": {\"seconds\": %.4f}", r->optimizer_s / n);
        else printf("\"optimizer\": null");
        printf("}}\n");
        return;
    }
    printf("model d%d h%d ff%d %d+%d V%d, %d threads, %s kernels, %s products\n", c->d_model, c->heads, c->ffn,
           c->encoder_layers, c->decoder_layers, c->vocab_size, o->threads, gemm_name(), precision);
    for (int i = 0; data && i < data->num_train; i++)
        printf("%s%s -> %s (x %d)\n", i ? "                         " : "data                     ", data->train[i].src,
               data->train[i].tgt, data->train[i].weight);
    if (!data) printf("data                     one synthetic batch\n");
    printf("per step                 %.0f sentences, %.0f target + %.0f source tokens\n", r->sentences / n,
           r->target_tokens / n, r->source_tokens / n);
    printf("step%-21s%.3f s (mean of %ld)\n", r->optimizer_s >= 0 ? " (with Adam)" : " (forward+backward)", step_s,
           r->steps);
    if (budget_steps > 0)
        printf("steps in the budget      %ld in train.max_minutes %g at this pace (validation not counted): the "
               "train.optimizer.decay_steps of a schedule that ends with the budget\n",
               budget_steps, budget_minutes);
    if (r->ranks > 1)
        printf("ranks                    %d x %d threads: compute %.3f s, communication %.3f s a step (all-reduces, "
               "waiting for the slowest rank included); the exact sum after the backward %.3f s, %.3f s of it "
               "waiting for the slowest rank (%d buckets overlapped with the backward)\n",
               r->ranks, o->threads, (r->seconds - r->comm_s) / n, r->comm_s / n, r->reduce_s / n, r->skew_s / n,
               r->buckets);
    printf("target tokens/s          %.0f\n", r->target_tokens / r->seconds);
    printf("source+target tokens/s   %.0f\n", (r->target_tokens + r->source_tokens) / r->seconds);
    printf("FLOP per target token    %.1f M\n", r->flops / (double)r->target_tokens / 1e6);
    printf("achieved                 %.1f GFLOP/s = %.1f%% of the sgemm peak %.1f GFLOP/s\n", gflops,
           100.0 * gflops / peak, peak);
    if (bf16_peak > 0)
        printf("                         = %.1f%% of the bf16 product peak %.1f GOP/s (the products it multiplies with)\n",
               100.0 * gflops / bf16_peak, bf16_peak);
    printf("fastest step             %.3f s = %.1f%% of the sgemm peak (on a busy machine the mean suffers first)\n",
           r->fastest_step_s, 100.0 * fastest_gflops / peak);
    if (bf16_peak > 0)
        printf("                         = %.1f%% of the bf16 product peak\n", 100.0 * fastest_gflops / bf16_peak);
    printf("peak RSS                 %.3f GiB\n", nmt_bench_peak_rss_gib());
    printf("loss                     %.4f -> %.4f\n", r->first_loss, r->last_loss);
    printf("seconds per step         forward  backward\n");
    for (int i = 0; i < NMT_STAGES; i++)
        printf("  %-22s %7.3f  %8.3f\n", stage_names[i], r->timing.forward[i] / n, r->timing.backward[i] / n);
    if (r->optimizer_s >= 0) printf("  %-22s %7.3f\n", "optimizer (norm, Adam)", r->optimizer_s / n);
}

static double measure_peak(const bench_options *o) {
    if (!o->quiet) fprintf(stderr, "nmt bench: measuring the sgemm peak (2048^3)\n");
    return nmt_bench_gemm_gflops(2048, 2048, 2048, 1.0);
}

/* The peak of the products bf16 training multiplies with, measured after such a run. */
static double measure_bf16_peak(const bench_options *o) {
    if (!o->quiet) fprintf(stderr, "nmt bench: measuring the bf16 product peak (2048^3, operands converted every call)\n");
    return nmt_bench_bf16_gemm_gops(2048, 2048, 2048, 1.0);
}

static int bench_train_synthetic(const bench_options *o) {
    nmt_model_config c = o->model;
    if (nmt_model_config_check(&c) < 0) return nmt_cli_fail("bench");
    const double peak = measure_peak(o);
    nmt_train_bench_result r;
    if (peak < 0 || nmt_bench_train_synthetic(&c, o->batch_tokens, (int)o->src_len, (int)o->tgt_len, o->warmup, o->steps,
                                              o->quiet ? NULL : stderr, &r) < 0)
        return nmt_cli_fail("bench");
    report_train(o, &c, NULL, "fp32", peak, -1.0, 0, &r);
    return NMT_EXIT_OK;
}

static int bench_train_config(const bench_options *o, const char *path) {
    nmt_config config;
    int loaded = nmt_config_load(&config, path, o->overrides);
    if (loaded == NMT_CONFIG_BAD_OVERRIDE) return nmt_cli_usage_error("bench", "%s", nmt_error());
    if (loaded < 0) return nmt_cli_fail("bench");
    nmt_comm comm; /* under mpirun: the ranks train together, rank 0 reports */
    if (nmt_comm_init(&comm) < 0) {
        nmt_config_free(&config);
        return nmt_cli_fail("bench");
    }
    int root = comm.rank == 0;
    double peak = root ? measure_peak(o) : 1.0;
    nmt_train_options options = {.threads = o->threads,
                                 .progress = o->quiet || !root ? NULL : stderr,
                                 .warnings = root ? stderr : NULL,
                                 .comm = &comm};
    nmt_train_bench_result r;
    int rc = peak < 0 || nmt_train_bench(&config, &options, o->warmup, o->steps, &r) < 0 ? NMT_EXIT_FAILURE
                                                                                        : NMT_EXIT_OK;
    if (rc != NMT_EXIT_OK && comm.size > 1) {
        fprintf(stderr, "nmt bench: rank %d of %d on host %s: %s\n", comm.rank, comm.size, comm.host, nmt_error());
        nmt_comm_abort(&comm, NMT_EXIT_FAILURE);
    }
    if (rc != NMT_EXIT_OK) nmt_cli_fail("bench");
    nmt_comm_finalize(&comm);
    if (rc == NMT_EXIT_OK && root) {
        nmt_model_config c = config.model;
        c.vocab_size = r.vocab_size;
        const double bf16_peak = r.precision == NMT_PRECISION_BF16 ? measure_bf16_peak(o) : -1.0;
        report_train(o, &c, &config, nmt_packed_precision_name(r.precision), peak, bf16_peak, config.max_minutes, &r);
    }
    nmt_config_free(&config);
    return rc;
}

/* The all-reduces of an exact gradient sum, each after a barrier, and a one-element all-reduce. */
static int bench_allreduce(const bench_options *o) {
    nmt_comm comm;
    nmt_model m;
    nmt_model_config c = o->model;
    if (nmt_comm_init(&comm) < 0 || nmt_model_config_check(&c) < 0 || nmt_model_init(&m, &c) < 0)
        return nmt_cli_fail("bench");
    size_t n = m.num_params, blocks = (n + 255) / 256;
    nmt_model_free(&m);
    int64_t *sum = nmt_calloc(n, sizeof *sum), one = 1;
    int32_t *exps = nmt_calloc(blocks, sizeof *exps);
    double latency = INFINITY, fastest = INFINITY, total = 0;
    int rc = sum && exps ? 0 : -1;
    for (long i = 0; rc == 0 && i < o->warmup + o->steps; i++) {
        double start;
        rc = nmt_comm_barrier(&comm);
        start = nmt_now();
        if (rc == 0) rc = nmt_comm_sum_i64(&comm, &one, 1);
        latency = fmin(latency, nmt_now() - start);
        if (rc == 0) rc = nmt_comm_barrier(&comm);
        start = nmt_now();
        if (rc == 0) rc = nmt_comm_max_i32(&comm, exps, blocks) < 0 || nmt_comm_sum_i64(&comm, sum, n) < 0 ? -1 : 0;
        double took = nmt_now() - start;
        if (i < o->warmup) continue;
        fastest = fmin(fastest, took);
        total += took;
    }
    free(sum);
    free(exps);
    if (rc < 0 && comm.size > 1) {
        fprintf(stderr, "nmt bench: rank %d of %d on host %s: %s\n", comm.rank, comm.size, comm.host, nmt_error());
        nmt_comm_abort(&comm, NMT_EXIT_FAILURE);
    }
    if (rc < 0) return nmt_cli_fail("bench");
    nmt_comm_finalize(&comm);
    if (comm.rank > 0) return NMT_EXIT_OK;
    double bytes = (double)n * sizeof *sum + (double)blocks * sizeof *exps, mean = total / (double)o->steps;
    double bus = 2.0 * (comm.size - 1) / comm.size * bytes; /* what a ring moves over each link */
    if (o->json)
        printf("{\"command\": \"bench allreduce\", \"ranks\": %d, \"host\": \"%s\", \"parameters\": %zu, "
               "\"bytes\": %.0f, \"steps\": %ld, \"mean_seconds\": %.6f, \"fastest_seconds\": %.6f, "
               "\"latency_seconds\": %.6f, \"bus_gbytes_per_s\": %.3f}\n",
               comm.size, comm.host, n, bytes, o->steps, mean, fastest, latency, bus / fastest / 1e9);
    else
        printf("ranks %d on %s; model of %zu parameters: %.1f MB a step (int64 sums, int32 block exponents)\n"
               "all-reduce              %.4f s mean, %.4f s fastest of %ld (bus %.2f GB/s)\n"
               "one-element latency     %.1f us\n",
               comm.size, comm.host, n, bytes / 1e6, mean, fastest, o->steps, bus / fastest / 1e9, latency * 1e6);
    return NMT_EXIT_OK;
}

static int bench_translate(const bench_options *o) {
    if (!o->model_dir || !o->input) return nmt_cli_usage_error("bench", "translate needs -m MODEL_DIR and -i FILE");
    nmt_bench_translate_result r;
    if (nmt_bench_translate(o->model_dir, o->input, &o->pipe, o->constraints, o->quiet ? NULL : stderr, &r) < 0)
        return nmt_cli_fail("bench");
    const nmt_decode_options *d = &o->pipe.decode;
    const char *products = nmt_packed_kernel_name(r.precision);
    const double seconds = r.seconds;
    if (o->json) {
        printf("{\"command\": \"bench translate\", \"model\": ");
        nmt_json_write_string(stdout, o->model_dir);
        printf(", \"input\": ");
        nmt_json_write_string(stdout, o->input);
        printf(", \"search\": \"%s\", "
               "\"beam_size\": %d, \"batch_size\": %d, \"threads\": %d, \"sentences\": %d, \"seconds\": %.4f, "
               "\"sentences_per_s\": %.2f, \"target_tokens_per_s\": %.1f, \"source_tokens\": %ld, "
               "\"target_tokens\": %ld, \"mean_output_pieces\": %.2f, \"peak_rss_gib\": %.3f, "
               "\"products\": \"%s\", \"precision\": \"%s\", \"shortlist\": %s, \"constraints\": %ld}\n",
               d->greedy ? "greedy" : "beam", d->beam_size, d->batch_size, o->threads, r.sentences, seconds,
               r.sentences / seconds, r.target_tokens / seconds, r.source_tokens, r.target_tokens,
               r.sentences ? (double)(r.target_tokens - r.sentences) / r.sentences : 0.0, nmt_bench_peak_rss_gib(),
               products, nmt_packed_precision_name(r.precision), r.shortlist_k ? "true" : "false", r.phrases);
        return NMT_EXIT_OK;
    }
    printf("%s on %d threads, batches of %d sentences\n", d->greedy ? "greedy search" : "beam search", o->threads,
           d->batch_size);
    if (!d->greedy) printf("beam size                %d\n", d->beam_size);
    printf("sentences                %d in %.3f s\n", r.sentences, seconds);
    printf("sentences/s              %.1f\n", r.sentences / seconds);
    printf("target tokens/s          %.0f (pieces + eos)\n", r.target_tokens / seconds);
    printf("peak RSS                 %.3f GiB\n", nmt_bench_peak_rss_gib());
    printf("matrix products          %s\n", products);
    if (r.shortlist_k) printf("output layer             shortlist (K %d, M %d)\n", r.shortlist_k, r.shortlist_m);
    if (o->constraints) printf("constraint phrases       %ld\n", r.phrases);
    return NMT_EXIT_OK;
}

int nmt_cmd_bench(int argc, char **argv) {
    enum { OPT_SIZE = 256, OPT_D, OPT_HEADS, OPT_FFN, OPT_LAYERS, OPT_VOCAB, OPT_NORM, OPT_POSITIONS, OPT_BATCH,
           OPT_SRC, OPT_TGT, OPT_STEPS, OPT_WARMUP, OPT_DROPOUT, OPT_THREADS, OPT_JSON, OPT_SYNTHETIC, OPT_SET,
           OPT_QUIET, OPT_BEAM, OPT_BATCH_SIZE, OPT_LENGTH_PENALTY, OPT_PRECISION, OPT_SHORTLIST,
           OPT_CONSTRAINTS };
    static const struct option long_options[] = {
        {"size", required_argument, NULL, OPT_SIZE},       {"d-model", required_argument, NULL, OPT_D},
        {"heads", required_argument, NULL, OPT_HEADS},     {"ffn", required_argument, NULL, OPT_FFN},
        {"layers", required_argument, NULL, OPT_LAYERS},   {"vocab", required_argument, NULL, OPT_VOCAB},
        {"norm", required_argument, NULL, OPT_NORM},       {"positions", required_argument, NULL, OPT_POSITIONS},
        {"batch-tokens", required_argument, NULL, OPT_BATCH}, {"src-len", required_argument, NULL, OPT_SRC},
        {"tgt-len", required_argument, NULL, OPT_TGT},     {"steps", required_argument, NULL, OPT_STEPS},
        {"warmup", required_argument, NULL, OPT_WARMUP},   {"dropout", required_argument, NULL, OPT_DROPOUT},
        {"threads", required_argument, NULL, OPT_THREADS}, {"json", no_argument, NULL, OPT_JSON},
        {"synthetic", no_argument, NULL, OPT_SYNTHETIC},   {"set", required_argument, NULL, OPT_SET},
        {"quiet", no_argument, NULL, OPT_QUIET},           {"beam-size", required_argument, NULL, OPT_BEAM},
        {"batch-size", required_argument, NULL, OPT_BATCH_SIZE},
        {"length-penalty", required_argument, NULL, OPT_LENGTH_PENALTY},
        {"precision", required_argument, NULL, OPT_PRECISION}, {"shortlist", no_argument, NULL, OPT_SHORTLIST},
        {"constraints", no_argument, NULL, OPT_CONSTRAINTS},
        {"model", required_argument, NULL, 'm'},           {"input", required_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},                  {NULL, 0, NULL, 0},
    };
    const char **overrides = nmt_calloc((size_t)argc + 1, sizeof *overrides);
    if (!overrides) return nmt_cli_fail("bench");
    bench_options o = {.size = 2048, .steps = 20, .warmup = 3, .batch_tokens = 4096, .src_len = 13, .tgt_len = 14,
                       .dropout = 0.1, .overrides = overrides};
    o.model = nmt_model_config_default(); /* d256, h4, ff1024, 3+3 */
    o.model.vocab_size = 8000;
    o.pipe = nmt_pipeline_options_default();
    long v, threads = nmt_cli_threads_default(), num_overrides = 0;
    int precision_given = 0;
    int opt, status = NMT_EXIT_USAGE;
    static const int repeatable[] = {OPT_SET, 0};
    optind = 1;
    while ((opt = nmt_cli_getopt("bench", argc, argv, "hqm:i:", long_options, repeatable)) != -1) {
        switch (opt) {
        case 'h': usage(stdout); status = NMT_EXIT_OK; goto done;
        case 'm': o.model_dir = optarg; break;
        case 'i': o.input = optarg; break;
        case OPT_SIZE: if (nmt_cli_long("bench", "--size", optarg, 16, 8192, &o.size) < 0) goto done; break;
        case OPT_D: if (nmt_cli_long("bench", "--d-model", optarg, 2, 8192, &v) < 0) goto done; o.model.d_model = (int)v; break;
        case OPT_HEADS: if (nmt_cli_long("bench", "--heads", optarg, 1, 256, &v) < 0) goto done; o.model.heads = (int)v; break;
        case OPT_FFN: if (nmt_cli_long("bench", "--ffn", optarg, 1, 65536, &v) < 0) goto done; o.model.ffn = (int)v; break;
        case OPT_LAYERS:
            if (nmt_cli_long("bench", "--layers", optarg, 1, 64, &v) < 0) goto done;
            o.model.encoder_layers = o.model.decoder_layers = (int)v;
            break;
        case OPT_VOCAB: if (nmt_cli_long("bench", "--vocab", optarg, 5, 1 << 20, &v) < 0) goto done; o.model.vocab_size = (int)v; break;
        case OPT_NORM:
            if (strcmp(optarg, "post") == 0) o.model.norm_position = NMT_NORM_POST;
            else if (strcmp(optarg, "pre") == 0) o.model.norm_position = NMT_NORM_PRE;
            else { nmt_cli_usage_error("bench", "--norm: expected post or pre, got '%s'", optarg); goto done; }
            break;
        case OPT_POSITIONS:
            if (strcmp(optarg, "sinusoidal") == 0) o.model.positions = NMT_POSITIONS_SINUSOIDAL;
            else if (strcmp(optarg, "learned") == 0) o.model.positions = NMT_POSITIONS_LEARNED;
            else if (strcmp(optarg, "rope") == 0) o.model.positions = NMT_POSITIONS_ROPE;
            else {
                nmt_cli_usage_error("bench", "--positions: expected sinusoidal, learned or rope, got '%s'", optarg);
                goto done;
            }
            break;
        case OPT_BATCH: if (nmt_cli_long("bench", "--batch-tokens", optarg, 1, 1 << 22, &o.batch_tokens) < 0) goto done; break;
        case OPT_SRC: if (nmt_cli_long("bench", "--src-len", optarg, 1, 1024, &o.src_len) < 0) goto done; break;
        case OPT_TGT: if (nmt_cli_long("bench", "--tgt-len", optarg, 1, 1024, &o.tgt_len) < 0) goto done; break;
        case OPT_STEPS: if (nmt_cli_long("bench", "--steps", optarg, 1, 100000, &o.steps) < 0) goto done; break;
        case OPT_WARMUP: if (nmt_cli_long("bench", "--warmup", optarg, 0, 100000, &o.warmup) < 0) goto done; break;
        case OPT_DROPOUT: if (nmt_cli_double("bench", "--dropout", optarg, 0.0, 0.99, &o.dropout) < 0) goto done; break;
        case OPT_THREADS: if (nmt_cli_long("bench", "--threads", optarg, 1, 256, &threads) < 0) goto done; break;
        case OPT_JSON: o.json = 1; break;
        case 'q':
        case OPT_QUIET: o.quiet = 1; break;
        case OPT_SYNTHETIC: o.synthetic = 1; break;
        case OPT_SET:
            if (!strchr(optarg, '=')) {
                nmt_cli_usage_error("bench", "--set expects section.key=value, got '%s'", optarg);
                goto done;
            }
            overrides[num_overrides++] = optarg;
            break;
        case OPT_BEAM:
            if (nmt_cli_long("bench", "--beam-size", optarg, 1, 1000, &v) < 0) goto done;
            o.pipe.decode.beam_size = (int)v;
            o.pipe.decode.greedy = v == 1;
            break;
        case OPT_BATCH_SIZE:
            if (nmt_cli_long("bench", "--batch-size", optarg, 1, 1 << 16, &v) < 0) goto done;
            o.pipe.decode.batch_size = (int)v;
            break;
        case OPT_LENGTH_PENALTY:
            if (nmt_cli_double("bench", "--length-penalty", optarg, 0.0, 100.0, &o.pipe.decode.length_penalty) < 0) goto done;
            break;
        case OPT_PRECISION:
            if (nmt_cli_precision("bench", optarg, &o.pipe.decode.precision) < 0) goto done;
            o.pipe.precision_of_model = 0;
            precision_given = 1;
            break;
        case OPT_SHORTLIST: o.pipe.shortlist = 1; break;
        case OPT_CONSTRAINTS: o.constraints = 1; break;
        default: goto done;
        }
    }
    if (optind >= argc) {
        nmt_cli_usage_error("bench", "expected one of: gemm, train, translate, allreduce");
        goto done;
    }
    const char *what = argv[optind];
    int positional = argc - optind - 1; /* after the benchmark's name */
    if (o.constraints && strcmp(what, "translate") != 0) {
        nmt_cli_usage_error("bench", "--constraints applies to `bench translate` only");
        goto done;
    }
    if (precision_given && strcmp(what, "translate") != 0) {
        nmt_cli_usage_error("bench", "--precision is decoding's and applies to `bench translate` only%s",
                            strcmp(what, "train") == 0 ? "; training takes train.precision (--set train.precision=bf16)"
                                                       : "");
        goto done;
    }
    int is_train = strcmp(what, "train") == 0;
    if (strcmp(what, "gemm") != 0 && !is_train && strcmp(what, "translate") != 0 && strcmp(what, "allreduce") != 0) {
        nmt_cli_usage_error("bench", "unknown benchmark '%s' (expected gemm, train, translate or allreduce)", what);
        goto done;
    }
    if (is_train && o.synthetic == (positional == 1)) {
        nmt_cli_usage_error("bench", "train needs either CONFIG.yaml or --synthetic");
        goto done;
    }
    if (positional > (is_train && !o.synthetic)) {
        nmt_cli_usage_error("bench", "unexpected argument '%s'", argv[argc - 1]);
        goto done;
    }
    o.model.dropout = (float)o.dropout;
    if (nmt_pool_set_threads((int)threads) < 0) {
        status = nmt_cli_fail("bench");
        goto done;
    }
    o.threads = nmt_pool_threads();
    /* Products run on nmt's own kernels where they can; OpenBLAS's choice matters only otherwise. */
    const char *advice = nmt_gemm_own() ? NULL : nmt_gemm_blas_core_advice();
    if (advice && !o.quiet)
        fprintf(stderr,
                "nmt bench: OpenBLAS runs its %s kernels on this AVX-512 CPU; OPENBLAS_CORETYPE=%s in the "
                "environment makes sgemm faster\n",
                nmt_gemm_blas_core(), advice);
    if (strcmp(what, "gemm") == 0) status = bench_gemm(&o);
    else if (strcmp(what, "translate") == 0) status = bench_translate(&o);
    else if (strcmp(what, "allreduce") == 0) status = bench_allreduce(&o);
    else status = o.synthetic ? bench_train_synthetic(&o) : bench_train_config(&o, argv[optind + 1]);
done:
    free(overrides);
    return status;
}
