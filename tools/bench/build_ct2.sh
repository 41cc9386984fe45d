#!/usr/bin/env bash
# Builds CTranslate2 (the reference engine of the benchmark scripts) outside the repository:
#
#   tools/bench/build_ct2.sh SNAPSHOT DEST
#
# SNAPSHOT is a git directory of CTranslate2 (bare or not) that holds the tag TAG (v4.8.1). Its
# third_party submodules are not in such a snapshot: each is taken from MIRRORS/OWNER+NAME/repo
# (a git directory; MIRRORS defaults to the folder two levels above SNAPSHOT, the layout the
# workplace's fetch tool makes: MIRRORS/OpenNMT+CTranslate2/repo) at the commit the tag's tree names, or cloned from the URL in .gitmodules into
# DEST/mirrors when there is no such mirror. Only the CPU ones: cpu_features, spdlog, cxxopts, ruy
# and ruy's cpuinfo.
#
# DEST receives:
#   src/           the source at TAG with its submodules, and one local change: the oneDNN branch of
#                  Conv1D (Whisper's, not used by translation models) needs oneDNN 3, so with an older
#                  oneDNN (Debian's libdnnl-dev is 2.6) Conv1D takes CTranslate2's own GEMM branch;
#   build-dnnl/    oneDNN for float32 and int8 GEMMs, GNU OpenMP (cli/ct2-translator, libctranslate2.so);
#   build-openblas/  OpenBLAS for float32, Ruy for int8, GNU OpenMP;
#   install/       build-dnnl installed (headers and library for the Python module);
#   venv/          a virtual environment (with the system's numpy and PyYAML) holding the Python
#                  module `ctranslate2` built against install/, so that its specs, converters and
#                  Translator run: DEST/venv/bin/python.
# A part already built is kept (delete it to rebuild). Builds run at nice 19 with JOBS (2) jobs.
#
# Installs what it needs from Debian first (tools/install-deps.sh --ct2, as root or through sudo):
# nmt's build packages, those of --bench, git, libdnnl-dev, python3-pybind11 and python3-venv.
set -euo pipefail
[ $# -eq 2 ] || { sed -n 4p "$0" >&2; exit 2; }
snapshot=$(cd "$1" && pwd)
mkdir -p "$2"
dest=$(cd "$2" && pwd)
TAG=${TAG:-v4.8.1}
JOBS=${JOBS:-2}
MIRRORS=${MIRRORS:-$(dirname "$(dirname "$snapshot")")}
git -C "$snapshot" rev-parse -q --verify "$TAG^{commit}" >/dev/null ||
  { echo "build_ct2.sh: $snapshot has no $TAG" >&2; exit 1; }

"$(dirname "$0")/../install-deps.sh" --ct2

# unpack GITDIR COMMIT FOLDER URL: the tree of COMMIT, from GITDIR or else from a clone of URL
unpack() {
  local gitdir=$1 commit=$2 folder=$3 url=$4 name
  if [ ! -d "$gitdir" ]; then
    name=${url#https://github.com/}
    name=${name%.git}
    gitdir=$dest/mirrors/${name/\//+}
    [ -d "$gitdir" ] || git clone -q --bare "$url" "$gitdir"
  fi
  mkdir -p "$folder"
  git -C "$gitdir" archive "$commit" | tar -x -C "$folder"
}
# url_of GITDIR COMMIT PATH: the URL .gitmodules gives the submodule at PATH
url_of() {
  local name
  name=$(git -C "$1" config --blob "$2:.gitmodules" --get-regexp '^submodule\..*\.path$' | awk -v p="$3" '$2 == p { print $1 }')
  git -C "$1" config --blob "$2:.gitmodules" "${name%.path}.url"
}
# mirror_of URL: MIRRORS/OWNER+NAME/repo
mirror_of() {
  local name=${1#https://github.com/}
  name=${name%.git}
  echo "$MIRRORS/${name/\//+}/repo"
}

src=$dest/src
if [ ! -f "$src/.unpacked" ]; then
  echo "== unpacking $TAG into $src" >&2
  rm -rf "$src"
  unpack "$snapshot" "$TAG" "$src" ""
  for sub in cpu_features spdlog cxxopts ruy; do
    url=$(url_of "$snapshot" "$TAG" "third_party/$sub")
    commit=$(git -C "$snapshot" ls-tree "$TAG" "third_party/$sub" | awk '{ print $3 }')
    unpack "$(mirror_of "$url")" "$commit" "$src/third_party/$sub" "$url"
  done
  ruy=$(mirror_of "$(url_of "$snapshot" "$TAG" third_party/ruy)")
  [ -d "$ruy" ] || ruy=$dest/mirrors/google+ruy
  ruy_commit=$(git -C "$snapshot" ls-tree "$TAG" third_party/ruy | awk '{ print $3 }')
  url=$(url_of "$ruy" "$ruy_commit" third_party/cpuinfo)
  commit=$(git -C "$ruy" ls-tree "$ruy_commit" third_party/cpuinfo | awk '{ print $3 }')
  unpack "$(mirror_of "$url")" "$commit" "$src/third_party/ruy/third_party/cpuinfo" "$url"
  # oneDNN 2.x has no engine-first convolution_forward::primitive_desc: keep the oneDNN branch for 3.x
  conv=$src/src/ops/conv1d_cpu.cc
  grep -q '^#ifdef CT2_WITH_DNNL$' "$conv" || { echo "build_ct2.sh: $conv is not as expected" >&2; exit 1; }
  sed -i -e '0,/^#ifdef CT2_WITH_DNNL$/s//#ifdef CT2_WITH_DNNL\n#  include <dnnl.hpp>\n#endif\n#if defined(CT2_WITH_DNNL) \&\& DNNL_VERSION_MAJOR >= 3/' \
    "$conv"
  touch "$src/.unpacked"
fi

# build NAME CMAKE_OPTIONS...: DEST/build-NAME with cli/ct2-translator
build() {
  local name=$1 folder=$dest/build-$1
  shift
  [ -x "$folder/cli/ct2-translator" ] && return
  echo "== building CTranslate2 ($name) in $folder" >&2
  cmake -S "$src" -B "$folder" -DCMAKE_BUILD_TYPE=Release -DWITH_MKL=OFF -DOPENMP_RUNTIME=COMP -DBUILD_CLI=ON \
    -DCMAKE_INSTALL_PREFIX="$dest/install" "$@" >"$folder.cmake.log" 2>&1 ||
    { tail -20 "$folder.cmake.log" >&2; exit 1; }
  nice -n 19 cmake --build "$folder" -j"$JOBS" >"$folder.build.log" 2>&1 || { tail -20 "$folder.build.log" >&2; exit 1; }
}
build dnnl -DWITH_DNNL=ON

if [ ! -x "$dest/venv/bin/python" ] || ! "$dest/venv/bin/python" -c 'import ctranslate2' 2>/dev/null; then
  echo "== the Python module into $dest/venv" >&2
  cmake --install "$dest/build-dnnl" >"$dest/install.log" 2>&1 || { tail -20 "$dest/install.log" >&2; exit 1; }
  # the system's numpy, PyYAML, setuptools and pybind11 (Debian's), nothing from the network
  /usr/bin/python3 -m venv --system-site-packages "$dest/venv"
  # the module finds libctranslate2.so through its run path
  (cd "$src/python" && CTRANSLATE2_ROOT=$dest/install LDFLAGS="-Wl,-rpath,$dest/install/lib" nice -n 19 "$dest/venv/bin/python" -m pip install -q \
    --no-build-isolation --no-deps --no-index .) >"$dest/python.log" 2>&1 || { tail -20 "$dest/python.log" >&2; exit 1; }
fi
build openblas -DWITH_OPENBLAS=ON -DWITH_RUY=ON
echo "build_ct2.sh: done; ct2-translator in $dest/build-dnnl/cli and $dest/build-openblas/cli, Python in $dest/venv" >&2
