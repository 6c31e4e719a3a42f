#!/usr/bin/env bash
# compare_traces.sh DIR_A DIR_B: runs readyport-sim-trace from two builds over a fixed set of seeds
# and fails if any trace hash or any full trace differs. This is how "the trace of a seed is
# byte-identical between the g++ and clang builds" is checked, e.g.
#
#   bash ci/compare_traces.sh build/default build/asan
#
# DIR_A, DIR_B: build directories (the tool is found under them) or the tool binaries themselves.
# Compared: summary lines (hash, line count, steps, switches, outcome) of seeds 0..SEEDS-1 for the
# random and pct strategies, and the full text of seeds 0..FULL-1 for both.
# Environment: SEEDS (default 300), FULL (default 10).
# Output: details of the first difference, then one verdict line starting "compare_traces:".
# Exit status: 0 identical, 1 different or a run failed, 2 usage or a missing tool.
set -uo pipefail

seeds="${SEEDS:-300}"
full="${FULL:-10}"

if [ "$#" -ne 2 ]; then
  echo "usage: $0 DIR_A DIR_B" >&2
  echo "compare_traces: FAILED (usage)"
  exit 2
fi

# find_tool DIR: prints the path of readyport-sim-trace in DIR (or DIR itself when it is the tool).
find_tool() {
  local where="$1"
  if [ -f "$where" ] && [ -x "$where" ]; then echo "$where"; return 0; fi
  if [ -x "$where/stress/readyport-sim-trace" ]; then
    echo "$where/stress/readyport-sim-trace"; return 0
  fi
  find "$where" -name readyport-sim-trace -type f -perm -u+x 2>/dev/null | head -n 1
}

tool_a="$(find_tool "$1")"
tool_b="$(find_tool "$2")"
for pair in "$1:$tool_a" "$2:$tool_b"; do
  if [ -z "${pair#*:}" ]; then
    echo "no readyport-sim-trace under ${pair%%:*} (build the target readyport-sim-trace)" >&2
    echo "compare_traces: FAILED (missing tool under ${pair%%:*})"
    exit 2
  fi
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

compared_runs=0
compared_full=0
for strategy in random pct; do
  # Hashes of many seeds: one process per build.
  if ! "$tool_a" --seed 0 --count "$seeds" --strategy "$strategy" >"$work/a.$strategy" 2>"$work/a.err"; then
    cat "$work/a.err" >&2; grep -v 'status=ok$' "$work/a.$strategy" | head -n 3 >&2
    echo "compare_traces: FAILED (a run of $tool_a failed, strategy $strategy)"
    exit 1
  fi
  if ! "$tool_b" --seed 0 --count "$seeds" --strategy "$strategy" >"$work/b.$strategy" 2>"$work/b.err"; then
    cat "$work/b.err" >&2; grep -v 'status=ok$' "$work/b.$strategy" | head -n 3 >&2
    echo "compare_traces: FAILED (a run of $tool_b failed, strategy $strategy)"
    exit 1
  fi
  if ! diff -u "$work/a.$strategy" "$work/b.$strategy" >"$work/diff" ; then
    head -n 20 "$work/diff"
    first="$(grep -m 1 '^-seed=' "$work/diff" | sed -E 's/^-seed=([0-9]+).*/\1/')"
    echo "compare_traces: DIFFERENT (strategy $strategy, first at seed ${first:-?}; rerun: $tool_a --seed ${first:-0} --strategy $strategy --print)"
    exit 1
  fi
  compared_runs=$((compared_runs + seeds))
  # Full texts of a few seeds, byte for byte.
  for ((seed = 0; seed < full; seed++)); do
    # The traces on stdout only: a sanitizer's banner on stderr (ASan warns once that it does
    # not fully support swapcontext, which the fiber mechanism uses) is not part of a trace.
    if ! "$tool_a" --seed "$seed" --strategy "$strategy" --print >"$work/a.txt" 2>"$work/a.err" ||
       ! "$tool_b" --seed "$seed" --strategy "$strategy" --print >"$work/b.txt" 2>"$work/b.err"; then
      cat "$work/a.err" "$work/b.err"
      echo "compare_traces: a tool failed (full trace of seed $seed, strategy $strategy)"
      exit 1
    fi
    if ! cmp -s "$work/a.txt" "$work/b.txt"; then
      diff -u "$work/a.txt" "$work/b.txt" | head -n 20
      echo "compare_traces: DIFFERENT (full trace of seed $seed, strategy $strategy)"
      exit 1
    fi
    compared_full=$((compared_full + 1))
  done
done

echo "compare_traces: IDENTICAL ($compared_runs trace hashes and $compared_full full traces match: $tool_a vs $tool_b)"
exit 0
