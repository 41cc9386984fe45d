#!/usr/bin/env bash
# Downloads Multi30k (task 1, raw: English, German, French, Czech captions) into a folder of your choice
# and prints the command that trains on it.
#
#   tools/fetch-multi30k.sh DIR
#
# Source: the public multi30k/dataset repository on GitHub, data/task1/raw/, pinned to one commit so
# that every download is the same data. Each file is fetched gzipped, unpacked and checked (line count
# and SHA-256) before it is moved into DIR under its final name, so DIR never holds a partial file and
# running the script again only fetches what is missing or damaged.
#
#   DIR/train.{en,de,fr,cs}              29,000 lines each
#   DIR/val.{en,de,fr,cs}                 1,014
#   DIR/test_2016_flickr.{en,de,fr,cs}    1,000
#
# Needs bash, curl or wget, gzip, and sha256sum or shasum. MULTI30K_URL replaces the source folder of
# the .gz files (a mirror; file:///path works with curl).
# Cite: Elliott, Frank, Sima'an, Specia (2016), "Multi30K: Multilingual English-German Image
# Descriptions", Proceedings of the 5th Workshop on Vision and Language.
set -euo pipefail

commit=a3d2e0d26b56f3846f66a952536ffed4e401d05a
base="${MULTI30K_URL:-https://raw.githubusercontent.com/multi30k/dataset/$commit/data/task1/raw}"

# file  lines  SHA-256 of the unpacked file
manifest="
train.en 29000 460a15fbd157e34a7a9957ee388c1ca247fe47af3ef25fb50442af6c274e0fc6
train.de 29000 2c2b73fd2b548fbcde3a875e0a78d6ee94d498bfdee6bd3eae3945779e9ddf72
train.fr 29000 5925a3c18f1587b6b54b87743106e6e8ab93618edb6f65d19eac0621f853a10d
train.cs 29000 2be68b38c8d586ff4f54eb13cc6e1baaaa053695b3f070d3038303a47f2268da
val.en 1014 1f2a23d992769b5b3d209b0a10dd0b77c08cceb1f20dfb97ed0aafa49d107227
val.de 1014 660e09eb7e1da2f856ea13ee5ad3cf6d36b3d5b0b733c857e94c5747a3dfc660
val.fr 1014 5304e444d842e962b2dda4d816b70b22a1765b15401642b7ca37a67477e708dc
val.cs 1014 d53827e469b0a1ca8d57e9e26b2b64c4bc4b33f5479c7b03ae87ae5c882c3e33
test_2016_flickr.en 1000 399a4382932c1aadd3ceb9bef1008d388a64c76d4ae4e9d4728c6f4301cac182
test_2016_flickr.de 1000 4be6b5b3236b79c25475c6bb829800a7ce559e9ba7a1f6c2394fe4d40be46d16
test_2016_flickr.fr 1000 cb3160d69b002bb638e66cc7612fcd56cb0af82eadc9c142dedc438afb885ef6
test_2016_flickr.cs 1000 45adb85f688de8407fddcbe1b36dca15d12aab868149b337e2576f2d6d2ff8d8
"

usage() { echo "usage: tools/fetch-multi30k.sh DIR   (downloads Multi30k into DIR)"; }
if [ $# -ne 1 ] || [ -z "$1" ]; then
  usage >&2
  exit 2
fi
case "$1" in -h | --help) usage; exit 0 ;; esac

if command -v curl >/dev/null 2>&1; then
  download() { curl --fail --silent --show-error --location --retry 3 --output "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
  download() { wget --quiet --tries=3 --output-document="$2" "$1"; }
else
  echo "fetch-multi30k: needs curl or wget" >&2
  exit 1
fi
if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
  echo "fetch-multi30k: needs sha256sum or shasum" >&2
  exit 1
fi

mkdir -p "$1"
dir=$(cd "$1" && pwd)
tmp=$(mktemp -d "$dir/.fetch-multi30k.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# ok FILE LINES SHA256: the file is there, whole and unchanged.
ok() { [ -f "$1" ] && [ "$(wc -l <"$1" | tr -d ' ')" = "$2" ] && [ "$(sha256 "$1")" = "$3" ]; }

fetched=0
while read -r name lines sum; do
  [ -n "$name" ] || continue
  if ok "$dir/$name" "$lines" "$sum"; then
    echo "fetch-multi30k: $name is already there"
    continue
  fi
  echo "fetch-multi30k: fetching $name"
  if ! download "$base/$name.gz" "$tmp/$name.gz"; then
    echo "fetch-multi30k: cannot download $base/$name.gz" >&2
    exit 1
  fi
  if ! gzip -dc "$tmp/$name.gz" >"$tmp/$name"; then
    echo "fetch-multi30k: $name.gz is not a valid gzip file" >&2
    exit 1
  fi
  got_lines=$(wc -l <"$tmp/$name" | tr -d ' ')
  if [ "$got_lines" != "$lines" ]; then
    echo "fetch-multi30k: $name has $got_lines lines, expected $lines" >&2
    exit 1
  fi
  got_sum=$(sha256 "$tmp/$name")
  if [ "$got_sum" != "$sum" ]; then
    echo "fetch-multi30k: $name has SHA-256 $got_sum, expected $sum (a damaged or different download)" >&2
    exit 1
  fi
  mv -f "$tmp/$name" "$dir/$name"
  fetched=$((fetched + 1))
done <<<"$manifest"

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
echo "fetch-multi30k: $dir holds Multi30k ($fetched file(s) fetched, all 12 checked)."
echo "Train English→German (English→French: configs/multi30k-small-fr.yaml) with:"
printf '  cd %q && build/bin/nmt train configs/multi30k-small.yaml --set data.root=%q\n' "$repo" "$dir"
