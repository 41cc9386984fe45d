#!/usr/bin/env bash
# `cmake --install build --prefix P`: the program, libnmt static and shared (with its SONAME), the
# public header, nmt.pc, man pages and bash completion land in P; a ten-line C program compiles with
# `pkg-config --cflags --libs nmt` and runs, linked to the shared and to the static library; and a
# build without tests (-DNMT_TESTS=OFF) configures without Check.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
. "$NMT_SOURCE_DIR/tests/support/install_prefix.sh"
install_prefix "$tmp/p"
p=$tmp/p
lib=$(dirname "$NMT_PC")
for f in bin/nmt include/nmt/nmt.h share/bash-completion/completions/nmt; do
  [ -e "$p/$f" ] || say_fail "$f not installed"
done
[ -e "$lib/libnmt.a" ] && [ -e "$lib/libnmt.so" ] || say_fail "libnmt.a or libnmt.so not installed: $(ls "$lib")"
objdump -p "$lib/libnmt.so" | grep -q 'SONAME *libnmt\.so\.0$' || say_fail "libnmt.so has no SONAME libnmt.so.0"
"$p/bin/nmt" --version | grep -q '^nmt [0-9]' || say_fail "the installed nmt does not run"
if command -v help2man >/dev/null; then
  for c in "" $("$p/bin/nmt" help | awk '/^Commands:/ { on = 1; next } on && !NF { exit } on && $1 != "help" && $1 !~ /^-/ { print $1 }'); do
    page="$p/share/man/man1/nmt${c:+-$c}.1"
    grep -q "^\.TH NMT${c:+-$(echo "$c" | tr a-z A-Z)} " "$page" 2>/dev/null || say_fail "man page $page"
  done
  grep -q 'max\\-input\\-length' "$p/share/man/man1/nmt-translate.1" || say_fail "nmt-translate.1 lacks the --help text"
fi

cat >prog.c <<'C'
#include <nmt/nmt.h>
#include <stdio.h>
int main(void) {
    const char *hyp[] = {"The dog bit the man."}, *ref[] = {"The dog bit the man."};
    nmt_corpus_metric s;
    if (nmt_corpus_bleu(1, hyp, 1, ref, &s) < 0) return fprintf(stderr, "%s\n", nmt_last_error()), 1;
    printf("%s %s %.1f\n", nmt_version(), s.name, s.value);
    return 0;
}
C
export PKG_CONFIG_PATH="$NMT_PC"
cc -std=c11 -Wall -Wextra -Werror $NMT_SAN prog.c $(pkg-config --cflags --libs nmt) -o prog 2>cc.err ||
  { say_fail "the program does not compile against the shared libnmt"; cat cc.err; }
[ "$(LD_LIBRARY_PATH="$lib" ./prog 2>&1)" = "$("$p/bin/nmt" --version | cut -d' ' -f2) BLEU 100.0" ] ||
  say_fail "the program printed '$(LD_LIBRARY_PATH="$lib" ./prog 2>&1)'"
readelf -d prog | grep -q 'NEEDED.*libnmt\.so\.0' || say_fail "the program is not linked to libnmt.so.0"
# The static library with its dependencies' shared libraries (what Requires.private names; Debian
# ships some of their own private dependencies only as shared libraries).
static_libs="-L$lib -l:libnmt.a $(pkg-config --libs $(pkg-config --print-requires-private nmt)) -lstdc++ -lpthread -lm"
cc -std=c11 $NMT_SAN prog.c $(pkg-config --cflags nmt) $static_libs -o prog-static 2>cc.err ||
  { say_fail "the program does not compile against the static libnmt"; cat cc.err; }
readelf -d prog-static | grep -q 'libnmt' && say_fail "the static program still needs libnmt.so"
./prog-static | grep -q 'BLEU 100.0' || say_fail "the static program failed"

# Bash completion: subcommands, then a subcommand's options.
# shellcheck disable=SC1091
PATH="$p/bin:$PATH" bash -c ". '$p/share/bash-completion/completions/nmt'
  COMP_WORDS=(nmt tr); COMP_CWORD=1; _nmt; echo \"\${COMPREPLY[*]}\"
  COMP_WORDS=(nmt translate --max-input); COMP_CWORD=2; _nmt; echo \"\${COMPREPLY[*]}\"" >completion.txt 2>&1
[ "$(sed -n 1p completion.txt)" = "train translate" ] || say_fail "completion of 'nmt tr': $(sed -n 1p completion.txt)"
[ "$(sed -n 2p completion.txt)" = "--max-input-length --max-input-length-crop" ] ||
  say_fail "completion of 'nmt translate --max-input': $(sed -n 2p completion.txt)"

# Without tests, Check is never looked for.
cmake -S "$NMT_SOURCE_DIR" -B notests -DNMT_TESTS=OFF >configure.log 2>&1 || { say_fail "configure -DNMT_TESTS=OFF"; cat configure.log; }
grep -q "module 'check'" configure.log && say_fail "-DNMT_TESTS=OFF still looks for Check"
[ $fail -eq 0 ] && echo "e2e_install: all passed"
exit $fail
