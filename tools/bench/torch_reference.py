#!/usr/bin/python3
"""torch_reference: nmt's Transformer written in idiomatic PyTorch, to check nmt's numbers and to
measure what nmt has to beat. A developer tool, not part of the build or of CI.

Runs on Debian's PyTorch: /usr/bin/python3 with python3-torch (1.13; numpy comes with it). `--config`
needs python3-yaml; raw text and real corpora need SentencePiece's command-line tools (spm_encode,
spm_export_vocab; Debian package sentencepiece). Nothing else: safetensors is read and written here.

Subcommands (each has --help):
  init       write a model.safetensors of a given config, initialized as nmt initializes
  check      label-smoothed loss, NLL and per-sentence log-probs of a model on a batch (float64 by
             default); compares them with nmt's (`nmt score`) to a relative tolerance
  train      training throughput (non-pad target tokens/s), GFLOP/s and peak RSS, on Multi30k-like
             synthetic batches or real id files, with torch.optim.AdamW (Adam at weight decay 0) and the
             warmup schedule
  translate  greedy or beam-search decoding speed with cached keys/values (sentences/s, tokens/s)
  selftest   consistency checks of this file (incremental = full decoding, loss formula = PyTorch's,
             worked numbers of the sinusoids and of RoPE, masking, safetensors round trip)

The model (include/nmt/model.h, Vaswani et al. 2017):
  ids pad=0 unk=1 bos=2 eos=3; source = pieces+eos, decoder input = bos+pieces, target = pieces+eos.
  x = embed[id] * sqrt(D) + position(pos), pos counted from 0:
    sinusoidal  PE(pos,2i) = sin(pos/10000^(2i/D)), PE(pos,2i+1) = cos(pos/10000^(2i/D))
    learned     a table {encoder,decoder}.embed_positions.weight [max_positions, D]
    rope        nothing added; q and k of self-attention (not cross-attention) turned per head, pairs
                (2i, 2i+1) by a = pos * 10000^(-2i/dh):  (x0, x1) -> (x0 cos a - x1 sin a, x0 sin a + x1 cos a)
  then dropout. Attention scores q.k / sqrt(D/H), padded source keys masked, causal decoder self-attention.
  post-LN (default): x = LN(x + drop(sublayer(x)));  pre-LN: x = x + drop(sublayer(LN(x))) and a final
  LayerNorm per stack (encoder.norm, decoder.norm). LayerNorm: biased variance, norm_eps. FFN:
  fc2(relu(fc1(x))). Output logits = h W^T with W = output.weight, or the target embedding unscaled when tied.
  Loss: label-smoothed cross-entropy as PyTorch's CrossEntropyLoss(label_smoothing=eps) defines it: for
  each non-pad target token t with log-probabilities lp over the V classes (pad included),
      loss_t = (1 - eps) * (-lp[y_t]) + (eps / V) * sum_v (-lp[v])
  loss_sum = sum_t loss_t, nll_sum = sum_t -lp[y_t], tokens = number of non-pad target tokens.

Model files: safetensors (u64 little-endian header length, JSON header, F32 little-endian data), the
config as strings in "__metadata__", tensor names as nmt writes them: embed.weight (tie all) or src_embed.weight,
tgt_embed.weight (+ output.weight when not tied), encoder.layers.{i}.self_attn.{q,k,v,o}_proj.{weight,bias},
.self_attn_norm, .ffn.fc1, .ffn.fc2, .ffn_norm; decoder.layers.{i}.cross_attn.*, .cross_attn_norm;
encoder.norm, decoder.norm (pre-LN); encoder.embed_positions.weight, decoder.embed_positions.weight (learned).
"""
import argparse
import json
import math
import os
import random
import resource
import struct
import subprocess
import sys
import time

# PyTorch's OpenMP threads spin after each parallel region while Debian's OpenBLAS (pthreads) runs
# its own threads: on 2 cores they starve each other, 10-100x slower on a busy machine. Sleeping
# OpenMP threads give PyTorch its best speed here; OMP_WAIT_POLICY=ACTIVE shows the default.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402  (after the OpenMP setting, which libgomp reads when loaded)
import torch.nn as nn
import torch.nn.functional as F

PAD, UNK, BOS, EOS = 0, 1, 2, 3

DEFAULT_CONFIG = {
    "vocab_size": 8000, "d_model": 256, "heads": 4, "ffn": 1024, "encoder_layers": 3,
    "decoder_layers": 3, "dropout": 0.1, "attention_dropout": 0.0, "norm_position": "post",
    "positions": "sinusoidal", "max_positions": 1024, "norm_eps": 1e-5, "tie_embeddings": "all",
}
INT_KEYS = ("vocab_size", "d_model", "heads", "ffn", "encoder_layers", "decoder_layers", "max_positions")
FLOAT_KEYS = ("dropout", "attention_dropout", "norm_eps")
CHOICE_KEYS = {"norm_position": ("post", "pre"), "positions": ("sinusoidal", "learned", "rope"),
               "tie_embeddings": ("none", "decoder", "all")}


class ReferenceError(Exception):
    """A problem with the user's input: printed as one line, exit status 1."""


def log(message):
    print(message, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------
# model config

def config_check(cfg, where):
    for key in INT_KEYS:
        if not isinstance(cfg[key], int) or cfg[key] <= 0:
            raise ReferenceError(f"{where}: {key} must be a positive integer, not {cfg[key]!r}")
    for key in FLOAT_KEYS:
        if not isinstance(cfg[key], float) or not 0.0 <= cfg[key] < 1.0:
            raise ReferenceError(f"{where}: {key} must be a number in [0, 1), not {cfg[key]!r}")
    for key, choices in CHOICE_KEYS.items():
        if cfg[key] not in choices:
            raise ReferenceError(f"{where}: {key} must be one of {', '.join(choices)}, not {cfg[key]!r}")
    if cfg["d_model"] % cfg["heads"]:
        raise ReferenceError(f"{where}: d_model {cfg['d_model']} is not divisible by heads {cfg['heads']}")
    if cfg["positions"] == "rope" and (cfg["d_model"] // cfg["heads"]) % 2:
        raise ReferenceError(f"{where}: rope needs an even head dimension")
    if cfg["d_model"] % 2:
        raise ReferenceError(f"{where}: d_model must be even")
    return cfg


REQUIRED_KEYS = ("vocab_size", "d_model", "heads", "ffn", "encoder_layers", "decoder_layers", "norm_position",
                 "positions", "norm_eps", "tie_embeddings")


def config_parse(values, where, required=()):
    """Typed config from string values (the safetensors metadata, a YAML model section); keys in
    `required` must be present, the others default."""
    missing = [key for key in required if key not in values]
    if missing:
        raise ReferenceError(f"{where}: missing {', '.join(missing)}")
    cfg = dict(DEFAULT_CONFIG)
    for key, text in values.items():
        if key not in cfg:
            continue  # other metadata (e.g. a format version) is not the model's business
        try:
            if key in INT_KEYS:
                cfg[key] = int(text)
            elif key in FLOAT_KEYS:
                cfg[key] = float(text)
            else:
                cfg[key] = str(text)
        except ValueError:
            raise ReferenceError(f"{where}: {key}={text!r} is not a valid value") from None
    return config_check(cfg, where)


def config_metadata(cfg):
    return {key: (repr(value) if isinstance(value, float) else str(value)) for key, value in cfg.items()}


# ----------------------------------------------------------------------------------------------
# safetensors, by hand

def safetensors_read(path):
    """Returns ({name: float32 tensor}, {metadata key: string}); refuses malformed files."""
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError as e:
        raise ReferenceError(f"{path}: {e.strerror}") from None
    if len(blob) < 8:
        raise ReferenceError(f"{path}: too short for a safetensors file ({len(blob)} bytes)")
    (header_len,) = struct.unpack("<Q", blob[:8])
    if header_len > len(blob) - 8:
        raise ReferenceError(f"{path}: header length {header_len} exceeds the file ({len(blob)} bytes)")
    try:
        header = json.loads(blob[8:8 + header_len].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ReferenceError(f"{path}: the header is not valid JSON: {e}") from None
    if not isinstance(header, dict):
        raise ReferenceError(f"{path}: the header is not a JSON object")
    metadata = header.pop("__metadata__", {}) or {}
    data = memoryview(blob)[8 + header_len:]
    tensors = {}
    for name, info in header.items():
        try:
            dtype, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise ReferenceError(f"{path}: tensor {name}: malformed entry {info!r}") from None
        if dtype != "F32":
            raise ReferenceError(f"{path}: tensor {name}: dtype {dtype}, expected F32")
        count = math.prod(shape)
        if not 0 <= begin <= end <= len(data) or end - begin != 4 * count:
            raise ReferenceError(f"{path}: tensor {name}: byte range [{begin}, {end}) does not fit shape "
                                 f"{shape} in {len(data)} data bytes")
        buffer = bytearray(data[begin:end])  # little-endian F32, as on the x86/ARM hosts nmt targets
        tensors[name] = (torch.frombuffer(buffer, dtype=torch.float32).reshape(shape) if count
                         else torch.zeros(shape))
    return tensors, metadata


def safetensors_write(path, tensors, metadata):
    """Writes {name: tensor} as F32 in the given order, atomically (temp file, fsync, rename)."""
    header = {"__metadata__": metadata}
    chunks, offset = [], 0
    for name, tensor in tensors.items():
        raw = tensor.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensor.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # data 8-byte aligned, as the reference implementation pads
    temp = f"{path}.tmp{os.getpid()}"
    with open(temp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in chunks:
            f.write(raw)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temp, path)


# ----------------------------------------------------------------------------------------------
# the model

def sinusoids(length, d, dtype):
    """[length, d]: PE(pos,2i) = sin(pos/10000^(2i/d)), PE(pos,2i+1) = cos(pos/10000^(2i/d)); in float64, then cast."""
    pos = torch.arange(length, dtype=torch.float64)[:, None]
    angle = pos / torch.pow(10000.0, torch.arange(0, d, 2, dtype=torch.float64) / d)[None, :]
    pe = torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).reshape(length, d)
    return pe.to(dtype)


def rope(x, start):
    """x [B, H, L, dh] at positions start..start+L-1: pairs (2i, 2i+1) turned by pos * 10000^(-2i/dh)."""
    length, dh = x.shape[-2], x.shape[-1]
    pos = torch.arange(start, start + length, dtype=torch.float64)[:, None]
    angle = (pos * torch.pow(10000.0, -torch.arange(0, dh, 2, dtype=torch.float64) / dh)[None, :])
    cos, sin = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)  # [L, dh/2]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1).flatten(-2)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["d_model"]
        self.heads, self.head_dim = cfg["heads"], d // cfg["heads"]
        self.attention_dropout = cfg["attention_dropout"]
        self.q_proj, self.k_proj = nn.Linear(d, d), nn.Linear(d, d)
        self.v_proj, self.o_proj = nn.Linear(d, d), nn.Linear(d, d)

    def split(self, x):  # [B, L, D] -> [B, H, L, dh]
        return x.view(x.shape[0], x.shape[1], self.heads, self.head_dim).transpose(1, 2)

    def attend(self, q, k, v, mask):
        """q [B,H,Tq,dh], k v [B,H,Tk,dh], mask (True = hidden) broadcastable to [B,H,Tq,Tk] -> [B,Tq,D]."""
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.head_dim ** -0.5
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if self.training and self.attention_dropout > 0:
            weights = F.dropout(weights, self.attention_dropout)
        out = torch.matmul(weights, v).transpose(1, 2)
        return self.o_proj(out.reshape(out.shape[0], out.shape[1], -1))

    def forward(self, x, memory, mask, use_rope):
        q, k, v = self.split(self.q_proj(x)), self.split(self.k_proj(memory)), self.split(self.v_proj(memory))
        if use_rope:
            q, k = rope(q, 0), rope(k, 0)
        return self.attend(q, k, v, mask)

    def memory_kv(self, memory):
        """Cross-attention keys and values of the encoder output, computed once per batch."""
        return self.split(self.k_proj(memory)), self.split(self.v_proj(memory))

    def step_self(self, x, cache, layer, pos, use_rope):
        """x [n,1,D] at position pos; appends its key and value to the cache of `layer`."""
        q, k, v = self.split(self.q_proj(x)), self.split(self.k_proj(x)), self.split(self.v_proj(x))
        if use_rope:
            q, k = rope(q, pos), rope(k, pos)
        cache.append(layer, k, v)
        return self.attend(q, cache.k[layer], cache.v[layer], None)

    def step_cross(self, x, k, v, mask):
        return self.attend(self.split(self.q_proj(x)), k, v, mask)


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fc1 = nn.Linear(cfg["d_model"], cfg["ffn"])
        self.fc2 = nn.Linear(cfg["ffn"], cfg["d_model"])

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class Layer(nn.Module):
    """An encoder layer (self-attention, FFN) or, with cross=True, a decoder layer (+ cross-attention)."""

    def __init__(self, cfg, cross):
        super().__init__()
        d, eps = cfg["d_model"], cfg["norm_eps"]
        self.pre_norm = cfg["norm_position"] == "pre"
        self.use_rope = cfg["positions"] == "rope"
        self.dropout = cfg["dropout"]
        self.self_attn, self.self_attn_norm = Attention(cfg), nn.LayerNorm(d, eps=eps)
        if cross:
            self.cross_attn, self.cross_attn_norm = Attention(cfg), nn.LayerNorm(d, eps=eps)
        self.ffn, self.ffn_norm = FeedForward(cfg), nn.LayerNorm(d, eps=eps)

    def sublayer(self, x, norm, fn):
        if self.pre_norm:
            return x + F.dropout(fn(norm(x)), self.dropout, self.training)
        return norm(x + F.dropout(fn(x), self.dropout, self.training))

    def forward(self, x, self_mask, memory=None, memory_mask=None):
        x = self.sublayer(x, self.self_attn_norm, lambda h: self.self_attn(h, h, self_mask, self.use_rope))
        if memory is not None:
            x = self.sublayer(x, self.cross_attn_norm, lambda h: self.cross_attn(h, memory, memory_mask, False))
        return self.sublayer(x, self.ffn_norm, self.ffn)

    def step(self, x, cache, layer, pos, memory_mask):
        x = self.sublayer(x, self.self_attn_norm,
                          lambda h: self.self_attn.step_self(h, cache, layer, pos, self.use_rope))
        x = self.sublayer(x, self.cross_attn_norm,
                          lambda h: self.cross_attn.step_cross(h, cache.ck[layer], cache.cv[layer], memory_mask))
        return self.sublayer(x, self.ffn_norm, self.ffn)


class Stack(nn.Module):
    """The encoder or the decoder: its layers, final norm (pre-LN) and learned positions."""

    def __init__(self, cfg, layers, cross):
        super().__init__()
        self.cfg = cfg
        self.layers = nn.ModuleList(Layer(cfg, cross) for _ in range(layers))
        if cfg["norm_position"] == "pre":
            self.norm = nn.LayerNorm(cfg["d_model"], eps=cfg["norm_eps"])
        if cfg["positions"] == "learned":
            self.embed_positions = nn.Embedding(cfg["max_positions"], cfg["d_model"])
        self.sinusoid_table = None

    def embed(self, table, ids, start):
        """ids [B, L] at positions start.. -> [B, L, D]: embedding * sqrt(D) + position, dropout."""
        cfg, length = self.cfg, ids.shape[1]
        x = F.embedding(ids, table) * math.sqrt(cfg["d_model"])
        end = start + length
        if cfg["positions"] == "learned":
            if end > cfg["max_positions"]:
                raise ReferenceError(f"a sequence of {end} tokens exceeds max_positions {cfg['max_positions']}")
            x = x + self.embed_positions.weight[start:end]
        elif cfg["positions"] == "sinusoidal":
            if self.sinusoid_table is None or self.sinusoid_table.shape[0] < end \
                    or self.sinusoid_table.dtype != x.dtype:
                self.sinusoid_table = sinusoids(max(end, 256), cfg["d_model"], x.dtype)
            x = x + self.sinusoid_table[start:end]
        return F.dropout(x, cfg["dropout"], self.training)

    def finish(self, x):
        return self.norm(x) if hasattr(self, "norm") else x


class DecoderCache:
    """Per decoder layer: self-attention keys/values so far [n,H,t,dh], cross-attention ones [n,H,S,dh]."""

    def __init__(self, model, memory):
        self.k = [None] * len(model.decoder.layers)
        self.v = [None] * len(model.decoder.layers)
        kv = [layer.cross_attn.memory_kv(memory) for layer in model.decoder.layers]
        self.ck = [k for k, _ in kv]
        self.cv = [v for _, v in kv]

    def append(self, layer, k, v):
        if self.k[layer] is None:
            self.k[layer], self.v[layer] = k, v
        else:
            self.k[layer] = torch.cat([self.k[layer], k], dim=2)
            self.v[layer] = torch.cat([self.v[layer], v], dim=2)

    def select(self, rows):
        """Keeps (and reorders) the batch rows `rows` of every cached tensor."""
        for cached in (self.k, self.v, self.ck, self.cv):
            for i, tensor in enumerate(cached):
                if tensor is not None:
                    cached[i] = tensor.index_select(0, rows)


class Transformer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        vocab, d = cfg["vocab_size"], cfg["d_model"]
        if cfg["tie_embeddings"] == "all":
            self.embed = nn.Embedding(vocab, d)
        else:
            self.src_embed, self.tgt_embed = nn.Embedding(vocab, d), nn.Embedding(vocab, d)
        if cfg["tie_embeddings"] == "none":
            self.output = nn.Linear(d, vocab, bias=False)
        self.encoder = Stack(cfg, cfg["encoder_layers"], cross=False)
        self.decoder = Stack(cfg, cfg["decoder_layers"], cross=True)

    def src_table(self):
        return self.embed.weight if self.cfg["tie_embeddings"] == "all" else self.src_embed.weight

    def tgt_table(self):
        return self.embed.weight if self.cfg["tie_embeddings"] == "all" else self.tgt_embed.weight

    def out_weight(self):
        return self.output.weight if self.cfg["tie_embeddings"] == "none" else self.tgt_table()

    def encode(self, src):
        """src [B,S] -> encoder output [B,S,D] and the padding mask [B,1,1,S] (True = pad)."""
        mask = (src == PAD)[:, None, None, :]
        x = self.encoder.embed(self.src_table(), src, 0)
        for layer in self.encoder.layers:
            x = layer(x, mask)
        return self.encoder.finish(x), mask

    def forward(self, src, tgt_in):
        """Logits [B,T,V] of every target position."""
        memory, memory_mask = self.encode(src)
        length = tgt_in.shape[1]
        causal = torch.ones(length, length, dtype=torch.bool, device=src.device).triu(1)
        x = self.decoder.embed(self.tgt_table(), tgt_in, 0)
        for layer in self.decoder.layers:
            x = layer(x, causal, memory, memory_mask)
        return F.linear(self.decoder.finish(x), self.out_weight())

    def step(self, tokens, cache, pos, memory_mask):
        """tokens [n] at position pos, decoded incrementally -> logits [n, V]."""
        x = self.decoder.embed(self.tgt_table(), tokens[:, None], pos)
        for i, layer in enumerate(self.decoder.layers):
            x = layer.step(x, cache, i, pos, memory_mask)
        return F.linear(self.decoder.finish(x)[:, 0], self.out_weight())

    def init_weights(self, seed):
        """nmt's initialization: Xavier-uniform weight matrices, N(0, D^-1/2) embeddings and learned
        positions, zero biases, LayerNorm gain 1 and bias 0."""
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if "embed" in name:
                    p.normal_(0.0, self.cfg["d_model"] ** -0.5, generator=generator)
                elif "norm" in name:
                    p.fill_(1.0 if name.endswith("weight") else 0.0)
                elif name.endswith("bias"):
                    p.zero_()
                else:
                    bound = math.sqrt(6.0 / (p.shape[0] + p.shape[1]))
                    p.uniform_(-bound, bound, generator=generator)

    def perturb(self, seed, scale=0.1):
        """Random biases and LayerNorm parameters, so that a check exercises them too."""
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith("bias") or "norm" in name:
                    p.add_(torch.randn(p.shape, generator=generator, dtype=p.dtype) * scale)


def model_load(path):
    tensors, metadata = safetensors_read(path)
    required = REQUIRED_KEYS + (("max_positions",) if metadata.get("positions") == "learned" else ())
    cfg = config_parse(metadata, f"{path}: __metadata__", required)
    model = Transformer(cfg)
    expected = model.state_dict()
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    if missing or unexpected:
        raise ReferenceError(f"{path}: tensors do not match the config (missing: {missing[:5]}, "
                             f"unexpected: {unexpected[:5]})")
    for name, tensor in tensors.items():
        if tuple(tensor.shape) != tuple(expected[name].shape):
            raise ReferenceError(f"{path}: tensor {name} has shape {list(tensor.shape)}, "
                                 f"expected {list(expected[name].shape)}")
    model.load_state_dict(tensors)
    return model


def model_save(model, path):
    safetensors_write(path, dict(model.state_dict()), config_metadata(model.cfg))


# ----------------------------------------------------------------------------------------------
# loss, batches, FLOPs

def label_smoothed_loss(logits, target, eps):
    """logits [N,V], target [N] -> (loss_sum, nll_sum, tokens) over non-pad targets, the formula of the
    module docstring written out (selftest checks it against F.cross_entropy(label_smoothing=eps))."""
    keep = target != PAD
    logprobs = F.log_softmax(logits[keep], dim=-1)
    nll = -logprobs.gather(1, target[keep][:, None]).squeeze(1)
    smooth = -logprobs.mean(dim=-1)
    loss = (1.0 - eps) * nll + eps * smooth
    return loss.sum(), nll.sum(), int(keep.sum())


def make_batch(pairs):
    """pairs of (source pieces, target pieces) -> src [B,S], tgt_in [B,T], tgt_out [B,T], padded with 0."""
    src_len = max(len(s) for s, _ in pairs) + 1
    tgt_len = max(len(t) for _, t in pairs) + 1
    src = torch.zeros(len(pairs), src_len, dtype=torch.long)
    tgt_in = torch.zeros(len(pairs), tgt_len, dtype=torch.long)
    tgt_out = torch.zeros(len(pairs), tgt_len, dtype=torch.long)
    for b, (s, t) in enumerate(pairs):
        src[b, :len(s) + 1] = torch.tensor(list(s) + [EOS])
        tgt_in[b, :len(t) + 1] = torch.tensor([BOS] + list(t))
        tgt_out[b, :len(t) + 1] = torch.tensor(list(t) + [EOS])
    return src, tgt_in, tgt_out


def token_batches(pairs, batch_tokens, rng):
    """Length-bucketed batches of at most batch_tokens padded target tokens (target = pieces + eos),
    in a random order: the batching nmt train describes."""
    order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][1]), len(pairs[i][0]), rng.random()))
    batches, current, longest = [], [], 0
    for i in order:
        length = len(pairs[i][1]) + 1
        if current and max(longest, length) * (len(current) + 1) > batch_tokens:
            batches.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, length)
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


def train_flops(cfg, batch, src_len, tgt_len):
    """Multiply-add FLOPs (2 per MAC) of the matrix products of one forward + backward on padded shapes;
    backward = 2 x forward (input and weight gradients). Elementwise work is not counted."""
    d, f, v, b = cfg["d_model"], cfg["ffn"], cfg["vocab_size"], batch
    ns, nt = b * src_len, b * tgt_len
    encoder = 2 * ns * d * 3 * d + 2 * 2 * b * src_len * src_len * d + 2 * ns * d * d + 2 * 2 * ns * d * f
    decoder = (2 * nt * d * 3 * d + 2 * 2 * b * tgt_len * tgt_len * d + 2 * nt * d * d      # self-attention
               + 2 * nt * d * d + 2 * ns * d * 2 * d + 2 * 2 * b * tgt_len * src_len * d + 2 * nt * d * d  # cross
               + 2 * 2 * nt * d * f)
    output = 2 * nt * d * v
    return 3 * (cfg["encoder_layers"] * encoder + cfg["decoder_layers"] * decoder + output)


# ----------------------------------------------------------------------------------------------
# decoding

def length_penalty(length, alpha):
    """GNMT: ((5 + |y|) / 6)^alpha, |y| = pieces + eos."""
    return ((5.0 + length) / 6.0) ** alpha


def max_lengths(src, ratio):
    """Per sentence: at most ratio * |x| + 10 target tokens (eos included), |x| = source pieces."""
    pieces = (src != PAD).sum(dim=1) - 1
    return (ratio * pieces.double()).floor().long() + 10


def length_limits(src, ratio, forced):
    """(limit [B], whether eos is banned before the limit): the ratio's limit, or forced lengths
    (tokens with eos) for speed measurements that must not depend on a model's output lengths."""
    if forced is None:
        return max_lengths(src, ratio), False
    return torch.tensor(forced, dtype=torch.long), True


def greedy_search(model, src, ratio, forced=None):
    """src [B,S] -> a list of B piece lists. Finished sentences leave the batch. forced: see length_limits."""
    memory, memory_mask = model.encode(src)
    cache = DecoderCache(model, memory)
    limit, ban_eos = length_limits(src, ratio, forced)
    alive = torch.arange(src.shape[0])
    tokens = torch.full((src.shape[0],), BOS, dtype=torch.long)
    hyps = [[] for _ in range(src.shape[0])]
    for pos in range(int(limit.max())):
        logits = model.step(tokens, cache, pos, memory_mask)
        logits[:, PAD] = float("-inf")
        logits[:, BOS] = float("-inf")
        if ban_eos:
            logits[:, EOS] = float("-inf")
        best = logits.argmax(dim=-1)
        best[pos + 1 >= limit[alive]] = EOS
        for row, token in zip(alive.tolist(), best.tolist()):
            if token != EOS:
                hyps[row].append(token)
        going = (best != EOS).nonzero().squeeze(1)
        if len(going) == 0:
            break
        if len(going) < len(alive):
            alive, best, memory_mask = alive[going], best[going], memory_mask[going]
            cache.select(going)
        tokens = best
    return hyps


def beam_search(model, src, ratio, beam, alpha, exact_stop, forced=None):
    """src [B,S] -> a list of B (best hypothesis pieces, its log-probability). Beams are folded into the
    batch (row = sentence * beam + k); eos candidates among the top `beam` finish a hypothesis; a sentence
    is done when it has `beam` finished hypotheses (with exact_stop: and no live beam can still beat the
    worst of them under the length penalty), then it leaves the batch. forced: see length_limits."""
    bsz, vocab = src.shape[0], model.cfg["vocab_size"]
    memory, memory_mask = model.encode(src)
    rows = torch.arange(bsz).repeat_interleave(beam)
    memory, memory_mask = memory[rows], memory_mask[rows]
    cache = DecoderCache(model, memory)
    limit, ban_eos = length_limits(src, ratio, forced)
    sentence = torch.arange(bsz)                       # original index of each live sentence
    history = torch.full((bsz * beam, 1), BOS, dtype=torch.long)
    scores = torch.zeros(bsz, beam, dtype=memory.dtype)
    scores[:, 1:] = float("-inf")                      # step 0: one live beam per sentence
    finished = [[] for _ in range(bsz)]                # (normalized score, log-prob, pieces)
    first_k = torch.arange(2 * beam) < beam
    for pos in range(int(limit.max())):
        live = len(sentence)
        logprobs = F.log_softmax(model.step(history[:, -1], cache, pos, memory_mask), dim=-1)
        eos_logprobs = logprobs[:, EOS].clone()
        logprobs[:, PAD] = float("-inf")
        logprobs[:, BOS] = float("-inf")
        if ban_eos:
            logprobs[:, EOS] = float("-inf")
        candidates = (scores.reshape(-1, 1) + logprobs).view(live, beam, vocab)
        last = pos + 1 >= limit[sentence]
        if last.any():
            eos_only = scores[last] + (eos_logprobs.view(live, beam)[last])
            candidates[last] = float("-inf")
            candidates[last, :, EOS] = eos_only
        top_scores, top_index = candidates.view(live, -1).topk(2 * beam, dim=1)
        origin, token = top_index // vocab, top_index % vocab
        ends = (token == EOS) & first_k & torch.isfinite(top_scores)
        for i, j in ends.nonzero().tolist():
            pieces = history[i * beam + origin[i, j], 1:].tolist()
            score = float(top_scores[i, j])
            finished[sentence[i]].append((score / length_penalty(len(pieces) + 1, alpha), score, pieces))
        # the best `beam` candidates that do not end go on
        rank = torch.arange(2 * beam)[None, :] + (token == EOS).long() * 2 * beam
        keep = rank.topk(beam, dim=1, largest=False).indices
        origin, token, top_scores = origin.gather(1, keep), token.gather(1, keep), top_scores.gather(1, keep)
        going = []
        for i in range(live):
            done = finished[sentence[i]]
            if len(done) >= beam and exact_stop:
                worst = sorted(done, reverse=True)[beam - 1][0]
                hope = float(top_scores[i, 0]) / length_penalty(int(limit[sentence[i]]), alpha)
                if hope > worst:
                    going.append(i)
            elif len(done) < beam and not bool(last[i]):
                going.append(i)
        if not going:
            break
        going = torch.tensor(going)
        flat = (going[:, None] * beam + origin[going]).reshape(-1)
        history = torch.cat([history[flat], token[going].reshape(-1, 1)], dim=1)
        scores, sentence, memory_mask = top_scores[going], sentence[going], memory_mask[flat]
        cache.select(flat)
    results = []
    for done in finished:
        best = max(done, key=lambda h: h[0])
        results.append((best[2], best[1]))
    return results


# ----------------------------------------------------------------------------------------------
# input

def read_ids(path):
    """One sentence of space-separated piece ids a line (no bos/eos)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise ReferenceError(f"{path}: {e.strerror}") from None
    sentences = []
    for number, line in enumerate(lines, 1):
        try:
            ids = [int(t) for t in line.split()]
        except ValueError:
            raise ReferenceError(f"{path}:{number}: not a list of integer ids") from None
        if any(i < 0 for i in ids):
            raise ReferenceError(f"{path}:{number}: negative id")
        sentences.append(ids)
    return sentences


def spm_encode(spm_model, path):
    """Piece ids of a raw text file through SentencePiece's spm_encode (the library nmt links too)."""
    try:
        done = subprocess.run(["spm_encode", f"--model={spm_model}", "--output_format=id", f"--input={path}"],
                              capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise ReferenceError("spm_encode not found (Debian package sentencepiece)") from None
    if done.returncode:
        raise ReferenceError(f"spm_encode {path}: {done.stderr.strip()}")
    return [[int(t) for t in line.split()] for line in done.stdout.splitlines()]


def spm_vocab_size(spm_model):
    try:
        done = subprocess.run(["spm_export_vocab", f"--model={spm_model}"], capture_output=True, text=True,
                              check=False)
    except FileNotFoundError:
        raise ReferenceError("spm_export_vocab not found (Debian package sentencepiece)") from None
    if done.returncode:
        raise ReferenceError(f"spm_export_vocab {spm_model}: {done.stderr.strip()}")
    return len(done.stdout.splitlines())


def check_ids(sentences, vocab, path):
    for number, ids in enumerate(sentences, 1):
        if ids and max(ids) >= vocab:
            raise ReferenceError(f"{path}:{number}: id {max(ids)} is outside the vocabulary of {vocab}")


def synthetic_pairs(count, vocab, src_mean, tgt_mean, rng):
    """Multi30k-like pairs of random ids: source pieces log-normal around src_mean (Multi30k en with an
    8k joint unigram vocabulary: mean 14.6, sd 4.9 pieces), target = source * tgt_mean/src_mean * noise."""
    sigma = 0.33
    mu = math.log(src_mean) - sigma * sigma / 2
    pairs = []
    for _ in range(count):
        s = min(127, max(1, round(rng.lognormvariate(mu, sigma))))
        t = min(127, max(1, round(s * tgt_mean / src_mean * rng.lognormvariate(-0.01, 0.14))))
        pairs.append(([rng.randrange(4, vocab) for _ in range(s)], [rng.randrange(4, vocab) for _ in range(t)]))
    return pairs


def machine_state():
    return {"loadavg": [round(x, 2) for x in os.getloadavg()], "torch": torch.__version__,
            "threads": torch.get_num_threads(), "OMP_WAIT_POLICY": os.environ["OMP_WAIT_POLICY"],
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", "")}


def peak_rss_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1024 * 1024)  # ru_maxrss is KiB on Linux


# ----------------------------------------------------------------------------------------------
# subcommands

def add_model_args(parser):
    for key, value in DEFAULT_CONFIG.items():
        choices = CHOICE_KEYS.get(key)
        kind = int if key in INT_KEYS else float if key in FLOAT_KEYS else str
        parser.add_argument("--" + key.replace("_", "-"), dest=key, type=kind, choices=choices, default=None,
                            help=f"model.{key} (default {value})")


def model_config_from_args(args, base):
    cfg = dict(base)
    for key in DEFAULT_CONFIG:
        if getattr(args, key) is not None:
            cfg[key] = getattr(args, key)
    return config_check(cfg, "command line")


def cmd_init(args):
    cfg = model_config_from_args(args, DEFAULT_CONFIG)
    model = Transformer(cfg)
    model.init_weights(args.seed)
    if args.perturb:
        model.perturb(args.seed + 1)
    model_save(model, args.output)
    log(f"wrote {args.output}: {sum(p.numel() for p in model.parameters())} parameters, {cfg}")


def compare_numbers(label, ours, theirs, rtol):
    """Returns the worst relative difference; prints the pairs beyond rtol."""
    worst, bad = 0.0, 0
    for i, (a, b) in enumerate(zip(ours, theirs)):
        rel = abs(a - b) / max(abs(a), abs(b), 1e-30)
        worst = max(worst, rel)
        if rel > rtol:
            bad += 1
            if bad <= 10:
                log(f"  {label} {i + 1}: torch {a!r} nmt {b!r} (relative difference {rel:.3g})")
    return worst, bad


def read_nmt_scores(path):
    values = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            try:
                values.append(float(line.split()[0]))
            except (ValueError, IndexError):
                raise ReferenceError(f"{path}:{number}: expected a log-probability") from None
    return values


def cmd_check(args):
    model = model_load(args.model)
    dtype = torch.float64 if args.dtype == "float64" else torch.float32
    model.to(dtype).eval()
    src_ids = spm_encode(args.spm, args.src) if args.spm else read_ids(args.src)
    tgt_ids = spm_encode(args.spm, args.tgt) if args.spm else read_ids(args.tgt)
    if len(src_ids) != len(tgt_ids):
        raise ReferenceError(f"{args.src} has {len(src_ids)} lines but {args.tgt} has {len(tgt_ids)}")
    check_ids(src_ids, model.cfg["vocab_size"], args.src)
    check_ids(tgt_ids, model.cfg["vocab_size"], args.tgt)
    eps = args.label_smoothing
    loss_sum = nll_sum = ce_sum = 0.0
    tokens, sentence_logprobs = 0, []
    with torch.inference_mode():
        for start in range(0, len(src_ids), args.batch_size):
            pairs = list(zip(src_ids[start:start + args.batch_size], tgt_ids[start:start + args.batch_size]))
            src, tgt_in, tgt_out = make_batch(pairs)
            logits = model(src, tgt_in)
            flat_logits, flat_target = logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1)
            loss, nll, count = label_smoothed_loss(flat_logits, flat_target, eps)
            loss_sum, nll_sum, tokens = loss_sum + float(loss), nll_sum + float(nll), tokens + count
            ce_sum += float(F.cross_entropy(flat_logits, flat_target, ignore_index=PAD, label_smoothing=eps,
                                            reduction="sum"))
            token_logprobs = F.log_softmax(logits, dim=-1).gather(2, tgt_out[:, :, None]).squeeze(2)
            token_logprobs = token_logprobs.masked_fill(tgt_out == PAD, 0.0)
            sentence_logprobs.extend(token_logprobs.sum(dim=1).tolist())
    summary = {"model": args.model, "dtype": args.dtype, "sentences": len(sentence_logprobs), "tokens": tokens,
               "label_smoothing": eps, "loss_sum": loss_sum, "nll_sum": nll_sum,
               "loss": loss_sum / max(tokens, 1), "nll": nll_sum / max(tokens, 1),
               "loss_sum_torch_cross_entropy": ce_sum}
    if args.scores:
        with open(args.scores, "w", encoding="utf-8") as f:
            f.writelines(f"{x:.9g}\n" for x in sentence_logprobs)
    print(json.dumps(summary))
    failures = []
    if abs(ce_sum - loss_sum) > 1e-6 * abs(loss_sum):
        failures.append(f"the written-out loss {loss_sum!r} differs from F.cross_entropy's {ce_sum!r}")
    if args.nmt_scores:
        theirs = read_nmt_scores(args.nmt_scores)
        if len(theirs) != len(sentence_logprobs):
            failures.append(f"{args.nmt_scores} has {len(theirs)} scores for {len(sentence_logprobs)} sentences")
        else:
            worst, bad = compare_numbers("sentence", sentence_logprobs, theirs, args.rtol)
            log(f"log-probs: {len(theirs)} sentences, worst relative difference {worst:.3g} (tolerance {args.rtol})")
            if bad:
                failures.append(f"{bad} sentence log-probs differ by more than {args.rtol} relative")
    if args.nmt_loss:
        with open(args.nmt_loss, encoding="utf-8") as f:
            theirs = json.load(f)
        if int(theirs.get("tokens", -1)) != tokens:
            failures.append(f"nmt counts {theirs.get('tokens')} target tokens, torch {tokens}")
        for key in ("loss_sum", "nll_sum"):
            worst, bad = compare_numbers(key, [summary[key]], [float(theirs[key])], args.rtol)
            log(f"{key}: torch {summary[key]!r} nmt {float(theirs[key])!r} (relative difference {worst:.3g})")
            if bad:
                failures.append(f"{key} differs by more than {args.rtol} relative")
    for failure in failures:
        log(f"MISMATCH: {failure}")
    if not failures and (args.nmt_scores or args.nmt_loss):
        log(f"check passed: nmt agrees with PyTorch ({args.dtype}) to {args.rtol} relative")
    return 1 if failures else 0


def load_yaml_config(path):
    """The model and train sections of an nmt YAML config, and its training data/vocabulary paths."""
    try:
        import yaml
    except ImportError:
        raise ReferenceError("--config needs python3-yaml") from None
    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ReferenceError(f"{path}: {e}") from None
    model = doc.get("model", {}) or {}
    base = os.path.dirname(os.path.abspath(path))
    root = os.path.join(base, str((doc.get("data") or {}).get("root", ".")))
    train_data = ((doc.get("data") or {}).get("train")) or {}
    if isinstance(train_data, list):  # several weighted corpora: the reference reads one
        if len(train_data) != 1 or int(train_data[0].get("weight", 1)) != 1:
            raise ReferenceError(f"{path}: data.train lists several corpora or a weight; the reference reads one corpus")
        train_data = train_data[0]
    vocab = doc.get("vocab") or {}
    cfg = config_parse({k: v for k, v in model.items()}, f"{path}: model")
    cfg["vocab_size"] = int(vocab.get("size", cfg["vocab_size"]))
    train = doc.get("train") or {}
    optimizer = train.get("optimizer") or {}
    resolved = {"model": cfg, "batch_tokens": int(train.get("batch_tokens", 4096)),
                "label_smoothing": float(train.get("label_smoothing", 0.1)),
                "lr": float(optimizer.get("lr", 1e-3)), "betas": tuple(optimizer.get("betas", (0.9, 0.98))),
                "adam_eps": float(optimizer.get("eps", 1e-9)), "warmup": int(optimizer.get("warmup", 800)),
                "clip_norm": float(optimizer.get("clip_norm", 0.0)),
                "weight_decay": float(optimizer.get("weight_decay", 0.0)), "seed": int(train.get("seed", 1)),
                "max_length": int((doc.get("data") or {}).get("max_length", 128)),
                "src": os.path.join(root, train_data["src"]) if "src" in train_data else None,
                "tgt": os.path.join(root, train_data["tgt"]) if "tgt" in train_data else None,
                "spm": None}
    if "model" in vocab:  # relative to the config file's directory, else to data.root
        candidates = [os.path.join(base, str(vocab["model"])), os.path.join(root, str(vocab["model"]))]
        resolved["spm"] = next((c for c in candidates if os.path.exists(c)), candidates[0])
    else:  # the vocabulary `nmt train` left in the output directory, as `nmt bench train` uses it
        name = os.path.splitext(os.path.basename(path))[0]
        left = os.path.join(base, str(doc.get("output", os.path.join("..", "runs", name))), "spm.model")
        resolved["spm"] = left if os.path.exists(left) else None
    return resolved


def training_pairs(args, cfg, max_length, rng):
    """Real pairs from id files or SentencePiece-encoded text, else synthetic ones; and what was used."""
    if args.src_ids or args.tgt_ids:
        if not (args.src_ids and args.tgt_ids):
            raise ReferenceError("--src-ids and --tgt-ids go together")
        src, tgt = read_ids(args.src_ids), read_ids(args.tgt_ids)
        origin = f"ids {args.src_ids} {args.tgt_ids}"
    elif args.spm and args.src and args.tgt:
        cfg["vocab_size"] = spm_vocab_size(args.spm)
        src, tgt = spm_encode(args.spm, args.src), spm_encode(args.spm, args.tgt)
        origin = f"text {args.src} {args.tgt} encoded with {args.spm}"
    else:
        pairs = synthetic_pairs(args.synthetic_sentences, cfg["vocab_size"], args.src_mean, args.tgt_mean, rng)
        return pairs, (f"synthetic: {len(pairs)} pairs of random ids, log-normal lengths, mean "
                       f"{args.src_mean} source / {args.tgt_mean} target pieces")
    if len(src) != len(tgt):
        raise ReferenceError(f"the sources have {len(src)} lines but the targets {len(tgt)}")
    check_ids(src, cfg["vocab_size"], "source")
    check_ids(tgt, cfg["vocab_size"], "target")
    pairs = [(s, t) for s, t in zip(src, tgt) if s and t and len(s) <= max_length and len(t) <= max_length]
    return pairs, f"{origin}: {len(pairs)} of {len(src)} pairs"


def cmd_train(args):
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    settings = {"model": dict(DEFAULT_CONFIG), "batch_tokens": 4096, "label_smoothing": 0.1, "lr": 1e-3,
                "betas": (0.9, 0.98), "adam_eps": 1e-9, "warmup": 800, "clip_norm": 0.0, "weight_decay": 0.0,
                "max_length": 128, "src": None, "tgt": None, "spm": None}
    if args.config:
        settings.update(load_yaml_config(args.config))
        if not args.src_ids and settings["src"] and settings["spm"] and os.path.exists(settings["spm"]):
            args.src, args.tgt, args.spm = args.src or settings["src"], args.tgt or settings["tgt"], \
                args.spm or settings["spm"]
    for key in ("batch_tokens", "label_smoothing", "lr", "warmup"):
        if getattr(args, key) is not None:
            settings[key] = getattr(args, key)
    cfg = model_config_from_args(args, settings["model"])
    pairs, origin = training_pairs(args, cfg, settings["max_length"], rng)
    log(f"data: {origin}")
    model = Transformer(cfg)
    model.init_weights(args.seed)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings["lr"], betas=tuple(settings["betas"]),
                                  eps=settings["adam_eps"], weight_decay=settings["weight_decay"])
    warmup, peak_lr, eps = settings["warmup"], settings["lr"], settings["label_smoothing"]
    vocab = cfg["vocab_size"]
    total_steps = args.warmup_steps + args.steps
    schedule, epoch_batches = [], []
    while len(schedule) < total_steps:
        if not epoch_batches:
            epoch_batches = token_batches(pairs, settings["batch_tokens"], rng)
        schedule.append(epoch_batches.pop())
    log(f"model: {sum(p.numel() for p in model.parameters())} parameters {cfg}; "
        f"{args.warmup_steps} warm-up + {args.steps} measured steps, batches of <= {settings['batch_tokens']} "
        f"padded target tokens, {torch.get_num_threads()} threads, load {os.getloadavg()[0]:.2f}")
    state_before = machine_state()
    measured = {"seconds": 0.0, "cpu_seconds": 0.0, "tgt_tokens": 0, "src_tokens": 0, "flops": 0.0, "sentences": 0}
    losses = []
    for step, batch in enumerate(schedule, 1):
        src, tgt_in, tgt_out = make_batch([pairs[i] for i in batch])
        started, cpu_started = time.perf_counter(), time.process_time()
        for group in optimizer.param_groups:
            group["lr"] = peak_lr * min(step / warmup, math.sqrt(warmup / step))
        logits = model(src, tgt_in)
        loss = F.cross_entropy(logits.view(-1, vocab), tgt_out.view(-1), ignore_index=PAD,
                               label_smoothing=eps, reduction="sum")
        tokens = int((tgt_out != PAD).sum())
        optimizer.zero_grad(set_to_none=True)
        (loss / tokens).backward()
        if settings["clip_norm"] > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), settings["clip_norm"])
        optimizer.step()
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        losses.append(float(loss) / tokens)
        if step > args.warmup_steps:
            measured["seconds"] += elapsed
            measured["cpu_seconds"] += cpu
            measured["tgt_tokens"] += tokens
            measured["src_tokens"] += int((src != PAD).sum())
            measured["flops"] += train_flops(cfg, src.shape[0], src.shape[1], tgt_in.shape[1])
            measured["sentences"] += src.shape[0]
        if args.save and args.save_every and step % args.save_every == 0:
            model_save(model, args.save)
        if step % args.log_every == 0 or step == total_steps:
            log(f"step {step}/{total_steps} loss {losses[-1]:.4f} {tokens / elapsed:.0f} target tokens/s "
                f"({src.shape[0]}x{src.shape[1]} -> {tgt_in.shape[1]}) load {os.getloadavg()[0]:.2f}")
    if args.save:
        model_save(model, args.save)
        log(f"wrote {args.save}")
    seconds = measured["seconds"]
    result = {
        "tool": "torch_reference train", "data": origin, "model": cfg, "batch_tokens": settings["batch_tokens"],
        "warmup_steps": args.warmup_steps, "steps": args.steps, "seconds": seconds,
        "target_tokens_per_s": measured["tgt_tokens"] / seconds,
        # all threads' CPU time: on a shared machine, tokens per CPU-second x cores estimates a quiet run
        "cpu_seconds": measured["cpu_seconds"],
        "target_tokens_per_cpu_s": measured["tgt_tokens"] / measured["cpu_seconds"],
        "source_target_tokens_per_s": (measured["tgt_tokens"] + measured["src_tokens"]) / seconds,
        "sentences_per_batch": measured["sentences"] / args.steps,
        "target_tokens_per_batch": measured["tgt_tokens"] / args.steps,
        "gflops_per_s": measured["flops"] / seconds / 1e9,
        "mflop_per_target_token": measured["flops"] / measured["tgt_tokens"] / 1e6,
        "peak_rss_gib": peak_rss_gib(), "first_loss": losses[0], "last_loss": losses[-1],
        "machine_before": state_before, "machine_after": machine_state(),
    }
    report(result, args.json)


def report(result, as_json):
    if as_json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        print(f"{key:28} {value:.6g}" if isinstance(value, float) else f"{key:28} {value}")


def cmd_translate(args):
    torch.set_num_threads(args.threads)
    model = model_load(args.model)
    model.eval()
    if args.input_ids:
        sentences = read_ids(args.input_ids)
    elif args.input and args.spm:
        sentences = spm_encode(args.spm, args.input)
    else:
        raise ReferenceError("give --input-ids FILE, or --input FILE with --spm MODEL")
    check_ids(sentences, model.cfg["vocab_size"], args.input_ids or args.input)
    if args.limit:
        sentences = sentences[:args.limit]
    forced = None
    if args.force_lengths:
        forced = [len(ids) + 1 for ids in read_ids(args.force_lengths)][:len(sentences)]
        if len(forced) != len(sentences):
            raise ReferenceError(f"{args.force_lengths} has fewer lines than the input")
    order = sorted(range(len(sentences)), key=lambda i: -len(sentences[i]))
    outputs = [None] * len(sentences)
    state_before = machine_state()
    started, cpu_started = time.perf_counter(), time.process_time()
    with torch.inference_mode():
        for start in range(0, len(order), args.batch_size):
            chunk = order[start:start + args.batch_size]
            src, _, _ = make_batch([(sentences[i], []) for i in chunk])
            lengths = [forced[i] for i in chunk] if forced else None
            if args.beam_size == 0:
                hyps = greedy_search(model, src, args.max_length_ratio, lengths)
            else:
                hyps = [h for h, _ in beam_search(model, src, args.max_length_ratio, args.beam_size,
                                                  args.length_penalty, args.exact_stop, lengths)]
            for i, hyp in zip(chunk, hyps):
                outputs[i] = hyp
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.writelines(" ".join(map(str, hyp)) + "\n" for hyp in outputs)
    target_tokens = sum(len(h) + 1 for h in outputs)
    result = {"tool": "torch_reference translate", "model": args.model, "sentences": len(outputs),
              "search": "greedy" if args.beam_size == 0 else f"beam {args.beam_size}",
              "batch_size": args.batch_size, "exact_stop": args.exact_stop,
              "forced_lengths": args.force_lengths or "", "seconds": seconds,
              "sentences_per_s": len(outputs) / seconds, "target_tokens_per_s": target_tokens / seconds,
              "cpu_seconds": cpu_seconds, "sentences_per_cpu_s": len(outputs) / cpu_seconds,
              "mean_output_pieces": (target_tokens - len(outputs)) / max(len(outputs), 1),
              "peak_rss_gib": peak_rss_gib(), "machine_before": state_before, "machine_after": machine_state()}
    report(result, args.json)


# ----------------------------------------------------------------------------------------------
# selftest

def selftest_case(cfg, seed):
    """One small random model in float64: incremental = full forward, loss formula = PyTorch's, masking,
    causality, greedy = beam 1, batched beam = one at a time, safetensors round trip."""
    torch.manual_seed(seed)
    model = Transformer(cfg)
    model.init_weights(seed)
    model.perturb(seed + 1)
    model.double().eval()
    rng = random.Random(seed)
    pairs = [([rng.randrange(4, cfg["vocab_size"]) for _ in range(n)],
              [rng.randrange(4, cfg["vocab_size"]) for _ in range(m)]) for n, m in ((5, 7), (2, 3), (8, 1))]
    src, tgt_in, tgt_out = make_batch(pairs)
    logits = model(src, tgt_in)
    failures = []

    def expect(condition, what):
        if not condition:
            failures.append(f"{cfg['norm_position']}/{cfg['positions']}/{cfg['tie_embeddings']}: {what}")

    memory, memory_mask = model.encode(src)
    cache = DecoderCache(model, memory)
    steps = torch.stack([model.step(tgt_in[:, t], cache, t, memory_mask) for t in range(tgt_in.shape[1])], dim=1)
    real = (tgt_out != PAD)[:, :, None]
    expect(torch.allclose(steps * real, logits * real, rtol=0, atol=1e-10), "incremental logits differ from full")
    flat_logits, flat_target = logits.reshape(-1, cfg["vocab_size"]), tgt_out.reshape(-1)
    for eps in (0.0, 0.1, 0.3):
        loss, nll, tokens = label_smoothed_loss(flat_logits, flat_target, eps)
        reference = F.cross_entropy(flat_logits, flat_target, ignore_index=PAD, label_smoothing=eps, reduction="sum")
        expect(abs(float(loss) - float(reference)) < 1e-9 * abs(float(reference)), f"loss formula at eps {eps}")
        expect(tokens == 7 + 1 + 3 + 1 + 1 + 1, "token count")
    changed = tgt_in.clone()
    changed[0, 4] = 5 if changed[0, 4] != 5 else 6
    expect(torch.equal(model(src, changed)[0, :4], logits[0, :4]), "a later target token changed earlier logits")
    longer = F.pad(src, (0, 3))  # three more padding columns
    expect(torch.allclose(model(longer, tgt_in), logits, rtol=0, atol=1e-10), "extra source padding changed logits")
    greedy = greedy_search(model, src, 2.0)
    beam1 = [h for h, _ in beam_search(model, src, 2.0, 1, 0.0, False)]
    expect(greedy == beam1, f"greedy {greedy} != beam 1 {beam1}")
    batched = beam_search(model, src, 2.0, 4, 0.6, True)
    single = [beam_search(model, src[i:i + 1, :len(pairs[i][0]) + 1], 2.0, 4, 0.6, True)[0] for i in range(3)]
    expect([h for h, _ in batched] == [h for h, _ in single], "batched beam search != one sentence at a time")
    expect(all(abs(a[1] - b[1]) < 1e-9 for a, b in zip(batched, single)), "beam scores differ batched/single")
    forced = [4, 2, 6]
    expect([len(h) + 1 for h in greedy_search(model, src, 2.0, forced)] == forced, "greedy forced lengths")
    expect([len(h) + 1 for h, _ in beam_search(model, src, 2.0, 3, 0.6, False, forced)] == forced,
           "beam forced lengths")
    # a beam hypothesis's log-probability is the forced-decoding one
    hyp, score = batched[0]
    if hyp:
        s, ti, to = make_batch([(pairs[0][0], hyp)])
        forced = float(F.log_softmax(model(s, ti), -1).gather(2, to[:, :, None]).sum())
        expect(abs(forced - score) < 1e-8 * max(1.0, abs(score)), f"beam score {score} != forced {forced}")
    path = f"/tmp/torch_reference_selftest_{os.getpid()}.safetensors"
    try:
        model_save(model, path)
        loaded = model_load(path).double().eval()
        expect(torch.allclose(loaded(src, tgt_in), model.float().double()(src, tgt_in), rtol=0, atol=1e-12),
               "safetensors round trip changed the outputs")
        tensors, metadata = safetensors_read(path)
        expect(config_parse(metadata, path) == cfg, "metadata round trip")
        expect(("embed.weight" in tensors) == (cfg["tie_embeddings"] == "all"), "embed.weight iff tie all")
        expect(("output.weight" in tensors) == (cfg["tie_embeddings"] == "none"), "output.weight iff tie none")
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) - 4)
        try:
            safetensors_read(path)
            expect(False, "a truncated file was accepted")
        except ReferenceError:
            pass
    finally:
        if os.path.exists(path):
            os.remove(path)
    return failures


def cmd_selftest(args):
    failures = []
    pe = sinusoids(4, 4, torch.float64)
    expected = torch.tensor([[0.8415, 0.5403, 0.0100, 1.0000], [0.9093, -0.4161, 0.0200, 0.9998],
                             [0.1411, -0.9900, 0.0300, 0.9996]], dtype=torch.float64)  # sin and cos of positions 1-3, worked by hand
    if not torch.allclose(pe[1:], expected, atol=5e-5):
        failures.append(f"sinusoids d=4 at 1..3: {pe[1:].tolist()}")
    dots = [float(pe[p] @ pe[p + 1]) for p in range(3)]
    if any(abs(x - 1.5403) > 5e-5 for x in dots):
        failures.append(f"PE(p).PE(p+1) = {dots}, expected 1.5403")
    # RoPE, head dim 2 (angle = pos radians): q=k=(1,0) score cos(m - n); the turn is counter-clockwise
    unit = torch.tensor([1.0, 0.0], dtype=torch.float64).expand(1, 1, 8, 2)
    turned = rope(unit, 0)[0, 0]
    scores = [float(turned[m] @ turned[n]) for m, n in ((3, 1), (5, 3), (2, 0))]
    if any(abs(s - math.cos(2.0)) > 1e-12 for s in scores) or abs(float(turned[1, 1]) - math.sin(1.0)) > 1e-12:
        failures.append(f"rope scores {scores}, turned[1] {turned[1].tolist()}")
    small = {"vocab_size": 50, "d_model": 16, "heads": 2, "ffn": 24, "encoder_layers": 2, "decoder_layers": 2,
             "dropout": 0.1, "attention_dropout": 0.1, "max_positions": 64, "norm_eps": 1e-5}
    cases = [("post", "sinusoidal", "all"), ("pre", "learned", "none"), ("post", "rope", "decoder"),
             ("pre", "rope", "all"), ("pre", "sinusoidal", "decoder"), ("post", "learned", "all")]
    for i, (norm, positions, tie) in enumerate(cases):
        cfg = config_check(dict(small, norm_position=norm, positions=positions, tie_embeddings=tie), "selftest")
        failures += selftest_case(cfg, 100 + i)
    for failure in failures:
        log(f"FAIL: {failure}")
    log(f"selftest: {len(cases)} model configs, {'FAILED' if failures else 'all checks passed'}")
    return 1 if failures else 0


def main(argv):
    parser = argparse.ArgumentParser(prog="torch_reference.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("init", help="write a model.safetensors initialized as nmt does")
    p.add_argument("--output", "-o", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--perturb", action="store_true", help="random biases and LayerNorm parameters as well")
    add_model_args(p)

    p = sub.add_parser("check", help="loss and per-sentence log-probs; compare with nmt's")
    p.add_argument("--model", "-m", required=True, help="model.safetensors")
    p.add_argument("--src", "-s", required=True, help="source piece ids, one sentence a line (or text with --spm)")
    p.add_argument("--tgt", "-t", required=True, help="target piece ids, one sentence a line (or text with --spm)")
    p.add_argument("--spm", help="SentencePiece model: --src/--tgt are raw text, encoded with spm_encode")
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--batch-size", type=int, default=64, help="sentences per padded batch")
    p.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    p.add_argument("--scores", help="write the per-sentence log-probs here, one a line (as `nmt score`)")
    p.add_argument("--nmt-scores", help="nmt score's output for the same pairs: compared to --rtol")
    p.add_argument("--nmt-loss", help="nmt's loss JSON {tokens, loss_sum, nll_sum}: compared to --rtol")
    p.add_argument("--rtol", type=float, default=1e-4)

    p = sub.add_parser("train", help="training throughput, FLOP/s, peak RSS")
    p.add_argument("--config", help="an nmt YAML config: model, train and (with a vocab.model) data sections")
    p.add_argument("--steps", type=int, default=20, help="measured steps")
    p.add_argument("--warmup-steps", type=int, default=3, help="steps run before measuring")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch-tokens", type=int)
    p.add_argument("--label-smoothing", type=float)
    p.add_argument("--lr", type=float)
    p.add_argument("--warmup", type=int, help="learning-rate warm-up steps of the schedule")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--src-ids", help="training source piece ids, one sentence a line")
    p.add_argument("--tgt-ids", help="training target piece ids")
    p.add_argument("--src", help="training source text (with --spm)")
    p.add_argument("--tgt", help="training target text (with --spm)")
    p.add_argument("--spm", help="SentencePiece model for --src/--tgt (sets vocab_size)")
    p.add_argument("--synthetic-sentences", type=int, default=29000)
    p.add_argument("--src-mean", type=float, default=13.0, help="synthetic mean source pieces")
    p.add_argument("--tgt-mean", type=float, default=14.0, help="synthetic mean target pieces")
    p.add_argument("--save", help="write the trained model here (safetensors) at the end")
    p.add_argument("--save-every", type=int, default=0, help="and every N steps")
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    add_model_args(p)

    p = sub.add_parser("translate", help="decoding speed, greedy or beam, with cached keys and values")
    p.add_argument("--model", "-m", required=True, help="model.safetensors")
    p.add_argument("--input", "-i", help="raw source text (with --spm)")
    p.add_argument("--spm", help="SentencePiece model for --input")
    p.add_argument("--input-ids", help="source piece ids, one sentence a line")
    p.add_argument("--output", "-o", help="write the output piece ids here, in input order")
    p.add_argument("--beam-size", type=int, default=5, help="0 = the greedy path")
    p.add_argument("--greedy", dest="beam_size", action="store_const", const=0)
    p.add_argument("--length-penalty", type=float, default=0.6)
    p.add_argument("--max-length-ratio", type=float, default=2.0)
    p.add_argument("--exact-stop", action="store_true",
                   help="keep a sentence's beams until none can beat the finished ones (else stop at K finished)")
    p.add_argument("--batch-size", type=int, default=32, help="sentences per batch (sorted by length)")
    p.add_argument("--limit", type=int, help="only the first N sentences")
    p.add_argument("--force-lengths", metavar="REFERENCE_IDS",
                   help="outputs exactly as long as these reference ids (+eos): speed independent of the model")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json", action="store_true")

    sub.add_parser("selftest", help="this file's consistency checks (float64, a few seconds)")

    args = parser.parse_args(argv)
    try:
        return {"init": cmd_init, "check": cmd_check, "train": cmd_train, "translate": cmd_translate,
                "selftest": cmd_selftest}[args.command](args) or 0
    except ReferenceError as e:
        log(f"torch_reference.py {args.command}: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
