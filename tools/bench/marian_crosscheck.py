#!/usr/bin/env python3
"""The Python half of tools/bench/marian_crosscheck.sh: random Marian models as OPUS-MT releases them,
converted by CTranslate2's own Marian converter, and the pieces <-> text steps around the comparisons of
tools/bench/ct2_crosscheck.py (which this reuses). Runs in a Python that imports CTranslate2's module
(DEST/venv/bin/python of tools/bench/build_ct2.sh).

  marian_crosscheck.py variants                      the variants run by default, one a line
  marian_crosscheck.py make VARIANT SEED DIR         model.npz, decoder.yml, vocab.yml in DIR (written by
                                                     tests/support/marian_reference.py)
  marian_crosscheck.py convert DIR OUT NUMERICS      CTranslate2's OpusMTConverter (ct2-opus-mt-converter)
                                                     on DIR into OUT; NUMERICS `converter`: as it converts,
                                                     `marian`: the same spec with Marian's own numerics where
                                                     the converter departs from them (below)
  marian_crosscheck.py data DIR N SEED PIECES TEXT TARGETS
                                                     N source lines of the vocabulary's pieces (PIECES, for
                                                     CTranslate2) and the same as text (TEXT, for nmt and the
                                                     folder's source.spm), N random target lines as text
  marian_crosscheck.py pieces FILE OUT               nmt's text (plain lines, or n-best lines `i ||| text |||
                                                     ...`) as the vocabulary's pieces (a word w is the piece
                                                     ▁w: source.spm and target.spm hold every word whole;
                                                     ⁇, <unk> decoded, is <unk>)

A variant name is NORM-ACT-TIE-BIAS-POS[-embn]: NORM post (transformer-postprocess "dan", as OPUS-MT
trains) or pre ("n", "da", top "n"); ACT relu, swish or gelu (Marian's x sigmoid(1.702 x)); TIE all (tied-embeddings-all: one Wemb), decoder
(tied-embeddings: encoder_Wemb, decoder_Wemb, the output tied to the latter) or none (and
decoder_ff_logit_out_W); BIAS bias or nobias (decoder_ff_logit_out_b); POS sin (Marian's sinusoids) or
wpos (transformer-train-positions: a trained Wpos table, no sqrt(D) scaling of the embeddings); embn: a
LayerNorm of the embeddings (transformer-postprocess-emb "nd"). These are
the two architectures CTranslate2's converter accepts; tests/e2e/e2e_marian.sh checks the others
against the NumPy reference.

Where CTranslate2's converter departs from Marian (docs/model-formats.md), NUMERICS `marian` puts
Marian's numbers into the spec the converter built, and nothing else: its sinusoids (the converter
writes sin/cos of 10000^(-2i/D), Marian's frequencies are 10000^(-i/(D/2-1)): marian_reference.py's
table), LayerNorm epsilon 1e-6 (the converter leaves it unset: CTranslate2's 1e-5) and, with Wpos, no
sqrt(D) scaling of the embeddings (the converter keeps CTranslate2's scaling, Marian scales only with
sinusoids).
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "support"))
sys.path.insert(0, HERE)
import marian_reference  # noqa: E402  the writer and Marian's sinusoids

PIECE = "\u2581"
UNKNOWN = "\u2047"  # what nmt writes for <unk> through a SentencePiece model (as spm_decode does), spaced


# The variants run by default: every value of each part, OPUS-MT's own (post-swish-all-bias-sin) first.
DEFAULT = ["post-swish-all-bias-sin", "post-relu-decoder-bias-sin", "post-swish-none-nobias-sin",
           "pre-relu-all-nobias-sin", "pre-swish-decoder-bias-wpos", "post-relu-none-bias-wpos",
           "post-swish-decoder-nobias-wpos", "pre-relu-none-bias-sin", "post-gelu-all-bias-sin-embn",
           "pre-gelu-decoder-nobias-sin-embn"]


def variant_names():
    names = []
    for norm in ("post", "pre"):
        for act in ("swish", "relu", "gelu"):
            for tie in ("all", "decoder", "none"):
                for bias in ("bias", "nobias"):
                    for pos in ("sin", "wpos"):
                        for emb in ((), ("embn",)):
                            names.append("-".join((norm, act, tie, bias, pos) + emb))
    return names


def make(variant, seed, out_dir):
    if variant not in variant_names():
        sys.exit("marian_crosscheck.py: unknown variant %s" % variant)
    norm, act, tie, bias, pos, *extra = variant.split("-")
    ops = "/dan//" if norm == "post" else "n/da/n/"
    os.makedirs(out_dir, exist_ok=True)
    marian_reference.write(out_dir, seed, ops + act + "/" + tie + ("/wpos" if pos == "wpos" else "") +
                           ("/embn" if "embn" in extra else ""))
    if bias == "nobias":
        path = os.path.join(out_dir, "model.npz")
        z = np.load(path)
        arrays = {k: z[k] for k in z.files if k != "decoder_ff_logit_out_b"}
        np.savez(path, **arrays)


def convert(model_dir, out_dir, numerics):
    from ctranslate2.converters.opus_mt import OpusMTConverter

    class MarianNumerics(OpusMTConverter):
        def _load(self):
            spec = super()._load()
            spec.config.layer_norm_epsilon = 1e-6
            if "Wpos" in np.load(self._model_path).files:
                spec.encoder.scale_embeddings = False
                spec.decoder.scale_embeddings = False
            else:
                for side in (spec.encoder, spec.decoder):
                    rows, dim = side.position_encodings.encodings.shape
                    side.position_encodings.encodings = marian_reference.Marian(model_dir).positions(rows).astype(
                        np.float32)
            return spec

    converter = (MarianNumerics if numerics == "marian" else OpusMTConverter)(model_dir)
    converter.convert(out_dir, force=True)


def data(model_dir, n, seed, pieces_path, text_path, targets_path):
    vocab = marian_reference.load(model_dir)[2]
    words = sorted(p[1:] for p in vocab if p.startswith(PIECE))
    rng = np.random.default_rng(seed)
    with open(pieces_path, "w", encoding="utf-8") as p, open(text_path, "w", encoding="utf-8") as t:
        for _ in range(n):
            line = list(rng.choice(words, rng.integers(1, 12)))
            p.write(" ".join(PIECE + w for w in line) + "\n")
            t.write(" ".join(line) + "\n")
    with open(targets_path, "w", encoding="utf-8") as f:
        for _ in range(n):
            f.write(" ".join(rng.choice(words, rng.integers(1, 12))) + "\n")


def to_pieces(path, out):
    """Plain lines or nmt's n-best lines (`i ||| text ||| F0= ... ||| score`): the text field as pieces."""
    with open(path, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
        for line in f:
            fields = line.rstrip("\n").split(" ||| ")
            k = 1 if len(fields) > 1 else 0
            fields[k] = " ".join("<unk>" if w == UNKNOWN else PIECE + w for w in fields[k].split())
            o.write(" ||| ".join(fields) + "\n")


def main():
    a = sys.argv[1:]
    usage = {"variants": 0, "make": 3, "convert": 3, "data": 6, "pieces": 2}
    if not a or a[0] not in usage or len(a) - 1 != usage[a[0]]:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: see the top of %s" % sys.argv[0], file=sys.stderr)
        sys.exit(2)
    cmd, a = a[0], a[1:]
    if cmd == "variants":
        print("\n".join(DEFAULT))
    elif cmd == "make":
        make(a[0], int(a[1]), a[2])
    elif cmd == "convert":
        convert(a[0], a[1], a[2])
    elif cmd == "data":
        data(a[0], int(a[1]), int(a[2]), a[3], a[4], a[5])
    else:
        to_pieces(a[0], a[1])


if __name__ == "__main__":
    main()
