#!/usr/bin/env bash
# The decoding controls through `nmt translate`: the repetition penalty, no-repeat n-grams and the
# loop guard (their bounds, and what they do to the pieces written), on a tiny model trained inside
# the test.
. "$NMT_SOURCE_DIR/tests/harness.sh"
. "$NMT_SOURCE_DIR/tests/tiny_model.sh"
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

[ $fail -eq 0 ] && echo "e2e_controls: all passed"
exit $fail
