#!/usr/bin/env bash
# Terminology at work: translates a test set without and with lexical constraints taken from its
# references, and prints BLEU and chrF of both, the share of constraints the output holds, and the
# speed of each search.
#
#   tools/bench/constraints.sh MODEL SRC REF [PER_LINE]
#
# The constraints of a line are PER_LINE (default 2; 1 or 2) words of its reference that a German
# reference marks as nouns: capitalized, not the first word, at least 4 letters, the longest first
# (German capitalizes every noun, so for a German target these are the terms a glossary would hold;
# for other targets the rule still picks proper names). A line whose reference has none is
# translated unconstrained in both runs. A constraint counts as met when the output holds it as a
# whole word, and as held twice when it holds it so more than once. Environment: NMT (build/bin/nmt), BEAM (5), ALPHA (1.0), THREADS (2). Prints a
# Markdown table on stdout.
set -euo pipefail
[ $# -ge 3 ] && [ $# -le 4 ] || { sed -n 6p "$0" >&2; exit 2; }
model=$1 src=$2 ref=$3 per_line=${4:-2}
NMT=${NMT:-build/bin/nmt}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$src" "$ref" "$per_line" "$work" <<'PY'
import re, sys
src, ref, per_line, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sources = open(src, encoding="utf-8").read().splitlines()
refs = open(ref, encoding="utf-8").read().splitlines()
if len(sources) != len(refs):
    sys.exit(f"constraints.sh: {len(sources)} source lines, {len(refs)} references")
with open(f"{work}/constrained.src", "w", encoding="utf-8") as out, open(f"{work}/terms", "w", encoding="utf-8") as terms:
    for s, r in zip(sources, refs):
        words = [w.strip(".,;:!?\"'()[]") for w in r.split()[1:]]
        nouns = sorted({w for w in words if len(w) >= 4 and w[0].isupper() and w.isalpha()}, key=lambda w: (-len(w), w))
        chosen = nouns[:per_line]
        out.write("\t".join([s] + chosen) + "\n")
        terms.write("\t".join(chosen) + "\n")
PY

run() { # NAME ARGS...: translates, prints seconds
  local name=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  "$NMT" translate --quiet -m "$model" -k "${BEAM:-5}" --length-penalty "${ALPHA:-1.0}" --threads "${THREADS:-2}" "$@" >"$work/$name.hyp"
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
plain_s=$(run plain -i "$src")
cons_s=$(run constrained --constraints -i "$work/constrained.src")

python3 - "$work" "$ref" "$NMT" "$plain_s" "$cons_s" <<'PY'
import re, subprocess, sys
work, ref, nmt, plain_s, cons_s = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
terms = [l.split("\t") if l else [] for l in open(f"{work}/terms", encoding="utf-8").read().split("\n")[:-1]]
n = len(terms)
def metric(name, m):
    out = subprocess.run([nmt, "bleu", ref, "-i", f"{work}/{name}.hyp", "-m", m, "-b"], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[0])
def met(name):
    hyps = open(f"{work}/{name}.hyp", encoding="utf-8").read().splitlines()
    total = ok = twice = 0
    for h, ts in zip(hyps, terms):
        for t in ts:
            found = len(re.findall(r"(?<!\w)" + re.escape(t) + r"(?!\w)", h))
            total += 1
            ok += found > 0
            twice += found > 1
    return ok, total, twice
print("| search | BLEU | chrF2 | constraints held | held twice | sentences/s |")
print("| --- | --- | --- | --- | --- | --- |")
for name, secs in (("plain", plain_s), ("constrained", cons_s)):
    ok, total, twice = met(name)
    print(f"| {name} | {metric(name, 'bleu'):.1f} | {metric(name, 'chrf'):.1f} | {ok}/{total} ({100 * ok / max(total, 1):.1f}%) "
          f"| {twice} | {n / secs:.1f} |")
PY
