/* imported: the token vocabulary of an imported model, and a failed read given back (imported.h). */
#include "model/imported.h"

#include "base/util.h"
#include "text/vocab.h"

#include <stdlib.h>
#include <string.h>

int nmt_imported_spm(const nmt_imported_side *source, const nmt_imported_side *target, const char *source_spm,
                     const char *target_spm, nmt_model *model, nmt_spm **spm) {
    const int V = model->config.vocab_size;
    const char **s = nmt_calloc((size_t)V, sizeof *s), **t = nmt_calloc((size_t)V, sizeof *t);
    int rc = -1;
    if (s && t) {
        for (int id = 0; id < V; id++) {
            const int fs = id < source->count && id != NMT_PAD ? source->from[id] : -1;
            const int ft = id < target->count ? target->from[id] : -1;
            s[id] = fs >= 0 ? source->pieces[fs] : "";
            t[id] = ft >= 0 ? target->pieces[ft] : "";
        }
        rc = nmt_spm_tokens_sides(spm, s, t, V, source_spm, target_spm);
        if (rc == 0) model->vocab_fingerprint = nmt_spm_fingerprint(*spm);
    }
    free(s);
    free(t);
    return rc;
}

void nmt_imported_release(nmt_model *model, nmt_spm **spm) {
    nmt_model_free(model);
    memset(model, 0, sizeof *model);
    nmt_spm_free(*spm);
    *spm = NULL;
}
