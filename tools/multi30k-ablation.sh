#!/usr/bin/env bash
# The positions x normalisation ablation of docs/experiments/multi30k.md: tools/ablation.sh on
# configs/multi30k-small.yaml, scored on val and test_2016_flickr, the runs in runs/abl-VARIANT.
#
#   tools/multi30k-ablation.sh [--minutes M | STEPS] [VARIANT...]
#
# The variants default to sinusoidal-post learned-post rope-post sinusoidal-pre (the first is the
# baseline of the paired tests); see tools/ablation.sh for the rest. Environment: DATA (default
# ../shared/corpora/multi30k), and tools/ablation.sh's.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="${DATA:-$root/../shared/corpora/multi30k}"
args=()
if [ "${1:-}" = "--minutes" ]; then
  [ $# -ge 2 ] || { echo "multi30k-ablation: --minutes needs a number" >&2; exit 2; }
  args=(--minutes "$2")
  shift 2
elif [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
  args=("$1")
  shift
fi
[ $# -gt 0 ] || set -- sinusoidal-post learned-post rope-post sinusoidal-pre
TEST="$DATA/test_2016_flickr.en $DATA/test_2016_flickr.de" PREFIX=${PREFIX:-abl-} \
  exec "$root/tools/ablation.sh" "$root/configs/multi30k-small.yaml" "${args[@]}" "$@"
