#!/usr/bin/env bash
# Full disks and I/O errors: `nmt train` with the I/O layer's fault injection (NMT_FAULT=write:N makes
# the N-th write fail with ENOSPC, NMT_FAULT=fsync:N the N-th fsync with EIO) must stop with exit 1
# and a message naming the file, leave the previous checkpoint and model byte for byte as they were,
# leave no temporary behind, and resume afterwards exactly as if nothing had happened. And every
# command that writes to stdout fails with a message on a full disk (/dev/full) or a closed pipe.
set -u
. "$NMT_SOURCE_DIR/tests/support/harness.sh"

"$NMT_BIN_DIR/nmt-gen-en-hi" --output data --pairs 300 --valid 10 --test 3 >/dev/null 2>&1 || { echo "FAIL corpus"; exit 1; }
"$NMT" vocab --input data/train.en,data/train.hi --size 160 --output spm --quiet || { echo "FAIL nmt vocab"; exit 1; }
cat > faults.yaml <<'YAML'
model: {d_model: 16, heads: 2, ffn: 32, encoder_layers: 1, decoder_layers: 1}
vocab: {model: spm.model}
data:
  train: {src: data/train.en, tgt: data/train.hi}
  valid: {src: data/valid.en, tgt: data/valid.hi}
train:
  batch_tokens: 200
  max_steps: 10
  valid_every: 10
  save_every: 10
output: base
YAML
run=("$NMT" train faults.yaml --threads 1 --quiet)
"${run[@]}" || { echo "FAIL the first 10 steps"; exit 1; }
ckpt=checkpoints/step-00000010.safetensors
[ -s "base/$ckpt" ] && [ -s base/model.safetensors ] || { echo "FAIL no checkpoint at step 10"; exit 1; }
"${run[@]}" --set output=straight --set train.max_steps=20 || { echo "FAIL the straight run"; exit 1; }

# faulty SPEC: resumes a copy of base for 10 more steps with NMT_FAULT=SPEC. Returns 0 when the run
# failed as it must (or ran through: SPEC beyond its last write), 1 otherwise; $hit names the file.
faulty() {
  rm -rf run && cp -r base run
  NMT_FAULT=$1 "${run[@]}" --set output=run --set train.max_steps=20 2>err.txt
  local status=$? f
  hit=""
  if [ $status -eq 0 ]; then
    [ -s run/checkpoints/step-00000020.safetensors ] || say_fail "$1: exit 0 without the step-20 checkpoint"
    return 0
  fi
  [ $status -eq 1 ] || say_fail "$1: exit $status, want 1"
  grep -q "^nmt train: $tmp/run/[^:]*: \(write\|fsync\) failed: .* (injected fault)$" err.txt ||
    say_fail "$1: message '$(cat err.txt)'"
  hit=$(sed 's|^nmt train: [^ ]*/run/\([^:]*\): .*|\1|' err.txt)
  cmp -s "base/$ckpt" "run/$ckpt" || say_fail "$1: the step-10 checkpoint changed (fault in $hit)"
  for f in run/model.safetensors run/checkpoints/*.safetensors; do
    "$NMT" average -o probe.safetensors "$f" >/dev/null 2>probe.err || say_fail "$1: $f does not read back: $(cat probe.err)"
  done
  ls run run/checkpoints | grep -q '\.tmp\.' && say_fail "$1: a temporary was left behind: $(ls run run/checkpoints | grep '\.tmp\.')"
  return 0
}

# Writes spread over the run (config.yaml, the log, model.safetensors, the step-20 checkpoint; the
# run makes about 230), and every fsync.
checkpoint_write=""
for n in 1 2 3 5 8 13 21 34 55 144 230 260; do
  faulty "write:$n"
  case "$hit" in checkpoints/step-*) checkpoint_write=${checkpoint_write:-$n} ;; esac
done
[ -n "$checkpoint_write" ] || { echo "FAIL no injected write failure fell into a checkpoint save"; exit 1; }
for n in 1 2 3 4 5 6; do faulty "fsync:$n"; done # the 6th is past the last: the run succeeds

# A checkpoint save that failed, then a resume without faults: the same as the straight run.
faulty "write:$checkpoint_write"
"${run[@]}" --set output=run --set train.max_steps=20 2>err.txt || say_fail "resume after a failed save: $(cat err.txt)"
st_data() { local n; n=$(od -An -tu8 -N8 "$1" | tr -d ' '); tail -c +$((9 + n)) "$1"; }
cmp -s <(st_data straight/checkpoints/step-00000020.safetensors) <(st_data run/checkpoints/step-00000020.safetensors) ||
  say_fail "after a failed save and a resume, the step-20 checkpoint differs from the straight run's"
cmp -s straight/model.safetensors run/model.safetensors || say_fail "after a failed save and a resume, model.safetensors differs"

# Output errors of the commands that write to stdout: a full disk, and a closed pipe.
head -n 3 data/test.en > in.txt
head -n 3 data/test.hi > ref.txt
full() { # full NAME COMMAND...: writing to /dev/full must fail with exit 1 and say so
  local name=$1; shift
  "$@" >/dev/full 2>err.txt; local status=$?
  [ $status -eq 1 ] && grep -q 'write failed: No space left on device' err.txt ||
    say_fail "$name >/dev/full: exit $status, '$(cat err.txt)'"
}
full "translate" "$NMT" translate -m straight -i in.txt --threads 1 -q
full "translate --n-best" "$NMT" translate -m straight -i in.txt --threads 1 -q --n-best 2 --print-alignment
full "score" "$NMT" score -m straight -s in.txt -t ref.txt --threads 1
full "bleu" "$NMT" bleu ref.txt -i ref.txt
full "bleu --sentence-level" "$NMT" bleu ref.txt -i ref.txt --sentence-level
full "--help" "$NMT" --help
full "translate --help" "$NMT" translate --help
full "--version" "$NMT" --version
# A closed pipe: every command ends quietly by SIGPIPE as Unix filters do (exit 141, nothing on stderr).
for i in $(seq 3000); do echo "line $i of a long file"; done > many.txt
"$NMT" translate -m straight -i many.txt --threads 1 -q --greedy 2>err.txt | head -n 1 >/dev/null
status=${PIPESTATUS[0]}
[ "$status" -eq 141 ] && [ ! -s err.txt ] || say_fail "translate into a closed pipe: exit $status, '$(cat err.txt)'"
"$NMT" bleu many.txt -i many.txt --sentence-level 2>err.txt | head -n 1 >/dev/null
status=${PIPESTATUS[0]}
[ "$status" -eq 141 ] && [ ! -s err.txt ] || say_fail "bleu into a closed pipe: exit $status, '$(cat err.txt)'"
for i in $(seq 3000); do echo "line $i of a long file"; done > many.hi
"$NMT" score -m straight -s many.txt -t many.hi --threads 1 2>err.txt | head -n 1 >/dev/null
status=${PIPESTATUS[0]}
# (score's output may fit in the pipe's buffer before head exits: then it finishes, exit 0.)
{ [ "$status" -eq 141 ] || [ "$status" -eq 0 ]; } && [ ! -s err.txt ] || say_fail "score into a closed pipe: exit $status, '$(cat err.txt)'"
"$NMT" help 2>err.txt | head -c 1 >/dev/null
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] || [ "$status" -eq 141 ] || say_fail "help into a closed pipe: exit $status"

[ $fail -eq 0 ] && echo "e2e_faults: all passed"
exit $fail
