#!/usr/bin/env bash
# The quickstart's English-Hindi demo corpus (nmt-gen-en-hi): generated quickly and deterministically,
# accepted by the independent checker (nmt-gen-en-hi-check: aligned splits, disjoint, UTF-8 in NFC,
# "I drink tea." → "मैं चाय पीता हूँ।" in test, word order and agreement on every pair), and every
# phenomenon of the grammar present in train. Then corrupted copies of a small corpus, one fault
# each, must be rejected with the right message, which shows that each check can fail.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
gen="$NMT_BIN_DIR/nmt-gen-en-hi"
checker="$NMT_BIN_DIR/nmt-gen-en-hi-check"

# The command line.
"$gen" --help | grep -q "Usage: nmt-gen-en-hi" || say_fail "--help"
"$gen" >/dev/null 2>&1; [ $? -eq 2 ] || say_fail "no --output: want exit 2"
"$gen" --output "$tmp/x" --pairs 12x >/dev/null 2>&1; [ $? -eq 2 ] || say_fail "--pairs 12x: want exit 2"
"$gen" --output "$tmp/x" --test 0 >/dev/null 2>&1; [ $? -eq 2 ] || say_fail "--test 0: want exit 2"
"$checker" >/dev/null 2>&1; [ $? -eq 2 ] || say_fail "checker without a directory: want exit 2"

# The default corpus: sizes and the checker (with every phenomenon required in train). Its speed is
# a benchmark's business, not a test's: a loaded machine must not fail it.
"$gen" --output "$tmp/a" --seed 7 2>/dev/null || say_fail "generation failed"
for want in train:30000 valid:1000 test:1000; do
  split=${want%%:*} n=${want##*:}
  for side in en hi meta; do
    got=$(wc -l <"$tmp/a/$split.$side")
    [ "$got" -eq "$n" ] || say_fail "$split.$side has $got lines, want $n"
  done
done
"$checker" --coverage "$tmp/a" >"$tmp/coverage.txt" 2>"$tmp/check.err" || { say_fail "checker rejected the corpus"; cat "$tmp/check.err"; }
grep -q "^ergative ने, verb agrees with feminine object	[1-9]" "$tmp/coverage.txt" || say_fail "coverage table"
[ "$(head -1 "$tmp/a/test.en")" = "I drink tea." ] || say_fail "test.en does not open with I drink tea."
[ "$(head -1 "$tmp/a/test.hi")" = "मैं चाय पीता हूँ।" ] || say_fail "test.hi does not open with मैं चाय पीता हूँ।"
grep -qx "I drink tea." "$tmp/a/train.en" "$tmp/a/valid.en" && say_fail "I drink tea. is in train or valid"
for f in "$tmp"/a/*.en "$tmp"/a/*.hi; do
  iconv -f UTF-8 -t UTF-8 "$f" >/dev/null 2>&1 || say_fail "iconv: $f is not UTF-8"
done

# Determinism: the same seed gives the same files, another seed other sentences.
"$gen" --output "$tmp/b" --seed 7 2>/dev/null
for f in train valid test; do
  for side in en hi meta; do cmp -s "$tmp/a/$f.$side" "$tmp/b/$f.$side" || say_fail "seed 7 twice: $f.$side differs"; done
done
"$gen" --output "$tmp/c" --seed 8 2>/dev/null
cmp -s "$tmp/a/train.en" "$tmp/c/train.en" && say_fail "seeds 7 and 8 gave the same train.en"

# Faults the checker must catch, each in a fresh copy of a small corpus.
"$gen" --output "$tmp/small" --pairs 2000 --valid 200 --test 200 2>/dev/null
"$checker" "$tmp/small" >/dev/null 2>&1 || say_fail "checker rejected the small corpus"
# the first train pair of a kind, by its meta fields (awk regexes over the tab-separated line)
line_of() { awk -v re="$1" '$0 ~ re { print NR; exit }' "$tmp/small/train.meta"; }
erg_line=$(line_of 'tense=past.*s=[^\t]* ने\t.*erg=1')
fem_line=$(line_of 'tense=past.*\tv=[^\t]*ी(\t|$).*erg=1\toc=dir\toa=3\.sg\.f')
decomposed_rra=$(printf '\xe0\xa4\xa1\xe0\xa4\xbc') precomposed_rra=$(printf '\xe0\xa5\x9c')
expect_caught() { # NAME EXPECTED_MESSAGE SHELL_COMMAND (run inside the copy)
  rm -rf "$tmp/m" && cp -r "$tmp/small" "$tmp/m"
  (cd "$tmp/m" && eval "$3")
  "$checker" "$tmp/m" >/dev/null 2>"$tmp/m.err"; local rc=$?
  if [ $rc -ne 1 ] || ! grep -q "$2" "$tmp/m.err"; then
    say_fail "fault '$1' not caught (exit $rc, want message: $2)"; head -5 "$tmp/m.err"
  fi
}
expect_caught "subject agreement" "habitual verb does not agree" "sed -i '1s/पीता हूँ/पीती हूँ/' test.hi test.meta"
expect_caught "wrong pronoun" "pronoun subject does not match" "sed -i '1s/मैं/वह/' test.hi test.meta"
expect_caught "verb before object" "not subject-(object)-verb in order" "sed -i '1s/चाय पीता हूँ/पीता हूँ चाय/' test.hi"
expect_caught "ने dropped" "transitive past without ने" "sed -i '${erg_line}s/ ने / /' train.hi; sed -i '${erg_line}s/ ने\t/\t/' train.meta"
expect_caught "object agreement" "perfective does not agree" \
  "sed -i '${fem_line}s/ी।\$/ा।/; ${fem_line}s/ी?\$/ा?/' train.hi; sed -i -E '${fem_line}s/(\tv=[^\t]*)ी(\t|\$)/\1ा\2/' train.meta"
expect_caught "English agreement" "English verb does not agree" "sed -i '1s/I drink tea/I drinks tea/' test.en"
expect_caught "test pair in train" "occurs twice" "head -1 test.en >>train.en; head -1 test.hi >>train.hi; head -1 test.meta >>train.meta"
expect_caught "invalid UTF-8" "invalid UTF-8" "sed -i '5s/^/\xff/' valid.hi"
expect_caught "lost line" "line counts differ" "sed -i '\$d' valid.hi"
expect_caught "not NFC" "not in NFC" "sed -i '0,/$decomposed_rra/s//$precomposed_rra/' train.hi"
expect_caught "Latin in Hindi" "not Devanagari" "sed -i '1s/चाय/chai/' test.hi"
expect_caught "I drink tea. missing" "is missing from test" "sed -i '1d' test.en test.hi test.meta"

[ $fail -eq 0 ] && echo "e2e_corpus: all passed"
exit $fail
