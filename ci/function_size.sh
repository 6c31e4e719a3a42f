#!/usr/bin/env bash
# The house limit on function length: no function of the non-test C++ sources longer than 70
# lines. Test sources (a file with a TEST, TEST_F, TEST_P, RC_GTEST_PROP or BENCHMARK, or under
# tests/) are left out. A definition begins at a line in column 0 that is neither a comment, a
# preprocessor line, a type, a namespace nor a declaration (one that reaches ';' before '{'), and
# ends at the next '}' in column 0 (the house format puts both there); so are the member
# functions defined in a class body opened in column 0 (their lines indented by two).
#
#   bash ci/function_size.sh                 # the tracked sources
#   bash ci/function_size.sh --files F...    # these files only (how the planted check runs)
#   bash ci/function_size.sh --plant         # a planted 71-line function must fail the check
#
# Prints the five longest functions and each one over the limit. Exit status: non-zero when a
# function is over the limit (or, with --plant, when the planted one is not found).
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1

limit=70
if [ "${1:-}" = "--plant" ]; then
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  {
    echo "int planted() {"
    for i in $(seq 1 69); do echo "  int v$i = $i;"; done
    echo "}"
  } >"$dir/planted.cpp"
  if bash "$0" --files "$dir/planted.cpp" >"$dir/out.txt" 2>&1; then
    cat "$dir/out.txt"; echo "function_size: the planted 71-line function was not caught"; exit 1
  fi
  grep "over $limit" "$dir/out.txt"
  echo "function_size: the planted 71-line function was caught"
  exit 0
fi

if [ "${1:-}" = "--files" ]; then
  shift
  files=("$@")
else
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp' | grep -v '^tests/')
fi

python3 - "$limit" "${files[@]}" <<'PY'
import re
import sys

limit, paths = int(sys.argv[1]), sys.argv[2:]
skip = ('//', '#', '}', 'namespace', 'using', 'struct', 'class', 'enum', 'inline constexpr',
        'constexpr', 'static_assert', 'template', 'extern', 'typedef', ')', '{', 'public',
        'private', 'protected', 'friend', 'static constexpr', 'return')
test_marker = re.compile(r'^\s*(TEST|TEST_F|TEST_P|RC_GTEST_PROP|BENCHMARK)\(', re.M)
type_open = re.compile(r'^(class|struct|union)\b[^;]*\{\s*$')


def definition_end(lines, i, indent):
    """The line that closes a definition beginning at line i, or None for a declaration."""
    j = i
    while j < len(lines):
        code = re.sub(r'=\s*\{\}', '', lines[j].split('//')[0])  # '= {}' opens nothing
        brace, semi = code.find('{'), code.find(';')
        if brace >= 0 and (semi < 0 or brace < semi):
            break
        if semi >= 0:
            return None
        j += 1
    else:
        return None
    signature = ' '.join(lines[i:j + 1]).split('{')[0]
    if '(' not in signature or '=' in signature.split('(')[0]:
        return None  # a variable with a braced initializer
    if lines[j].rstrip().endswith('}') and lines[j].count('{') == lines[j].count('}'):
        return j  # a one-line definition
    close = ' ' * indent + '}'
    k = j + 1
    while k < len(lines) and not (lines[k].startswith(close) and
                                  not lines[k][indent + 1:indent + 2].isspace() and
                                  len(lines[k]) > indent and lines[k][indent] == '}'):
        k += 1
    return k


found = []
measured_files = 0
for path in paths:
    text = open(path, encoding='utf-8').read()
    if test_marker.search(text):
        continue
    measured_files += 1
    lines = text.split('\n')
    in_type = False  # inside a class body opened in column 0: members are indented by two
    i = 0
    while i < len(lines):
        line = lines[i]
        if not in_type and type_open.match(line):
            in_type = True
            i += 1
            continue
        if in_type and line.startswith('}'):
            in_type = False
            i += 1
            continue
        indent = 2 if in_type else 0
        body = line[indent:]
        if (not line.startswith(' ' * indent) or not body or body[0].isspace() or
                body.startswith(skip)):
            i += 1
            continue
        end = definition_end(lines, i, indent)
        if end is None:
            i += 1
            continue
        found.append((end - i + 1, f"{path}:{i + 1}", body[:70]))
        i = end + 1
found.sort(key=lambda f: (-f[0], f[1]))
for length, where, head in found[:5]:
    print(f"{length:4d} lines  {where}  {head}")
over = [f for f in found if f[0] > limit]
for length, where, head in over:
    print(f"function_size: {where}: {length} lines, over {limit}: {head}")
print(f"function_size: {len(found)} functions in {measured_files} files, the longest "
      f"{found[0][0] if found else 0} lines (at most {limit}); {len(over)} over")
sys.exit(1 if over else 0)
PY
