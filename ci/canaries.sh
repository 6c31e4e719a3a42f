#!/usr/bin/env bash
# The canary leg: builds the engine with each planted bug (ci/canaries/<name>.patch, applied by
# ci/canary_tree.sh to a copy of the sources, build/canary-src-<name>, built in
# build/canary-<name>) and requires the main job's default run to catch it: readyport-stress must
# fail, and soon. Prints, per canary, the first failing seed and the seconds to it; then the same
# on real threads (--runtime free), with the rule the oracle alone finds in that seed's trace once
# the engine's obs.* lines are cut; and a sweep of 20 seeds (or up to the first failing one) that
# must run every seed and write --json
# and --markdown even when seeds abort; systematic exploration of the pinned small worlds
# (readyport-stress --explore all, two preemptions, one fault) must find it too, and the random
# and PCT strategies' first failing seeds are printed beside it. The same default run passes
# without a canary (ctest stress.default_coverage in the native leg). Then the engine property (properties/, when
# RapidCheck is installed) must catch the canary too and shrink it to at most 10 commands: its
# pinned test EngineProperty.Canary_<name>_ShrinksToAtMost10 (docs/properties.md).
#   bash ci/canaries.sh                      # every canary
#   bash ci/canaries.sh double_remove        # one
# Exit status: non-zero when a canary survived, its patch no longer applies or a build failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

canaries=("$@")
if [ "${#canaries[@]}" -eq 0 ]; then
  canaries=(free_before_remove remove_failure_as_done dispatch_after_close double_remove)
fi
jobs="${READYPORT_JOBS:-$(nproc)}"
limit_s="${READYPORT_CANARY_LIMIT_S:-60}"
survived=()

# elapsed START: seconds since START (date +%s.%N), one decimal.
elapsed() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }

# compare_strategies CANARY DIR SECONDS FIRST: exploration must find the canary (else it
# survived); then the first failing seed of the random and PCT strategies, and one line with all.
compare_strategies() {
  local canary="$1" dir="$2" portfolio_s="$3" portfolio_first="$4" start found line strategy
  local seed sweep=""
  start=$(date +%s.%N)
  rm -rf "$dir.explore"
  "$dir/stress/readyport-stress" --explore all --preemptions 2 --faults 1 --stop-on-failure \
    --schedules-max 200000 --bundle-dir "$dir.explore" >"$dir.explore.log" 2>&1
  found=$(grep -m1 -E '^first failure: |^explore: ABORTED' "$dir.explore.log" || true)
  found="${found#first failure: }"
  found="${found#explore: }"
  line="explore: ${found:-NOT FOUND} ($(elapsed "$start") s)"
  if [ -z "$found" ]; then
    echo "canary $canary: SURVIVED exploration to 2 preemptions and 1 fault"
    tail -n 12 "$dir.explore.log"
    survived+=("$canary(explore)")
  fi
  # A failing schedule (not an abort) leaves a bundle: --replay must reproduce it exactly.
  local bundle
  bundle=$(find "$dir.explore" -name 'explore-*.json' 2>/dev/null | head -n 1)
  if [ -n "$bundle" ]; then
    if "$dir/stress/readyport-stress" --replay "$bundle" >"$dir.explore.replay.log" 2>&1 &&
      grep -q '^replay: reproduced exactly' "$dir.explore.replay.log"; then
      line+=", its bundle replays exactly"
    else
      echo "canary $canary: the exploration's bundle $bundle did NOT replay exactly"
      tail -n 6 "$dir.explore.replay.log"
      survived+=("$canary(explore replay)")
    fi
  elif [ -n "$found" ] && [ "${found#ABORTED}" = "$found" ]; then
    echo "canary $canary: exploration failed a schedule but wrote no bundle"
    survived+=("$canary(explore bundle)")
  fi
  for strategy in random pct; do
    start=$(date +%s.%N)
    "$dir/stress/readyport-stress" --strategy "$strategy" --stop-on-failure --corpus none \
      --jobs 1 --seeds 2000 --bundle-dir "$dir.$strategy" >"$dir.$strategy.log" 2>&1
    seed=$(grep -m1 -oE '^FAIL seed [0-9]+|aborted during seed [0-9]+' "$dir.$strategy.log" |
      grep -oE '[0-9]+$' || true)
    sweep+="; $strategy: seed ${seed:-none in 2000} ($(elapsed "$start") s)"
  done
  seed=$(echo "$portfolio_first" | grep -oE 'seed [0-9]+' | head -n 1 || true)
  echo "canary $canary: first failure: $line; portfolio: ${seed:-none} (${portfolio_s} s)$sweep"
}

for canary in "${canaries[@]}"; do
  dir="build/canary-$canary"
  src="build/canary-src-$canary"
  log="$dir.log"
  mkdir -p build
  # A cache made from another source tree (cmake refuses it) is removed: the build starts afresh.
  home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$dir/CMakeCache.txt" 2>/dev/null)
  if [ -n "$home" ] && [ "$(realpath -m "$home")" != "$(realpath -m "$src")" ]; then
    rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
  fi
  if ! bash ci/canary_tree.sh "$canary" >"$log" 2>&1; then
    cat "$log"
    echo "canary $canary: ci/canary_tree.sh made no tree to build (above)"
    survived+=("$canary(tree)")
    continue
  fi
  if ! { cmake --preset default -S "$src" -B "$dir" -DREADYPORT_CANARY="$canary" \
           -DREADYPORT_CONSUMER_TESTS=OFF >>"$log" 2>&1 &&
         cmake --build "$dir" -j "$jobs" --target readyport-stress >>"$log" 2>&1; }; then
    tail -n 40 "$log"
    echo "canary $canary: BUILD FAILED"
    survived+=("$canary(build)")
    continue
  fi
  start=$(date +%s.%N)
  # The seed sweep alone (--corpus none): the corpus holds each canary's minimal case, which would
  # catch it before the sweep does; that entry is replayed below. One job: a seed that makes the
  # engine assert ends its process at once, and with several jobs it could be reported before a
  # lower seed that fails later in its run.
  rm -rf "$dir.sim"
  "$dir/stress/readyport-stress" --stop-on-failure --corpus none --jobs 1 \
    --bundle-dir "$dir.sim" >"$dir.run.log" 2>&1
  rc=$?
  seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  first=$(grep -m1 -E '^FAIL seed|aborted during seed' "$dir.run.log" || true)
  if [ "$rc" -eq 0 ] || [ -z "$first" ]; then
    echo "canary $canary: SURVIVED the default run (exit $rc, ${seconds} s)"
    tail -n 30 "$dir.run.log"
    survived+=("$canary")
  elif awk -v s="$seconds" -v l="$limit_s" 'BEGIN { exit !(s > l) }'; then
    echo "canary $canary: caught, but only after ${seconds} s (limit ${limit_s} s): $first"
    survived+=("$canary(slow)")
  else
    echo "canary $canary: caught in ${seconds} s: $first"
    grep -m1 -E '^first failure' "$dir.run.log" || true
  fi
  # Side by side: systematic exploration (every schedule of the pinned small worlds with at most
  # two preemptions and one fault, fewest first, stress/explore/) must find the canary too; the
  # seed sweep under the random and PCT strategies alone, for the figures (docs/simulation.md).
  compare_strategies "$canary" "$dir" "$seconds" "$first"
  # A sweep survives whatever one seed does: 20 seeds with --json and --markdown, no stop; a seed
  # that ends in the engine's assertion is listed as failed ("aborted"), the others still run, and
  # both files are written. It reaches at least the default run's first failing seed: a sweep that
  # meets no failure shows nothing.
  failed_seed=$(grep -oE '(FAIL seed|aborted during seed) [0-9]+' <<<"$first" | grep -oE '[0-9]+$' ||
    true)
  sweep_seeds=20
  if [ -n "$failed_seed" ] && [ "$failed_seed" -gt "$sweep_seeds" ]; then
    sweep_seeds=$failed_seed
  fi
  rm -rf "$dir.sweep" "$dir.sweep.json" "$dir.sweep.md"
  "$dir/stress/readyport-stress" --seeds "$sweep_seeds" --corpus none --bundle-dir "$dir.sweep" \
    --json "$dir.sweep.json" --markdown "$dir.sweep.md" >"$dir.sweep.log" 2>&1
  rc=$?
  sweep_aborted=$(grep -oE '^FAIL seed [0-9]+: aborted' "$dir.sweep.log" | grep -oE '[0-9]+' |
    tr '\n' ' ' || true)
  if [ "$rc" -eq 1 ] && [ -s "$dir.sweep.md" ] &&
     grep -q "\"seeds_run\": $sweep_seeds," "$dir.sweep.json" 2>/dev/null; then
    echo "canary $canary: a $sweep_seeds-seed sweep ran every seed and wrote --json and --markdown;" \
      "$(grep -c '^FAIL seed' "$dir.sweep.log") failing, aborted: ${sweep_aborted:-none}"
  else
    echo "canary $canary: the $sweep_seeds-seed sweep did NOT survive (exit $rc;" \
      "--json/--markdown written: $([ -s "$dir.sweep.json" ] && echo yes || echo no)/$(
        [ -s "$dir.sweep.md" ] && echo yes || echo no))"
    tail -n 20 "$dir.sweep.log"
    survived+=("$canary(sweep)")
  fi
  # The failing seed's bundle, replayed the way a user would from a default checkout: ci/replay.sh
  # finds the bundle's canary and uses (or builds) its build; the same verdict and trace hash must
  # come back (exit 0). A seed that ended in the engine's assertion has no trace hash to compare.
  sim_seed=$(grep -E '^FAIL seed [0-9]+: ' "$dir.run.log" |
    grep -m1 -vE '^FAIL seed [0-9]+: (aborted|crashed|exited|hung): ' |
    grep -oE '^FAIL seed [0-9]+' | grep -oE '[0-9]+$' || true)
  if [ -n "$sim_seed" ] && [ -f "$dir.sim/seed-$sim_seed.json" ]; then
    if bash ci/replay.sh "$dir.sim/seed-$sim_seed.json" >"$dir.replay.log" 2>&1; then
      echo "canary $canary: ci/replay.sh of seed $sim_seed's bundle: reproduced exactly"
    else
      echo "canary $canary: ci/replay.sh of seed $sim_seed's bundle did NOT reproduce it exactly"
      tail -n 20 "$dir.replay.log"
      survived+=("$canary(replay)")
    fi
  fi
  # Real threads (--runtime free over the fake): the same seeds must catch the canary, and the
  # oracle alone must flag it from a failing seed's recorded trace with the engine's obs.* reports
  # cut (the OS-side rules, not the engine's word). A seed that ends in the engine's assertion
  # leaves the trace up to the abort (its header says end=abort: the end of the run is not
  # judged there); when the oracle finds nothing in it, the sweep goes on from the next seed,
  # within the default run's 300 seeds.
  free_dir="$dir.free"
  rm -rf "$free_dir"
  free_from=1
  free_rule=""
  free_assertions=""
  while [ -z "$free_rule" ] && [ "$free_from" -le 300 ]; do
    "$dir/stress/readyport-stress" --runtime free --stop-on-failure --corpus none --jobs 1 \
      --first-seed "$free_from" --seeds $((301 - free_from)) --bundle-dir "$free_dir" \
      >"$dir.free.log" 2>&1
    rc=$?
    free_first=$(grep -m1 -oE '^FAIL seed [0-9]+|aborted during seed [0-9]+' "$dir.free.log" || true)
    free_seed=${free_first##* }
    if [ "$rc" -eq 0 ] || [ -z "$free_seed" ] || [ ! -f "$free_dir/seed-$free_seed.trace" ]; then
      break
    fi
    grep -v ' obs\.' "$free_dir/seed-$free_seed.trace" >"$free_dir/stripped.trace"
    "$dir/stress/readyport-stress" --check-trace "$free_dir/stripped.trace" \
      >"$dir.free.check.log" 2>&1
    free_rule=$(grep -m1 -oE '^verdict: internal: O[0-9]+' "$dir.free.check.log" |
      grep -oE 'O[0-9]+' || true)
    if [ -z "$free_rule" ]; then
      free_assertions="$free_assertions $free_seed"
      free_from=$((free_seed + 1))
    fi
  done
  earlier=""
  if [ -n "$free_assertions" ]; then
    earlier=" (before it, the engine's assertion alone: seeds$free_assertions, the oracle finding"
    earlier="$earlier nothing in their traces up to the abort)"
  fi
  if [ -n "$free_rule" ]; then
    echo "canary $canary: real threads: caught after $free_seed seed(s) (seeds 1..$free_seed);" \
      "the oracle alone, obs.* stripped: $free_rule$earlier"
  else
    echo "canary $canary: real threads: the oracle alone did not flag it within 300 seeds" \
      "(exit $rc)$earlier"
    tail -n 20 "$dir.free.log"
    survived+=("$canary(free)")
  fi
  # The canary's minimal case in the regression corpus (stress/corpus/canary-<name>.json, made by
  # --shrink) must still fail in its build.
  entry="stress/corpus/canary-$canary.json"
  if [ ! -f "$entry" ]; then
    echo "canary $canary: no corpus entry $entry"
    survived+=("$canary(corpus)")
  elif "$dir/stress/readyport-stress" --replay "$entry" \
       >"$dir.corpus.log" 2>&1; then
    echo "canary $canary: its corpus entry $entry PASSED (it must fail)"
    tail -n 20 "$dir.corpus.log"
    survived+=("$canary(corpus)")
  else
    echo "canary $canary: corpus entry fails as it must: $(grep -m1 -E '^FAIL|aborted' \
      "$dir.corpus.log" | cut -c1-160)"
  fi
  # The engine property on the same canary (built only where RapidCheck is found).
  if [ -d "$dir/properties" ] &&
     cmake --build "$dir" -j "$jobs" --target readyport_properties_test >>"$log" 2>&1; then
    start=$(date +%s.%N)
    "$dir/properties/readyport_properties_test" \
      --gtest_filter="EngineProperty.Canary_${canary}_ShrinksToAtMost10" >"$dir.property.log" 2>&1
    rc=$?
    seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
    if [ "$rc" -eq 0 ] && grep -q '^\[  PASSED  \] 1 test' "$dir.property.log"; then
      echo "canary $canary: property $(grep -m1 -E "^canary $canary: failed and shrank" \
        "$dir.property.log" | sed "s/^canary $canary: //"); binary ${seconds} s"
    else
      echo "canary $canary: the engine property did not catch and shrink it (exit $rc)"
      tail -n 40 "$dir.property.log"
      survived+=("$canary(property)")
    fi
  else
    echo "canary $canary: engine property not built (no RapidCheck?)"
  fi
done
if [ "${#survived[@]}" -ne 0 ]; then
  echo "canaries not caught: ${survived[*]}"
  exit 1
fi
echo "all ${#canaries[@]} canaries caught"
