#!/usr/bin/env bash
# The layer table of docs/ARCHITECTURE.md, checked against the code: every #include "folder/module.h"
# in src/ and cli/ stays within the folders its layer may use, no modules include each other in a
# cycle, every folder and module is in the table (and every module in the table exists), every source
# file opens with its contract comment, and none is longer than 850 lines (files stay near 800).
# Calls likewise, from the built object files (the list $NMT_OBJECTS that CMake writes): each
# undefined symbol of an object, resolved to the object that defines it, is a call between modules,
# which must stay within the folders the caller's layer may use (a call of a function of
# include/nmt/nmt.h, default visibility in src/api, is a use of `nmt`), with no cycle of calls among
# modules. Run outside a build (no $NMT_OBJECTS), the calls are not checked and it says so.
set -euo pipefail
src="${NMT_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
objects="${NMT_OBJECTS:-}"
case "$objects" in "" | /*) ;; *) objects="$PWD/$objects" ;; esac
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

# One line per call edge: "call from_folder from_module to_folder to_module symbol", from readelf's
# symbol tables (GLOBAL or WEAK; UND = used, else defined here).
calls=""
if [ -n "$objects" ]; then
  [ -r "$objects" ] || { echo "FAIL $objects (NMT_OBJECTS): cannot read the list of object files"; exit 1; }
  calls=$(while read -r o; do
    [ -n "$o" ] || continue
    [ -r "$o" ] || { echo "missing $o"; continue; }
    echo "object $o"
    readelf -sW "$o"
  done < "$objects" | awk '
    $1 == "missing" { print "FAIL " $2 ": an object file of the build is missing (build first)"; next }
    $1 == "object" {
      n = split($2, part, "/"); module = part[n]; sub(/\.(c|cc)\.o$/, "", module)
      node = part[n - 1] "/" module; next
    }
    NF >= 8 && ($5 == "GLOBAL" || $5 == "WEAK") {
      if ($7 == "UND") { users[++used] = node; names[used] = $8 }
      else { where[$8] = node; public[$8] = $6 == "DEFAULT" }
    }
    END {
      for (i = 1; i <= used; i++) {
        to = where[names[i]]
        if (to == "" || to == users[i]) continue
        if (public[names[i]] && to ~ /^api\// && users[i] !~ /^api\//) to = "nmt/nmt"  # the public header
        split(users[i], a, "/"); split(to, b, "/")
        print "call", a[1], a[2], b[1], b[2], names[i]
      }
    }')
  printf '%s\n' "$calls" | grep '^FAIL' && exit 1
  [ -n "$calls" ] || { echo "FAIL $objects: no calls between modules found in its object files"; exit 1; }
fi

printf '%s\n' "$rows" > rows.tmp.$$
printf '%s\n' "$files" > files.tmp.$$
printf '%s\n%s\n' "$edges" "$calls" > edges.tmp.$$
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
  $1 == "call" {                                      # once per pair of modules, naming one function
    from = $2; to = $4; a = from "/" $3; b = to "/" $5
    if ((a, b) in call) next
    call[a, b] = 1; call_out[a] = call_out[a] " " b
    if (to != from && !everything[from] && !may[from, to]) {
      print "FAIL " a " calls " $6 " of " b ", but " from " may not use " to " (" table ")"; bad = 1
    }
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
  # Depth-first over graph g (node -> " next next ..."), reporting each cycle as `what`.
  function visit(node, g, state, what,    n, i, next_nodes) {
    state[node] = 1; stack[++depth] = node
    n = split(g[node], next_nodes, " ")
    for (i = 1; i <= n; i++) {
      if (state[next_nodes[i]] == 1) { report_cycle(next_nodes[i], what); continue }
      if (state[next_nodes[i]] == 0) visit(next_nodes[i], g, state, what)
    }
    state[node] = 2; depth--
  }
  function report_cycle(start, what,    i, path) {
    for (i = depth; i >= 1 && stack[i] != start; i--) ;
    path = start
    for (i = i + 1; i <= depth; i++) path = path " -> " stack[i]
    print "FAIL " what " cycle: " path " -> " start; bad = 1
  }
  END {
    for (m in module_listed) if (!(m in present)) { print "FAIL " table " lists " m ", which has no file"; bad = 1 }
    for (node in out) if (include_state[node] == 0) visit(node, out, include_state, "include")
    for (node in call_out) if (call_state[node] == 0) visit(node, call_out, call_state, "call")
    exit bad
  }
' rows.tmp.$$ files.tmp.$$ edges.tmp.$$
if [ -n "$objects" ]; then
  echo "architecture: $(echo "$files" | wc -l) files and the calls between modules ($(printf '%s\n' "$calls" | wc -l) uses of another module's symbols) match $table"
else
  echo "architecture: $(echo "$files" | wc -l) files match $table (calls not checked: NMT_OBJECTS is not set, run it from ctest)"
fi
