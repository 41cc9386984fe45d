# harness.sh: sourced first by every end-to-end test. It makes the test's private working directory
# $tmp (mktemp's: nobody can predict it; removed at exit) and enters it, sets fail=0 (the test ends
# with `exit $fail`), and defines
#   say_fail MESSAGE...           prints FAIL MESSAGE and marks the test failed
#   check NAME STATUS COMMAND...  runs COMMAND, stdout in $out and stderr in $err, and fails unless it
#                                 exits STATUS (killed after $check_timeout seconds when that is set)
#   at_exit COMMAND               runs the shell COMMAND at exit, before $tmp goes (servers to stop)
set -u
fail=0
tmp="$(mktemp -d)"
out=$tmp/out err=$tmp/err
e2e_exit_commands=()
at_exit() { e2e_exit_commands+=("$1"); }
e2e_cleanup() {
  local command
  for command in "${e2e_exit_commands[@]}"; do eval "$command"; done
  rm -rf "$tmp"
}
trap e2e_cleanup EXIT
cd "$tmp" || exit 1
say_fail() { echo "FAIL $*"; fail=1; }
check() {
  local name=$1 want=$2; shift 2
  if [ -n "${check_timeout:-}" ]; then timeout "$check_timeout" "$@" >"$out" 2>"$err"; else "$@" >"$out" 2>"$err"; fi
  local got=$?
  if [ "$got" -ne "$want" ]; then say_fail "$name: exit $got, want $want"; cat "$err"; fi
}
