#!/usr/bin/env bash
# The Python bindings (python/nmt, ctypes over the installed libnmt.so) against the CLI on a tiny
# model: translations, n-best hypotheses and their scores, sampled translations in parts, forced-decoding
# scores, BLEU/chrF/TER with their signatures, errors, and close() while another thread translates.
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
"$NMT" translate -m model --threads 1 -q -i in.txt >want.txt || say_fail "nmt translate"
"$NMT" translate -m model --threads 1 -q -i in.txt --n-best 3 >want-nbest.txt || say_fail "nmt translate --n-best"
"$NMT" score -m model --threads 1 -s in.txt -t want.txt >want-scores.txt || say_fail "nmt score"
for i in 1 2 3 4; do cat in.txt; done >in4.txt
"$NMT" translate -m model --threads 1 -q -i in4.txt --sampling --temperature 4 --sampling-topp 0.95 --seed 8 \
  >want-sampled.txt || say_fail "nmt translate --sampling"
"$NMT" bleu ref.txt -i want.txt -m bleu chrf ter -b -w 6 | tr -d '[],' | sed '/^$/d' >want-metrics.txt
"$NMT" bleu ref.txt -i want.txt -m bleu chrf ter | sed -n 's/^ "signature": "\(.*\)",$/\1/p' >want-signatures.txt

python3 - >py.log 2>&1 <<'PY' || { say_fail "the Python checks"; cat py.log; }
import nmt

def lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1]

src, ref, want = lines("in.txt"), lines("ref.txt"), lines("want.txt")
with nmt.Translator("model", beam_size=5, threads=1) as t:
    got = t.translate(src)
    assert got == want, (got, want)
    pairs = t.translate(src, scores=True)
    assert [p[0] for p in pairs] == want and all(isinstance(p[1], float) for p in pairs), pairs
    scores = t.score(src, want)
    for a, b in zip(scores, lines("want-scores.txt")):
        assert abs(a - float(b)) < 1e-5, (scores, b)
    assert t.translate([]) == []
    try:
        t.translate(src, n_best=2)
        raise AssertionError("n_best above the translator's was accepted")
    except ValueError:
        pass
    try:
        t.translate(["\xff".encode("latin-1").decode("utf-8", "surrogateescape")])
        raise AssertionError("an unencodable line was accepted")
    except UnicodeEncodeError:
        pass

# Sampled in two parts, each given its first line number: the CLI's draws over the whole file.
src4, sampled = lines("in4.txt"), lines("want-sampled.txt")
with nmt.Translator("model", threads=1, sampling=True, temperature=4, sampling_topp=0.95, seed=8) as t:
    got = t.translate(src4[:7]) + t.translate(src4[7:], first_line=7)
    assert got == sampled, (got, sampled)
    assert t.translate(src4[7:]) != sampled[7:], "line numbers do not key the draws"

# The decoding controls as options; confidence=True gives each hypothesis's confidence.
with nmt.Translator("model", threads=1, no_repeat_ngram_size=1, loop_guard=0, repetition_penalty=1.2,
                    confidence=True) as t:
    for text, score, mean, alternatives in t.translate(src, confidence=True):
        words = text.split()
        assert len(set(words)) == len(words), text
        assert (mean < 0 and alternatives >= 1) if text else (mean == 0), (text, mean, alternatives)
try:
    nmt.Translator("model", repetition_penalty=0)
    raise AssertionError("repetition_penalty=0 was accepted")
except nmt.NmtError as e:
    assert "repetition penalty" in str(e), e

with nmt.Translator("model", beam_size=5, threads=1, n_best=3) as t:
    nbest = t.translate(src, n_best=3, scores=True)
    cli = {}
    for l in lines("want-nbest.txt"):
        i, hyp, _, score = l.split(" ||| ")
        cli.setdefault(int(i), []).append((hyp, float(score.strip())))
    assert len(nbest) == len(src), nbest
    for i, hyps in enumerate(nbest):
        assert [h for h, _ in hyps] == [h for h, _ in cli[i]], (i, hyps, cli[i])
        assert all(abs(a - b) < 1e-5 for (_, a), (_, b) in zip(hyps, cli[i])), (hyps, cli[i])

metrics = [nmt.bleu(want, [ref]), nmt.chrf(want, [ref]), nmt.ter(want, [ref])]
for m, score, signature in zip(metrics, lines("want-metrics.txt"), lines("want-signatures.txt")):
    assert abs(m.score - float(score)) < 1e-6, (m, score)
    assert m.signature == signature, (m.signature, signature)
assert [m.name for m in metrics] == ["BLEU", "chrF2", "TER"], metrics
assert abs(nmt.bleu(["The dog bit the man."], [["The dog bit the man."], ["A dog bit a man."]]).score - 100.0) < 1e-9
assert str(nmt.bleu(["a b c d"], [["a b c d"]])) == "BLEU = 100.00"
try:
    nmt.bleu(["a", "b"], [["a"]])
    raise AssertionError("mismatched references were accepted")
except ValueError:
    pass
# Arguments C would take wrongly are refused, naming them: an int the C field would wrap, a NUL that
# would end the text early, a string where a list of sentences belongs.
for bad, kind, word in [(lambda: nmt.Translator("model", beam_size=2**32 + 1), ValueError, "beam_size"),
                        (lambda: nmt.Translator("model", threads="2"), TypeError, "threads")]:
    try:
        bad()
        raise AssertionError(f"{word} was accepted")
    except kind as e:
        assert word in str(e), e
with nmt.Translator("model", threads=1) as t:
    for bad, kind, word in [(lambda: t.translate(["a\0b"]), ValueError, "NUL"),
                            (lambda: t.translate("a sentence"), TypeError, "list of sentences"),
                            (lambda: t.translate(["a"], first_line=-1), ValueError, "first_line")]:
        try:
            bad()
            raise AssertionError(f"{word}: accepted")
        except kind as e:
            assert word in str(e), e
try:
    nmt.Translator("no-such-model")
    raise AssertionError("a missing model directory was accepted")
except nmt.NmtError as e:
    assert "no-such-model" in str(e), e
# close() from another thread while translating: it waits for the call, which completes (or, when the
# close came first, raises NmtError); later calls raise NmtError.
import threading
for _ in range(3):
    t = nmt.Translator("model", threads=1)
    got = []
    def work():
        try:
            got.append(len(t.translate(src * 40)))
        except nmt.NmtError as e:
            got.append(str(e))
    worker = threading.Thread(target=work)
    worker.start()
    t.close()
    worker.join()
    assert got in ([len(src) * 40], ["the translator is closed"]), got
    try:
        t.translate(src)
        raise AssertionError("a closed translator translated")
    except nmt.NmtError as e:
        assert "closed" in str(e), e
assert nmt.version()
print("python checks passed")
PY
NMT_LIBRARY=/no/such/libnmt.so python3 -c "import nmt; nmt.version()" 2>err.txt && say_fail "a missing library was accepted"
grep -q "NMT_LIBRARY" err.txt || say_fail "the missing-library message: $(cat err.txt)"
[ $fail -eq 0 ] && echo "e2e_python: all passed"
exit $fail
