#!/usr/bin/env bash
# libnmt.so's ABI is its header: the dynamic symbols it defines are exactly the functions that
# include/nmt/nmt.h declares (read from the preprocessed header, so a function added there is
# expected here too, and one declared without NMT_API fails); a program cannot link an internal
# function against it; and it needs neither libmicrohttpd (with GnuTLS) nor MPI, which only the nmt
# program links.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
lib=${NMT_SHARED_LIB:?NMT_SHARED_LIB is the built libnmt.so (set by ctest)}
header="$NMT_SOURCE_DIR/include/nmt/nmt.h"

# The header's functions: its declarations (statements with a parameter list, no typedef), named by
# the identifier before their first parenthesis, comments and macros gone.
cc -E -P -x c "$header" >header.i 2>cc.err || { say_fail "the header does not preprocess"; cat cc.err; }
tr '\n' ' ' <header.i | tr ';' '\n' | grep -v 'typedef' |
  sed -n 's/^[^(]*[^A-Za-z0-9_]\(nmt_[A-Za-z0-9_]*\)[[:space:]]*(.*/\1/p' | sort -u >declared.txt
grep -qx nmt_version declared.txt && grep -qx nmt_engine_translate declared.txt ||
  say_fail "the header's functions were not found: $(tr '\n' ' ' <declared.txt)"

nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u >exported.txt
comm -23 declared.txt exported.txt >not_exported.txt
comm -13 declared.txt exported.txt >not_declared.txt
[ -s not_exported.txt ] && say_fail "declared in nmt.h but not exported by $(basename "$lib") (NMT_API missing?):" \
  "$(tr '\n' ' ' <not_exported.txt)"
[ -s not_declared.txt ] && say_fail "exported by $(basename "$lib") but not declared in nmt.h ($(wc -l <not_declared.txt)):" \
  "$(head -n 20 not_declared.txt | tr '\n' ' ')"

# An internal function (defined in libnmt.a) is not there for a program linked to the shared library.
nm --defined-only "$NMT_LIB" 2>/dev/null | grep -q ' T nmt_model_param_count$' ||
  say_fail "the static library lacks the internal nmt_model_param_count (the test's premise)"
cat >internal.c <<'C'
#include <stddef.h>
size_t nmt_model_param_count(const void *config);
int main(void) { return nmt_model_param_count(NULL) > 0; }
C
san=""
nm "$NMT_LIB" 2>/dev/null | grep -q ' __asan_init' && san="-fsanitize=address,undefined"
if cc $san internal.c "$lib" -o internal 2>link.err; then
  say_fail "a program linked an internal function (nmt_model_param_count) against $(basename "$lib")"
elif ! grep -q 'undefined reference to .nmt_model_param_count' link.err; then
  say_fail "linking against $(basename "$lib") failed for another reason:"; cat link.err
fi

# Neither the server's nor MPI's libraries, directly or through another.
for needs in "readelf -d" ldd; do
  $needs "$lib" >needs.txt 2>&1 || { say_fail "$needs $lib"; cat needs.txt; continue; }
  grep -E 'libmicrohttpd|libgnutls|libmpi|libopen-(pal|rte)' needs.txt >found.txt &&
    say_fail "$needs $(basename "$lib") lists $(tr '\n' ' ' <found.txt)"
done
[ $fail -eq 0 ] && echo "e2e_abi: $(wc -l <declared.txt) functions, declared and exported alike; no libmicrohttpd, GnuTLS or MPI"
exit $fail
