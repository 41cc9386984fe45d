/* ter: sacreBLEU's TER: tercom's greedy shifts over a beam-limited edit distance.
 *
 * Shapes: the hypothesis has H words, the reference R. The edit-distance matrix has rows
 * i = 0..H (hypothesis prefixes) and columns j = 0..R; row i is only computed within its beam
 * [lo[i], hi[i]), everything outside is "infinite" (1e16, as in sacreBLEU, including its arithmetic
 * INF + 1), so rows are stored as bands of at most 2 * beam cells (the first and last rows whole).
 * The matrix of the current hypothesis is kept whole for its trace; a shift candidate shares the
 * rows of the words before the first moved position, and only the rest is computed, in two rolling
 * rows, for its cost.
 */
#include "eval/ter.h"

#include "eval/ngram.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_SHIFT_SIZE = 10,
    MAX_SHIFT_DIST = 50,
    BEAM_WIDTH = 25,
    MAX_SHIFT_CANDIDATES = 1000,
};
static const int64_t INF = 10000000000000000; /* sacreBLEU's int(1e16) */

/* Edit operations, named as in sacreBLEU's trace of rewriting the hypothesis into the reference. */
enum { OP_NOP = ' ', OP_SUB = 's', OP_INS = 'i', OP_DEL = 'd', OP_UNDEF = 'x' };

nmt_ter_options nmt_ter_options_default(void) {
    nmt_ter_options o;
    memset(&o, 0, sizeof o);
    return o;
}

double nmt_ter_compute(const double *stats, nmt_pynum_arith arith) {
    double edits = stats[0], length = stats[1], score;
    if (length > 0) score = arith == NMT_PYNUM_FLOAT32 ? (double)((float)edits / (float)length) : edits / length;
    else if (edits > 0) score = 1.0; /* empty references, non-empty hypothesis */
    else score = 0.0;
    return 100 * score;
}

int nmt_ter_signature_fields(const nmt_ter_options *options, nmt_signature_field *fields) {
    fields[0] = (nmt_signature_field){"case", "c", ""};
    fields[1] = (nmt_signature_field){"tok", "t", "tercom"};
    fields[2] = (nmt_signature_field){"norm", "nr", ""};
    fields[3] = (nmt_signature_field){"punct", "pn", ""};
    fields[4] = (nmt_signature_field){"asian", "as", ""};
    snprintf(fields[0].value, sizeof fields[0].value, "%s", options->case_sensitive ? "mixed" : "lc");
    snprintf(fields[2].value, sizeof fields[2].value, "%s", options->normalized ? "yes" : "no");
    snprintf(fields[3].value, sizeof fields[3].value, "%s", options->no_punct ? "no" : "yes");
    snprintf(fields[4].value, sizeof fields[4].value, "%s", options->asian_support ? "yes" : "no");
    return 5;
}

struct nmt_ter {
    nmt_ter_options options;
    nmt_tokenize_scratch scratch;
    nmt_strbuf first_pass; /* a reference after its first tokenization */
    nmt_tokenize_spans spans;
    nmt_ngram_vocab vocab;
    uint32_t *hyp_ids, *ref_ids;
    size_t hyp_cap, ref_cap;

    /* Everything below lives in `arena`, laid out again for each hypothesis/reference pair. */
    nmt_arena arena;
    size_t H, R;     /* words in the hypothesis and the reference */
    double ratio;    /* R / H, the slope of the beam's diagonal */
    long beam;
    long *lo, *hi;   /* [H + 1] band of each row */
    size_t *offset;  /* [H + 1] start of each row in cost/op */
    int64_t *cost;   /* the banded matrix of the current hypothesis */
    char *op;
    int64_t *roll_cost; /* [2 * (R + 1)] two rolling rows for candidates */
    char *roll_op;
    uint32_t *words, *candidate, *best; /* [H] current hypothesis, a shifted one, the best shift */
    char *trace;                        /* [H + R] */
    long *align;                        /* [R] */
    unsigned char *hyp_err, *ref_err;   /* [H], [R] */
};

nmt_ter *nmt_ter_create(const nmt_ter_options *options) {
    nmt_ter *ter = nmt_calloc(1, sizeof *ter);
    if (!ter) return NULL;
    ter->options = *options;
    nmt_arena_init(&ter->arena, (size_t)1 << 18);
    return ter;
}

void nmt_ter_free(nmt_ter *ter) {
    if (!ter) return;
    nmt_tokenize_scratch_free(&ter->scratch);
    nmt_strbuf_free(&ter->first_pass);
    nmt_tokenize_spans_free(&ter->spans);
    nmt_ngram_vocab_free(&ter->vocab);
    nmt_arena_free(&ter->arena);
    free(ter->hyp_ids);
    free(ter->ref_ids);
    free(ter);
}

static int grow_ids(uint32_t **ids, size_t *cap, size_t count) {
    if (count <= *cap) return 0;
    uint32_t *grown = nmt_realloc(*ids, count * sizeof *grown);
    if (!grown) return -1;
    *ids = grown;
    *cap = count;
    return 0;
}

/* count items of `size` bytes from the arena; NULL with the error set. */
static void *take(nmt_ter *t, size_t count, size_t size) {
    size_t bytes;
    if (nmt_size_mul(count ? count : 1, size, &bytes, "TER matrix") < 0) return NULL;
    return nmt_arena_alloc(&t->arena, bytes);
}

/* Lays out the bands of rows 0..H for an H x R problem (sacreBLEU's beam around the diagonal scaled
 * by R / H) and takes the buffers from the arena. */
static int set_geometry(nmt_ter *t, size_t H, size_t R) {
    nmt_arena_reset(&t->arena);
    t->H = H;
    t->R = R;
    t->ratio = H ? (double)R / (double)H : 1.0;
    t->beam = BEAM_WIDTH < t->ratio / 2 ? (long)ceil(t->ratio / 2 + BEAM_WIDTH) : BEAM_WIDTH;
    if (!(t->lo = take(t, H + 1, sizeof *t->lo)) || !(t->hi = take(t, H + 1, sizeof *t->hi)) ||
        !(t->offset = take(t, H + 1, sizeof *t->offset)))
        return -1;
    size_t cells = 0;
    for (size_t i = 0; i <= H; i++) {
        long lo = 0, hi = (long)R + 1;
        if (i > 0) {
            long diagonal = (long)floor((double)i * t->ratio);
            lo = diagonal - t->beam > 0 ? diagonal - t->beam : 0;
            hi = diagonal + t->beam < (long)R + 1 ? diagonal + t->beam : (long)R + 1;
            if (i == H) hi = (long)R + 1;
        }
        if (hi < lo) hi = lo;
        t->lo[i] = lo;
        t->hi[i] = hi;
        t->offset[i] = cells;
        cells += (size_t)(hi - lo);
    }
    if (!(t->cost = take(t, cells, sizeof *t->cost)) || !(t->op = take(t, cells, sizeof *t->op)) ||
        !(t->roll_cost = take(t, 2 * (R + 1), sizeof *t->roll_cost)) ||
        !(t->roll_op = take(t, 2 * (R + 1), sizeof *t->roll_op)) || !(t->words = take(t, H, sizeof *t->words)) ||
        !(t->candidate = take(t, H, sizeof *t->candidate)) || !(t->best = take(t, H, sizeof *t->best)) ||
        !(t->trace = take(t, H + R, sizeof *t->trace)) || !(t->align = take(t, R, sizeof *t->align)) ||
        !(t->hyp_err = take(t, H, sizeof *t->hyp_err)) || !(t->ref_err = take(t, R, sizeof *t->ref_err)))
        return -1;
    return 0;
}

/* A row of the matrix: its cells [lo, hi) at cost/op (cost[0] is column lo). */
typedef struct row {
    int64_t *cost;
    char *op;
    long lo, hi;
} row;

static inline int64_t cost_at(const row *r, long j) { return j >= r->lo && j < r->hi ? r->cost[j - r->lo] : INF; }

/* Fills row i (hypothesis word w) from row i-1, in sacreBLEU's order of preference: match or
 * substitution, then deletion, then insertion, each taken only when strictly cheaper. */
static void fill_row(const row *prev, row *cur, uint32_t w, const uint32_t *ref) {
    for (long j = cur->lo; j < cur->hi; j++) {
        int64_t best;
        char op;
        if (j == 0) {
            best = cost_at(prev, 0) + 1;
            op = OP_DEL;
        } else {
            best = INF;
            op = OP_UNDEF;
            int same = w == ref[j - 1];
            int64_t c = cost_at(prev, j - 1) + (same ? 0 : 1);
            if (best > c) {
                best = c;
                op = same ? OP_NOP : OP_SUB;
            }
            c = cost_at(prev, j) + 1;
            if (best > c) {
                best = c;
                op = OP_DEL;
            }
            c = (j - 1 >= cur->lo ? cur->cost[j - 1 - cur->lo] : INF) + 1;
            if (best > c) {
                best = c;
                op = OP_INS;
            }
        }
        cur->cost[j - cur->lo] = best;
        cur->op[j - cur->lo] = op;
    }
}

static row matrix_row(nmt_ter *t, size_t i) {
    return (row){t->cost + t->offset[i], t->op + t->offset[i], t->lo[i], t->hi[i]};
}

/* The whole matrix of `words`; returns the edit distance. */
static int64_t full_distance(nmt_ter *t, const uint32_t *words, const uint32_t *ref) {
    row first = matrix_row(t, 0);
    for (long j = 0; j <= (long)t->R; j++) {
        first.cost[j] = j;
        first.op[j] = OP_INS;
    }
    for (size_t i = 1; i <= t->H; i++) {
        row prev = matrix_row(t, i - 1), cur = matrix_row(t, i);
        fill_row(&prev, &cur, words[i - 1], ref);
    }
    row last = matrix_row(t, t->H);
    return cost_at(&last, (long)t->R);
}

/* The edit distance of a candidate that equals the current words in its first `same` words. */
static int64_t candidate_distance(nmt_ter *t, const uint32_t *words, size_t same, const uint32_t *ref) {
    row prev = matrix_row(t, same);
    int64_t *costs[2] = {t->roll_cost, t->roll_cost + t->R + 1};
    char *ops[2] = {t->roll_op, t->roll_op + t->R + 1};
    for (size_t i = same + 1; i <= t->H; i++) {
        row cur = {costs[i & 1], ops[i & 1], t->lo[i], t->hi[i]};
        fill_row(&prev, &cur, words[i - 1], ref);
        prev = cur;
    }
    return cost_at(&prev, (long)t->R);
}

/* Reads the trace back from the whole matrix and turns it into sacreBLEU's alignment: align[j] is
 * the hypothesis position of reference word j (-1 before the first), and the error flags of both
 * sides. The trace is flipped (insertions <-> deletions), as sacreBLEU rewrites the reference into
 * the hypothesis here. -1 when the trace runs into a cell the beam never reached. */
static int align_trace(nmt_ter *t) {
    size_t i = t->H, j = t->R, n = 0;
    while (i > 0 || j > 0) {
        row r = matrix_row(t, i);
        char op = (long)j >= r.lo && (long)j < r.hi ? r.op[(long)j - r.lo] : OP_UNDEF;
        t->trace[n++] = op;
        if (op == OP_SUB || op == OP_NOP) {
            i--;
            j--;
        } else if (op == OP_INS) {
            j--;
        } else if (op == OP_DEL) {
            i--;
        } else {
            return nmt_error_set("TER: the edit-distance beam lost the alignment (a degenerate segment of "
                                 "%zu and %zu words)",
                                 t->H, t->R);
        }
    }
    long pos_hyp = -1, pos_ref = -1;
    size_t hyp_n = 0, ref_n = 0;
    for (size_t k = n; k-- > 0;) { /* the trace was collected backwards */
        char op = t->trace[k];
        if (op == OP_NOP || op == OP_SUB) {
            t->align[++pos_ref] = ++pos_hyp;
            t->hyp_err[hyp_n++] = op == OP_SUB;
            t->ref_err[ref_n++] = op == OP_SUB;
        } else if (op == OP_DEL) { /* flipped to an insertion: a hypothesis word */
            pos_hyp++;
            t->hyp_err[hyp_n++] = 1;
        } else { /* OP_INS, flipped to a deletion: a reference word */
            t->align[++pos_ref] = pos_hyp;
            t->ref_err[ref_n++] = 1;
        }
    }
    return 0;
}

/* words[start, start + length) moved to position target (sacreBLEU's _perform_shift, slices
 * clamped as Python clamps them). */
static void perform_shift(const uint32_t *words, size_t n, size_t start, size_t length, size_t target, uint32_t *out) {
    size_t k = 0;
#define COPY(from, to)                                                   \
    do {                                                                 \
        size_t a_ = (from) < n ? (from) : n, b_ = (to) < n ? (to) : n;   \
        for (size_t x_ = a_; x_ < b_; x_++) out[k++] = words[x_];        \
    } while (0)
    if (target < start) {
        COPY(0, target);
        COPY(start, start + length);
        COPY(target, start);
        COPY(start + length, n);
    } else if (target > start + length) {
        COPY(0, start);
        COPY(start + length, target);
        COPY(start, start + length);
        COPY(target, n);
    } else {
        COPY(0, start);
        COPY(start + length, length + target);
        COPY(start, start + length);
        COPY(length + target, n);
    }
#undef COPY
}

static int any_error(const unsigned char *err, size_t from, size_t count) {
    for (size_t k = from; k < from + count; k++)
        if (err[k]) return 1;
    return 0;
}

/* A shift candidate: the block [start, start + length) moved to `target`, lowering the distance by
 * `gain`. */
typedef struct shift {
    int64_t gain;
    long length, start, target;
} shift;

/* sacreBLEU ranks candidates as the tuples (gain, length, -start, -target): larger gain, then the
 * longer block, then the earlier start, then the earlier target. */
static int better(const shift *a, const shift *b) {
    if (a->gain != b->gain) return a->gain > b->gain;
    if (a->length != b->length) return a->length > b->length;
    if (a->start != b->start) return a->start < b->start;
    return a->target < b->target;
}

/* One round of sacreBLEU's _shift: the best shift of t->words, into t->best, and the reduction of
 * the edit distance it brings in *gain (0 when there is no candidate). *checked counts the candidates
 * tried, over all rounds. 0, or -1 when the trace fails. */
static int best_shift(nmt_ter *t, const uint32_t *ref, long *checked, int64_t *gain) {
    size_t H = t->H, R = t->R;
    const uint32_t *words = t->words;
    int64_t before = full_distance(t, words, ref);
    if (align_trace(t) < 0) return -1;
    shift best = {0, 0, 0, 0};
    int found = 0;
    *gain = 0;
    for (size_t start_h = 0; start_h < H; start_h++) {
        for (size_t start_r = 0; start_r < R; start_r++) {
            if (labs((long)start_r - (long)start_h) > MAX_SHIFT_DIST) continue;
            for (size_t length = 1; length <= MAX_SHIFT_SIZE; length++) {
                if (words[start_h + length - 1] != ref[start_r + length - 1]) break;
                /* [start_h, +length) matches [start_r, +length); try it only when both sides are
                 * misaligned somewhere and the reference block is not aligned inside the hypothesis
                 * block already */
                long aligned = t->align[start_r];
                if (any_error(t->hyp_err, start_h, length) && any_error(t->ref_err, start_r, length) &&
                    !((long)start_h <= aligned && aligned < (long)(start_h + length))) {
                    long previous = -1;
                    for (long offset = -1; offset < (long)length; offset++) {
                        long target = (long)start_r + offset == -1 ? 0 : t->align[(long)start_r + offset] + 1;
                        if (target == previous) continue;
                        previous = target;
                        perform_shift(words, H, start_h, length, (size_t)target, t->candidate);
                        size_t same = (size_t)target < start_h ? (size_t)target : start_h;
                        shift c = {before - candidate_distance(t, t->candidate, same, ref), (long)length,
                                   (long)start_h, target};
                        ++*checked;
                        if (!found || better(&c, &best)) {
                            found = 1;
                            best = c;
                            memcpy(t->best, t->candidate, H * sizeof *t->best);
                        }
                    }
                    if (*checked >= MAX_SHIFT_CANDIDATES) {
                        *gain = best.gain;
                        return 0;
                    }
                }
                if (start_h + length == H || start_r + length == R) break;
            }
        }
    }
    *gain = found ? best.gain : 0;
    return 0;
}

long nmt_ter_edits(nmt_ter *t, const uint32_t *hyp, size_t hyp_len, const uint32_t *ref, size_t ref_len) {
    if (ref_len == 0) return (long)hyp_len;
    if (set_geometry(t, hyp_len, ref_len) < 0) return -1;
    if (hyp_len) memcpy(t->words, hyp, hyp_len * sizeof *hyp);
    long shifts = 0, checked = 0;
    for (;;) {
        int64_t gain;
        if (best_shift(t, ref, &checked, &gain) < 0) return -1;
        if (checked >= MAX_SHIFT_CANDIDATES || gain <= 0) break;
        shifts++;
        memcpy(t->words, t->best, hyp_len * sizeof *hyp);
    }
    return shifts + (long)full_distance(t, t->words, ref);
}

/* Tokenizes a line for TER and interns its words. */
/* Tokenizes a line for TER and interns its words. A reference is tokenized twice: sacreBLEU's
 * _cache_references tokenizes the references and _extract_reference_info tokenizes the result again,
 * which matters with --ter-normalized (a possessive "'s" followed by a tab is split on the second
 * pass, once the tab has become a space). */
static int words_of(nmt_ter *t, const char *s, size_t len, int reference, uint32_t **ids, size_t *cap, size_t *count) {
    const nmt_tokenize_tercom tok = {t->options.normalized, t->options.no_punct, t->options.asian_support,
                                     t->options.case_sensitive};
    len = nmt_tokenize_rstrip(s, len);
    if (reference) {
        if (nmt_tokenize_ter(&tok, s, len, &t->first_pass, &t->scratch) < 0) return -1;
        s = t->first_pass.data;
        len = t->first_pass.len;
    }
    const char *text;
    if (nmt_tokenize_ter_words(&tok, s, len, &t->scratch, &text, &t->spans) < 0) return -1;
    if (grow_ids(ids, cap, t->spans.count) < 0) return -1;
    for (size_t i = 0; i < t->spans.count; i++) {
        const nmt_tokenize_span *w = &t->spans.items[i];
        if (nmt_ngram_vocab_id(&t->vocab, text + w->start, w->len, &(*ids)[i]) < 0) return -1;
    }
    *count = t->spans.count;
    return 0;
}

int nmt_ter_segment(nmt_ter *t, const char *hyp, size_t hyp_len, const char *const *refs, const size_t *ref_lens,
                    int nrefs, double *stats) {
    if (nrefs < 1) return nmt_error_set("TER: a segment needs at least one reference");
    nmt_ngram_vocab_reset(&t->vocab);
    size_t hyp_words, ref_words;
    if (words_of(t, hyp, hyp_len, 0, &t->hyp_ids, &t->hyp_cap, &hyp_words) < 0) return -1;
    long best = 10000000000000000;
    double lengths = 0;
    for (int r = 0; r < nrefs; r++) {
        if (words_of(t, refs[r], ref_lens[r], 1, &t->ref_ids, &t->ref_cap, &ref_words) < 0) return -1;
        long edits = nmt_ter_edits(t, t->hyp_ids, hyp_words, t->ref_ids, ref_words);
        if (edits < 0) return -1;
        lengths += (double)ref_words;
        if (edits < best) best = edits;
    }
    stats[0] = (double)best;
    stats[1] = lengths / nrefs;
    return 0;
}
