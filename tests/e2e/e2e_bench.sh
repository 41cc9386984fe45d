#!/usr/bin/env bash
# nmt bench: gemm, training (synthetic and on a config's real batches) and translation benchmarks
# run, print JSON with the documented keys, leave the config's output directory alone, and reject bad
# usage with exit 2. (Speed itself is not asserted: machines differ.)
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
has_keys() { # has_keys NAME KEY...
  local name=$1; shift
  for key in "$@"; do
    grep -q "\"$key\": " "$out" || { echo "FAIL $name: no \"$key\" in $(cat "$out")"; fail=1; }
  done
}
check "gemm" 0 "$NMT" bench gemm --size 64 --threads 2 --json
has_keys gemm peak_gflops openblas_peak_gflops gemm shapes gflops threads
check "train" 0 "$NMT" bench train --synthetic --d-model 16 --heads 2 --ffn 32 --layers 1 --vocab 50 \
  --batch-tokens 64 --src-len 5 --tgt-len 6 --steps 2 --warmup 1 --json
has_keys train target_tokens_per_s source_target_tokens_per_s gflops_per_s peak_gflops fraction_of_peak \
  peak_rss_gib flops_per_target_token stages attention output
check "train table, pre-LN, rope" 0 "$NMT" bench train --synthetic --d-model 16 --heads 2 --ffn 32 --layers 1 \
  --vocab 50 --batch-tokens 64 --steps 1 --warmup 0 --norm pre --positions rope
grep -q "target tokens/s" "$out" || say_fail "train table"
# A config on a toy corpus: real batches, whole steps with Adam.
awk -v dir="$tmp" 'BEGIN { srand(3); for (i = 0; i < 300; i++) { s = ""; t = "";
  for (j = 0; j < 2 + i % 5; j++) { w = int(rand() * 12); s = s " w" w; t = t " v" w }
  print substr(s, 2) > (dir "/train.en"); print substr(t, 2) > (dir "/train.de") } }'
cat >"$tmp/config.yaml" <<'EOF'
model: {d_model: 16, heads: 2, ffn: 32, encoder_layers: 1, decoder_layers: 1, dropout: 0.0}
vocab: {size: 20}
data: {train: {src: train.en, tgt: train.de}}
train: {batch_tokens: 256, max_steps: 30, valid_every: 1000, save_every: 1000, optimizer: {lr: 0.01, warmup: 5}}
output: model
EOF
check "train CONFIG" 0 "$NMT" bench train "$tmp/config.yaml" --steps 2 --warmup 1 --threads 1 --json
has_keys "train CONFIG" target_tokens_per_s source_target_tokens_per_s gflops_per_s fraction_of_peak peak_rss_gib \
  optimizer first_loss src tgt precision bf16_peak_gops fraction_of_bf16_peak
grep -q '"precision": "fp32"' "$out" || say_fail "train CONFIG: not fp32 products"
grep -q '"budget_steps": 0,' "$out" || say_fail "train CONFIG: budget steps without train.max_minutes"
# Weighted corpora: the data the steps were drawn from, each corpus with its weight.
check "train CONFIG, weighted corpora" 0 "$NMT" bench train "$tmp/config.yaml" --steps 1 --warmup 0 --threads 1 --json \
  --set 'data.train=[{src: train.en, tgt: train.de}, {src: train.de, tgt: train.en, weight: 2}]'
grep -q '"data": \[{"src": "[^"]*/train.en", "tgt": "[^"]*/train.de", "weight": 1}, {"src": "[^"]*/train.de", "tgt": "[^"]*/train.en", "weight": 2}\]' "$out" ||
  say_fail "train CONFIG, weighted corpora: $(head -c 300 "$out")"
# With a time budget: the steps it allows at the measured pace (budget_steps x step_seconds = 60 minutes).
check "train CONFIG budget" 0 "$NMT" bench train "$tmp/config.yaml" --set train.max_minutes=60 --steps 2 --warmup 1 \
  --threads 1 --json
awk '{ match($0, /"step_seconds": [0-9.]+/); s = substr($0, RSTART + 16, RLENGTH - 16)
       match($0, /"budget_steps": [0-9]+/); b = substr($0, RSTART + 16, RLENGTH - 16)
       exit !(b > 0 && (b + 1) * s > 3600 * 0.99 && b * s < 3600 * 1.01) }' "$out" ||
  say_fail "train CONFIG budget: $(cat "$out")"
# bf16 products where this CPU trains in them; elsewhere the refusal, exit 1, naming the key.
if "$NMT" bench train "$tmp/config.yaml" --set train.precision=bf16 --steps 1 --warmup 0 --threads 1 --json >"$out" 2>"$err"; then
  grep -q '"precision": "bf16"' "$out" || say_fail "train CONFIG bf16: $(cat "$out")"
  grep -q '"bf16_peak_gops": [0-9]' "$out" || say_fail "train CONFIG bf16: no bf16 product peak: $(cat "$out")"
else
  grep -q "train.precision: bf16 is refused on this CPU" "$err" || say_fail "train CONFIG bf16: $(cat "$err")"
fi
[ ! -e "$tmp/model" ] || say_fail "train CONFIG wrote into the output directory"
check "train CONFIG --set" 2 "$NMT" bench train "$tmp/config.yaml" --set train.batch_tokenz=3 --steps 1
grep -q "batch_tokenz" "$err" || { echo "FAIL --set error: $(cat "$err")"; fail=1; }

# Translation: a model trained for a moment, greedy and beam.
"$NMT" train "$tmp/config.yaml" --threads 1 --quiet >"$out" 2>&1 || { echo "FAIL nmt train"; cat "$out"; exit 1; }
printf 'w1 w2 w3\n\nw4 w5\n' >"$tmp/in.txt"
check "translate greedy" 0 "$NMT" bench translate -m "$tmp/model" -i "$tmp/in.txt" --beam-size 1 --threads 1 --json
has_keys "translate greedy" sentences_per_s target_tokens_per_s peak_rss_gib sentences products
grep -q '"search": "greedy", "beam_size": 1,.*"sentences": 3,' "$out" || { echo "FAIL greedy: $(cat "$out")"; fail=1; }
check "translate beam" 0 "$NMT" bench translate -m "$tmp/model" -i "$tmp/in.txt" --beam-size 3 --threads 1
grep -q "sentences/s" "$out" || say_fail "translate table"
check "translate without -m" 2 "$NMT" bench translate -i "$tmp/in.txt"
check "train --precision" 2 "$NMT" bench train --synthetic --precision bf16
grep -qF "nmt bench: --precision is decoding's and applies to \`bench translate\` only; training takes train.precision" "$err" ||
  say_fail "train --precision: $(cat "$err")"
check "translate bad precision" 2 "$NMT" bench translate -m "$tmp/model" -i "$tmp/in.txt" --precision fp16
grep -q "expected fp32, bf16, int8 or auto" "$err" || { echo "FAIL precision message: $(cat "$err")"; fail=1; }
check "translate missing input" 1 "$NMT" bench translate -m "$tmp/model" -i "$tmp/none.txt"
grep -q "none.txt" "$err" || { echo "FAIL missing input message: $(cat "$err")"; fail=1; }

check "train needs CONFIG or --synthetic" 2 "$NMT" bench train
check "train CONFIG and --synthetic" 2 "$NMT" bench train "$tmp/config.yaml" --synthetic

check "unknown benchmark" 2 "$NMT" bench frobnicate
check "bad number" 2 "$NMT" bench gemm --size 0
check "bad config" 1 "$NMT" bench train --synthetic --d-model 10 --heads 3 --steps 1
[ $fail -eq 0 ] && echo "e2e_bench: all passed"
exit $fail
