#!/usr/bin/env bash
# The main job's own throughput, an old build against this checkout's, side by side: seeds per
# CPU-second and scheduled calls (scheduler steps) per CPU-second of the default run
# (`readyport-stress --corpus none --jobs 1`), and whether both judged every seed alike.
#
#   bash ci/bench_main_job.sh                    # old: HEAD~1; 300 seeds a run, 3 pairs
#   bash ci/bench_main_job.sh --old 1677087 --seeds 600 --pairs 5
#
# The old build is made from `git archive OLD` in build/bench-src-<commit>, configured with the
# default preset into build/bench-<commit> (only readyport-stress is built); the new one is
# build/default's readyport-stress, built when missing or out of date. The runs alternate old and
# new, the first of each pair swapped every pair, so that a machine that slows down or warms up
# weighs on both. CPU time is the run's user + system time (bash's `time`), which the other
# processes of a loaded machine do not inflate as they do wall time.
#
# Output: one line per run, then the medians, the ratio new / old of the medians and the median
# of the pairs' own ratios (each pair's two runs close in time: the figure a drifting machine moves
# least; its lowest and highest are printed too), and "same judgement" when both
# builds gave every seed the same trace hash, or, when a commit between them changed what a hash
# is, when their summaries agree on every line but time and rate (verdicts, failures, coverage
# rows, the oracle's counts, the figures); "judgement DIFFERS" otherwise.
# Exit status: 0 when measured (whatever the ratio), 2 on bad arguments or a failed build, 1 when
# a run failed a seed (a benchmark of a failing build means nothing).
set -euo pipefail
cd "$(dirname "$0")/.."

old_ref="HEAD~1"
seeds=300
pairs=3
while [ $# -gt 0 ]; do
  case "$1" in
    --old) old_ref="${2:?--old needs a commit}"; shift 2 ;;
    --seeds) seeds="${2:?--seeds needs a number}"; shift 2 ;;
    --pairs) pairs="${2:?--pairs needs a number}"; shift 2 ;;
    *) echo "usage: bash ci/bench_main_job.sh [--old COMMIT] [--seeds N] [--pairs P]" >&2; exit 2 ;;
  esac
done
case "$seeds$pairs" in
  *[!0-9]*) echo "bench: --seeds and --pairs take whole numbers" >&2; exit 2 ;;
esac
if [ "$seeds" -lt 1 ] || [ "$seeds" -gt 100000 ] || [ "$pairs" -lt 1 ] || [ "$pairs" -gt 50 ]; then
  echo "bench: --seeds in 1..100000, --pairs in 1..50" >&2
  exit 2
fi
old_commit=$(git rev-parse --verify --quiet "$old_ref^{commit}") ||
  { echo "bench: '$old_ref' names no commit" >&2; exit 2; }
short=$(git rev-parse --short=12 "$old_commit")
log_dir="build/logs"
mkdir -p "$log_dir"

# build SOURCE BUILD_DIR NAME: configures with the default preset and builds readyport-stress.
build() {
  local source="$1" dir="$2" name="$3" log="$log_dir/bench-$3.build.log"
  if ! { cmake --preset default -S "$source" -B "$dir" >"$log" 2>&1 &&
         cmake --build "$dir" -j 2 --target readyport-stress >>"$log" 2>&1; }; then
    echo "bench: the $name build failed (its log: $log)" >&2
    tail -n 30 "$log" >&2
    exit 2
  fi
}

old_src="build/bench-src-$short"
if [ ! -f "$old_src/CMakePresets.json" ]; then
  rm -rf "$old_src"
  mkdir -p "$old_src"
  git archive "$old_commit" | tar -x -m -C "$old_src"
fi
echo "bench: building the old readyport-stress ($short) and the new one (this checkout)"
build "$PWD/$old_src" "build/bench-$short" "old"
build "$PWD" "build/default" "new"
old_bin="build/bench-$short/stress/readyport-stress"
new_bin="build/default/stress/readyport-stress"

# run NAME BIN INDEX: one timed run; appends "cpu_seconds steps" to build/bench-NAME.figures.
run() {
  local name="$1" bin="$2" index="$3" json="build/bench-$1-$3.json" cpu steps
  local TIMEFORMAT="%U %S"
  cpu=$( { time "$bin" --seeds "$seeds" --jobs 1 --corpus none --json "$json" \
             >"$log_dir/bench-$name-$index.log" 2>&1; } 2>&1 ) ||
    { echo "bench: the $name run $index failed a seed (its log: $log_dir/bench-$name-$index.log)" >&2
      exit 1; }
  cpu=$(awk '{ printf "%.3f", $1 + $2 }' <<<"$cpu")
  steps=$(grep -o '"steps_all": *[0-9]*' "$json" | grep -o '[0-9]*$')
  echo "$cpu $steps" >>"build/bench-$name.figures"
  awk -v n="$name" -v i="$index" -v c="$cpu" -v s="$steps" -v k="$seeds" 'BEGIN {
    printf "  %s run %d: %.2f CPU-s, %.1f seeds per CPU-second, %.2f M scheduled calls per CPU-second\n",
      n, i, c, k / c, s / c / 1e6 }'
}

rm -f build/bench-old.figures build/bench-new.figures
echo "bench: $pairs pairs of $seeds seeds (--jobs 1 --corpus none), old $short vs new $(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' (with uncommitted changes)')"
for pair in $(seq 1 "$pairs"); do
  if [ $((pair % 2)) -eq 1 ]; then
    run old "$old_bin" "$pair"
    run new "$new_bin" "$pair"
  else
    run new "$new_bin" "$pair"
    run old "$old_bin" "$pair"
  fi
done

# median FILE COLUMN: the median of COLUMN's per-CPU-second figure (1: seeds, 2: steps).
median() {
  awk -v k="$seeds" -v col="$2" '{ print (col == 1) ? k / $1 : $2 / $1 }' "$1" | sort -g |
    awk '{ v[NR] = $1 } END { printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
old_seeds=$(median build/bench-old.figures 1)
new_seeds=$(median build/bench-new.figures 1)
old_steps=$(median build/bench-old.figures 2)
new_steps=$(median build/bench-new.figures 2)
same="same judgement: every seed the same trace hash in both builds"
# The seeds' trace hashes, in seed order, of each build's first run.
if ! cmp -s <(grep -o '"trace_hash": *"[0-9a-f]*"' build/bench-old-1.json) \
            <(grep -o '"trace_hash": *"[0-9a-f]*"' build/bench-new-1.json); then
  # A commit between them changed what a trace hash is (e.g. trace format 3): then the summaries
  # must still agree line for line (verdicts, failures, coverage rows, the oracle's counts, the
  # figures), all but the lines of time and rate.
  untimed() { grep -vE '^  (wall time|seeds/s|scheduled calls/s) ' "$1"; }
  if cmp -s <(untimed "$log_dir/bench-old-1.log") <(untimed "$log_dir/bench-new-1.log"); then
    same="same judgement: the trace hashes differ (a commit between them changed what a hash is), every line of the summaries (verdicts, failures, coverage rows, oracle counts, figures) is equal"
  else
    same="judgement DIFFERS: the summaries differ beyond time and rate (diff $log_dir/bench-old-1.log $log_dir/bench-new-1.log)"
  fi
fi
awk -v os="$old_seeds" -v ns="$new_seeds" -v ot="$old_steps" -v nt="$new_steps" 'BEGIN {
  printf "bench: medians: seeds per CPU-second %.1f -> %.1f (%.2fx); scheduled calls per CPU-second %.2f M -> %.2f M (%.2fx)\n",
    os, ns, ns / os, ot / 1e6, nt / 1e6, nt / ot }'
# Pair by pair: line k of each figures file is pair k's run; its seeds ratio is old CPU / new CPU.
paste -d ' ' build/bench-old.figures build/bench-new.figures |
  awk '{ print $1 / $3 }' | sort -g |
  awk '{ v[NR] = $1 } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "bench: pair by pair: seeds per CPU-second new / old, median %.2fx (lowest %.2fx, highest %.2fx, %d pairs)\n",
      m, v[1], v[NR], NR }'
echo "bench: $same"
