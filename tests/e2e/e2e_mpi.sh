#!/usr/bin/env bash
# nmt train under mpirun: 2, 3 and 4 ranks (dropout on, update_freq 2, 3 pieces a batch; the gradient
# all-reduced in buckets overlapping the backward) write the same parameters and losses as one process,
# bit for bit, also with the optimizer sharded over the ranks, with subword sampling and with bf16
# products (where the CPU trains in bf16); a run resumed with another rank count
# (sharded or not) continues bit for bit; a killed rank ends the whole run within seconds with a
# message naming it, and the same command then resumes (or starts again, when rank 0 died before the
# first checkpoint); a rank whose data differs, and more ranks than a step has pieces, are refused.
# Skipped (exit 77) where mpirun is missing or nmt was built without MPI.
set -u
command -v mpirun >/dev/null || { echo "SKIP: mpirun not found (apt-get install openmpi-bin libopenmpi-dev)"; exit 77; }
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi() { local n=$1; shift; timeout 120 mpirun --oversubscribe --bind-to none -np "$n" "$@"; }

awk -v n=400 -v seed=1 -v src=train.en -v tgt=train.de -f "$NMT_SOURCE_DIR/tests/support/colours.awk"
cat > toy.yaml <<'YAML'
model: {d_model: 32, heads: 2, ffn: 64, encoder_layers: 1, decoder_layers: 1, dropout: 0.1}
vocab: {size: 40}
data:
  train: {src: train.en, tgt: train.de}
train:
  batch_tokens: 256
  update_freq: 2
  batch_pieces: 3
  optimizer: {lr: 3.0e-3, warmup: 30}
  max_steps: 20
  valid_every: 10
  save_every: 10
output: out
YAML

# The tensors of a safetensors file: what follows its 8-byte header length and JSON header.
tensors() { local len; len=$(od -An -t u8 -N8 "$1" | tr -d ' '); tail -c +$((9 + len)) "$1"; }
same_tensors() { # NAME FILE REFERENCE
  if [ ! -s "$2" ]; then say_fail "$1: $2 missing"
  elif ! cmp -s <(tensors "$2") <(tensors "$3"); then say_fail "$1: $2 differs from $3"; fi
}
losses() { grep -o '"step":[0-9]*,"epoch":[0-9]*,"loss":[^,]*' "$1" | awk -F'[:,]' -v max="$2" '$2 <= max'; }

# The reference: one process, 60 steps (its checkpoints at 20..60 stay).
"$NMT" train toy.yaml --set output=one --set train.max_steps=60 --threads 1 --quiet 2>err.txt ||
  { echo "FAIL one process"; cat err.txt; exit 1; }

mpi 2 "$NMT" train toy.yaml --set output=two --threads 1 --quiet 2>err.txt
rc=$?
if grep -q "built without MPI" err.txt; then echo "SKIP: nmt was built without MPI"; exit 77; fi
[ "$rc" -eq 0 ] || { echo "FAIL 2 ranks: exit $rc"; cat err.txt; fail=1; }
mpi 3 "$NMT" train toy.yaml --set output=three --threads 1 2>err.txt || { echo "FAIL 3 ranks"; cat err.txt; fail=1; }
grep -q "gradient all-reduce: [1-9][0-9]* buckets, each started as the backward finishes it" err.txt ||
  { echo "FAIL 3 ranks: no overlapped all-reduce"; cat err.txt; fail=1; }
mpi 4 "$NMT" train toy.yaml --set output=four --threads 1 --quiet 2>err.txt || { echo "FAIL 4 ranks"; cat err.txt; fail=1; }
for dir in two three four; do
  same_tensors "$dir ranks" $dir/checkpoints/step-00000020.safetensors one/checkpoints/step-00000020.safetensors
  [ "$(losses $dir/train.log.jsonl 20)" = "$(losses one/train.log.jsonl 20)" ] && [ -n "$(losses one/train.log.jsonl 20)" ] ||
    say_fail "$dir ranks: train.log.jsonl losses differ from one process"
done
[ -e three/checkpoints/step-00000020.safetensors ] && cmp -s <(tensors three/checkpoints/step-00000010.safetensors) \
  <(tensors three/checkpoints/step-00000020.safetensors) && say_fail "steps 10 and 20 are equal: nothing trained"

# bf16 products (train.precision bf16), where this CPU trains in them: 2 ranks give one process's
# bits too, and not fp32's; elsewhere every rank refuses.
if "$NMT" train toy.yaml --set output=one16 --set train.precision=bf16 --threads 1 --quiet 2>err.txt; then
  # (each rank measures its CPU again: beside the parallel suite a measured refusal is a right answer)
  if mpi 2 "$NMT" train toy.yaml --set output=two16 --set train.precision=bf16 --threads 1 --quiet 2>err.txt; then
    same_tensors "2 ranks in bf16" two16/checkpoints/step-00000020.safetensors one16/checkpoints/step-00000020.safetensors
  elif grep -q "train.precision: bf16 is refused on" err.txt; then
    echo "e2e_mpi: 2 ranks measured bf16 as not paying now: $(grep -m1 'refused' err.txt)"
  else
    echo "FAIL 2 ranks in bf16"; cat err.txt; fail=1
  fi
  cmp -s <(tensors one16/checkpoints/step-00000020.safetensors) <(tensors one/checkpoints/step-00000020.safetensors) &&
    say_fail "bf16 trained fp32's model"
else
  grep -q "train.precision: bf16 is refused on this CPU" err.txt || { echo "FAIL bf16: $(cat err.txt)"; fail=1; }
  mpi 2 "$NMT" train toy.yaml --set output=two16 --set train.precision=bf16 --threads 1 --quiet 2>err.txt &&
    say_fail "2 ranks trained in bf16 where one process refused"
fi

# Subword sampling (vocab.sampling_alpha): every rank draws the epoch's segmentations itself, and 3
# ranks still give one process's bits.
"$NMT" train toy.yaml --set output=one-sampled --set vocab.sampling_alpha=0.1 --threads 1 --quiet 2>err.txt ||
  { echo "FAIL sampling, one process"; cat err.txt; fail=1; }
mpi 3 "$NMT" train toy.yaml --set output=three-sampled --set vocab.sampling_alpha=0.1 --threads 1 --quiet 2>err.txt ||
  { echo "FAIL sampling, 3 ranks"; cat err.txt; fail=1; }
same_tensors "3 ranks with subword sampling" three-sampled/checkpoints/step-00000020.safetensors \
  one-sampled/checkpoints/step-00000020.safetensors
cmp -s <(tensors one-sampled/checkpoints/step-00000020.safetensors) <(tensors one/checkpoints/step-00000020.safetensors) &&
  say_fail "subword sampling trained the unsampled model"

# The sharded optimizer (ZeRO stage 1): 3 ranks each keep a third of the Adam moments; the checkpoint
# holds them all, so a resume on 2 unsharded ranks (to step 30), then on 2 sharded ones (to 40), stays
# bit for bit.
mpi 3 "$NMT" train toy.yaml --set output=sharded --set train.shard_optimizer=true --threads 1 --quiet 2>err.txt ||
  { echo "FAIL sharded, 3 ranks"; cat err.txt; fail=1; }
same_tensors "sharded on 3 ranks" sharded/checkpoints/step-00000020.safetensors one/checkpoints/step-00000020.safetensors
mpi 2 "$NMT" train toy.yaml --set output=sharded --set train.max_steps=30 --threads 1 --quiet 2>err.txt ||
  { echo "FAIL unsharded resume"; cat err.txt; fail=1; }
same_tensors "sharded then unsharded" sharded/checkpoints/step-00000030.safetensors one/checkpoints/step-00000030.safetensors
mpi 2 "$NMT" train toy.yaml --set output=sharded --set train.max_steps=40 --set train.shard_optimizer=true \
  --threads 1 --quiet 2>err.txt || { echo "FAIL sharded resume"; cat err.txt; fail=1; }
same_tensors "sharded resume on 2 ranks" sharded/checkpoints/step-00000040.safetensors one/checkpoints/step-00000040.safetensors

# Resume with another N: 10 steps on 3 ranks, then 2 ranks to step 20.
mpi 3 "$NMT" train toy.yaml --set output=resumed --set train.max_steps=10 --threads 1 --quiet 2>err.txt ||
  { echo "FAIL resume, first part"; cat err.txt; fail=1; }
mpi 2 "$NMT" train toy.yaml --set output=resumed --threads 1 2>err.txt || { echo "FAIL resume"; cat err.txt; fail=1; }
grep -q "resuming from .*step-00000010" err.txt || { echo "FAIL resume did not start at step 10"; cat err.txt; fail=1; }
grep -q "ranks 2 x 1 threads comm [0-9.]* ms/step" err.txt || say_fail "progress lacks ranks and comm wait"
grep -q "gradient all-reduce: [1-9][0-9]* buckets" err.txt || say_fail "2 ranks: no overlapped all-reduce"
same_tensors "resumed with 2 ranks" resumed/checkpoints/step-00000020.safetensors one/checkpoints/step-00000020.safetensors

# A killed rank: every rank ends within seconds, mpirun names it; the same command then resumes.
cat > record_pid.sh <<'SH'
#!/bin/sh
echo $$ > "pid.$OMPI_COMM_WORLD_RANK"; exec "$@"
SH
chmod +x record_pid.sh
mpi 2 ./record_pid.sh "$NMT" train toy.yaml --set output=killed --set train.max_steps=60 --threads 1 --quiet \
  >/dev/null 2>killed.txt &
job=$!
for _ in $(seq 600); do [ -e killed/checkpoints/step-00000010.safetensors ] && break; sleep 0.05; done
if ! kill -0 $job 2>/dev/null || [ ! -s pid.1 ]; then
  say_fail "killed rank: the run ended before the kill"
else
  kill -9 "$(cat pid.1)"
  start=$(date +%s)
  wait $job
  rc=$?
  took=$(( $(date +%s) - start ))
  [ "$rc" -ne 0 ] || say_fail "killed rank: mpirun exited 0"
  [ "$took" -le 15 ] || say_fail "killed rank: the others took ${took}s to end"
  grep -q "rank 1 .*on node .*signal 9" killed.txt || { echo "FAIL killed rank: no message naming rank 1"; cat killed.txt; fail=1; }
  ls killed/checkpoints | grep -q tmp && say_fail "a half-written checkpoint is left"
  mpi 3 "$NMT" train toy.yaml --set output=killed --set train.max_steps=60 --threads 1 --quiet 2>err.txt ||
    { echo "FAIL killed rank: the rerun failed"; cat err.txt; fail=1; }
  same_tensors "rerun after the kill" killed/checkpoints/step-00000060.safetensors one/checkpoints/step-00000060.safetensors
fi

# Rank 0 dies before the first checkpoint (its fsync fails; or SIGKILL once the log has begun): only
# a log is left, and the same command starts again and ends as one process does.
cat > rank0_fault.sh <<'SH'
#!/bin/sh
[ "$OMPI_COMM_WORLD_RANK" = 0 ] && export NMT_FAULT=fsync:6; exec "$@"
SH
chmod +x rank0_fault.sh
mpi 2 ./rank0_fault.sh "$NMT" train toy.yaml --set output=early --threads 1 --quiet 2>err.txt &&
  say_fail "rank 0's failed fsync: the run did not fail"
[ -e early/checkpoints/step-00000010.safetensors ] && say_fail "rank 0's fsync fault came after the first checkpoint"
mpi 2 "$NMT" train toy.yaml --set output=early --threads 1 --quiet 2>err.txt ||
  { echo "FAIL rerun after rank 0 failed before its first checkpoint"; cat err.txt; fail=1; }
same_tensors "rerun after rank 0 failed early" early/checkpoints/step-00000020.safetensors one/checkpoints/step-00000020.safetensors
rm -f pid.0 pid.1
mpi 2 ./record_pid.sh "$NMT" train toy.yaml --set output=early_kill --threads 1 --quiet >/dev/null 2>&1 &
job=$!
for _ in $(seq 600); do [ -s early_kill/train.log.jsonl ] && [ -s pid.0 ] && break; sleep 0.01; done
kill -9 "$(cat pid.0)" 2>/dev/null
wait $job
mpi 2 "$NMT" train toy.yaml --set output=early_kill --threads 1 --quiet 2>err.txt ||
  { echo "FAIL rerun after rank 0 was killed early"; cat err.txt; fail=1; }
same_tensors "rerun after rank 0 was killed early" early_kill/checkpoints/step-00000020.safetensors \
  one/checkpoints/step-00000020.safetensors

# A rank whose corpus differs (same config, another directory) is refused, naming it and its host.
mkdir alt && cp toy.yaml train.en alt/ && sed '5s/.*/rot/' train.de > alt/train.de
cat > rank1_elsewhere.sh <<'SH'
#!/bin/sh
[ "$OMPI_COMM_WORLD_RANK" = 1 ] && cd alt; exec "$@"
SH
chmod +x rank1_elsewhere.sh
mpi 2 ./rank1_elsewhere.sh "$NMT" train toy.yaml --set output="$tmp/mismatch" --threads 1 --quiet 2>err.txt
rc=$?
[ "$rc" -ne 0 ] || say_fail "mismatched data: exit 0"
grep -q "training corpus differs between ranks: rank 1 on host $(hostname)" err.txt ||
  { echo "FAIL mismatched data: message"; cat err.txt; fail=1; }

# More ranks than pieces.
mpi 2 "$NMT" train toy.yaml --set output=few --set train.batch_pieces=1 --set train.update_freq=1 --quiet 2>err.txt &&
  say_fail "2 ranks on 1 piece a step: exit 0"
grep -q "2 ranks but a step has only 1 pieces" err.txt || { echo "FAIL too many ranks: message"; cat err.txt; fail=1; }

[ "$fail" -eq 0 ] && echo "e2e_mpi: all passed"
exit $fail
