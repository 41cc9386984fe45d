#!/usr/bin/env bash
# The nmt program's front door: help, version, usage errors and their exit codes.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
check "help" 0 "$NMT" help
grep -q "Usage: nmt" "$out" || say_fail "help text"
check "version" 0 "$NMT" --version
grep -Eq "^nmt [0-9]+\.[0-9]+\.[0-9]+$" "$out" || say_fail "version text"
check "no command" 2 "$NMT"
check "unknown command" 2 "$NMT" frobnicate
grep -q "unknown command 'frobnicate'" "$err" || say_fail "unknown command message"
# Every registered subcommand answers --help with exit 0, takes -q/--quiet, documents a --threads
# default of the CPUs it may use, rejects an unknown flag, an abbreviated one and a value given to a
# flag with exit 2 (a repeated option: e2e_translate). (bleu parses sacreBLEU's flags as argparse does: unique prefixes are sacreBLEU's too.)
for cmd in $("$NMT" help | awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1}'); do
  case $cmd in help|--version) continue;; esac
  check "$cmd --help" 0 "$NMT" "$cmd" --help
  grep -q -- "-q, --quiet" "$out" || say_fail "$cmd --help lacks -q, --quiet"
  if grep -q -- "--threads" "$out"; then
    grep -q "the CPUs this process" "$out" || say_fail "$cmd: --threads default not the CPUs"
  fi
  check "$cmd -q --help" 0 "$NMT" "$cmd" -q --help
  check "$cmd --quiet --help" 0 "$NMT" "$cmd" --quiet --help
  check "$cmd --no-such-flag" 2 "$NMT" "$cmd" --no-such-flag
  [ "$cmd" = bleu ] && continue
  check "$cmd --hel" 2 "$NMT" "$cmd" --hel
  grep -q "never abbreviated; did you mean --help" "$err" || say_fail "$cmd --hel message"
  check "$cmd --help=yes" 2 "$NMT" "$cmd" --help=yes
done
check "help exit status text" 0 "$NMT" help
grep -q "130 or 143" "$out" && grep -q "141" "$out" || say_fail "nmt help: exit statuses"
[ $fail -eq 0 ] && echo "e2e_cli: all passed"
exit $fail
