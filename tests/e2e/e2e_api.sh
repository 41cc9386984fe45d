#!/usr/bin/env bash
# The public C API end to end: the complete program in include/nmt/nmt.h (after its `Example:` line)
# is extracted, compiled against the installed library (`cmake --install` into a temporary prefix,
# `pkg-config --cflags --libs nmt`: no internal header on the include path) and run on a tiny model;
# its translations must be what `nmt translate` prints for the same lines.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
. "$NMT_SOURCE_DIR/tests/support/tiny_model.sh"
. "$NMT_SOURCE_DIR/tests/support/install_prefix.sh"
tiny_model "$tmp/model"
install_prefix "$tmp/prefix"

header="$NMT_SOURCE_DIR/include/nmt/nmt.h"
# The example: the comment lines after " * Example:" up to the comment's end, without their " * " margin.
awk '/^ \* Example:$/ { on = 1; next } on && /^ \*\// { exit } on { sub(/^ \*( |$)/, ""); print }' "$header" >example.c
grep -q 'int main' example.c || say_fail "no example program after 'Example:' in nmt.h"
flags="$(PKG_CONFIG_PATH="$NMT_PC" pkg-config --cflags --libs nmt)" || say_fail "pkg-config does not know nmt"
cc -std=c11 -Wall -Wextra -Werror $NMT_SAN example.c $flags -o example 2>cc.err ||
  { say_fail "the example does not compile"; cat cc.err; }
export LD_LIBRARY_PATH="$tmp/prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

printf 'the cat sees a dog\n\nbig red house\nthe small tree runs\na dog likes the blue house\n' >in.txt
"$NMT" translate -m model --threads 1 -q <in.txt >want.txt 2>err || say_fail "nmt translate: $(cat err)"
if [ -x example ]; then
  ./example model <in.txt >got.txt 2>err || say_fail "the example failed: $(cat err)"
  cmp -s want.txt got.txt || { say_fail "the example's translations differ from nmt translate's"; diff want.txt got.txt; }
  [ "$(wc -l <got.txt)" -eq 5 ] || say_fail "5 lines gave $(wc -l <got.txt)"
  ./example >/dev/null 2>err </dev/null; [ $? -eq 2 ] || say_fail "the example without arguments should exit 2"
  ./example no-such-dir </dev/null >/dev/null 2>err && say_fail "a missing model directory should fail"
  grep -q 'no-such-dir' err || say_fail "the error should name the directory: $(cat err)"
fi
[ $fail -eq 0 ] && echo "PASS e2e_api"
exit $fail
