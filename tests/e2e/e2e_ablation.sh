#!/usr/bin/env bash
# tools/ablation.sh on a toy config: one run per variant beside the config's output directory, each
# for the steps asked, sharing the config's vocabulary unless the variant sets a vocab.* key; a table
# row per variant with its steps and the BLEU and chrF of its translations of the validation set (and
# of TEST), which equal `nmt bleu` on `nmt translate -k 5` with the run's model; each run validates at
# its end only, greedily; bad usage exits 2.
# Then tools/decode_sweep.sh on one of the runs.
set -u
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
awk -v n=300 -v seed=3 -v src=train.en -v tgt=train.de -f "$NMT_SOURCE_DIR/tests/support/colours.awk"
head -n 20 train.en >valid.en
head -n 20 train.de >valid.de
tail -n 10 train.en >test.en
tail -n 10 train.de >test.de
mkdir -p configs
cat >configs/toy.yaml <<'YAML'
model: {d_model: 32, heads: 2, ffn: 64, encoder_layers: 1, decoder_layers: 1}
vocab: {size: 40}
data:
  root: ..
  train: {src: train.en, tgt: train.de}
  valid: {src: valid.en, tgt: valid.de}
train:
  batch_tokens: 256
  optimizer: {lr: 3.0e-3, warmup: 5}
  valid_every: 2
  valid_beam: 5
  valid_length_penalty: 0.6
output: ../runs/toy
YAML
ablation=$NMT_SOURCE_DIR/tools/ablation.sh
export NMT

check "no variant" 2 "$ablation" configs/toy.yaml 3
check "bad variant" 2 "$ablation" configs/toy.yaml 3 nonsense
check "ablation" 0 env THREADS=1 TEST="$tmp/test.en $tmp/test.de" "$ablation" configs/toy.yaml 3 recipe \
  model.dropout=0.3 vocab.size=36 'twice:data.train=[{src: train.en, tgt: train.de, weight: 2}],model.dropout=0.2'
for run in recipe model.dropout-0.3 vocab.size-36 twice; do
  [ -s "runs/abl-toy-$run/model.safetensors" ] || say_fail "no run abl-toy-$run"
  # The config's valid_every 2 and valid_beam 5 are not followed: a trial validates at its end only
  # (step 3), greedily.
  valid=$(grep '"event":"valid"' "runs/abl-toy-$run/train.log.jsonl" | grep -o '"step":[0-9]*' | tr '\n' ' ')
  [ "$valid" = '"step":3 ' ] || say_fail "abl-toy-$run validated at: $valid"
  grep -q "^  valid_beam: 1$" "runs/abl-toy-$run/config.yaml" || say_fail "abl-toy-$run: validation not greedy"
done
cmp -s runs/toy/spm.model runs/abl-toy-recipe/spm.model || say_fail "the recipe run has its own vocabulary"
cmp -s runs/toy/spm.model runs/abl-toy-model.dropout-0.3/spm.model || say_fail "a model variant has its own vocabulary"
cmp -s runs/toy/spm.model runs/abl-toy-vocab.size-36/spm.model && say_fail "a vocab variant shares the vocabulary"
[ -s runs/abl-toy-curves.svg ] || say_fail "no curves"
grep -q "^| variant | steps | minutes | precision | valid BLEU (beam 5) | valid chrF | test BLEU (beam 5) | test chrF |$" "$out" ||
  say_fail "header: $(cat "$out")"
# The dropout run's cells are nmt bleu of nmt translate -k 5 --length-penalty 0.6 with its model.
"$NMT" translate -m runs/abl-toy-model.dropout-0.3 -q --threads 1 -k 5 --length-penalty 0.6 -i test.en >hyp.de
want="| model.dropout=0.3 | 3 | "
grep -Eq '^\| model.dropout=0.3 \| 3 \| [0-9.]+ \| fp32 \| ' "$out" || say_fail "no precision in the dropout row: $(cat "$out")"
row=$(grep -F "$want" "$out") || say_fail "no dropout row: $(cat "$out")"
test_bleu=$("$NMT" bleu -b test.de -i hyp.de) test_chrf=$("$NMT" bleu -b test.de -i hyp.de -m chrf)
case $row in *"| $test_bleu | $test_chrf |") ;; *) say_fail "dropout row '$row', test BLEU $test_bleu chrF $test_chrf" ;; esac
[ "$(grep -c '^| [a-z]' "$out")" -eq 5 ] || say_fail "rows: $(cat "$out")"
# A labelled variant: its list value kept whole (a weight of 2 doubles the epoch), its run named by the label.
grep -q "weight: 2}]" runs/abl-toy-twice/config.yaml && grep -q "^  dropout: 0.2$" runs/abl-toy-twice/config.yaml ||
  say_fail "labelled variant: $(grep -n "train:\|dropout:" runs/abl-toy-twice/config.yaml)"
grep -q '^| twice | 3 | ' "$out" || say_fail "no row for the labelled variant: $(cat "$out")"
grep -Eq '"p_value": [0-9]' "$err" || say_fail "no paired test: $(head -5 "$err")"

# tools/decode_sweep.sh on the recipe run: a row per setting whose cells are nmt bleu of nmt translate
# with that beam and length penalty, p-values against the first; a bad setting exits 2 before any work.
sweep=$NMT_SOURCE_DIR/tools/decode_sweep.sh
check "sweep: bad setting" 2 "$sweep" runs/abl-toy-recipe valid.en valid.de 5:0.6 beam5
check "sweep: no model" 2 "$sweep" runs/none valid.en valid.de 5:0.6
check "sweep" 0 env THREADS=1 "$sweep" runs/abl-toy-recipe valid.en valid.de 5:0.6 1:1.0,--precision,int8
"$NMT" translate -m runs/abl-toy-recipe -q --threads 1 -k 1 --length-penalty 1.0 --precision int8 -i valid.en >hyp.de
bleu=$("$NMT" bleu -b valid.de -i hyp.de -w 2) chrf=$("$NMT" bleu -b valid.de -i hyp.de -m chrf -w 2)
row=$(grep -F "| 1:1.0,--precision,int8 | " "$out") || say_fail "no greedy row: $(cat "$out")"
case $row in "| 1:1.0,--precision,int8 | $bleu ("*") | $chrf ("*") | "*) ;;
  *) say_fail "greedy row '$row', BLEU $bleu chrF $chrf" ;; esac
grep -q "^| 5:0.6 | [0-9.]* | [0-9.]* | [0-9.]* | " "$out" || say_fail "baseline row: $(cat "$out")"
cmp -s hyp.de runs/abl-toy-recipe/sweep-valid.en/1_1.0+--precision+int8.hyp || say_fail "kept translation differs"

[ $fail -eq 0 ] && echo "e2e_ablation: all passed"
exit $fail
