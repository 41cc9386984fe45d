#!/usr/bin/env python3
"""nmt model directory -> CTranslate2 model directory, through CTranslate2's own model spec.

Usage: nmt_to_ct2.py CT2_SRC_DIR NMT_MODEL_DIR OUT_DIR

CT2_SRC_DIR is a CTranslate2 source checkout; only its pure-Python spec classes
(python/ctranslate2/specs, numpy only) are imported, so its compiled extension is not needed. The nmt
Transformer maps onto TransformerSpec:
  - post-LN (norm_position post, the paper's): pre_norm=False, each sublayer's LayerNorm after its
    residual, no final norms, like Fairseq's; pre-LN (pre): pre_norm=True, each sublayer's LayerNorm
    on its input, and the final encoder.norm / decoder.norm as the stacks' layer_norm;
  - ReLU; embeddings scaled by sqrt(D) (CTranslate2's scale_embeddings); LayerNorm eps from the model;
  - positions: nmt's sinusoidal table is written out as position_encodings (PE(pos, 2i) = sin,
    PE(pos, 2i+1) = cos of pos / 10000^(2i/D), interleaved, first position 0: CTranslate2's own table
    puts the sines before the cosines and starts at position 1, so it would not match); learned
    positions are their tables; rope is not mapped;
  - tie_embeddings all: one embedding matrix for source, target and the output projection (the
    spec aliases the copies); decoder: the output projection is the target embedding; none: three
    matrices. The output projection has no bias in nmt (zeros here).
int8 model directories (I8 tensors with F32 "<name>.scale" row factors) are dequantized first.
The vocabulary is nmt's: SentencePiece ids with <pad> <unk> <s> </s> at 0-3 (spm.vocab's order),
written as shared_vocabulary.json; the source gets </s> appended where the model says source_eos 1 (its
default), the decoder starts from <s>.
Writes OUT_DIR/model.bin, config.json and shared_vocabulary.json.
"""
import importlib
import json
import math
import os
import struct
import sys
import types

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (header_len,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + header_len])
    meta = header.pop("__metadata__", {})
    base = 8 + header_len
    dtypes = {"F32": np.float32, "I8": np.int8}
    tensors = {}
    for name, t in header.items():
        if t["dtype"] not in dtypes:
            sys.exit("nmt_to_ct2.py: %s: tensor %s has dtype %s (F32 or I8 expected)" % (path, name, t["dtype"]))
        begin, end = t["data_offsets"]
        tensors[name] = np.frombuffer(blob[base + begin : base + end], dtype=dtypes[t["dtype"]]).reshape(t["shape"])
    for name in [n for n in tensors if tensors[n].dtype == np.int8]:
        tensors[name] = tensors[name].astype(np.float32) * tensors.pop(name + ".scale")[:, None]
    return {n: np.ascontiguousarray(v, dtype=np.float32) for n, v in tensors.items()}, meta


def sinusoidal(positions, d):
    """nmt_sinusoidal_positions: double precision, rounded to float32 once."""
    pe = np.zeros((positions, d), dtype=np.float32)
    pos = np.arange(positions, dtype=np.float64)
    for i in range(0, d, 2):
        inv_freq = math.pow(10000.0, -float(i) / d)
        pe[:, i] = np.sin(pos * inv_freq)
        if i + 1 < d:
            pe[:, i + 1] = np.cos(pos * inv_freq)
    return pe


def import_specs(ct2_src):
    package_dir = os.path.join(ct2_src, "python", "ctranslate2")
    if not os.path.isdir(os.path.join(package_dir, "specs")):
        sys.exit("nmt_to_ct2.py: %s has no python/ctranslate2/specs (not a CTranslate2 source tree)" % ct2_src)
    package = types.ModuleType("ctranslate2")
    package.__path__ = [package_dir]
    sys.modules["ctranslate2"] = package  # the specs without the compiled extension
    importlib.import_module("ctranslate2.specs")
    from ctranslate2.specs import common_spec, transformer_spec

    return common_spec, transformer_spec


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(2)
    ct2_src, model_dir, out_dir = sys.argv[1:]
    common_spec, transformer_spec = import_specs(ct2_src)

    w, meta = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    norm_position, positions, tie = meta.get("norm_position"), meta.get("positions"), meta.get("tie_embeddings")
    if norm_position not in ("post", "pre") or positions not in ("sinusoidal", "learned", "rope") \
            or tie not in ("all", "decoder", "none"):
        sys.exit("nmt_to_ct2.py: %s: norm_position %s, positions %s, tie_embeddings %s cannot be mapped "
                 "(post or pre; sinusoidal, learned or rope; all, decoder or none)"
                 % (model_dir, norm_position, positions, tie))
    pre_norm = norm_position == "pre"
    D, H = int(meta["d_model"]), int(meta["heads"])
    enc_layers, dec_layers = int(meta["encoder_layers"]), int(meta["decoder_layers"])
    rotary = {"rotary_dim": 0, "rotary_interleave": True} if positions == "rope" else {}
    spec = transformer_spec.TransformerSpec(
        transformer_spec.TransformerEncoderSpec(enc_layers, H, pre_norm=pre_norm, **rotary),
        transformer_spec.TransformerDecoderSpec(dec_layers, H, pre_norm=pre_norm, **rotary))
    spec.config.layer_norm_epsilon = float(meta["norm_eps"])

    def linear(s, prefix):
        s.weight = w[prefix + ".weight"]
        s.bias = w[prefix + ".bias"]

    def norm(s, prefix):
        s.gamma = w[prefix + ".weight"]
        s.beta = w[prefix + ".bias"]

    def fused(s, prefixes):
        s.weight = np.concatenate([w[p + ".weight"] for p in prefixes])
        s.bias = np.concatenate([w[p + ".bias"] for p in prefixes])

    def ffn(s, prefix):
        norm(s.layer_norm, prefix + "_norm")
        linear(s.linear_0, prefix + ".fc1")
        linear(s.linear_1, prefix + ".fc2")

    if tie == "all":
        src_embed = tgt_embed = output = w["embed.weight"]
    else:
        src_embed, tgt_embed = w["src_embed.weight"], w["tgt_embed.weight"]
        output = tgt_embed if tie == "decoder" else w["output.weight"]
    if positions == "sinusoidal":
        src_pe = tgt_pe = sinusoidal(int(meta["max_positions"]), D)
    elif positions == "learned":
        src_pe, tgt_pe = w["encoder.embed_positions.weight"], w["decoder.embed_positions.weight"]
    else:
        src_pe = tgt_pe = None  # rotary: no table

    enc, dec = spec.encoder, spec.decoder
    enc.embeddings[0].weight = src_embed
    if src_pe is not None:
        enc.position_encodings.encodings = src_pe
    for i, layer in enumerate(enc.layer):
        p = "encoder.layers.%d" % i
        fused(layer.self_attention.linear[0], [p + ".self_attn.%s_proj" % x for x in "qkv"])
        linear(layer.self_attention.linear[1], p + ".self_attn.o_proj")
        norm(layer.self_attention.layer_norm, p + ".self_attn_norm")
        ffn(layer.ffn, p + ".ffn")
    dec.embeddings.weight = tgt_embed
    if tgt_pe is not None:
        dec.position_encodings.encodings = tgt_pe
    dec.projection.weight = output
    dec.projection.bias = np.zeros(output.shape[0], dtype=np.float32)
    for i, layer in enumerate(dec.layer):
        p = "decoder.layers.%d" % i
        fused(layer.self_attention.linear[0], [p + ".self_attn.%s_proj" % x for x in "qkv"])
        linear(layer.self_attention.linear[1], p + ".self_attn.o_proj")
        norm(layer.self_attention.layer_norm, p + ".self_attn_norm")
        linear(layer.attention.linear[0], p + ".cross_attn.q_proj")
        fused(layer.attention.linear[1], [p + ".cross_attn.%s_proj" % x for x in "kv"])
        linear(layer.attention.linear[2], p + ".cross_attn.o_proj")
        norm(layer.attention.layer_norm, p + ".cross_attn_norm")
        ffn(layer.ffn, p + ".ffn")
    if pre_norm:
        norm(enc.layer_norm, "encoder.norm")
        norm(dec.layer_norm, "decoder.norm")

    with open(os.path.join(model_dir, "spm.vocab"), encoding="utf-8") as f:
        pieces = [line.rstrip("\n").split("\t")[0] for line in f]
    if pieces[:4] != ["<pad>", "<unk>", "<s>", "</s>"]:
        sys.exit("nmt_to_ct2.py: %s/spm.vocab does not start with <pad> <unk> <s> </s> (nmt's ids 0-3)" % model_dir)
    if len(pieces) != int(meta["vocab_size"]) or len(set(pieces)) != len(pieces):
        sys.exit("nmt_to_ct2.py: %s/spm.vocab has %d pieces (%d distinct), the model %s"
                 % (model_dir, len(pieces), len(set(pieces)), meta["vocab_size"]))
    spec.register_source_vocabulary(pieces)
    spec.register_target_vocabulary(pieces)
    spec.config.add_source_bos = False
    spec.config.add_source_eos = meta.get("source_eos", "1") == "1"
    spec.validate()
    spec.optimize(quantization=None)  # float32 on disk; int8 is chosen at load time (compute_type)
    os.makedirs(out_dir, exist_ok=True)
    spec.save(out_dir)
    print("nmt_to_ct2.py: wrote %s (%s-LN, %d + %d layers, d %d, %d heads, %d pieces)"
          % (out_dir, norm_position, enc_layers, dec_layers, D, H, len(pieces)), file=sys.stderr)


if __name__ == "__main__":
    main()
