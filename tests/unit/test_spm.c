/* Tests of spm: train a ~100-piece vocabulary on a corpus generated here, check the reserved ids and
 * pieces, encode -> decode round trips, unknown characters, determinism, silence when quiet, and the
 * refusal of models that are not nmt's; subword sampling against the exact distribution. */
#include "base/io.h"
#include "model/model.h"
#include "text/spm.h"
#include "base/util.h"
#include "testing.h"

#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes `lines` sentences to dir/name and returns the path: "the" followed by 2..9 words, each two or
 * three syllables chosen by a fixed LCG (about 4000 distinct words, enough for 100 pieces), plus a few
 * words with non-ASCII letters. */
static char *write_corpus(const char *name, int lines, uint32_t seed) {
    static const char *const syllables[] = {"ka", "lo", "mi", "ne", "ru", "ta", "sho", "ber", "gen", "ü",
                                            "ße", "ach", "ing", "ter", "an", "el"};
    char *path = nmt_path_join(nmt_test_tmpdir, name);
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    uint32_t state = seed;
#define NEXT() (state = state * 1664525u + 1013904223u, state >> 16)
    for (int i = 0; i < lines; i++) {
        int n = 2 + (int)(NEXT() % 8);
        fputs("the", fp);
        for (int w = 0; w < n; w++) {
            fputc(' ', fp);
            for (int k = 2 + (int)(NEXT() % 2); k > 0; k--) fputs(syllables[NEXT() % 16], fp);
        }
        fputs(i % 50 == 0 ? "\n\n" : "\n", fp); /* some empty lines, which training skips */
    }
#undef NEXT
    fclose(fp);
    return path;
}

/* Trains PREFIX.model on two generated files; returns PREFIX (to free). */
static char *train(const char *type, int quiet) {
    char *a = write_corpus("a.txt", 120, 1), *b = write_corpus("b,with comma.txt", 120, 2);
    const char *inputs[] = {a, b};
    char *prefix = nmt_path_join(nmt_test_tmpdir, type);
    nmt_spm_train_options o = {.inputs = inputs, .num_inputs = 2, .vocab_size = 100, .model_type = type,
                               .character_coverage = 1.0, .input_sentence_size = 0, .output_prefix = prefix,
                               .quiet = quiet};
    ck_assert_msg(nmt_spm_train(&o) == 0, "%s", nmt_error());
    free(a);
    free(b);
    return prefix;
}

static nmt_spm *load(const char *prefix) {
    char path[512];
    snprintf(path, sizeof path, "%s.model", prefix);
    nmt_spm *spm;
    ck_assert_msg(nmt_spm_load(&spm, path) == 0, "%s", nmt_error());
    return spm;
}

static void check_model(const char *type) {
    char *prefix = train(type, 1);
    nmt_spm *spm = load(prefix);
    ck_assert_int_eq(nmt_spm_vocab_size(spm), 100);
    ck_assert_str_eq(nmt_spm_piece(spm, NMT_PAD), "<pad>");
    ck_assert_str_eq(nmt_spm_piece(spm, NMT_UNK), "<unk>");
    ck_assert_str_eq(nmt_spm_piece(spm, NMT_BOS), "<s>");
    ck_assert_str_eq(nmt_spm_piece(spm, NMT_EOS), "</s>");
    ck_assert_str_eq(nmt_spm_piece(spm, -1), "");
    ck_assert_str_eq(nmt_spm_piece(spm, 100), "");

    /* Round trips, including a sentence never seen in training. */
    const char *sentences[] = {"the kalo mine rutaßeü", "the shoberach gening", "elan terachüße kaka the"};
    int32_t *ids = NULL;
    size_t cap = 0, count = 0;
    for (int s = 0; s < 3; s++) {
        ck_assert_int_eq(nmt_spm_encode(spm, sentences[s], strlen(sentences[s]), &ids, &cap, &count), 0);
        ck_assert_uint_gt(count, 0);
        for (size_t i = 0; i < count; i++) ck_assert(ids[i] > NMT_EOS && ids[i] < 100);
        char *text = nmt_spm_decode(spm, ids, count);
        ck_assert_str_eq(text, sentences[s]);
        free(text);
    }
    /* The pieces of "the" spell "▁the" (U+2581 marks the word boundary). */
    ck_assert_int_eq(nmt_spm_encode(spm, "the", 3, &ids, &cap, &count), 0);
    char spelled[64] = "";
    for (size_t i = 0; i < count; i++) strcat(spelled, nmt_spm_piece(spm, ids[i]));
    ck_assert_str_eq(spelled, "\xe2\x96\x81the");
    size_t the_count = count;
    /* bos, eos and padding are skipped by decode; the length argument is honoured. */
    int32_t framed[16] = {NMT_BOS};
    memcpy(framed + 1, ids, count * sizeof *ids);
    framed[count + 1] = NMT_EOS;
    framed[count + 2] = NMT_PAD;
    char *text = nmt_spm_decode(spm, framed, count + 3);
    ck_assert_str_eq(text, "the");
    free(text);
    ck_assert_int_eq(nmt_spm_encode(spm, "the kalo", 3, &ids, &cap, &count), 0);
    ck_assert_uint_eq(count, the_count);
    /* A character absent from the corpus becomes <unk>, decoded as SentencePiece's " ⁇ ". */
    ck_assert_int_eq(nmt_spm_encode(spm, "ж", strlen("ж"), &ids, &cap, &count), 0);
    ck_assert_int_ge(count, 1);
    int unk = 0;
    for (size_t i = 0; i < count; i++) unk += ids[i] == NMT_UNK;
    ck_assert_int_eq(unk, 1);
    /* A piece joins the word before it exactly when it lacks the word-start mark and starts with a
     * letter; special ids never join. */
    int joining = 0, starting = 0;
    for (int32_t id = 0; id < 100; id++) {
        const char *piece = nmt_spm_piece(spm, id);
        const int marked = strncmp(piece, "\xe2\x96\x81", 3) == 0;
        const int letter = (piece[0] | 0x20) >= 'a' && (piece[0] | 0x20) <= 'z';
        ck_assert_int_eq(nmt_spm_joins_word(spm, id), id > NMT_EOS && !marked && (letter || (unsigned char)piece[0] >= 0x80));
        joining += nmt_spm_joins_word(spm, id);
        starting += marked;
    }
    ck_assert(joining > 0 && starting > 0);
    ck_assert_int_eq(nmt_spm_joins_word(spm, 100), 0);
    /* An id outside the vocabulary is an error, not a crash. */
    int32_t bad[1] = {100};
    ck_assert_ptr_null(nmt_spm_decode(spm, bad, 1));
    ck_assert_str_eq(nmt_error(), "cannot decode id 100: the vocabulary has 100 pieces");
    free(ids);
    nmt_spm_free(spm);

    /* PREFIX.vocab: one "piece<TAB>score" line per id, in id order. */
    char path[512];
    snprintf(path, sizeof path, "%s.vocab", prefix);
    char *vocab;
    size_t size;
    ck_assert_int_eq(nmt_read_file(path, &vocab, &size), 0);
    ck_assert(strncmp(vocab, "<pad>\t0\n<unk>\t0\n<s>\t0\n</s>\t0\n", 28) == 0);
    int lines = 0;
    for (size_t i = 0; i < size; i++) lines += vocab[i] == '\n';
    ck_assert_int_eq(lines, 100);
    free(vocab);
    free(prefix);
}

START_TEST(unigram_model) { check_model("unigram"); }
END_TEST

START_TEST(bpe_model) { check_model("bpe"); }
END_TEST

/* The pieces of PREFIX.vocab with their scores: the test's own reading of the model. */
typedef struct vocab_entry {
    char piece[64];
    double score;
} vocab_entry;

static int read_vocab(const char *prefix, vocab_entry *entries, int max) {
    char path[512];
    snprintf(path, sizeof path, "%s.vocab", prefix);
    FILE *fp = fopen(path, "r");
    ck_assert_ptr_nonnull(fp);
    int n = 0;
    while (n < max && fscanf(fp, "%63[^\t]\t%lf\n", entries[n].piece, &entries[n].score) == 2) n++;
    fclose(fp);
    return n;
}

/* exp(alpha x score) summed over every segmentation of text[0 ..) into normal pieces (ids > eos), and
 * the same for those whose first piece is `first` (NULL: any). */
static double segmentations(const vocab_entry *v, int n, const char *text, double alpha, const char *first) {
    if (!*text) return 1;
    double sum = 0;
    for (int id = NMT_EOS + 1; id < n; id++) {
        size_t len = strlen(v[id].piece);
        if (strncmp(text, v[id].piece, len) != 0 || (first && strcmp(first, v[id].piece) != 0)) continue;
        sum += exp(alpha * v[id].score) * segmentations(v, n, text + len, alpha, NULL);
    }
    return sum;
}

START_TEST(sampling_draws_from_the_unigram_distribution) {
    char *prefix = train("unigram", 1);
    nmt_spm *spm = load(prefix);
    ck_assert_int_eq(nmt_spm_can_sample(spm), 1);
    int32_t *ids = NULL, *again = NULL;
    size_t cap = 0, cap2 = 0, count = 0, count2 = 0;
    /* A large alpha puts all the mass on the best segmentation: encode's. */
    const char *sentences[] = {"the kalo mine rutaßeü", "the shoberach gening", "elan terachüße kaka the",
                               "  the   ka  ", "ж the жж kalo"};
    for (int s = 0; s < 5; s++) {
        const char *text = sentences[s];
        ck_assert_int_eq(nmt_spm_encode(spm, text, strlen(text), &again, &cap2, &count2), 0);
        ck_assert_int_eq(nmt_spm_sample(spm, text, strlen(text), 1000.0, 7, &ids, &cap, &count), 0);
        ck_assert_uint_eq(count, count2);
        ck_assert_mem_eq(ids, again, count * sizeof *ids);
    }
    /* A small alpha spreads it: every draw decodes to the text, draws differ, a seed repeats its draw. */
    const char *text = sentences[0];
    int differ = 0;
    for (uint64_t seed = 1; seed <= 50; seed++) {
        ck_assert_int_eq(nmt_spm_sample(spm, text, strlen(text), 0.1, seed, &ids, &cap, &count), 0);
        char *decoded = nmt_spm_decode(spm, ids, count);
        ck_assert_str_eq(decoded, text);
        free(decoded);
        ck_assert_int_eq(nmt_spm_sample(spm, text, strlen(text), 0.1, seed, &again, &cap2, &count2), 0);
        ck_assert_uint_eq(count, count2);
        ck_assert_mem_eq(ids, again, count * sizeof *ids);
        ck_assert_int_eq(nmt_spm_sample(spm, text, strlen(text), 0.1, seed + 1000, &again, &cap2, &count2), 0);
        differ += count != count2 || memcmp(ids, again, count * sizeof *ids) != 0;
    }
    ck_assert_int_gt(differ, 25);
    /* The first piece's frequency over many draws against its exact probability, summed here over
     * every segmentation of "▁kalomi" (three standard errors). */
    vocab_entry vocab[100];
    int n = read_vocab(prefix, vocab, 100);
    ck_assert_int_eq(n, 100);
    const char *word = "\xe2\x96\x81kalomi";
    const double alpha = 0.1, total = segmentations(vocab, n, word, alpha, NULL);
    const int draws = 4000;
    int checked = 0;
    for (int id = NMT_EOS + 1; id < n; id++) {
        double p = segmentations(vocab, n, word, alpha, vocab[id].piece) / total;
        if (p < 0.03) continue;
        int hits = 0;
        for (int d = 0; d < draws; d++) {
            ck_assert_int_eq(nmt_spm_sample(spm, "kalomi", 6, alpha, (uint64_t)d, &ids, &cap, &count), 0);
            hits += ids[0] == id;
        }
        double sigma = sqrt(p * (1 - p) / draws);
        ck_assert_msg(fabs((double)hits / draws - p) < 3 * sigma, "first piece %s: %d of %d draws, P = %.4f",
                      vocab[id].piece, hits, draws, p);
        checked++;
    }
    ck_assert_int_ge(checked, 2);
    /* A character no piece covers is unk, as in encoding. */
    ck_assert_int_eq(nmt_spm_sample(spm, "ж", strlen("ж"), 0.1, 3, &ids, &cap, &count), 0);
    int unk = 0;
    for (size_t i = 0; i < count; i++) unk += ids[i] == NMT_UNK;
    ck_assert_int_eq(unk, 1);
    free(ids);
    free(again);
    nmt_spm_free(spm);
    free(prefix);

    /* BPE has no distribution over segmentations to draw from. */
    prefix = train("bpe", 1);
    spm = load(prefix);
    ck_assert_int_eq(nmt_spm_can_sample(spm), 0);
    ids = NULL;
    cap = 0;
    ck_assert_int_eq(nmt_spm_sample(spm, "the", 3, 0.1, 1, &ids, &cap, &count), -1);
    ck_assert_str_eq(nmt_error(), "subword sampling needs a unigram vocabulary, not a BPE one");
    free(ids);
    nmt_spm_free(spm);
    free(prefix);
}
END_TEST

START_TEST(training_is_deterministic_and_quiet) {
    /* Capture stderr: a quiet training run prints nothing. */
    char *log = nmt_path_join(nmt_test_tmpdir, "stderr.txt");
    int saved = dup(2), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    dup2(fd, 2);
    char *first = train("unigram", 1);
    dup2(saved, 2);
    close(fd);
    close(saved);
    char *text;
    size_t size;
    ck_assert_int_eq(nmt_read_file(log, &text, &size), 0);
    ck_assert_msg(size == 0, "quiet training printed: %.200s", text);
    free(text);

    char path[512];
    snprintf(path, sizeof path, "%s.model", first);
    char *model1, *model2;
    size_t size1, size2;
    ck_assert_int_eq(nmt_read_file(path, &model1, &size1), 0);
    free(train("unigram", 1));
    ck_assert_int_eq(nmt_read_file(path, &model2, &size2), 0);
    ck_assert_uint_eq(size1, size2);
    ck_assert_mem_eq(model1, model2, size1);
    free(model1);
    free(model2);
    free(first);
    free(log);
}
END_TEST

START_TEST(foreign_models_and_bad_input_are_refused) {
    char *prefix = train("unigram", 1);
    char path[512], *model;
    size_t size;
    snprintf(path, sizeof path, "%s.model", prefix);
    ck_assert_int_eq(nmt_read_file(path, &model, &size), 0);
    /* A model whose pad piece is renamed no longer has pad=0: nmt refuses it. The first "<pad>" in the
     * serialized ModelProto is piece 0 (field 1 precedes the trainer spec). */
    char *pad = memmem(model, size, "<pad>", 5);
    ck_assert_ptr_nonnull(pad);
    pad[3] = '_';
    char *other = nmt_path_join(nmt_test_tmpdir, "other.model");
    ck_assert_int_eq(nmt_atomic_write(other, model, size), 0);
    nmt_spm *spm;
    ck_assert_int_eq(nmt_spm_load(&spm, other), -1);
    ck_assert_ptr_null(spm);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "other.model: the SentencePiece model has pad=-1, unk=1, bos=2, eos=3, "
                                              "but nmt needs pad=0, unk=1, bos=2, eos=3"));
    /* Given nmt's ids, it gains a <pad> piece at 0; the renamed one (a control piece) follows eos,
     * and every normal piece moves up one id: the same pieces for the same text. */
    char *renumbered;
    size_t renumbered_size;
    ck_assert_msg(nmt_spm_model_with_nmt_ids(other, &renumbered, &renumbered_size) == 0, "%s", nmt_error());
    char *fixed = nmt_path_join(nmt_test_tmpdir, "fixed.model");
    ck_assert_int_eq(nmt_atomic_write(fixed, renumbered, renumbered_size), 0);
    nmt_spm *original, *given;
    ck_assert_int_eq(nmt_spm_load(&original, path), 0);
    ck_assert_msg(nmt_spm_load(&given, fixed) == 0, "%s", nmt_error());
    ck_assert_int_eq(nmt_spm_vocab_size(given), nmt_spm_vocab_size(original) + 1);
    ck_assert_str_eq(nmt_spm_piece(given, NMT_PAD), "<pad>");
    ck_assert_str_eq(nmt_spm_piece(given, NMT_EOS + 1), "<pa_>");
    int32_t *a = NULL, *b = NULL;
    size_t cap_a = 0, cap_b = 0, count_a, count_b;
    ck_assert_int_eq(nmt_spm_encode(original, "the kalo mine", 13, &a, &cap_a, &count_a), 0);
    ck_assert_int_eq(nmt_spm_encode(given, "the kalo mine", 13, &b, &cap_b, &count_b), 0);
    ck_assert_uint_eq(count_a, count_b);
    for (size_t i = 0; i < count_a; i++) ck_assert_int_eq(b[i], a[i] + 1);
    free(a);
    free(b);
    nmt_spm_free(original);
    nmt_spm_free(given);
    free(renumbered);
    free(fixed);
    /* A model with nmt's ids comes back as its own bytes. */
    char *own;
    size_t own_size;
    ck_assert_int_eq(nmt_read_file(path, &own, &own_size), 0);
    ck_assert_int_eq(nmt_spm_model_with_nmt_ids(path, &renumbered, &renumbered_size), 0);
    ck_assert(renumbered_size == own_size && memcmp(renumbered, own, own_size) == 0);
    free(renumbered);
    free(own);
    /* An empty file, and a file that is not a model at all. */
    ck_assert_int_eq(nmt_atomic_write(other, "", 0), 0);
    ck_assert_int_eq(nmt_spm_load(&spm, other), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "other.model: an empty file (0 bytes), not a SentencePiece model"));
    ck_assert_int_eq(nmt_atomic_write(other, "hello", 5), 0);
    ck_assert_int_eq(nmt_spm_load(&spm, other), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "other.model: not a SentencePiece model"));
    ck_assert_int_eq(nmt_spm_model_with_nmt_ids(other, &renumbered, &renumbered_size), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "other.model: not a SentencePiece model"));
    ck_assert_int_eq(nmt_spm_load(&spm, "/nonexistent/spm.model"), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "/nonexistent/spm.model"));
    free(model);
    free(other);

    /* Training input: a missing file, invalid UTF-8 (named by file and line). */
    char *bad = nmt_path_join(nmt_test_tmpdir, "bad.txt");
    ck_assert_int_eq(nmt_atomic_write(bad, "fine\nbad \xff byte\n", 16), 0);
    const char *inputs[] = {bad};
    nmt_spm_train_options o = {.inputs = inputs, .num_inputs = 1, .vocab_size = 100, .model_type = "unigram",
                               .character_coverage = 1.0, .output_prefix = prefix, .quiet = 1};
    ck_assert_int_eq(nmt_spm_train(&o), -1);
    char want[512];
    snprintf(want, sizeof want, "%s:2: invalid UTF-8 at byte 5", bad);
    ck_assert_str_eq(nmt_error(), want);
    inputs[0] = "/nonexistent/corpus.txt";
    ck_assert_int_eq(nmt_spm_train(&o), -1);
    ck_assert_str_eq(nmt_error(), "/nonexistent/corpus.txt: cannot open: No such file or directory");
    /* A vocabulary larger than the corpus allows: named as the caller's user sets it, with the most
     * SentencePiece allows. */
    inputs[0] = bad;
    ck_assert_int_eq(nmt_atomic_write(bad, "tiny corpus\n", 12), 0);
    o.size_name = "vocab.size";
    ck_assert_int_eq(nmt_spm_train(&o), -1);
    ck_assert_msg(strncmp(nmt_error(), "vocab.size 100 is more pieces than this corpus gives: SentencePiece allows at "
                                       "most ", 79) == 0 && strstr(nmt_error(), "; set vocab.size to "),
                  "%s", nmt_error());
    free(bad);
    free(prefix);
}
END_TEST

int main(void) {
    Suite *s = suite_create("spm");
    TCase *tc = tcase_create("spm");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, unigram_model);
    tcase_add_test(tc, bpe_model);
    tcase_add_test(tc, sampling_draws_from_the_unigram_distribution);
    tcase_add_test(tc, training_is_deterministic_and_quiet);
    tcase_add_test(tc, foreign_models_and_bad_input_are_refused);
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
