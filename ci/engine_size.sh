#!/usr/bin/env bash
# The engine's size budget: its own sources (core/src without the Windows backend, status.cpp and
# os_names.cpp) at most 1,600 lines, and no function longer than 70 lines. Issue 12 set 1,500
# for the reshaped engine (1,488 then); issue 23 raised it once, openly, for what it asked the
# engine to do (the socket index kept until the close, a lost REMOVE found by a probe: 1,556),
# rather than meet the old number by squeezing code. Raise it again only with such a reason.
#
#   bash ci/engine_size.sh
#
# Prints the line count per file and in all, and the five longest functions (a function runs
# from its definition's first line at column 0 to its closing brace at column 0: the house
# format puts both there). Exit status: non-zero when a budget is exceeded.
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1

lines_max=1600
function_lines_max=70
files=(core/src/engine*.cpp core/src/engine_internal.hpp core/src/slot_machine.cpp
  core/include/readyport/internal/slot_machine_hot.hpp
  core/src/slot_table.cpp)

wc -l "${files[@]}"
total=$(cat "${files[@]}" | wc -l)

python3 - "$function_lines_max" "${files[@]}" <<'PY'
import sys
limit, paths = int(sys.argv[1]), sys.argv[2:]
skip = ('//', '#', '}', 'namespace', 'using', 'struct', 'class', 'enum', 'inline constexpr',
        'constexpr', 'static_assert', 'template')
found = []
for path in paths:
    lines = open(path).read().split('\n')
    start = None
    for i, line in enumerate(lines):
        if start is None:
            if line and not line[0].isspace() and not line.startswith(skip):
                if '{' in line and line.rstrip().endswith('}'):
                    found.append((1, f"{path}:{i + 1}", line[:60]))  # a one-line definition
                    continue
                start = i
        elif line.startswith('}'):
            found.append((i - start + 1, f"{path}:{start + 1}", lines[start][:60]))
            start = None
        elif line.endswith(';') and not line[0].isspace() and '{' not in ''.join(lines[start:i + 1]):
            start = None  # a declaration, not a definition
found.sort(reverse=True)
for length, where, text in found[:5]:
    print(f"{length:4d} lines  {where}  {text}")
print(f"engine size: {len(found)} functions, the longest {found[0][0]} lines (at most {limit})")
sys.exit(0 if found[0][0] <= limit else 1)
PY
echo "engine size: $total lines in all (at most $lines_max)"
[ "$total" -le "$lines_max" ]
