#!/usr/bin/env python3
"""Marian's Transformer forward pass in NumPy, to check nmt's reading of Marian models against.

    marian_reference.py write DIR SEED VARIANT   a random model in DIR (model.npz, decoder.yml, vocab.yml)
    marian_reference.py sources DIR SEED N        N random source lines of the vocabulary's pieces
    marian_reference.py greedy DIR < SOURCES      greedy translations (pieces), R * pieces + 10 at most
    marian_reference.py score DIR SOURCES TARGETS forced scores: "mean ||| per-piece log-probs (</s> last)"
    marian_reference.py edit DIR KEY VALUE        sets KEY of the model's options (array:NAME: adds an array)
    marian_reference.py corpus SEED N             N lines of the models' words (to train SentencePiece on)
    marian_reference.py seeds DIR                 small .npz archives (tests/fuzz/fuzz_npz.c's seeds)

Written from Marian's src/models/transformer.h, independently of nmt: the pre/postprocess op strings
are applied as Marian applies them ('d' dropout: nothing; 'a' the skip connection; 'n' LayerNorm of
PREFIX_ln_scale/bias, "_pre" for preprocessing, epsilon 1e-6), Marian's [in, out] matrices, its
sinusoids (sin of the D/2 frequencies exp(-i log(10000) / (D/2 - 1)), then cos, positions from 0),
embeddings times sqrt(D), the decoder started from a zero vector, </s> appended to the source, and
everything in float64. VARIANT is PREPROCESS/POSTPROCESS/TOP/ACTIVATION/TIE[/wpos][/f16][/big][/embn]
(ACTIVATION: relu, swish or gelu, Marian's x sigmoid(1.702 x); TIE: all, decoder or none; wpos: trained
positions, Wpos, and no sqrt(D) scaling, as Marian; f16: float16 arrays; big: 20,000 pieces, so that the
tables are larger than the chunks nmt reads them in; embn: transformer-postprocess-emb "nd", a LayerNorm
of embeddings + positions, PREFIX_emb_ln_scale_pre), e.g. "/dan//swish/all".
"""
import os
import sys

import numpy as np

MAX_LENGTH_RATIO = 1.0
EOS_BOOST = 0.5  # added to </s>'s output bias so that random models end some sentences early
SYLLABLES = ["ba", "de", "fi", "go", "ku", "la", "me"]
WORDS = [a + b for a in SYLLABLES for b in SYLLABLES]  # the pieces of random models, and SentencePiece's words
EMB, LAYER = 1.0, 3.0  # the scales of random embeddings and layer matrices: outputs vary more


def options_yaml(pre, post, top, activation, tie, heads, layers, trained_positions, emb):
    quote = lambda ops: ops or "''"
    lines = {
        "type": "transformer", "transformer-heads": heads, "enc-depth": layers, "dec-depth": layers,
        "transformer-preprocess": quote(pre), "transformer-postprocess": quote(post),
        "transformer-postprocess-top": quote(top), "transformer-postprocess-emb": emb,
        "transformer-ffn-activation": activation, "transformer-ffn-depth": 2,
        "transformer-decoder-autoreg": "self-attention", "tied-embeddings-all": str(tie == "all").lower(),
        "tied-embeddings": str(tie == "decoder").lower(), "right-left": "false", "transformer-no-projection": "false",
        "transformer-guided-alignment-layer": "last", "transformer-tied-layers": "[]",
        "transformer-train-positions": str(trained_positions).lower(),
    }
    return "".join("%s: %s\n" % item for item in lines.items())


def write(out_dir, seed, variant):
    pre, post, top, activation, tie, *extras = variant.split("/")
    rng = np.random.default_rng(int(seed))
    D, H, F, L, V = 16, 4, 24, 2, 20000 if "big" in extras else 40
    words = WORDS + ["%s%d" % (WORDS[i % len(WORDS)], i) for i in range(V)]
    pieces = ["</s>", "<unk>"] + ["\u2581" + word for word in words[:V - 2]]
    ids = [0, 1] + list(2 + rng.permutation(V - 2))  # pieces[i] has Marian id ids[i]: in no order
    w = {}

    def mat(name, rows, cols, scale=0.5):
        w[name] = rng.normal(0, scale / np.sqrt(rows), (rows, cols)).astype(np.float32)

    def vec(name, n, mean=0.0):
        w[name] = (mean + rng.normal(0, 0.1, (1, n))).astype(np.float32)

    def norm(prefix, suffix):
        vec(prefix + "_ln_scale" + suffix, D, 1.0)
        vec(prefix + "_ln_bias" + suffix, D)

    def sublayer_norms(prefix):
        if "n" in pre:
            norm(prefix, "_pre")
        if "n" in post:
            norm(prefix, "")

    def attention(prefix):
        for p in "qkvo":
            mat(prefix + "_W" + p, D, D, LAYER)
            vec(prefix + "_b" + p, D)
        sublayer_norms(prefix + "_Wo")

    def ffn(prefix):
        mat(prefix + "_W1", D, F, LAYER)
        vec(prefix + "_b1", F)
        mat(prefix + "_W2", F, D, LAYER)
        vec(prefix + "_b2", D)
        sublayer_norms(prefix + "_ffn")

    if tie == "all":
        mat("Wemb", V, D, EMB)
    else:
        mat("encoder_Wemb", V, D, EMB)
        mat("decoder_Wemb", V, D, EMB)
    if tie == "none":
        mat("decoder_ff_logit_out_W", D, V, 4.0)
    for i in range(1, L + 1):
        attention("encoder_l%d_self" % i)
        ffn("encoder_l%d_ffn" % i)
        attention("decoder_l%d_self" % i)
        attention("decoder_l%d_context" % i)
        ffn("decoder_l%d_ffn" % i)
    if "n" in top:
        norm("encoder_top", "")
        norm("decoder_top", "")
    if "embn" in extras:
        norm("encoder_emb", "_pre")
        norm("decoder_emb", "_pre")
    if "wpos" in extras:
        mat("Wpos", 64, D, 1.0)
    vec("decoder_ff_logit_out_b", V)
    w["decoder_ff_logit_out_b"][0, 0] += EOS_BOOST
    emb = "nd" if "embn" in extras else "d"
    config = options_yaml(pre, post, top, activation, tie, H, L, "wpos" in extras, emb).encode()
    if "f16" in extras:
        w = {name: value.astype(np.float16) for name, value in w.items()}
    w["special:model.yml"] = np.frombuffer(config + b"\0", dtype=np.int8)
    np.savez(out_dir + "/model.npz", **w)
    with open(out_dir + "/vocab.yml", "w", encoding="utf-8") as f:
        for piece, i in zip(pieces, ids):
            f.write('"%s": %d\n' % (piece, i))
    with open(out_dir + "/decoder.yml", "w", encoding="utf-8") as f:
        f.write("models:\n  - model.npz\nvocabs:\n  - vocab.yml\n  - vocab.yml\nbeam-size: 1\n")


def edit(model_dir, key, value):
    z = np.load(model_dir + "/model.npz")
    w = {k: z[k] for k in z.files}
    if key.startswith("array:"):
        w[key[6:]] = np.zeros((1, int(value)), dtype=np.float32)
    else:
        text = bytes(w["special:model.yml"].astype(np.uint8)).rstrip(b"\0").decode()
        lines = [line for line in text.splitlines() if not line.startswith(key + ":")]
        text = "\n".join(lines + ["%s: %s" % (key, value)]) + "\n"
        w["special:model.yml"] = np.frombuffer(text.encode() + b"\0", dtype=np.int8)
    np.savez(model_dir + "/model.npz", **w)


def load(model_dir):
    z = np.load(model_dir + "/model.npz")
    w = {k: z[k].astype(np.float64) for k in z.files if not k.startswith("special:")}
    text = bytes(z["special:model.yml"].astype(np.uint8)).rstrip(b"\0").decode()
    opts = {}
    for line in text.splitlines():
        key, _, value = line.partition(": ")
        opts[key] = value.strip().strip("'")
    vocab = {}
    with open(model_dir + "/vocab.yml", encoding="utf-8") as f:
        for line in f:
            piece, _, i = line.rstrip("\n").rpartition(": ")
            vocab[piece.strip('"')] = int(i)
    return w, opts, vocab


class Marian:
    def __init__(self, model_dir):
        self.w, self.o, self.vocab = load(model_dir)
        self.pieces = {i: p for p, i in self.vocab.items()}
        self.heads = int(self.o["transformer-heads"])
        self.layers = int(self.o["enc-depth"])
        src = "encoder_Wemb" if "encoder_Wemb" in self.w else "Wemb"
        tgt = "decoder_Wemb" if "decoder_Wemb" in self.w else "Wemb"
        self.src_emb, self.tgt_emb = self.w[src], self.w[tgt]
        self.out_w = self.w.get("decoder_ff_logit_out_W", self.tgt_emb.T)
        self.D = self.src_emb.shape[1]
        self.scale = 1.0 if self.o.get("transformer-train-positions") == "true" else np.sqrt(self.D)

    def positions(self, n):
        if self.o.get("transformer-train-positions") == "true":
            return self.w["Wpos"][:n]
        half = self.D // 2
        increment = np.log(10000.0) / (half - 1)
        freq = np.exp(-increment * (np.arange(self.D) % half))
        angle = np.arange(n)[:, None] * freq[None, :]
        return np.where(np.arange(self.D) < half, np.sin(angle), np.cos(angle))

    def layer_norm(self, x, prefix, suffix=""):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return self.w[prefix + "_ln_scale" + suffix] * (x - mean) / np.sqrt(var + 1e-6) + self.w[prefix + "_ln_bias" + suffix]

    def pre(self, prefix, x):
        for op in self.o["transformer-preprocess"]:
            if op == "n":
                x = self.layer_norm(x, prefix, "_pre")
        return x

    def post(self, prefix, ops, x, prev):
        for op in ops:
            if op == "a":
                x = x + prev
            elif op == "n":
                x = self.layer_norm(x, prefix)
        return x

    def attention(self, prefix, x, memory, causal):
        w, H = self.w, self.heads
        q = self.pre(prefix + "_Wo", x)
        kv = q if memory is None else memory
        dk = self.D // H
        split = lambda t: t.reshape(t.shape[0], H, dk).transpose(1, 0, 2)
        qh = split(q @ w[prefix + "_Wq"] + w[prefix + "_bq"])
        kh = split(kv @ w[prefix + "_Wk"] + w[prefix + "_bk"])
        vh = split(kv @ w[prefix + "_Wv"] + w[prefix + "_bv"])
        z = qh @ kh.transpose(0, 2, 1) / np.sqrt(dk)
        if causal:
            z = z + np.triu(np.full(z.shape[1:], -1e30), 1)
        z = np.exp(z - z.max(-1, keepdims=True))
        a = (z / z.sum(-1, keepdims=True)) @ vh
        out = a.transpose(1, 0, 2).reshape(x.shape[0], self.D) @ w[prefix + "_Wo"] + w[prefix + "_bo"]
        return self.post(prefix + "_Wo", self.o["transformer-postprocess"], out, x)

    def ffn(self, prefix, x):
        w = self.w
        h = self.pre(prefix + "_ffn", x) @ w[prefix + "_W1"] + w[prefix + "_b1"]
        act = self.o["transformer-ffn-activation"]
        if act == "relu":
            h = np.maximum(h, 0)
        else:  # swish x sigmoid(x); Marian's gelu x sigmoid(1.702 x)
            h = h / (1 + np.exp(-(1.702 if act == "gelu" else 1.0) * h))
        out = h @ w[prefix + "_W2"] + w[prefix + "_b2"]
        return self.post(prefix + "_ffn", self.o["transformer-postprocess"], out, x)

    def embedded(self, scope, x):
        """Marian's transformer-postprocess-emb: its layernorm ("n"; dropout "d" is nothing here)."""
        return self.layer_norm(x, scope + "_emb", "_pre") if "n" in self.o["transformer-postprocess-emb"] else x

    def top(self, scope, x, prev):
        return self.post(scope + "_top", self.o["transformer-postprocess-top"], x, prev)

    def encode(self, ids):
        x = self.embedded("encoder", self.src_emb[ids] * self.scale + self.positions(len(ids)))
        prev = x
        for i in range(1, self.layers + 1):
            x = self.attention("encoder_l%d_self" % i, x, None, False)
            x = self.ffn("encoder_l%d_ffn" % i, x)
        return self.top("encoder", x, prev)

    def log_probs(self, memory, prefix_ids):
        """Log-probabilities after each of the decoder's inputs (a zero vector, then prefix_ids)."""
        emb = np.vstack([np.zeros((1, self.D)), self.tgt_emb[prefix_ids].reshape(-1, self.D)])
        x = self.embedded("decoder", emb * self.scale + self.positions(len(emb)))
        prev = x
        for i in range(1, self.layers + 1):
            x = self.attention("decoder_l%d_self" % i, x, None, True)
            x = self.attention("decoder_l%d_context" % i, x, memory, False)
            x = self.ffn("decoder_l%d_ffn" % i, x)
        logits = self.top("decoder", x, prev) @ self.out_w + self.w["decoder_ff_logit_out_b"]
        logits = logits - logits.max(-1, keepdims=True)
        return logits - np.log(np.exp(logits).sum(-1, keepdims=True))

    def ids(self, line):
        return [self.vocab.get(p, self.vocab["<unk>"]) for p in line.split()]

    def greedy(self, line):
        src = self.ids(line)
        memory = self.encode(src + [self.vocab["</s>"]])
        out = []
        while len(out) < int(MAX_LENGTH_RATIO * len(src)) + 10:
            best = int(np.argmax(self.log_probs(memory, out)[-1]))
            if best == self.vocab["</s>"]:
                break
            out.append(best)
        return " ".join(self.pieces[i] for i in out)

    def score(self, source, target):
        eos = self.vocab["</s>"]
        tgt = self.ids(target) + [eos]
        lp = self.log_probs(self.encode(self.ids(source) + [eos]), tgt[:-1])
        per = [lp[i, t] for i, t in enumerate(tgt)]
        return "%.6f ||| %s" % (np.mean(per), " ".join("%.6f" % p for p in per))


def main():
    cmd = sys.argv[1]
    if cmd == "write":
        write(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "sources":
        vocab = load(sys.argv[2])[2]
        rng = np.random.default_rng(int(sys.argv[3]))
        words = sorted(p for p in vocab if p.startswith("\u2581")) + ["\u2581unknown"]
        for _ in range(int(sys.argv[4])):
            print(" ".join(rng.choice(words, rng.integers(1, 12))))
    elif cmd == "greedy":
        m = Marian(sys.argv[2])
        for line in sys.stdin:
            print(m.greedy(line))
    elif cmd == "score":
        m = Marian(sys.argv[2])
        with open(sys.argv[3], encoding="utf-8") as s, open(sys.argv[4], encoding="utf-8") as t:
            for source, target in zip(s, t):
                print(m.score(source, target))
    elif cmd == "corpus":
        rng = np.random.default_rng(int(sys.argv[2]))
        for _ in range(int(sys.argv[3])):
            print(" ".join(rng.choice(WORDS[:38], rng.integers(1, 12))))
    elif cmd == "seeds":
        rng = np.random.default_rng(0)
        arrays = {"Wemb": rng.normal(size=(3, 4)).astype(np.float32), "b": rng.normal(size=(1, 4)).astype(np.float16),
                  "Wpos": rng.normal(size=(2,)), "special:model.yml": np.frombuffer(b"type: transformer\n\0", np.int8)}
        np.savez(sys.argv[2] + "/stored", **arrays)
        np.savez_compressed(sys.argv[2] + "/deflated", **arrays)
        for name in ("stored", "deflated"):
            os.rename(sys.argv[2] + "/%s.npz" % name, sys.argv[2] + "/" + name)
    elif cmd == "edit":
        edit(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit("usage: marian_reference.py write|sources|greedy|score ...")


if __name__ == "__main__":
    main()
