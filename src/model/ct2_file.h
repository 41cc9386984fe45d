/* ct2_file: CTranslate2's model.bin, its variables read by name.
 *
 * The file (python/ctranslate2/specs/model_spec.py writes it) is little-endian: uint32 binary version
 * (1 to 6); from version 2 the spec name (a string: uint16 length with the NUL, bytes, NUL) and uint32
 * spec revision; uint32 variable count, then each variable: name, uint8 rank, uint32 dims, its type
 * (version 4 on: uint8 type id and uint32 bytes; before: uint8 item size and uint32 items) and its
 * bytes; from version 3, uint32 alias count and (alias, target) name pairs. Revision 1 used OpenNMT-tf's
 * names, renamed here as CTranslate2 renames them. Everything is bounded: names of at most 1 KiB, at
 * most 2^20 variables, ranks up to 4, payloads that fit the file and their shape. The header is read
 * at open; the data stays in the file until asked for, and is read a bounded chunk at a time.
 *
 * The layout of the Transformer's layers under TransformerSpec (revision 7: the names its converters
 * write) is described here once, as the parts of an nmt_model that each variable holds:
 * nmt_ct2_layout_layers walks them for the reader (ct2.c) and the writer (ct2_write.c) alike.
 */
#ifndef NMT_CT2_FILE_H
#define NMT_CT2_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

enum { NMT_CT2_MAX_NAME = 1024, NMT_CT2_MAX_RANK = 4 };
/* Bytes of a variable's data read at once: a reader holds the model and this much more. */
enum { NMT_CT2_CHUNK = 1 << 20 };
/* CTranslate2's type ids. */
enum { NMT_CT2_F32, NMT_CT2_I8, NMT_CT2_I16, NMT_CT2_I32, NMT_CT2_F16, NMT_CT2_BF16, NMT_CT2_TYPES };
/* nmt_activation's CTranslate2 code (its ActivationType: ReLU 0, GELUTanh 1, Swish 2, GELU 3,
 * GELUSigmoid 4), indexed by nmt_activation. */
extern const int nmt_ct2_activation_codes[NMT_ACTIVATION_GELU_SIGMOID + 1];
/* Bytes of an item of each type. */
extern const int nmt_ct2_item_size[NMT_CT2_TYPES];
/* The newest binary layout and TransformerSpec revision (CTranslate2 4.x writes these; nmt reads
 * every one up to them and writes them). */
enum { NMT_CT2_BINARY_VERSION = 6, NMT_CT2_REVISION = 7 };

typedef struct nmt_ct2_var {
    char *name;
    int dtype, rank;
    int64_t shape[NMT_CT2_MAX_RANK];
    long offset;               /* of the data in the file */
    size_t bytes;
    unsigned char scalar[8];   /* the data of a variable of at most 8 bytes */
    int used;
} nmt_ct2_var;

typedef struct nmt_ct2_alias {
    char *name, *target;
} nmt_ct2_alias;

typedef struct nmt_ct2_file {
    const char *path;          /* model.bin */
    FILE *fp;
    size_t size;
    int version, revision;
    char spec[64];
    nmt_ct2_var *vars;
    int count;
    nmt_ct2_alias *aliases;
    int alias_count;
    size_t chunk;              /* the most bytes of a variable read at once (NMT_CT2_CHUNK; at least
                                * one item) */
    void *data;                /* scratch for those bytes */
    size_t data_cap;
    float *scales;             /* scratch for their rows' scales */
    size_t scales_cap;         /* bytes */
} nmt_ct2_file;

/* Opens path and reads its header and variable table (errors name the path and the variable). */
int nmt_ct2_file_open(nmt_ct2_file *f, const char *path);
void nmt_ct2_file_close(nmt_ct2_file *f);
/* The variable `name` (an alias followed), or NULL; marks it used. */
nmt_ct2_var *nmt_ct2_file_find(nmt_ct2_file *f, const char *name);
/* A scalar variable's value; def when v is NULL or not a scalar. */
double nmt_ct2_file_scalar(const nmt_ct2_var *v, double def);
/* The scalar attribute scope/name, else the model-wide name (older revisions), else def. */
double nmt_ct2_file_attribute(nmt_ct2_file *f, const char *scope, const char *name, double def);
size_t nmt_ct2_var_elements(const nmt_ct2_var *v);
/* v as float32 into out[elements]: int8 and int16 dequantized as CTranslate2 does (q * (1 / scale),
 * with NAME_scale one per row or one in all; int16 without one: 1000), float16 and bfloat16 widened;
 * read f->chunk bytes at a time. */
int nmt_ct2_file_floats(nmt_ct2_file *f, nmt_ct2_var *v, float *out);
/* The same for elements [first, first + count) of v (in C order) into out[count]. */
int nmt_ct2_file_floats_range(nmt_ct2_file *f, nmt_ct2_var *v, size_t first, size_t count, float *out);

/* "SCOPE/layer_L/PART" (L >= 0) or "SCOPE/PART" into name[size]. */
void nmt_ct2_name(char *name, size_t size, const char *scope, int layer, const char *part);

/* One part of the layer layout: a weight [rows, cols] (Linear, y = x W^T + b, as nmt stores it), a
 * bias [rows] (cols 0; optional: a layer without one has zeros), or a LayerNorm (`name` its scope,
 * whose gamma and beta are data and beta, [rows] each). Self-attention's linear_0 is q|k|v, one
 * [3D, D] matrix (nmt keeps the three consecutive); cross-attention's linear_0 is q and linear_1 k|v. */
typedef enum { NMT_CT2_PART_WEIGHT, NMT_CT2_PART_BIAS, NMT_CT2_PART_NORM } nmt_ct2_part_kind;
typedef struct nmt_ct2_part {
    char name[NMT_CT2_MAX_NAME];
    nmt_ct2_part_kind kind;
    float *data, *beta;
    int64_t rows, cols;
} nmt_ct2_part;
typedef int (*nmt_ct2_part_fn)(void *ctx, const nmt_ct2_part *part);
/* Calls fn for every part of the encoder's and the decoder's layers, in order, then for the norms of
 * the embeddings where the model has them (encoder/layernorm_embedding, decoder/...), then for the
 * final norms of a pre-norm model (encoder/layer_norm, decoder/layer_norm); stops at the first that
 * fails. */
int nmt_ct2_layout_layers(const nmt_model_config *c, const nmt_params *p, nmt_ct2_part_fn fn, void *ctx);

#endif
