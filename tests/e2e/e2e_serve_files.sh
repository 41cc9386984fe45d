#!/usr/bin/env bash
# `nmt serve`'s POST /translate_file with LibreTranslate's document formats, posted as multipart as its
# web page and clients post them, on the tiny model: .docx, .pptx, .odt, .odp, .epub (built by
# tests/support/office_files.py with Python's zipfile) and .srt come back as well-formed archives of the
# same entries in the same order (an ODF's mimetype first and stored; every other entry unchanged;
# Word's field codes kept), each paragraph or cue translated as `nmt translate` translates its text
# (subtitles wrapped at 40 columns as textwrap.fill wraps them), with the format's Content-Type and the
# uploaded name; /frontend/settings lists the formats in LibreTranslate's order; damaged files are
# refused with a 400 naming what is wrong.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
serve_test=e2e_serve_files
command -v python3 >/dev/null || { echo "SKIP $serve_test: python3 is not installed"; exit 0; }
. "$NMT_SOURCE_DIR/tests/support/serve_harness.sh"
files="$NMT_SOURCE_DIR/tests/support/office_files.py"
python3 "$files" make . || { say_fail "office_files.py make"; exit 1; }

start main
code="$(curl -s -o resp -w '%{http_code}' "$url/frontend/settings")"
grep -q '"supportedFilesFormat":\[".txt",".odt",".odp",".docx",".pptx",".epub",".html",".srt"\]' resp ||
  say_fail "frontend settings: $(cat resp)"

declare -A types=([docx]=application/vnd.openxmlformats-officedocument.wordprocessingml.document
  [pptx]=application/vnd.openxmlformats-officedocument.presentationml.presentation
  [odt]=application/vnd.oasis.opendocument.text [odp]=application/vnd.oasis.opendocument.presentation
  [epub]=application/epub+zip [srt]=application/x-subrip)
for ext in docx pptx odt odp epub srt; do
  code="$(curl -s -o resp -w '%{http_code}' "$url/translate_file" -F "file=@a.$ext" -F source=en -F target=de)"
  file_url="$(sed -n 's|^{"translatedFileUrl":"\(http://127\.0\.0\.1:[0-9]*/download_file/[0-9a-f]\{32\}\.a\.'$ext'\)"}$|\1|p' resp)"
  [ "$code" = 200 ] && [ -n "$file_url" ] || { say_fail "$ext: $code $(cat resp)"; continue; }
  curl -s -D headers -o "got.$ext" "$file_url"
  grep -qi "^Content-Type: ${types[$ext]}"$'\r'"\$" headers || say_fail "$ext: Content-Type: $(cat headers)"
  grep -qi "^Content-Disposition: attachment; filename=\"a.$ext\"" headers || say_fail "$ext: $(cat headers)"
  python3 "$files" check "a.$ext" "got.$ext" "src.$ext" "out.$ext" || { say_fail "$ext: not well-formed or changed"; continue; }
  [ -s "src.$ext" ] || say_fail "$ext: no text found"
  "$NMT" translate -m $M --threads 1 -q <"src.$ext" >"want.$ext"
  if [ $ext = srt ]; then # wrapped as textwrap.fill(text, width=40), lines joined with | by the checker
    python3 -c 'import sys, textwrap; [print(textwrap.fill(l.rstrip("\n"), width=40).replace("\n", "|")) for l in sys.stdin]' \
      <"want.$ext" >"want-wrapped.$ext" && mv "want-wrapped.$ext" "want.$ext"
  fi
  cmp -s "want.$ext" "out.$ext" || say_fail "$ext: the translations differ from nmt translate's:
$(paste "src.$ext" "want.$ext" "out.$ext")"
done

# The access log counts a document's characters in its paragraphs, not its bytes.
chars="$(tr -d '\n' <src.docx | wc -m)"
grep -q "\"path\":\"/translate_file\",\"status\":200,\"lines\":5,\"characters\":$chars," main.err ||
  say_fail "the access log of the .docx ($chars characters): $(grep -m1 translate_file main.err)"

# Source auto: the language is detected from the document's paragraphs (not its bytes), and the same
# file comes back; a document without text comes back as it was.
code="$(curl -s -o resp -w '%{http_code}' "$url/translate_file" -F file=@a.docx -F source=auto -F target=de)"
[ "$code" = 200 ] && curl -s -o auto.docx "$(sed -n 's|^{"translatedFileUrl":"\(.*\)"}$|\1|p' resp)" && cmp -s auto.docx got.docx ||
  say_fail "a .docx from source auto: $code $(cat resp)"
python3 -c 'import zipfile; zipfile.ZipFile("blank.odt", "w").writestr("content.xml", "<o><text:p> - </text:p></o>")'
for source in en auto; do
  code="$(curl -s -o resp -w '%{http_code}' "$url/translate_file" -F file=@blank.odt -F source=$source -F target=de)"
  [ "$code" = 200 ] && curl -s -o got-blank.odt "$(sed -n 's|^{"translatedFileUrl":"\(.*\)"}$|\1|p' resp)" &&
    python3 -c 'import sys, zipfile; sys.exit(zipfile.ZipFile("got-blank.odt").read("content.xml") != b"<o><text:p> - </text:p></o>")' ||
    say_fail "a document without text, source $source: $code $(cat resp)"
done

# Damaged files: a 400 naming the file and what is wrong, never a crash.
printf 'not a zip archive at all, but long enough' >bad.docx
code="$(curl -s -o resp -w '%{http_code}' "$url/translate_file" -F file=@bad.docx -F source=en -F target=de)"; body="$(cat resp)"
expect "a .docx that is no archive" 400 'bad.docx: not a zip archive (no end of central directory)'
python3 - <<'PY'
import zipfile
with zipfile.ZipFile("broken.docx", "w") as z:
    z.writestr("word/document.xml", '<w:document xmlns:w="w">\n<w:body><w:p><w:r><w:t>the cat</w:r></w:p></w:body></w:document>')
with zipfile.ZipFile("empty.odt", "w") as z:
    z.writestr("styles.xml", "<x/>")
PY
code="$(curl -s -o resp -w '%{http_code}' "$url/translate_file" -F file=@broken.docx -F source=en -F target=de)"; body="$(cat resp)"
expect "a .docx whose XML is broken" 400 'broken.docx: word/document.xml: line 2: </w:r> closes <w:t>'
code="$(curl -s -o resp -w '%{http_code}' "$url/translate_file" -F file=@empty.odt -F source=en -F target=de)"; body="$(cat resp)"
expect "an .odt without content.xml" 400 'empty.odt: no content.xml in the archive'
printf '1\nno timing\ntext\n' >bad.srt
code="$(curl -s -o resp -w '%{http_code}' "$url/translate_file" -F file=@bad.srt -F source=en -F target=de)"; body="$(cat resp)"
expect "an .srt without timings" 400 'bad.srt: line 2: expected a timing line'
printf 'x' >doc.pdf
code="$(curl -s -o resp -w '%{http_code}' "$url/translate_file" -F file=@doc.pdf -F source=en -F target=de)"; body="$(cat resp)"
expect "a .pdf file" 400 '{"error":"Invalid request: file format not supported"}'
printf 'the cat\0' >nul.txt
code="$(curl -s -o resp -w '%{http_code}' "$url/translate_file" -F file=@nul.txt -F source=en -F target=de)"; body="$(cat resp)"
expect "a .txt with a NUL byte" 400 'nul.txt: a NUL byte'
kill -0 $server 2>/dev/null || say_fail "the server died"
exit $fail
