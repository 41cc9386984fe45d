#!/usr/bin/env bash
# Developer check (not run by CI): compares `nmt bleu` with sacreBLEU run from its source tree on
# generated, deliberately awkward inputs, for every metric and a matrix of flags, at -w 10 and in
# JSON (full precision). Lines differing only in the version field count as equal.
#
#   tools/bench/sacrebleu_parity.sh SACREBLEU_SRC [NMT_BINARY] [SEED] [LINES]
#
# SACREBLEU_SRC is a checkout of github.com/mjpost/sacrebleu (the directory holding sacrebleu/);
# its Python needs regex, numpy, portalocker, tabulate, colorama (Debian: python3-regex python3-numpy
# python3-portalocker python3-tabulate python3-colorama). Prints each differing case; exits 1 if any.
set -u
src=${1:?usage: sacrebleu_parity.sh SACREBLEU_SRC [NMT_BINARY] [SEED] [LINES]}
nmt=$(realpath "${2:-build/bin/nmt}")
seed=${3:-1}
lines=${4:-300}
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# sacreBLEU's version.py is generated at install time; provide it in a private copy of the tree.
mkdir -p "$work/sb" && cp -r "$src/sacrebleu" "$work/sb/" || exit 1
[ -f "$work/sb/sacrebleu/version.py" ] || echo '__version__ = "2.6.0"' > "$work/sb/sacrebleu/version.py"
sacrebleu() { PYTHONPATH="$work/sb" NO_COLOR=1 "$python" -m sacrebleu "$@"; }
sacrebleu --version >/dev/null || { echo "sacreBLEU does not run from $src with $python"; exit 1; }
nmt_version=$("$nmt" --version | awk '{print $2}')
sb_version=$(sacrebleu --version | awk '{print $2}')

cat > "$work/gen.py" <<'PY'
"""Writes ref{1,2,3}.txt, refs_tab.txt, sys{1,2,3}.txt and long_{ref,sys}.txt into the current directory."""
import random, sys
rng = random.Random(int(sys.argv[1])); n = int(sys.argv[2])
words = "the a cat sat on mat dog Hund Katze über Straße GROSS Mann Frau läuft schnell Ärger Öl naïve café déjà vu".split()
punct = list(".,;:!?\"'()[]{}<>/\\-_@#$%^&*+=|~`") + ["...", "--", "'s", "n't", "''", "``"]
upunct = list("«»„“”‘’—–…¡¿·‧、。，！？：；（）「」『』【】〈〉《》・･﹐﹑﹒︰︱")
symbols = list("$€£¥©®™°±×÷→←♪☺★☆") + ["😀", "🎉", "👍🏽", "𝔸"]
numbers = ["1,000.50", "3.14", "2020-2021", "1-2", "٣٤", "½", "²", "Ⅻ", "10.", ".5", "1.", "5,", "9-", "-3", "12:30", "4/5", "१२३"]
cjk = ["中文", "漢字", "我爱你", "ひらがな", "カタカナ", "한국어", "Ａ１", "ｶﾀｶﾅ", "㐀", "𠀀", "丽", "⺀", "㈠", "㍻", "豈", "︰", "〇", "⿰"]
html = ["&quot;", "&amp;", "&lt;", "&gt;", "&amp;lt;", "&apos;", "&#39;", "&quot;x&quot;", "AT&amp;T", "<skipped>", "<skip>"]
greek = ["ΟΔΥΣΣΕΥΣ", "ΑΣ.Β", "ΑΣ", "Σ", "ΑΣ'Β", "aΣ", "ΣΑ", "ΑΣ:Β", "ΑΣ.", "ªΣ"]
special = ["İstanbul", "İ", "ß", "ẞ", "ǅ", "ﬁ", "Ⅷ", "Ⓐ", "🄰", "ＡＢＣ", "Ω", "K", "Å", "e\u0301", "\u0345Σ"]
spaces = [" ", "  ", "\t", "\u00a0", "\u2009", "\u3000", "\x0b", "\x0c", "\x1c", "\x1f", "\u2028", "\x85", "\u200b", "\u202f"]
pools = [words] * 10 + [punct] * 3 + [upunct, symbols, numbers, numbers, cjk, html, greek, special]
def token():
    t = rng.choice(rng.choice(pools))
    if rng.random() < 0.15: t = t.upper() if rng.random() < 0.5 else t.capitalize()
    if rng.random() < 0.1: t += rng.choice(["-", "'", ".", ",", "/"]) + rng.choice(words)
    if rng.random() < 0.1: t += rng.choice(punct + upunct)
    return t
def join(tokens):
    out = []
    for t in tokens:
        out.append(t)
        out.append(" " if rng.random() < 0.9 else rng.choice(spaces))
    return "".join(out).rstrip(" ")
def reference():
    r = rng.random()
    if r < 0.03: return []
    return [token() for _ in range(rng.randint(1, 15) if r < 0.97 else rng.randint(60, 200))]
def mutate(tokens):
    t = list(tokens)
    for _ in range(rng.randint(0, 4)):
        op = rng.random()
        if not t or op < 0.25: t.insert(rng.randint(0, len(t)), token())
        elif op < 0.45: del t[rng.randrange(len(t))]
        elif op < 0.65: t[rng.randrange(len(t))] = token()
        elif op < 0.85 and len(t) > 3:  # move a block (TER shifts)
            i = rng.randrange(len(t) - 1); k = rng.randint(1, min(4, len(t) - i)); block = t[i:i + k]; del t[i:i + k]
            t[rng.randint(0, len(t)):0] = block
        else: t = [x.lower() if rng.random() < 0.5 else x.upper() for x in t]
    return t
def write(name, rows):
    with open(name, "w", encoding="utf-8", newline="\n") as f:
        for row in rows: f.write(row + "\n")
base = [reference() for _ in range(n)]
refs = [[join(mutate(b)) if k else join(b) for b in base] for k in range(3)]
for k in range(3): write(f"ref{k + 1}.txt", refs[k])
write("refs_tab.txt", [a.replace("\t", " ") + "\t" + (b.replace("\t", " ").strip() or "x") for a, b in zip(refs[0], refs[1])])
for k in range(3): write(f"sys{k + 1}.txt", [join(mutate(b)) if rng.random() < 0.95 else "" for b in base])
write("stdin.txt", ["\t".join(x.replace("\t", " ") for x in row) for row in zip(*[open(f"sys{k + 1}.txt", encoding="utf-8", newline="\n").read().split("\n")[:-1] for k in range(2)])])
long_base = [[token() for _ in range(rng.randint(300, 900))] for _ in range(4)]
write("long_ref.txt", [join(b) for b in long_base]); write("long_sys.txt", [join(mutate(mutate(b))) for b in long_base])
PY
(cd "$work" && "$python" gen.py "$seed" "$lines") || exit 1

fail=0 cases=0
check() { # check ARGS... (run in $work)
  cases=$((cases + 1))
  (cd "$work" && "$nmt" bleu "$@" >nmt.out 2>nmt.err; echo $? >nmt.rc)
  (cd "$work" && sacrebleu "$@" 2>sb.err | sed "s/\\b${sb_version//./\\.}\\b/$nmt_version/g" >sb.out; echo "${PIPESTATUS[0]}" >sb.rc)
  if [ "$(cat "$work/sb.rc")" != 0 ]; then
    fail=$((fail + 1))
    echo "SACREBLEU FAILED: $*"
    tail -3 "$work/sb.err"
  elif [ "$(cat "$work/nmt.rc")" != 0 ] || ! cmp -s "$work/nmt.out" "$work/sb.out"; then
    fail=$((fail + 1))
    echo "DIFF: nmt bleu $*"
    diff "$work/nmt.out" "$work/sb.out" | head -8
    head -3 "$work/nmt.err"
  fi
}
one=(ref1.txt -i sys1.txt)
three=(ref1.txt ref2.txt ref3.txt -i sys1.txt)
for refs in one three; do
  declare -n r=$refs
  for tok in none 13a intl char zh; do
    for lc in "" -lc; do
      check "${r[@]}" -tok $tok $lc -w 10 -f text
    done
  done
  for s in "exp" "floor" "add-k" "none" "floor -sv 0.3" "add-k -sv 2" "add-k -sv 0.5"; do
    check "${r[@]}" -s $s -w 10 -f text
    check "${r[@]}" -s $s -sl -w 10 -f text
  done
  for c in "" "-cw 2" "--chrf-whitespace" "--chrf-lowercase" "--chrf-eps-smoothing" "-cc 3 -cw 1" "--chrf-beta 1" "-cw 2 --chrf-beta 3 --chrf-lowercase"; do
    check "${r[@]}" -m chrf $c -w 10 -f text
  done
  check "${r[@]}" -m chrf -cw 2 -sl -w 10 -f text
  for t in "" --ter-case-sensitive --ter-asian-support --ter-no-punct --ter-normalized "--ter-normalized --ter-asian-support" \
           "--ter-no-punct --ter-asian-support" "--ter-normalized --ter-no-punct --ter-asian-support --ter-case-sensitive"; do
    check "${r[@]}" -m ter $t -w 10 -f text
  done
  check "${r[@]}" -m ter -sl -w 10 -f text
  check "${r[@]}" -m bleu chrf ter -w 10
  check "${r[@]}" -m bleu chrf ter -w 10 -ci -cin 200
  check "${r[@]}" -m bleu chrf ter -w 10 -ci -cin 200 -f text -sh
  check "${r[@]}" -m bleu chrf ter -b -w 3 -f text
  check "${r[@]}" -m bleu chrf ter -b -w 3
  check "${r[@]}" -m bleu -s add-k -sv 0.5 -ci -cin 100 -w 10
done
check refs_tab.txt -nr 2 -i sys1.txt -m bleu chrf ter -w 10
check ref1.txt ref2.txt -i sys1.txt sys2.txt sys3.txt -m bleu chrf ter -w 10 -f text
check ref1.txt ref2.txt -i sys1.txt sys2.txt sys3.txt -m bleu chrf ter -w 10 -f json
check ref1.txt -i sys1.txt sys2.txt sys3.txt -m chrf ter bleu --paired-bs --paired-bs-n 300 -w 10 -f text
check ref1.txt -i sys1.txt sys2.txt sys3.txt -m chrf ter bleu --paired-bs --paired-bs-n 300 -f json
check ref1.txt ref2.txt -i sys1.txt sys2.txt -m bleu chrf --paired-ar --paired-ar-n 500 -w 10 -f latex
check ref1.txt -i sys1.txt sys2.txt -m bleu -s add-k -sv 0.5 --paired-ar --paired-ar-n 500 -f json
check ref1.txt -i sys1.txt sys1.txt sys2.txt --paired-bs --paired-bs-n 100 -f text
check long_ref.txt -i long_sys.txt -m bleu chrf ter -w 10
cases=$((cases + 1))
(cd "$work" && "$nmt" bleu ref1.txt ref2.txt -m bleu chrf ter -w 10 -f text <stdin.txt >nmt.out 2>nmt.err;
 sacrebleu ref1.txt ref2.txt -m bleu chrf ter -w 10 -f text <stdin.txt 2>/dev/null | sed "s/\\b${sb_version//./\\.}\\b/$nmt_version/g" >sb.out)
cmp -s "$work/nmt.out" "$work/sb.out" || { fail=$((fail + 1)); echo "DIFF: stdin with two systems"; diff "$work/nmt.out" "$work/sb.out" | head -8; }
echo "sacrebleu_parity: $cases cases, $fail differ (seed $seed, $lines lines)"
[ $fail -eq 0 ]
