#!/usr/bin/env bash
# The documentation names only commands and options that exist. Every `nmt SUBCOMMAND ...` in a code
# block or an inline code span of README.md and docs/**/*.md must name a subcommand that `nmt help`
# lists, and every -x/--option after it must appear in `nmt SUBCOMMAND --help`; an inline span that is
# an option alone (`--beam-size`) must be an option of some subcommand. Only the `nmt ...` part of other
# tools' command lines (mpirun, cmake, curl, python) is checked, and an option written right after
# another tool's possessive name is that tool's ("Marian's `--output-sampling`", "fairseq's
# `--reg-alpha` / `--x`"). Options that are wrong on purpose, shown with the error they cause, are
# listed in invalid_examples. The README's count of the suite must be the tests CMake registers.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
command -v python3 >/dev/null || { echo "SKIP e2e_docs: python3 is not installed"; exit 77; }

invalid_examples="--max-length-r" # usage.md: an abbreviation, shown with the error it gets

check "nmt help" 0 "$NMT" help
cp "$out" help.txt
commands=$(awk '/^Commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}' help.txt)
[ -n "$commands" ] || say_fail "no commands found in the output of nmt help"
mkdir helps
for c in $commands; do
  [ "$c" = help ] && continue
  check "nmt $c --help" 0 "$NMT" "$c" --help
  cp "$out" "helps/$c"
done

docs=$(cd "$NMT_SOURCE_DIR" && { echo README.md; find docs -name '*.md' | sort; })
# shellcheck disable=SC2086
python3 - "$NMT_SOURCE_DIR" helps "$invalid_examples" $docs <<'EOF' || fail=1
import os, re, sys

root, helps_dir, invalid = sys.argv[1], sys.argv[2], set(sys.argv[3].split())
helps = {c: open(os.path.join(helps_dir, c)).read() for c in os.listdir(helps_dir)}
commands = set(helps) | {'help'}
all_help = '\n'.join(helps.values())
FLAG = re.compile(r'^[\[(]*(--?[A-Za-z][A-Za-z0-9-]*)')
SUBCOMMAND = re.compile(r'^[a-z][a-z0-9-]*$')
STOP = re.compile(r'^(<|>|\d?>|&|#)')  # redirections and comments end an nmt command's options
LAUNCHERS = {'mpirun', 'time', '/usr/bin/time', 'taskset', 'env', 'nice', 'timeout', 'perf'}
POSSESSIVE = re.compile(r"\b(\w+)'s\s*$")
SEPARATOR = re.compile(r'^\s*(/|,|,?\s*and|,?\s*or)\s*$')
errors = []
checked = {'commands': 0, 'options': 0}

def in_help(flag, text):
    return re.search(r'(?<![\w-])' + re.escape(flag) + r'(?![\w-])', text) is not None

def check_command_text(text, where):
    """Every nmt command in text (a code line or an inline span): its subcommand and options."""
    text = text.replace('\\|', '/')
    for segment in re.split(r'\|\|?|&&|;', text):
        tokens = segment.split()
        for i, token in enumerate(tokens):
            if token != 'nmt' and not token.endswith('/nmt'):
                continue
            if i > 0 and tokens[0] not in LAUNCHERS and not all('=' in t for t in tokens[:i]):
                break  # prose that mentions nmt ("... nmt needs pad=0"), not a command line
            if i + 1 >= len(tokens) or not SUBCOMMAND.match(tokens[i + 1]):
                break  # `nmt` alone, `nmt COMMAND` (a placeholder) or `nmt --help`
            sub = tokens[i + 1]
            checked['commands'] += 1
            if sub not in commands:
                errors.append(f'{where}: `nmt {sub}`: no such subcommand in `nmt help`')
                break
            for token in tokens[i + 2:]:
                if STOP.match(token):
                    break
                m = FLAG.match(token)
                checked['options'] += m is not None
                if m and sub != 'help' and m.group(1) not in invalid and not in_help(m.group(1), helps[sub]):
                    errors.append(f'{where}: `nmt {sub} {m.group(1)}`: not an option in `nmt {sub} --help`')
            break

def check_lone_flag(span, where):
    m = FLAG.match(span)
    checked['options'] += m is not None
    if m and m.group(1) not in invalid and not in_help(m.group(1), all_help):
        errors.append(f'{where}: `{m.group(1)}` is not an option of any nmt subcommand')

for doc in sys.argv[4:]:
    lines = open(os.path.join(root, doc)).read().split('\n')
    fence, paragraph, start = False, [], 0
    def prose(paragraph, start):
        text = ' '.join(paragraph)
        foreign, last_end = False, 0
        for m in re.finditer(r'(`+)(.+?)\1', text):
            lead, span = text[last_end:m.start()], m.group(2).strip()
            foreign = (POSSESSIVE.search(lead) is not None and POSSESSIVE.search(lead).group(1) != 'nmt') or \
                      (foreign and SEPARATOR.match(lead) is not None)
            last_end = m.end()
            where = f'{doc}:{start}'
            if span.startswith('-'):
                if not foreign:
                    check_lone_flag(span, where)
            else:
                check_command_text(span, where)
    continued, continued_at = '', 0
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith('```'):
            if not fence and paragraph:
                prose(paragraph, start)
                paragraph = []
            fence = not fence
            continue
        if fence:
            if not continued:
                continued_at = n
            if line.rstrip().endswith('\\'):
                continued += line.rstrip()[:-1] + ' '
                continue
            check_command_text(continued + line, f'{doc}:{continued_at}')
            continued = ''
        elif line.strip():
            if not paragraph:
                start = n
            paragraph.append(line)
        elif paragraph:
            prose(paragraph, start)
            paragraph = []
    if paragraph:
        prose(paragraph, start)

files = len(sys.argv) - 4
print(f"{checked['commands']} nmt command lines and {checked['options']} options checked in {files} files")
for e in errors:
    print('FAIL ' + e)
sys.exit(1 if errors else 0)
EOF

# The README's count of the suite: as many tests as CMake registers, one per file of each kind.
S=$NMT_SOURCE_DIR/tests
count() { find "$S/$1" -maxdepth 1 -name "$2" | wc -l | tr -d ' '; }
unit=$(count unit 'test_*.c') fuzz=$(count fuzz 'fuzz_*.c') e2e=$(count e2e 'e2e_*.sh')
want="The suite is $((unit + fuzz + e2e)) tests (\`ctest -N\`: $unit unit tests, $fuzz replays of the fuzz corpora and $e2e end-to-end tests)"
tr '\n' ' ' <"$NMT_SOURCE_DIR/README.md" | tr -s ' ' | grep -qF -- "$want" ||
  say_fail "README.md does not say: $want"
exit $fail
