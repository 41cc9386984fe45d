/* model_config: the model's hyperparameters, listed once. */
#include "model/model_config.h"

#include "base/util.h"
#include "text/vocab.h"

#include <stdio.h>
#include <string.h>

const char *const nmt_norm_position_names[] = {"post", "pre", NULL};
const char *const nmt_positions_names[] = {"sinusoidal", "learned", "rope", NULL};
const char *const nmt_tie_names[] = {"none", "decoder", "all", NULL};
const char *const nmt_activation_names[] = {"relu", "swish", "gelu", "gelu_tanh", "gelu_sigmoid", NULL};

#define DESCRIBE(field_, kind_, default_, min_, max_, open_, names_)                                                \
    {.name = #field_, .kind = NMT_MODEL_FIELD_##kind_, .offset = offsetof(nmt_model_config, field_),               \
     .def = default_, .min = min_, .max = max_, .open = open_, .names = names_},

const nmt_model_field nmt_model_config_fields[NMT_MODEL_CONFIG_COUNT] = {
    {.name = "vocab_size", .kind = NMT_MODEL_FIELD_INT, .offset = offsetof(nmt_model_config, vocab_size), .def = 0,
     .min = NMT_EOS + 1, .max = NMT_MODEL_MAX_VOCAB},
    NMT_MODEL_CONFIG_FIELDS(DESCRIBE)};

#define FIELD_OF(config, type, f) ((type *)((char *)(config) + (f)->offset))

nmt_model_config nmt_model_config_default(void) {
    nmt_model_config c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < NMT_MODEL_CONFIG_COUNT; i++) {
        const nmt_model_field *f = &nmt_model_config_fields[i];
        if (f->kind == NMT_MODEL_FIELD_FLOAT) *FIELD_OF(&c, float, f) = (float)f->def;
        else *FIELD_OF(&c, int, f) = (int)f->def;
    }
    return c;
}

/* One field against its range; vocab_size may also be 0 (not known yet). */
static int check_field(const nmt_model_config *c, const nmt_model_field *f) {
    if (f->kind == NMT_MODEL_FIELD_FLOAT) {
        double v = *FIELD_OF(c, const float, f);
        int below = (f->open & NMT_MODEL_CONFIG_MIN_OPEN) ? !(v > f->min) : !(v >= f->min);
        int above = (f->open & NMT_MODEL_CONFIG_MAX_OPEN) ? !(v < f->max) : !(v <= f->max);
        if (below || above)
            return nmt_error_set("model.%s must be in %c%g, %g%c, not %g", f->name,
                                 (f->open & NMT_MODEL_CONFIG_MIN_OPEN) ? '(' : '[', f->min, f->max,
                                 (f->open & NMT_MODEL_CONFIG_MAX_OPEN) ? ')' : ']', v);
        return 0;
    }
    int v = *FIELD_OF(c, const int, f);
    if (v >= f->min && v <= f->max) return 0;
    if (f->kind == NMT_MODEL_FIELD_INT) {
        if (f->offset == offsetof(nmt_model_config, vocab_size)) {
            if (v == 0) return 0;
            return nmt_error_set("model.vocab_size must be between %.0f and %.0f (the ids 0-3 are pad, unk, bos, eos), "
                                 "not %d", f->min, f->max, v);
        }
        return nmt_error_set("model.%s must be between %.0f and %.0f, not %d", f->name, f->min, f->max, v);
    }
    char words[96] = "";
    for (int w = 0; f->names[w]; w++) {
        size_t used = strlen(words);
        snprintf(words + used, sizeof words - used, "%s%s", w == 0 ? "" : f->names[w + 1] ? ", " : " or ", f->names[w]);
    }
    return nmt_error_set("model.%s must be %s", f->name, words);
}

int nmt_model_config_check(const nmt_model_config *c) {
    for (int i = 0; i < NMT_MODEL_CONFIG_COUNT; i++)
        if (check_field(c, &nmt_model_config_fields[i]) < 0) return -1;
    if (c->d_model % 2 != 0) return nmt_error_set("model.d_model must be even, not %d", c->d_model);
    if (c->d_model % c->heads != 0)
        return nmt_error_set("model.heads (%d) must divide model.d_model (%d)", c->heads, c->d_model);
    if (c->positions == NMT_POSITIONS_ROPE && (c->d_model / c->heads) % 2 != 0)
        return nmt_error_set("model.positions rope needs an even head size, but d_model/heads = %d",
                             c->d_model / c->heads);
    return 0;
}
