#!/usr/bin/env bash
# The README's test command: installs what is missing (ci/setup.sh), then builds and runs ctest
# for each leg and ends with one line "N passed, N failed, N skipped" over all legs.
#
#   bash ci/test.sh                 # every leg
#   bash ci/test.sh native          # one leg, for a quick local loop
#   bash ci/test.sh native asan     # several
#   CTEST_ARGS="-L conformance" bash ci/test.sh native   # a subset of tests
#
# Legs, in order:
#   native  g++ (RelWithDebInfo, assertions on), every test
#   load    the main job on real threads, 8 runs 4 at once (ci/load.sh; builds only
#           readyport-stress in build/default: a no-op after the native leg)
#   asan    clang-19 with AddressSanitizer + UndefinedBehaviorSanitizer, every test
#   tsan    clang-19 with ThreadSanitizer, every test
#   traces  the same seeds' traces from the g++ build and the clang (asan) build, byte for byte
#           (builds only readyport-sim-trace in build/default and build/asan: a no-op after the
#           native and asan legs, a few minutes on its own, as in the CI's traces job)
#   canaries  each planted engine bug (ci/canaries/<name>.patch) must make the main job's default
#           run fail, within 60 s (ci/canaries.sh); each canary's tree reuses build/default's
#           objects of every file its patch does not change (ccache)
#   lint    the house format of the C++ files (ci/format_check.sh: clang-format-19, 100 columns),
#           the house limit of 70 lines a function (ci/function_size.sh, and a planted 71-line
#           function it must catch), the layers (ci/layering.sh, and a planted upward include it
#           must catch), every canary patch still applies (ci/canary_tree.sh --check-all, and a
#           planted change of a patch's context it must catch), no issue numbers in code
#           comments (ci/comment_check.sh, and a planted one it must catch) and actionlint on
#           .github/workflows (ci/actionlint.sh); ten checks
#   wine    mingw-w64 cross-build run under Wine (ci/wine_leg.sh); tests needing the real
#           ProcessSocketNotifications are reported as skipped; the lint leg runs while its
#           build (started beside the canaries) goes on
#
# Builds: each leg builds only what it runs (ci/build_leg.sh: the preset's targets; the sanitizer
# presets build no benchmarks), and the next leg's build runs while this leg's tests run (one
# build ahead: the tests seldom keep both cores busy), so that a cold run on 2 cores keeps them
# busy. READYPORT_PIPELINE=0 builds each leg just before its tests instead. The tests run as they
# would alone: the flake check (ci/flake.sh) runs them under more load than this.
#
# Output: per leg, the ctest lines of failed and skipped tests, then the whole output of each
# failed test (the assertion and the replay line; at most READYPORT_FAILED_OUTPUT_LINES lines a
# test, default 400: the first third and the end), then "---- leg X: N passed, N failed,
# N skipped (build B s, test T s)": B the time its build took (in the background when it ran
# beside the leg before), T its tests'. Files: build/logs/<leg>.{configure,build,ctest}.log, and
# JUnit XML per leg in build/logs/<leg>.junit.xml (ctest's own for the ctest legs, one test case
# for the other legs). Exit status: non-zero when any leg failed to build or had a failing test.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

all_legs=(native load asan tsan traces canaries lint wine)
legs=("$@")
if [ "${#legs[@]}" -eq 0 ]; then legs=("${all_legs[@]}"); fi
for leg in "${legs[@]}"; do
  case " ${all_legs[*]} " in
    *" $leg "*) ;;
    *) echo "unknown leg '$leg' (legs: ${all_legs[*]})"; echo "0 passed, 1 failed, 0 skipped"; exit 1 ;;
  esac
done

bash ci/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

jobs="${READYPORT_JOBS:-$(nproc)}"
export READYPORT_JOBS="$jobs"
# ccache: paths under the checkout hashed as relative ones, and the build directory left out of
# the hash, so that another clone of the same commit (CI's fresh clone beside a developer's)
# reuses the compiled objects, and so does each canary's tree (ci/canaries.sh). A caller's own
# settings win.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
log_dir="build/logs"
mkdir -p "$log_dir"
passed_total=0
failed_total=0
skipped_total=0
broken_legs=()
test_start=$SECONDS  # set as each leg's tests begin
build_s=0            # the running leg's build time
command_start=$SECONDS

# ---- Builds, one leg ahead ---------------------------------------------------------------------

# build_kind LEG: what LEG builds before its tests: a ci/build_leg.sh leg, "canaries", or nothing.
build_kind() {
  case "$1" in
    native | asan | tsan | wine) echo "$1" ;;
    canaries) echo canaries ;;
    *) echo "" ;;
  esac
}

# start_build LEG: starts LEG's build in the background (once); its exit status and seconds are
# written to build/logs/<leg>.build.{rc,seconds}.
start_build() {
  local leg="$1" kind
  kind=$(build_kind "$leg")
  [ -n "$kind" ] || return 0
  [ -f "$log_dir/$leg.build.started" ] && return 0
  : >"$log_dir/$leg.build.started"
  rm -f "$log_dir/$leg.build.rc" "$log_dir/$leg.build.seconds"
  (
    start=$SECONDS
    if [ "$kind" = canaries ]; then
      bash ci/canaries.sh --build-only >"$log_dir/canaries.build.out" 2>&1
    else
      bash ci/build_leg.sh "$kind" >"$log_dir/$leg.build.out" 2>&1
    fi
    rc=$?
    echo "$((SECONDS - start))" >"$log_dir/$leg.build.seconds"
    echo "$rc" >"$log_dir/$leg.build.rc"
  ) </dev/null &
  echo "$!" >"$log_dir/$leg.build.pid"
}

# wait_build LEG: waits for LEG's build (starting it if it was not); sets build_s; prints the build
# log's end and returns 1 when it failed.
wait_build() {
  local leg="$1" pid rc
  build_s=0
  [ -n "$(build_kind "$leg")" ] || return 0
  start_build "$leg"
  pid=$(cat "$log_dir/$leg.build.pid")
  wait "$pid" 2>/dev/null
  rc=$(cat "$log_dir/$leg.build.rc" 2>/dev/null || echo 1)
  build_s=$(cat "$log_dir/$leg.build.seconds" 2>/dev/null || echo 0)
  if [ "$rc" != 0 ]; then
    tail -n 80 "$log_dir/$leg.build.out" 2>/dev/null
    return 1
  fi
}

# prefetch AFTER: starts the build of the first leg after AFTER (in the order run) that builds.
prefetch() {
  local after="$1" seen=0 leg
  [ "${READYPORT_PIPELINE:-1}" = 0 ] && return 0
  for leg in "${legs[@]}"; do
    if [ "$seen" -eq 1 ] && [ -n "$(build_kind "$leg")" ]; then
      start_build "$leg"
      return 0
    fi
    [ "$leg" = "$after" ] && seen=1
  done
}

# ---- Reports -----------------------------------------------------------------------------------

# leg_times: the running leg's build and test times, for its summary line.
leg_times() { echo "build $build_s s, test $((SECONDS - test_start)) s"; }

# ctest_counts LOG: prints "passed failed skipped" read from a ctest log.
ctest_counts() {
  local log="$1" summary total failed skipped
  summary=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
  if [ -z "$summary" ]; then echo "0 0 0"; return; fi
  failed=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$summary")
  total=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$summary")
  skipped=$(grep -cE '^[[:space:]]*[0-9]+ - .*\(Skipped\)' "$log" || true)
  echo "$((total - failed - skipped)) $failed $skipped"
}

# print_failed_output LOG: the output ctest kept (--output-on-failure, the test presets' setting)
# of every failed, timed-out or crashed test in LOG, each under its result line. A test's output
# longer than READYPORT_FAILED_OUTPUT_LINES lines (default 400) is cut in the middle, keeping the
# first third and the end; at most 30 tests are shown.
print_failed_output() {
  local log="$1"
  awk -v lines_max="${READYPORT_FAILED_OUTPUT_LINES:-400}" -v tests_max=30 -v log_file="$log" \
    -f ci/failed_output.awk "$log"
}

# write_junit_check LEG PASSED LOG: a JUnit file with one test case for a leg that is one check.
write_junit_check() {
  local leg="$1" passed="$2" log="$3" failure=""
  if [ "$passed" -ne 1 ]; then
    # The log's end as CDATA: "]]>" split, and the control characters XML 1.0 forbids dropped.
    failure="<failure message=\"leg $leg failed\"><![CDATA[$(tail -n 60 "$log" |
      tr -d '\000-\010\013\014\016-\037' | sed 's/]]>/]]]]><![CDATA[>/g')]]></failure>"
  fi
  printf '<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="%s" tests="1" failures="%d" skipped="0">\n  <testcase name="%s" classname="ci.%s">%s</testcase>\n</testsuite>\n' \
    "$leg" "$((1 - passed))" "$leg" "$leg" "$failure" >"$log_dir/$leg.junit.xml"
}

# build_failed LEG: the leg's build failed: counted, and said.
build_failed() {
  failed_total=$((failed_total + 1)); broken_legs+=("$1(build)")
  echo "---- leg $1: 0 passed, 1 failed, 0 skipped (build $build_s s, FAILED; log: $log_dir/$1.build.out)"
}

# ---- Legs --------------------------------------------------------------------------------------

# run_preset LEG PRESET: the leg's build (ci/build_leg.sh), then ctest.
run_preset() {
  local leg="$1" preset="$2" log="$log_dir/$1.ctest.log"
  echo "==== leg $leg: build (preset $preset)"
  if ! wait_build "$leg"; then build_failed "$leg"; return; fi
  prefetch "$leg"
  test_start=$SECONDS
  echo "==== leg $leg: ctest"
  # JUnit XML beside the logs (an absolute path: ctest reads a relative one from the build tree).
  # shellcheck disable=SC2086 # CTEST_ARGS is a list of words on purpose
  ctest --preset "$preset" -j "$jobs" --output-junit "$PWD/$log_dir/$leg.junit.xml" \
    ${CTEST_ARGS:-} >"$log" 2>&1
  local rc=$?
  # Failures, skips and the summary; every test's line is in the log.
  grep -E 'tests passed|\*\*\*|Total Test|The following|^[[:space:]]+[0-9]+ - ' "$log" | grep -vE '^ *Start +[0-9]+:' || true
  if grep -qE '^ *[0-9]+/[0-9]+ Test +#.*\*\*\*(Failed|Timeout|Exception|Not Run)' "$log"; then
    echo "==== leg $leg: output of the failed tests"
    print_failed_output "$log"
  fi
  echo "     (full ctest log: $log; JUnit: $log_dir/$leg.junit.xml)"
  read -r p f s < <(ctest_counts "$log")
  passed_total=$((passed_total + p)); failed_total=$((failed_total + f)); skipped_total=$((skipped_total + s))
  if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ] || [ "$((p + f + s))" -eq 0 ]; then broken_legs+=("$leg"); fi
  echo "---- leg $leg: $p passed, $f failed, $s skipped ($(leg_times))"
}

# run_check LEG CMD...: a leg that is one check; counts as one test, passed or failed.
run_check() {
  local leg="$1"; shift
  echo "==== leg $leg: $*"
  if "$@" >"$log_dir/$leg.log" 2>&1; then
    tail -n 3 "$log_dir/$leg.log"
    passed_total=$((passed_total + 1))
    write_junit_check "$leg" 1 "$log_dir/$leg.log"
    echo "---- leg $leg: 1 passed, 0 failed, 0 skipped ($(leg_times))"
  else
    tail -n 40 "$log_dir/$leg.log"
    failed_total=$((failed_total + 1)); broken_legs+=("$leg")
    write_junit_check "$leg" 0 "$log_dir/$leg.log"
    echo "---- leg $leg: 0 passed, 1 failed, 0 skipped ($(leg_times))"
  fi
}

# build_sim_trace PRESET: configures the preset's tree when it has no cache yet and brings its
# readyport-sim-trace up to date (only that target). Logs: build/logs/traces.PRESET.log.
build_sim_trace() {
  local preset="$1" log="$log_dir/traces.$1.log"
  : >"$log"
  if [ ! -f "build/$preset/CMakeCache.txt" ] && ! cmake --preset "$preset" >>"$log" 2>&1; then
    tail -n 40 "$log"; echo "traces: configuring preset $preset failed (log: $log)"; return 1
  fi
  if ! cmake --build --preset "$preset" -j "$jobs" --target readyport-sim-trace >>"$log" 2>&1; then
    tail -n 60 "$log"; echo "traces: building readyport-sim-trace (preset $preset) failed (log: $log)"
    return 1
  fi
}

# run_traces: the g++ build's traces against the clang build's, the tools built first.
run_traces() {
  local preset start=$SECONDS
  echo "==== leg traces: readyport-sim-trace in build/default (g++) and build/asan (clang)"
  for preset in default asan; do
    if ! build_sim_trace "$preset"; then
      build_s=$((SECONDS - start))
      failed_total=$((failed_total + 1)); broken_legs+=("traces(build)")
      write_junit_check traces 0 "$log_dir/traces.$preset.log"
      echo "---- leg traces: 0 passed, 1 failed, 0 skipped (build $build_s s)"
      return
    fi
  done
  build_s=$((SECONDS - start))
  test_start=$SECONDS
  run_check traces bash ci/compare_traces.sh build/default build/asan
}

# run_load: ci/load.sh (its build of readyport-stress is a no-op after the native leg).
run_load() {
  test_start=$SECONDS
  run_check load bash ci/load.sh
  grep -E "^load: run" "$log_dir/load.log" || true
}

# run_canaries: the canaries' builds (ci/canaries.sh --build-only, in the background when the leg
# before ran), then ci/canaries.sh, whose builds are then up to date.
run_canaries() {
  echo "==== leg canaries: build (ci/canaries.sh --build-only)"
  if ! wait_build canaries; then build_failed canaries; return; fi
  grep -E "^canary [a-z_]+: built in" "$log_dir/canaries.build.out" || true
  prefetch canaries
  test_start=$SECONDS
  run_check canaries bash ci/canaries.sh
  grep -E "^canary " "$log_dir/canaries.log" | grep -v ": built in" || true
}

# run_wine: the mingw build (ci/build_leg.sh wine), then ci/wine_leg.sh, which prints its own
# ctest report and a "---- leg wine:" count line; its own build step is then a no-op.
run_wine() {
  local log="$log_dir/wine.leg.log"
  echo "==== leg wine: build (preset mingw)"
  if ! wait_build wine; then build_failed wine; return; fi
  prefetch wine
  test_start=$SECONDS
  bash ci/wine_leg.sh </dev/null >"$log" 2>&1
  local rc=$?
  # Everything the leg printed but the lines of passed tests: its steps, failed and skipped
  # tests, the output of the failed ones, the trace comparison and its count line.
  grep -vE '^ *[0-9]+/[0-9]+ Test +#.*[[:space:]]Passed[[:space:]]|^---- leg wine: ' "$log" || true
  echo "     (full log: $log)"
  local counts
  counts=$(grep -E '^---- leg wine: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$log" | tail -n 1)
  if [ -n "$counts" ]; then
    read -r p f s < <(sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/' <<<"$counts")
    passed_total=$((passed_total + p)); failed_total=$((failed_total + f)); skipped_total=$((skipped_total + s))
    echo "---- leg wine: $p passed, $f failed, $s skipped ($(leg_times))"
  else
    echo "---- leg wine: no count line from ci/wine_leg.sh ($(leg_times))"
  fi
  if [ "$rc" -ne 0 ] || [ -z "$counts" ]; then broken_legs+=("wine"); fi
}

run_lint() {
  local check
  build_s=0
  for check in "format bash ci/format_check.sh" "function_size bash ci/function_size.sh" \
               "function_size_plant bash ci/function_size.sh --plant" \
               "layering bash ci/layering.sh" "layering_plant bash ci/layering.sh --plant" \
               "canary_patches bash ci/canary_tree.sh --check-all" \
               "canary_patches_plant bash ci/canary_tree.sh --plant" \
               "comments bash ci/comment_check.sh" "comments_plant bash ci/comment_check.sh --plant" \
               "actionlint bash ci/actionlint.sh"; do
    test_start=$SECONDS
    # shellcheck disable=SC2086 # each entry is a leg name and a command, as words
    run_check $check
  done
}

rm -f "$log_dir"/*.build.started
# The first leg's build starts now; each leg then starts the next one's before its tests.
start_build "${legs[0]}"
for leg in "${legs[@]}"; do
  test_start=$SECONDS
  build_s=0
  case "$leg" in
    native) run_preset native default ;;
    load) prefetch load; run_load ;;
    asan) run_preset asan asan ;;
    tsan) run_preset tsan tsan ;;
    traces) prefetch traces; run_traces ;;
    canaries) run_canaries ;;
    wine) run_wine ;;
    lint) prefetch lint; run_lint ;;
  esac
done
wait  # a build started for a leg that never came (none, in the order above)

if [ "${#broken_legs[@]}" -ne 0 ]; then
  echo "broken legs: ${broken_legs[*]}"
  [ "$failed_total" -eq 0 ] && failed_total=${#broken_legs[@]}
fi
echo "all legs: $((SECONDS - command_start)) s on $(nproc) cores (builds one leg ahead of the tests)"
echo "$passed_total passed, $failed_total failed, $skipped_total skipped"
[ "${#broken_legs[@]}" -eq 0 ]
