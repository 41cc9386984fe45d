#!/usr/bin/env bash
# Writes the man page of `nmt` (no COMMAND) or of `nmt COMMAND` from its --help, with help2man:
#   tools/man.sh NMT_BINARY VERSION OUT.1 [COMMAND]
# The NAME line is the command's summary from `nmt help`; the page's title is NMT or NMT-COMMAND.
set -euo pipefail
nmt=$1 version=$2 out=$3 command=${4:-}
if [ -z "$command" ]; then
  name="neural machine translation with the Transformer, on the CPU"
  title=NMT
else
  name=$("$nmt" help | awk -v c="$command" '$1 == c { $1 = ""; sub(/^ +/, ""); print; exit }')
  title=NMT-$(echo "$command" | tr '[:lower:]' '[:upper:]')
fi
help2man --no-info --no-discard-stderr --version-string="$version" --name="$name" --output="$out.tmp" \
  "$nmt${command:+ $command}"
sed "s/^\.TH NMT /.TH $title /" "$out.tmp" >"$out"
rm -f "$out.tmp"
