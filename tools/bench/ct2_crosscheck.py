#!/usr/bin/env python3
"""The Python half of tools/bench/ct2_crosscheck.sh: random CTranslate2 models, random data, the Python
Translator's outputs, and the comparisons. Runs in a Python that imports CTranslate2's module
(DEST/venv/bin/python of tools/bench/build_ct2.sh).

  ct2_crosscheck.py variants                          the variant names, one a line
  ct2_crosscheck.py make VARIANT SEED DIR             a model directory made through TransformerSpec
  ct2_crosscheck.py make-base SEED DIR SPM            a Transformer-base-sized model (d_model 512, 8 heads,
                                                      feed-forward 2048, 6 + 6 layers, post-norm, ReLU,
                                                      shared embeddings) with random weights, whose
                                                      vocabulary is SPM's pieces (SPM.vocab beside SPM, nmt's
                                                      order: <pad> <unk> <s> </s> first); SPM is copied into
                                                      DIR as spm.model (for tools/bench/ct2_compare.sh)
  ct2_crosscheck.py data DIR N SEED SRC TGT           N random source lines and N random targets
  ct2_crosscheck.py translate DIR SRC OUT BEAM NBEST COMPUTE RATIO
                                                      the Python Translator, as ct2-translator --with_score
                                                      writes (score ||| tokens), each sentence at most
                                                      RATIO x its tokens + 10 tokens long (nmt's limit)
  ct2_crosscheck.py score DIR SRC TGT OUT COMPUTE     score_batch, as ct2-translator --task score
                                                      --with_tokens_score writes (mean ||| tokens ||| each)
  ct2_crosscheck.py nbest LABEL NMT CT2 NBEST TOL SRC RATIO
                                                      nmt's `i ||| hyp ||| F0= logprob ||| score` lines
                                                      against ct2's `score ||| hyp` lines (NBEST a sentence)
  ct2_crosscheck.py scores LABEL NMT CT2 TOL [relative]
                                                      nmt score --tokens lines against ct2's (relative: TOL
                                                      times the log-probability's size beyond 1)
  ct2_crosscheck.py lines LABEL NMT CT2 [DIR SRC]     two files of token lines (greedy outputs; with the
                                                      model and its sources, ties are told apart)

A variant name is NORM-ACT-BIAS-TIE-TYPE[-embnorm]: NORM pre or post (TransformerSpec's pre_norm), ACT
relu, gelu, gelutanh, gelusigmoid or swish (CTranslate2's RELU, GELU, GELUTanh, GELUSigmoid, SWISH;
every activation but relu in one model of each norm position, with bias, shared and float32, and
embnorm: TransformerSpec's layernorm_embedding on both sides), BIAS bias or nobias (the output projection's bias), TIE shared (one matrix for both embeddings and
the projection, one vocabulary) or separate (three matrices, a source and a target vocabulary of
different sizes and orders, the specials of the target one at its end), TYPE float32 or int8 (the
weights on disk, spec.optimize). Every model has 2 encoder and 2 decoder layers, d_model 64, 4 heads, a
feed-forward of 128; the variants alternate CTranslate2's own sinusoidal positions with a learned table
and a source with and without </s>. Weights are drawn so that translations end: the final LayerNorm's
beta and the projection row of </s> share a direction, which gives </s> a lead of 3 over the other
pieces (none for the base size, whose outputs run to the length limit, for speed); the rows of <s> and
<blank> are zero (and their bias -10), since nmt never generates them and CTranslate2 can (with random
weights they would be as likely as any piece).

Comparisons print one line a mismatch (line, field, both values) and a summary line
`LABEL: ... mismatches` on stdout; the exit status is 1 when there is one. Two hypotheses whose scores
differ by less than TOL a token may come in either order (a tie at float32 precision). A hypothesis cut
at the length limit (RATIO x source tokens + 10) ends there without </s> in both engines (its
log-probability that of its tokens alone); the sentences with one are compared like the others and
counted in the summary.
"""
import itertools
import os
import sys

import numpy as np

SMALL = {"d": 64, "heads": 4, "ffn": 128, "layers": 2, "eos": 3.0}  # eos: the </s> logit's lead
BASE = {"d": 512, "heads": 8, "ffn": 2048, "layers": 6, "eos": 0.0}  # no lead: outputs run to the length limit


ACTIVATIONS = {"relu": "RELU", "gelu": "GELU", "gelutanh": "GELUTanh", "gelusigmoid": "GELUSigmoid",
               "swish": "SWISH"}


def variant_names():
    names = []
    for act, norm, bias, tie, dtype in itertools.product(ACTIVATIONS, ("post", "pre"), ("bias", "nobias"),
                                                         ("shared", "separate"), ("float32", "int8")):
        if act == "relu":
            names.append("-".join((norm, act, bias, tie, dtype)))
        elif (bias, tie, dtype) == ("bias", "shared", "float32"):
            names.append("-".join((norm, act, bias, tie, dtype, "embnorm")))
    return names


def make(variant, seed, out_dir, size=None, vocab=None):
    from ctranslate2.specs import common_spec, transformer_spec

    if variant not in variant_names():
        sys.exit("ct2_crosscheck.py: unknown variant %s" % variant)
    norm, act, bias, tie, dtype, *extra = variant.split("-")
    index = variant_names().index(variant)
    size = size or SMALL
    D, HEADS, FFN, LAYERS = size["d"], size["heads"], size["ffn"], size["layers"]
    rng = np.random.default_rng(seed)

    def normal(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    activation = getattr(common_spec.Activation, ACTIVATIONS[act])
    spec = transformer_spec.TransformerSpec.from_config((LAYERS, LAYERS), HEADS, pre_norm=norm == "pre",
                                                        activation=activation, layernorm_embedding="embnorm" in extra)
    if vocab:
        src_vocab = tgt_vocab = vocab
    elif tie == "shared":
        src_vocab = ["<blank>", "<unk>", "<s>", "</s>"] + ["w%d" % i for i in range(60)]
        tgt_vocab = src_vocab
    else:
        src_vocab = ["<blank>", "<unk>", "<s>", "</s>"] + ["s%d" % i for i in range(50)]
        tgt_vocab = ["t%d" % i for i in range(70)] + ["<blank>", "<unk>", "<s>", "</s>"]
    eos = tgt_vocab.index("</s>")

    def linear(s, n_out, n_in):
        s.weight = normal(n_out, n_in, scale=n_in ** -0.5)
        s.bias = normal(n_out, scale=0.1)

    def layer_norm(s):
        s.gamma = 1 + normal(D, scale=0.1)
        s.beta = normal(D, scale=0.1)

    def attention(s, fused_kv):
        if fused_kv:  # self-attention: one QKV matrix
            linear(s.linear[0], 3 * D, D)
            linear(s.linear[1], D, D)
        else:  # encoder attention: Q, then KV
            linear(s.linear[0], D, D)
            linear(s.linear[1], 2 * D, D)
            linear(s.linear[2], D, D)
        layer_norm(s.layer_norm)

    def ffn(s):
        layer_norm(s.layer_norm)
        linear(s.linear_0, FFN, D)
        linear(s.linear_1, D, FFN)

    enc, dec = spec.encoder, spec.decoder
    src_embed = normal(len(src_vocab), D, scale=D ** -0.5)
    tgt_embed = src_embed if tie == "shared" else normal(len(tgt_vocab), D, scale=D ** -0.5)
    enc.embeddings[0].weight = src_embed
    dec.embeddings.weight = tgt_embed
    if (index + index // 2) % 2:  # a learned table; else CTranslate2 computes its sinusoids
        enc.position_encodings.encodings = normal(256, D, scale=0.3)
        dec.position_encodings.encodings = normal(256, D, scale=0.3)
    for layer in enc.layer:
        attention(layer.self_attention, True)
        ffn(layer.ffn)
    for layer in dec.layer:
        attention(layer.self_attention, True)
        attention(layer.attention, False)
        ffn(layer.ffn)
    if norm == "pre":
        layer_norm(enc.layer_norm)
        layer_norm(dec.layer_norm)
    if "embnorm" in extra:
        layer_norm(enc.layernorm_embedding)
        layer_norm(dec.layernorm_embedding)
    final = dec.layer_norm if norm == "pre" else dec.layer[-1].ffn.layer_norm
    direction = normal(D)
    direction /= np.linalg.norm(direction)
    final.beta = final.beta + size["eos"] ** 0.5 * direction
    projection = tgt_embed if tie == "shared" else normal(len(tgt_vocab), D, scale=D ** -0.5)
    projection[eos] += size["eos"] ** 0.5 * direction  # shared: the </s> embedding moves too, the same array
    # nmt never generates <s> or <blank> (docs/model-formats.md), CTranslate2 can: keep them improbable
    unwanted = [tgt_vocab.index(t) for t in ("<s>", "<blank>", "<pad>") if t in tgt_vocab]
    projection[unwanted] = 0
    dec.projection.weight = projection
    if bias == "bias":
        dec.projection.bias = normal(len(tgt_vocab), scale=0.3)
        dec.projection.bias[unwanted] = -10
    spec.register_source_vocabulary(src_vocab)
    spec.register_target_vocabulary(tgt_vocab)
    spec.config.add_source_eos = index % 3 != 0
    spec.validate()
    spec.optimize(quantization=dtype)
    os.makedirs(out_dir, exist_ok=True)
    spec.save(out_dir)


def make_base(seed, out_dir, spm):
    import shutil

    with open(os.path.splitext(spm)[0] + ".vocab", encoding="utf-8") as f:
        pieces = [line.rstrip("\n").split("\t")[0] for line in f]
    make("post-relu-nobias-shared-float32", seed, out_dir, BASE, pieces)
    shutil.copyfile(spm, os.path.join(out_dir, "spm.model"))


def vocabulary(model_dir, side):
    import json

    for name in ("%s_vocabulary.json" % side, "shared_vocabulary.json"):
        path = os.path.join(model_dir, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                return [t for t in json.load(f) if t not in ("<blank>", "<unk>", "<s>", "</s>")]
    sys.exit("ct2_crosscheck.py: %s has no %s or shared vocabulary" % (model_dir, side))


def data(model_dir, n, seed, src_path, tgt_path):
    rng = np.random.default_rng(seed)
    for side, path, low, high in (("source", src_path, 1, 25), ("target", tgt_path, 1, 20)):
        tokens = vocabulary(model_dir, side)
        with open(path, "w", encoding="utf-8") as f:
            for _ in range(n):
                f.write(" ".join(rng.choice(tokens, rng.integers(low, high + 1))) + "\n")


def read_tokens(path):
    with open(path, encoding="utf-8") as f:
        return [line.split() for line in f]


def translator(model_dir, compute):
    import ctranslate2

    return ctranslate2.Translator(model_dir, device="cpu", compute_type=compute, intra_threads=1)


def translate(model_dir, src, out, beam, nbest, compute, ratio):
    """nmt stops a hypothesis after ratio * source tokens (without </s>) + 10 target tokens (without
    </s>), CTranslate2 after max_decoding_length tokens: the sentences go by source length, each
    length with its own limit."""
    sources = read_tokens(src)
    t = translator(model_dir, compute)
    results = [None] * len(sources)
    for length in sorted(set(len(x) for x in sources)):
        which = [i for i, x in enumerate(sources) if len(x) == length]
        limit = int(ratio * length + 10)
        batch = t.translate_batch([sources[i] for i in which], beam_size=beam, num_hypotheses=nbest,
                                  length_penalty=0, min_decoding_length=0, max_decoding_length=limit,
                                  return_scores=True, max_batch_size=32)
        for i, r in zip(which, batch):
            results[i] = r
    with open(out, "w", encoding="utf-8") as f:
        for r in results:
            for hyp, score in zip(r.hypotheses, r.scores):
                f.write("%.9g ||| %s\n" % (score, " ".join(hyp)))


def score(model_dir, src, tgt, out, compute):
    results = translator(model_dir, compute).score_batch(read_tokens(src), read_tokens(tgt), max_batch_size=32)
    with open(out, "w", encoding="utf-8") as f:
        for r in results:
            f.write("%.9g ||| %s ||| %s\n" % (sum(r.log_probs) / len(r.log_probs), " ".join(r.tokens),
                                              " ".join("%.9g" % p for p in r.log_probs)))


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def compare_nbest(label, nmt_path, ct2_path, nbest, tol, src, ratio):
    """Each sentence's NBEST hypotheses: the same token strings, in the same order up to ties, and
    log-probabilities within tol a token (|y| = tokens + eos, tokens alone when cut at the limit)."""
    limits = [int(ratio * len(x) + 10) for x in read_tokens(src)]
    nmt, ct2 = {}, []
    for line in read_lines(nmt_path):
        fields = line.split(" ||| ")
        nmt.setdefault(int(fields[0]), []).append((fields[1].strip(), float(fields[2].split()[1])))
    for line in read_lines(ct2_path):
        fields = line.split(" ||| ")
        ct2.append((fields[1].strip() if len(fields) > 1 else "", float(fields[0])))
    sentences = len(ct2) // nbest
    bad, ties, cut, worst, same = 0, 0, 0, 0.0, 0
    for i in range(sentences):
        before = bad
        want, got = ct2[i * nbest : (i + 1) * nbest], nmt.get(i, [])
        cut += any(len(text.split()) >= limits[i] for text, _ in want + got)
        if len(got) != nbest:
            print("%s: line %d: nmt gave %d hypotheses, %d expected" % (label, i + 1, len(got), nbest))
            bad += 1
            continue
        got_by_text = dict(got)
        for rank, (text, logprob) in enumerate(want):
            length = len(text.split()) + (len(text.split()) < limits[i])
            tied = abs(got[rank][1] - logprob) / length <= tol  # nmt's hypothesis of this rank scores the same
            if text in got_by_text:
                diff = abs(got_by_text[text] - logprob) / length
                worst = max(worst, diff)
                if diff > tol:
                    print("%s: line %d: hypothesis %d `%s`: log-probability nmt %.6f, ct2 %.6f"
                          % (label, i + 1, rank + 1, text, got_by_text[text], logprob))
                    bad += 1
                    continue
            if got[rank][0] == text:
                continue
            if tied:
                ties += 1
                continue
            print("%s: line %d: hypothesis %d: nmt `%s` (%.6f), ct2 `%s` (%.6f)"
                  % (label, i + 1, rank + 1, got[rank][0], got[rank][1], text, logprob))
            bad += 1
        same += bad == before
    if len(nmt) != sentences or sentences == 0:
        print("%s: nmt wrote %d sentences, ct2 %d" % (label, len(nmt), sentences))
        bad += 1
    print("%s: %d sentences x %d hypotheses (%d with one cut at the length limit): %d the same"
          " (worst log-probability difference %.2e a token, %d ties in another order), %d mismatches"
          % (label, sentences, nbest, cut, same, worst, ties, bad))
    return 1 if bad else 0


def compare_scores(label, nmt_path, ct2_path, tol, relative=False):
    """Each token's log-probability within tol (relative: tol * max(1, |log p|), float32's rounding of
    large logits)."""
    nmt, ct2 = read_lines(nmt_path), read_lines(ct2_path)
    bad, worst = 0, 0.0
    if len(nmt) != len(ct2):
        print("%s: nmt scored %d lines, ct2 %d" % (label, len(nmt), len(ct2)))
        bad += 1
    for i, (a, b) in enumerate(zip(nmt, ct2)):
        mine = [float(x) for x in a.split(" ||| ")[-1].split()]
        theirs = [float(x) for x in b.split(" ||| ")[-1].split()]
        if len(mine) != len(theirs):
            print("%s: line %d: nmt scored %d tokens, ct2 %d" % (label, i + 1, len(mine), len(theirs)))
            bad += 1
            continue
        diffs = [abs(x - y) for x, y in zip(mine, theirs)]
        worst = max([worst] + diffs)
        for k, d in enumerate(diffs):
            if d > tol * (max(1.0, abs(theirs[k])) if relative else 1.0):
                print("%s: line %d: token %d: nmt %.6f, ct2 %.6f" % (label, i + 1, k + 1, mine[k], theirs[k]))
                bad += 1
    print("%s: %d lines, worst per-token log-probability difference %.2e, %d mismatches"
          % (label, len(ct2), worst, bad))
    return 1 if bad else 0


def compare_lines(label, nmt_path, ct2_path, model_dir=None, src=None):
    """Greedy outputs line by line; with the model and the sources, two lines that part where their
    pieces score within 1e-4 of each other (CTranslate2's forced scores) are a tie at float32
    precision, reported but not a mismatch."""
    nmt, ct2 = read_lines(nmt_path), read_lines(ct2_path)
    sources = read_tokens(src) if src else None
    bad = ties = 0
    if len(nmt) != len(ct2):
        print("%s: nmt wrote %d lines, ct2 %d" % (label, len(nmt), len(ct2)))
        bad += 1
    for i, (a, b) in enumerate(zip(nmt, ct2)):
        x, y = a.split(), b.split()
        if x == y:
            continue
        if sources:
            j = next(k for k in range(len(x) + 1) if k == len(x) or k == len(y) or x[k] != y[k])
            rx, ry = translator(model_dir, "float32").score_batch([sources[i]] * 2, [x, y])
            if abs(rx.log_probs[j] - ry.log_probs[j]) <= 1e-4:
                print("%s: line %d: a tie at piece %d (%s %.7f, %s %.7f)" % (label, i + 1, j + 1, rx.tokens[j],
                                                                            rx.log_probs[j], ry.tokens[j],
                                                                            ry.log_probs[j]))
                ties += 1
                continue
        print("%s: line %d: nmt `%s`, ct2 `%s`" % (label, i + 1, a, b))
        bad += 1
    print("%s: %d lines, %d ties, %d mismatches" % (label, len(ct2), ties, bad))
    return 1 if bad else 0


def main():
    a = sys.argv[1:]
    usage = {"variants": 0, "make": 3, "make-base": 3, "data": 5, "translate": 7, "score": 5, "nbest": 7, "scores": 4, "lines": 3}
    optional = {"lines": 5, "scores": 5}  # lines DIR SRC, scores relative
    if not a or a[0] not in usage or len(a) - 1 not in (usage[a[0]], optional.get(a[0], -1)):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: see the top of %s" % sys.argv[0], file=sys.stderr)
        sys.exit(2)
    cmd, a = a[0], a[1:]
    if cmd == "variants":
        print("\n".join(variant_names()))
    elif cmd == "make":
        make(a[0], int(a[1]), a[2])
    elif cmd == "make-base":
        make_base(int(a[0]), a[1], a[2])
    elif cmd == "data":
        data(a[0], int(a[1]), int(a[2]), a[3], a[4])
    elif cmd == "translate":
        translate(a[0], a[1], a[2], int(a[3]), int(a[4]), a[5], float(a[6]))
    elif cmd == "score":
        score(a[0], a[1], a[2], a[3], a[4])
    elif cmd == "nbest":
        sys.exit(compare_nbest(a[0], a[1], a[2], int(a[3]), float(a[4]), a[5], float(a[6])))
    elif cmd == "scores":
        if len(a) == 5 and a[4] != "relative":
            sys.exit("ct2_crosscheck.py: scores: the fifth argument is `relative`")
        sys.exit(compare_scores(a[0], a[1], a[2], float(a[3]), len(a) == 5))
    else:
        sys.exit(compare_lines(*a))


if __name__ == "__main__":
    main()
