#!/usr/bin/env bash
# int8 decoding, `nmt convert` and `nmt shortlist` end to end on a tiny model trained inside the test:
# an int8 model directory is about a quarter of the size, is read by every subcommand, and translates
# exactly as --precision int8 on the fp32 model; int8 rows do not depend on their batch; a shortlist
# is built from config.yaml's corpus or --src/--tgt and used by translate and bench.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"

# A toy parallel corpus: the target is the source with each word swapped for its "translation".
. "$NMT_SOURCE_DIR/tests/support/tiny_model.sh"
tiny_model --corpus toy 400 11
cat >config.yaml <<'EOF'
model: {d_model: 64, heads: 2, ffn: 128, encoder_layers: 1, decoder_layers: 1, dropout: 0.0}
vocab: {size: 48}
data:
  train: {src: toy.train.en, tgt: toy.train.de}
train:
  batch_tokens: 512
  max_steps: 300
  valid_every: 1000
  save_every: 1000
  optimizer: {lr: 0.005, warmup: 20}
output: model
EOF
"$NMT" train config.yaml --threads 1 --quiet >train.out 2>&1 || { echo "FAIL nmt train"; cat train.out; exit 1; }
M=model
head -40 toy.train.en >in.txt

# Without AVX2 or VNNI int8 is refused with a message naming what is missing; then nothing else here applies.
"$NMT" translate -m $M -i in.txt --precision int8 -q >int8.txt 2>err
if grep -q 'needs a CPU with AVX2' err; then echo "int8: no AVX2 or VNNI on this CPU (refused as expected)"; exit $fail; fi
[ -s int8.txt ] || { say_fail "translate --precision int8"; cat err; }

# convert: about a quarter of the size; the int8 directory translates exactly like int8 at load time.
check "convert int8" 0 "$NMT" convert -m $M --precision int8 -o m8
grep -q 'wrote m8/model.safetensors (int8' err || say_fail "convert message: $(cat err)"
for f in spm.model config.yaml; do [ -f m8/$f ] || say_fail "convert did not copy $f"; done
full=$(stat -c %s $M/model.safetensors) small=$(stat -c %s m8/model.safetensors)
[ $((small * 100 / full)) -le 35 ] || say_fail "int8 model is $small bytes, fp32 $full (want <= 35%)"
check "translate int8 dir" 0 "$NMT" translate -m m8 -i in.txt --precision int8 -q
cmp -s out int8.txt || say_fail "the int8 directory translates unlike --precision int8 on the fp32 model"
# It runs as it was converted: int8 unless --precision says otherwise.
check "translate int8 dir by default" 0 "$NMT" translate -m m8 -i in.txt -q
cmp -s out int8.txt || say_fail "the int8 directory does not run int8 by default"
# Every subcommand reads it: fp32 decoding, scoring, back to fp32.
check "translate int8 dir as fp32" 0 "$NMT" translate -m m8 -i in.txt -q --precision fp32
[ "$(wc -l <out)" -eq 40 ] || say_fail "fp32 decoding of the int8 directory"
# The scores tell the arithmetic apart: int8 activations by default, float32 ones when asked.
"$NMT" translate -m m8 -i in.txt -q --n-best 1 >scores-default.txt 2>err || say_fail "n-best: $(cat err)"
"$NMT" translate -m m8 -i in.txt -q --n-best 1 --precision int8 >scores-int8.txt 2>err || say_fail "n-best: $(cat err)"
"$NMT" translate -m m8 -i in.txt -q --n-best 1 --precision fp32 >scores-fp32.txt 2>err || say_fail "n-best: $(cat err)"
cmp -s scores-default.txt scores-int8.txt || say_fail "the int8 directory's default scores are not int8's"
cmp -s scores-default.txt scores-fp32.txt && say_fail "--precision fp32 did not override the int8 directory's precision"
check "score int8 dir" 0 "$NMT" score -m m8 -s in.txt -t int8.txt --threads 1
[ "$(wc -l <out)" -eq 40 ] || say_fail "score of the int8 directory"
check "convert back" 0 "$NMT" convert -m m8 --precision fp32 -o m32 -q
[ "$(stat -c %s m32/model.safetensors)" -eq "$full" ] || say_fail "fp32 from int8 is not the fp32 size"
check "convert onto itself" 2 "$NMT" convert -m $M --precision int8 -o $M
# A directory that holds a model is not written without --overwrite (the model stays as it was).
cp m8/model.safetensors m8.before
check "convert onto a model" 2 "$NMT" convert -m m32 --precision fp32 -o m8
grep -q "m8 already holds a model (m8/model.safetensors).*--overwrite" err || say_fail "convert onto a model: $(cat err)"
cmp -s m8/model.safetensors m8.before || say_fail "a refused convert changed the model"
check "convert --overwrite" 0 "$NMT" convert -m m32 --precision fp32 -o m8 --overwrite -q
[ "$(stat -c %s m8/model.safetensors)" -eq "$full" ] || say_fail "convert --overwrite did not replace the model"
check "convert bad precision" 2 "$NMT" convert -m $M --precision int4 -o x
check "bad precision" 2 "$NMT" translate -m $M -i in.txt --precision fp16

# int8 is row-invariant: each line alone gives what it gives in a batch, on 1 or 2 threads.
: >alone.txt
while IFS= read -r line; do printf '%s\n' "$line" | "$NMT" translate -m $M -q --threads 1 --precision int8 >>alone.txt; done <in.txt
cmp -s alone.txt int8.txt || { say_fail "int8 lines alone differ from the batch"; diff alone.txt int8.txt | head; }
check "int8 greedy" 0 "$NMT" translate -m $M -i in.txt --precision int8 --greedy -q --threads 2
check "auto" 0 "$NMT" translate -m $M -i in.txt --precision auto -q
[ "$(wc -l <out)" -eq 40 ] || say_fail "--precision auto"

# Shortlist: written by nmt train; missing is an error saying how to build it; built from config.yaml's
# corpus or --src/--tgt.
[ -f $M/shortlist.bin ] || say_fail "nmt train wrote no shortlist.bin"
rm -f $M/shortlist.bin
check "no shortlist" 1 "$NMT" translate -m $M -i in.txt --shortlist -q
grep -q 'nmt shortlist -m' err || say_fail "missing shortlist message: $(cat err)"
check "shortlist" 0 "$NMT" shortlist -m $M -k 10 --frequent 4
grep -q 'K 10, M 4, from 400 sentence pairs' err || say_fail "shortlist message: $(cat err)"
check "shortlist --src" 0 "$NMT" shortlist -m m8 --src toy.train.en --tgt toy.train.de -k 10 --frequent 4 -q
cmp -s $M/shortlist.bin m8/shortlist.bin || say_fail "the shortlist from --src/--tgt differs from config.yaml's"
check "shortlist one side" 2 "$NMT" shortlist -m $M --src toy.train.en
check "shortlist k too big" 1 "$NMT" shortlist -m $M -k 1000
"$NMT" translate -m $M -i in.txt -q --threads 2 >fp32.txt
for p in fp32 int8; do
  check "translate --shortlist $p" 0 "$NMT" translate -m $M -i in.txt --shortlist --precision $p -q --threads 2
  [ "$(wc -l <out)" -eq 40 ] || say_fail "--shortlist $p line count"
  # every output word comes from the shortlist's candidates, so this toy model keeps its words
  same=$(paste -d '\n' out $p.txt | awk 'NR % 2 { a = $0; next } a == $0 { n++ } END { print n + 0 }')
  [ "$same" -ge 30 ] || say_fail "--shortlist $p changed $((40 - same)) of 40 lines"
done
check "bench --shortlist" 0 "$NMT" bench translate -m $M -i in.txt --precision int8 --shortlist --json --threads 1 --quiet
grep -q '"precision": "int8", "shortlist": true' out || say_fail "bench json: $(cat out)"
check "bench gemm" 0 "$NMT" bench gemm --size 64 --threads 1
grep -q '^  int8  int8 ' out || say_fail "bench gemm has no int8 row: $(cat out)"
exit $fail
