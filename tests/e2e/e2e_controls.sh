#!/usr/bin/env bash
# The decoding controls through `nmt translate`: the repetition penalty, no-repeat n-grams and the
# loop guard (their bounds, and what they do to the pieces written), per-line target prefixes and
# constraint phrases, glossaries, and JSON output, on a tiny model trained inside the test.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
. "$NMT_SOURCE_DIR/tests/support/tiny_model.sh"
tiny_model model # word-for-word En->De: the repeated words of a line come back repeated
M=model
T="--threads 1"

# Values out of range are usage errors naming the flag.
for bad in "--repetition-penalty 0" "--repetition-penalty -1" "--repetition-penalty 101" "--repetition-penalty x" \
           "--no-repeat-ngram-size -1" "--no-repeat-ngram-size 1001" "--loop-guard -1" "--loop-guard 1001"; do
  check "bad $bad" 2 "$NMT" translate -m $M $T $bad </dev/null
  grep -q -- "${bad%% *}" err || say_fail "$bad: the error does not name the flag: $(cat err)"
done
check "penalty with shortlist" 2 "$NMT" translate -m $M $T --repetition-penalty 1.2 --shortlist </dev/null
"$NMT" translate --help | grep -q -- '--loop-guard N' || say_fail "--help does not show --loop-guard"
"$NMT" translate --help | grep -A2 -- '--loop-guard N' | grep -q 'default 4' || say_fail "--help: no loop guard default"

# The target pieces of each line (the last field of --print-pieces), one line each.
pieces() { awk -F' \\|\\|\\| ' '{ print $NF }' out; }
# 1 when some line has a piece twice.
repeats() { pieces | awk '{ delete seen; for (i = 1; i <= NF; i++) if (seen[$i]++) { found = 1 } } END { print found + 0 }'; }
printf 'the cat sees the cat\nthe dog likes the dog and the dog\nbig red house\n' >rep.txt
check "plain" 0 "$NMT" translate -m $M $T -i rep.txt --print-pieces
[ "$(repeats)" = 1 ] || say_fail "the test lines should translate with a repeated piece: $(cat out)"
check "no-repeat 1" 0 "$NMT" translate -m $M $T -i rep.txt --print-pieces --no-repeat-ngram-size 1
[ "$(wc -l <out)" -eq 3 ] || say_fail "no-repeat 1: $(wc -l <out) lines for 3"
[ "$(repeats)" = 0 ] || say_fail "--no-repeat-ngram-size 1 let a piece repeat: $(cat out)"
check "no-repeat 1 greedy" 0 "$NMT" translate -m $M $T -i rep.txt --print-pieces --no-repeat-ngram-size 1 --greedy
[ "$(repeats)" = 0 ] || say_fail "--no-repeat-ngram-size 1 --greedy let a piece repeat: $(cat out)"
# The neutral values decode exactly as no flag does.
check "plain text" 0 "$NMT" translate -m $M $T -i rep.txt
cp out plain.txt
check "neutral" 0 "$NMT" translate -m $M $T -i rep.txt --repetition-penalty 1 --no-repeat-ngram-size 0 --loop-guard 4
cmp -s out plain.txt || say_fail "neutral control values changed the translation"
check "loop guard off" 0 "$NMT" translate -m $M $T -i rep.txt --loop-guard 0
[ "$(wc -l <out)" -eq 3 ] || say_fail "--loop-guard 0: $(wc -l <out) lines for 3"
# A strong penalty changes what a repeated word becomes.
check "penalty" 0 "$NMT" translate -m $M $T -i rep.txt --print-pieces --repetition-penalty 100
[ "$(wc -l <out)" -eq 3 ] || say_fail "--repetition-penalty: $(wc -l <out) lines for 3"

# --prefix: SOURCE<TAB>PREFIX; every line's translation starts with its prefix.
printf 'the cat sees a dog\tein hund\nbig red house\tklein\nthe tree\n' >prefix.txt
check "prefix" 0 "$NMT" translate -m $M $T -i prefix.txt --prefix
[ "$(sed -n 1p out | cut -c1-8)" = "ein hund" ] || say_fail "--prefix: line 1 does not start with its prefix: $(cat out)"
[ "$(sed -n 2p out | cut -c1-5)" = "klein" ] || say_fail "--prefix: line 2 does not start with its prefix: $(cat out)"
printf 'the tree\n' | "$NMT" translate -m $M $T >alone.txt
[ "$(sed -n 3p out)" = "$(cat alone.txt)" ] || say_fail "--prefix: a line without a prefix translates differently"
check "prefix n-best" 0 "$NMT" translate -m $M $T -i prefix.txt --prefix --n-best 3
awk -F' \\|\\|\\| ' '$1 == 0 && substr($2, 1, 8) != "ein hund" { bad = 1 } END { exit bad }' out ||
  say_fail "--prefix --n-best 3: a hypothesis without the prefix: $(cat out)"

# --constraints: SOURCE<TAB>PHRASE...; every hypothesis holds each phrase, on n-best lists too (where
# a word starts: a piece may still continue its last word).
printf 'the cat sees a dog\trot\tbaum\nbig red house\tder hund\nthe tree\nthe cat sees a dog\n' >cons.txt
for n in 1 3; do
  check "constraints n-best $n" 0 "$NMT" translate -m $M $T -i cons.txt --constraints --n-best $n
  for want in "0 rot" "0 baum" "1 der hund"; do
    awk -F' \\|\\|\\| ' -v i="${want%% *}" -v p="${want#* }" \
      '$1 == i { seen++; if (index(" " $2, " " p) == 0) bad = 1 } END { exit bad || !seen }' out ||
      say_fail "--constraints --n-best $n: line ${want%% *} lacks '${want#* }': $(cat out)"
  done
done
check "constraints" 0 "$NMT" translate -m $M $T -i cons.txt --constraints
printf 'the tree\nthe cat sees a dog\n' | "$NMT" translate -m $M $T >plain2.txt
[ "$(sed -n 3,4p out)" = "$(cat plain2.txt)" ] || say_fail "--constraints: lines without phrases translate differently"
# Both: SOURCE<TAB>PREFIX<TAB>PHRASE...
printf 'the cat sees a dog\tein\tbaum\n' >both.txt
check "prefix and constraints" 0 "$NMT" translate -m $M $T -i both.txt --prefix --constraints
case "$(cat out)" in "ein "*baum*) ;; *) say_fail "--prefix --constraints: $(cat out)" ;; esac
# Bounds: more than 64 phrases, and constraints with sampling.
{ printf 'the cat'; for i in $(seq 65); do printf '\trot'; done; printf '\n'; } >many.txt
check "65 phrases" 1 "$NMT" translate -m $M $T -i many.txt --constraints
grep -q 'many.txt:1' err || say_fail "65 phrases: the error does not name the line: $(cat err)"
check "constraints sampling" 2 "$NMT" translate -m $M $T --constraints --sampling </dev/null
check "prefix tab" 1 "$NMT" translate -m $M $T -i cons.txt --prefix
grep -q 'cons.txt:1' err || say_fail "a second tab without --constraints: $(cat err)"

# --glossary: the target term of each source term found (whole words, any case) is a constraint.
printf 'cat\tbaum\nred house\tblau\n' >gloss.tsv
printf 'the Cat sees a dog\nbig red house\nthe cattle\n' >g.txt
check "glossary" 0 "$NMT" translate -m $M $T -i g.txt --glossary gloss.tsv
case "$(sed -n 1p out)" in *baum*) ;; *) say_fail "--glossary: line 1 lacks baum: $(cat out)" ;; esac
case "$(sed -n 2p out)" in *blau*) ;; *) say_fail "--glossary: line 2 lacks blau: $(cat out)" ;; esac
cp out glossary.txt
printf 'the cattle\n' | "$NMT" translate -m $M $T >cattle.txt
[ "$(sed -n 3p glossary.txt)" = "$(cat cattle.txt)" ] || say_fail "--glossary matched inside a word"
check "glossary case" 0 "$NMT" translate -m $M $T -i g.txt --glossary gloss.tsv --glossary-case
printf 'the Cat sees a dog\n' | "$NMT" translate -m $M $T >cat.txt
[ "$(sed -n 1p out)" = "$(cat cat.txt)" ] || say_fail "--glossary-case matched 'Cat' to 'cat'"
printf 'cat\tbaum\nno tab here\n' >bad.tsv
check "bad glossary" 1 "$NMT" translate -m $M $T -i g.txt --glossary bad.tsv
grep -q 'bad.tsv:2' err || say_fail "bad glossary line: $(cat err)"
check "glossary-case alone" 2 "$NMT" translate -m $M $T --glossary-case </dev/null

# --format json: one object a line, read back with a JSON parser; n-best lists under "hypotheses".
printf 'the cat sees a dog\n\nbig red house\n' >j.txt
check "json" 0 "$NMT" translate -m $M $T -i j.txt --format json --print-alignment
cp out json.txt
"$NMT" translate -m $M $T -i j.txt >text.txt
python3 - json.txt text.txt <<'PY' || say_fail "--format json: $(cat json.txt)"
import json, math, sys
objects = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
texts = open(sys.argv[2], encoding="utf-8").read().split("\n")[:-1]
assert len(objects) == 3, objects
for o, text in zip(objects, texts):
    assert set(o) == {"text", "score", "logprob", "confidence", "pieces", "alignment"}, o
    assert o["text"] == text, (o["text"], text)
    assert set(o["confidence"]) == {"mean_logprob", "alternatives"}, o
    assert isinstance(o["pieces"], list) and all(isinstance(p, str) for p in o["pieces"]), o
    assert all(len(pair) == 2 for pair in o["alignment"]), o
    if o["pieces"]:
        assert o["confidence"]["alternatives"] >= 1 and o["confidence"]["mean_logprob"] <= 0, o
        assert abs(o["confidence"]["mean_logprob"] * (len(o["pieces"]) + 1) - o["logprob"]) < 1e-3, o
        assert "".join(o["pieces"]).replace("\u2581", " ").strip() == o["text"], o
PY
check "json n-best" 0 "$NMT" translate -m $M $T -i j.txt --format json --n-best 3
python3 -c '
import json, sys
objects = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
assert len(objects) == 3 and all(list(o) == ["hypotheses"] for o in objects), objects
assert [len(o["hypotheses"]) for o in objects] == [3, 1, 3], objects
for o in objects:
    scores = [h["score"] for h in o["hypotheses"]]
    assert scores == sorted(scores, reverse=True), scores
    assert all("alignment" not in h for h in o["hypotheses"])
' out || say_fail "--format json --n-best 3: $(cat out)"
check "bad format" 2 "$NMT" translate -m $M $T --format xml </dev/null
check "json shortlist" 2 "$NMT" translate -m $M $T --format json --shortlist </dev/null

[ $fail -eq 0 ] && echo "e2e_controls: all passed"
exit $fail
