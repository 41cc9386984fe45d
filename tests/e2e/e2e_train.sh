#!/usr/bin/env bash
# nmt train end to end: a quiet run makes a model directory that nmt translate reads; validation BLEU
# equals nmt bleu on nmt translate --greedy with the saved model; SIGTERM mid-run finishes the step, saves
# a checkpoint and exits 143 (start, stop and resume events in the log), and a second run resumes
# from it; with train.budget_clock cpu a paused run spends none of max_minutes; train.init_from
# fine-tunes a trained model (refusing another architecture or vocabulary); gzip corpora train as
# their text does; weighted corpora make the epoch their weights say; --threads defaults to the CPUs of the affinity mask; bad corpora (mismatched line
# counts, invalid UTF-8) and a changed model section fail with exit 1 and a message saying what is
# wrong.
set -u
. "$NMT_SOURCE_DIR/tests/support/harness.sh"

# A toy corpus: English colour words, German targets word for word.
awk -v n=400 -v seed=1 -v src=train.en -v tgt=train.de -f "$NMT_SOURCE_DIR/tests/support/colours.awk"
head -n 40 train.en > valid.en
head -n 40 train.de > valid.de
cat > toy.yaml <<'YAML'
model: {d_model: 32, heads: 2, ffn: 64, encoder_layers: 1, decoder_layers: 1}
vocab: {size: 40}
data:
  train: {src: train.en, tgt: train.de}
  valid: {src: valid.en, tgt: valid.de}
train:
  batch_tokens: 256
  optimizer: {lr: 3.0e-3, warmup: 30}
  max_steps: 20
  valid_every: 10
  save_every: 10
output: out
YAML

expect() { # expect NAME STATUS PATTERN COMMAND...: exit status and a pattern in stderr ("" = empty stderr)
  local name=$1 want=$2 pattern=$3; shift 3
  "$@" >stdout.txt 2>stderr.txt; local got=$?
  if [ "$got" -ne "$want" ]; then echo "FAIL $name: exit $got, want $want"; cat stderr.txt; fail=1; return; fi
  if [ -z "$pattern" ]; then
    [ -s stderr.txt ] && { echo "FAIL $name: expected no output on stderr"; cat stderr.txt; fail=1; }
  elif ! grep -q -- "$pattern" stderr.txt; then
    echo "FAIL $name: stderr lacks '$pattern'"; cat stderr.txt; fail=1
  fi
  [ -s stdout.txt ] && say_fail "$name: printed on stdout"
}

expect "quiet run" 0 "" "$NMT" train toy.yaml --quiet
for f in model.safetensors spm.model config.yaml train.log.jsonl checkpoints/step-00000020.safetensors; do
  [ -s "out/$f" ] || say_fail "quiet run: out/$f missing"
done
grep -q '"event":"valid","step":20' out/train.log.jsonl || say_fail "log lacks the validation at 20"
# The output directory is a model directory.
"$NMT" translate -m out < valid.en > hyp.de 2>translate.err || { echo "FAIL translate -m out"; cat translate.err; fail=1; }
[ "$(wc -l < hyp.de)" -eq 40 ] || say_fail "translate: $(wc -l < hyp.de) lines for 40"
expect "progress" 0 "effective config" "$NMT" train toy.yaml --set train.max_steps=25
grep -q "resuming from .*step-00000020" stderr.txt || say_fail "resume message"
grep -q "step 24 loss" stderr.txt || { echo "FAIL progress line"; cat stderr.txt; fail=1; }
expect "model section changed" 1 "model.ffn is 64 in the checkpoint but 128 in the config" \
  "$NMT" train toy.yaml --set model.ffn=128

# Validation BLEU is `nmt bleu` on `nmt translate --greedy` with the saved model, to the last digit.
"$NMT" train toy.yaml --quiet --set output=bleu --set train.max_steps=100 --set train.valid_every=100 \
  --set train.optimizer.lr=1e-2 --set model.dropout=0 || say_fail "bleu run"
logged=$(sed -n 's/.*"event":"valid","step":100,.*"bleu":\([0-9.]*\)[,}].*/\1/p' bleu/train.log.jsonl)
"$NMT" translate -q -m bleu --greedy < valid.en > bleu.hyp
offline=$("$NMT" bleu valid.de -i bleu.hyp -b -w 4)
[ -n "$logged" ] && [ "$logged" = "$offline" ] || say_fail "validation BLEU '$logged' != offline '$offline'"
awk -v b="$offline" 'BEGIN { exit !(b > 0) }' || say_fail "BLEU is $offline: nothing was compared"

# With train.valid_beam, it is `nmt translate -k` with train.valid_length_penalty as --length-penalty.
"$NMT" train toy.yaml --quiet --set output=beam --set train.max_steps=100 --set train.valid_every=100 \
  --set train.optimizer.lr=1e-2 --set model.dropout=0 --set train.valid_beam=3 \
  --set train.valid_length_penalty=2 || say_fail "beam run"
logged=$(sed -n 's/.*"event":"valid","step":100,.*"bleu":\([0-9.]*\)[,}].*/\1/p' beam/train.log.jsonl)
"$NMT" translate -q -m beam -k 3 --length-penalty 2 < valid.en > beam.hyp
"$NMT" translate -q -m beam -k 3 < valid.en > beam-default.hyp
offline=$("$NMT" bleu valid.de -i beam.hyp -b -w 4)
[ -n "$logged" ] && [ "$logged" = "$offline" ] || say_fail "beam validation BLEU '$logged' != offline '$offline'"
cmp -s beam.hyp beam-default.hyp && say_fail "length penalty 2 and the default 0.6 agree: nothing was compared"

# A bf16 run validates in bf16: the BLEU of `nmt translate --precision bf16`, to the last digit.
if grep -q avx512_bf16 /proc/cpuinfo && [ "${NMT_GEMM:-}" != openblas ]; then
  "$NMT" train toy.yaml --quiet --set output=bf16 --set train.max_steps=100 --set train.valid_every=100 \
    --set train.optimizer.lr=1e-2 --set model.dropout=0 --set train.precision=bf16 || say_fail "bf16 run"
  logged=$(sed -n 's/.*"event":"valid","step":100,.*"bleu":\([0-9.]*\)[,}].*/\1/p' bf16/train.log.jsonl)
  "$NMT" translate -q -m bf16 --greedy --precision bf16 < valid.en > bf16.hyp
  offline=$("$NMT" bleu valid.de -i bf16.hyp -b -w 4)
  [ -n "$logged" ] && [ "$logged" = "$offline" ] || say_fail "bf16 validation BLEU '$logged' != offline '$offline'"
fi

# train.precision auto measured while other processes hold every CPU says that its rates may mislead.
if grep -q avx512_bf16 /proc/cpuinfo && [ "${NMT_GEMM:-}" != openblas ]; then
  hogs=()
  for _ in $(seq $(( $(nproc) + 1 ))); do (while :; do :; done) & hogs+=($!); done
  expect "busy machine" 0 "the machine was busy: its [0-9]* threads ran [0-9]*% of the time" \
    "$NMT" train toy.yaml --set output=busy --set train.precision=auto --set train.max_steps=1
  kill "${hogs[@]}"; wait "${hogs[@]}" 2>/dev/null
fi

# SIGTERM after the first checkpoint: exit 143 with a checkpoint, then resume.
"$NMT" train toy.yaml --set output=sig --set train.max_steps=1000000 --set train.save_every=5 --set train.patience=0 2>sig.log &
pid=$!
# Any checkpoint will do: older ones are pruned, and a fast machine may be past step 5 already.
for _ in $(seq 600); do ls sig/checkpoints/step-*.safetensors >/dev/null 2>&1 && break; sleep 0.1; done
kill -TERM "$pid"
wait "$pid"; status=$?
[ "$status" -eq 143 ] || { echo "FAIL SIGTERM: exit $status, want 143"; cat sig.log; fail=1; }
# The start line says what the run computes with (the config leaves train.precision at fp32: no why).
grep -q '^{"event":"start","step":0,"threads":[1-9][0-9]*,"ranks":1,"precision":"fp32","elapsed_s":' sig/train.log.jsonl ||
  say_fail "SIGTERM: no start event with threads, ranks and precision: $(head -1 sig/train.log.jsonl)"
grep -q '^{"event":"stop","step":[0-9]*,"reason":"signal",' sig/train.log.jsonl || say_fail "SIGTERM: no stop event"
grep -q '"grad_norm":[0-9.e+-]*,"time":"20[0-9-]*T[0-9:]*Z"}$' sig/train.log.jsonl || say_fail "train lines lack grad_norm, time"
# train.budget_clock cpu: a run paused (SIGSTOP) spends none of max_minutes, which then counts the CPU
# time the run was given over its threads. A budget of 1.2 CPU-seconds a thread, a pause of 3 s.
started=$(date +%s.%N)
"$NMT" train toy.yaml --quiet --set output=cpu --set train.max_steps=0 --set train.patience=0 \
  --set train.max_minutes=0.02 --set train.budget_clock=cpu --threads 1 &
pid=$!
for _ in $(seq 600); do grep -q '"event":"start"' cpu/train.log.jsonl 2>/dev/null && break; sleep 0.05; done
kill -STOP "$pid"; sleep 3; kill -CONT "$pid"
wait "$pid" || say_fail "budget_clock cpu: exit $?"
wall=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
stop=$(grep '"event":"stop"' cpu/train.log.jsonl)
case $stop in *'"reason":"max_minutes"'*) ;; *) say_fail "budget_clock cpu: $stop" ;; esac
spent=$(echo "$stop" | sed 's/.*"elapsed_s":\([0-9.]*\).*/\1/')
awk -v s="$spent" -v w="$wall" 'BEGIN { exit !(s >= 1.2 && s < 2.5 && w - s >= 3) }' ||
  say_fail "budget_clock cpu: $spent s of budget spent in $wall s with a 3 s pause"
# SIGINT: exit 130 (the status a shell gives a command ended by ^C), after its checkpoint.
"$NMT" train toy.yaml --quiet --set output=int --set train.max_steps=1000000 --set train.save_every=5 --set train.patience=0 &
pid=$!
for _ in $(seq 600); do ls int/checkpoints/step-*.safetensors >/dev/null 2>&1 && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid"; status=$?
[ "$status" -eq 130 ] || say_fail "SIGINT: exit $status, want 130"
grep -q "stopped by signal" sig.log || { echo "FAIL SIGTERM: no stop message"; cat sig.log; fail=1; }
last=$(ls sig/checkpoints | sort | tail -n 1)
step=$((10#$(echo "$last" | sed 's/step-0*\([0-9]*\)\.safetensors/\1/;s/^$/0/')))
[ "$step" -ge 5 ] || say_fail "SIGTERM: last checkpoint $last"
ls sig sig/checkpoints | grep -q '\.tmp\.' && say_fail "SIGTERM: temporary file left"
expect "resume after SIGTERM" 0 "resuming from .*$last" \
  "$NMT" train toy.yaml --set output=sig --set "train.max_steps=$((step + 3))" --set train.patience=0
[ -e "sig/checkpoints/$(printf 'step-%08d.safetensors' $((step + 3)))" ] || say_fail "resume: no final checkpoint"
grep -q "^{\"event\":\"resume\",\"step\":$step,\"threads\":[1-9][0-9]*,\"ranks\":1,\"precision\":\"fp32\"," sig/train.log.jsonl ||
  say_fail "no resume event at $step"
grep -q "^{\"event\":\"stop\",\"step\":$((step + 3)),\"reason\":\"max_steps\"," sig/train.log.jsonl || say_fail "no max_steps stop event"

# Bad corpora.
printf 'one\ntwo\nthree\n' > three.en
printf 'eins\nzwei\n' > two.de
expect "mismatched corpora" 1 "three.en has 3 lines but .*two.de has 2" \
  "$NMT" train toy.yaml --set output=bad1 --set 'data.train={src: three.en, tgt: two.de}'
printf 'ok\nbad \377 byte\n' > bad.en
printf 'gut\nschlecht\n' > bad.de
expect "invalid UTF-8" 1 "bad.en:2: invalid UTF-8 at byte 5" \
  "$NMT" train toy.yaml --set output=bad2 --set 'data.train={src: bad.en, tgt: bad.de}'
expect "position table too small" 1 "data.max_length 128 needs model.max_positions of at least 129" \
  "$NMT" train toy.yaml --set output=bad3 --set model.positions=learned --set model.max_positions=64
# Fine-tuning: a fresh run (step 0, its own schedule) from out's weights and vocabulary, on new data.
tac train.en >tune.en && tac train.de >tune.de
expect "init_from" 0 "" "$NMT" train toy.yaml --quiet --set output=tuned --set "train.init_from=$tmp/out" \
  --set 'data.train={src: tune.en, tgt: tune.de}' --set train.max_steps=5 --set model.dropout=0.3
cmp -s out/spm.model tuned/spm.model || say_fail "init_from: the vocabulary is not the model's"
grep -q '^{"event":"start","step":0,' tuned/train.log.jsonl || say_fail "init_from: no fresh start"
first_valid() { sed -n 's/.*"event":"valid","step":\([0-9]*\),"loss":\([0-9.]*\).*/\2/p' "$1" | head -n 1; }
# Started from trained weights, the fine-tuned run's first validation loss is far below a fresh run's.
awk -v a="$(sed -n 's/.*"event":"valid","step":5,"loss":\([0-9.]*\).*/\1/p' tuned/train.log.jsonl)" \
    -v b="$(first_valid out/train.log.jsonl)" 'BEGIN { exit !(a != "" && a + 0 < b + 0) }' ||
  say_fail "init_from: validation loss $(grep valid tuned/train.log.jsonl | head -n 1) not below a fresh run's"
expect "init_from, other architecture" 1 "model.ffn is 64 there but 128 in the config" \
  "$NMT" train toy.yaml --set output=tuned2 --set "train.init_from=$tmp/out" --set model.ffn=128
printf 'a vocabulary of its own' >other.model
expect "init_from, other vocabulary" 1 "differs from .*out/spm.model, the vocabulary of train.init_from" \
  "$NMT" train toy.yaml --set output=tuned3 --set "train.init_from=$tmp/out" --set "vocab.model=$tmp/other.model"
expect "init_from, no model" 1 "nowhere is not a model directory" \
  "$NMT" train toy.yaml --set output=tuned4 --set "train.init_from=$tmp/nowhere"
# gzip corpora: the same run as on the text.
gzip -c train.en >train.en.gz && gzip -c train.de >train.de.gz
expect "gzip corpora" 0 "" "$NMT" train toy.yaml --quiet --set output=gz --set 'data.train={src: train.en.gz, tgt: train.de.gz}'
cmp -s out/model.safetensors gz/model.safetensors || say_fail "gzip corpora train another model"
# Weighted corpora: an epoch holds each corpus as many times as its weight, in order; a corpus of
# weight 2 is the same epoch (and so, with the same vocabulary, the same model) as the corpus listed
# twice. (A vocabulary trained on the list reads every file given, so it differs.)
two=(--quiet --set train.max_steps=6 --set train.valid_every=1000 --set "vocab.model=$tmp/out/spm.model")
"$NMT" train toy.yaml --set output=w1 "${two[@]:1:4}" \
  --set 'data.train=[{src: train.en, tgt: train.de}, {src: tune.en, tgt: tune.de, weight: 2}]' 2>w1.log ||
  say_fail "weighted corpora: $(cat w1.log)"
grep -q "an epoch: 1200 pairs, .* of .*train.en x 1, .*tune.en x 2" w1.log || say_fail "weighted corpora: $(grep epoch w1.log)"
grep -q "weight: 2}]" w1/config.yaml || say_fail "weighted corpora: the saved config lacks the weights"
[ -s w1/corpus-train-2.bin ] || say_fail "weighted corpora: no cache for the second corpus"
expect "one corpus of weight 2" 0 "" "$NMT" train toy.yaml --set output=w2 "${two[@]}" \
  --set 'data.train=[{src: train.en, tgt: train.de, weight: 2}]'
expect "the corpus listed twice" 0 "" "$NMT" train toy.yaml --set output=w3 "${two[@]}" \
  --set 'data.train=[{src: train.en, tgt: train.de}, {src: train.en, tgt: train.de}]'
cmp -s w2/model.safetensors w3/model.safetensors || say_fail "a weight of 2 trains another model than the corpus twice"
expect "bad weight" 2 "data.train item 1.weight: expected an integer from 1 to 1000, got 0" \
  "$NMT" train toy.yaml --set output=w4 --set 'data.train=[{src: train.en, tgt: train.de, weight: 0}]'
# --threads: the CPUs of the affinity mask.
if command -v taskset >/dev/null; then
  taskset -c 0 "$NMT" train toy.yaml --set output=one --set train.max_steps=1 >/dev/null 2>one.log
  grep -q "; 1 threads" one.log || say_fail "taskset -c 0: $(grep threads one.log)"
fi
expect "missing config" 1 "nope.yaml" "$NMT" train nope.yaml
expect "bad threads" 2 "--threads" "$NMT" train toy.yaml --threads 0
expect "no config" 2 "missing CONFIG.yaml" "$NMT" train

[ $fail -eq 0 ] && echo "e2e_train: all passed"
exit $fail
