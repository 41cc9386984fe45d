/* fuzz_tokenize: sacreBLEU's tokenizers and the metrics built on them (BLEU, chrF, TER) on arbitrary
 * text, as `nmt bleu` and validation meet it in hypotheses and references from anywhere.
 *
 * Input: byte 0: options (bit 0 lowercase for BLEU and chrF; bits 1-4 the TER flags normalized,
 * no_punct, asian_support, case_sensitive), then the hypothesis, a 0xFF byte, the reference. The
 * library requires valid UTF-8 (the CLI checks it), so each invalid byte is replaced by '?' first.
 *
 * Properties:
 *   - every tokenizer's output is valid UTF-8, and its words as nmt_tokenize_words finds them are the
 *     words of str.split() of nmt_tokenize's output (the header promises both give the same words);
 *     likewise nmt_tokenize_ter_words against nmt_tokenize_ter; the `none` tokenizer returns its input;
 *   - nmt_utf8_lower writes at most NMT_UTF8_LOWER_MAX(len) bytes (the buffer is exactly that big) of
 *     valid UTF-8; nmt_tokenize_rstrip removes only whitespace, and all of it at the end;
 *   - BLEU statistics have 0 <= correct <= total and hyp_len = the hypothesis's words; BLEU and chrF
 *     are in [0, 100], TER is >= 0; a hypothesis scored against itself gets BLEU 100 (4 words or
 *     more), chrF 100 (when it has a character) and 0 TER edits;
 *   - (TER for texts under 256 bytes) scoring fails only where TER's beam loses a degenerate alignment (sacreBLEU raises there), and
 *     with the 1st, 2nd, ... allocation failing it reports "out of memory".
 */
#include "fuzz.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "eval/ter.h"
#include "eval/tokenize.h"
#include "base/utf8.h"

#include <math.h>

typedef struct text {
    char *s;
    size_t len;
} text;

/* A valid UTF-8 copy of data[0..size): each byte that starts an invalid sequence becomes '?'. */
static text valid_copy(const uint8_t *data, size_t size) {
    text t = {malloc(size + 1), size};
    FUZZ_CHECK(t.s != NULL, "out of memory");
    if (size) memcpy(t.s, data, size);
    t.s[size] = '\0';
    long bad;
    size_t from = 0;
    while ((bad = nmt_utf8_invalid_at(t.s + from, size - from)) >= 0) {
        t.s[from + (size_t)bad] = '?';
        from += (size_t)bad + 1;
    }
    return t;
}

static void check_same_words(const char *what, const char *a_text, const nmt_tokenize_spans *a, const char *b_text,
                             const nmt_tokenize_spans *b) {
    FUZZ_CHECK(a->count == b->count, "%s: %zu words one way, %zu the other", what, a->count, b->count);
    for (size_t i = 0; i < a->count; i++)
        FUZZ_CHECK(a->items[i].len == b->items[i].len &&
                       memcmp(a_text + a->items[i].start, b_text + b->items[i].start, a->items[i].len) == 0,
                   "%s: word %zu differs", what, i);
}

static void check_tokenizers(const text *t, int options) {
    nmt_strbuf out = {0};
    nmt_tokenize_scratch scratch = {0}, scratch2 = {0};
    nmt_tokenize_spans split = {0}, words = {0};
    static const nmt_tokenizer tokenizers[] = {NMT_TOKENIZE_NONE, NMT_TOKENIZE_13A, NMT_TOKENIZE_INTL,
                                               NMT_TOKENIZE_CHAR, NMT_TOKENIZE_ZH};
    for (size_t k = 0; k < sizeof tokenizers / sizeof tokenizers[0]; k++) {
        const char *name = nmt_tokenize_name(tokenizers[k]), *word_text;
        FUZZ_CHECK(nmt_tokenize(tokenizers[k], t->s, t->len, &out, &scratch) == 0, "%s: %s", name, nmt_error());
        FUZZ_CHECK(nmt_utf8_invalid_at(out.data, out.len) < 0, "%s: output not UTF-8", name);
        FUZZ_CHECK(tokenizers[k] != NMT_TOKENIZE_NONE || (out.len == t->len && memcmp(out.data, t->s, t->len) == 0),
                   "none changed its input");
        FUZZ_CHECK(nmt_tokenize_split(out.data, out.len, &split) == 0, "%s", nmt_error());
        FUZZ_CHECK(nmt_tokenize_words(tokenizers[k], t->s, t->len, &scratch2, &word_text, &words) == 0, "%s",
                   nmt_error());
        check_same_words(name, out.data, &split, word_text, &words);
    }
    nmt_tokenize_tercom ter = {options >> 1 & 1, options >> 2 & 1, options >> 3 & 1, options >> 4 & 1};
    const char *word_text;
    FUZZ_CHECK(nmt_tokenize_ter(&ter, t->s, t->len, &out, &scratch) == 0, "%s", nmt_error());
    FUZZ_CHECK(nmt_utf8_invalid_at(out.data, out.len) < 0, "tercom: output not UTF-8");
    FUZZ_CHECK(nmt_tokenize_split(out.data, out.len, &split) == 0, "%s", nmt_error());
    FUZZ_CHECK(nmt_tokenize_ter_words(&ter, t->s, t->len, &scratch2, &word_text, &words) == 0, "%s", nmt_error());
    check_same_words("tercom", out.data, &split, word_text, &words);

    size_t cap = NMT_UTF8_LOWER_MAX(t->len);
    char *lower = malloc(cap);
    FUZZ_CHECK(lower != NULL, "out of memory");
    size_t n = nmt_utf8_lower(t->s, t->len, lower);
    FUZZ_CHECK(n <= cap && nmt_utf8_invalid_at(lower, n) < 0, "lower: %zu bytes for room of %zu, or not UTF-8", n, cap);
    free(lower);

    size_t kept = nmt_tokenize_rstrip(t->s, t->len), at = kept;
    FUZZ_CHECK(kept <= t->len, "rstrip grew the text");
    while (at < t->len) FUZZ_CHECK(nmt_utf8_is_space(nmt_utf8_next(t->s, &at)), "rstrip removed a non-space");
    if (kept > 0) {
        size_t last = kept - 1;
        while (last > 0 && ((unsigned char)t->s[last] & 0xC0) == 0x80) last--;
        FUZZ_CHECK(!nmt_utf8_is_space(nmt_utf8_next(t->s, &last)), "rstrip left a space at the end");
    }
    nmt_strbuf_free(&out);
    nmt_tokenize_scratch_free(&scratch);
    nmt_tokenize_scratch_free(&scratch2);
    nmt_tokenize_spans_free(&split);
    nmt_tokenize_spans_free(&words);
}

typedef struct pair {
    text hyp, ref;
    int options;
    int ter; /* also TER (the costly one: with comparison tracing, its edit distance is 90% of the time) */
} pair;

/* Scores hyp against ref with the three metrics, checking their ranges (and, when ref is hyp, the
 * perfect scores). */
static int score(void *context) {
    const pair *p = context;
    nmt_bleu_options bo = nmt_bleu_options_default();
    bo.lowercase = p->options & 1;
    nmt_chrf_options co = nmt_chrf_options_default();
    co.lowercase = p->options & 1;
    co.word_order = 2;
    nmt_ter_options to = {p->options >> 1 & 1, p->options >> 2 & 1, p->options >> 3 & 1, p->options >> 4 & 1};
    nmt_bleu *bleu = nmt_bleu_create(&bo);
    nmt_chrf *chrf = nmt_chrf_create(&co);
    nmt_ter *ter = nmt_ter_create(&to);
    int rc = -1;
    const char *refs[] = {p->ref.s};
    const size_t lens[] = {p->ref.len};
    double stats[NMT_CHRF_MAX_ORDER * 3], ter_stats[NMT_TER_STATS];
    if (!bleu || !chrf || !ter || nmt_bleu_segment(bleu, p->hyp.s, p->hyp.len, refs, lens, 1, stats) < 0) goto done;
    int self = p->hyp.s == p->ref.s;
    for (int n = 0; n < bo.max_order; n++) {
        double correct = stats[2 + n], total = stats[2 + bo.max_order + n];
        FUZZ_CHECK(correct >= 0 && correct <= total && (!self || correct == total), "BLEU %d-grams: %g of %g", n + 1,
                   correct, total);
    }
    nmt_bleu_score bs;
    nmt_bleu_compute(&bo, stats, NMT_PYNUM_PYTHON, &bs);
    FUZZ_CHECK(bs.score >= 0 && bs.score <= 100 + 1e-9, "BLEU %g", bs.score);
    FUZZ_CHECK(!self || stats[0] < 4 || fabs(bs.score - 100) < 1e-9, "BLEU of a text against itself: %g", bs.score);
    if (nmt_chrf_segment(chrf, p->hyp.s, p->hyp.len, refs, lens, 1, stats) < 0) goto done;
    double c = nmt_chrf_compute(&co, stats, NMT_PYNUM_PYTHON);
    FUZZ_CHECK(c >= 0 && c <= 100 + 1e-9, "chrF %g", c);
    FUZZ_CHECK(!self || stats[0] == 0 || fabs(c - 100) < 1e-9, "chrF of a text against itself: %g", c);
    if (!p->ter) {
        rc = 0;
        goto done;
    }
    if (nmt_ter_segment(ter, p->hyp.s, p->hyp.len, refs, lens, 1, ter_stats) < 0) goto done;
    FUZZ_CHECK(ter_stats[0] >= 0 && ter_stats[1] >= 0 && nmt_ter_compute(ter_stats, NMT_PYNUM_PYTHON) >= 0,
               "TER statistics %g, %g", ter_stats[0], ter_stats[1]);
    FUZZ_CHECK(!self || ter_stats[0] == 0, "TER of a text against itself: %g edits", ter_stats[0]);
    rc = 0;
done:
    nmt_bleu_free(bleu);
    nmt_chrf_free(chrf);
    nmt_ter_free(ter);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const uint8_t *split = memchr(data + 1, 0xFF, size - 1);
    size_t hyp_size = split ? (size_t)(split - data - 1) : size - 1;
    pair p = {.options = data[0]};
    p.hyp = valid_copy(data + 1, hyp_size);
    p.ref = split ? valid_copy(split + 1, (size_t)(data + size - split - 1)) : valid_copy(data, 0);
    check_tokenizers(&p.hyp, p.options);
    check_tokenizers(&p.ref, p.options);
    /* TER's beam may lose a degenerate alignment (where sacreBLEU raises): an error, not a crash. */
    p.ter = p.hyp.len + p.ref.len < 256;
    int scored = score(&p);
    FUZZ_CHECK(scored == 0 || !strstr(nmt_error(), "out of memory"), "%s", nmt_error());
    pair self = {p.hyp, p.hyp, p.options, p.ter};
    int rc = score(&self);
    FUZZ_CHECK(rc == 0 || !strstr(nmt_error(), "out of memory"), "%s", nmt_error());
    /* TER only for short texts (2 ms a pair natively, 100 times that with comparison tracing), and
     * the sweep repeats it only for very short ones, to keep the fuzzer fast. */
    p.ter = p.hyp.len + p.ref.len < 64;
    if (scored == 0) fuzz_alloc_sweep(score, &p, 64);
    free(p.hyp.s);
    free(p.ref.s);
    return 0;
}
