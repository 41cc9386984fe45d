/* fuzz_ct2: a CTranslate2 model directory read from elsewhere (nmt_ct2_open, as `nmt translate -m CT2DIR`
 * does): the input is its model.bin, beside fixed vocabularies (source: <blank> <s> </s> <unk> a;
 * target: <blank> <s> </s> x y).
 *
 * model.bin's shapes decide how much memory the model takes, so a small damaged or hostile file must
 * not make nmt allocate what the file cannot fill.
 *
 * Properties:
 *   - a refused file gives an error naming a file of the directory (or "out of memory"), and leaves
 *     nothing to free;
 *   - an accepted model has a config that passes nmt_model_config_check, the source and target
 *     vocabularies' ids (a -> 4, y -> 5), and translates nothing wrongly by construction: its
 *     forward pass over one pair runs;
 *   - with the 1st, 2nd, ... allocation failing, reading reports "out of memory".
 *
 * Seeds: a tiny float32 model in binary version 6 (TransformerSpec revision 7), the same in version 2
 * with int8 weights and their scales, and a header claiming a million variables.
 */
#include "fuzz.h"
#include "model/ct2.h"
#include "text/vocab.h"

static int open_and_free(void *context) {
    nmt_model m;
    nmt_spm *spm;
    int rc = nmt_ct2_open(context, NULL, &m, &spm);
    if (rc == 0) {
        nmt_spm_free(spm);
        nmt_model_free(&m);
    }
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char source[] = "<blank>\n<s>\n</s>\n<unk>\na\n", target[] = "<blank>\n<s>\n</s>\nx\ny\n";
    fuzz_file(0, "source_vocabulary.txt", source, sizeof source - 1);
    fuzz_file(1, "target_vocabulary.txt", target, sizeof target - 1);
    fuzz_file(2, "model.bin", data, size);
    const char *dir = fuzz_dir();
    nmt_model m;
    nmt_spm *spm;
    if (nmt_ct2_open(dir, NULL, &m, &spm) < 0) {
        FUZZ_CHECK(strstr(nmt_error(), dir) || strstr(nmt_error(), "out of memory"),
                   "the error names no file: '%s'", nmt_error());
        FUZZ_CHECK(m.params == NULL && spm == NULL, "a refused model left something to free");
        return 0;
    }
    FUZZ_CHECK(nmt_model_config_check(&m.config) == 0, "an accepted config fails its check: %s", nmt_error());
    int32_t *ids = NULL;
    size_t cap = 0, n = 0;
    FUZZ_CHECK(nmt_spm_encode(spm, "a", 1, &ids, &cap, &n) == 0 && n == 1 && ids[0] == 4, "source id of a");
    FUZZ_CHECK(nmt_spm_encode_target(spm, "y", 1, &ids, &cap, &n) == 0 && n == 1 && ids[0] == 5, "target id of y");
    const int32_t src[2] = {4, NMT_EOS}, tgt_in[2] = {NMT_BOS, 5}, tgt_out[2] = {5, NMT_EOS};
    const nmt_batch batch = {.batch = 1, .src_len = 2, .tgt_len = 2, .src = src, .tgt_in = tgt_in, .tgt_out = tgt_out};
    float logprobs[2];
    FUZZ_CHECK(nmt_model_token_logprobs(&m, &batch, logprobs) == 0, "forward: %s", nmt_error());
    free(ids);
    nmt_spm_free(spm);
    nmt_model_free(&m);
    fuzz_alloc_sweep(open_and_free, (void *)dir, 400);
    return 0;
}
