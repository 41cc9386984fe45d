#!/usr/bin/env bash
# `nmt vocab` end to end: trains on a generated corpus, writes PREFIX.model and PREFIX.vocab with the
# reserved pieces first, shows SentencePiece's log only with --verbose and is silent with --quiet, never replaces the vocabulary of a trained model, and
# reports bad input with the right exit status.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
# Two sides of a toy corpus: 500 lines of words built from 12 syllables by a fixed LCG.
awk -v seed=7 'BEGIN { split("ka lo mi ne ru ta sho ber gen ach ing ter", s, " "); x = seed;
  for (i = 0; i < 500; i++) { n = 3 + i % 6; line = "";
    for (w = 0; w < n; w++) { word = ""; for (k = 0; k < 2 + w % 2; k++) { x = (x * 1103515245 + 12345) % 2147483648; word = word s[1 + int(x / 65536) % 12] }
      line = line (w ? " " : "") word }
    print line > "'"$tmp"'/train.en"; print toupper(line) > "'"$tmp"'/train.de" } }'

check "train unigram" 0 "$NMT" vocab --input "$tmp/train.en,$tmp/train.de" --size 120 --output "$tmp/sub/spm" --quiet
[ -s "$tmp/err" ] && { echo "FAIL --quiet printed:"; head "$tmp/err"; fail=1; }
[ -s "$tmp/out" ] && say_fail "vocab wrote to stdout"
[ -s "$tmp/sub/spm.model" ] || say_fail "no spm.model"
[ "$(wc -l <"$tmp/sub/spm.vocab")" -eq 120 ] || { echo "FAIL spm.vocab has $(wc -l <"$tmp/sub/spm.vocab") lines, want 120"; fail=1; }
[ "$(cut -f1 "$tmp/sub/spm.vocab" | head -4 | tr '\n' ' ')" = "<pad> <unk> <s> </s> " ] || { echo "FAIL reserved pieces"; head -4 "$tmp/sub/spm.vocab"; fail=1; }
# Both sides are in the vocabulary: upper- and lower-case pieces.
grep -q '^▁[A-Z]' "$tmp/sub/spm.vocab" && grep -q '^▁[a-z]' "$tmp/sub/spm.vocab" || say_fail "joint vocabulary"

check "train bpe, repeated --input" 0 "$NMT" vocab -i "$tmp/train.en" -i "$tmp/train.de" -s 120 -o "$tmp/bpe" -t bpe --character-coverage 0.9995 --input-sentence-size 300
grep -q "wrote $tmp/bpe.model and $tmp/bpe.vocab (120 pieces, bpe)" "$tmp/err" || { echo "FAIL summary line"; cat "$tmp/err"; fail=1; }

# Without --verbose, SentencePiece's own log is not shown: one line says what was written.
check "train quietly" 0 "$NMT" vocab -i "$tmp/train.en" -s 100 -o "$tmp/talk"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || say_fail "nmt vocab printed $(wc -l <"$tmp/err") lines without --verbose"
check "train --verbose" 0 "$NMT" vocab -i "$tmp/train.en" -s 100 -o "$tmp/talk" --verbose
grep -q "LOG(INFO)\|trainer_interface" "$tmp/err" || say_fail "--verbose did not show SentencePiece's log"
# A size the corpus cannot give names the option and the most it allows.
check "--size too large" 1 "$NMT" vocab -i "$tmp/train.en" -s 5000 -o "$tmp/big" -q
grep -q "^nmt vocab: --size 5000 is more pieces than this corpus gives: SentencePiece allows at most [0-9]* here; set --size to [0-9]* or less" "$tmp/err" ||
  say_fail "--size too large: $(cat "$tmp/err")"

# A vocabulary again to the same prefix replaces it; not the spm.model of a trained model beside it.
check "train again" 0 "$NMT" vocab -i "$tmp/train.en" -s 100 -o "$tmp/sub/spm" -q
printf 'weights' >"$tmp/sub/model.safetensors"
cp "$tmp/sub/spm.model" "$tmp/kept.model"
check "onto a model's vocabulary" 2 "$NMT" vocab -i "$tmp/train.en" -s 120 -o "$tmp/sub/spm" -q
grep -q "$tmp/sub/spm.model is the vocabulary of the model beside it" "$tmp/err" || say_fail "model vocabulary message: $(cat "$tmp/err")"
cmp -s "$tmp/sub/spm.model" "$tmp/kept.model" || say_fail "a refused vocab changed the model's vocabulary"

check "missing file" 1 "$NMT" vocab -i "$tmp/none.txt" -s 100 -o "$tmp/x" -q
grep -q "$tmp/none.txt: cannot open" "$tmp/err" || { echo "FAIL missing file message"; cat "$tmp/err"; fail=1; }
printf 'good line\nbad \377 line\n' >"$tmp/bad.txt"
check "invalid UTF-8" 1 "$NMT" vocab -i "$tmp/bad.txt" -s 100 -o "$tmp/x" -q
grep -q "$tmp/bad.txt:2: invalid UTF-8 at byte 5" "$tmp/err" || { echo "FAIL UTF-8 message"; cat "$tmp/err"; fail=1; }
check "size not a number" 2 "$NMT" vocab -i "$tmp/train.en" -s many -o "$tmp/x"
check "missing --output" 2 "$NMT" vocab -i "$tmp/train.en" -s 100
check "bad --type" 2 "$NMT" vocab -i "$tmp/train.en" -s 100 -o "$tmp/x" -t word
check "coverage out of range" 2 "$NMT" vocab -i "$tmp/train.en" -s 100 -o "$tmp/x" --character-coverage 1.5
[ $fail -eq 0 ] && echo "e2e_vocab: all passed"
exit $fail
