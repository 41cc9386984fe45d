/* fuzz_spm: loading a SentencePiece model file from elsewhere (nmt_spm_load), then using it.
 *
 * The model is parsed by SentencePiece itself (a protobuf holding pieces, a trainer spec and a
 * normalizer with an optional precompiled character map); nmt's shim must turn whatever it does with a
 * foreign or damaged file into an error, never a crash or an exception escaping into C.
 *
 * Properties: a refused model gives an error that starts with the file's name and says what is wrong; an accepted one has nmt's reserved
 * ids (pad 0, unk 1, bos 2, eos 3: the shim's promise), encodes a few sentences into ids inside the
 * vocabulary, decodes them back without error, and answers nmt_spm_piece for every id (and "" past
 * the end).
 *
 * Seeds (tests/fuzz/corpus/spm/): tiny models trained by SentencePiece on four short sentences, with
 * normalization_rule_name=identity (the default nmt_nfkc map alone is 237 KB) for each model type,
 * one with a two-rule normalization_rule_tsv (a small precompiled map), one with SentencePiece's
 * default special ids (refused), and damaged files.
 */
#include "fuzz.h"
#include "model/model.h"
#include "text/spm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file(0, "fuzz.model", data, size);
    nmt_spm *spm = NULL;
    if (nmt_spm_load(&spm, path) < 0) {
        FUZZ_CHECK(spm == NULL, "a refused model was returned");
        FUZZ_CHECK(strncmp(nmt_error(), path, strlen(path)) == 0, "the error does not name the file: '%s'",
                   nmt_error());
        FUZZ_CHECK(strlen(nmt_error()) > strlen(path) + 2, "the error does not say what is wrong: '%s'", nmt_error());
        return 0;
    }
    int vocab = nmt_spm_vocab_size(spm);
    FUZZ_CHECK(vocab > NMT_EOS, "an accepted model has %d pieces", vocab);
    static const char *const sentences[] = {"the cat sat", "", "  two  spaces ", "Zwei Männer 😀 शतरंज", "\t\x7f"};
    int32_t *ids = NULL;
    size_t cap = 0, count = 0;
    for (size_t s = 0; s < sizeof sentences / sizeof sentences[0]; s++) {
        if (nmt_spm_encode(spm, sentences[s], strlen(sentences[s]), &ids, &cap, &count) < 0) {
            FUZZ_CHECK(strstr(nmt_error(), "SentencePiece") != NULL, "encoding failed with '%s'", nmt_error());
            continue;
        }
        for (size_t i = 0; i < count; i++)
            FUZZ_CHECK(ids[i] >= 0 && ids[i] < vocab, "sentence %zu: id %d outside a vocabulary of %d", s, ids[i], vocab);
        char *text = nmt_spm_decode(spm, ids, count);
        FUZZ_CHECK(text != NULL || strstr(nmt_error(), "SentencePiece") != NULL, "decoding failed with '%s'",
                   nmt_error());
        free(text);
    }
    free(ids);
    for (int32_t id = -1; id <= vocab; id++) {
        const char *piece = nmt_spm_piece(spm, id);
        FUZZ_CHECK(piece != NULL && ((id >= 0 && id < vocab) || piece[0] == '\0'), "piece of id %d", id);
    }
    nmt_spm_free(spm);
    return 0;
}
