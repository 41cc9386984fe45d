/* nmt.h: the public C API of nmt -- translation with a trained model directory, text in and text out,
 * corpus metrics exactly as sacreBLEU computes them, and training from a YAML config.
 *
 * This is the only header a program needs: #include <nmt/nmt.h> and link with libnmt (its
 * dependencies: OpenBLAS, SentencePiece, libyaml, utf8proc, pthreads, libm). Every type is opaque or a
 * plain struct of options; nothing here exposes nmt's internal headers.
 *
 * Translation. A model directory is what `nmt train` writes (model.safetensors, spm.model and
 * config.yaml). Open it once into an engine, then translate batches of raw UTF-8 lines: SentencePiece
 * encoding, batched beam search and decoding back to text all happen inside. A line's translation does
 * not depend on the other lines of its call (batches are row-invariant), and equals what
 * `nmt translate` prints for it with the same options.
 *
 *     nmt_engine_options o = nmt_engine_options_default();   // beam 5, alpha 0.6, lines of <= 1000 pieces, ...
 *     o.n_best = 3;
 *     nmt_engine *e;
 *     if (nmt_engine_open(&e, "runs/quickstart", &o) < 0) { fprintf(stderr, "%s\n", nmt_last_error()); ... }
 *     const char *lines[] = {"the cat sees a dog", "big red house"};
 *     nmt_result *r;
 *     if (nmt_engine_translate(e, 2, lines, &r) < 0) ...;
 *     puts(nmt_result_text(r, 0));                          // best translation of line 0
 *     for (int k = 0; k < nmt_result_hypotheses(r, 1); k++)  // n-best of line 1, best first
 *         printf("%f %s\n", nmt_result_score(r, 1, k), nmt_result_hypothesis(r, 1, k));
 *     nmt_result_free(r);
 *     nmt_engine_close(e);
 *
 * Alignment (o.alignment = 1): for each target piece j of a hypothesis, the source piece i that the
 * last decoder layer attends to most (heads averaged), as `nmt translate --print-alignment` prints it
 * (pairs "i-j"); the attention matrix itself and the pieces are there too, e.g. to draw a heat map.
 *
 * Threads. nmt_engine_translate, nmt_engine_translate_from, nmt_engine_translate_with and
 * nmt_engine_logprob may be called from
 * several threads at once, on one engine or on several: the calls on one engine take turns (each
 * already uses o.threads threads for its batches), and the threads of all engines are one pool. The
 * thread count is process-wide: the last engine opened sets it. Open engines from one thread while no
 * other thread uses an engine. nmt_engine_close waits for the calls in flight on the engine and makes
 * those that arrive while it waits fail ("the engine is being closed"); no call may begin after it
 * returned. A streaming callback (nmt_stream_callback) runs on the engine's decoding threads during its
 * call, one call at a time. The nmt_result_* readers, nmt_corpus_* and nmt_version may run on any
 * thread at any time; several threads may read one result. Errors are per thread (below).
 *
 * Words. "score" names one thing here: a hypothesis' rank, its log-probability divided by the length
 * penalty (nmt_result_score). The model's probability of a given translation is a log-probability
 * (nmt_engine_logprob, nmt_result_logprob), and BLEU, chrF and TER are corpus metrics
 * (nmt_corpus_metric).
 *
 * Lifetimes. The caller owns what it passes in: the lines, the options and the paths are read during
 * the call only (nmt_translate_options and everything it points to included). What a call returns
 * through a pointer belongs to the library and stays valid:
 *   - an engine (nmt_engine_open), and the strings of nmt_engine_get_options and
 *     nmt_engine_*_language: until nmt_engine_close;
 *   - a result (nmt_engine_translate*): until nmt_result_free, its texts, scores, alignments and
 *     attention with it, whether or not its engine is still open -- except its pieces
 *     (nmt_result_*_pieces), which are the engine's vocabulary: until nmt_result_free or
 *     nmt_engine_close, whichever comes first;
 *   - nmt_last_error's message: until the calling thread's next call into the library;
 *   - nmt_version: always.
 * Free a result and close an engine once each (NULL is accepted and does nothing); never free(3)
 * what the library returns. An nmt_corpus_metric is the caller's struct, filled in.
 *
 * Errors. Every function that can fail returns a negative value when it does and sets, for the
 * calling thread, a message read with nmt_last_error() -- it names the file, line or field that is
 * wrong -- and a status read with nmt_last_status(): what kind of failure it was (nmt_status), for a
 * program to act on without reading the message. Read them before the thread calls the library again.
 *
 * Example:
 *     // translate: a model directory as argument, sentences on stdin, translations on stdout.
 *     #include <nmt/nmt.h>
 *
 *     #include <stdio.h>
 *     #include <stdlib.h>
 *     #include <string.h>
 *
 *     int main(int argc, char **argv) {
 *         if (argc != 2) {
 *             fprintf(stderr, "usage: %s MODEL_DIR < sentences\n", argv[0]);
 *             return 2;
 *         }
 *         nmt_engine_options options = nmt_engine_options_default();
 *         options.threads = 1;
 *         nmt_engine *engine;
 *         if (nmt_engine_open(&engine, argv[1], &options) < 0) {
 *             fprintf(stderr, "%s\n", nmt_last_error());
 *             return 1;
 *         }
 *         char line[4096];
 *         int status = 0;
 *         while (status == 0 && fgets(line, sizeof line, stdin)) {
 *             line[strcspn(line, "\n")] = '\0';
 *             const char *lines[1] = {line};
 *             nmt_result *result;
 *             if (nmt_engine_translate(engine, 1, lines, &result) < 0) {
 *                 fprintf(stderr, "%s\n", nmt_last_error());
 *                 status = 1;
 *                 break;
 *             }
 *             printf("%s\n", nmt_result_text(result, 0));
 *             nmt_result_free(result);
 *         }
 *         nmt_engine_close(engine);
 *         return status;
 *     }
 */
#ifndef NMT_NMT_H
#define NMT_NMT_H

#include <signal.h>
#include <stddef.h>

/* NMT_API marks the functions of this header: building libnmt (NMT_BUILD), they are its exported
 * symbols, while everything else in the library is compiled with hidden visibility; for a program
 * including this header it expands to nothing. */
#if defined(NMT_BUILD) && defined(__GNUC__)
#define NMT_API __attribute__((visibility("default")))
#else
#define NMT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library ("0.1.0"). */
NMT_API const char *nmt_version(void);

/* The calling thread's last error message ("" when none). */
NMT_API const char *nmt_last_error(void);

/* The kind of a failure (ggml's way: 0 is success, failures are negative, so a program that tests
 * `< 0` keeps working as kinds are added). */
typedef enum nmt_status {
    NMT_STATUS_OK = 0,         /* no failure on this thread yet */
    NMT_STATUS_FAILED = -1,    /* what the message says is wrong: a model directory, a config, a corpus, an
                                * input line, an argument or option out of its range (the message names it) */
    NMT_STATUS_NO_MEMORY = -2, /* memory ran out (or a size asked for does not fit in memory at all) */
    NMT_STATUS_IO = -3,        /* the system would not open, read, write or list a file or directory
                                * (missing, no permission, a full disk, not a regular file) */
} nmt_status;

/* The status of the calling thread's last failure (NMT_STATUS_OK when none): the kind of what
 * nmt_last_error() reports. */
NMT_API nmt_status nmt_last_status(void);

/* ---- Translation ---- */

typedef struct nmt_engine nmt_engine; /* a loaded model directory and its translator */
typedef struct nmt_result nmt_result; /* the translations of one nmt_engine_translate call */

typedef struct nmt_engine_options {
    int beam_size;           /* K (5); 1 with greedy */
    int n_best;              /* hypotheses kept per line, 1..K (1) */
    int greedy;              /* 1: greedy search, the fastest (0) */
    double length_penalty;   /* GNMT alpha: score = logprob / ((5 + |y|) / 6)^alpha (0.6) */
    double max_length_ratio; /* at most ratio * source pieces + 10 target pieces (2) */
    int threads;             /* threads for decoding (0: the CPUs this process may use) */
    const char *precision;   /* matrix products: NULL (the default) runs the model as it was written: "int8"
                              * for a directory of `nmt convert --precision int8` (where the CPU has int8
                              * products), else "fp32"; or "fp32", "bf16" (AVX512_BF16 CPUs), "int8"
                              * (AVX2 or AVX-512 VNNI CPUs; weights and activations quantized per row) or
                              * "auto" (the fastest of those here, measured when the engine opens) */
    int max_batch;           /* lines decoded together (64) */
    int max_input_length;    /* source pieces per line, and fewer where the model's learned positions end
                              * (1000; 0 means the default) */
    int crop;                /* a longer line: 1 = cropped to max_input_length, 0 = an error (0) */
    int alignment;           /* 1: compute alignments and attention (0) */
    int sampling;            /* 1: draw each piece from the model's distribution instead of searching
                              * (back-translation; no beam; n_best samples a line, best score first) (0) */
    int sampling_topk;       /* with sampling: from the k most probable pieces only (0: all) */
    double sampling_topp;    /* with sampling: from the fewest most probable pieces holding this
                              * probability, in (0, 1] (1: all) */
    double temperature;      /* with sampling: the log-probabilities divided by it first (1) */
    unsigned long long seed; /* with sampling: the draws' seed (1); a line's draws depend on the seed
                              * and its line number (nmt_engine_translate_from) only */
    int batch_tokens;        /* at most this many padded source pieces in a batch (8192) */
    int shortlist;           /* 1: the output layer scores only the candidates of MODEL_DIR/shortlist.bin
                              * (`nmt shortlist`); a line's translation can then depend on its batch (0) */
    double repetition_penalty; /* a piece already in the hypothesis has its logit divided by it (multiplied
                              * where negative), as CTranslate2's; in (0, 100] (1: off) */
    int no_repeat_ngram_size; /* no n-gram of this many pieces twice in a hypothesis, as fairseq's (0: off) */
    int loop_guard;          /* end a hypothesis stuck repeating one 1..4-gram of pieces more than this
                              * many times in a row (4; 0: off) */
    int confidence;          /* 1: each hypothesis's alternatives (nmt_result_confidence) (0) */
} nmt_engine_options;

/* The defaults, the library's one set (those of `nmt translate`). */
NMT_API nmt_engine_options nmt_engine_options_default(void);

/* Opens a model directory, or a model file in one, or a checkpoint DIR/checkpoints/step-N.safetensors
 * (its vocabulary from DIR); *out is NULL on failure. */
NMT_API int nmt_engine_open(nmt_engine **out, const char *model_dir, const nmt_engine_options *options);
NMT_API void nmt_engine_close(nmt_engine *engine);
/* The options in effect (threads and precision resolved). */
NMT_API const nmt_engine_options *nmt_engine_get_options(const nmt_engine *engine);
/* The model's language codes ("en", "de"): data.src_lang and data.tgt_lang of the directory's
 * config.yaml, which default to the suffixes of the training corpus files where those are ISO 639-1
 * codes (train.en, train.de); NULL when not recorded. */
NMT_API const char *nmt_engine_source_language(const nmt_engine *engine);
NMT_API const char *nmt_engine_target_language(const nmt_engine *engine);

/* Translates lines[0..count) (UTF-8, without '\n'; an empty line gives an empty translation) into a
 * new *out (free it with nmt_result_free). Invalid UTF-8 or an over-long line without crop fails the
 * whole call, naming the line ("line 3: invalid UTF-8 at byte 7"). */
NMT_API int nmt_engine_translate(nmt_engine *engine, int count, const char *const *lines, nmt_result **out);
/* The same for lines numbered first_line, first_line + 1, ... (nmt_engine_translate numbers them
 * from 0): with sampling, line n is drawn as `nmt translate --sampling` draws line n of a file (from
 * 0), so that a text translated in parts is drawn as the whole. */
NMT_API int nmt_engine_translate_from(nmt_engine *engine, unsigned long long first_line, int count,
                                      const char *const *lines, nmt_result **out);

/* ---- Per-call controls: options, target prefixes, constraints, glossaries, streaming ---- */

/* Receives the translation of one line as it is decided (nmt_translate_options.stream). `text`
 * (UTF-8, NUL-terminated, valid during the call only) continues what was given before for the
 * line, `line` its index in the call's lines (from 0); the texts of a line joined are its best
 * translation, nmt_result_text. Each line gets exactly one call with final = 1 (its text may be
 * empty), an empty line included; calls with final = 0 come as the search decides pieces (greedy:
 * each piece; beam: the pieces every candidate for the best translation shares), holding back
 * trailing spaces and incomplete characters until they are settled. The callback runs on the
 * engine's decoding threads while the call is in flight, never on two threads at once (the
 * engine serialises the calls), and the calls of one line come in order. It must not call the
 * library with the same engine. When the call fails, the callbacks stop where they were. */
typedef void (*nmt_stream_callback)(void *user, int line, const char *text, int final);

typedef struct nmt_translate_options {
    /* The options of this call, or NULL for the engine's (nmt_engine_get_options). Those of the
     * search apply per call: beam_size, n_best, greedy, length_penalty, max_length_ratio,
     * alignment, sampling and its fields, batch_tokens, repetition_penalty, no_repeat_ngram_size,
     * loop_guard, confidence, crop and max_input_length (bounded by the engine's); threads,
     * precision, max_batch and shortlist stay the engine's. A call with options other than the
     * engine's costs the making of the search anew (no model is read again). */
    const nmt_engine_options *options;
    unsigned long long first_line;    /* lines are numbered from it (nmt_engine_translate_from) (0) */
    /* NULL, or [count]: every translation of line i starts with target_prefix[i] (its text as the
     * target vocabulary encodes it; NULL or "": none), as `nmt translate --prefix` (NULL) */
    const char *const *target_prefix;
    /* NULL, or [count]: line i's constraint phrases, a NULL-terminated list (NULL: none): every
     * translation holds each phrase whole, as `nmt translate --constraints` (at most 64 a line;
     * beam or greedy search only, not sampling or a shortlist) (NULL) */
    const char *const *const *constraints;
    /* [2 * glossary_size]: a source term and its target term for each entry; the target term of
     * each entry whose source term occurs in a line (between word boundaries, case ignored unless
     * glossary_case) is one more constraint of that line, as `nmt translate --glossary` (NULL, 0) */
    const char *const *glossary;
    int glossary_size;
    int glossary_case;                /* 1: source terms match only with their case (0) */
    nmt_stream_callback stream;       /* each line's translation as it is decided, or NULL (NULL); not
                                       * with sampling and n_best > 1 */
    void *stream_user;                /* passed to stream */
} nmt_translate_options;

/* No controls: the engine's options, lines numbered from 0, no prefix, constraint or stream. */
NMT_API nmt_translate_options nmt_translate_options_default(void);

/* nmt_engine_translate with the controls of `call` (NULL: nmt_translate_options_default()). Lines,
 * prefixes and phrases are UTF-8; a line's prefix and phrases together are bounded as its source is
 * (max_input_length pieces). An empty line stays empty, whatever its controls. A line
 * without a prefix, constraints or glossary terms is translated exactly as nmt_engine_translate_from
 * translates it with the same options. Errors name the line ("line 2: constraint 1: ..."). */
NMT_API int nmt_engine_translate_with(nmt_engine *engine, int count, const char *const *lines,
                                      const nmt_translate_options *call, nmt_result **out);

/* Forced decoding: out[i] = the natural-log probability of targets[i] (its pieces and the end of
 * sentence) given sources[i], for i < count, as `nmt score` writes it (each side bounded like a line
 * of nmt_engine_translate: cropped with crop, an error naming the line without). */
NMT_API int nmt_engine_logprob(nmt_engine *engine, int count, const char *const *sources,
                               const char *const *targets, double *out);

NMT_API void nmt_result_free(nmt_result *result);
/* Lines translated. */
NMT_API int nmt_result_count(const nmt_result *result);
/* The best translation of line i. */
NMT_API const char *nmt_result_text(const nmt_result *result, int i);
/* Hypotheses of line i (n_best, or fewer when the search found fewer distinct ones), best first. */
NMT_API int nmt_result_hypotheses(const nmt_result *result, int i);
/* Hypothesis k of line i: its text, its score (the rank: log-probability / length penalty) and its
 * natural-log probability (pieces + end of sentence; pieces alone for one cut at the maximum length). */
NMT_API const char *nmt_result_hypothesis(const nmt_result *result, int i, int k);
NMT_API double nmt_result_score(const nmt_result *result, int i, int k);
NMT_API double nmt_result_logprob(const nmt_result *result, int i, int k);
/* The alignment of hypothesis k of line i: returns the number of pairs n and sets *pairs to
 * [2 * n] ints, (source piece, target piece) for each target piece in order; 0 without alignment. */
NMT_API int nmt_result_alignment(const nmt_result *result, int i, int k, const int **pairs);
/* The confidence of hypothesis k of line i: *mean_logprob, its log-probability per decided token
 * (pieces and end of sentence, or pieces alone for one cut at the maximum length), and
 * *alternatives, exp of the mean entropy of the distributions its tokens were chosen from (the
 * number of equally likely choices the model saw at a typical step; 0 unless the engine's
 * confidence option is 1). Returns 0, or -1 for no such hypothesis. */
NMT_API int nmt_result_confidence(const nmt_result *result, int i, int k, double *mean_logprob,
                                  double *alternatives);
/* The source pieces of line i ("▁the"), *count of them: the vocabulary's strings, valid while the
 * engine is open (as are the target pieces). */
NMT_API const char *const *nmt_result_source_pieces(const nmt_result *result, int i, int *count);
/* The target pieces of hypothesis k of line i. */
NMT_API const char *const *nmt_result_target_pieces(const nmt_result *result, int i, int k, int *count);
/* The attention of hypothesis k of line i: [(target pieces + 1) * (source pieces + 1)] weights, row j =
 * target piece j (the last row: end of sentence), columns = source pieces + end of sentence; NULL
 * without alignment or for an empty line. */
NMT_API const float *nmt_result_attention(const nmt_result *result, int i, int k);

/* ---- Corpus metrics (sacreBLEU 2.x defaults: 13a tokenization, exponential smoothing, chrF2, TER) ---- */

typedef struct nmt_corpus_metric {
    double value;         /* 0..100 (TER: edits per 100 reference words, can exceed 100) */
    char name[32];        /* "BLEU", "chrF2", "TER" */
    char signature[256];  /* sacreBLEU's signature, "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:..." */
} nmt_corpus_metric;

/* Corpus metrics of hyps[0..count) against nrefs references per line: refs[r * count + i] is
 * reference r of line i. */
NMT_API int nmt_corpus_bleu(int count, const char *const *hyps, int nrefs, const char *const *refs,
                            nmt_corpus_metric *out);
NMT_API int nmt_corpus_chrf(int count, const char *const *hyps, int nrefs, const char *const *refs,
                            nmt_corpus_metric *out);
NMT_API int nmt_corpus_ter(int count, const char *const *hyps, int nrefs, const char *const *refs,
                           nmt_corpus_metric *out);

/* The options of a corpus metric: the arguments of sacreBLEU's corpus_bleu, corpus_chrf and
 * corpus_ter (each metric reads its own), with sacreBLEU's defaults in nmt_corpus_options_default(). */
typedef struct nmt_corpus_options {
    const char *tokenize;      /* BLEU: "13a", "none", "intl", "char" or "zh" (NULL: 13a) */
    int lowercase;             /* BLEU and chrF: compare lowercased text (0) */
    const char *smooth_method; /* BLEU: "exp", "floor", "add-k" or "none" (NULL: exp) */
    double smooth_value;       /* BLEU: floor's or add-k's value; < 0: the method's default, 0.1 or 1 (-1) */
    int use_effective_order;   /* BLEU: leave out the orders without a hypothesis n-gram (0) */
    int char_order;            /* chrF: character n-gram orders (6) */
    int word_order;            /* chrF: word n-gram orders (0; 2 is chrF++) */
    int beta;                  /* chrF: recall's weight (2) */
    int whitespace;            /* chrF: whitespace is part of the character n-grams (0) */
    int eps_smoothing;         /* chrF: sacreBLEU's eps smoothing instead of chrF++'s effective order (0) */
    int normalized;            /* TER: normalize the text first (0) */
    int no_punct;              /* TER: remove punctuation (0) */
    int asian_support;         /* TER: split Asian characters (0) */
    int case_sensitive;        /* TER (0) */
} nmt_corpus_options;

/* sacreBLEU's defaults. */
NMT_API nmt_corpus_options nmt_corpus_options_default(void);

/* What a corpus score holds besides its value: BLEU's numbers, as sacreBLEU's BLEUScore has them. */
typedef struct nmt_corpus_details {
    char verbose[160];    /* what sacreBLEU's str() prints after the score: BLEU's "p1/p2/p3/p4 (BP = 1.000
                           * ratio = 1.000 hyp_len = 7 ref_len = 7)"; "" for chrF and TER */
    int order;            /* BLEU: the n-gram orders below (4); 0 for chrF and TER */
    double counts[4];     /* BLEU: matched n-grams of each order (after add-k smoothing, as sacreBLEU's) */
    double totals[4];     /* BLEU: hypothesis n-grams of each order */
    double precisions[4]; /* BLEU: the precisions in percent */
    double bp;            /* BLEU: the brevity penalty */
    double ratio;         /* BLEU: sys_len / ref_len (0 when ref_len is 0) */
    long sys_len, ref_len;/* BLEU: words of the hypotheses and of the closest references */
} nmt_corpus_details;

/* The corpus metric `metric` ("bleu", "chrf" or "ter") of hyps against refs as nmt_corpus_bleu takes
 * them, with `options` (NULL: the defaults); details (or NULL) receives BLEU's numbers. Invalid
 * options are an error naming the option. */
NMT_API int nmt_corpus_score(const char *metric, int count, const char *const *hyps, int nrefs,
                             const char *const *refs, const nmt_corpus_options *options, nmt_corpus_metric *out,
                             nmt_corpus_details *details);

/* ---- Training ---- */

/* Trains as `nmt train CONFIG [--set k=v ...]` does (resuming from the output directory's newest
 * checkpoint): overrides is a NULL-terminated list of "section.key=value" (or NULL), threads 0 = two,
 * quiet = 0 prints progress on stderr, stop (or NULL) ends the run cleanly when it becomes nonzero
 * (e.g. from a signal handler). Returns 0 when training ended normally. */
NMT_API int nmt_train_config(const char *config_path, const char *const *overrides, int threads, int quiet,
                             volatile sig_atomic_t *stop);

#ifdef __cplusplus
}
#endif

#endif
