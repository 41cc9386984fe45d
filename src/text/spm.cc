/* spm: the extern "C" shim over SentencePiece, the project's only C++ file.
 *
 * Nothing C++ crosses the boundary: every entry point catches every exception and turns it, like every
 * non-OK util::Status, into nmt_error_set(). Training reads the corpus through our own
 * SentenceIterator (so an unreadable file or invalid UTF-8 is reported as "file:line", and file names
 * may contain commas), asks SentencePiece for the serialized model instead of letting it write files,
 * and writes PREFIX.model and PREFIX.vocab atomically itself. The random seed is fixed, so the same
 * corpus and options give the same vocabulary.
 */
extern "C" {
#include "text/spm.h"
#include "base/hash.h"
#include "base/input.h"
#include "base/io.h"
#include "text/vocab.h"
#include "base/utf8.h"
#include "base/util.h"
}

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <unistd.h>
#include <unordered_map>
#include <vector>

struct nmt_spm {
    sentencepiece::SentencePieceProcessor processor;
    uint64_t fingerprint; /* nmt_hash_bytes of the model file */
};

namespace {

/* The special pieces nmt's vocabularies reserve, at the ids of vocab.h. */
const char *const kPadPiece = "<pad>", *const kUnkPiece = "<unk>", *const kBosPiece = "<s>", *const kEosPiece = "</s>";
const unsigned kTrainingSeed = 1;
const size_t kMaxModelBytes = (size_t)256 << 20; /* a million pieces take about 30 MB */

/* SentencePiece's failed checks read "./src/x.cc(660) [condition] message": keep only the message, or
 * say `unsaid` when there is none (a model that does not parse fails such a check without one). */
int status_error(const sentencepiece::util::Status &status, const char *what, const char *unsaid = "failed") {
    const char *message = status.error_message();
    const char *check = strstr(message, ") [");
    const char *end = check ? strstr(check, "] ") : nullptr;
    const char *said = end ? end + 2 : message;
    return nmt_error_set("%s: %s", what, said[0] ? said : unsaid);
}

/* Every line of every input file, in order; empty lines are skipped (they hold no pieces). */
class CorpusIterator : public sentencepiece::SentenceIterator {
  public:
    CorpusIterator(const char *const *paths, int count) : paths_(paths), count_(count) { Next(); }
    ~CorpusIterator() override { Close(); }
    bool done() const override { return done_; }
    const std::string &value() const override { return value_; }
    long sentences() const { return sentences_; }
    sentencepiece::util::Status status() const override { return status_; }

    void Next() override {
        while (!done_) {
            if (!fp_ && !Open()) return;
            int rc = nmt_lines_next(&lines_);
            if (rc < 0) return Fail(nmt_error());
            if (rc == 0) {
                Close();
                continue;
            }
            if (lines_.len == 0) continue;
            long bad = nmt_utf8_invalid_at(lines_.line, lines_.len);
            if (bad >= 0) {
                char message[1024];
                snprintf(message, sizeof message, "%s:%ld: invalid UTF-8 at byte %ld", paths_[file_], lines_.number,
                         bad + 1);
                return Fail(message);
            }
            value_.assign(lines_.line, lines_.len);
            sentences_++;
            return;
        }
    }

  private:
    bool Open() {
        if (++file_ >= count_) {
            done_ = true;
            return false;
        }
        fp_ = nmt_input_open(paths_[file_]);
        if (!fp_) {
            Fail(nmt_error());
            return false;
        }
        nmt_lines_init(&lines_, fp_, paths_[file_]);
        return true;
    }
    void Close() {
        if (!fp_) return;
        nmt_lines_free(&lines_);
        nmt_input_close(fp_, paths_[file_]);
        fp_ = nullptr;
    }
    void Fail(const char *message) {
        status_ = sentencepiece::util::Status(sentencepiece::util::StatusCode::kInvalidArgument, message);
        done_ = true;
        Close();
    }

    const char *const *paths_;
    int count_;
    int file_ = -1;
    FILE *fp_ = nullptr;
    nmt_lines lines_{};
    std::string value_;
    long sentences_ = 0; /* non-empty lines handed out */
    bool done_ = false;
    sentencepiece::util::Status status_;
};

int check_special_ids(const sentencepiece::SentencePieceProcessor &sp, const char *path) {
    if (sp.pad_id() == NMT_PAD && sp.unk_id() == NMT_UNK && sp.bos_id() == NMT_BOS && sp.eos_id() == NMT_EOS)
        return 0;
    return nmt_error_set("%s: the SentencePiece model has pad=%d, unk=%d, bos=%d, eos=%d, but nmt needs pad=0, unk=1, "
                         "bos=2, eos=3 (train the vocabulary with `nmt vocab`)",
                         path, sp.pad_id(), sp.unk_id(), sp.bos_id(), sp.eos_id());
}

/* PREFIX.vocab: "piece<TAB>score" a line, as spm_train writes it. */
int write_vocab(const std::string &serialized, const std::string &path) {
    sentencepiece::SentencePieceProcessor sp;
    auto status = sp.LoadFromSerializedProto(serialized);
    if (!status.ok()) return status_error(status, path.c_str());
    std::string text;
    char score[32];
    for (int id = 0; id < sp.GetPieceSize(); id++) {
        snprintf(score, sizeof score, "\t%g\n", sp.GetScore(id));
        text += sp.IdToPiece(id);
        text += score;
    }
    return nmt_atomic_write(path.c_str(), text.data(), text.size());
}

int train(const nmt_spm_train_options *o) {
    if (o->num_inputs < 1) return nmt_error_set("no input files to train a vocabulary on");
    std::string prefix = o->output_prefix;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cores < 1 ? 1 : cores > 16 ? 16 : (int)cores;
    char coverage[32];
    snprintf(coverage, sizeof coverage, "%.17g", o->character_coverage);
    std::unordered_map<std::string, std::string> args = {
        {"vocab_size", std::to_string(o->vocab_size)},
        {"model_type", o->model_type ? o->model_type : "unigram"},
        {"character_coverage", coverage},
        {"input_sentence_size", std::to_string(o->input_sentence_size)},
        {"shuffle_input_sentence", "true"},
        /* SentencePiece's default of 16 threads only adds contention on a machine with fewer cores. */
        {"num_threads", std::to_string(threads)},
        {"pad_id", std::to_string(NMT_PAD)},
        {"unk_id", std::to_string(NMT_UNK)},
        {"bos_id", std::to_string(NMT_BOS)},
        {"eos_id", std::to_string(NMT_EOS)},
        {"pad_piece", kPadPiece},
        {"unk_piece", kUnkPiece},
        {"bos_piece", kBosPiece},
        {"eos_piece", kEosPiece},
        /* Global in SentencePiece: set it every time, so a quiet run does not silence a later one. */
        {"minloglevel", o->quiet ? "2" : "0"},
    };
    sentencepiece::SetRandomGeneratorSeed(kTrainingSeed);
    CorpusIterator corpus(o->inputs, o->num_inputs);
    std::string serialized;
    auto status = sentencepiece::SentencePieceTrainer::Train(args, &corpus, &serialized);
    if (!corpus.status().ok()) return nmt_error_set("%s", corpus.status().error_message());
    if (corpus.sentences() == 0)
        return nmt_error_set("no text to train a vocabulary on in %s%s: every line is empty", o->inputs[0],
                             o->num_inputs > 1 ? " and the other inputs" : "");
    if (!status.ok()) return status_error(status, "training the SentencePiece model");
    if (nmt_atomic_write((prefix + ".model").c_str(), serialized.data(), serialized.size()) < 0) return -1;
    return write_vocab(serialized, prefix + ".vocab");
}

}  // namespace

/* Runs body (an expression yielding int), turning a C++ exception into an nmt error and `failed`. */
#define NMT_SPM_GUARD(failed, body)                                                  \
    try {                                                                            \
        return body;                                                                 \
    } catch (const std::bad_alloc &) {                                               \
        nmt_error_set("out of memory in SentencePiece");                             \
    } catch (const std::exception &e) {                                              \
        nmt_error_set("SentencePiece failed: %s", e.what());                         \
    } catch (...) {                                                                  \
        nmt_error_set("SentencePiece failed with an unknown exception");             \
    }                                                                                \
    return failed

extern "C" {

int nmt_spm_train(const nmt_spm_train_options *options) { NMT_SPM_GUARD(-1, train(options)); }

/* The processor is owned by a unique_ptr until it is handed out: SentencePiece throws on some damaged
 * models (darts_clone: "zero-length key"), and the guard's catch must not leak it. */
static int load(nmt_spm **out, const char *path) {
    /* Read here, not by SentencePiece: a plain message ("cannot open: No such file or directory"), a
     * FIFO refused without blocking, and no more than kMaxModelBytes read (spm.model -> /dev/zero). */
    FILE *fp;
    size_t size;
    if (nmt_open_regular(path, &fp, &size) < 0) return -1;
    if (size > kMaxModelBytes) {
        fclose(fp);
        return nmt_error_set("%s: %zu bytes, more than a SentencePiece model can be (%zu)", path, size, kMaxModelBytes);
    }
    std::string bytes(size, '\0');
    size_t got = size ? fread(&bytes[0], 1, size, fp) : 0;
    int failed = ferror(fp);
    fclose(fp);
    if (got != size || failed) return nmt_error_set("%s: read failed: %s", path, failed ? strerror(errno) : "the file shrank");
    std::unique_ptr<nmt_spm> spm(new nmt_spm);
    auto status = spm->processor.LoadFromSerializedProto(bytes);
    if (!status.ok()) return status_error(status, path, "not a SentencePiece model (the file does not parse as one)");
    if (check_special_ids(spm->processor, path) < 0) return -1;
    spm->fingerprint = nmt_hash_bytes(bytes.data(), bytes.size());
    *out = spm.release();
    return 0;
}

static int load_guarded(nmt_spm **spm, const char *path) { NMT_SPM_GUARD(-1, load(spm, path)); }

int nmt_spm_load(nmt_spm **spm, const char *path) {
    *spm = nullptr;
    int rc = load_guarded(spm, path);
    /* An exception's message does not name the file; a status error's already does. */
    if (rc < 0 && strncmp(nmt_error(), path, strlen(path)) != 0) nmt_error_prefix("%s", path);
    return rc;
}

void nmt_spm_free(nmt_spm *spm) { delete spm; }

int nmt_spm_vocab_size(const nmt_spm *spm) { return spm->processor.GetPieceSize(); }

uint64_t nmt_spm_fingerprint(const nmt_spm *spm) { return spm->fingerprint; }

static int encode(const nmt_spm *spm, const char *text, size_t len, int32_t **ids, size_t *cap, size_t *count) {
    std::vector<int> pieces;
    auto status = spm->processor.Encode(std::string(text, len), &pieces);
    if (!status.ok()) return status_error(status, "encoding with SentencePiece");
    if (pieces.size() > *cap) {
        size_t bytes;
        if (nmt_size_mul(pieces.size(), sizeof **ids, &bytes, "encoded sentence") < 0) return -1;
        int32_t *grown = static_cast<int32_t *>(nmt_realloc(*ids, bytes));
        if (!grown) return -1;
        *ids = grown;
        *cap = pieces.size();
    }
    for (size_t i = 0; i < pieces.size(); i++) (*ids)[i] = pieces[i];
    *count = pieces.size();
    return 0;
}

int nmt_spm_encode(const nmt_spm *spm, const char *text, size_t len, int32_t **ids, size_t *cap, size_t *count) {
    *count = 0;
    NMT_SPM_GUARD(-1, encode(spm, text, len, ids, cap, count));
}

static char *decode(const nmt_spm *spm, const int32_t *ids, size_t count) {
    std::vector<int> pieces;
    pieces.reserve(count);
    int size = spm->processor.GetPieceSize();
    for (size_t i = 0; i < count; i++) {
        if (ids[i] == NMT_PAD || ids[i] == NMT_BOS || ids[i] == NMT_EOS) continue;
        if (ids[i] < 0 || ids[i] >= size) {
            nmt_error_set("cannot decode id %ld: the vocabulary has %d pieces", (long)ids[i], size);
            return nullptr;
        }
        pieces.push_back(ids[i]);
    }
    std::string text;
    auto status = spm->processor.Decode(pieces, &text);
    if (!status.ok()) {
        status_error(status, "decoding with SentencePiece");
        return nullptr;
    }
    char *out = static_cast<char *>(nmt_malloc(text.size() + 1));
    if (out) memcpy(out, text.c_str(), text.size() + 1);
    return out;
}

char *nmt_spm_decode(const nmt_spm *spm, const int32_t *ids, size_t count) {
    NMT_SPM_GUARD(nullptr, decode(spm, ids, count));
}

const char *nmt_spm_piece(const nmt_spm *spm, int32_t id) {
    if (id < 0 || id >= spm->processor.GetPieceSize()) return "";
    return spm->processor.IdToPiece(id).c_str();
}

}  // extern "C"
