#!/usr/bin/env bash
# nmt bench: gemm and a tiny synthetic training benchmark run, print JSON with the documented keys,
# and reject bad usage with exit 2. (Speed itself is not asserted: machines differ.)
set -u
fail=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
check() { # check NAME EXPECTED_STATUS COMMAND...
  local name=$1 want=$2; shift 2
  "$@" >"$out" 2>"$err"; local got=$?
  if [ "$got" -ne "$want" ]; then echo "FAIL $name: exit $got, want $want"; cat "$err"; fail=1; fi
}
has_keys() { # has_keys NAME KEY...
  local name=$1; shift
  for key in "$@"; do
    grep -q "\"$key\": " "$out" || { echo "FAIL $name: no \"$key\" in $(cat "$out")"; fail=1; }
  done
}
check "gemm" 0 "$NMT" bench gemm --size 64 --threads 2 --json
has_keys gemm peak_gflops shapes gflops threads
check "train" 0 "$NMT" bench train --synthetic --d-model 16 --heads 2 --ffn 32 --layers 1 --vocab 50 \
  --batch-tokens 64 --src-len 5 --tgt-len 6 --steps 2 --warmup 1 --json
has_keys train target_tokens_per_s source_target_tokens_per_s gflops_per_s peak_gflops fraction_of_peak \
  peak_rss_gib flops_per_target_token stages attention output
check "train table, pre-LN, rope" 0 "$NMT" bench train --synthetic --d-model 16 --heads 2 --ffn 32 --layers 1 \
  --vocab 50 --batch-tokens 64 --steps 1 --warmup 0 --norm pre --positions rope
grep -q "target tokens/s" "$out" || { echo "FAIL train table"; fail=1; }
check "train needs --synthetic" 2 "$NMT" bench train
check "unknown benchmark" 2 "$NMT" bench frobnicate
check "bad number" 2 "$NMT" bench gemm --size 0
check "bad config" 1 "$NMT" bench train --synthetic --d-model 10 --heads 3 --steps 1
[ $fail -eq 0 ] && echo "e2e_bench: all passed"
exit $fail
