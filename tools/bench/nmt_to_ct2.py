#!/usr/bin/env python3
"""nmt model directory -> CTranslate2 model directory, through CTranslate2's own model spec.

Usage: nmt_to_ct2.py CT2_SRC_DIR NMT_MODEL_DIR OUT_DIR

CT2_SRC_DIR is a CTranslate2 source checkout; only its pure-Python spec classes
(python/ctranslate2/specs, numpy only) are imported, so its compiled extension is not needed. The nmt
Transformer maps onto TransformerSpec as a post-norm (pre_norm=False) model like Fairseq's: each
sublayer's LayerNorm after its residual, no final encoder or decoder norm, ReLU, embeddings scaled by
sqrt(D) with sinusoidal positions added (nmt's table, PE(pos, 2i) = sin, PE(pos, 2i+1) = cos, written
out explicitly), one shared vocabulary when the embeddings are tied. int8 model directories (I8 tensors
with F32 "<name>.scale" row factors) are dequantized first. Writes OUT_DIR/model.bin, config.json and
shared_vocabulary.json (the SentencePiece pieces in id order: <pad> <unk> <s> </s> ...).
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
    dtypes = {"F32": np.float32, "I8": np.int8, "I64": np.int64, "U8": np.uint8}
    tensors = {}
    for name, t in header.items():
        begin, end = t["data_offsets"]
        tensors[name] = np.frombuffer(blob[base + begin : base + end], dtype=dtypes[t["dtype"]]).reshape(t["shape"])
    for name in [n for n in tensors if tensors[n].dtype == np.int8]:
        tensors[name] = tensors[name].astype(np.float32) * tensors.pop(name + ".scale")[:, None]
    return {n: np.ascontiguousarray(v, dtype=np.float32) for n, v in tensors.items()}, meta


def sinusoidal(positions, d):
    pe = np.zeros((positions, d), dtype=np.float32)
    for i in range(0, d, 2):
        freq = math.exp(-math.log(10000.0) * i / d)
        pe[:, i] = np.sin(np.arange(positions) * freq)
        if i + 1 < d:
            pe[:, i + 1] = np.cos(np.arange(positions) * freq)
    return pe


def import_specs(ct2_src):
    package = types.ModuleType("ctranslate2")
    package.__path__ = [os.path.join(ct2_src, "python", "ctranslate2")]
    sys.modules["ctranslate2"] = package  # the specs without the compiled extension
    return importlib.import_module("ctranslate2.specs")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip().splitlines()[2])
    ct2_src, model_dir, out_dir = sys.argv[1:]
    specs = import_specs(ct2_src)
    from ctranslate2.specs import common_spec, transformer_spec

    w, meta = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    if meta.get("norm_position") != "post" or meta.get("positions") != "sinusoidal" or meta.get("tie_embeddings") != "all":
        sys.exit("nmt_to_ct2.py: only post-LN, sinusoidal, tie_embeddings=all models are mapped (got %s, %s, %s)"
                 % (meta.get("norm_position"), meta.get("positions"), meta.get("tie_embeddings")))
    D, H = int(meta["d_model"]), int(meta["heads"])
    enc_layers, dec_layers = int(meta["encoder_layers"]), int(meta["decoder_layers"])
    spec = transformer_spec.TransformerSpec.from_config((enc_layers, dec_layers), H, pre_norm=False,
                                                        activation=common_spec.Activation.RELU)
    spec.config.layer_norm_epsilon = float(meta["norm_eps"])
    embed = w["embed.weight"]
    pe = sinusoidal(int(meta["max_positions"]), D)

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

    enc, dec = spec.encoder, spec.decoder
    enc.embeddings[0].weight = embed
    enc.position_encodings.encodings = pe
    for i, layer in enumerate(enc.layer):
        p = "encoder.layers.%d" % i
        fused(layer.self_attention.linear[0], [p + ".self_attn.%s_proj" % x for x in "qkv"])
        linear(layer.self_attention.linear[1], p + ".self_attn.o_proj")
        norm(layer.self_attention.layer_norm, p + ".self_attn_norm")
        ffn(layer.ffn, p + ".ffn")
    dec.embeddings.weight = embed
    dec.position_encodings.encodings = pe
    dec.projection.weight = embed
    dec.projection.bias = np.zeros(embed.shape[0], dtype=np.float32)
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

    with open(os.path.join(model_dir, "spm.vocab"), encoding="utf-8") as f:
        pieces = [line.split("\t")[0] for line in f]
    pieces[:4] = ["<pad>", "<unk>", "<s>", "</s>"]  # nmt's reserved ids
    spec.register_source_vocabulary(pieces)
    spec.register_target_vocabulary(pieces)
    spec.config.add_source_bos = False
    spec.config.add_source_eos = True
    spec.validate()
    spec.optimize(quantization=None)
    os.makedirs(out_dir, exist_ok=True)
    spec.save(out_dir)
    print("nmt_to_ct2.py: wrote %s (%d + %d layers, d %d, %d heads, %d pieces)"
          % (out_dir, enc_layers, dec_layers, D, H, len(pieces)), file=sys.stderr)


if __name__ == "__main__":
    main()
