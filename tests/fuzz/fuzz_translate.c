/* fuzz_translate: what `nmt translate` does with the user's lines, on arbitrary text and search
 * options: SentencePiece encoding, batched beam or greedy search with a tiny random model, n-best
 * lists, attention and alignments, and decoding back to text.
 *
 * Two models are built once (random weights; a vocabulary trained by nmt_spm_train on a few fixed
 * sentences): post-norm with learned positions and only 24 of them (so that long inputs and long
 * outputs meet the table's end), and pre-norm with rope.
 *
 * Input: byte 0: bits 0-1 beam size - 1, bit 2 greedy, bit 3 the rope model, bits 4-5 n-best
 * (clamped to the beam), bit 6 attention; byte 1: bits 0-2 batch size - 1, bits 3-7 the maximum
 * length ratio in eighths; then up to 8 lines ('\n'-separated; invalid UTF-8 bytes become '?', as the
 * CLI refuses or skips such lines).
 *
 * Properties: a failed search says why (and only the learned-position model, whose table can run
 * out, may fail); otherwise every sentence gets 1..n_best distinct hypotheses, best score first, each
 * within nmt_decode_max_length pieces of real tokens (no pad, bos or eos), with a finite log-probability
 * <= 0, attention rows that sum to 1 and alignments inside the source; each decodes to valid UTF-8;
 * the same batch searched again, and each sentence searched alone (batch size 1), gives the same
 * hypotheses.
 */
#include "fuzz.h"
#include "infer/translator.h"
#include "model/model.h"
#include "text/spm.h"
#include "base/utf8.h"

#include <math.h>

enum { MAX_LINES = 8 };

static nmt_spm *spm;
static nmt_model models[2];

static void setup(void) {
    static const char *const sentences =
        "the cat sees a dog\nbig red house\nI drink tea.\nमैं चाय पीता हूँ।\nZwei Männer spielen Schach.\n"
        "a small tree runs\nthe blue house sleeps\nचाय और पानी\n";
    const char *text = fuzz_file(0, "spm.txt", sentences, strlen(sentences));
    char prefix[160];
    snprintf(prefix, sizeof prefix, "%s/spm", fuzz_dir());
    nmt_spm_train_options o = {.inputs = &text, .num_inputs = 1, .vocab_size = 52, .model_type = "unigram",
                               .character_coverage = 1.0, .output_prefix = prefix, .quiet = 1};
    FUZZ_CHECK(nmt_spm_train(&o) == 0, "%s", nmt_error());
    char path[200];
    snprintf(path, sizeof path, "%s.model", prefix);
    FUZZ_CHECK(nmt_spm_load(&spm, path) == 0, "%s", nmt_error());
    for (int k = 0; k < 2; k++) {
        nmt_model_config c = nmt_model_config_default();
        c.vocab_size = nmt_spm_vocab_size(spm);
        c.d_model = 8;
        c.heads = 2;
        c.ffn = 8;
        c.encoder_layers = c.decoder_layers = 1;
        c.norm_position = k ? NMT_NORM_PRE : NMT_NORM_POST;
        c.positions = k ? NMT_POSITIONS_ROPE : NMT_POSITIONS_LEARNED;
        c.max_positions = 24;
        FUZZ_CHECK(nmt_model_init(&models[k], &c) == 0, "%s", nmt_error());
        nmt_model_init_weights(&models[k], 11 + (uint64_t)k);
    }
}

typedef struct batch {
    int count;
    int32_t *ids[MAX_LINES];
    int len[MAX_LINES];
} batch;

static int search(const nmt_model *m, const nmt_decode_options *o, const batch *b, nmt_translation *out) {
    nmt_translator *t;
    if (nmt_translator_create(&t, m, o) < 0) return -1;
    int rc = nmt_translator_run(t, b->count, (const int32_t *const *)b->ids, b->len, out);
    nmt_translator_free(t);
    return rc;
}

static int same_hypothesis(const nmt_hypothesis *a, const nmt_hypothesis *b) {
    return a->length == b->length && a->logprob == b->logprob && a->score == b->score &&
           (a->length == 0 || memcmp(a->tokens, b->tokens, (size_t)a->length * sizeof *a->tokens) == 0);
}

static void check_translation(const nmt_translation *t, const nmt_decode_options *o, int src_len, int vocab) {
    FUZZ_CHECK(t->count >= 1 && t->count <= o->n_best, "%d hypotheses for n-best %d", t->count, o->n_best);
    int max_length = nmt_decode_max_length(o, src_len);
    int *src_of = malloc((size_t)(max_length + 1) * sizeof *src_of);
    FUZZ_CHECK(src_of != NULL, "out of memory");
    for (int h = 0; h < t->count; h++) {
        const nmt_hypothesis *y = &t->hyps[h];
        FUZZ_CHECK(y->length >= 0 && y->length <= max_length, "hypothesis %d: %d pieces, at most %d", h, y->length,
                   max_length);
        FUZZ_CHECK(isfinite(y->logprob) && y->logprob <= 1e-9 && isfinite(y->score), "hypothesis %d: logprob %g", h,
                   y->logprob);
        FUZZ_CHECK(h == 0 || y->score <= t->hyps[h - 1].score, "hypothesis %d scores above the one before", h);
        for (int j = 0; j < y->length; j++)
            FUZZ_CHECK(y->tokens[j] >= 0 && y->tokens[j] < vocab && y->tokens[j] != NMT_PAD &&
                           y->tokens[j] != NMT_BOS && y->tokens[j] != NMT_EOS,
                       "hypothesis %d: piece %d is id %d", h, j, y->tokens[j]);
        for (int g = 0; g < h; g++)
            FUZZ_CHECK(!(y->length == t->hyps[g].length &&
                         (y->length == 0 || memcmp(y->tokens, t->hyps[g].tokens, (size_t)y->length * sizeof *y->tokens) == 0)),
                       "hypotheses %d and %d are the same", g, h);
        if (o->attention && y->attention && src_len > 0) {
            for (int j = 0; j <= y->length; j++) {
                double sum = 0;
                for (int s = 0; s <= src_len; s++) sum += y->attention[(size_t)j * (size_t)(src_len + 1) + (size_t)s];
                FUZZ_CHECK(fabs(sum - 1) < 1e-3, "hypothesis %d: attention row %d sums to %g", h, j, sum);
            }
            nmt_hypothesis_alignment(y, src_of);
            for (int j = 0; j < y->length; j++)
                FUZZ_CHECK(src_of[j] >= 0 && src_of[j] < src_len, "piece %d aligned to %d of %d", j, src_of[j], src_len);
        }
        char *text = nmt_spm_decode(spm, y->tokens, (size_t)y->length);
        FUZZ_CHECK(text != NULL, "decoding: %s", nmt_error());
        FUZZ_CHECK(nmt_utf8_invalid_at(text, strlen(text)) < 0, "a decoded hypothesis is not UTF-8");
        free(text);
    }
    free(src_of);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!spm) setup();
    if (size < 2) return 0;
    int rope = data[0] >> 3 & 1;
    const nmt_model *m = &models[rope];
    nmt_decode_options o = nmt_decode_options_default();
    o.beam_size = (data[0] & 3) + 1;
    o.greedy = data[0] >> 2 & 1;
    o.n_best = o.greedy ? 1 : 1 + (data[0] >> 4 & 3) % o.beam_size;
    o.attention = data[0] >> 6 & 1;
    o.batch_size = (data[1] & 7) + 1;
    o.max_length_ratio = (data[1] >> 3) / 8.0;
    FUZZ_CHECK(nmt_decode_options_check(&o) == 0, "%s", nmt_error());

    /* The lines: a private, valid UTF-8 copy, cut at '\n'. */
    char *text = malloc(size - 1);
    FUZZ_CHECK(text != NULL, "out of memory");
    memcpy(text, data + 2, size - 2);
    text[size - 2] = '\0';
    size_t n = size - 2, from = 0;
    long bad;
    while ((bad = nmt_utf8_invalid_at(text + from, n - from)) >= 0) {
        text[from + (size_t)bad] = '?';
        from += (size_t)bad + 1;
    }
    batch b = {0};
    size_t caps[MAX_LINES] = {0};
    for (char *line = text; line && b.count < MAX_LINES; b.count++) {
        char *end = memchr(line, '\n', (size_t)(text + n - line));
        size_t len = end ? (size_t)(end - line) : (size_t)(text + n - line), count;
        FUZZ_CHECK(nmt_spm_encode(spm, line, len, &b.ids[b.count], &caps[b.count], &count) == 0, "%s", nmt_error());
        b.len[b.count] = (int)count;
        line = end ? end + 1 : NULL;
    }

    nmt_translation out[MAX_LINES] = {0}, again[MAX_LINES] = {0};
    if (search(m, &o, &b, out) < 0) {
        FUZZ_CHECK(!rope && nmt_error()[0] != '\0', "the search failed: '%s'", nmt_error());
    } else {
        FUZZ_CHECK(search(m, &o, &b, again) == 0, "the same search failed the second time: %s", nmt_error());
        for (int i = 0; i < b.count; i++) {
            check_translation(&out[i], &o, b.len[i], m->config.vocab_size);
            FUZZ_CHECK(out[i].count == again[i].count, "sentence %d: another n-best list the second time", i);
            for (int h = 0; h < out[i].count; h++)
                FUZZ_CHECK(same_hypothesis(&out[i].hyps[h], &again[i].hyps[h]), "sentence %d: hypothesis %d changed", i, h);
            nmt_translation_free(&again[i]);
        }
        /* Each sentence alone: the same hypotheses as in the batch. */
        nmt_decode_options alone_options = o;
        alone_options.batch_size = 1;
        for (int i = 0; i < b.count; i++) {
            batch alone = {1, {b.ids[i]}, {b.len[i]}};
            nmt_translation single = {0};
            FUZZ_CHECK(search(m, &alone_options, &alone, &single) == 0, "sentence %d alone: %s", i, nmt_error());
            FUZZ_CHECK(single.count == out[i].count, "sentence %d: %d hypotheses alone, %d in the batch", i, single.count,
                       out[i].count);
            for (int h = 0; h < single.count; h++)
                FUZZ_CHECK(single.hyps[h].length == out[i].hyps[h].length &&
                               (single.hyps[h].length == 0 ||
                                memcmp(single.hyps[h].tokens, out[i].hyps[h].tokens,
                                       (size_t)single.hyps[h].length * sizeof(int32_t)) == 0),
                           "sentence %d: hypothesis %d differs alone and in a batch", i, h);
            nmt_translation_free(&single);
        }
    }
    for (int i = 0; i < b.count; i++) {
        nmt_translation_free(&out[i]);
        free(b.ids[i]);
    }
    free(text);
    return 0;
}
