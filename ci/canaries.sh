#!/usr/bin/env bash
# The canary leg: builds the engine with each planted bug (ci/canaries/<name>.patch, applied by
# ci/canary_tree.sh to a copy of the sources, build/canary-src-<name>, built in
# build/canary-src-<name>/build/default) and requires the main job's default run to catch it: readyport-stress must
# fail, and soon. Prints, per canary, the first failing seed and the seconds to it; then the same
# on real threads (--runtime free), with the rule the oracle alone finds in that seed's trace once
# the engine's obs.* lines are cut; and a sweep of 20 seeds (or up to the first failing one) that
# must run every seed and write --json
# and --markdown even when seeds abort; systematic exploration of the pinned small worlds
# (readyport-stress --explore all, two preemptions, one fault) must find it too, and the random
# and PCT strategies' first failing seeds are printed beside it; the guided search must catch it
# within 20,000 runs (about a CPU-minute) and its bundle must replay. The same default run passes
# without a canary (ctest stress.default_coverage in the native leg). Then the engine property (properties/, when
# RapidCheck is installed) must catch the canary too and shrink it to at most 10 commands: its
# pinned test EngineProperty.Canary_<name>_ShrinksToAtMost10 (docs/properties.md).
#   bash ci/canaries.sh                      # every canary
#   bash ci/canaries.sh double_remove        # one
#   bash ci/canaries.sh --build-only [NAME]  # only their trees and builds (ci/test.sh runs it
#                                            # beside the leg before; the run then finds them built)
# Each canary's tree (build/canary-src-<name>) is built in its own build/default, where ccache
# (CCACHE_BASEDIR at the checkout) reuses every object of the checkout's build/default whose
# source the patch does not change: a few files compile, the rest is linking. Outputs go to
# build/canary-<name>.* (logs, bundles, summaries).
# Exit status: non-zero when a canary survived, its patch no longer applies or a build failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

build_only=0
if [ "${1:-}" = --build-only ]; then
  build_only=1
  shift
fi
canaries=("$@")
if [ "${#canaries[@]}" -eq 0 ]; then
  canaries=(free_before_remove remove_failure_as_done dispatch_after_close double_remove)
fi
jobs="${READYPORT_JOBS:-$(nproc)}"
limit_s="${READYPORT_CANARY_LIMIT_S:-60}"
survived=()
canary_build_s=0  # the builds' share of this leg's time
# ccache: paths under the checkout hashed as relative ones, the build directory left out of the
# hash (as ci/test.sh sets them), so that a canary's tree reuses build/default's objects.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"

# ccache_hits STATSLOG: "N of M files from ccache" read from a ccache stats log (CCACHE_STATSLOG:
# the results of one build's compiles alone, whoever else uses the cache meanwhile).
ccache_hits() {
  local hits misses
  [ -s "$1" ] || { echo "no ccache"; return; }
  hits=$(ccache --show-log-stats -v 2>/dev/null | sed -nE 's/^ *Hits: +([0-9]+).*/\1/p' | head -n 1)
  misses=$(ccache --show-log-stats -v 2>/dev/null | sed -nE 's/^ *Misses: +([0-9]+).*/\1/p' |
    head -n 1)
  echo "${hits:-0} of $((${hits:-0} + ${misses:-0})) compiles from ccache"
}

# elapsed START: seconds since START (date +%s.%N), one decimal.
elapsed() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }

# compare_strategies CANARY DIR OUT SECONDS FIRST: exploration must find the canary (else it
# survived); then the first failing seed of the random and PCT strategies, and one line with all.
# DIR: the canary's build; OUT: the prefix of the output files.
compare_strategies() {
  local canary="$1" dir="$2" out="$3" portfolio_s="$4" portfolio_first="$5" start found line strategy
  local seed sweep=""
  start=$(date +%s.%N)
  rm -rf "$out.explore"
  "$dir/stress/readyport-stress" --explore all --preemptions 2 --faults 1 --stop-on-failure \
    --schedules-max 200000 --bundle-dir "$out.explore" >"$out.explore.log" 2>&1
  found=$(grep -m1 -E '^first failure: |^explore: ABORTED' "$out.explore.log" || true)
  found="${found#first failure: }"
  found="${found#explore: }"
  line="explore: ${found:-NOT FOUND} ($(elapsed "$start") s)"
  if [ -z "$found" ]; then
    echo "canary $canary: SURVIVED exploration to 2 preemptions and 1 fault"
    tail -n 12 "$out.explore.log"
    survived+=("$canary(explore)")
  fi
  # A failing schedule (not an abort) leaves a bundle: --replay must reproduce it exactly.
  local bundle
  bundle=$(find "$out.explore" -name 'explore-*.json' 2>/dev/null | head -n 1)
  if [ -n "$bundle" ]; then
    if "$dir/stress/readyport-stress" --replay "$bundle" >"$out.explore.replay.log" 2>&1 &&
      grep -q '^replay: reproduced exactly' "$out.explore.replay.log"; then
      line+=", its bundle replays exactly"
    else
      echo "canary $canary: the exploration's bundle $bundle did NOT replay exactly"
      tail -n 6 "$out.explore.replay.log"
      survived+=("$canary(explore replay)")
    fi
  elif [ -n "$found" ] && [ "${found#ABORTED}" = "$found" ]; then
    echo "canary $canary: exploration failed a schedule but wrote no bundle"
    survived+=("$canary(explore bundle)")
  fi
  for strategy in random pct; do
    start=$(date +%s.%N)
    "$dir/stress/readyport-stress" --strategy "$strategy" --stop-on-failure --corpus none \
      --jobs 1 --seeds 2000 --bundle-dir "$out.$strategy" >"$out.$strategy.log" 2>&1
    seed=$(grep -m1 -oE '^FAIL seed [0-9]+|aborted during seed [0-9]+' "$out.$strategy.log" |
      grep -oE '[0-9]+$' || true)
    sweep+="; $strategy: seed ${seed:-none in 2000} ($(elapsed "$start") s)"
  done
  guided_canary "$canary" "$dir" "$out"
  sweep+="; $guided_line"
  seed=$(echo "$portfolio_first" | grep -oE 'seed [0-9]+' | head -n 1 || true)
  echo "canary $canary: first failure: $line; portfolio: ${seed:-none} (${portfolio_s} s)$sweep"
}

# guided_canary CANARY DIR OUT: the guided search (stress/jobs/guided_search.hpp) must catch the
# canary within 20,000 runs, about its first CPU-minute (the main job runs about 330 seeds per
# CPU-second): a budget in runs, so that the verdict does not depend on the machine's speed. Its
# bundle must replay: exactly (verdict and trace hash), or, when the run aborted, by aborting in
# the same seed. Sets guided_line.
guided_canary() {
  local canary="$1" dir="$2" out="$3" start bundle run seed
  start=$(date +%s.%N)
  rm -rf "$out.guided"
  "$dir/stress/readyport-stress" --guided 20000 --stop-on-failure --bundle-dir "$out.guided" \
    >"$out.guided.log" 2>&1
  bundle=$(find "$out.guided" -name '*-guided-*.json' 2>/dev/null | sort | head -n 1)
  if [ -z "$bundle" ]; then
    echo "canary $canary: SURVIVED 20,000 runs of the guided search"
    tail -n 8 "$out.guided.log"
    survived+=("$canary(guided)")
    guided_line="guided: none in 20000 runs"
    return
  fi
  run=$(basename "$bundle" | sed -nE 's/.*-guided-([0-9]+)\.json$/\1/p')
  seed=$(sed -n 's/^  "seed": \([0-9][0-9]*\),$/\1/p' "$bundle" | head -n 1)
  guided_line="guided: run ${run:-?} ($(elapsed "$start") s)"
  "$dir/stress/readyport-stress" --replay "$bundle" >"$out.guided.replay.log" 2>&1
  if grep -q '^replay: reproduced exactly' "$out.guided.replay.log" ||
    { grep -q '"status": "aborted"' "$bundle" &&
      grep -q "aborted during seed $seed " "$out.guided.replay.log"; }; then
    guided_line+=", its bundle replays"
  else
    echo "canary $canary: the guided search's bundle $bundle did NOT replay"
    tail -n 6 "$out.guided.replay.log"
    survived+=("$canary(guided replay)")
  fi
}

# build_canary CANARY: its tree (ci/canary_tree.sh), configured and built (readyport-stress and,
# where RapidCheck was found, the engine property); sets src, dir, out and log. Returns 1 (said,
# and the canary counted as survived) when a step failed.
build_canary() {
  local canary="$1" build_start targets home
  # The copy, its build in the preset's own place inside it (so that ccache reuses build/default's
  # object of every file the patch does not change), the outputs' prefix.
  src="build/canary-src-$canary"
  dir="$src/build/default"
  out="build/canary-$canary"
  log="$out.log"
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
    return 1
  fi
  build_start=$SECONDS
  targets=(readyport-stress)
  if ! cmake --preset default -S "$src" -B "$dir" -DREADYPORT_CANARY="$canary" \
       -DREADYPORT_CONSUMER_TESTS=OFF >>"$log" 2>&1; then
    tail -n 40 "$log"
    echo "canary $canary: CONFIGURE FAILED"
    survived+=("$canary(build)")
    return 1
  fi
  # The engine property too, where RapidCheck was found: both in one build.
  [ -d "$dir/properties" ] && targets+=(readyport_properties_test)
  rm -f "$out.ccache-stats"
  if ! CCACHE_STATSLOG="$PWD/$out.ccache-stats" \
       cmake --build "$dir" -j "$jobs" --target "${targets[@]}" >>"$log" 2>&1; then
    tail -n 40 "$log"
    echo "canary $canary: BUILD FAILED"
    survived+=("$canary(build)")
    return 1
  fi
  canary_build_s=$((canary_build_s + SECONDS - build_start))
  echo "canary $canary: built in $((SECONDS - build_start)) s" \
    "($(CCACHE_STATSLOG="$PWD/$out.ccache-stats" ccache_hits "$out.ccache-stats"))"
}

if [ "$build_only" -eq 1 ]; then
  for canary in "${canaries[@]}"; do
    build_canary "$canary"
  done
  echo "canaries: built in $canary_build_s s"
  [ "${#survived[@]}" -eq 0 ]
  exit
fi

for canary in "${canaries[@]}"; do
  build_canary "$canary" || continue
  start=$(date +%s.%N)
  # The seed sweep alone (--corpus none): the corpus holds each canary's minimal case, which would
  # catch it before the sweep does; that entry is replayed below. One job: a seed that makes the
  # engine assert ends its process at once, and with several jobs it could be reported before a
  # lower seed that fails later in its run.
  rm -rf "$out.sim"
  "$dir/stress/readyport-stress" --stop-on-failure --corpus none --jobs 1 \
    --bundle-dir "$out.sim" >"$out.run.log" 2>&1
  rc=$?
  seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  first=$(grep -m1 -E '^FAIL seed|aborted during seed' "$out.run.log" || true)
  if [ "$rc" -eq 0 ] || [ -z "$first" ]; then
    echo "canary $canary: SURVIVED the default run (exit $rc, ${seconds} s)"
    tail -n 30 "$out.run.log"
    survived+=("$canary")
  elif awk -v s="$seconds" -v l="$limit_s" 'BEGIN { exit !(s > l) }'; then
    echo "canary $canary: caught, but only after ${seconds} s (limit ${limit_s} s): $first"
    survived+=("$canary(slow)")
  else
    echo "canary $canary: caught in ${seconds} s: $first"
    grep -m1 -E '^first failure' "$out.run.log" || true
  fi
  # Side by side: systematic exploration (every schedule of the pinned small worlds with at most
  # two preemptions and one fault, fewest first, stress/explore/) must find the canary too; the
  # seed sweep under the random and PCT strategies alone, for the figures (docs/simulation.md).
  compare_strategies "$canary" "$dir" "$out" "$seconds" "$first"
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
  rm -rf "$out.sweep" "$out.sweep.json" "$out.sweep.md"
  "$dir/stress/readyport-stress" --seeds "$sweep_seeds" --corpus none --bundle-dir "$out.sweep" \
    --json "$out.sweep.json" --markdown "$out.sweep.md" >"$out.sweep.log" 2>&1
  rc=$?
  sweep_aborted=$(grep -oE '^FAIL seed [0-9]+: aborted' "$out.sweep.log" | grep -oE '[0-9]+' |
    tr '\n' ' ' || true)
  # Every seed accounted for: run, and passed, failed or cut short (its process died in it), in
  # the JSON, the Markdown and the text summary alike.
  account=$(python3 - "$out.sweep.json" "$sweep_seeds" <<'PY' 2>&1
import json, sys
summary, planned = json.load(open(sys.argv[1])), int(sys.argv[2])
run, passed, failed, cut = (summary[k] for k in ('seeds_run', 'passed', 'failed', 'cut'))
listed = sum(1 for f in summary['failures'] if f['source'] == 'seeds')
if run != planned or passed + failed + cut != run or listed != failed + cut:
    sys.exit(f'seeds run {run} of {planned}: {passed} passed + {failed} failed + {cut} cut; '
             f'{listed} failures listed')
print(f'{run} seeds: {passed} passed, {failed} failed, {cut} cut short')
PY
  )
  account_rc=$?
  if [ "$rc" -eq 1 ] && [ -s "$out.sweep.md" ] && [ "$account_rc" -eq 0 ] &&
     grep -qF "($(sed -E 's/^[0-9]+ seeds: //' <<<"$account"))" "$out.sweep.md" &&
     grep -qE "^  seeds run +$sweep_seeds of $sweep_seeds: " "$out.sweep.log"; then
    echo "canary $canary: a $sweep_seeds-seed sweep ran every seed and wrote --json and --markdown;" \
      "$account; aborted: ${sweep_aborted:-none}"
  else
    echo "canary $canary: the $sweep_seeds-seed sweep did NOT survive or lost seeds (exit $rc;" \
      "the account: $account;" \
      "--json/--markdown written: $([ -s "$out.sweep.json" ] && echo yes || echo no)/$(
        [ -s "$out.sweep.md" ] && echo yes || echo no))"
    tail -n 20 "$out.sweep.log"
    survived+=("$canary(sweep)")
  fi
  # The failing seed's bundle, replayed the way a user would from a default checkout: ci/replay.sh
  # finds the bundle's canary and uses (or builds) its build; the same verdict and trace hash must
  # come back (exit 0). A seed that ended in the engine's assertion has no trace hash to compare.
  sim_seed=$(grep -E '^FAIL seed [0-9]+: ' "$out.run.log" |
    grep -m1 -vE '^FAIL seed [0-9]+: (aborted|crashed|exited|hung): ' |
    grep -oE '^FAIL seed [0-9]+' | grep -oE '[0-9]+$' || true)
  if [ -n "$sim_seed" ] && [ -f "$out.sim/seed-$sim_seed.json" ]; then
    if bash ci/replay.sh "$out.sim/seed-$sim_seed.json" >"$out.replay.log" 2>&1; then
      echo "canary $canary: ci/replay.sh of seed $sim_seed's bundle: reproduced exactly"
    else
      echo "canary $canary: ci/replay.sh of seed $sim_seed's bundle did NOT reproduce it exactly"
      tail -n 20 "$out.replay.log"
      survived+=("$canary(replay)")
    fi
  fi
  # Real threads (--runtime free over the fake): the same seeds must catch the canary, and the
  # oracle alone must flag it from a failing seed's recorded trace with the engine's obs.* reports
  # cut (the OS-side rules, not the engine's word). A seed that ends in the engine's assertion
  # leaves the trace up to the abort (its header says end=abort: the end of the run is not
  # judged there); when the oracle finds nothing in it, the sweep goes on from the next seed.
  # On real threads whether a seed meets the planted interleaving is the OS scheduler's doing,
  # not the seed's: dispatch_after_close needs a close() to land between another thread's dequeue
  # and its dispatch, and was caught after 14, 29 and 65 seeds in three test commands and not
  # within 300 in a fourth (an idle machine); 18 of 1,000 seeds caught it beside a loaded one. So
  # the sweep may run up to free_seeds_max seeds (5,000: about 40 s when no seed catches it; it
  # stops at the first that does), where a planted bug caught by 1 seed in 200 is missed with a
  # probability below 1e-10. The verdict still depends on the scheduler at that level, and a
  # canary not caught is still this leg's failure.
  free_seeds_max=5000
  free_dir="$out.free"
  rm -rf "$free_dir"
  free_from=1
  free_rule=""
  free_assertions=""
  while [ -z "$free_rule" ] && [ "$free_from" -le "$free_seeds_max" ]; do
    "$dir/stress/readyport-stress" --runtime free --stop-on-failure --corpus none --jobs 1 \
      --first-seed "$free_from" --seeds $((free_seeds_max + 1 - free_from)) \
      --bundle-dir "$free_dir" \
      >"$out.free.log" 2>&1
    rc=$?
    free_first=$(grep -m1 -oE '^FAIL seed [0-9]+|aborted during seed [0-9]+' "$out.free.log" || true)
    free_seed=${free_first##* }
    if [ "$rc" -eq 0 ] || [ -z "$free_seed" ] || [ ! -f "$free_dir/seed-$free_seed.trace" ]; then
      break
    fi
    grep -v ' obs\.' "$free_dir/seed-$free_seed.trace" >"$free_dir/stripped.trace"
    "$dir/stress/readyport-stress" --check-trace "$free_dir/stripped.trace" \
      >"$out.free.check.log" 2>&1
    free_rule=$(grep -m1 -oE '^verdict: internal: O[0-9]+' "$out.free.check.log" |
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
    echo "canary $canary: real threads: the oracle alone did not flag it within" \
      "$free_seeds_max seeds" \
      "(exit $rc)$earlier"
    tail -n 20 "$out.free.log"
    survived+=("$canary(free)")
  fi
  # The canary's minimal case in the regression corpus (stress/corpus/canary-<name>.json, made by
  # --shrink) must still fail in its build.
  entry="stress/corpus/canary-$canary.json"
  if [ ! -f "$entry" ]; then
    echo "canary $canary: no corpus entry $entry"
    survived+=("$canary(corpus)")
  elif "$dir/stress/readyport-stress" --replay "$entry" \
       >"$out.corpus.log" 2>&1; then
    echo "canary $canary: its corpus entry $entry PASSED (it must fail)"
    tail -n 20 "$out.corpus.log"
    survived+=("$canary(corpus)")
  else
    echo "canary $canary: corpus entry fails as it must: $(grep -m1 -E '^FAIL|aborted' \
      "$out.corpus.log" | cut -c1-160)"
  fi
  # The engine property on the same canary (built only where RapidCheck is found).
  if [ -x "$dir/properties/readyport_properties_test" ]; then
    start=$(date +%s.%N)
    "$dir/properties/readyport_properties_test" \
      --gtest_filter="EngineProperty.Canary_${canary}_ShrinksToAtMost10" >"$out.property.log" 2>&1
    rc=$?
    seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
    if [ "$rc" -eq 0 ] && grep -q '^\[  PASSED  \] 1 test' "$out.property.log"; then
      echo "canary $canary: property $(grep -m1 -E "^canary $canary: failed and shrank" \
        "$out.property.log" | sed "s/^canary $canary: //"); binary ${seconds} s"
    else
      echo "canary $canary: the engine property did not catch and shrink it (exit $rc)"
      tail -n 40 "$out.property.log"
      survived+=("$canary(property)")
    fi
  else
    echo "canary $canary: engine property not built (no RapidCheck?)"
  fi
done
echo "canaries: built in $canary_build_s s, ran in $((SECONDS - canary_build_s)) s"
if [ "${#survived[@]}" -ne 0 ]; then
  echo "canaries not caught: ${survived[*]}"
  exit 1
fi
echo "all ${#canaries[@]} canaries caught"
