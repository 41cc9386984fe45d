/* spm: the extern "C" shim over SentencePiece (C++, as langid.cc is).
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
#include "base/random.h"
#include "base/io.h"
#include "text/vocab.h"
#include "base/utf8.h"
#include "base/util.h"
}

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace {

/* One piece of a unigram model in the sampler's hash table (slot id < 0: empty). */
struct LatticePiece {
    uint64_t hash;   /* piece_hash of its bytes */
    uint32_t offset; /* its bytes: SamplingTable::bytes[offset .. offset + len) */
    uint32_t len;
    int32_t id;
    float score;     /* log probability */
};

/* A unigram model's normal pieces, found by their bytes while a lattice is built. */
struct SamplingTable {
    std::vector<LatticePiece> slots; /* open addressing, a power of two at least twice the pieces */
    std::string bytes;
    size_t max_len = 0;              /* bytes of the longest piece */
    float unknown_score = 0;         /* a character no piece covers: SentencePiece's min score - 10 */
};

/* One side's pieces of a token vocabulary (nmt_spm_tokens): id -> piece and back. */
struct TokenTable {
    std::vector<std::string> pieces;                 /* by id; "" where the side has no piece */
    std::unordered_map<std::string, int32_t> ids;
};

}  // namespace

struct nmt_spm {
    sentencepiece::SentencePieceProcessor processor;
    uint64_t fingerprint;   /* nmt_hash_bytes of the model file */
    bool unigram;           /* the model type: only a unigram model has a distribution to sample */
    SamplingTable sampling; /* built at load for a unigram model */
    bool tokens = false;    /* a token vocabulary: the tables below give the ids */
    bool splits = false;    /* with tokens: the processor splits text into pieces (else spaces do) */
    TokenTable source, target;
    /* with splits: the target side's own SentencePiece model (NULL: the processor serves both sides) */
    std::unique_ptr<sentencepiece::SentencePieceProcessor> target_processor;
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

bool has_nmt_ids(const sentencepiece::SentencePieceProcessor &sp) {
    return sp.pad_id() == NMT_PAD && sp.unk_id() == NMT_UNK && sp.bos_id() == NMT_BOS && sp.eos_id() == NMT_EOS;
}

int check_special_ids(const sentencepiece::SentencePieceProcessor &sp, const char *path) {
    if (has_nmt_ids(sp)) return 0;
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
    /* SentencePiece says "Vocabulary size too high (100). Please set it to a value <= 62." */
    const char *too_high = status.ok() ? nullptr : strstr(status.error_message(), "Vocabulary size too high");
    const char *at_most = too_high ? strstr(too_high, "<= ") : nullptr;
    if (at_most) {
        const long most = strtol(at_most + 3, nullptr, 10);
        const char *name = o->size_name ? o->size_name : "the vocabulary size";
        return nmt_error_set("%s %d is more pieces than this corpus gives: SentencePiece allows at most %ld here; set "
                             "%s to %ld or less (or train on more text)", name, o->vocab_size, most, name, most);
    }
    if (!status.ok()) return status_error(status, "training the SentencePiece model");
    if (nmt_atomic_write((prefix + ".model").c_str(), serialized.data(), serialized.size()) < 0) return -1;
    return write_vocab(serialized, prefix + ".vocab");
}

/* Grows *ids (capacity *cap) to hold n pieces. */
int reserve_ids(size_t n, int32_t **ids, size_t *cap) {
    if (n <= *cap) return 0;
    size_t bytes;
    if (nmt_size_mul(n, sizeof **ids, &bytes, "encoded sentence") < 0) return -1;
    int32_t *grown = static_cast<int32_t *>(nmt_realloc(*ids, bytes));
    if (!grown) return -1;
    *ids = grown;
    *cap = n;
    return 0;
}

/* ---- subword sampling (unigram models) ---- */

/* FNV-1a, extended one byte at a time as a lattice tries longer pieces at one position. */
const uint64_t kHashStart = 0xcbf29ce484222325ull, kHashPrime = 0x100000001b3ull;
inline uint64_t piece_hash_add(uint64_t h, unsigned char byte) { return (h ^ byte) * kHashPrime; }

/* Varint of a serialized protocol buffer at *p (advanced), or false at a malformed one. */
bool proto_varint(const unsigned char *&p, const unsigned char *end, uint64_t *value) {
    *value = 0;
    for (int shift = 0; p < end && shift < 64; shift += 7) {
        unsigned char byte = *p++;
        *value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) return true;
    }
    return false;
}

/* Skips field `key`'s value, or returns false at a malformed one; *inner = a length-delimited value. */
bool proto_skip(const unsigned char *&p, const unsigned char *end, uint64_t key, const unsigned char **inner,
                size_t *inner_len) {
    uint64_t v;
    switch (key & 7) {
    case 0: return proto_varint(p, end, &v);
    case 1: /* 64-bit */
    case 5: { /* 32-bit */
        const long width = (key & 7) == 1 ? 8 : 4;
        if (end - p < width) return false;
        p += width;
        return true;
    }
    case 2:
        if (!proto_varint(p, end, &v) || v > (uint64_t)(end - p)) return false;
        *inner = p;
        *inner_len = (size_t)v;
        p += v;
        return true;
    default: return false;
    }
}

/* The model type of a serialized ModelProto: trainer_spec (field 2) . model_type (field 3), where
 * 1 is UNIGRAM, the default when absent (sentencepiece_model.proto). The installed headers do not
 * expose the proto, so the two fields are read directly. */
bool is_unigram(const std::string &model) {
    const unsigned char *p = reinterpret_cast<const unsigned char *>(model.data()), *end = p + model.size();
    uint64_t key, type = 1;
    while (p < end && proto_varint(p, end, &key)) {
        const unsigned char *spec = nullptr;
        size_t spec_len = 0;
        if (!proto_skip(p, end, key, &spec, &spec_len)) break;
        if (key != (2 << 3 | 2) || !spec) continue;
        for (const unsigned char *q = spec, *q_end = spec + spec_len; q < q_end && proto_varint(q, q_end, &key);) {
            const unsigned char *unused;
            size_t unused_len;
            if (key == (3 << 3 | 0)) {
                if (!proto_varint(q, q_end, &type)) break;
            } else if (!proto_skip(q, q_end, key, &unused, &unused_len)) {
                break;
            }
        }
    }
    return type == 1;
}

void build_sampling_table(const sentencepiece::SentencePieceProcessor &sp, SamplingTable *t) {
    int size = sp.GetPieceSize();
    size_t slots = 16;
    while (slots < 2 * (size_t)size) slots *= 2;
    t->slots.assign(slots, LatticePiece{0, 0, 0, -1, 0});
    float min_score = 0;
    for (int id = 0; id < size; id++) {
        if (sp.IsUnknown(id) || sp.IsControl(id) || sp.IsUnused(id)) continue;
        const std::string &piece = sp.IdToPiece(id);
        if (piece.empty()) continue;
        uint64_t h = kHashStart;
        for (unsigned char c : piece) h = piece_hash_add(h, c);
        size_t slot = h & (slots - 1);
        while (t->slots[slot].id >= 0) slot = (slot + 1) & (slots - 1);
        t->slots[slot] = LatticePiece{h, (uint32_t)t->bytes.size(), (uint32_t)piece.size(), id, sp.GetScore(id)};
        t->bytes += piece;
        if (piece.size() > t->max_len) t->max_len = piece.size();
        if (sp.GetScore(id) < min_score) min_score = sp.GetScore(id);
    }
    t->unknown_score = min_score - 10.0f;
}

/* The piece whose bytes are text[0 .. len) (hash h), or nullptr. */
const LatticePiece *find_piece(const SamplingTable &t, const char *text, size_t len, uint64_t h) {
    size_t mask = t.slots.size() - 1;
    for (size_t slot = h & mask; t.slots[slot].id >= 0; slot = (slot + 1) & mask) {
        const LatticePiece &p = t.slots[slot];
        if (p.hash == h && p.len == len && memcmp(t.bytes.data() + p.offset, text, len) == 0) return &p;
    }
    return nullptr;
}

/* A lattice edge: the piece id covering normalized bytes [start, end). */
struct Edge {
    uint32_t start, end;
    int32_t id;
    double weight; /* alpha x score */
};

/* Forward-filtering backward-sampling over every segmentation of the normalized text into pieces
 * (Kudo 2018; SentencePiece's Lattice::Sample): forward[j] = log sum of exp(weights) of all paths
 * to byte j, then from the end an edge into j is drawn with probability exp(forward[start] + weight -
 * forward[j]). */
int sample(const nmt_spm *spm, const char *text, size_t len, double alpha, uint64_t seed, int32_t **ids, size_t *cap,
           size_t *count) {
    const SamplingTable &t = spm->sampling;
    /* Reused from sentence to sentence (a corpus is resampled every epoch): cleared, never shrunk. */
    thread_local struct {
        std::string normalized;
        std::vector<Edge> edges;
        std::vector<uint32_t> first, by_end, fill;
        std::vector<double> forward;
        std::vector<int32_t> drawn;
    } scratch;
    auto &normalized = scratch.normalized;
    auto &edges = scratch.edges;
    auto &first = scratch.first, &by_end = scratch.by_end, &fill = scratch.fill;
    auto &forward = scratch.forward;
    auto &drawn = scratch.drawn;
    /* The normalized text, as SentencePiece's encoder sees it: its pieces' bytes end to end (an
     * unknown piece keeps its text). */
    auto encoded = spm->processor.EncodeAsImmutableProto(std::string(text, len));
    normalized.clear();
    for (size_t i = 0; i < encoded.pieces_size(); i++) normalized += encoded.pieces((int)i).piece();
    const size_t n = normalized.size();
    const char *s = normalized.data();

    edges.clear();
    for (size_t i = 0; i < n;) {
        size_t first_char = (size_t)nmt_utf8_length((unsigned char)s[i]);
        if (first_char == 0 || first_char > n - i) first_char = 1;
        bool covered = false;
        uint64_t h = kHashStart;
        for (size_t l = 1; l <= t.max_len && i + l <= n; l++) {
            h = piece_hash_add(h, (unsigned char)s[i + l - 1]);
            if (i + l < n && ((unsigned char)s[i + l] & 0xC0) == 0x80) continue; /* inside a character */
            const LatticePiece *p = find_piece(t, s + i, l, h);
            if (!p) continue;
            edges.push_back(Edge{(uint32_t)i, (uint32_t)(i + l), p->id, alpha * p->score});
            covered |= l == first_char;
        }
        if (!covered) edges.push_back(Edge{(uint32_t)i, (uint32_t)(i + first_char), NMT_UNK, alpha * t.unknown_score});
        i += first_char;
    }
    /* Edges by end position (a counting sort), then the forward sums in byte order. */
    first.assign(n + 2, 0);
    for (const Edge &e : edges) first[e.end + 1]++;
    for (size_t j = 1; j < n + 2; j++) first[j] += first[j - 1];
    by_end.resize(edges.size());
    fill.assign(first.begin(), first.end() - 1);
    for (uint32_t k = 0; k < edges.size(); k++) by_end[fill[edges[k].end]++] = k;
    const double none = -HUGE_VAL;
    forward.assign(n + 1, none);
    forward[0] = 0;
    for (size_t j = 1; j <= n; j++) {
        double best = none;
        for (uint32_t k = first[j]; k < first[j + 1]; k++) {
            const Edge &e = edges[by_end[k]];
            if (forward[e.start] + e.weight > best) best = forward[e.start] + e.weight;
        }
        if (best == none) continue;
        double sum = 0;
        for (uint32_t k = first[j]; k < first[j + 1]; k++) {
            const Edge &e = edges[by_end[k]];
            sum += exp(forward[e.start] + e.weight - best);
        }
        forward[j] = best + log(sum);
    }
    drawn.clear();
    uint64_t rng = seed;
    for (size_t j = n; j > 0;) {
        double u = (double)(nmt_random_next(&rng) >> 11) * 0x1p-53, acc = 0;
        const Edge *chosen = nullptr;
        for (uint32_t k = first[j]; k < first[j + 1]; k++) {
            const Edge &e = edges[by_end[k]];
            if (forward[e.start] == none) continue;
            chosen = &e;
            acc += exp(forward[e.start] + e.weight - forward[j]);
            if (u < acc) break;
        }
        if (!chosen) return nmt_error_set("sampling a segmentation: no piece ends at byte %zu", j);
        /* Adjacent unknown characters are one unk, as SentencePiece's encoder makes them. */
        if (chosen->id != NMT_UNK || drawn.empty() || drawn.back() != NMT_UNK) drawn.push_back(chosen->id);
        j = chosen->start;
    }
    if (reserve_ids(drawn.size(), ids, cap) < 0) return -1;
    for (size_t i = 0; i < drawn.size(); i++) (*ids)[i] = drawn[drawn.size() - 1 - i];
    *count = drawn.size();
    return 0;
}

}  // namespace

/* Runs body (an expression yielding int), turning a C++ exception into an nmt error and `failed`. */
#define NMT_SPM_GUARD(failed, body)                                                  \
    try {                                                                            \
        return body;                                                                 \
    } catch (const std::bad_alloc &) {                                               \
        nmt_error_set_kind(NMT_ERROR_NO_MEMORY, "out of memory in SentencePiece");   \
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
/* A model file's bytes. Read here, not by SentencePiece: a plain message ("cannot open: No such file or
 * directory"), a FIFO refused without blocking, and no more than kMaxModelBytes read (spm.model ->
 * /dev/zero). */
static int read_model(const char *path, std::string *bytes) {
    FILE *fp;
    size_t size;
    if (nmt_open_regular(path, &fp, &size) < 0) return -1;
    if (size > kMaxModelBytes) {
        fclose(fp);
        return nmt_error_set("%s: %zu bytes, more than a SentencePiece model can be (%zu)", path, size, kMaxModelBytes);
    }
    if (size == 0) {
        fclose(fp);
        return nmt_error_set("%s: an empty file (0 bytes), not a SentencePiece model", path);
    }
    bytes->assign(size, '\0');
    size_t got = fread(&(*bytes)[0], 1, size, fp);
    int failed = ferror(fp);
    fclose(fp);
    if (got != size || failed) return nmt_error_set("%s: read failed: %s", path, failed ? strerror(errno) : "the file shrank");
    return 0;
}

static int parse_model(sentencepiece::SentencePieceProcessor *processor, const std::string &bytes, const char *path) {
    auto status = processor->LoadFromSerializedProto(bytes);
    if (status.ok()) return 0;
    const std::string what = std::string(path) + ": not a SentencePiece model";
    return status_error(status, what.c_str(), "the file does not parse as one");
}

static int load(nmt_spm **out, const char *path, bool nmt_ids = true) {
    std::string bytes;
    if (read_model(path, &bytes) < 0) return -1;
    std::unique_ptr<nmt_spm> spm(new nmt_spm);
    if (parse_model(&spm->processor, bytes, path) < 0) return -1;
    if (nmt_ids && check_special_ids(spm->processor, path) < 0) return -1;
    spm->fingerprint = nmt_hash_bytes(bytes.data(), bytes.size());
    spm->unigram = is_unigram(bytes);
    if (spm->unigram) build_sampling_table(spm->processor, &spm->sampling);
    *out = spm.release();
    return 0;
}

static void fill_table(TokenTable *table, const char *const *pieces, int count) {
    table->pieces.assign(pieces, pieces + count);
    for (int i = 0; i < count; i++)
        if (pieces[i][0]) table->ids.emplace(pieces[i], i);
}

/* Loads the SentencePiece model at path into processor: only its pieces count (its ids are the
 * other toolkit's own). */
static int load_pieces(sentencepiece::SentencePieceProcessor *processor, const char *path) {
    nmt_spm *pieces = nullptr;
    int rc = load(&pieces, path, false);
    std::unique_ptr<nmt_spm> owned(pieces);
    if (rc < 0) return nmt_error_prefix("%s", path);
    auto status = processor->LoadFromSerializedProto(pieces->processor.serialized_model_proto());
    return status.ok() ? 0 : status_error(status, path);
}

static int tokens(nmt_spm **out, const char *const *source, const char *const *target, int count,
                  const char *source_spm, const char *target_spm) {
    std::unique_ptr<nmt_spm> spm(new nmt_spm);
    spm->tokens = true;
    spm->unigram = false;
    fill_table(&spm->source, source, count);
    fill_table(&spm->target, target, count);
    nmt_hash hash;
    nmt_hash_init(&hash);
    for (int side = 0; side < 2; side++)
        for (int i = 0; i < count; i++) { /* each piece with its NUL, so that pieces cannot run together */
            const char *piece = side ? target[i] : source[i];
            nmt_hash_add(&hash, piece, strlen(piece) + 1);
        }
    spm->fingerprint = nmt_hash_final(&hash);
    if (source_spm) {
        if (load_pieces(&spm->processor, source_spm) < 0) return -1;
        spm->splits = true;
        if (target_spm && strcmp(target_spm, source_spm) != 0) {
            spm->target_processor.reset(new sentencepiece::SentencePieceProcessor);
            if (load_pieces(spm->target_processor.get(), target_spm) < 0) return -1;
        }
    }
    *out = spm.release();
    return 0;
}

int nmt_spm_tokens(nmt_spm **spm, const char *const *source, const char *const *target, int count,
                   const char *spm_path) {
    *spm = nullptr;
    NMT_SPM_GUARD(-1, tokens(spm, source, target, count, spm_path, spm_path));
}

int nmt_spm_tokens_sides(nmt_spm **spm, const char *const *source, const char *const *target, int count,
                         const char *source_spm, const char *target_spm) {
    *spm = nullptr;
    NMT_SPM_GUARD(-1, tokens(spm, source, target, count, source_spm, target_spm));
}

static int load_guarded(nmt_spm **spm, const char *path) { NMT_SPM_GUARD(-1, load(spm, path)); }

int nmt_spm_load(nmt_spm **spm, const char *path) {
    *spm = nullptr;
    int rc = load_guarded(spm, path);
    /* An exception's message does not name the file; a status error's already does. */
    if (rc < 0 && strncmp(nmt_error(), path, strlen(path)) != 0) nmt_error_prefix("%s", path);
    return rc;
}

/* ---- a model from elsewhere given nmt's ids ----
 * A ModelProto (protobuf) is its pieces (field 1, in id order) and other fields; a piece is its text
 * (1), score (2) and type (3). SentencePiece finds unk by its type and bos, eos and pad by their
 * texts, so moving those pieces to ids 0-3 (with a <pad> control piece where the model has none) and
 * leaving every other field and piece as it was segments text into the same pieces. */

static bool wire_varint(const std::string &b, size_t *at, uint64_t *v) {
    *v = 0;
    for (int shift = 0; shift < 64 && *at < b.size(); shift += 7) {
        const unsigned char c = (unsigned char)b[(*at)++];
        *v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) return true;
    }
    return false;
}

static void put_varint(std::string *out, uint64_t v) {
    for (; v >= 0x80; v >>= 7) out->push_back((char)((v & 0x7f) | 0x80));
    out->push_back((char)v);
}

static void put_piece(std::string *out, const std::string &piece) {
    out->push_back(0x0a); /* field 1, length-delimited */
    put_varint(out, piece.size());
    *out += piece;
}

static int renumbered(const std::string &bytes, const char *path, std::string *out) {
    sentencepiece::SentencePieceProcessor sp;
    if (parse_model(&sp, bytes, path) < 0) return -1;
    if (has_nmt_ids(sp)) {
        *out = bytes;
        return 0;
    }
    if (sp.bos_id() < 0 || sp.eos_id() < 0)
        return nmt_error_set("%s: the SentencePiece model has no %s piece, which nmt's vocabularies need", path,
                             sp.bos_id() < 0 ? "bos (<s>)" : "eos (</s>)");
    std::vector<std::string> pieces;
    std::string others; /* every other top-level field, as it was */
    size_t first_piece = std::string::npos, at = 0;
    while (at < bytes.size()) {
        const size_t start = at;
        uint64_t key, n = 0;
        if (!wire_varint(bytes, &at, &key)) break;
        const int type = (int)(key & 7);
        if (type == 0) {
            if (!wire_varint(bytes, &at, &n)) break;
        } else if (type == 2) {
            if (!wire_varint(bytes, &at, &n) || n > bytes.size() - at) break;
            at += n;
        } else if ((type == 1 || type == 5) && (type == 1 ? 8u : 4u) <= bytes.size() - at) {
            at += type == 1 ? 8 : 4;
        } else {
            break;
        }
        if (key == 0x0a) {
            if (first_piece == std::string::npos) first_piece = others.size();
            pieces.push_back(bytes.substr(at - n, n));
        } else {
            others += bytes.substr(start, at - start);
        }
    }
    if (at != bytes.size() || (int)pieces.size() != sp.GetPieceSize() || first_piece == std::string::npos)
        return nmt_error_set("%s: the SentencePiece model's fields could not be read to renumber its pieces", path);
    /* <pad>, score 0 (field 2, fixed32), type CONTROL 3 (field 3). */
    static const char pad_piece[] = "\x0a\x05<pad>\x15\x00\x00\x00\x00\x18\x03";
    const int specials[4] = {sp.pad_id(), sp.unk_id(), sp.bos_id(), sp.eos_id()};
    std::string listed;
    for (int i = 0; i < 4; i++)
        put_piece(&listed, specials[i] >= 0 ? pieces[(size_t)specials[i]] : std::string(pad_piece, sizeof pad_piece - 1));
    for (int id = 0; id < (int)pieces.size(); id++)
        if (id != specials[0] && id != specials[1] && id != specials[2] && id != specials[3]) put_piece(&listed, pieces[(size_t)id]);
    *out = others.substr(0, first_piece) + listed + others.substr(first_piece);
    sentencepiece::SentencePieceProcessor check;
    if (parse_model(&check, *out, path) < 0 || check_special_ids(check, path) < 0)
        return nmt_error_prefix("%s: renumbering its special pieces failed", path);
    return 0;
}

static int with_nmt_ids(const char *path, char **data, size_t *len) {
    std::string bytes, out;
    if (read_model(path, &bytes) < 0 || renumbered(bytes, path, &out) < 0) return -1;
    if (!(*data = (char *)nmt_malloc(out.size() ? out.size() : 1))) return -1;
    memcpy(*data, out.data(), out.size());
    *len = out.size();
    return 0;
}

int nmt_spm_model_with_nmt_ids(const char *path, char **data, size_t *len) {
    *data = nullptr;
    *len = 0;
    NMT_SPM_GUARD(-1, with_nmt_ids(path, data, len));
}

void nmt_spm_free(nmt_spm *spm) { delete spm; }

int nmt_spm_vocab_size(const nmt_spm *spm) {
    return spm->tokens ? (int)spm->target.pieces.size() : spm->processor.GetPieceSize();
}

uint64_t nmt_spm_fingerprint(const nmt_spm *spm) { return spm->fingerprint; }

/* The SentencePiece model that cuts a token vocabulary's text of one side (target 1) into pieces. */
static const sentencepiece::SentencePieceProcessor &side_processor(const nmt_spm *spm, bool target) {
    return target && spm->target_processor ? *spm->target_processor : spm->processor;
}

/* A token vocabulary's encoding: the processor's pieces, or the text's space-separated tokens, each
 * looked up in the source table (unk when absent). */
static int encode_tokens(const nmt_spm *spm, const TokenTable &table, const char *text, size_t len, int32_t **ids,
                         size_t *cap, size_t *count) {
    std::vector<std::string> pieces;
    if (spm->splits) {
        auto status = side_processor(spm, &table == &spm->target).Encode(std::string(text, len), &pieces);
        if (!status.ok()) return status_error(status, "encoding with SentencePiece");
    } else {
        for (size_t at = 0; at < len;) {
            size_t end = at;
            while (end < len && text[end] != ' ' && text[end] != '\t') end++;
            if (end > at) pieces.emplace_back(text + at, end - at);
            at = end + 1;
        }
    }
    if (reserve_ids(pieces.size(), ids, cap) < 0) return -1;
    for (size_t i = 0; i < pieces.size(); i++) {
        auto found = table.ids.find(pieces[i]);
        (*ids)[i] = found == table.ids.end() ? NMT_UNK : found->second;
    }
    *count = pieces.size();
    return 0;
}

static int encode(const nmt_spm *spm, const char *text, size_t len, int32_t **ids, size_t *cap, size_t *count) {
    if (spm->tokens) return encode_tokens(spm, spm->source, text, len, ids, cap, count);
    std::vector<int> pieces;
    auto status = spm->processor.Encode(std::string(text, len), &pieces);
    if (!status.ok()) return status_error(status, "encoding with SentencePiece");
    if (reserve_ids(pieces.size(), ids, cap) < 0) return -1;
    for (size_t i = 0; i < pieces.size(); i++) (*ids)[i] = pieces[i];
    *count = pieces.size();
    return 0;
}

int nmt_spm_encode(const nmt_spm *spm, const char *text, size_t len, int32_t **ids, size_t *cap, size_t *count) {
    *count = 0;
    NMT_SPM_GUARD(-1, encode(spm, text, len, ids, cap, count));
}

int nmt_spm_encode_target(const nmt_spm *spm, const char *text, size_t len, int32_t **ids, size_t *cap,
                          size_t *count) {
    *count = 0;
    if (!spm->tokens) return nmt_spm_encode(spm, text, len, ids, cap, count);
    NMT_SPM_GUARD(-1, encode_tokens(spm, spm->target, text, len, ids, cap, count));
}

int nmt_spm_can_sample(const nmt_spm *spm) { return spm->unigram; }

int nmt_spm_sample(const nmt_spm *spm, const char *text, size_t len, double alpha, uint64_t seed, int32_t **ids,
                   size_t *cap, size_t *count) {
    *count = 0;
    if (!spm->unigram) return nmt_error_set("subword sampling needs a unigram vocabulary, not a BPE one");
    NMT_SPM_GUARD(-1, sample(spm, text, len, alpha, seed, ids, cap, count));
}

static char *decode(const nmt_spm *spm, const int32_t *ids, size_t count) {
    std::vector<int> pieces;
    std::vector<std::string> tokens;
    pieces.reserve(count);
    int size = nmt_spm_vocab_size(spm);
    for (size_t i = 0; i < count; i++) {
        if (ids[i] == NMT_PAD || ids[i] == NMT_BOS || ids[i] == NMT_EOS) continue;
        if (ids[i] < 0 || ids[i] >= size) {
            nmt_error_set("cannot decode id %ld: the vocabulary has %d pieces", (long)ids[i], size);
            return nullptr;
        }
        pieces.push_back(ids[i]);
        if (spm->tokens) tokens.push_back(spm->target.pieces[(size_t)ids[i]]);
    }
    std::string text;
    sentencepiece::util::Status status;
    if (!spm->tokens) status = spm->processor.Decode(pieces, &text);
    else if (spm->splits) status = side_processor(spm, true).Decode(tokens, &text);
    else
        for (size_t i = 0; i < tokens.size(); i++) text += (i ? " " : "") + tokens[i];
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
    if (id < 0 || id >= nmt_spm_vocab_size(spm)) return "";
    if (spm->tokens) return spm->target.pieces[(size_t)id].c_str();
    return spm->processor.IdToPiece(id).c_str();
}

int nmt_spm_joins_word(const nmt_spm *spm, int32_t id) {
    if (id <= NMT_EOS || id >= nmt_spm_vocab_size(spm) || (spm->tokens && !spm->splits)) return 0;
    if (!spm->tokens && (spm->processor.IsControl(id) || spm->processor.IsUnknown(id) || spm->processor.IsByte(id)))
        return 0;
    const unsigned char *p = (const unsigned char *)nmt_spm_piece(spm, id);
    if (p[0] == 0xE2 && p[1] == 0x96 && p[2] == 0x81) return 0; /* U+2581, the word-start mark */
    return (p[0] >= '0' && p[0] <= '9') || ((p[0] | 0x20) >= 'a' && (p[0] | 0x20) <= 'z') || p[0] >= 0x80;
}

const char *nmt_spm_source_piece(const nmt_spm *spm, int32_t id) {
    if (spm->tokens && id >= 0 && id < nmt_spm_vocab_size(spm)) return spm->source.pieces[(size_t)id].c_str();
    return nmt_spm_piece(spm, id);
}

}  // extern "C"
