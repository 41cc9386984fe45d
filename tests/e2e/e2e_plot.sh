#!/usr/bin/env bash
# `nmt plot` end to end: curves of two model directories written here (one of them with an
# unfinished last line, as while training), the options, and the errors and exit codes.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
expect() { # expect NAME FILE PATTERN COUNT: PATTERN occurs COUNT times in FILE
  local got; got=$(grep -o -- "$3" "$2" | wc -l)
  [ "$got" -eq "$4" ] || say_fail "$1: '$3' occurs $got times in $2, want $4"
}

mkdir -p "$tmp/runs/base" "$tmp/runs/prenorm"
for step in 100 200 300 400 500 600; do
  printf '{"event":"train","step":%d,"epoch":1,"loss":%s,"lr":0.0005,"tokens_per_s":5000,"elapsed_s":%d}\n' \
    "$step" "$(awk -v s="$step" 'BEGIN { printf "%.3f", 2 + 6 * exp(-s / 200) }')" $((step * 2))
  if [ $((step % 200)) -eq 0 ]; then
    printf '{"event":"valid","step":%d,"loss":%s,"ppl":20.1,"bleu":%d.5,"elapsed_s":%d}\n' \
      "$step" "$(awk -v s="$step" 'BEGIN { printf "%.3f", 3 + 4 * exp(-s / 300) }')" $((step / 20)) $((step * 2 + 5))
  fi
done >"$tmp/runs/base/train.log.jsonl"
printf '{"event":"train","step":100,"loss":7.5,"elapsed_s":150}\n{"event":"train","step":200,"loss":5.5,"elapsed_s":300}\n{"event":"valid","step":200,"loss":5,"bleu":4}\n{"event":"train","st' \
  >"$tmp/runs/prenorm/train.log.jsonl"

check "two runs" 0 "$NMT" plot -o "$tmp/curves.svg" --title "base vs pre-LN" "$tmp/runs/base" "$tmp/runs/prenorm/"
head -c 5 "$tmp/curves.svg" | grep -q '<?xml' || say_fail "not an SVG document"
tail -n 1 "$tmp/curves.svg" | grep -q '^</svg>$' || say_fail "unterminated SVG"
expect "curves" "$tmp/curves.svg" "<polyline" 6 # 3 panels x 2 runs
expect "legend base" "$tmp/curves.svg" ">base</text>" 1
expect "legend prenorm" "$tmp/curves.svg" ">prenorm</text>" 1
expect "title" "$tmp/curves.svg" ">base vs pre-LN</text>" 1
expect "x axis" "$tmp/curves.svg" ">training time (minutes)</text>" 1
grep -q "runs/base/train.log.jsonl: 6 train and 3 validation records" "$tmp/err" || { echo "FAIL summary"; cat "$tmp/err"; fail=1; }
grep -q "line 4 is unfinished" "$tmp/err" || { echo "FAIL unfinished line not reported"; cat "$tmp/err"; fail=1; }
grep -q "wrote $tmp/curves.svg" "$tmp/err" || say_fail "wrote message"

check "steps, chosen metrics, stdout, quiet" 0 "$NMT" plot -q -x steps -m val_bleu,lr -o - "$tmp/runs/base/train.log.jsonl"
[ -s "$tmp/err" ] && { echo "FAIL --quiet printed"; cat "$tmp/err"; fail=1; }
expect "steps curves" "$tmp/out" "<polyline" 2
expect "steps axis" "$tmp/out" ">step</text>" 1
expect "BLEU panel" "$tmp/out" ">validation BLEU</text>" 1
expect "lr panel" "$tmp/out" ">learning rate</text>" 1
expect "no loss panel" "$tmp/out" ">train loss</text>" 0
expect "legend from the log's directory" "$tmp/out" ">base</text>" 1

check "--help" 0 "$NMT" plot --help
grep -q "Usage: nmt plot" "$tmp/out" || say_fail "--help"
check "no output" 2 "$NMT" plot "$tmp/runs/base"
check "no runs" 2 "$NMT" plot -o "$tmp/x.svg"
check "-o x.png" 2 "$NMT" plot -o "$tmp/x.png" "$tmp/runs/base"
grep -q "nmt plot writes SVG; name the file FILE.svg" "$err" || say_fail "-o x.png: $(cat "$err")"
[ -e "$tmp/x.png" ] && say_fail "-o x.png wrote a file"
check "bad axis" 2 "$NMT" plot -o "$tmp/x.svg" --x epochs "$tmp/runs/base"
grep -q "minutes or steps" "$tmp/err" || { echo "FAIL axis message"; cat "$tmp/err"; fail=1; }
check "bad metric" 2 "$NMT" plot -o "$tmp/x.svg" -m val_bleu,bleu "$tmp/runs/base"
grep -q "unknown metric 'bleu'" "$tmp/err" || { echo "FAIL metric message"; cat "$tmp/err"; fail=1; }
check "unknown flag" 2 "$NMT" plot -o "$tmp/x.svg" --colour "$tmp/runs/base"

mkdir -p "$tmp/runs/broken"
printf '{"event":"train","step":100,"loss":7.5}\n{"event":"train","step":200,"loss":}\n{"event":"train","step":300,"loss":3}\n' \
  >"$tmp/runs/broken/train.log.jsonl"
check "malformed line" 1 "$NMT" plot -o "$tmp/x.svg" "$tmp/runs/base" "$tmp/runs/broken"
grep -q "runs/broken/train.log.jsonl:2:36: bad log record: expected a number" "$tmp/err" || { echo "FAIL malformed message"; cat "$tmp/err"; fail=1; }
check "missing log" 1 "$NMT" plot -o "$tmp/x.svg" "$tmp/runs"
grep -q "runs/train.log.jsonl: cannot open" "$tmp/err" || { echo "FAIL missing message"; cat "$tmp/err"; fail=1; }
printf '{"event":"train","step":100,"loss":7.5}\n' >"$tmp/untimed.jsonl"
check "minutes without times" 1 "$NMT" plot -o "$tmp/x.svg" "$tmp/untimed.jsonl"
grep -q "has no elapsed_s" "$tmp/err" || { echo "FAIL untimed message"; cat "$tmp/err"; fail=1; }
[ -e "$tmp/x.svg" ] && say_fail "a failed plot left an output"
check "unwritable output" 1 "$NMT" plot -o "$tmp/no/such/dir/x.svg" "$tmp/runs/base"

[ $fail -eq 0 ] && echo "e2e_plot: all passed"
exit $fail
