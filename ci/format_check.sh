#!/usr/bin/env bash
# The house format (.clang-format): fails when clang-format-19 would change any tracked
# C++ file, or when a line of one is longer than 100 columns (clang-format cannot break every
# line: long string literals and URLs stay).
#
#   bash ci/format_check.sh          # check; prints each offending file (and line)
#   bash ci/format_check.sh --fix    # rewrite the C++ files in place, then check the columns
#
# Needs clang-format-19 (ci/setup.sh installs it). Files: `git ls-files` of the checkout (or a
# find over the source directories when this is not a git checkout). Exit status: non-zero when
# anything is unformatted or too long, or the tool is missing.
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1

columns_max=100
tool="${CLANG_FORMAT:-clang-format-19}"
if ! command -v "$tool" >/dev/null 2>&1; then
  echo "format: $tool not found (bash ci/setup.sh installs it)"
  exit 1
fi

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t cpp_files < <(git ls-files '*.cpp' '*.hpp' '*.h')
else
  dirs=(core fakes properties stress tests examples ports fuzz)
  mapfile -t cpp_files < <(find "${dirs[@]}" -name '*.cpp' -o -name '*.hpp' -o -name '*.h' | sort)
fi

if [ "${1:-}" = "--fix" ]; then
  "$tool" -i "${cpp_files[@]}"
fi

unformatted=0
for file in "${cpp_files[@]}"; do
  if ! "$tool" --dry-run --Werror "$file" >/dev/null 2>&1; then
    echo "format: $file is not formatted (run: $tool -i $file)"
    unformatted=$((unformatted + 1))
  fi
done

long_lines=$(awk -v max="$columns_max" \
  'length($0) > max { printf "%s:%d: %d columns\n", FILENAME, FNR, length($0) }' "${cpp_files[@]}")
long_count=0
if [ -n "$long_lines" ]; then
  echo "$long_lines"
  long_count=$(wc -l <<<"$long_lines")
fi

echo "format: ${#cpp_files[@]} C++ files: $unformatted unformatted, $long_count lines over" \
  "$columns_max columns ($($tool --version | head -n 1))"
[ "$unformatted" -eq 0 ] && [ "$long_count" -eq 0 ]
