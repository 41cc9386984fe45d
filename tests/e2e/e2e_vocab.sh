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

# A vocabulary from SentencePiece's own spm_train (pad=-1, unk=0, bos=1, eos=2; Debian's sentencepiece
# package, installed here where it can be): `vocab.model` takes it, the run's spm.model has nmt's ids and
# cuts text into exactly the pieces of the original, a second run resumes with it, and a model without
# </s> is refused naming it.
if ! command -v spm_train >/dev/null && command -v apt-get >/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends sentencepiece >/dev/null 2>&1 || true
fi
if command -v spm_train >/dev/null && command -v spm_encode >/dev/null; then
  spm_train --input="$tmp/train.en,$tmp/train.de" --model_prefix="$tmp/own" --vocab_size=100 --minloglevel=2 >/dev/null 2>&1
  spm_train --input="$tmp/train.en" --model_prefix="$tmp/noeos" --vocab_size=60 --eos_id=-1 --minloglevel=2 >/dev/null 2>&1
  [ "$(head -3 "$tmp/own.vocab" | cut -f1 | tr '\n' ' ')" = "<unk> <s> </s> " ] || say_fail "spm_train's ids are not its defaults"
  printf 'data:\n  root: %s\n  train: {src: train.en, tgt: train.de}\n  valid: {src: train.en, tgt: train.de}\n' "$tmp" >own.yaml
  printf 'vocab: {model: %s/own.model}\nmodel: {d_model: 16, heads: 2, ffn: 32, encoder_layers: 1, decoder_layers: 1}\n' "$tmp" >>own.yaml
  printf 'train: {max_steps: 2, batch_tokens: 200, valid_every: 100}\noutput: %s/own-run\n' "$tmp" >>own.yaml
  check "train on spm_train's vocabulary" 0 "$NMT" train own.yaml --threads 1 -q
  spm_encode --model="$tmp/own-run/spm.model" --output_format=id <<<"" >/dev/null 2>&1 ||
    say_fail "the run's spm.model does not load in SentencePiece"
  [ "$(spm_encode --model="$tmp/own-run/spm.model" --output_format=piece --extra_options=bos:eos <<<"kalo" | awk '{print $1, $NF}')" = "<s> </s>" ] ||
    say_fail "bos and eos of the renumbered model"
  spm_encode --model="$tmp/own.model" --output_format=piece <"$tmp/train.de" >pieces-own.txt
  spm_encode --model="$tmp/own-run/spm.model" --output_format=piece <"$tmp/train.de" >pieces-run.txt
  cmp -s pieces-own.txt pieces-run.txt || say_fail "the renumbered model cuts text otherwise"
  spm_encode --model="$tmp/own-run/spm.model" --output_format=id --extra_options=bos:eos <<<"kalo" >ids.txt
  [ "$(awk '{print $1, $NF}' ids.txt)" = "2 3" ] || say_fail "bos and eos are not ids 2 and 3: $(cat ids.txt)"
  check "resume with the same vocab.model" 0 "$NMT" train own.yaml --threads 1 -q --set train.max_steps=3
  check "a model without eos" 1 "$NMT" train own.yaml --threads 1 -q --set "vocab.model=$tmp/noeos.model" \
    --set "output=$tmp/noeos-run"
  grep -qF "noeos.model: the SentencePiece model has no eos (</s>) piece" "$err" || say_fail "no eos: $(cat "$err")"
else
  echo "e2e_vocab: spm_train not available, its vocabularies not checked"
fi
[ $fail -eq 0 ] && echo "e2e_vocab: all passed"
exit $fail
