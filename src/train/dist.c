/* dist: pieces of a step per rank, the pre-rounded exact gradient sum (whole, or in buckets during the
 * backward), the sharded optimizer's gathers, the start-up agreement check. */
#include "train/dist.h"
#include "compute/pool.h"
#include "base/util.h"

#include "base/hash.h"
#include "base/io.h"
#include "base/random.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void nmt_dist_free(nmt_dist *d) {
    free(d->held);
    free(d->sum);
    free(d->exps);
    free(d->slots);
    free(d->buckets);
    free(d->block_bucket);
    free(d->bounds);
    nmt_dist_drop_moments(d);
    memset(d, 0, sizeof *d);
}

int nmt_dist_check_size(const nmt_comm *comm, int update_freq, int batch_pieces) {
    long pieces = (long)update_freq * batch_pieces;
    if (pieces > 1 << 20)
        return nmt_error_set("train.update_freq x train.batch_pieces = %ld pieces a step: at most %d", pieces, 1 << 20);
    if (comm->size > pieces)
        return nmt_error_set("%d ranks but a step has only %ld pieces (train.update_freq %d x train.batch_pieces %d): "
                             "raise either so that the step has at least %d pieces, or start fewer ranks",
                             comm->size, pieces, update_freq, batch_pieces, comm->size);
    return 0;
}

int nmt_dist_init(nmt_dist *d, nmt_comm *comm, int update_freq, int batch_pieces, size_t num_params) {
    memset(d, 0, sizeof *d);
    if (nmt_dist_check_size(comm, update_freq, batch_pieces) < 0) return -1;
    long pieces = (long)update_freq * batch_pieces;
    d->comm = comm;
    d->pieces = (int)pieces;
    d->batch_pieces = batch_pieces;
    d->first = (int)((long)comm->rank * pieces / comm->size);
    d->count = (int)((long)(comm->rank + 1) * pieces / comm->size) - d->first;
    d->n = num_params;
    d->num_blocks = (long)((num_params + NMT_DIST_BLOCK - 1) / NMT_DIST_BLOCK);
    while ((1L << d->log2_pieces) < pieces) d->log2_pieces++;
    d->slots = nmt_calloc((size_t)pieces * NMT_DIST_SLOTS, sizeof *d->slots);
    if (!d->slots) goto fail;
    if (pieces > 1) {
        d->sum = nmt_malloc(num_params * sizeof *d->sum);
        d->exps = nmt_malloc((size_t)d->num_blocks * sizeof *d->exps);
        if (d->count > 1) d->held = nmt_malloc((size_t)(d->count - 1) * num_params * sizeof *d->held);
        if (!d->sum || !d->exps || (d->count > 1 && !d->held)) goto fail;
    }
    return 0;
fail:
    nmt_dist_free(d);
    return -1;
}

int nmt_dist_setup(nmt_dist *d, nmt_comm *comm, int update_freq, int batch_pieces, const nmt_model *m, nmt_adam *adam,
                   int shard) {
    if (nmt_dist_init(d, comm, update_freq, batch_pieces, m->num_params) < 0) return -1;
    if (comm->size == 1) return 0;
    if (nmt_dist_plan_overlap(d, m) < 0 || (shard && nmt_dist_shard(d, adam) < 0)) {
        nmt_dist_free(d);
        return -1;
    }
    return 0;
}

uint64_t nmt_dist_piece_seed(uint64_t seed, long step, int piece) {
    return nmt_random_mix(seed ^ (uint64_t)step * NMT_RANDOM_GAMMA ^ (uint64_t)piece * 0xC2B2AE3D27D4EB4Full);
}

void nmt_dist_piece_rows(int rows, int batch_pieces, int j, int *lo, int *hi) {
    *lo = (int)((long)rows * j / batch_pieces);
    *hi = (int)((long)rows * (j + 1) / batch_pieces);
}

int nmt_dist_owns(const nmt_dist *d, int piece) { return piece >= d->first && piece < d->first + d->count; }

void nmt_dist_hold(nmt_dist *d, int local, float *grads, int piece, const double slots[NMT_DIST_SLOTS]) {
    memcpy(d->slots + (size_t)piece * NMT_DIST_SLOTS, slots, NMT_DIST_SLOTS * sizeof *slots);
    if (local >= d->count - 1) return; /* the last piece stays in grads */
    memcpy(d->held + (size_t)local * d->n, grads, d->n * sizeof *grads);
    memset(grads, 0, d->n * sizeof *grads);
}

/* ---- pre-rounding over blocks [begin, end) ---- */

static void exponents_range(const float *g, size_t n, int32_t *exps, long begin, long end) {
    for (long b = begin; b < end; b++) {
        size_t lo = (size_t)b * NMT_DIST_BLOCK, hi = lo + NMT_DIST_BLOCK < n ? lo + NMT_DIST_BLOCK : n;
        float m = 0.0f;
        int finite = 1;
        for (size_t i = lo; i < hi; i++) {
            float a = fabsf(g[i]);
            finite &= isfinite(a);
            m = a > m ? a : m;
        }
        int e = INT32_MIN;
        if (!finite) e = NMT_DIST_NONFINITE;
        else if (m > 0.0f) frexpf(m, &e); /* m = f 2^e, 0.5 <= f < 1: m < 2^e */
        if (e > exps[b]) exps[b] = e;
    }
}

/* 2^(62 - headroom - E): scales a value of the block to its integer multiple of the unit. */
static double block_scale(int32_t e, int headroom) { return ldexp(1.0, 62 - headroom - e); }

static void accumulate_range(const float *g, size_t n, const int32_t *exps, int headroom, int64_t *sum, long begin,
                             long end) {
    for (long b = begin; b < end; b++) {
        size_t lo = (size_t)b * NMT_DIST_BLOCK, hi = lo + NMT_DIST_BLOCK < n ? lo + NMT_DIST_BLOCK : n;
        if (exps[b] == INT32_MIN) continue; /* every piece is zero here */
        double scale = block_scale(exps[b], headroom);
        for (size_t i = lo; i < hi; i++) sum[i] += llrint((double)g[i] * scale);
    }
}

static void unpack_range(const int64_t *sum, size_t n, const int32_t *exps, int headroom, float *out, long begin,
                         long end) {
    for (long b = begin; b < end; b++) {
        size_t lo = (size_t)b * NMT_DIST_BLOCK, hi = lo + NMT_DIST_BLOCK < n ? lo + NMT_DIST_BLOCK : n;
        double unit = exps[b] == INT32_MIN ? 0.0 : 1.0 / block_scale(exps[b], headroom);
        for (size_t i = lo; i < hi; i++) out[i] = (float)((double)sum[i] * unit);
    }
}

static long blocks_of(size_t n) { return (long)((n + NMT_DIST_BLOCK - 1) / NMT_DIST_BLOCK); }

void nmt_dist_exponents(const float *g, size_t n, int32_t *exps) { exponents_range(g, n, exps, 0, blocks_of(n)); }

void nmt_dist_accumulate(const float *g, size_t n, const int32_t *exps, int headroom_bits, int64_t *sum) {
    accumulate_range(g, n, exps, headroom_bits, sum, 0, blocks_of(n));
}

void nmt_dist_unpack(const int64_t *sum, size_t n, const int32_t *exps, int headroom_bits, float *out) {
    unpack_range(sum, n, exps, headroom_bits, out, 0, blocks_of(n));
}

/* The same on the kernels' threads: every block is one rank's work, so the split does not matter. */
typedef struct pass {
    nmt_dist *d;
    float *grads;
    int phase;   /* 0: exponents, 1: accumulate, 2: unpack */
    long first;  /* the block the pool's range 0 stands for */
} pass;

static void pass_range(void *ctx, long begin, long end) {
    const pass *p = ctx;
    nmt_dist *d = p->d;
    begin += p->first;
    end += p->first;
    if (p->phase == 0) {
        for (long b = begin; b < end; b++) d->exps[b] = INT32_MIN;
        for (int k = 0; k + 1 < d->count; k++) exponents_range(d->held + (size_t)k * d->n, d->n, d->exps, begin, end);
        exponents_range(p->grads, d->n, d->exps, begin, end);
    } else if (p->phase == 1) {
        size_t lo = (size_t)begin * NMT_DIST_BLOCK, hi = (size_t)end * NMT_DIST_BLOCK < d->n ? (size_t)end * NMT_DIST_BLOCK : d->n;
        memset(d->sum + lo, 0, (hi - lo) * sizeof *d->sum);
        for (int k = 0; k + 1 < d->count; k++)
            accumulate_range(d->held + (size_t)k * d->n, d->n, d->exps, d->log2_pieces, d->sum, begin, end);
        accumulate_range(p->grads, d->n, d->exps, d->log2_pieces, d->sum, begin, end);
    } else {
        unpack_range(d->sum, d->n, d->exps, d->log2_pieces, p->grads, begin, end);
    }
}

/* ---- overlap: buckets started during the backward of the last piece ---- */

/* Counts the ranges (a bucket per range at most), or cuts them into buckets of whole blocks. */
typedef struct planner {
    nmt_dist *d;
    size_t *left;  /* [num_blocks] parameters of each block not yet reported; NULL: only counting */
    int ranges;
    int overlap;   /* a parameter was reported twice */
} planner;

static size_t block_size(const nmt_dist *d, long b) {
    size_t lo = (size_t)b * NMT_DIST_BLOCK;
    return d->n - lo < NMT_DIST_BLOCK ? d->n - lo : NMT_DIST_BLOCK;
}

/* The parameters of [lo, hi) in block b. */
static size_t block_overlap(long b, size_t lo, size_t hi) {
    size_t a = (size_t)b * NMT_DIST_BLOCK, z = a + NMT_DIST_BLOCK;
    a = a > lo ? a : lo;
    z = z < hi ? z : hi;
    return z > a ? z - a : 0;
}

static void plan_range(void *ctx, size_t lo, size_t hi) {
    planner *pl = ctx;
    nmt_dist *d = pl->d;
    pl->ranges++;
    if (!pl->left || hi <= lo) return;
    if (hi > d->n) {
        pl->overlap = 1;
        return;
    }
    /* The blocks this range makes whole: one run (inner blocks, and the end blocks it completes). */
    int open = -1; /* this range's bucket */
    for (long b = (long)(lo / NMT_DIST_BLOCK); b <= (long)((hi - 1) / NMT_DIST_BLOCK); b++) {
        size_t k = block_overlap(b, lo, hi);
        if (k > pl->left[b]) pl->overlap = 1;
        pl->left[b] -= k <= pl->left[b] ? k : pl->left[b];
        if (pl->left[b] || k == 0) continue;
        if (open < 0 || d->buckets[open].end != b) {
            open = d->num_buckets++;
            d->buckets[open] = (nmt_dist_bucket){.begin = b, .end = b};
        }
        d->buckets[open].end = b + 1;
        d->buckets[open].size += block_size(d, b);
        d->block_bucket[b] = open;
    }
}

static void bucket_ready(void *ctx, size_t lo, size_t hi);

int nmt_dist_plan_overlap(nmt_dist *d, const nmt_model *m) {
    if (d->pieces == 1) return 0;
    if (m->num_params != d->n)
        return nmt_error_set("dist: a model of %zu parameters for a reduce of %zu", m->num_params, d->n);
    planner pl = {.d = d};
    nmt_model_grad_order(m, &(nmt_grad_hook){plan_range, &pl});
    d->buckets = nmt_calloc((size_t)pl.ranges + 1, sizeof *d->buckets);
    d->block_bucket = nmt_malloc((size_t)d->num_blocks * sizeof *d->block_bucket);
    pl.left = nmt_malloc((size_t)d->num_blocks * sizeof *pl.left);
    int rc = -1;
    if (!d->buckets || !d->block_bucket || !pl.left) goto done;
    for (long b = 0; b < d->num_blocks; b++) pl.left[b] = block_size(d, b);
    pl.ranges = 0;
    nmt_model_grad_order(m, &(nmt_grad_hook){plan_range, &pl});
    long whole = 0;
    for (int k = 0; k < d->num_buckets; k++) whole += d->buckets[k].end - d->buckets[k].begin;
    if (pl.overlap || whole != d->num_blocks) {
        nmt_error_set("dist: the model's gradient ranges %s", pl.overlap ? "overlap" : "leave parameters out");
        goto done;
    }
    for (int k = 0; k < d->num_buckets; k++) d->buckets[k].left = d->buckets[k].size;
    d->model = m;
    d->hook = (nmt_grad_hook){bucket_ready, d};
    rc = 0;
done:
    free(pl.left);
    if (rc < 0) {
        free(d->buckets);
        free(d->block_bucket);
        d->buckets = NULL;
        d->block_bucket = NULL;
        d->num_buckets = 0;
    }
    return rc;
}

const nmt_grad_hook *nmt_dist_hook(nmt_dist *d, int local) {
    return d->num_buckets && local == d->count - 1 ? &d->hook : NULL;
}

/* One of phases 0..2 of pass_range over blocks [begin, end), on the kernels' threads. */
static void run_pass(nmt_dist *d, float *grads, int phase, long begin, long end) {
    pass ps = {d, grads, phase, begin};
    nmt_pool_work(end - begin, NMT_DIST_BLOCK, pass_range, &ps);
}

/* Starts the exponent maxes of the buckets whose blocks are all final (all of them when `all`); then,
 * in order, pre-rounds and starts the sums of those whose maxes are in, and unpacks those whose sums
 * are in (waiting for each when `all`). */
static int progress(nmt_dist *d, int all) {
    nmt_comm *c = d->comm;
    while (d->started < d->num_buckets && (all || d->buckets[d->started].left == 0)) {
        nmt_dist_bucket *k = &d->buckets[d->started++];
        run_pass(d, d->model->grads, 0, k->begin, k->end);
        if (nmt_comm_start(c, NMT_COMM_MAX_I32, d->exps + k->begin, (size_t)(k->end - k->begin), &k->max) < 0)
            return -1;
    }
    int done = 1;
    while (done && d->summing < d->started) {
        nmt_dist_bucket *k = &d->buckets[d->summing];
        if ((all ? nmt_comm_wait(c, &k->max) : nmt_comm_test(c, &k->max, &done)) < 0) return -1;
        if (!done) break;
        d->summing++;
        k->finite = 1;
        for (long b = k->begin; b < k->end && k->finite; b++) k->finite = d->exps[b] != NMT_DIST_NONFINITE;
        d->nonfinite |= !k->finite; /* every rank sees the same maxes, so every rank skips this sum */
        if (!k->finite) continue;
        run_pass(d, d->model->grads, 1, k->begin, k->end);
        size_t lo = (size_t)k->begin * NMT_DIST_BLOCK;
        if (nmt_comm_start(c, NMT_COMM_SUM_I64, d->sum + lo, k->size, &k->sum) < 0) return -1;
    }
    done = 1;
    while (done && d->unpacked < d->summing) {
        nmt_dist_bucket *k = &d->buckets[d->unpacked];
        if ((all ? nmt_comm_wait(c, &k->sum) : nmt_comm_test(c, &k->sum, &done)) < 0) return -1;
        if (!done) break;
        if (k->finite) run_pass(d, d->model->grads, 2, k->begin, k->end);
        d->unpacked++;
    }
    return 0;
}

/* The model's hook: [lo, hi) is final. */
static void bucket_ready(void *ctx, size_t lo, size_t hi) {
    nmt_dist *d = ctx;
    if (d->failed || hi <= lo || hi > d->n) return;
    for (long b = (long)(lo / NMT_DIST_BLOCK); b <= (long)((hi - 1) / NMT_DIST_BLOCK); b++) {
        nmt_dist_bucket *k = &d->buckets[d->block_bucket[b]];
        size_t n = block_overlap(b, lo, hi);
        k->left -= n <= k->left ? n : k->left;
    }
    if (progress(d, 0) < 0) d->failed = 1;
}

/* nmt_dist_reduce's gradient part with buckets; leaves them ready for the next step. */
static int reduce_buckets(nmt_dist *d, float *grads, int *finite) {
    if (grads != d->model->grads) return nmt_error_set("dist: the reduce's gradients are not the planned model's");
    if (d->failed || progress(d, 1) < 0) return -1;
    *finite = !d->nonfinite;
    for (int k = 0; k < d->num_buckets; k++) d->buckets[k].left = d->buckets[k].size;
    d->started = d->summing = d->unpacked = d->nonfinite = 0;
    return 0;
}

int nmt_dist_reduce(nmt_dist *d, float *grads, double totals[NMT_DIST_SLOTS], int *finite) {
    double start = nmt_now();
    *finite = 1;
    /* Slots: every piece's are filled on one rank and zero on the others. */
    for (int p = 0; p < d->pieces; p++)
        if (!nmt_dist_owns(d, p)) memset(d->slots + (size_t)p * NMT_DIST_SLOTS, 0, NMT_DIST_SLOTS * sizeof *d->slots);
    double waited = d->comm->wait_s;
    if (nmt_comm_sum_f64(d->comm, d->slots, (size_t)d->pieces * NMT_DIST_SLOTS) < 0) return -1;
    d->skew_s = d->comm->wait_s - waited;
    for (int s = 0; s < NMT_DIST_SLOTS; s++) totals[s] = 0.0;
    for (int p = 0; p < d->pieces; p++)
        for (int s = 0; s < NMT_DIST_SLOTS; s++) totals[s] += d->slots[(size_t)p * NMT_DIST_SLOTS + s];
    if (d->num_buckets) {
        if (reduce_buckets(d, grads, finite) < 0) return -1;
    } else if (d->pieces > 1) {
        run_pass(d, grads, 0, 0, d->num_blocks);
        if (nmt_comm_max_i32(d->comm, d->exps, (size_t)d->num_blocks) < 0) return -1;
        for (long b = 0; b < d->num_blocks && *finite; b++) *finite = d->exps[b] != NMT_DIST_NONFINITE;
        if (*finite) {
            run_pass(d, grads, 1, 0, d->num_blocks);
            if (nmt_comm_sum_i64(d->comm, d->sum, d->n) < 0) return -1;
            run_pass(d, grads, 2, 0, d->num_blocks);
        }
    }
    d->reduce_s = nmt_now() - start;
    return 0;
}

/* ---- sharded optimizer ---- */

int nmt_dist_shard(nmt_dist *d, nmt_adam *adam) {
    int N = d->comm->size;
    d->bounds = nmt_malloc(((size_t)N + 1) * sizeof *d->bounds);
    if (!d->bounds) return -1;
    for (int r = 0; r <= N; r++) d->bounds[r] = r == N ? d->n : (size_t)((double)d->n * r / N) / 16 * 16;
    int rc = nmt_adam_keep_slice(adam, d->bounds[d->comm->rank], d->bounds[d->comm->rank + 1]);
    if (rc < 0) {
        free(d->bounds);
        d->bounds = NULL;
    }
    return rc;
}

int nmt_dist_gather_params(nmt_dist *d, float *params) {
    return d->bounds ? nmt_comm_allgather_f32(d->comm, params, d->bounds) : 0;
}

void nmt_dist_drop_moments(nmt_dist *d) {
    free(d->full_m);
    free(d->full_v);
    d->full_m = d->full_v = NULL;
}

int nmt_dist_gather_moments(nmt_dist *d, const nmt_adam *adam) {
    if (!d->bounds) return 0;
    nmt_dist_drop_moments(d);
    if (d->comm->rank == 0 &&
        (!(d->full_m = nmt_malloc(d->n * sizeof *d->full_m)) || !(d->full_v = nmt_malloc(d->n * sizeof *d->full_v))))
        return nmt_error_prefix("gathering the optimizer's moments for a checkpoint");
    if (nmt_comm_gather_f32(d->comm, adam->m, d->full_m, d->bounds, 0) < 0 ||
        nmt_comm_gather_f32(d->comm, adam->v, d->full_v, d->bounds, 0) < 0)
        return -1;
    return 0;
}

int nmt_dist_whole_adam(const nmt_dist *d, const nmt_adam *adam, nmt_adam *whole) {
    *whole = *adam;
    if (!d->bounds) return 0;
    if (!d->full_m) return nmt_error_set("the sharded optimizer's moments were not gathered for this checkpoint");
    whole->m = d->full_m;
    whole->v = d->full_v;
    whole->lo = 0;
    whole->hi = whole->n;
    return 0;
}

/* ---- start-up agreement ---- */

typedef struct rank_hash {
    uint64_t hash;
    char host[64];
} rank_hash;

int nmt_dist_check_same(nmt_comm *comm, const char *what, uint64_t hash) {
    if (comm->size == 1) return 0;
    rank_hash mine = {.hash = hash};
    memcpy(mine.host, comm->host, sizeof mine.host);
    rank_hash *all = nmt_calloc((size_t)comm->size, sizeof *all);
    if (!all) return -1;
    int rc = nmt_comm_allgather(comm, &mine, sizeof mine, all);
    for (int r = 1; rc == 0 && r < comm->size; r++)
        if (all[r].hash != all[0].hash)
            rc = nmt_error_set("%s differs between ranks: rank %d on host %.64s has %016llx, rank 0 on host %.64s "
                               "has %016llx (every rank must read the same config, vocabulary and data)",
                               what, r, all[r].host, (unsigned long long)all[r].hash, all[0].host,
                               (unsigned long long)all[0].hash);
    free(all);
    return rc;
}

/* FNV-1a, for comparing what the ranks read. */
static uint64_t hash_bytes(uint64_t h, const void *data, size_t size) {
    const unsigned char *p = data;
    for (size_t i = 0; i < size; i++) h = (h ^ p[i]) * 0x100000001B3ull;
    return h;
}

int nmt_dist_check_inputs(nmt_comm *comm, const nmt_config *cfg, uint64_t vocab_hash, const nmt_corpus *train) {
    if (comm->size == 1) return 0;
    /* The settings without paths (a bench's output is its own temporary; each node may mount the data
     * elsewhere): the data and vocabulary are compared by content. */
    nmt_config shown = *cfg; /* shallow */
    shown.output = shown.vocab_model = shown.data_root = NULL;
    shown.num_train = 0;
    shown.valid = (nmt_corpus_paths){NULL, NULL, 0};
    char *text = nmt_config_format(&shown);
    if (!text) return -1;
    uint64_t config_hash = hash_bytes(0xCBF29CE484222325ull, text, strlen(text));
    free(text);
    if (cfg->vocab_model && nmt_hash_file(cfg->vocab_model, &vocab_hash) < 0) return -1;
    uint64_t data_hash = hash_bytes(0xCBF29CE484222325ull, train->ids, train->num_ids * sizeof *train->ids);
    data_hash = hash_bytes(data_hash, train->src_len, (size_t)train->num_pairs * sizeof *train->src_len);
    data_hash = hash_bytes(data_hash, train->tgt_len, (size_t)train->num_pairs * sizeof *train->tgt_len);
    if (nmt_dist_check_same(comm, "the resolved config", config_hash) < 0 ||
        nmt_dist_check_same(comm, "the vocabulary", vocab_hash) < 0 ||
        nmt_dist_check_same(comm, "the encoded training corpus", data_hash) < 0)
        return -1;
    return 0;
}

int nmt_dist_share_file(nmt_comm *comm, const char *path, char **copy) {
    *copy = NULL;
    char *data = NULL;
    size_t size = 0;
    if (comm->rank == 0 && nmt_read_file(path, &data, &size) < 0) return -1;
    int64_t bytes = (int64_t)size;
    if (nmt_comm_bcast(comm, &bytes, sizeof bytes, 0) < 0) goto fail;
    if (comm->rank > 0 && !(data = nmt_malloc((size_t)bytes + 1))) goto fail;
    if (nmt_comm_bcast(comm, data, (size_t)bytes, 0) < 0) goto fail;
    if (comm->rank > 0) {
        const char *tmp = getenv("TMPDIR");
        char *name = nmt_path_join(tmp && *tmp ? tmp : "/tmp", "nmt-shared-XXXXXX");
        int fd = name ? mkstemp(name) : -1;
        if (fd < 0) {
            if (name) nmt_error_set("%s: cannot create: %s", name, strerror(errno));
            free(name);
            goto fail;
        }
        close(fd);
        if (nmt_atomic_write(name, data, (size_t)bytes) < 0) {
            unlink(name);
            free(name);
            goto fail;
        }
        *copy = name;
    }
    free(data);
    return 0;
fail:
    free(data);
    return -1;
}

int nmt_dist_share_model(nmt_comm *comm, nmt_model *m, nmt_adam *adam) {
    if (comm->size == 1) return 0;
    size_t bytes = m->num_params * sizeof(float);
    int64_t step = adam->step;
    if (nmt_comm_bcast(comm, m->params, bytes, 0) < 0 || nmt_comm_bcast(comm, adam->m, bytes, 0) < 0 ||
        nmt_comm_bcast(comm, adam->v, bytes, 0) < 0 || nmt_comm_bcast(comm, &step, sizeof step, 0) < 0)
        return -1;
    adam->step = (long)step;
    return 0;
}

int nmt_dist_agree_stop(nmt_comm *comm, int signalled, const char **reason) {
    static const char *const reasons[] = {NULL, "signal", "max_steps", "max_epochs", "max_minutes", "patience"};
    if (comm->size == 1) return 0;
    int32_t v[2] = {0, signalled};
    for (int i = 1; comm->rank == 0 && *reason && i < (int)(sizeof reasons / sizeof *reasons); i++)
        if (strcmp(*reason, reasons[i]) == 0) v[0] = i;
    if (nmt_comm_max_i32_idle(comm, v, 2) < 0) return -1;
    *reason = v[1] ? "signal" : reasons[v[0]];
    return 0;
}

void nmt_dist_count(const nmt_model_config *config, const nmt_batch *piece, double slots[NMT_DIST_SLOTS]) {
    long src_tokens = 0;
    for (long i = 0; i < (long)piece->batch * piece->src_len; i++) src_tokens += piece->src[i] != NMT_PAD;
    slots[NMT_DIST_SRC_TOKENS] = (double)src_tokens;
    slots[NMT_DIST_SENTENCES] = piece->batch;
    slots[NMT_DIST_FLOPS] = nmt_model_flops(config, piece);
}
