#!/usr/bin/env bash
# What a confidence means: translates a source file, orders its sentences by the confidence nmt gives
# each (`--format json`: the mean log-probability per decided piece, and the alternatives count),
# cuts them into equal groups (deciles by default) and scores each group against the references with
# `nmt bleu` (corpus BLEU and chrF of the group), plus Spearman's rank correlation of each confidence
# with the sentence-level chrF.
#
#   tools/bench/confidence.sh MODEL SRC REF [GROUPS]
#
# Environment: NMT (build/bin/nmt), BEAM (5), ALPHA (the length penalty; 1.0), THREADS (2). Prints a
# Markdown table on stdout; the translations are in a temporary folder removed at exit.
set -euo pipefail
[ $# -ge 3 ] && [ $# -le 4 ] || { sed -n 8p "$0" >&2; exit 2; }
model=$1 src=$2 ref=$3 groups=${4:-10}
NMT=${NMT:-build/bin/nmt}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$NMT" translate --quiet -m "$model" -i "$src" -k "${BEAM:-5}" --length-penalty "${ALPHA:-1.0}" \
  --threads "${THREADS:-2}" --format json >"$work/out.jsonl"
python3 - "$work" "$ref" <<'PY'
import json, sys
work, ref = sys.argv[1:]
with open(f"{work}/out.jsonl", encoding="utf-8") as f:
    rows = [json.loads(line) for line in f]
with open(f"{work}/hyp.txt", "w", encoding="utf-8") as f:
    f.writelines(r["text"] + "\n" for r in rows)
with open(f"{work}/conf.tsv", "w") as f:
    f.writelines(f'{r["confidence"]["mean_logprob"]}\t{r["confidence"]["alternatives"]}\n' for r in rows)
PY
"$NMT" bleu "$ref" -i "$work/hyp.txt" -m chrf -sl 2>/dev/null | awk '{print $NF}' >"$work/chrf.txt" || true
python3 - "$work" "$ref" "$groups" "$NMT" <<'PY'
import subprocess, sys
work, ref, groups, nmt = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
hyps = open(f"{work}/hyp.txt", encoding="utf-8").read().splitlines()
refs = open(ref, encoding="utf-8").read().splitlines()
conf = [tuple(map(float, l.split("\t"))) for l in open(f"{work}/conf.tsv")]
if not (len(hyps) == len(refs) == len(conf)):
    sys.exit(f"confidence.sh: {len(hyps)} translations, {len(refs)} references in {ref}")

def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):  # ties share their mean rank
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2
        i = j + 1
    return r

def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a); ma = sum(ra) / n; mb = sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra); vb = sum((y - mb) ** 2 for y in rb)
    return cov / (va * vb) ** 0.5 if va and vb else float("nan")

def score(idx, metric):
    with open(f"{work}/g.hyp", "w", encoding="utf-8") as f:
        f.writelines(hyps[i] + "\n" for i in idx)
    with open(f"{work}/g.ref", "w", encoding="utf-8") as f:
        f.writelines(refs[i] + "\n" for i in idx)
    out = subprocess.run([nmt, "bleu", f"{work}/g.ref", "-i", f"{work}/g.hyp", "-m", metric, "-b"],
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0])

order = sorted(range(len(conf)), key=lambda i: conf[i][0])  # least confident first
print("| group (least confident first) | sentences | mean log-prob | alternatives | BLEU | chrF2 |")
print("| --- | --- | --- | --- | --- | --- |")
for g in range(groups):
    idx = order[g * len(order) // groups:(g + 1) * len(order) // groups]
    lp = sum(conf[i][0] for i in idx) / len(idx)
    alt = sum(conf[i][1] for i in idx) / len(idx)
    print(f"| {g + 1} | {len(idx)} | {lp:.3f} | {alt:.2f} | {score(idx, 'bleu'):.1f} | {score(idx, 'chrf'):.1f} |")
print(f"| all | {len(order)} | | | {score(order, 'bleu'):.1f} | {score(order, 'chrf'):.1f} |")
chrf = [float(x) for x in open(f"{work}/chrf.txt").read().split()]
if len(chrf) == len(conf):
    print(f"\nSpearman with sentence chrF2: mean log-prob {spearman([c[0] for c in conf], chrf):.3f}, "
          f"alternatives {spearman([c[1] for c in conf], chrf):.3f}")
PY
