/* dist: one optimizer step shared out over the ranks of a run, with a result that is bit-for-bit the
 * same for any number of ranks.
 *
 * Pieces. Each of a step's update_freq batches is split into batch_pieces sub-batches of consecutive
 * sentences (nmt_dist_piece_rows), so a step has P = update_freq * batch_pieces pieces, numbered in
 * batch order. Rank r of N computes pieces [r P / N, (r + 1) P / N), each from zeroed gradients with
 * dropout seeded by its number, so a piece's gradient is the same whichever rank computes it (the
 * kernels give the same bits for any thread count). N may not exceed P.
 *
 * The exact sum (pre-rounding, the method of Demmel and Nguyen's reproducible summation): the
 * gradient is cut into blocks of NMT_DIST_BLOCK parameters; for each block E is the smallest e with
 * |g| < 2^e over every piece (a max all-reduce: exact); every piece's value is rounded to the nearest
 * multiple of u = 2^(E + ceil(log2 P) - 62) as an int64; the int64s are added (on the rank, then by an
 * all-reduce: integer sums are exact in any order and cannot overflow, as P pieces of |q| <= 2^(62 -
 * ceil(log2 P)) stay below 2^62) and the sum is converted back to float. So the result depends only on
 * the pieces, never on N, the order of ranks or MPI's algorithm; its error, at most P u / 2, lies far
 * below float rounding of the block's largest value (2^(E - 24)). With one piece (P = 1) its gradient
 * is used as it is. Each piece's loss and counts are gathered into slots that only its rank fills and
 * added in piece order.
 *
 * Overlap (nmt_dist_plan_overlap, on more than one rank). The gradient's blocks are grouped into
 * buckets: the runs of blocks that become whole, in the order the model's backward finishes parameter
 * ranges (nmt_model_grad_order: a sublayer, a final LayerNorm, an embedding). During the backward of
 * a rank's last piece of the step, as soon as every block of the next bucket is final (the model's
 * hook, nmt_dist_hook), its block exponents are taken over the rank's pieces and their max all-reduce
 * started; once that max is in, the bucket is pre-rounded and its int64 sum all-reduce started, while
 * the backward goes on below; once the sum is in, it is unpacked into grads. Each hook call tests the
 * started requests, which is when Open MPI moves them on. nmt_dist_reduce does the rest, waiting. The blocks, exponents
 * and integer sums are the same as without buckets, so the result is the same bits; buckets start in
 * their fixed order on every rank (a rank whose last piece is empty starts them all in
 * nmt_dist_reduce), the maxes and the sums each in order on their own channel.
 *
 * Sharded optimizer (ZeRO stage 1, nmt_dist_shard): rank r keeps the Adam moments of parameters
 * [bounds[r], bounds[r + 1]) (N near-equal slices, multiples of 16), updates those parameters from the
 * full summed gradient, and an all-gather brings every rank's updated slice to every rank
 * (nmt_dist_gather_params). A checkpoint gathers the full moments onto rank 0 (nmt_dist_gather_moments),
 * so it holds the same tensors as an unsharded run's and resumes on any N, sharded or not.
 *
 * Memory on a rank of c pieces: (c - 1) float copies and one int64 sum of the gradient (when P > 1).
 */
#ifndef NMT_DIST_H
#define NMT_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "base/comm.h"
#include "model/model.h"
#include "train/config.h"
#include "train/corpus.h"
#include "train/optim.h"

enum {
    NMT_DIST_BLOCK = 256,   /* parameters sharing one rounding unit */
    NMT_DIST_NONFINITE = INT32_MAX, /* a block exponent: the block holds inf or nan */
};

/* What a piece adds to the step's totals (slots of nmt_dist_record / nmt_dist_reduce). */
enum { NMT_DIST_LOSS, NMT_DIST_NLL, NMT_DIST_TOKENS, NMT_DIST_SRC_TOKENS, NMT_DIST_SENTENCES, NMT_DIST_FLOPS,
       NMT_DIST_SLOTS };

/* A bucket of the overlapped reduce: whole blocks, started together. */
typedef struct nmt_dist_bucket {
    long begin, end;           /* blocks [begin, end) */
    size_t size;               /* parameters in them */
    size_t left;               /* of those, parameters the backward of this step's last piece has not finished */
    int finite;                /* this step's exponents are finite (else its sum is skipped) */
    nmt_comm_request max, sum; /* the exponent max all-reduce, then the fixed-point sum */
} nmt_dist_bucket;

typedef struct nmt_dist {
    nmt_comm *comm;
    int pieces;          /* P: pieces of a step */
    int batch_pieces;    /* pieces of a batch */
    int first, count;    /* this rank's pieces: [first, first + count) */
    size_t n;            /* parameters */
    long num_blocks;     /* ceil(n / NMT_DIST_BLOCK) */
    int log2_pieces;     /* ceil(log2 P) */
    float *held;         /* [(count - 1) * n] gradients of this rank's pieces but the last */
    int64_t *sum;        /* [n] the fixed-point sum (P > 1) */
    int32_t *exps;       /* [num_blocks] block exponents E */
    double *slots;       /* [P * NMT_DIST_SLOTS] each piece's loss and counts */
    double reduce_s;     /* seconds of the last nmt_dist_reduce, communication included */
    double skew_s;       /* of which waiting for the slowest rank to end its backward (its first all-reduce) */
    /* Overlap (nmt_dist_plan_overlap); num_buckets 0: the whole gradient is reduced in nmt_dist_reduce. */
    nmt_dist_bucket *buckets; /* [num_buckets] in backward order */
    int num_buckets;
    int *block_bucket;   /* [num_blocks] the bucket of each block */
    int started;         /* buckets whose exponent max is started this step */
    int summing;         /* buckets whose sum is started (or skipped: nonfinite) */
    int unpacked;        /* buckets whose sum is back in grads */
    int nonfinite;       /* a bucket's exponents hold inf or nan this step */
    int failed;          /* a hook call failed (its error stays set for nmt_dist_reduce) */
    const nmt_model *model; /* the planned model, whose gradients the hook reads */
    size_t *bounds;      /* [size + 1] the ranks' optimizer slices when sharded, else NULL */
    float *full_m, *full_v; /* [n] rank 0's gathered moments of the sharded optimizer, or NULL */
    nmt_grad_hook hook;  /* ctx: this */
} nmt_dist;

/* Refuses more ranks than a step has pieces (the error says which keys to raise). */
int nmt_dist_check_size(const nmt_comm *comm, int update_freq, int batch_pieces);
int nmt_dist_init(nmt_dist *d, nmt_comm *comm, int update_freq, int batch_pieces, size_t num_params);
void nmt_dist_free(nmt_dist *d);

/* nmt_dist_init for model m, then on several ranks its buckets (nmt_dist_plan_overlap) and, when
 * `shard`, this rank's slice of adam (nmt_dist_shard). */
int nmt_dist_setup(nmt_dist *d, nmt_comm *comm, int update_freq, int batch_pieces, const nmt_model *m, nmt_adam *adam,
                   int shard);
/* Dropout masks of piece p of step s: a pure function of (seed, s, p), so a resumed run, and a run on
 * any number of ranks, draws the same masks as an uninterrupted one. */
uint64_t nmt_dist_piece_seed(uint64_t seed, long step, int piece);
/* Groups the gradient of model m into buckets for the overlapped reduce (nothing when P = 1). */
int nmt_dist_plan_overlap(nmt_dist *d, const nmt_model *m);
/* The hook for the backward of this rank's local-th piece: the buckets' for the last piece of a step
 * when planned, else NULL (a plain backward). */
const nmt_grad_hook *nmt_dist_hook(nmt_dist *d, int local);

/* Shards the optimizer: keeps this rank's slice of adam's moments (adam is whole before). */
int nmt_dist_shard(nmt_dist *d, nmt_adam *adam);
/* After the sharded update: every rank's slice of params[n] on every rank (nothing when not sharded). */
int nmt_dist_gather_params(nmt_dist *d, float *params);
/* The full moments of a sharded adam onto rank 0, for a checkpoint (every rank calls it; nothing when
 * not sharded). */
int nmt_dist_gather_moments(nmt_dist *d, const nmt_adam *adam);
/* On rank 0: *whole, adam as one whole optimizer (shallow; with the gathered moments when sharded). */
int nmt_dist_whole_adam(const nmt_dist *d, const nmt_adam *adam, nmt_adam *whole);
/* Frees the gathered moments. */
void nmt_dist_drop_moments(nmt_dist *d);

/* Rows [*lo, *hi) of a batch of `rows` sentences form its piece j (0 <= j < batch_pieces); may be empty. */
void nmt_dist_piece_rows(int rows, int batch_pieces, int j, int *lo, int *hi);
/* 1 when piece p of a step is this rank's. */
int nmt_dist_owns(const nmt_dist *d, int piece);
/* After the backward of this rank's local-th piece (0-based, in order): keeps grads aside (all but the
 * last piece) and zeroes them for the next; records the piece's slots. */
void nmt_dist_hold(nmt_dist *d, int local, float *grads, int piece, const double slots[NMT_DIST_SLOTS]);
/* The step's exact gradient sum into grads (with buckets, the planned model's), and the totals of the
 * slots. *finite = 0 when a gradient holds inf or nan (grads are then left as they are, or partly
 * summed with buckets). Every rank must call it once per step. */
int nmt_dist_reduce(nmt_dist *d, float *grads, double totals[NMT_DIST_SLOTS], int *finite);

/* The pre-rounding steps (nmt_dist_reduce runs them on the kernels' threads), for tests: merges the
 * block exponents of g[n] into exps (start from INT32_MIN); adds g rounded to the units 2^(E + headroom
 * - 62) into sum (headroom = ceil(log2 P)); converts sum back to floats. */
void nmt_dist_exponents(const float *g, size_t n, int32_t *exps);
void nmt_dist_accumulate(const float *g, size_t n, const int32_t *exps, int headroom_bits, int64_t *sum);
void nmt_dist_unpack(const int64_t *sum, size_t n, const int32_t *exps, int headroom_bits, float *out);

/* Refuses, naming the rank and host, when any rank's hash differs from rank 0's; `what` names the
 * hashed thing ("the config", "the training corpus"). */
int nmt_dist_check_same(nmt_comm *comm, const char *what, uint64_t hash);

/* Refuses a run whose ranks read different settings (the config without its paths), vocabularies
 * (vocab_hash, or the hash of cfg->vocab_model when given) or training data (the encoded corpus). */
int nmt_dist_check_inputs(nmt_comm *comm, const nmt_config *cfg, uint64_t vocab_hash, const nmt_corpus *train);
/* Rank 0's file `path` on every rank: the others get a private temporary copy (*copy, to unlink and
 * free), so that a directory need not be shared between nodes. */
int nmt_dist_share_file(nmt_comm *comm, const char *path, char **copy);
/* The stop reason of nmt_train ("signal", "max_steps", "max_epochs", "max_minutes", "patience" or
 * NULL) that every rank agrees on: rank 0's *reason (it alone knows the time and the validations), or
 * "signal" when any rank was signalled. *reason is in and out; waits politely. */
int nmt_dist_agree_stop(nmt_comm *comm, int signalled, const char **reason);
/* A piece's non-pad source tokens, sentences and FLOPs into its slots. */
void nmt_dist_count(const nmt_model_config *config, const nmt_batch *piece, double slots[NMT_DIST_SLOTS]);
/* Rank 0's parameters and Adam moments (and step count) on every rank. */
int nmt_dist_share_model(nmt_comm *comm, nmt_model *m, nmt_adam *adam);

#endif
