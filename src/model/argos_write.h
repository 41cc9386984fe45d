/* argos_write: an nmt model written as an Argos Translate package (which LibreTranslate serves).
 *
 * The package is a zip archive (zip_dir.h) whose one top-level folder, named as the archive without
 * its .argosmodel suffix, holds what argos-translate's package.py reads: metadata.json (package_version
 * and argos_version "1.0", from_code, from_name, to_code, to_name, type "translate"), model/ (the
 * CTranslate2 model directory, ct2_write.h) and sentencepiece.model (the SentencePiece model that cuts
 * text into the vocabulary's pieces). Argos tokenizes with it and looks the pieces up in the CTranslate2
 * vocabulary, so the package translates as the model does. The folder is built in a temporary
 * directory, removed afterwards; the archive is written whole.
 */
#ifndef NMT_ARGOS_WRITE_H
#define NMT_ARGOS_WRITE_H

#include "model/ct2_write.h"

typedef struct nmt_argos_package {
    const char *from_code, *to_code;   /* language codes (ISO 639 where there is one) */
    const char *from_name, *to_name;   /* names shown to users; NULL: the codes */
    const char *spm_path;              /* the SentencePiece model file */
    nmt_ct2_quantization quantization;
} nmt_argos_package;

/* Writes the package of model and spm to path (a name ending in .argosmodel). Errors name the file. */
int nmt_argos_write(const char *path, const nmt_model *model, const nmt_spm *spm, const nmt_argos_package *package);

#endif
