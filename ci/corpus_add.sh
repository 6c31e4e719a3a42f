#!/usr/bin/env bash
# Adds a failing seed's bundle (e.g. from the nightly's artifact) to the regression corpus, once
# the bug it found is fixed: writes stress/corpus/seed-<S>.json (the bundle's seed and run options
# as a corpus entry, with WHY), checks that this checkout's build passes it, and adds its row to
# stress/corpus/README.md. Commit both files afterwards.
#
#   bash ci/corpus_add.sh BUNDLE 'why: what it found, and the commit that fixed it'
#
# Uses build/default/stress/readyport-stress (READYPORT_STRESS names another), built with
# `cmake --build --preset default --target readyport-stress` when missing. Refuses a seed that is
# already in the corpus, a file that is not a bundle, and a seed that still fails here (the entry
# is then removed again: fix the bug first). Exit status: 0 added; 1 the seed still fails; 2 bad
# arguments, a bad bundle, an existing entry or no driver.
set -uo pipefail
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
if [ "$#" -ne 2 ] || [ -z "$2" ]; then
  echo "usage: bash ci/corpus_add.sh BUNDLE 'why'" >&2
  exit 2
fi
bundle="$1"
why="$2"
root="$(cd "$(dirname "$0")/.." && pwd)" || exit 2
if [ ! -f "$bundle" ] || ! grep -q '^  "format": "readyport-stress-bundle",' "$bundle"; then
  echo "corpus_add: $bundle is not a readyport-stress bundle" >&2
  exit 2
fi
seed=$(sed -n 's/^  "seed": \([0-9][0-9]*\),$/\1/p' "$bundle" | head -n 1)
if [ -z "$seed" ]; then
  echo "corpus_add: $bundle names no seed" >&2
  exit 2
fi
entry="$root/stress/corpus/seed-$seed.json"
if [ -e "$entry" ]; then
  echo "corpus_add: $entry exists already" >&2
  exit 2
fi
# The run options: the bundle's top-level "options" object, as written (two-space indent).
options=$(awk '/^  "options": \{/ { on = 1 } on { print } on && /^  \}/ { exit }' "$bundle")
if [ -z "$options" ]; then
  echo "corpus_add: $bundle has no options object" >&2
  exit 2
fi
escaped_why=$(printf '%s' "$why" | sed 's/\\/\\\\/g; s/"/\\"/g')
commit=$(sed -n 's/^    "commit": "\([^"]*\)",*$/\1/p' "$bundle" | head -n 1)
{
  echo "{"
  echo '  "format": "readyport-stress-corpus",'
  echo '  "format_version": 1,'
  echo "  \"seed\": $seed,"
  echo "${options%,},"
  echo '  "expect_canary": "",'
  echo '  "signature": "",'
  echo "  \"why\": \"$escaped_why (a nightly bundle of commit ${commit:-unknown})\""
  echo "}"
} >"$entry"
driver="${READYPORT_STRESS:-$root/build/default/stress/readyport-stress}"
if [ ! -x "$driver" ]; then
  (cd "$root" && cmake --preset default >/dev/null && cmake --build --preset default \
    --target readyport-stress >/dev/null) || { rm -f "$entry"; echo "corpus_add: no driver" >&2; exit 2; }
fi
if ! "$driver" --replay "$entry" >"$root/build/corpus_add.log" 2>&1; then
  rm -f "$entry"
  tail -n 5 "$root/build/corpus_add.log" >&2
  echo "corpus_add: seed $seed does not pass in this build (or the entry is unreadable): not" \
    "added (log: build/corpus_add.log)" >&2
  exit 1
fi
row="| \`seed-$seed.json\` | $seed | ${commit:-unknown} (nightly) | $why |"
readme="$root/stress/corpus/README.md"
# Before the canaries' row, the last of the table.
awk -v row="$row" '/^\| `canary-<name>\.json`/ && !done { print row; done = 1 } { print }' \
  "$readme" >"$readme.new" && mv "$readme.new" "$readme"
echo "corpus_add: added $entry (passes here) and its row in stress/corpus/README.md"
