/* constraint: phrase states, advancing pieces and the bank step of constrained decoding (constraint.h). */
#include "infer/constraint.h"

#include "text/vocab.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

int nmt_constraint_check(const nmt_decode_phrase *phrases, int count, int V, int sentence) {
    if (count < 0 || count > NMT_CONSTRAINT_MAX || (count > 0 && !phrases))
        return nmt_error_set("sentence %d: %d constraints (at most %d)", sentence, count, NMT_CONSTRAINT_MAX);
    int total = 0;
    for (int c = 0; c < count; c++) {
        const nmt_decode_phrase *p = &phrases[c];
        if (p->length < 1 || p->length > (1 << 16) || !p->pieces)
            return nmt_error_set("sentence %d: constraint %d has %d pieces", sentence, c, p->length);
        for (int i = 0; i < p->length; i++)
            if (p->pieces[i] < 0 || p->pieces[i] >= V || p->pieces[i] == NMT_PAD || p->pieces[i] == NMT_BOS ||
                p->pieces[i] == NMT_EOS)
                return nmt_error_set("sentence %d: constraint %d piece %d is id %d, not a piece of the vocabulary of %d "
                                     "(pad, bos and eos are reserved)", sentence, c, i, p->pieces[i], V);
        total += p->length;
    }
    return total;
}

nmt_constraint_state nmt_constraint_start(void) { return (nmt_constraint_state){0, -1, 0, 0, 0, 0, 0}; }

/* The size of phrase p in the units of the state's `at`: bytes of its text (pieces without texts). */
static int phrase_size(const nmt_constraint_vocab *v, const nmt_decode_phrase *p) {
    if (!v || !v->text) return p->length;
    int n = 0;
    for (int k = 0; k < p->length; k++) n += (int)strlen(v->text[p->pieces[k]]);
    return n;
}

/* The phrase's own pieces that its first `at` units spell whole. */
static int phrase_covered(const nmt_constraint_vocab *v, const nmt_decode_phrase *p, int at) {
    if (!v || !v->text) return at;
    int k = 0;
    for (int end = 0; k < p->length && (end += (int)strlen(v->text[p->pieces[k]])) <= at; k++) {}
    return k;
}

/* The phrase's own piece that begins at `at`, or -1 where none does (inside one of them). */
static int32_t phrase_piece_at(const nmt_constraint_vocab *v, const nmt_decode_phrase *p, int at) {
    if (!v || !v->text) return at < p->length ? p->pieces[at] : -1;
    for (int k = 0, off = 0; k < p->length && off <= at; off += (int)strlen(v->text[p->pieces[k]]), k++)
        if (off == at) return p->pieces[k];
    return -1;
}

/* Where phrase p stands after `token` follows it from `at` (the token's text continues the
 * phrase's text there without passing its end), or -1. */
static int phrase_follow(const nmt_constraint_vocab *v, const nmt_decode_phrase *p, int at, int32_t token) {
    if (!v || !v->text) return at < p->length && p->pieces[at] == token ? at + 1 : -1;
    const char *w = v->text[token];
    const int n = (int)strlen(w);
    if (n == 0) return -1;
    int i = 0; /* bytes of w matched: the phrase's text from at + i on is compared next */
    for (int k = 0, off = 0; k < p->length && i < n; k++) {
        const char *c = v->text[p->pieces[k]];
        const int len = (int)strlen(c);
        for (int j = at + i - off; j < len && i < n; j++, i++)
            if (c[j] != w[i]) return -1;
        off += len;
    }
    return i == n ? at + n : -1;
}

nmt_constraint_state nmt_constraint_next(const nmt_decode_phrase *phrases, int count, const nmt_constraint_vocab *vocab,
                                         nmt_constraint_state s, int32_t token) {
    const unsigned char *joins = vocab ? vocab->joins : NULL;
    if (s.ended > 0) {
        const int c = s.ended - 1;
        s.ended = 0;
        if (joins && joins[token]) { /* the word goes on: the phrase was not met whole */
            s.met &= ~((uint64_t)1 << c);
            s.progress -= phrases[c].length;
        }
    }
    if (s.inside >= 0) {
        const nmt_decode_phrase *p = &phrases[s.inside];
        const int before = phrase_covered(vocab, p, s.at), at = phrase_follow(vocab, p, s.at, token);
        if (at >= 0) {
            s.at = at;
            if (at == phrase_size(vocab, p)) {
                s.progress += p->length - before;
                s.met |= (uint64_t)1 << s.inside;
                s.ended = 1 + s.inside;
                s.inside = -1;
                s.at = 0;
            } else {
                s.progress += phrase_covered(vocab, p, at) - before;
            }
            return s;
        }
        s.progress -= before; /* abandoned: its pieces so far no longer count */
        s.inside = -1;
        s.at = 0;
    }
    for (int c = 0; c < count; c++) {
        if (s.met >> c & 1) continue;
        const int at = phrase_follow(vocab, &phrases[c], 0, token);
        if (at < 0) continue;
        if (at == phrase_size(vocab, &phrases[c])) {
            s.progress += phrases[c].length;
            s.met |= (uint64_t)1 << c;
            s.ended = 1 + c;
        } else {
            s.progress += phrase_covered(vocab, &phrases[c], at);
            s.inside = c;
            s.at = at;
        }
        break;
    }
    return s;
}

int nmt_constraint_ends_sentence(const nmt_constraint_vocab *vocab, int32_t token) {
    if (!vocab || !vocab->text) return 0;
    const char *w = vocab->text[token];
    const size_t n = strlen(w);
    return n > 0 && (w[n - 1] == '.' || w[n - 1] == '!' || w[n - 1] == '?');
}

int nmt_constraint_done(nmt_constraint_state s, int count) {
    return s.inside < 0 && s.met == (count == 64 ? ~(uint64_t)0 : ((uint64_t)1 << count) - 1);
}

int nmt_constraint_wanted(const nmt_decode_phrase *phrases, int count, const nmt_constraint_vocab *vocab,
                          nmt_constraint_state s, int32_t *out) {
    if (s.inside >= 0) {
        out[0] = phrase_piece_at(vocab, &phrases[s.inside], s.at);
        return out[0] >= 0;
    }
    int n = 0;
    for (int c = 0; c < count; c++) {
        if (s.met >> c & 1) continue;
        int seen = 0;
        for (int i = 0; i < n && !seen; i++) seen = out[i] == phrases[c].pieces[0];
        if (!seen) out[n++] = phrases[c].pieces[0];
    }
    return n;
}

static int candidate_order(const void *pa, const void *pb) {
    const nmt_constraint_candidate *a = pa, *b = pb;
    if (a->total != b->total) return a->total > b->total ? -1 : 1;
    if (a->row != b->row) return a->row < b->row ? -1 : 1;
    return (a->token > b->token) - (a->token < b->token);
}

void nmt_constraint_sort(nmt_constraint_candidate *cand, int n) { qsort(cand, (size_t)n, sizeof *cand, candidate_order); }

int nmt_constraint_allocate(nmt_constraint_candidate *cand, int n, int K, int T, int *count) {
    const int banks = T + 1, share = K / banks, extra = K % banks;
    int *quota = count, *used = count + banks;
    for (int m = 0; m < banks; m++) {
        quota[m] = share + (m >= banks - extra);
        used[m] = 0;
    }
    for (int i = 0; i < n; i++) cand[i].keep = 0;
    /* From the bank of most progress down, each bank's places and those the banks above left. */
    int kept = 0, carry = 0;
    for (int m = banks - 1; m >= 0; m--) {
        int places = quota[m] + carry;
        for (int i = 0; i < n && places > 0; i++)
            if (cand[i].state.progress == m) {
                cand[i].keep = 1;
                places--;
                kept++;
            }
        carry = places;
    }
    for (int i = 0; i < n && kept < K; i++)
        if (!cand[i].keep) {
            cand[i].keep = 1;
            kept++;
        }
    return kept;
}
