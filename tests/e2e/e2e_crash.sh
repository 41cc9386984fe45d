#!/usr/bin/env bash
# Crash consistency of `nmt train`: killed with SIGKILL at random moments (and on purpose while a
# checkpoint is being written), then resumed, again and again, a run must end with exactly the
# parameters, optimizer state and loss log of a run that was never interrupted, and at no moment may
# the output directory hold a truncated or half-written file. (The run's learning rate follows a cosine
# that ends before the last step, so every resumed step must take its own step's rate.)
#
# After every kill: each *.safetensors present (checkpoints, model.safetensors) reads back whole
# (`nmt average` of it alone loads every tensor), every line of train.log.jsonl is complete, and
# temporaries ("NAME.tmp.PID.RANDOM", what a kill mid-write leaves) are the only other files; the next run
# removes them and never takes one for a checkpoint. At the end: the last checkpoint equals the
# uninterrupted run's byte for byte in its data and in its header (elapsed time aside),
# model.safetensors is identical, and so is the log (timings aside).
#
# Kill moments come from NMT_CRASH_SEED (default: the process id, printed, so a failure can be
# replayed); with save_every 1 a checkpoint is written every step, so random kills often land in a
# write, and the targeted kills wait until a temporary checkpoint file exists, then kill at once.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
seed=${NMT_CRASH_SEED:-$$}
RANDOM=$seed
echo "e2e_crash: seed $seed (rerun with NMT_CRASH_SEED=$seed)"

"$NMT_BIN_DIR/nmt-gen-en-hi" --output data --pairs 300 --valid 10 --test 1 >/dev/null 2>&1 ||
  { echo "FAIL cannot generate the corpus"; exit 1; }
# A vocabulary made beforehand, so that a run starts in milliseconds and random kills fall among the
# training steps rather than mostly into vocabulary training.
"$NMT" vocab --input data/train.en,data/train.hi --size 160 --output spm --quiet || { echo "FAIL nmt vocab"; exit 1; }
steps=150
cat > crash.yaml <<YAML
model: {d_model: 16, heads: 2, ffn: 32, encoder_layers: 1, decoder_layers: 1}
vocab: {model: spm.model}
data:
  train: {src: data/train.en, tgt: data/train.hi}
train:
  batch_tokens: 200
  optimizer: {lr: 3.0e-3, warmup: 10, schedule: cosine, decay_steps: 120, min_lr: 1.0e-4}
  max_steps: $steps
  valid_every: 50
  save_every: 1
  keep_last: 3
output: out
YAML
# One run at one thread (results are bit-exact for a given thread count).
run=("$NMT" train crash.yaml --threads 1 --quiet --set)
final=$(printf 'checkpoints/step-%08d.safetensors' $steps)

# The header of a safetensors file with the volatile elapsed time blanked, and its data section.
st_header() { local n; n=$(od -An -tu8 -N8 "$1" | tr -d ' '); head -c $((8 + n)) "$1" | tail -c "$n" |
  sed 's/"elapsed_s":"[^"]*"/"elapsed_s":""/; s/ *$//'; }
st_data() { local n; n=$(od -An -tu8 -N8 "$1" | tr -d ' '); tail -c +$((9 + n)) "$1"; }
# (and without the start, resume and stop events, which depend on the kills, and the wall-clock times)
log_sans_timing() {
  grep -v '^{"event":"\(start\|resume\|stop\)"' "$1" | sed 's/"tokens_per_s":[^,}]*//; s/"elapsed_s":[^,}]*//; s/"time":"[^"]*"//'
}

# check_dir DIR WHEN: nothing in DIR is half-written.
check_dir() {
  local dir=$1 when=$2 f
  for f in "$dir"/*.safetensors "$dir"/checkpoints/*.safetensors; do
    [ -e "$f" ] || continue
    if ! "$NMT" average -o "$tmp/probe.safetensors" "$f" >/dev/null 2>"$tmp/probe.err"; then
      echo "FAIL $when: $f does not read back: $(cat "$tmp/probe.err")"; fail=1
    fi
  done
  if [ -e "$dir/train.log.jsonl" ] && grep -v -q '^{"event":"[a-z]*",.*}$' "$dir/train.log.jsonl"; then
    echo "FAIL $when: an incomplete line in train.log.jsonl"; grep -v '^{"event":"[a-z]*",.*}$' "$dir/train.log.jsonl"; fail=1
  fi
  for f in "$dir"/* "$dir"/checkpoints/*; do
    case "${f##*/}" in
      '*' | checkpoints | config.yaml | spm.model | spm.vocab | corpus-*.bin | model.safetensors | shortlist.bin | train.log.jsonl) ;;
      step-*.safetensors | *.tmp.[0-9]*) ;;
      *) say_fail "$when: unexpected file $f" ;;
    esac
  done
}

# The reference: one uninterrupted run.
start=$(date +%s%3N)
"${run[@]}" output=ref || { echo "FAIL the uninterrupted run failed"; exit 1; }
ref_ms=$(( $(date +%s%3N) - start ))
[ -s "ref/$final" ] || { echo "FAIL the uninterrupted run left no $final"; exit 1; }
check_dir ref "uninterrupted run"

# kill_run WHEN: starts a resumed run in the background and kills it with SIGKILL at WHEN: a delay
# in seconds, or "write" (as soon as a temporary file appears in checkpoints/). Sets $finished when
# the run ended before it could be killed, $mid_write when a temporary was left behind.
kills=0 write_kills=0 finished=0
kill_run() {
  "${run[@]}" output=out 2>"$tmp/run.err" & # nmt itself, not a subshell: the kill must reach it
  local pid=$! f # the temporaries of this run hold .tmp.$pid.; older ones are a killed run's
  if [ "$1" = write ]; then
    local deadline=$((SECONDS + 10))
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do
      for f in out/checkpoints/*.tmp."$pid".*; do [ -e "$f" ] && break 2; done
    done
  else
    sleep "$1"
  fi
  if kill -KILL "$pid" 2>/dev/null; then
    wait "$pid" 2>/dev/null
    kills=$((kills + 1))
    for f in out/*.tmp.* out/checkpoints/*.tmp.*; do [ -e "$f" ] && { write_kills=$((write_kills + 1)); break; }; done
    check_dir out "after kill $kills ($1)"
  else
    wait "$pid"; local status=$?
    [ "$status" -eq 0 ] || { echo "FAIL a resumed run failed (exit $status): $(cat "$tmp/run.err")"; fail=1; }
    finished=1
  fi
}

# last_step: the step of the newest whole checkpoint in out/ (0 before the first).
last_step() {
  local f n=0
  for f in out/checkpoints/step-*.safetensors; do [ -e "$f" ] && n=${f##*step-}; done
  n=${n%.safetensors}; echo $((10#$n))
}

# At least 10 kills at random moments, uniform over a window that starts at a fortieth of the
# uninterrupted run's time (which includes building the shortlist at its end) and then follows the
# steps each killed run got done: shrunk by a third after a run that did more than 3, widened by half
# after one that did none. So a run gets a few steps done on average and ten of them cover about a
# third of the training, whatever the machine's load did to the reference run's time or does to these
# (a run's start-up time varies so much that a window fixed by the reference's time once let six runs
# do all 60 steps of a shorter training). Then 5 kills aimed at checkpoint writes, as long as training
# is not over.
window_ms=$((ref_ms / 40 + 1))
while [ $finished -eq 0 ] && [ $kills -lt 10 ]; do
  ms=$((RANDOM % window_ms)) before=$(last_step)
  kill_run "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
  done_steps=$(( $(last_step) - before ))
  if [ "$done_steps" -gt 3 ]; then window_ms=$((window_ms * 2 / 3 + 1))
  elif [ "$done_steps" -eq 0 ] && [ "$window_ms" -lt "$ref_ms" ]; then window_ms=$((window_ms * 3 / 2 + 1)); fi
done
for _ in 1 2 3 4 5; do [ $finished -eq 0 ] && kill_run write; done
[ $finished -eq 0 ] && { "${run[@]}" output=out || say_fail "the last resumed run failed"; }
echo "e2e_crash: $kills kills ($write_kills during a write), then resumed to step $steps"
[ $kills -ge 10 ] || say_fail "only $kills kills before training ended"
[ $write_kills -ge 1 ] || say_fail "no kill landed during a write"
check_dir out "the resumed run's end"
ls out out/checkpoints | grep -q '\.tmp\.' && say_fail "temporaries left after the last run"

# Bit-identical to the uninterrupted run.
if [ -s "out/$final" ]; then
  cmp -s <(st_data "ref/$final") <(st_data "out/$final") || say_fail "$final: other parameters or Adam moments"
  [ "$(st_header "ref/$final")" = "$(st_header "out/$final")" ] ||
    { echo "FAIL $final: another header"; diff <(st_header "ref/$final" | tr , '\n') <(st_header "out/$final" | tr , '\n'); fail=1; }
else
  say_fail "the resumed run left no $final"
fi
cmp -s ref/model.safetensors out/model.safetensors || say_fail "model.safetensors differs"
diff <(log_sans_timing ref/train.log.jsonl) <(log_sans_timing out/train.log.jsonl) >/dev/null ||
  { echo "FAIL train.log.jsonl differs:"; diff <(log_sans_timing ref/train.log.jsonl) <(log_sans_timing out/train.log.jsonl); fail=1; }
[ -s ref/train.log.jsonl ] || say_fail "the log is empty: nothing compared"
echo "e2e_crash: the uninterrupted run took $ref_ms ms, the whole test $(( $(date +%s%3N) - start )) ms"

[ $fail -eq 0 ] && echo "e2e_crash: all passed"
exit $fail
