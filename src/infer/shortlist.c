/* shortlist: building the co-occurrence table (from piece ids, or from a model directory's corpus),
 * its file, and a batch's candidate union. */
#include "infer/shortlist.h"

#include "base/hash.h"
#include "base/input.h"
#include "base/io.h"
#include "base/util.h"
#include "model/safetensors.h"
#include "text/spm.h"
#include "text/vocab.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct nmt_shortlist {
    int vocab_size, k, m;
    uint64_t vocab_fingerprint; /* nmt_spm_fingerprint of the vocabulary it was built with (0: unknown) */
    int64_t *offsets;   /* [vocab_size + 1] */
    int32_t *candidates; /* [offsets[vocab_size]] */
    int32_t *frequent;  /* [m] */
};

int nmt_shortlist_k(const nmt_shortlist *s) { return s->k; }
int nmt_shortlist_m(const nmt_shortlist *s) { return s->m; }

void nmt_shortlist_free(nmt_shortlist *s) {
    if (!s) return;
    free(s->offsets);
    free(s->candidates);
    free(s->frequent);
    free(s);
}

static int compare_u64(const void *a, const void *b) {
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct scored {
    double score;
    int32_t count, token;
} scored;

/* Higher score first, then higher count, then lower id. */
static int compare_scored(const void *a, const void *b) {
    const scored *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return (x->token > y->token) - (x->token < y->token);
}

/* The distinct ids of ids[0 .. n) within [0, V) into out, counting each in counts; mark is V bytes of 0s. */
static int distinct(const int32_t *ids, int n, int V, uint8_t *mark, int32_t *out, int32_t *counts) {
    int count = 0;
    for (int i = 0; i < n; i++)
        if (ids[i] >= 0 && ids[i] < V && !mark[ids[i]]) {
            mark[ids[i]] = 1;
            out[count++] = ids[i];
            counts[ids[i]]++;
        }
    for (int i = 0; i < count; i++) mark[out[i]] = 0;
    return count;
}

int nmt_shortlist_build(nmt_shortlist **out, int V, int k, int m, long pairs, const int32_t *const *src,
                        const int *src_len, const int32_t *const *tgt, const int *tgt_len) {
    *out = NULL;
    if (V < 1 || k < 0 || m < 0 || k > V || m > V) return nmt_error_set("shortlist: bad K %d or M %d for %d pieces", k, m, V);
    nmt_shortlist *s = nmt_calloc(1, sizeof *s);
    int32_t *c_src = nmt_calloc((size_t)V, sizeof(int32_t)), *c_tgt = nmt_calloc((size_t)V, sizeof(int32_t));
    int32_t *us = nmt_malloc((size_t)V * sizeof(int32_t)), *ut = nmt_malloc((size_t)V * sizeof(int32_t));
    uint8_t *mark = nmt_calloc((size_t)V, 1);
    scored *row = nmt_malloc((size_t)V * sizeof(scored));
    uint64_t *keys = NULL;
    size_t used = 0, cap = 0;
    int rc = -1;
    if (!s || !c_src || !c_tgt || !us || !ut || !mark || !row) goto done;
    s->vocab_size = V, s->k = k, s->m = m;
    for (long p = 0; p < pairs; p++) {
        const int ns = distinct(src[p], src_len[p], V, mark, us, c_src), nt = distinct(tgt[p], tgt_len[p], V, mark, ut, c_tgt);
        if (used + (size_t)ns * (size_t)nt > cap) {
            size_t want = cap ? cap * 2 : 1 << 20;
            while (want < used + (size_t)ns * (size_t)nt) want *= 2;
            uint64_t *grown = nmt_realloc(keys, want * sizeof *keys);
            if (!grown) goto done;
            keys = grown, cap = want;
        }
        for (int i = 0; i < ns; i++)
            for (int j = 0; j < nt; j++) keys[used++] = (uint64_t)us[i] << 32 | (uint32_t)ut[j];
    }
    if (used) qsort(keys, used, sizeof *keys, compare_u64);
    s->offsets = nmt_calloc((size_t)V + 1, sizeof(int64_t));
    s->candidates = nmt_malloc(((size_t)V * (size_t)k + 1) * sizeof(int32_t));
    s->frequent = nmt_malloc(((size_t)m + 1) * sizeof(int32_t));
    if (!s->offsets || !s->candidates || !s->frequent) goto done;
    size_t at = 0, total = 0;
    for (int piece = 0; piece < V; piece++) {
        int n = 0;
        for (; at < used && (int)(keys[at] >> 32) == piece; n++) {
            const int32_t t = (int32_t)(keys[at] & 0xffffffffu);
            int32_t c = 0;
            for (; at < used && keys[at] == ((uint64_t)piece << 32 | (uint32_t)t); at++) c++;
            row[n] = (scored){2.0 * c / ((double)c_src[piece] + c_tgt[t]), c, t};
        }
        qsort(row, (size_t)n, sizeof *row, compare_scored);
        const int keep = n < k ? n : k;
        for (int i = 0; i < keep; i++) s->candidates[total + (size_t)i] = row[i].token;
        total += (size_t)keep;
        s->offsets[piece + 1] = (int64_t)total;
    }
    for (int t = 0; t < V; t++) row[t] = (scored){(double)c_tgt[t], c_tgt[t], t};
    qsort(row, (size_t)V, sizeof *row, compare_scored);
    for (int i = 0; i < m; i++) s->frequent[i] = row[i].token;
    *out = s;
    s = NULL;
    rc = 0;
done:
    nmt_shortlist_free(s);
    free(c_src), free(c_tgt), free(us), free(ut), free(mark), free(row), free(keys);
    return rc;
}

int nmt_shortlist_save(const nmt_shortlist *s, const char *path) {
    const size_t total = (size_t)s->offsets[s->vocab_size];
    int64_t *cands = nmt_malloc((total + 1) * sizeof(int64_t)), *freq = nmt_malloc(((size_t)s->m + 1) * sizeof(int64_t));
    int rc = -1;
    if (cands && freq) {
        for (size_t i = 0; i < total; i++) cands[i] = s->candidates[i];
        for (int i = 0; i < s->m; i++) freq[i] = s->frequent[i];
        const nmt_st_tensor tensors[] = {
            {.name = "offsets", .dtype = NMT_ST_I64, .rank = 1, .shape = {s->vocab_size + 1}, .data = s->offsets,
             .size = ((size_t)s->vocab_size + 1) * sizeof(int64_t)},
            {.name = "candidates", .dtype = NMT_ST_I64, .rank = 1, .shape = {(int64_t)total}, .data = cands,
             .size = total * sizeof(int64_t)},
            {.name = "frequent", .dtype = NMT_ST_I64, .rank = 1, .shape = {s->m}, .data = freq,
             .size = (size_t)s->m * sizeof(int64_t)},
        };
        char text[4][2][24];
        snprintf(text[0][0], sizeof text[0][0], "k");
        snprintf(text[0][1], sizeof text[0][1], "%d", s->k);
        snprintf(text[1][0], sizeof text[1][0], "m");
        snprintf(text[1][1], sizeof text[1][1], "%d", s->m);
        snprintf(text[2][0], sizeof text[2][0], "vocab_size");
        snprintf(text[2][1], sizeof text[2][1], "%d", s->vocab_size);
        snprintf(text[3][0], sizeof text[3][0], "vocab_fingerprint");
        snprintf(text[3][1], sizeof text[3][1], "%016" PRIx64, s->vocab_fingerprint);
        const nmt_st_metadata md[] = {{text[0][0], text[0][1]}, {text[1][0], text[1][1]}, {text[2][0], text[2][1]},
                                      {text[3][0], text[3][1]}};
        rc = nmt_st_write(path, tensors, 3, md, s->vocab_fingerprint ? 4 : 3);
    }
    free(cands);
    free(freq);
    return rc;
}

/* Tensor `name` of the file: I64 of rank 1 with at most `most` values (checked before anything is
 * read or allocated). */
static const nmt_st_tensor *ids_tensor(const nmt_st_file *f, const char *path, const char *name, int64_t most) {
    const nmt_st_tensor *t = nmt_st_find(f, name);
    if (!t || t->dtype != NMT_ST_I64 || t->rank != 1) {
        nmt_error_set("%s: no tensor '%s' of I64 values (not a shortlist written by `nmt shortlist`?)", path, name);
        return NULL;
    }
    if (t->shape[0] > most) {
        nmt_error_set("%s: %s holds %lld values, more than the %lld its vocabulary and K allow", path, name,
                      (long long)t->shape[0], (long long)most);
        return NULL;
    }
    return t;
}

/* Tensor t's values as int32 ids, every one in [0, limit]. */
static int read_ids(const nmt_st_tensor *t, const char *path, int64_t limit, int32_t **out) {
    *out = nmt_malloc(((size_t)t->shape[0] + 1) * sizeof(int32_t));
    if (!*out) return -1;
    for (int64_t i = 0; i < t->shape[0]; i++) {
        int64_t v;
        memcpy(&v, (const char *)t->data + (size_t)i * sizeof v, sizeof v);
        if (v < 0 || v > limit)
            return nmt_error_set("%s: %s[%lld] = %lld is outside [0, %lld]", path, t->name, (long long)i, (long long)v,
                                 (long long)limit);
        (*out)[i] = (int32_t)v;
    }
    return 0;
}

/* Metadata `key` as an integer in [min, max]. */
static int meta_int(const nmt_st_file *f, const char *path, const char *key, long min, long max, int *out) {
    const char *text = nmt_st_meta(f, key);
    char *end = NULL;
    errno = 0;
    long v = text ? strtol(text, &end, 10) : 0;
    if (!text || errno || end == text || *end || v < min || v > max)
        return nmt_error_set("%s: metadata %s is %s, not a number from %ld to %ld (not a shortlist written by `nmt "
                             "shortlist`, or built for another vocabulary? rerun `nmt shortlist`)",
                             path, key, text ? text : "missing", min, max);
    *out = (int)v;
    return 0;
}

int nmt_shortlist_load(nmt_shortlist **out, const char *path, int V) {
    *out = NULL;
    /* The largest file a table for V pieces can be (K <= V): a larger one is refused unread. */
    const double most = 8.0 * ((double)V * V + 2.0 * V + 1.0) + (1 << 20);
    struct stat st;
    if (stat(path, &st) == 0 && (double)st.st_size > most)
        return nmt_error_set("%s: %lld bytes, more than a shortlist of a %d-piece vocabulary can be (%.0f)", path,
                             (long long)st.st_size, V, most);
    nmt_st_file f;
    if (nmt_st_read(&f, path) < 0) return -1;
    nmt_shortlist *s = nmt_calloc(1, sizeof *s);
    int32_t *offsets = NULL;
    int rc = -1, vocab = 0;
    if (!s || meta_int(&f, path, "vocab_size", 1, INT32_MAX, &vocab) < 0) goto done;
    if (vocab != V) {
        nmt_error_set("%s: built for a vocabulary of %d pieces (metadata vocab_size), not this model's %d (rerun `nmt "
                      "shortlist`)", path, vocab, V);
        goto done;
    }
    s->vocab_size = V;
    if (meta_int(&f, path, "k", 0, V, &s->k) < 0 || meta_int(&f, path, "m", 0, V, &s->m) < 0) goto done;
    const char *fingerprint = nmt_st_meta(&f, "vocab_fingerprint");
    if (fingerprint) s->vocab_fingerprint = strtoull(fingerprint, NULL, 16);
    const nmt_st_tensor *cand = ids_tensor(&f, path, "candidates", (int64_t)V * s->k),
                        *freq = cand ? ids_tensor(&f, path, "frequent", s->m) : NULL,
                        *off = freq ? ids_tensor(&f, path, "offsets", (int64_t)V + 1) : NULL;
    if (!off) goto done;
    const int64_t n_cand = cand->shape[0];
    if (off->shape[0] != (int64_t)V + 1 || freq->shape[0] != s->m) {
        nmt_error_set("%s: %lld offsets for %d pieces and %lld frequent pieces for M %d", path,
                      (long long)off->shape[0], V, (long long)freq->shape[0], s->m);
        goto done;
    }
    if (read_ids(off, path, n_cand, &offsets) < 0 || read_ids(cand, path, V - 1, &s->candidates) < 0 ||
        read_ids(freq, path, V - 1, &s->frequent) < 0)
        goto done;
    if (offsets[0] != 0 || offsets[V] != n_cand) {
        nmt_error_set("%s: the offsets do not span the %lld candidates", path, (long long)n_cand);
        goto done;
    }
    if (!(s->offsets = nmt_malloc(((size_t)V + 1) * sizeof(int64_t)))) goto done;
    for (int i = 0; i <= V; i++) {
        if (i && (offsets[i] < offsets[i - 1] || offsets[i] - offsets[i - 1] > s->k)) {
            nmt_error_set("%s: offsets[%d] = %d decreases, or gives piece %d more than K %d candidates", path, i,
                          offsets[i], i - 1, s->k);
            goto done;
        }
        s->offsets[i] = offsets[i];
    }
    *out = s;
    s = NULL;
    rc = 0;
done:
    free(offsets);
    nmt_shortlist_free(s);
    nmt_st_free(&f);
    return rc;
}

static int take(uint8_t *mark, int32_t id, int count) {
    if (mark[id]) return count;
    mark[id] = 1;
    return count + 1;
}

int nmt_shortlist_union(const nmt_shortlist *s, const int32_t *src, long count, uint8_t *mark, int32_t *out) {
    const int V = s->vocab_size;
    int n = 0;
    for (int id = 0; id <= NMT_EOS && id < V; id++) n = take(mark, id, n);
    for (int i = 0; i < s->m; i++) n = take(mark, s->frequent[i], n);
    for (long i = 0; i < count; i++) {
        if (src[i] < 0 || src[i] >= V) continue;
        for (int64_t j = s->offsets[src[i]]; j < s->offsets[src[i] + 1]; j++) n = take(mark, s->candidates[j], n);
    }
    /* one pass over the vocabulary writes the union in order and clears the marks */
    int at = 0;
    for (int id = 0; id < V && at < n; id++)
        if (mark[id]) {
            out[at++] = id;
            mark[id] = 0;
        }
    return n;
}

int nmt_shortlist_load_dir(nmt_shortlist **out, const char *model_dir, int vocab_size) {
    *out = NULL;
    char *path = nmt_path_join(model_dir, NMT_SHORTLIST_FILE);
    if (!path) return -1;
    char *spm_path = nmt_path_join(model_dir, "spm.model");
    const int present = path && spm_path ? nmt_file_present(path) : -1;
    int rc = present > 0 ? nmt_shortlist_load(out, path, vocab_size)
           : present == 0 ? nmt_error_set("%s: missing (`nmt shortlist -m %s` builds it)", path, model_dir) : -1;
    /* Built with the vocabulary beside it? (a file without a fingerprint cannot tell) */
    uint64_t vocab = 0;
    if (rc == 0 && (*out)->vocab_fingerprint && (rc = nmt_hash_file(spm_path, &vocab)) == 0 &&
        vocab != (*out)->vocab_fingerprint)
        rc = nmt_error_set("%s was built with another vocabulary than %s (fingerprint %016" PRIx64 ", the shortlist "
                           "records %016" PRIx64 "): rebuild it with `nmt shortlist -m %s`",
                           path, spm_path, vocab, (*out)->vocab_fingerprint, model_dir);
    if (rc < 0) {
        nmt_shortlist_free(*out);
        *out = NULL;
    }
    free(path);
    free(spm_path);
    return rc;
}

/* ---- from a corpus ---- */

typedef struct side {
    int32_t **ids; /* [count] */
    int *len;
    long count, cap;
} side;

static void side_free(side *s) {
    for (long i = 0; i < s->count; i++) free(s->ids[i]);
    free(s->ids);
    free(s->len);
}

/* Encodes every line of path (text or gzip, as the trainer reads corpora) into s. */
static int read_side(const nmt_spm *spm, const char *path, side *s) {
    FILE *fp = nmt_input_open(path);
    if (!fp) return -1;
    nmt_lines lines;
    nmt_lines_init(&lines, fp, path);
    int rc, status = 0;
    while ((rc = nmt_lines_next(&lines)) == 1) {
        if (s->count == s->cap) {
            const long cap = s->cap ? s->cap * 2 : 4096;
            int32_t **ids = nmt_realloc(s->ids, (size_t)cap * sizeof *ids);
            if (ids) s->ids = ids;
            int *len = ids ? nmt_realloc(s->len, (size_t)cap * sizeof *len) : NULL;
            if (len) s->len = len;
            if (!ids || !len) {
                status = -1;
                break;
            }
            s->cap = cap;
        }
        int32_t *ids = NULL;
        size_t cap = 0, n = 0;
        if (nmt_spm_encode(spm, lines.line, lines.len, &ids, &cap, &n) < 0) {
            free(ids);
            status = nmt_error_prefix("%s:%ld", path, lines.number);
            break;
        }
        s->ids[s->count] = ids;
        s->len[s->count++] = (int)n;
    }
    if (rc < 0) status = -1;
    nmt_lines_free(&lines);
    if (nmt_input_close(fp, path) < 0) status = -1;
    return status;
}

int nmt_shortlist_build_dir(const char *model_dir, int corpora, const char *const *src, const char *const *tgt, int k,
                            int m, int fit, FILE *progress) {
    int rc = -1;
    nmt_spm *spm = NULL;
    nmt_shortlist *list = NULL;
    side s = {0}, t = {0};
    char *spm_path = nmt_path_join(model_dir, "spm.model"), *out = nmt_path_join(model_dir, NMT_SHORTLIST_FILE);
    if (!spm_path || !out || nmt_spm_load(&spm, spm_path) < 0) goto done;
    for (int i = 0; i < corpora; i++) {
        const long before = s.count;
        if (read_side(spm, src[i], &s) < 0 || read_side(spm, tgt[i], &t) < 0) goto done;
        if (s.count != t.count) {
            nmt_error_set("%s has %ld lines but %s has %ld", src[i], s.count - before, tgt[i], t.count - before);
            goto done;
        }
    }
    const int V = nmt_spm_vocab_size(spm);
    if (fit) {
        k = k < V ? k : V;
        m = m < V ? m : V;
    }
    if (k > V || m > V) {
        nmt_error_set("-k %d or --frequent %d exceeds the vocabulary of %d pieces", k, m, V);
        goto done;
    }
    if (nmt_shortlist_build(&list, V, k, m, s.count, (const int32_t *const *)s.ids, s.len,
                            (const int32_t *const *)t.ids, t.len) < 0)
        goto done;
    list->vocab_fingerprint = nmt_spm_fingerprint(spm);
    if (nmt_shortlist_save(list, out) < 0) goto done;
    if (progress)
        fprintf(progress, "nmt shortlist: wrote %s (K %d, M %d, from %ld sentence pairs of %s%s)\n", out, k, m, s.count,
                src[0], corpora > 1 ? " and the other corpora" : "");
    rc = 0;
done:
    side_free(&s);
    side_free(&t);
    nmt_shortlist_free(list);
    nmt_spm_free(spm);
    free(spm_path);
    free(out);
    return rc;
}
