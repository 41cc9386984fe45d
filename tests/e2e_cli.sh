#!/usr/bin/env bash
# The nmt program's front door: help, version, usage errors and their exit codes.
set -u
fail=0
check() { # check NAME EXPECTED_STATUS COMMAND...
  local name=$1 want=$2; shift 2
  "$@" >/tmp/nmt-e2e-cli.out 2>/tmp/nmt-e2e-cli.err; local got=$?
  if [ "$got" -ne "$want" ]; then echo "FAIL $name: exit $got, want $want"; cat /tmp/nmt-e2e-cli.err; fail=1; fi
}
check "help" 0 "$NMT" help
grep -q "Usage: nmt" /tmp/nmt-e2e-cli.out || { echo "FAIL help text"; fail=1; }
check "version" 0 "$NMT" --version
grep -Eq "^nmt [0-9]+\.[0-9]+\.[0-9]+$" /tmp/nmt-e2e-cli.out || { echo "FAIL version text"; fail=1; }
check "no command" 2 "$NMT"
check "unknown command" 2 "$NMT" frobnicate
grep -q "unknown command 'frobnicate'" /tmp/nmt-e2e-cli.err || { echo "FAIL unknown command message"; fail=1; }
# Every registered subcommand answers --help with exit 0, takes -q/--quiet, documents a --threads
# default of the CPUs it may use, rejects an unknown flag, an abbreviated one and a value given to a
# flag with exit 2 (a repeated option: e2e_translate). (bleu parses sacreBLEU's flags as argparse does: unique prefixes are sacreBLEU's too.)
for cmd in $("$NMT" help | awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1}'); do
  case $cmd in help|--version) continue;; esac
  check "$cmd --help" 0 "$NMT" "$cmd" --help
  grep -q -- "-q, --quiet" /tmp/nmt-e2e-cli.out || { echo "FAIL $cmd --help lacks -q, --quiet"; fail=1; }
  if grep -q -- "--threads" /tmp/nmt-e2e-cli.out; then
    grep -q "the CPUs this process" /tmp/nmt-e2e-cli.out || { echo "FAIL $cmd: --threads default not the CPUs"; fail=1; }
  fi
  check "$cmd -q --help" 0 "$NMT" "$cmd" -q --help
  check "$cmd --quiet --help" 0 "$NMT" "$cmd" --quiet --help
  check "$cmd --no-such-flag" 2 "$NMT" "$cmd" --no-such-flag
  [ "$cmd" = bleu ] && continue
  check "$cmd --hel" 2 "$NMT" "$cmd" --hel
  grep -q "never abbreviated; did you mean --help" /tmp/nmt-e2e-cli.err || { echo "FAIL $cmd --hel message"; fail=1; }
  check "$cmd --help=yes" 2 "$NMT" "$cmd" --help=yes
done
check "help exit status text" 0 "$NMT" help
grep -q "130 or 143" /tmp/nmt-e2e-cli.out && grep -q "141" /tmp/nmt-e2e-cli.out || { echo "FAIL nmt help: exit statuses"; fail=1; }
[ $fail -eq 0 ] && echo "e2e_cli: all passed"
exit $fail
