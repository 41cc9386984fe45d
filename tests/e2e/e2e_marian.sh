#!/usr/bin/env bash
# Marian .npz models (docs/model-formats.md) against tests/support/marian_reference.py, a NumPy forward pass
# written from Marian's transformer.h: random models of eight variants (post-norm "dan" and "an",
# pre-norm "n"/"da"/"n" and "n"/"a"/"n"; swish, relu and gelu; tied-embeddings-all, tied-embeddings and
# separate embeddings with an output matrix; trained positions in float16 arrays; 20,000 pieces, whose
# tables nmt reads in several chunks; a layernorm of the embeddings), 50 sentences of
# random pieces each: the same greedy
# outputs (random models repeat themselves a lot), and forced scores within 1e-4 a piece of those
# outputs and of random targets. Then the model read through each front end (-m DIR
# and -m model.npz, int8, nmt score, nmt bench translate, nmt serve, the Python bindings), the npz fuzz seeds,
# and refusals that name the model.yml key or the array. Needs python3 with NumPy (installed from
# Debian's python3-numpy where it can be; skipped, 77, where it cannot).
. "$NMT_SOURCE_DIR/tests/support/harness.sh"

PY=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c "import numpy" 2>/dev/null; then PY=$candidate; break; fi
done
if [ -z "$PY" ] && command -v apt-get >/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-numpy >/dev/null 2>&1 &&
    /usr/bin/python3 -c "import numpy" 2>/dev/null && PY=/usr/bin/python3
fi
[ -n "$PY" ] || { echo "SKIP e2e_marian: no python3 with NumPy"; exit 77; }
REF="$NMT_SOURCE_DIR/tests/support/marian_reference.py"
run=(--threads 1 -q)

# compare_scores WANT GOT: the same pieces' count on every line, each log-probability within 1e-4 (times
# its size beyond 1: nmt prints 6 significant digits, so -16.1638 is already 5e-5 from its value).
compare_scores() {
  awk -F' [|][|][|] ' 'NR == FNR { want[FNR] = $1 " " $2; next }
    { n = split(want[FNR], w, " "); m = split($1 " " $2, g, " ")
      if (n != m) { bad++; print "line " FNR ": " m " values, want " n; next }
      for (i = 1; i <= n; i++) { d = w[i] - g[i]; if (d < 0) d = -d; a = w[i] < 0 ? -w[i] : w[i]
        if (d > 1e-4 * (a > 1 ? a : 1)) { bad++; print "line " FNR ": " $0; break } } }
    END { if (bad || FNR == 0) { print bad + 0 " lines differ"; exit 1 } }' "$1" "$2"
}

seed=0
for variant in "/dan//swish/all" "/an//relu/decoder" "n/da/n/swish/none" "n/a/n/relu/all" "/dan//swish/none/wpos/f16" \
               "/an//relu/none/big" "/dan//gelu/all/embn" "n/da/n/gelu/decoder/embn"; do
  seed=$((seed + 1))
  m=model$seed
  mkdir $m
  "$PY" "$REF" write $m $seed "$variant" || { say_fail "$variant: writing the model"; continue; }
  "$PY" "$REF" sources $m $seed 50 >src$seed.txt
  "$PY" "$REF" greedy $m <src$seed.txt >want$seed.txt
  check "$variant greedy" 0 "$NMT" translate -m $m --greedy --loop-guard 0 --max-length-ratio 1 "${run[@]}" -i src$seed.txt
  cmp -s "$out" want$seed.txt || { say_fail "$variant: greedy outputs differ from the reference's"; diff "$out" want$seed.txt | head -6; }
  [ "$(sort -u want$seed.txt | wc -l)" -ge 10 ] || say_fail "$variant: the reference's outputs are too alike to tell anything"
  "$PY" "$REF" score $m src$seed.txt want$seed.txt >want-scores$seed.txt
  check "$variant score" 0 "$NMT" score -m $m -s src$seed.txt -t want$seed.txt --normalize --tokens "${run[@]}"
  compare_scores want-scores$seed.txt "$out" || say_fail "$variant: forced scores differ from the reference's"
  # Random targets reach every piece's log-probability, not only those greedy search picks.
  "$PY" "$REF" sources $m $((seed + 100)) 50 >tgt$seed.txt
  "$PY" "$REF" score $m src$seed.txt tgt$seed.txt >want-random$seed.txt
  check "$variant score random" 0 "$NMT" score -m $m -s src$seed.txt -t tgt$seed.txt --normalize --tokens "${run[@]}"
  compare_scores want-random$seed.txt "$out" || say_fail "$variant: forced scores of random targets differ"
done

# The .npz path itself (vocabularies from decoder.yml beside it), and without decoder.yml (vocab.yml).
check "-m model.npz" 0 "$NMT" translate -m model1/model.npz --greedy --loop-guard 0 --max-length-ratio 1 "${run[@]}" -i src1.txt
cmp -s "$out" want1.txt || say_fail "-m model.npz translates otherwise"
mkdir bare && cp model1/model.npz model1/vocab.yml bare/
check "no decoder.yml" 0 "$NMT" translate -m bare/model.npz --greedy --loop-guard 0 --max-length-ratio 1 "${run[@]}" -i src1.txt
cmp -s "$out" want1.txt || say_fail "vocab.yml beside the .npz translates otherwise"

# SentencePiece models beside the vocabulary (source.spm: unigram, target.spm: BPE, both holding the
# vocabulary's words whole) cut raw text: the translations and scores of the pieces above.
"$PY" "$REF" corpus 1 3000 >corpus.txt
"$NMT" vocab -i corpus.txt -s 64 -o unigram -q && "$NMT" vocab -i corpus.txt -s 68 -t bpe -o bpe -q ||
  say_fail "nmt vocab"
[ "$(cut -f1 unigram.vocab bpe.vocab | grep -c '^▁[a-z]\{4\}$')" -eq 76 ] || say_fail "the SentencePiece models lack words"
cp -r model1 spm && cp unigram.model spm/source.spm && cp bpe.model spm/target.spm
grep -v unknown src1.txt >known.txt
"$NMT" translate -m model1 --greedy --loop-guard 0 --max-length-ratio 1 "${run[@]}" -i known.txt >known-want.txt
sed 's/▁//g' known.txt >raw.txt
check "spm translate" 0 "$NMT" translate -m spm --greedy --loop-guard 0 --max-length-ratio 1 "${run[@]}" -i raw.txt
sed 's/ //g; s/▁/ /g; s/^ //' known-want.txt | cmp -s - "$out" || say_fail "SentencePiece text translates otherwise"
cp "$out" raw-out.txt
"$NMT" score -m model1 -s known.txt -t known-want.txt --normalize "${run[@]}" >known-scores.txt
check "spm score" 0 "$NMT" score -m spm -s raw.txt -t raw-out.txt --normalize "${run[@]}"
cmp -s known-scores.txt "$out" || say_fail "SentencePiece text scores otherwise"
rm spm/target.spm
check "one spm" 1 "$NMT" translate -m spm "${run[@]}" -i raw.txt
grep -qF "source.spm without target.spm" "$err" || say_fail "source.spm alone: $(cat "$err")"

# int8: runs, and mostly agrees with float32 on a random model.
check "int8" 0 "$NMT" translate -m model1 --precision int8 --greedy --loop-guard 0 --max-length-ratio 1 "${run[@]}" -i src1.txt
[ "$(wc -l <"$out")" -eq 50 ] || say_fail "int8: $(wc -l <"$out") lines"

# nmt bench translate reads it too.
check "bench translate" 0 "$NMT" bench translate -m model1 -i src1.txt --threads 1
grep -q "tokens/s\|sentences/s\|words/s" "$out" "$err" || say_fail "bench translate printed no speed: $(cat "$out" "$err")"

# nmt serve: its translations are nmt translate's (the same engine and options).
if command -v curl >/dev/null; then
  "$NMT" serve -m model1 --source-lang de --target-lang en --port 0 --threads 1 --beam-size 1 --max-length-ratio 1 2>serve.err &
  server=$!
  at_exit "kill $server 2>/dev/null"
  url=""
  for _ in $(seq 200); do
    url="$(sed -n 's|^listening on \(http://127\.0\.0\.1:[0-9]*\)$|\1|p' serve.err)"
    [ -n "$url" ] || ! kill -0 $server 2>/dev/null && break
    sleep 0.05
  done
  head -5 src1.txt >five.txt
  "$NMT" translate -m model1 --beam-size 1 --max-length-ratio 1 "${run[@]}" -i five.txt >five-want.txt
  "$PY" -c 'import json, sys; print(json.dumps({"q": open(sys.argv[1], encoding="utf-8").read().splitlines(),
    "source": "de", "target": "en"}))' five.txt >request.json
  if [ -z "$url" ]; then
    say_fail "serve did not start: $(cat serve.err)"
  elif curl -s -m 20 -X POST "$url/translate" -H 'Content-Type: application/json' --data-binary @request.json >response.json; then
    "$PY" -c 'import json, sys; print("\n".join(json.load(open(sys.argv[1]))["translatedText"]))' response.json >five-got.txt
    [ "$(grep -c . five-want.txt)" -ge 3 ] && cmp -s five-got.txt five-want.txt || say_fail "serve translates otherwise: $(cat response.json)"
  else
    say_fail "serve: curl failed"
  fi
  kill $server 2>/dev/null
fi

# The Python bindings (not on a sanitizer build: python3 cannot load an ASan libnmt).
if [ -n "${NMT_SHARED_LIB:-}" ] && ! nm "$NMT_LIB" 2>/dev/null | grep -q ' __asan_init'; then
  NMT_LIBRARY="$NMT_SHARED_LIB" PYTHONPATH="$NMT_SOURCE_DIR/python" "$PY" - model1 src1.txt >py.txt <<'EOF' ||
import sys
import nmt
with nmt.Translator(sys.argv[1], threads=1, beam_size=1, loop_guard=0, max_length_ratio=1.0) as t:
    lines = open(sys.argv[2], encoding="utf-8").read().splitlines()
    print("\n".join(hyps[0].text for hyps in t.translate_batch(lines)))
EOF
    say_fail "python: $(cat py.txt)"
  cmp -s py.txt want1.txt || say_fail "python translates otherwise: $(head -3 py.txt)"
fi

# The fuzz harness on numpy's own archives, written now (tests/fuzz/corpus/npz holds them as written
# once: zip entries carry their time).
mkdir seeds && "$PY" "$REF" seeds seeds
if [ -x "$NMT_BIN_DIR/fuzz_npz" ]; then
  check "fuzz_npz seeds" 0 "$NMT_BIN_DIR/fuzz_npz" seeds
fi

# Refusals name what nmt does not implement.
refused() { # NAME KEY VALUE EXPECTED
  rm -rf r && cp -r model1 r && "$PY" "$REF" edit r "$2" "$3"
  check "$1" 1 "$NMT" translate -m r "${run[@]}" -i src1.txt
  grep -qF -- "$4" "$err" || say_fail "$1: the error does not name $4: $(cat "$err")"
}
refused "ssru" transformer-decoder-autoreg rnn "transformer-decoder-autoreg 'rnn' (SSRU)"
refused "emb norm" transformer-postprocess-emb dnn "transformer-postprocess-emb 'dnn'"
refused "both norms" transformer-preprocess n "transformer-preprocess 'n', transformer-postprocess 'dan'"
refused "tanh" transformer-ffn-activation tanh "transformer-ffn-activation 'tanh'"
refused "right-left" right-left true "right-left"
refused "type" type s2s "type 's2s'"
refused "ffn depth" transformer-ffn-depth 3 "transformer-ffn-depth 3"
refused "extra array" array:encoder_l1_self_Wo_ln_scale_pre 16 "array encoder_l1_self_Wo_ln_scale_pre"
rm -rf r && cp -r model1 r && printf 'no: [\n' >r/vocab.yml
check "bad vocab" 1 "$NMT" translate -m r "${run[@]}" -i src1.txt
grep -qF "r/vocab.yml:" "$err" || say_fail "a damaged vocab.yml: $(cat "$err")"
rm -rf r && cp -r model1 r && head -c 3000 model1/model.npz >r/model.npz
check "cut npz" 1 "$NMT" translate -m r "${run[@]}" -i src1.txt
grep -qF "r/model.npz" "$err" || say_fail "a cut .npz: $(cat "$err")"

exit $fail
