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
# Every registered subcommand answers --help with exit 0 and rejects an unknown flag with exit 2.
for cmd in $("$NMT" help | awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1}'); do
  case $cmd in help|--version) continue;; esac
  check "$cmd --help" 0 "$NMT" "$cmd" --help
  check "$cmd --no-such-flag" 2 "$NMT" "$cmd" --no-such-flag
done
[ $fail -eq 0 ] && echo "e2e_cli: all passed"
exit $fail
