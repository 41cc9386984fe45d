/* constraint: phrase states, advancing pieces and the bank step of constrained decoding (constraint.h). */
#include "infer/constraint.h"

#include "text/vocab.h"
#include "base/util.h"

#include <stdlib.h>

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

nmt_constraint_state nmt_constraint_start(void) { return (nmt_constraint_state){0, -1, 0, 0, 0}; }

nmt_constraint_state nmt_constraint_next(const nmt_decode_phrase *phrases, int count, const unsigned char *joins,
                                         nmt_constraint_state s, int32_t token) {
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
        if (p->pieces[s.at] == token) {
            s.at++;
            s.progress++;
            if (s.at == p->length) {
                s.met |= (uint64_t)1 << s.inside;
                s.ended = 1 + s.inside;
                s.inside = -1;
                s.at = 0;
            }
            return s;
        }
        s.progress -= s.at; /* abandoned: its pieces so far no longer count */
        s.inside = -1;
        s.at = 0;
    }
    for (int c = 0; c < count; c++) {
        if (s.met >> c & 1 || phrases[c].pieces[0] != token) continue;
        s.progress++;
        if (phrases[c].length == 1) {
            s.met |= (uint64_t)1 << c;
            s.ended = 1 + c;
        } else {
            s.inside = c;
            s.at = 1;
        }
        break;
    }
    return s;
}

int nmt_constraint_done(nmt_constraint_state s, int count) {
    return s.inside < 0 && s.met == (count == 64 ? ~(uint64_t)0 : ((uint64_t)1 << count) - 1);
}

int nmt_constraint_wanted(const nmt_decode_phrase *phrases, int count, nmt_constraint_state s, int32_t *out) {
    if (s.inside >= 0) {
        out[0] = phrases[s.inside].pieces[s.at];
        return 1;
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
