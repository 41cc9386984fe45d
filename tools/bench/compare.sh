#!/usr/bin/env bash
# compare.sh: nmt beside its PyTorch reference (tools/bench/torch_reference.py), in one run, on the
# same machine. A developer tool, not run in CI; needs Debian's python3-torch and
# SentencePiece's command-line tools (package sentencepiece), python3-yaml for configs.
#
#   tools/bench/compare.sh check MODEL_DIR SRC TGT
#       nmt's per-sentence log-probs (`nmt score`) and loss against PyTorch's in float64, 1e-4 relative.
#       MODEL_DIR holds model.safetensors and spm.model; SRC, TGT are raw text, one sentence a line.
#   tools/bench/compare.sh train CONFIG.yaml
#       training throughput: `nmt bench train` and torch_reference.py train on the same config.
#   tools/bench/compare.sh translate MODEL_DIR INPUT
#       decoding speed, beam 5 and greedy: `nmt bench translate` and torch_reference.py translate.
#   tools/bench/compare.sh all CONFIG.yaml MODEL_DIR SRC TGT
#       the three above (translate reads SRC).
#
# Environment: NMT (the binary; default build/bin/nmt), PYTHON (default /usr/bin/python3, the one with
# torch), STEPS (measured training steps, 20), WARMUP_STEPS (3), LABEL_SMOOTHING (0.1),
# TORCH_ARGS (extra arguments for torch_reference.py train, e.g. "--spm spm.model").
# It reads from nmt's JSON (--json) the same keys torch_reference.py writes: target_tokens_per_s,
# source_target_tokens_per_s, gflops_per_s, peak_rss_gib, sentences_per_s. A missing nmt command
# (not built yet) is reported and its half skipped; the exit status is then 3.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
NMT="${NMT:-$root/build/bin/nmt}"
PYTHON="${PYTHON:-/usr/bin/python3}"
STEPS="${STEPS:-20}"
WARMUP_STEPS="${WARMUP_STEPS:-3}"
LABEL_SMOOTHING="${LABEL_SMOOTHING:-0.1}"
TORCH_ARGS="${TORCH_ARGS:-}"
reference="$here/torch_reference.py"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
skipped=0

# usage STATUS: the header above, on stdout for --help (0), else on stderr (2).
usage() {
  if [ "$1" = 0 ]; then exec 3>&1; else exec 3>&2; fi
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&3
  exit "$1"
}

# field FILE KEY: one number from a JSON object (the last line of FILE that is one).
field() {
  "$PYTHON" - "$1" "$2" <<'EOF'
import json, sys
path, key = sys.argv[1], sys.argv[2]
objects = [json.loads(line) for line in open(path) if line.lstrip().startswith("{")]
if not objects or key not in objects[-1]:
    sys.exit(f"compare.sh: {path} has no JSON field {key!r}")
print(objects[-1][key])
EOF
}

# num X: X with one decimal
num() { "$PYTHON" -c "import sys; print(f'{float(sys.argv[1]):.1f}')" "$1"; }

# ratio A B [DIGITS]: A / B
ratio() { "$PYTHON" -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(f'{a / b:.{sys.argv[3]}f}' if b else 'n/a')" "$1" "$2" "${3:-2}"; }

# has_nmt COMMAND...: whether this nmt build has the (sub)command; reports when not.
has_nmt() {
  if [ -x "$NMT" ] && "$NMT" "$@" --help >/dev/null 2>&1; then return 0; fi
  echo "nmt $*: not available in $NMT (not built or not merged yet); its half is skipped" >&2
  skipped=1
  return 1
}

load() { cut -d' ' -f1-3 /proc/loadavg; }

check() {
  local dir="$1" src="$2" tgt="$3" loss_args=()
  if [ ! -f "$dir/model.safetensors" ] || [ ! -f "$dir/spm.model" ]; then
    echo "compare.sh: $dir lacks model.safetensors or spm.model" >&2
    exit 1
  fi
  echo "== check: $dir on $src -> $tgt (load $(load))"
  if has_nmt score; then
    "$NMT" score -m "$dir" -s "$src" -t "$tgt" > "$work/nmt.scores"
    # the loss needs nmt's developer hook: `nmt score --loss-json FILE --label-smoothing E` writing
    # {"tokens": N, "loss_sum": X, "nll_sum": Y}
    if "$NMT" score -m "$dir" -s "$src" -t "$tgt" --label-smoothing "$LABEL_SMOOTHING" \
         --loss-json "$work/nmt.loss.json" > /dev/null 2> "$work/nmt.loss.err"; then
      loss_args=(--nmt-loss "$work/nmt.loss.json")
    else
      echo "nmt score has no --loss-json hook yet ($(head -1 "$work/nmt.loss.err")); loss not compared" >&2
      skipped=1
    fi
    "$PYTHON" "$reference" check --model "$dir/model.safetensors" --spm "$dir/spm.model" --src "$src" --tgt "$tgt" \
      --label-smoothing "$LABEL_SMOOTHING" --nmt-scores "$work/nmt.scores" "${loss_args[@]}"
  else
    "$PYTHON" "$reference" check --model "$dir/model.safetensors" --spm "$dir/spm.model" --src "$src" --tgt "$tgt" \
      --label-smoothing "$LABEL_SMOOTHING"
  fi
}

train() {
  local config="$1"
  echo "== train: $config, $WARMUP_STEPS warm-up + $STEPS measured steps (load $(load))"
  # shellcheck disable=SC2086  # TORCH_ARGS is a list of words
  "$PYTHON" "$reference" train --config "$config" --steps "$STEPS" --warmup-steps "$WARMUP_STEPS" --json \
    $TORCH_ARGS > "$work/torch.train.json"
  printf '%-8s %12s %14s %10s %10s   (load %s)\n' "" "tgt tok/s" "src+tgt tok/s" "GFLOP/s" "RSS GiB" "$(load)"
  row torch "$work/torch.train.json"
  if has_nmt bench train; then
    "$NMT" bench train "$config" --steps "$STEPS" --json > "$work/nmt.train.json"
    row nmt "$work/nmt.train.json"
    echo "nmt/torch target tokens/s: $(ratio "$(field "$work/nmt.train.json" target_tokens_per_s)" \
      "$(field "$work/torch.train.json" target_tokens_per_s)")x (target >= 2)"
    echo "nmt/torch peak RSS: $(ratio "$(field "$work/nmt.train.json" peak_rss_gib)" \
      "$(field "$work/torch.train.json" peak_rss_gib)")x (target <= 0.5)  (load $(load))"
  fi
}

row() {
  printf '%-8s %12.0f %14.0f %10.1f %10.2f\n' "$1" "$(field "$2" target_tokens_per_s)" \
    "$(field "$2" source_target_tokens_per_s)" "$(field "$2" gflops_per_s)" "$(field "$2" peak_rss_gib)"
}

translate() {
  local dir="$1" input="$2" search goal
  for search in beam5 greedy; do
    echo "== translate: $dir, $input, $search (load $(load))"
    if [ "$search" = greedy ]; then set -- --greedy; goal=""; else set -- --beam-size 5; goal=" (target >= 3)"; fi
    "$PYTHON" "$reference" translate --model "$dir/model.safetensors" --spm "$dir/spm.model" --input "$input" \
      "$@" --json > "$work/torch.translate.json"
    echo "torch: $(num "$(field "$work/torch.translate.json" sentences_per_s)") sentences/s," \
      "$(num "$(field "$work/torch.translate.json" target_tokens_per_s)") target tokens/s"
    if has_nmt bench translate; then
      [ "$search" = greedy ] && set -- --beam-size 1
      "$NMT" bench translate -m "$dir" -i "$input" "$@" --json > "$work/nmt.translate.json"
      echo "nmt:   $(num "$(field "$work/nmt.translate.json" sentences_per_s)") sentences/s," \
        "$(num "$(field "$work/nmt.translate.json" target_tokens_per_s)") target tokens/s"
      echo "nmt/torch sentences/s: $(ratio "$(field "$work/nmt.translate.json" sentences_per_s)" \
        "$(field "$work/torch.translate.json" sentences_per_s)")x${goal}  (load $(load))"
    fi
  done
}

[ $# -ge 1 ] || usage 2
command="$1"
shift
case "$command" in
  check) [ $# -eq 3 ] || usage 2; check "$@" ;;
  train) [ $# -eq 1 ] || usage 2; train "$@" ;;
  translate) [ $# -eq 2 ] || usage 2; translate "$@" ;;
  all) [ $# -eq 4 ] || usage 2; check "$2" "$3" "$4"; train "$1"; translate "$2" "$3" ;;
  -h|--help|help) usage 0 ;;
  *) usage 2 ;;
esac
[ "$skipped" = 0 ] || exit 3
