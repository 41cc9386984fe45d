/* argos: Argos Translate packages opened as a CTranslate2 model with its SentencePiece model.
 *
 * A package is a zip archive (NAME.argosmodel) or the folder it unpacks to; the folder (the archive's
 * one top-level folder, or the archive's root) holds metadata.json (its from_code and to_code are
 * checked to be strings), model/ (a CTranslate2 model directory, ct2.h) and sentencepiece.model.
 * Text is cut into pieces by the SentencePiece model and each piece is looked up in the CTranslate2
 * vocabulary (whose ids are the model's; the SentencePiece model's own ids are not used). An
 * archive is extracted into a temporary directory, at most 4 GiB, removed once the model is read.
 * Argos's sentence splitting (Stanza) is not done: each input line is translated as one sentence.
 */
#ifndef NMT_ARGOS_H
#define NMT_ARGOS_H

#include "model/model.h"
#include "text/spm.h"

/* 1 when path is an Argos package: a zip archive named *.argosmodel, or a folder with metadata.json and
 * model/model.bin. */
int nmt_argos_is_package(const char *path);
/* Opens the package at path into *model and *spm (nmt_ct2_open's); errors name the file. */
int nmt_argos_open(const char *path, nmt_model *model, nmt_spm **spm);
/* The package's folder: *root = path for a folder; an archive is extracted into a new temporary
 * directory *tmp (remove it with nmt_remove_tree, then free it) and *root is the folder in it (to
 * free). On failure nothing is left. */
int nmt_argos_unpack(const char *path, char **tmp, char **root);
/* The from_code and to_code of a package folder's metadata.json, as new strings. */
int nmt_argos_languages(const char *dir, char **from, char **to);

#endif
