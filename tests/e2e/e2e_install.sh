#!/usr/bin/env bash
# `cmake --install build --prefix P`: the program, libnmt static and shared (with its SONAME), the
# public header, nmt.pc, man pages and bash completion land in P; a ten-line C program compiles with
# `pkg-config --cflags --libs nmt` and runs, linked to the shared and to the static library; the
# installed Python package imports with PYTHONPATH set to its folder alone, finds the libnmt installed
# beside it and translates (and `pip install ./python` installs it, where pip, setuptools and wheel
# are at hand); and a build without tests (-DNMT_TESTS=OFF) configures without Check.
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

# The Python package: found under the prefix, it loads the libnmt of the prefix (no NMT_LIBRARY, no
# LD_LIBRARY_PATH) and translates as the installed program does.
if [ -z "$NMT_SAN" ] && command -v python3 >/dev/null; then # python3 cannot load an ASan libnmt
  . "$NMT_SOURCE_DIR/tests/support/tiny_model.sh"
  NMT="$p/bin/nmt" tiny_model "$tmp/model" >/dev/null
  init=$(find "$p" -path '*/nmt/__init__.py' | head -n 1)
  [ -n "$init" ] || say_fail "the Python package is not installed: $(find "$p" -name '*.py')"
  site=$(dirname "$(dirname "$init")")
  echo "the cat sees a dog" | "$p/bin/nmt" translate -m model --threads 1 -q >want.txt
  check() { # PYTHONPATH: the expected library's directory
    (unset NMT_LIBRARY LD_LIBRARY_PATH; PYTHONPATH="$1" python3 -c '
import os, sys, nmt
lib = nmt.library()._name
assert os.path.realpath(lib) == os.path.realpath(sys.argv[1]), (lib, sys.argv[1])
with nmt.Translator("model", threads=1) as t:
    print(t.translate("the cat sees a dog").text)
print(nmt.corpus_bleu(["a b c d"], [["a b c d"]]))' "$lib/libnmt.so.0") >py.txt 2>&1
  }
  check "$site" || say_fail "the installed Python package: $(cat py.txt)"
  [ "$(cat py.txt)" = "$(cat want.txt; echo 'BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 hyp_len = 4 ref_len = 4)')" ] ||
    say_fail "the installed Python package printed: $(cat py.txt)"
  grep -q "^version = \"$("$p/bin/nmt" --version | cut -d' ' -f2)\"$" "$NMT_SOURCE_DIR/python/pyproject.toml" ||
    say_fail "python/pyproject.toml's version is not the library's"
  # pip, offline: Debian's setuptools and wheel build it (a copy: pip builds in the source tree).
  for py in python3 /usr/bin/python3; do
    "$py" -c "import setuptools, wheel, pip" 2>/dev/null || continue
    cp -r "$NMT_SOURCE_DIR/python" pysrc
    "$py" -m pip install -q --no-build-isolation --no-deps --no-index --target pip-site ./pysrc >pip.log 2>&1 ||
      { say_fail "pip install ./python: $(tail -5 pip.log)"; break; }
    [ -f pip-site/nmt/translator.py ] && [ -d pip-site/nmt-0.1.0.dist-info ] || say_fail "pip installed: $(ls pip-site)"
    NMT_LIBRARY="$lib/libnmt.so.0" PYTHONPATH=pip-site "$py" -c 'import nmt; print(nmt.corpus_bleu(["a b c d"], [["a b c d"]]).format(score_only=True))' \
      >pip.txt 2>&1 && [ "$(cat pip.txt)" = 100.00 ] || say_fail "the package pip installed: $(cat pip.txt)"
    break
  done
fi

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
