#!/usr/bin/env bash
# End-to-end test of `nmt bleu` on tiny files made here. Expected outputs are sacreBLEU 2.6.0's for
# the same files and flags (its README example), with its version replaced by nmt's.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
version="nmt-$("$NMT" --version | awk '{print $2}')"

printf 'The dog bit the man.\nIt was not unexpected.\nThe man bit him first.\n' >r0
printf 'The dog had bit the man.\nNo one was surprised.\nThe man had bitten the dog.\n' >r1
printf "The dog bit the man.\nIt wasn't surprising.\nThe man had just bitten him.\n" >h1
printf 'The dog bit a man.\nIt was surprising.\nThe man bit him.\n' >h2

# expect NAME WANT_STATUS WANT_FILE COMMAND...: runs the command, compares status and stdout.
expect() {
  local name=$1 want_status=$2 want=$3; shift 3
  "$@" >out 2>err
  local status=$?
  if [ "$status" -ne "$want_status" ]; then echo "FAIL $name: exit $status, want $want_status"; cat err; fail=1; return; fi
  if [ -n "$want" ] && ! diff -u "$want" out >diff.txt; then echo "FAIL $name: output differs"; cat diff.txt; fail=1; fi
}
# stderr_has NAME TEXT: the last command's stderr mentions TEXT.
stderr_has() { grep -qF -- "$2" err || { echo "FAIL $1: stderr lacks '$2':"; cat err; fail=1; }; }

cat >want <<EOF
{
 "name": "BLEU",
 "score": 48.5,
 "signature": "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:$version",
 "verbose_score": "82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)",
 "nrefs": "2",
 "case": "mixed",
 "eff": "no",
 "tok": "13a",
 "smooth": "exp",
 "version": "$version"
}
EOF
expect "default json" 0 want "$NMT" bleu r0 r1 -i h1
expect "stdin" 0 want sh -c "\"$NMT\" bleu r0 r1 <h1"

cat >want <<EOF
        BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:$version = 48.5308270099 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)
      chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:$version = 59.7275178268
TER|nrefs:2|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:$version = 40.0000000000
EOF
expect "three metrics, text" 0 want "$NMT" bleu r0 r1 -i h1 -m ter chrf bleu -w 10 -f text

# CRLF, no final newline and trailing spaces read the same as the clean file.
printf "The dog bit the man.  \r\nIt wasn't surprising.\r\nThe man had just bitten him." >h1_crlf
expect "crlf" 0 want "$NMT" bleu r0 r1 -i h1_crlf -m ter chrf bleu -w 10 -f text

printf '48.5\n' >want
expect "score only" 0 want "$NMT" bleu r0 r1 -i h1 -b

cat >want <<EOF
BLEU|nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:$version = 100.0000 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 hyp_len = 6 ref_len = 6)
BLEU|nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:$version = 14.7940 50.0/16.7/12.5/12.5 (BP = 0.779 ratio = 0.800 hyp_len = 4 ref_len = 5)
BLEU|nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:$version = 15.6197 57.1/16.7/10.0/6.2 (BP = 1.000 ratio = 1.167 hyp_len = 7 ref_len = 6)
EOF
expect "sentence level" 0 want "$NMT" bleu r0 -i h1 -sl -f text -w 4

cat >want <<EOF
chrF2++|nrefs:2|bs:50|seed:12345|case:mixed|eff:yes|nc:6|nw:2|space:no|version:$version = 59.153104 (μ = 60.749809 ± 35.427430)
EOF
expect "bootstrap ci" 0 want "$NMT" bleu r0 r1 -i h1 -m chrf -cw 2 -ci -cin 50 -f text -w 6

cat >want <<EOF
╒══════════════╤═══════════════════════╕
│       System │   BLEU (μ ± 95% CI)   │
╞══════════════╪═══════════════════════╡
│ Baseline: h1 │ 48.53 (48.94 ± 46.75) │
├──────────────┼───────────────────────┤
│           h2 │ 35.83 (35.54 ± 16.40) │
│              │     (p = 0.2673)      │
╘══════════════╧═══════════════════════╛
EOF
"$NMT" bleu r0 r1 -i h1 h2 -m bleu --paired-bs -pbsn 100 -f text -w 2 >out 2>err || say_fail "paired-bs: exit $?"
head -8 out | diff -u want - || say_fail "paired-bs table"
grep -q "^ - BLEU       nrefs:2|bs:100|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:$version$" out ||
  say_fail "paired-bs signature"

# Two references in one file, tab-separated, give the same scores as two files.
paste r0 r1 >refs_tab
"$NMT" bleu r0 r1 -i h1 -m bleu chrf ter -w 10 >want
expect "tab-separated references" 0 want "$NMT" bleu refs_tab -nr 2 -i h1 -m bleu chrf ter -w 10

# Errors: wrong line count, invalid UTF-8 (file and line named), bad flags, refused features.
printf 'one line\n' >short
expect "length mismatch" 1 "" "$NMT" bleu r0 -i short
stderr_has "length mismatch" "short has 1 line but r0 has 3"
printf 'ok\nbad \xff byte\nok\n' >bad_utf8
expect "invalid utf-8" 1 "" "$NMT" bleu r0 -i bad_utf8
stderr_has "invalid utf-8" "bad_utf8:2: invalid UTF-8"
expect "missing file" 1 "" "$NMT" bleu r0 -i no_such_file
stderr_has "missing file" "no_such_file"
expect "unknown flag" 2 "" "$NMT" bleu r0 -i h1 --frobnicate
expect "external tokenizer" 2 "" "$NMT" bleu r0 -i h1 -tok ja-mecab
stderr_has "external tokenizer" "MeCab"
expect "test sets" 2 "" "$NMT" bleu -t wmt14 -l en-de
expect "no references" 2 "" "$NMT" bleu -i h1
stderr_has "no references" "no reference files given"
expect "sentence level with two metrics" 2 "" "$NMT" bleu r0 -i h1 -sl -m bleu chrf
expect "help" 0 "" "$NMT" bleu --help
grep -q "Usage: nmt bleu" out || say_fail "help text"

# Empty hypothesis lines are scored, and an empty reference line is allowed.
printf '\n\n\n' >empty_h
expect "empty hypotheses" 0 "" "$NMT" bleu r0 r1 -i empty_h -b
[ "$(cat out)" = "0.0" ] || say_fail "empty hypotheses: got $(cat out)"

# A corpus large enough to be scored on several threads gives the same numbers as one thread.
awk 'BEGIN { for (i = 0; i < 2600; i++) print "line " i " has " (i % 7) " words, like " (i % 13) "." }' >big_ref
awk 'BEGIN { for (i = 0; i < 2600; i++) print "line " i " had " (i % 5) " words like " (i % 13) " ." }' >big_hyp
"$NMT" bleu big_ref -i big_hyp -m bleu chrf ter -w 10 --threads 1 >want 2>/dev/null
expect "threads" 0 want "$NMT" bleu big_ref -i big_hyp -m bleu chrf ter -w 10 --threads 3
# gzip-compressed references and hypotheses score as their text does (whatever the file's name).
"$NMT" bleu big_ref -i big_hyp -m bleu chrf ter -w 10 >want 2>/dev/null
gzip -c big_ref >big_ref.gz && gzip -c big_hyp >big_hyp.compressed
expect "compressed input" 0 want "$NMT" bleu big_ref.gz -i big_hyp.compressed -m bleu chrf ter -w 10
head -c 300 big_ref.gz >broken.gz
expect "truncated compressed input" 1 "" "$NMT" bleu broken.gz -i big_hyp
stderr_has "truncated compressed input" "broken.gz"

[ $fail -eq 0 ] && echo "e2e_bleu: all passed"
exit $fail
