#!/usr/bin/env bash
# The same figures side by side: from readyport-stress JSON summaries (`--json FILE`, one per run,
# e.g. one over the fake and one over Windows), one Markdown table with a row per figure and a
# column per run, so a difference between the fake and Windows is visible at a glance. Written to
# $GITHUB_STEP_SUMMARY (stdout when that is unset). ci/side_by_side.ps1 is the same table in
# PowerShell for the Windows runners (no jq there); keep the two in step.
#
#   bash ci/side_by_side.sh [--title TEXT] [LABEL=]FILE...
#   bash ci/side_by_side.sh fake=build/stress-windows/fake.json windows=build/stress-windows/windows.json
#
# A column is headed LABEL, else the summary's "os", else the file's name. Rows (the summary's
# "figures" object, docs/ci.md): seeds run (failed), notifications, port calls, port calls per
# notification (three decimals, as the driver prints it), REMOVE OR-ed into another packet,
# REMOVE in a packet of its own,
# stale packets. A figure the summary lacks shows "-"; a file that is missing or not a JSON
# summary gives a column of "-" and a note under the table (a run that was skipped or crashed
# before writing it), never a failure.
# Needs jq (on GitHub's Ubuntu runners and in Debian's jq package). Limits: at most 8 columns.
# Exit status: 0, or 2 on bad arguments or without jq.
set -euo pipefail

columns_max=8
summary="${GITHUB_STEP_SUMMARY:-/dev/stdout}"

die() {
  echo "side_by_side: $*" >&2
  exit 2
}

title="The same figures, side by side"
if [ "${1:-}" = "--title" ]; then
  [ "$#" -ge 2 ] || die "--title needs a value"
  title="$2"
  shift 2
fi
[ "$#" -ge 1 ] || die "usage: side_by_side.sh [--title TEXT] [LABEL=]FILE..."
[ "$#" -le "$columns_max" ] || die "at most $columns_max summaries, not $#"
command -v jq >/dev/null 2>&1 || die "needs jq (apt-get install jq)"

# One line of tab-separated cells per summary, in the order of the rows below: os, seeds run,
# failed, notifications, port calls, port calls per notification, REMOVE OR-ed, REMOVE separate,
# stale packets. Anything missing or not a number is "-".
# shellcheck disable=SC2016  # jq's program, not the shell's
program='
  def fixed3: if type == "number" then ((. * 1000 | round) as $c
      | ($c / 1000 | floor | tostring) + "." + ($c % 1000 | tostring | ("00" + .)[-3:]))
    else "-" end;
  def cell: if type == "number" and . == floor then tostring else fixed3 end;
  (.figures // {}) as $f
  | [ (.os // "" | tostring), (.seeds_run | cell), (.failed | cell),
      ($f.notifications | cell), ($f.port_calls | cell), ($f.port_calls_per_notification | fixed3),
      ($f.remove_ored_with_in | cell), ($f.remove_separate | cell), ($f.stale_packets | cell) ]
  | @tsv'

labels=()
rows=()
notes=()
for argument in "$@"; do
  label=""
  file="$argument"
  if [[ "$argument" == *=* ]]; then
    label="${argument%%=*}"
    file="${argument#*=}"
  fi
  [ -n "$file" ] || die "an empty file name in '$argument'"
  line=""
  if [ -f "$file" ]; then
    line=$(jq -r "$program" "$file" 2>/dev/null | head -n 1 || true)
  fi
  if [ -z "$line" ]; then
    if [ -f "$file" ]; then notes+=("${label:-$file}: \`$file\` is not a readyport-stress JSON summary")
    else notes+=("${label:-$file}: no summary (\`$file\` is missing: the run was skipped or ended before writing it)"); fi
    line=$(printf '%s' "-"; for _ in 1 2 3 4 5 6 7 8; do printf '\t-'; done)
  fi
  os="${line%%$'\t'*}"
  if [ -z "$label" ]; then
    if [ -n "$os" ] && [ "$os" != "-" ]; then label="$os"; else label=$(basename "$file"); fi
  fi
  labels+=("$label")
  rows+=("$line")
done

# cells INDEX: the INDEX-th cell (1-based) of every column, as " a | b |".
cells() {
  local index="$1" line
  for line in "${rows[@]}"; do
    printf ' %s |' "$(cut -f "$index" <<<"$line")"
  done
}

# Two cells of one column joined: "20 (1)" for seeds run and failed.
seeds_cells() {
  local line run failed
  for line in "${rows[@]}"; do
    run=$(cut -f 2 <<<"$line")
    failed=$(cut -f 3 <<<"$line")
    printf ' %s (%s) |' "$run" "$failed"
  done
}

{
  echo "### $title"
  echo
  printf '| figure |'
  for label in "${labels[@]}"; do printf ' %s |' "$label"; done
  echo
  printf '|---|'
  for _ in "${labels[@]}"; do printf -- '---:|'; done
  echo
  echo "| seeds run (failed) |$(seeds_cells)"
  echo "| notifications |$(cells 4)"
  echo "| port calls |$(cells 5)"
  echo "| port calls per notification |$(cells 6)"
  echo "| REMOVE OR-ed into another packet |$(cells 7)"
  echo "| REMOVE in a packet of its own |$(cells 8)"
  echo "| stale packets |$(cells 9)"
  echo
  for note in "${notes[@]+"${notes[@]}"}"; do echo "- $note"; done
  if [ "${#notes[@]}" -gt 0 ]; then echo; fi
} >>"$summary"
