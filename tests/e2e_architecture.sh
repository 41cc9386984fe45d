#!/usr/bin/env bash
# The layer table of docs/ARCHITECTURE.md, checked against the code: every #include "folder/module.h"
# in src/ and cli/ stays within the folders its layer may use, no modules include each other in a
# cycle, every folder and module is in the table (and every module in the table exists), every source
# file opens with its contract comment, and none is longer than 850 lines (files stay near 800).
set -euo pipefail
src="${NMT_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
cd "$src"
table="docs/ARCHITECTURE.md"
max_lines=850

# "folder|modules|may use" per row of the table's Layers section, backquotes stripped.
rows=$(awk '/^## /{in_layers = ($0 == "## Layers")} in_layers && /^\| `/' "$table" |
       awk -F'|' '{gsub(/`/, ""); for (i = 2; i <= 5; i++) gsub(/^ +| +$/, "", $i); print $2 "|" $3 "|" $5}')
[ -n "$rows" ] || { echo "FAIL $table: no rows in its Layers section"; exit 1; }

files=$( { ls src/*/*.c src/*/*.cc src/*/*.h cli/*.c cli/*.h 2>/dev/null || true; } | sort)

# One line per include edge: "file folder module included_folder included_module".
edges=$(for f in $files; do
  folder=$(basename "$(dirname "$f")"); module=$(basename "$f"); module=${module%.*}
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
    case "$inc" in
      */*) echo "$f $folder $module ${inc%%/*} $(basename "${inc%.*}")" ;;
      *) echo "$f $folder $module $folder ${inc%.*}" ;;
    esac
  done
done)

printf '%s\n' "$rows" > rows.tmp.$$
printf '%s\n' "$files" > files.tmp.$$
printf '%s\n' "$edges" > edges.tmp.$$
trap 'rm -f rows.tmp.$$ files.tmp.$$ edges.tmp.$$' EXIT

awk -v max_lines="$max_lines" -v table="$table" '
  FILENAME == ARGV[1] {
    split($0, col, "|"); folder = col[1]; listed[folder] = 1
    n = split(col[2], mods, " ")
    for (i = 1; i <= n; i++)                          # "cmd_*" stands for every module it prefixes
      if (mods[i] ~ /\*$/) prefix[folder] = prefix[folder] " " substr(mods[i], 1, length(mods[i]) - 1)
      else module_listed[folder "/" mods[i]] = 1
    everything[folder] = (col[3] ~ /every folder/)
    n = split(col[3], uses, " "); for (i = 1; i <= n; i++) may[folder, uses[i]] = 1
    next
  }
  FILENAME == ARGV[2] {
    file = $0; n = split(file, part, "/"); folder = part[n - 1]; module = part[n]; sub(/\.[a-z]+$/, "", module)
    if (!(folder in listed)) { print "FAIL " file ": folder " folder "/ is not in " table; bad = 1 }
    else if (!((folder "/" module) in module_listed) && !prefixed(folder, module)) {
      print "FAIL " file ": module " module " is not listed under " folder " in " table; bad = 1
    }
    present[folder "/" module] = 1
    lines = 0; first = ""
    while ((getline line < file) > 0) { if (lines == 0) first = line; lines++ }
    close(file)
    if (first !~ /^(\/\*|\/\/)/) { print "FAIL " file ": does not open with a comment stating its job"; bad = 1 }
    if (lines > max_lines) { print "FAIL " file ": " lines " lines (at most " max_lines ")"; bad = 1 }
    next
  }
  NF == 5 {
    file = $1; from = $2; to = $4
    if (to == "nmt" && $5 == "version") next          # the generated version header, for everyone
    if (to != from && !everything[from] && !may[from, to]) {
      print "FAIL " file ": includes " to "/" $5 ".h, but " from " may not use " to " (" table ")"; bad = 1
    }
    a = from "/" $3; b = to "/" $5
    if (a != b && !((a, b) in edge)) { edge[a, b] = 1; out[a] = out[a] " " b }
  }
  function prefixed(folder, module,    n, i, p) {
    n = split(prefix[folder], p, " ")
    for (i = 1; i <= n; i++) if (index(module, p[i]) == 1) return 1
    return 0
  }
  function visit(node,    n, i, next_nodes) {
    state[node] = 1; stack[++depth] = node
    n = split(out[node], next_nodes, " ")
    for (i = 1; i <= n; i++) {
      if (state[next_nodes[i]] == 1) { report_cycle(next_nodes[i]); continue }
      if (state[next_nodes[i]] == 0) visit(next_nodes[i])
    }
    state[node] = 2; depth--
  }
  function report_cycle(start,    i, path) {
    for (i = depth; i >= 1 && stack[i] != start; i--) ;
    path = start
    for (i = i + 1; i <= depth; i++) path = path " -> " stack[i]
    print "FAIL include cycle: " path " -> " start; bad = 1
  }
  END {
    for (m in module_listed) if (!(m in present)) { print "FAIL " table " lists " m ", which has no file"; bad = 1 }
    for (node in out) if (state[node] == 0) visit(node)
    exit bad
  }
' rows.tmp.$$ files.tmp.$$ edges.tmp.$$ && echo "architecture: $(echo "$files" | wc -l) files match $table"
