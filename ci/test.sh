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
#   asan    clang-19 with AddressSanitizer + UndefinedBehaviorSanitizer, every test
#   tsan    clang-19 with ThreadSanitizer, every test
#   traces  the same seeds' traces from the g++ build and the clang (asan) build, byte for byte
#           (needs native and asan built first)
#   wine    mingw-w64 cross-build run under Wine (ci/wine_leg.sh); tests needing the real
#           ProcessSocketNotifications are reported as skipped
#   canaries  each planted engine bug (cmake/canary.cmake) must make the main job's default run
#           fail, within 60 s (ci/canaries.sh)
#   lint    actionlint on .github/workflows (ci/actionlint.sh)
# Exit status: non-zero when any leg failed to build or had a failing test.
set -uo pipefail
cd "$(dirname "$0")/.."

all_legs=(native asan tsan traces canaries wine lint)
legs=("$@")
if [ "${#legs[@]}" -eq 0 ]; then legs=("${all_legs[@]}"); fi

bash ci/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

jobs="${READYPORT_JOBS:-$(nproc)}"
log_dir="build/logs"
mkdir -p "$log_dir"
passed_total=0
failed_total=0
skipped_total=0
broken_legs=()

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

# run_preset LEG PRESET: configure, build and test one CMake preset.
run_preset() {
  local leg="$1" preset="$2" log="$log_dir/$1.ctest.log"
  echo "==== leg $leg: configure and build (preset $preset)"
  if ! cmake --preset "$preset" >"$log_dir/$leg.configure.log" 2>&1; then
    cat "$log_dir/$leg.configure.log"; broken_legs+=("$leg(configure)"); return
  fi
  if ! cmake --build --preset "$preset" -j "$jobs" >"$log_dir/$leg.build.log" 2>&1; then
    tail -n 80 "$log_dir/$leg.build.log"; broken_legs+=("$leg(build)"); return
  fi
  echo "==== leg $leg: ctest"
  # shellcheck disable=SC2086 # CTEST_ARGS is a list of words on purpose
  ctest --preset "$preset" -j "$jobs" ${CTEST_ARGS:-} >"$log" 2>&1
  local rc=$?
  # Failures, skips and the summary; every test's line is in the log.
  grep -E 'tests passed|\*\*\*|Total Test|The following|^[[:space:]]+[0-9]+ - ' "$log" | grep -vE '^ *Start +[0-9]+:' || true
  echo "     (full ctest log: $log)"
  read -r p f s < <(ctest_counts "$log")
  passed_total=$((passed_total + p)); failed_total=$((failed_total + f)); skipped_total=$((skipped_total + s))
  if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ] || [ "$((p + f + s))" -eq 0 ]; then broken_legs+=("$leg"); fi
  echo "---- leg $leg: $p passed, $f failed, $s skipped"
}

# run_check LEG CMD...: a leg that is one check; counts as one test, passed or failed.
run_check() {
  local leg="$1"; shift
  echo "==== leg $leg: $*"
  if "$@" >"$log_dir/$leg.log" 2>&1; then
    tail -n 3 "$log_dir/$leg.log"
    passed_total=$((passed_total + 1))
    echo "---- leg $leg: 1 passed, 0 failed, 0 skipped"
  else
    tail -n 40 "$log_dir/$leg.log"
    failed_total=$((failed_total + 1)); broken_legs+=("$leg")
    echo "---- leg $leg: 0 passed, 1 failed, 0 skipped"
  fi
}

# run_wine: the mingw+Wine leg prints its own ctest report and a "---- leg wine:" count line.
run_wine() {
  local log="$log_dir/wine.leg.log"
  bash ci/wine_leg.sh </dev/null >"$log" 2>&1
  local rc=$?
  grep -E '^====|tests passed|\*\*\*|Total Test|The following|^[[:space:]]+[0-9]+ - |compare_traces|^---- leg|^wine' "$log" | grep -vE '^ *Start +[0-9]+:' || true
  echo "     (full log: $log)"
  local counts
  counts=$(grep -E '^---- leg wine: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$log" | tail -n 1)
  if [ -n "$counts" ]; then
    read -r p f s < <(sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/' <<<"$counts")
    passed_total=$((passed_total + p)); failed_total=$((failed_total + f)); skipped_total=$((skipped_total + s))
  fi
  if [ "$rc" -ne 0 ] || [ -z "$counts" ]; then tail -n 40 "$log"; broken_legs+=("wine"); fi
}

for leg in "${legs[@]}"; do
  case "$leg" in
    native) run_preset native default ;;
    asan) run_preset asan asan ;;
    tsan) run_preset tsan tsan ;;
    traces) run_check traces bash ci/compare_traces.sh build/default build/asan ;;
    canaries) run_check canaries bash ci/canaries.sh; grep -E "^canary " "$log_dir/canaries.log" || true ;;
    wine) run_wine ;;
    lint) run_check lint bash ci/actionlint.sh ;;
    *) echo "unknown leg '$leg' (legs: ${all_legs[*]})"; broken_legs+=("$leg") ;;
  esac
done

if [ "${#broken_legs[@]}" -ne 0 ]; then
  echo "broken legs: ${broken_legs[*]}"
  [ "$failed_total" -eq 0 ] && failed_total=${#broken_legs[@]}
fi
echo "$passed_total passed, $failed_total failed, $skipped_total skipped"
[ "${#broken_legs[@]}" -eq 0 ]
