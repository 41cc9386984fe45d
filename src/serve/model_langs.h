/* model_langs: the language pair of a model to serve -- given on the command line, else recorded by
 * training (the engine's, from data.src_lang and data.tgt_lang), else an Argos Translate package's
 * metadata.json (from_code, to_code; the package a folder or a .argosmodel archive, unpacked into a
 * temporary directory to read it). A CTranslate2 directory records none: it needs the codes given.
 */
#ifndef NMT_SERVE_MODEL_LANGS_H
#define NMT_SERVE_MODEL_LANGS_H

#include "nmt/nmt.h"
#include "text/langcode.h"

/* Sets source and target (NMT_LANGCODE_MAX bytes each; "" where unknown) of the model at `path`,
 * opened as `engine`; given_source and given_target (NULL: not given) come first. Returns 0, or -1
 * when an Argos package's metadata cannot be read (the message names the file). */
int nmt_serve_model_langs(const char *path, const nmt_engine *engine, const char *given_source,
                          const char *given_target, char *source, char *target);

#endif
