#!/usr/bin/env bash
# The house rule on comments: code says what is, not which issue asked for it. Fails on any
# "issue <number>" (any case) in the tracked C++ sources, CMake files and scripts; the issue
# tracker and CHANGELOG.md hold the history.
#
#   bash ci/comment_check.sh            # the tracked files
#   bash ci/comment_check.sh --plant    # a planted "Issue 7" comment must fail the check
#
# Exit status: non-zero when such a comment is found (or, with --plant, when the planted one is
# not caught).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

pattern='[Ii][Ss][Ss][Uu][Ee][ ]+#?[0-9]+'
files=$(git ls-files '*.cpp' '*.hpp' '*.cmake' 'CMakeLists.txt' '*/CMakeLists.txt' '*.sh' '*.ps1' |
  grep -v '^ci/comment_check.sh$')

# scan FILE...: prints the lines that cite an issue number and how many; fails when any does.
scan() {
  local found count
  found=$(grep -En "$pattern" "$@" || true)
  count=$(printf '%s' "$found" | grep -c . || true)
  if [ "$count" -ne 0 ]; then
    printf '%s\n' "$found"
    echo "comment_check: $count line(s) cite an issue number; say what the code does instead"
    return 1
  fi
  echo "comment_check: $# files, no issue numbers in comments"
}

if [ "${1:-}" = "--plant" ]; then
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  printf '// Issue 7, item 2: planted.\nint planted = 0;\n' >"$dir/planted.cpp"
  # shellcheck disable=SC2086 # one file name per word: the tracked paths have no spaces
  if scan $files "$dir/planted.cpp"; then
    echo "comment_check: the planted issue number was not caught"
    exit 1
  fi
  echo "comment_check: the planted issue number was caught"
  exit 0
fi
# shellcheck disable=SC2086 # one file name per word: the tracked paths have no spaces
scan $files
