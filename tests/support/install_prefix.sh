# install_prefix.sh: sourced by end-to-end tests; `install_prefix P` runs `cmake --install` of the
# build under test into the temporary prefix P and sets NMT_PC (pkg-config's path for it) and NMT_SAN
# (the sanitizer flags a program linked with that libnmt needs: those of an ASan build, or none).
install_prefix() {
  local prefix=$1 build
  build=$(dirname "$NMT_BIN_DIR")
  cmake --install "$build" --prefix "$prefix" >"$prefix.install.log" 2>&1 ||
    { echo "FAIL cmake --install"; cat "$prefix.install.log"; exit 1; }
  NMT_PC=$(dirname "$(find "$prefix" -name nmt.pc | head -n 1)")
  NMT_SAN=""
  nm "$NMT_LIB" 2>/dev/null | grep -q ' __asan_init' && NMT_SAN="-fsanitize=address,undefined"
}
