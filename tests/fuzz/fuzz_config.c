/* fuzz_config: the YAML training config (nmt_config_parse, the in-memory form of nmt_config_load) and
 * its --set overrides on arbitrary text.
 *
 * Input: the YAML text, then optionally a 0xFF byte and overrides, one "section.key=value" a line
 * (at most 8).
 *
 * Properties:
 *   - a refused config gives an error that starts with the file's name (file:line:column) or with
 *     "--set " (the override that is wrong);
 *   - an accepted config holds no absurd value (absurd values are refused at load time): its model section
 *     passes nmt_model_config_check, layers and sizes are positive, rates are in their ranges, data.train
 *     has both sides and every path is absolute;
 *   - nmt_config_format's text of an accepted config is itself accepted, and formats to the same text
 *     (the saved config.yaml means the same config);
 *   - with the 1st, 2nd, ... allocation failing, parsing reports "out of memory".
 */
#include "fuzz.h"
#include "train/config.h"

enum { MAX_OVERRIDES = 8 };

typedef struct input {
    const char *text;
    size_t size;
    const char *path;
    const char *const *overrides;
} input;

static int parse_and_free(void *context) {
    const input *in = context;
    nmt_config config;
    int rc = nmt_config_parse(&config, in->text, in->size, in->path, in->overrides);
    if (rc == 0) nmt_config_free(&config);
    return rc;
}

static void check_sane(const nmt_config *c) {
    nmt_model_config model = c->model;
    model.vocab_size = 8000; /* known only once a vocabulary is */
    FUZZ_CHECK(nmt_model_config_check(&model) == 0, "an accepted model section fails its check: %s", nmt_error());
    FUZZ_CHECK(c->model.d_model > 0 && c->model.heads > 0 && c->model.d_model % c->model.heads == 0 &&
                   c->model.ffn > 0 && c->model.encoder_layers > 0 && c->model.decoder_layers > 0,
               "model sizes d_model %d heads %d ffn %d layers %d+%d", c->model.d_model, c->model.heads, c->model.ffn,
               c->model.encoder_layers, c->model.decoder_layers);
    FUZZ_CHECK(c->model.dropout >= 0 && c->model.dropout < 1 && c->model.attention_dropout >= 0 &&
                   c->model.attention_dropout < 1 && c->model.norm_eps > 0,
               "model rates");
    FUZZ_CHECK(c->vocab_size > 0 && c->max_length > 0 && c->batch_tokens > 0 && c->update_freq > 0, "sizes");
    FUZZ_CHECK(c->lr > 0 && c->beta1 >= 0 && c->beta1 < 1 && c->beta2 >= 0 && c->beta2 < 1 && c->adam_eps > 0 &&
                   c->warmup >= 0 && c->clip_norm >= 0 && c->label_smoothing >= 0 && c->label_smoothing < 1 &&
                   c->weight_decay >= 0 && c->lr * c->weight_decay < 1,
               "optimizer lr %g betas %g %g eps %g warmup %d clip %g smoothing %g weight decay %g", c->lr, c->beta1,
               c->beta2, c->adam_eps, c->warmup, c->clip_norm, c->label_smoothing, c->weight_decay);
    FUZZ_CHECK(c->dropout_src >= 0 && c->dropout_src < 1 && c->dropout_trg >= 0 && c->dropout_trg < 1 &&
                   c->rdrop_alpha >= 0 && c->rdrop_alpha <= 1000,
               "word dropout %g %g, R-Drop %g", c->dropout_src, c->dropout_trg, c->rdrop_alpha);
    FUZZ_CHECK(c->max_steps >= 0 && c->max_epochs >= 0 && c->max_minutes >= 0 && c->valid_every > 0 &&
                   c->valid_beam > 0 && c->save_every > 0 && c->keep_last >= 0 && c->patience >= 0,
               "train limits");
    FUZZ_CHECK(c->num_train >= 1 && c->num_train <= NMT_CONFIG_MAX_CORPORA, "data.train holds %d corpora", c->num_train);
    for (int i = 0; i < c->num_train; i++)
        FUZZ_CHECK(c->train[i].src && c->train[i].tgt && c->train[i].src[0] == '/' && c->train[i].tgt[0] == '/' &&
                       c->train[i].weight >= 1 && c->train[i].weight <= NMT_CONFIG_MAX_WEIGHT,
                   "data.train corpus %d: paths or weight %d", i, c->train[i].weight);
    FUZZ_CHECK(!c->valid.src == !c->valid.tgt, "data.valid has one side only");
    FUZZ_CHECK(c->output && c->output[0] == '/' && c->data_root && c->data_root[0] == '/', "output or data.root");
    FUZZ_CHECK(!c->vocab_model || c->vocab_model[0] == '/', "vocab.model '%s' is not absolute", c->vocab_model);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* The text and the override lines, each NUL-terminated in a private copy. */
    char *copy = malloc(size + 1);
    FUZZ_CHECK(copy != NULL, "out of memory");
    if (size) memcpy(copy, data, size);
    copy[size] = '\0';
    char *split = memchr(copy, 0xFF, size);
    const char *overrides[MAX_OVERRIDES + 1] = {NULL};
    if (split) {
        *split = '\0';
        int n = 0;
        for (char *line = split + 1; line && n < MAX_OVERRIDES;) {
            char *end = strchr(line, '\n');
            if (end) *end = '\0';
            overrides[n++] = line;
            line = end ? end + 1 : NULL;
        }
    }
    char path[160];
    snprintf(path, sizeof path, "%s/conf/fuzz.yaml", fuzz_dir());
    input in = {copy, split ? (size_t)(split - copy) : size, path, split ? overrides : NULL};

    nmt_config config;
    if (nmt_config_parse(&config, in.text, in.size, path, in.overrides) < 0) {
        FUZZ_CHECK(strncmp(nmt_error(), path, strlen(path)) == 0 || strncmp(nmt_error(), "--set ", 6) == 0,
                   "the error names neither the file nor the override: '%s'", nmt_error());
        free(copy);
        return 0;
    }
    check_sane(&config);
    char *text = nmt_config_format(&config);
    FUZZ_CHECK(text != NULL, "%s", nmt_error());
    nmt_config again;
    FUZZ_CHECK(nmt_config_parse(&again, text, strlen(text), path, NULL) == 0,
               "the formatted config is refused: %s\n---\n%s---", nmt_error(), text);
    char *text2 = nmt_config_format(&again);
    FUZZ_CHECK(text2 != NULL && strcmp(text, text2) == 0, "formatting is not a fixed point:\n%s---\n%s---", text,
               text2 ? text2 : "");
    free(text);
    free(text2);
    nmt_config_free(&again);
    nmt_config_free(&config);
    fuzz_alloc_sweep(parse_and_free, &in, 256);
    free(copy);
    return 0;
}
