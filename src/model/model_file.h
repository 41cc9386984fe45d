/* model_file: the model's parameters in safetensors files (model.safetensors, checkpoints, averages).
 *
 * A model file holds every tensor of nmt_model.tensors under its name, F32, with PyTorch's shapes,
 * in the model's own order, and the model config as string metadata: "format": "nmt-model-1",
 * "vocab_size", and the keys of the YAML model section (d_model, heads, ffn, encoder_layers,
 * decoder_layers, dropout, attention_dropout, norm_position, positions, max_positions, norm_eps,
 * tie_embeddings) with the YAML's words for enums ("post", "rope", "all"), and, when the model knows
 * it, "vocab_fingerprint": 16 hexadecimal digits of its vocabulary's nmt_spm_fingerprint (files
 * without it, from older versions, load; their vocabulary is then checked by its size only). An int8
 * model file (nmt_model_save_int8) holds each matrix as I8 with its row factors beside it instead.
 *
 * A checkpoint (written by the trainer with the pieces below) is a model file with more in it: the
 * model tensors under their plain names, other buffers laid out like the parameters under a prefix
 * ("adam_m." + name), bookkeeping tensors and metadata of its own. nmt_model_load refuses it (it
 * refuses any tensor the model does not have); nmt_model_average reads its model tensors only.
 * Checkpoints live in DIR/checkpoints/ as step-<step, zero-padded to 8 digits>.safetensors.
 */
#ifndef NMT_MODEL_FILE_H
#define NMT_MODEL_FILE_H

#include "model/model.h"
#include "model/safetensors.h"

#define NMT_MODEL_FORMAT "nmt-model-1"

enum { NMT_MODEL_METADATA = NMT_MODEL_CONFIG_COUNT + 1 }; /* format, then nmt_model_config_fields */

/* A model config as metadata entries whose strings live in the struct itself (no allocation). The
 * entries point into the struct: fill each one with nmt_model_metadata_init, never copy one by
 * assignment. text[i][0] is entry i's key, text[i][1] its value. */
typedef struct nmt_model_metadata {
    nmt_st_metadata entries[NMT_MODEL_METADATA];
    char text[NMT_MODEL_METADATA][2][32];
} nmt_model_metadata;

void nmt_model_metadata_init(nmt_model_metadata *metadata, const nmt_model_config *config);
/* Reads a config from a file's metadata, checking the format key, every value's syntax and
 * nmt_model_config_check; the error names `path` and the key. Other metadata keys are ignored. */
int nmt_model_metadata_read(nmt_model_config *config, const nmt_st_file *file, const char *path);

/* The "vocab_fingerprint" entry of m, its value in text: 1 entry, or 0 when m->vocab_fingerprint is 0. */
int nmt_model_fingerprint_entry(const nmt_model *m, nmt_st_metadata *entry, char text[17]);
/* Reads it from a file into *fingerprint (0 when the file has none); a malformed one is an error. */
int nmt_model_fingerprint_read(const nmt_st_file *file, const char *path, uint64_t *fingerprint);
/* Refuses (error naming both files) a vocabulary whose fingerprint is not the one a model recorded. */
int nmt_model_check_vocab(uint64_t recorded, const char *model_path, uint64_t vocab, const char *vocab_path);

/* The tensors of a buffer laid out like m->params ([m->num_params] floats), named prefix + the model's
 * tensor name, in the model's order. *tensors (names included) is one allocation: free() it. */
int nmt_model_tensor_list(const nmt_model *m, const float *buffer, const char *prefix, nmt_st_tensor **tensors);
/* The reverse: copies the tensors prefix + name of `file` into buffer, checking that each is present,
 * F32 and of the model's shape (the error names `path` and the tensor). Other tensors are ignored. */
int nmt_model_tensor_read(const nmt_model *m, float *buffer, const char *prefix, const nmt_st_file *file,
                          const char *path);

/* Tensor i of m (its plain name) from `file` into buffer, an I8 one dequantized with its row factors;
 * the file's pages of it may then go. Its dtype and shape are not checked again: call it for a
 * tensor of a file nmt_model_tensor_read has accepted (a deferred one). */
int nmt_model_tensor_load(const nmt_model *m, int i, float *buffer, const nmt_st_file *file, const char *path);

/* Writes m's parameters and config to path (atomically). */
int nmt_model_save(const nmt_model *m, const char *path);
/* The same with every matrix (rank-2 tensor) in int8: I8 values quantized per row as qgemm.h
 * does, and "<name>.scale", F32 [rows], each row's factor (value = int8 * factor); about a quarter
 * of the size. Every reader of model files (nmt_model_tensor_read) takes them back as F32. */
int nmt_model_save_int8(const nmt_model *m, const char *path);
/* Rounds every matrix of m to what an int8 model file holds (each row quantized and dequantized),
 * so that a model quantized when it is loaded equals its int8 file: the same translations. */
int nmt_model_quantize_int8(nmt_model *m);
/* The same for every matrix but the learned position tables, which stay float32: what CTranslate2
 * quantizes (an imported int8 model then holds its own values again, ct2.h). */
int nmt_model_quantize_int8_weights(nmt_model *m);
/* Creates *m (nmt_model_init) from the config in the file and reads its parameters; refuses a file
 * with a tensor the model does not have. On failure *m holds nothing to free. */
int nmt_model_load(nmt_model *m, const char *path);
/* nmt_model_load in two steps, for a loader that decides first where tensors go (placement.h):
 * open reads path into *file (parsed, mapped) and creates *m from its config (on failure neither
 * holds anything to free); read copies the tensors (but those m->deferred marks) into m->params and
 * refuses a tensor the model does not have. */
int nmt_model_file_open(nmt_model *m, nmt_st_file *file, const char *path);
int nmt_model_file_read(nmt_model *m, nmt_st_file *file, const char *path);

/* Fine-tuning: reads the parameters of the model file at `path` into m (already created), refusing
 * a file of another architecture: every model key but dropout and attention_dropout, and vocab_size,
 * must match (the error names the key and both values). */
int nmt_model_init_from(nmt_model *m, const char *path);

/* The element-wise mean of the parameters of the model files or checkpoints in paths, which must
 * share one config, written as a model file to out. The tensors read are prefix + each model tensor's
 * name: "" for the weights, "ema." for the moving averages that checkpoints of train.ema_decay hold. */
int nmt_model_average(const char *const *paths, int count, const char *prefix, const char *out);
/* model_dir/checkpoints/step-<step as 8 digits or more>.safetensors, a new string. */
char *nmt_model_checkpoint_path(const char *model_dir, long step);
/* The checkpoints in model_dir/checkpoints/, lowest step first: a NULL-terminated array of paths and
 * their count. Files of other names (temporaries of an interrupted write) are skipped. Free the array
 * with nmt_model_paths_free. A missing checkpoints directory gives 0 checkpoints. */
int nmt_model_checkpoints(const char *model_dir, char ***paths, int *count);
void nmt_model_paths_free(char **paths);

#endif
