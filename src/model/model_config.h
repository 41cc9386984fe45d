/* model_config: the model's hyperparameters, listed once.
 *
 * NMT_MODEL_CONFIG_FIELDS is the one list of the fields of the YAML `model` section: name (the YAML key
 * under model: and the model file's metadata key), kind, default, allowed range and, for enums, their
 * words. It drives the YAML keys (train/config_keys.c), the metadata of model files (model_file.c), the
 * defaults and the range checks here, so the three cannot disagree. vocab_size is not a key of the
 * model section (the vocabulary decides it) but travels in the metadata too: nmt_model_config_fields
 * lists it first, then the section's fields.
 */
#ifndef NMT_MODEL_CONFIG_H
#define NMT_MODEL_CONFIG_H

#include "compute/kernels.h"

#include <stddef.h>

typedef enum { NMT_NORM_POST, NMT_NORM_PRE } nmt_norm_position;
typedef enum { NMT_POSITIONS_SINUSOIDAL, NMT_POSITIONS_LEARNED, NMT_POSITIONS_ROPE } nmt_positions;
typedef enum { NMT_TIE_NONE, NMT_TIE_DECODER, NMT_TIE_ALL } nmt_tie;

/* The YAML words of the model enums, indexed by their values, NULL-terminated. */
extern const char *const nmt_norm_position_names[];
extern const char *const nmt_positions_names[];
extern const char *const nmt_tie_names[];
extern const char *const nmt_activation_names[];

/* Which ends of a field's [min, max] are excluded. */
enum { NMT_MODEL_CONFIG_MIN_OPEN = 1, NMT_MODEL_CONFIG_MAX_OPEN = 2 };

/* X(name, kind, default, min, max, open, names), in file order. kind: INT (int), FLOAT (float) or ENUM
 * (an enum field holding an index into `names`; min and max are its first and last value). */
#define NMT_MODEL_CONFIG_FIELDS(X)                                                                                  \
    X(d_model, INT, 256, 2, 1 << 16, 0, NULL)                                                                       \
    X(heads, INT, 4, 1, 1 << 12, 0, NULL)                                                                           \
    X(ffn, INT, 1024, 1, 1 << 16, 0, NULL)                                                                          \
    X(encoder_layers, INT, 3, 1, 256, 0, NULL)                                                                      \
    X(decoder_layers, INT, 3, 1, 256, 0, NULL)                                                                      \
    X(dropout, FLOAT, 0.1, 0, 1, NMT_MODEL_CONFIG_MAX_OPEN, NULL)                                                   \
    X(attention_dropout, FLOAT, 0.0, 0, 1, NMT_MODEL_CONFIG_MAX_OPEN, NULL)                                         \
    X(norm_position, ENUM, NMT_NORM_POST, NMT_NORM_POST, NMT_NORM_PRE, 0, nmt_norm_position_names)                 \
    X(positions, ENUM, NMT_POSITIONS_SINUSOIDAL, NMT_POSITIONS_SINUSOIDAL, NMT_POSITIONS_ROPE, 0, nmt_positions_names) \
    X(max_positions, INT, 1024, 1, 1 << 16, 0, NULL)                                                                \
    X(norm_eps, FLOAT, 1e-5, 0, 1, NMT_MODEL_CONFIG_MIN_OPEN | NMT_MODEL_CONFIG_MAX_OPEN, NULL)                     \
    X(tie_embeddings, ENUM, NMT_TIE_ALL, NMT_TIE_NONE, NMT_TIE_ALL, 0, nmt_tie_names)                             \
    X(output_bias, INT, 0, 0, 1, 0, NULL)                                                                           \
    X(source_eos, INT, 1, 0, 1, 0, NULL)                                                                            \
    X(activation, ENUM, NMT_ACTIVATION_RELU, NMT_ACTIVATION_RELU, NMT_ACTIVATION_GELU_SIGMOID, 0, nmt_activation_names) \
    X(embedding_norm, INT, 0, 0, 1, 0, NULL)

enum { NMT_MODEL_MAX_VOCAB = 1 << 24 };

typedef struct nmt_model_config {
    int vocab_size;                  /* V: one vocabulary for source and target (joint SentencePiece) */
    int d_model;                     /* D */
    int heads;                       /* H; D % H == 0 */
    int ffn;                         /* F */
    int encoder_layers;
    int decoder_layers;
    float dropout;                   /* after embeddings+positions, and on each sublayer's output */
    float attention_dropout;         /* on attention weights */
    nmt_norm_position norm_position; /* post (the paper's) or pre (with a final LayerNorm per stack) */
    nmt_positions positions;         /* sinusoidal (the paper's), learned, or rope */
    int max_positions;               /* rows of a learned position table; longer inputs are an error */
    float norm_eps;
    nmt_tie tie_embeddings;          /* none; decoder (target embedding = output); all (+ source) */
    int output_bias;                 /* 1: the output projection adds a bias [V] (imported models; training
                                      * refuses it) */
    int source_eos;                  /* 1: a source row is pieces + eos; 0: pieces only (imported models
                                      * trained without it; training refuses it) */
    nmt_activation activation;       /* of the feed-forward layers (imported models may have any; training
                                      * refuses all but relu) */
    int embedding_norm;              /* 1: a LayerNorm of each side's embeddings + positions before its first
                                      * layer (imported models: fairseq's and Marian's layernorm_embedding;
                                      * training refuses it) */
} nmt_model_config;

typedef enum { NMT_MODEL_FIELD_INT, NMT_MODEL_FIELD_FLOAT, NMT_MODEL_FIELD_ENUM } nmt_model_field_kind;

/* One field of nmt_model_config, as NMT_MODEL_CONFIG_FIELDS describes it. */
typedef struct nmt_model_field {
    const char *name;          /* "d_model" */
    nmt_model_field_kind kind;
    size_t offset;             /* into nmt_model_config */
    double def, min, max;
    int open;                  /* NMT_MODEL_CONFIG_MIN_OPEN | NMT_MODEL_CONFIG_MAX_OPEN */
    const char *const *names;  /* ENUM: the words */
} nmt_model_field;

/* vocab_size (default 0: unknown; else NMT_EOS+1 .. NMT_MODEL_MAX_VOCAB), then the section's fields.
 * The fields from NMT_MODEL_CONFIG_FIRST_LATER on came after the first model files: a file without
 * them reads their defaults. */
#define NMT_MODEL_CONFIG_ONE_(...) +1
enum { NMT_MODEL_CONFIG_COUNT = 1 NMT_MODEL_CONFIG_FIELDS(NMT_MODEL_CONFIG_ONE_) };
extern const nmt_model_field nmt_model_config_fields[NMT_MODEL_CONFIG_COUNT];
enum { NMT_MODEL_CONFIG_FIRST_LATER = NMT_MODEL_CONFIG_COUNT - 4 };

/* The defaults of the YAML `model` section (vocab_size stays 0 until a vocabulary is known). */
nmt_model_config nmt_model_config_default(void);
/* Rejects what the model cannot be: a field out of its range, D odd or not divisible by H, rope with
 * an odd head size. The error names the field ("model.ffn must be between 1 and 65536, not 0"). */
int nmt_model_config_check(const nmt_model_config *config);

#endif
