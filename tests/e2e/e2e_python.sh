#!/usr/bin/env bash
# The Python package (python/nmt, ctypes over the installed libnmt.so) against the CLI on a tiny
# model: translate and translate_batch (Translation results, n-best lists and scores, options per
# call), target prefixes, constraints and glossaries as `nmt translate --prefix/--constraints/
# --glossary` gives them, streamed parts joined equal to the translation, sampled translations in
# parts, forced-decoding scores, sacreBLEU's corpus_bleu/corpus_chrf/corpus_ter with their options as
# `nmt bleu` with its flags (and as sacreBLEU itself where it is installed), argument errors naming the
# argument, and close() while another thread translates.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
. "$NMT_SOURCE_DIR/tests/support/tiny_model.sh"
. "$NMT_SOURCE_DIR/tests/support/install_prefix.sh"
install_prefix "$tmp/prefix"
if [ -n "$NMT_SAN" ]; then
  echo "e2e_python: not run on a sanitizer build (python3 cannot load an ASan libnmt without LD_PRELOAD)"
  exit 0
fi
tiny_model "$tmp/model"
export NMT_LIBRARY="$NMT_PC/../libnmt.so.0" PYTHONPATH="$NMT_SOURCE_DIR/python"

printf 'the cat sees a dog\n\nbig red house\nthe small tree runs\na dog likes the blue house\n' >in.txt
printf 'der katze sieht ein hund\n\ngross rot haus\nder klein baum rennt\nein hund mag der blau haus\n' >ref.txt
translate() { "$NMT" translate -m model --threads 1 -q "$@" || say_fail "nmt translate $*"; }
translate -i in.txt >want.txt
translate -i in.txt --n-best 3 >want-nbest.txt
translate -i in.txt --beam-size 2 --n-best 2 --length-penalty 0 >want-beam2.txt
translate -i in.txt --greedy >want-greedy.txt
# Guided: a prefix on lines 1 and 3, phrases on lines 1 and 4, a glossary.
printf 'the cat sees a dog\tein\thaus\n\t\nbig red house\tder\nthe small tree runs\t\tblau\tkatze\na dog likes the blue house\t\n' >guided.txt
translate -i guided.txt --prefix --constraints --n-best 2 >want-guided.txt
printf 'house\tbaum\ncat\tblau\n' >glossary.tsv
translate -i in.txt --glossary glossary.tsv >want-glossary.txt
"$NMT" score -m model --threads 1 -s in.txt -t want.txt >want-scores.txt || say_fail "nmt score"
for i in 1 2 3 4; do cat in.txt; done >in4.txt
translate -i in4.txt --sampling --temperature 4 --sampling-topp 0.95 --seed 8 >want-sampled.txt
bleu() { "$NMT" bleu ref.txt -i want.txt -b -w 6 "$@" | tr -d '[],' | sed '/^$/d'; }
{ bleu -m bleu chrf ter; bleu -m bleu -lc -tok none -s floor -sv 0.2; bleu -m chrf -cw 2 --chrf-beta 1;
  bleu -m ter --ter-case-sensitive --ter-no-punct; } >want-metrics.txt
"$NMT" bleu ref.txt -i want.txt -m bleu chrf ter | sed -n 's/^ "signature": "\(.*\)",$/\1/p' >want-signatures.txt

python3 - >py.log 2>&1 <<'PY' || { say_fail "the Python checks"; cat py.log; }
import threading
import nmt

def lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1]

def nbest(path):
    """nmt translate --n-best's lines as {line: [(text, score)]}."""
    out = {}
    for l in lines(path):
        i, hyp, _, score = l.split(" ||| ")
        out.setdefault(int(i), []).append((hyp, float(score.strip())))
    return out

def raises(kind, word, f):
    try:
        f()
    except kind as e:
        assert word in str(e), (word, e)
        return
    raise AssertionError(f"{word}: not refused")

src, ref, want = lines("in.txt"), lines("ref.txt"), lines("want.txt")
with nmt.Translator("model", beam_size=5, threads=1) as t:
    got = t.translate_batch(src)
    assert [hyps[0].text for hyps in got] == want, (got, want)
    assert all(len(hyps) == 1 and isinstance(hyps[0], nmt.Translation) for hyps in got), got
    one = t.translate(src[0])
    assert one == got[0][0] and str(one) == want[0] and one.alignment is None and one.alternatives is None, one
    assert one.pieces and one.logprob < 0 and one.confidence < 0, one
    for i, hyps in enumerate(t.translate_batch(src, n_best=3)):  # n-best per call, as the CLI's
        assert [(h.text, round(h.score, 5)) for h in hyps] == [(h, round(s, 5)) for h, s in nbest("want-nbest.txt")[i]], (i, hyps)
    assert isinstance(t.translate(src[0], n_best=3), list)
    # Other options per call, then the translator's own again.
    for i, hyps in enumerate(t.translate_batch(src, beam_size=2, n_best=2, length_penalty=0)):
        assert [h.text for h in hyps] == [h for h, _ in nbest("want-beam2.txt")[i]], (i, hyps)
    assert [t.translate(s, greedy=True).text for s in src] == lines("want-greedy.txt")
    assert [hyps[0].text for hyps in t.translate_batch(src)] == want
    aligned = t.translate(src[0], return_alignment=True, return_alternatives=True)
    assert aligned.text == want[0] and len(aligned.alignment) == len(aligned.pieces) and aligned.alternatives >= 1, aligned
    for a, b in zip(t.score(src, want), lines("want-scores.txt")):
        assert abs(a - float(b)) < 1e-5, (a, b)
    assert t.translate_batch([]) == []
    # Guided as the CLI's --prefix --constraints and --glossary.
    guided = t.translate_batch(src, n_best=2, target_prefix=["ein", None, "der", None, ""],
                               constraints=[["haus"], [], None, ["blau", "katze"], None])
    cli = nbest("want-guided.txt")
    for i, hyps in enumerate(guided):
        assert [(h.text, round(h.score, 5)) for h in hyps] == [(h, round(s, 5)) for h, s in cli[i]], (i, hyps, cli[i])
    assert all(h.text.startswith("ein") and "haus" in h.text for h in guided[0]), guided[0]
    glossary = [tuple(l.split("\t")) for l in lines("glossary.tsv")]
    assert [hyps[0].text for hyps in t.translate_batch(src, glossary=glossary)] == lines("want-glossary.txt")
    one = t.translate(src[3], target_prefix="der klein", constraints=["blau"])
    assert one.text.startswith("der klein") and "blau" in one.text, one
    # Streamed: the parts joined are the translation, greedy and beam, with a prefix too.
    for options in [{}, {"greedy": True}, {"target_prefix": "ein"}]:
        for s in src:
            parts = list(t.translate_iter(s, **options))
            assert "".join(parts) == t.translate(s, **options).text, (s, options, parts)
    events = list(t.stream(src, beam_size=3))
    for i in range(len(src)):
        mine = [(part, final) for j, part, final in events if j == i]
        assert [final for _, final in mine] == [False] * (len(mine) - 1) + [True], mine
        assert "".join(part for part, _ in mine) == t.translate(src[i], beam_size=3).text, (i, mine)
    # Arguments of the wrong kind are refused, naming them.
    raises(TypeError, "text", lambda: t.translate(src))
    raises(TypeError, "source", lambda: t.translate_batch("a sentence"))
    raises(TypeError, "target_prefix", lambda: t.translate(src[0], target_prefix=["ein"]))
    raises(TypeError, "constraints", lambda: t.translate(src[0], constraints="haus"))
    raises(TypeError, "constraints[0]", lambda: t.translate_batch(src[:1], constraints=["haus"]))
    raises(ValueError, "target_prefix has 1 entries for 5 lines", lambda: t.translate_batch(src, target_prefix=["x"]))
    raises(TypeError, "glossary[0]", lambda: t.translate(src[0], glossary=["house baum"]))
    raises(TypeError, "beam_width", lambda: t.translate(src[0], beam_width=3))
    raises(TypeError, "beam_size", lambda: t.translate(src[0], beam_size="3"))
    raises(ValueError, "beam_size", lambda: t.translate(src[0], beam_size=2**32 + 1))
    raises(nmt.NmtError, "beam", lambda: t.translate(src[0], beam_size=0))
    raises(nmt.NmtError, "not with sampling", lambda: t.translate(src[0], sampling=True, constraints=["haus"]))
    raises(ValueError, "NUL", lambda: t.translate("a\0b"))
    raises(ValueError, "first_line", lambda: t.translate_batch(src, first_line=-1))
    raises(UnicodeEncodeError, "", lambda: t.translate("\udcff"))
    raises(nmt.NmtError, "line 1: target prefix", lambda: t.translate(src[0], target_prefix="a " * 1200))
    assert [hyps[0].text for hyps in t.translate_batch(src)] == want  # unchanged by the failures

# Sampled in two parts, each given its first line number: the CLI's draws over the whole file.
src4, sampled = lines("in4.txt"), lines("want-sampled.txt")
with nmt.Translator("model", threads=1, sampling=True, temperature=4, sampling_topp=0.95, seed=8) as t:
    got = [h[0].text for h in t.translate_batch(src4[:7]) + t.translate_batch(src4[7:], first_line=7)]
    assert got == sampled, (got, sampled)
    assert [h[0].text for h in t.translate_batch(src4[7:])] != sampled[7:], "line numbers do not key the draws"

# The decoding controls as options; the alternatives with confidence=True.
with nmt.Translator("model", threads=1, no_repeat_ngram_size=1, loop_guard=0, repetition_penalty=1.2,
                    confidence=True) as t:
    for h in t.translate_batch(src, return_alternatives=True):
        words = h[0].text.split()
        assert len(set(words)) == len(words), h
        assert (h[0].confidence < 0 and h[0].alternatives >= 1) if h[0].text else h[0].confidence == 0, h
raises(nmt.NmtError, "repetition penalty", lambda: nmt.Translator("model", repetition_penalty=0))
raises(ValueError, "beam_size", lambda: nmt.Translator("model", beam_size=2**32 + 1))
raises(TypeError, "threads", lambda: nmt.Translator("model", threads="2"))
raises(nmt.NmtError, "no-such-model", lambda: nmt.Translator("no-such-model"))

# Metrics: as `nmt bleu` with the same flags, and sacreBLEU's fields.
metrics = [nmt.corpus_bleu(want, [ref]), nmt.corpus_chrf(want, [ref]), nmt.corpus_ter(want, [ref]),
           nmt.corpus_bleu(want, [ref], lowercase=True, tokenize="none", smooth_method="floor", smooth_value=0.2),
           nmt.corpus_chrf(want, [ref], word_order=2, beta=1),
           nmt.corpus_ter(want, [ref], case_sensitive=True, no_punct=True)]
for m, score in zip(metrics, lines("want-metrics.txt")):
    assert abs(m.score - float(score)) < 1e-6, (m, score)
for m, signature in zip(metrics, lines("want-signatures.txt")):
    assert m.signature == signature, (m.signature, signature)
assert [m.name for m in metrics] == ["BLEU", "chrF2", "TER", "BLEU", "chrF1++", "TER"], metrics
b = nmt.corpus_bleu(["The cat sat on the mat .", "a Dog barks"], [["the cat sat on a mat .", "A dog barks loudly"]])
assert (b.counts, b.totals, b.sys_len, b.ref_len) == ([7, 3, 1, 0], [10, 8, 6, 4], 10, 11), b
assert str(b) == "BLEU = 24.61 70.0/37.5/16.7/12.5 (BP = 0.905 ratio = 0.909 hyp_len = 10 ref_len = 11)", str(b)
assert str(nmt.corpus_chrf(["a b c d"], [["a b c d"]])) == "chrF2 = 100.00"
assert abs(nmt.corpus_bleu(["The dog bit the man."], [["The dog bit the man."], ["A dog bit a man."]]).score - 100) < 1e-9
raises(ValueError, "reference stream 0 has 1 lines", lambda: nmt.corpus_bleu(["a", "b"], [["a"]]))
raises(TypeError, "references[0]", lambda: nmt.corpus_bleu(["a"], ["a"]))
raises(TypeError, "hypotheses", lambda: nmt.corpus_bleu("a", [["a"]]))
raises(nmt.NmtError, "14a", lambda: nmt.corpus_bleu(["a"], [["a"]], tokenize="14a"))
# close() from another thread while translating: it waits for the call, which completes (or, when the
# close came first, raises NmtError); later calls raise NmtError.
for _ in range(3):
    t = nmt.Translator("model", threads=1)
    got = []
    def work():
        try:
            got.append(len(t.translate_batch(src * 40)))
        except nmt.NmtError as e:
            got.append(str(e))
    worker = threading.Thread(target=work)
    worker.start()
    t.close()
    worker.join()
    assert got in ([len(src) * 40], ["the translator is closed"]), got
    raises(nmt.NmtError, "closed", lambda: t.translate(src[0]))
assert nmt.version() == nmt.__version__
print("python checks passed")
PY
grep -q "python checks passed" py.log || say_fail "the Python checks did not finish: $(tail -3 py.log)"

# sacreBLEU itself, where a python3 here has it (Debian has no package of it): the same scores, str()
# and BLEU fields on a generated corpus.
sacrebleu_checked=
for py in python3 /usr/bin/python3; do
  "$py" -c "import sacrebleu" 2>/dev/null || continue
  "$py" - >sb.log 2>&1 <<'PY' || { say_fail "the comparison with sacreBLEU"; cat sb.log; }
import random
import nmt
import sacrebleu
rng = random.Random(3)
words = "the a cat sat on mat dog Hund über Straße GROSS Mann , . ! ? 3.14 1,000 «x» 中文".split()
hyp = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 12))) for _ in range(60)]
refs = [[" ".join(rng.choice(words) for _ in range(rng.randint(1, 12))) for _ in range(60)] for _ in range(2)]
for ours, theirs in [(nmt.corpus_bleu(hyp, refs), sacrebleu.corpus_bleu(hyp, refs)),
                     (nmt.corpus_bleu(hyp, refs, lowercase=True, tokenize="intl", smooth_method="add-k"),
                      sacrebleu.corpus_bleu(hyp, refs, lowercase=True, tokenize="intl", smooth_method="add-k")),
                     (nmt.corpus_bleu(hyp, refs, smooth_method="floor", smooth_value=0.3, use_effective_order=True,
                                      tokenize="char"),
                      sacrebleu.corpus_bleu(hyp, refs, smooth_method="floor", smooth_value=0.3,
                                            use_effective_order=True, tokenize="char")),
                     (nmt.corpus_chrf(hyp, refs, word_order=2), sacrebleu.corpus_chrf(hyp, refs, word_order=2)),
                     (nmt.corpus_chrf(hyp, refs, char_order=4, beta=3, remove_whitespace=False),
                      sacrebleu.corpus_chrf(hyp, refs, char_order=4, beta=3, remove_whitespace=False)),
                     (nmt.corpus_ter(hyp, refs, asian_support=True), sacrebleu.corpus_ter(hyp, refs, asian_support=True)),
                     (nmt.corpus_ter(hyp, refs, normalized=True, no_punct=True, case_sensitive=True),
                      sacrebleu.corpus_ter(hyp, refs, normalized=True, no_punct=True, case_sensitive=True))]:
    assert abs(ours.score - theirs.score) < 1e-9 and str(ours) == str(theirs), (ours, theirs)
    if isinstance(ours, nmt.BLEUScore):
        assert (ours.counts, ours.totals, ours.precisions, ours.bp, ours.ratio, ours.sys_len, ours.ref_len) == \
            (theirs.counts, theirs.totals, theirs.precisions, theirs.bp, theirs.ratio, theirs.sys_len, theirs.ref_len), (ours, theirs)
PY
  sacrebleu_checked=$py
  break
done
[ -n "$sacrebleu_checked" ] || echo "e2e_python: sacrebleu is not installed here; the comparison with it is skipped"
NMT_LIBRARY=/no/such/libnmt.so python3 -c "import nmt; nmt.version()" 2>err.txt && say_fail "a missing library was accepted"
grep -q "NMT_LIBRARY" err.txt || say_fail "the missing-library message: $(cat err.txt)"
[ $fail -eq 0 ] && echo "e2e_python: all passed"
exit $fail
