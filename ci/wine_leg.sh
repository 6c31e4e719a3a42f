#!/usr/bin/env bash
# The mingw+Wine leg: cross-builds core, fakes, WindowsOs and their GoogleTest tests for 64-bit
# Windows (CMake preset "mingw") and runs them with ctest under Wine, headless.
#
#   bash ci/wine_leg.sh            # from anywhere; ci/test.sh calls it as the leg "wine"
#   CTEST_ARGS="-L windows" bash ci/wine_leg.sh
#
# What it does, in order:
# 1. checks that exactly one source file includes the Winsock header (core/src/windows_os.cpp);
# 2. configures and builds build/mingw (ci/build_leg.sh wine; logs in build/logs/wine.*.log);
# 3. starts one persistent wineserver for the prefix build/wine-prefix with every descriptor
#    detached (never a pipe of ours: a Wine process that inherits one keeps it open and whoever
#    reads it hangs), boots the prefix, and kills the server in an EXIT trap;
# 4. lists the tests (ctest -N: they are discovered at test time through Wine, DISCOVERY_MODE
#    PRE_TEST, and a listing that fails is said with CMake's message), runs ctest and prints its
#    output (its log's end when it printed no summary): tests that need the real
#    ProcessSocketNotifications, which Wine 8 lacks, are reported by ctest as skipped, not
#    passed; the whole output of each failed test (at most
#    READYPORT_FAILED_OUTPUT_LINES lines a test, default 400); JUnit XML in
#    build/logs/wine.junit.xml. A failed test that printed no verdict never finished under Wine
#    (no process started, or one lost midway): it alone is launched once more, and the leg says
#    so; a test that reported a failure is never launched again;
# 5. compares the determinism tool readyport-sim-trace of this build (under Wine) with the native
#    one's (READYPORT_NATIVE_BUILD_DIR, default build/default) over a few seeds: the fake must
#    behave the same when compiled for Windows. The native tool is built first (only that target;
#    the tree is configured with the preset "default" when it has no cache yet), so the check runs
#    on a machine that built nothing else, such as the CI's Wine job.
# Prints "---- leg wine: N passed, N failed, N skipped" last. Exit status: non-zero when a step
# failed, a test failed, a trace tool could not be built, or a trace hash differs.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

jobs="${READYPORT_JOBS:-2}"
log_dir="build/logs"
build_dir="build/mingw"
mkdir -p "$log_dir"
failures=()

# One run at a time per work tree: two runs would share build/mingw and the Wine prefix, and the
# first to finish would kill the other's wineserver.
exec 9>"build/.wine_leg.lock"
if ! flock -w 3600 9; then
  echo "wine leg: another run of ci/wine_leg.sh holds build/.wine_leg.lock"
  echo "---- leg wine: 0 passed, 1 failed, 0 skipped"
  exit 1
fi

# ---- 0. tools --------------------------------------------------------------------------------
if ! command -v x86_64-w64-mingw32-g++-posix >/dev/null 2>&1 || ! command -v wine >/dev/null 2>&1 ||
   ! command -v wineserver >/dev/null 2>&1; then
  bash ci/setup.sh || { echo "wine leg: setup failed"; echo "---- leg wine: 0 passed, 1 failed, 0 skipped"; exit 1; }
fi

# ---- 1. one file includes the Winsock header ------------------------------------------------
mapfile -t winsock_files < <(grep -rlE --include='*.cpp' --include='*.hpp' --include='*.h' \
                             --include='*.cc' --exclude-dir=build --exclude-dir=.git \
                             '^[[:space:]]*#[[:space:]]*include[[:space:]]*<winsock2\.h>' .)
if [ "${#winsock_files[@]}" -ne 1 ]; then
  echo "wine leg: expected exactly one source file to include the Winsock header, found ${#winsock_files[@]}: ${winsock_files[*]}"
  failures+=("winsock-include")
fi

# ---- 2. configure and build ------------------------------------------------------------------
# ci/build_leg.sh wine: the preset's targets, all of them run under Wine (a no-op when ci/test.sh
# built them before this leg).
echo "==== leg wine: configure and build (preset mingw)"
build_start=$SECONDS
if ! bash ci/build_leg.sh wine; then
  echo "---- leg wine: 0 passed, 1 failed, 0 skipped (build $((SECONDS - build_start)) s)"
  exit 1
fi
build_seconds=$((SECONDS - build_start))
test_start=$SECONDS

# ---- 3. a persistent, detached wineserver ----------------------------------------------------
# shellcheck source=ci/wine_env.sh
. ci/wine_env.sh
echo "==== leg wine: starting wineserver (prefix $WINEPREFIX)"
wine_start

# ---- 4. ctest under Wine ---------------------------------------------------------------------
# First the listing alone (ctest -N): under DISCOVERY_MODE PRE_TEST ctest lists each test
# program's tests through Wine before it runs any, and one listing that fails stops ctest with
# no test run and no summary. Done apart, its failure is said as such, with CMake's message.
echo "==== leg wine: listing the tests (ctest -N)"
list_log="$log_dir/wine.list.log"
list_start=$SECONDS
# shellcheck disable=SC2086 # CTEST_ARGS is a list of words on purpose
if ctest --preset mingw -N ${CTEST_ARGS:-} </dev/null >"$list_log" 2>&1; then
  echo "     $(grep -E '^Total Tests: ' "$list_log" || echo 'no total printed') in" \
    "$((SECONDS - list_start)) s"
else
  grep -vE '^ *Test +#' "$list_log" | head -n 60
  echo "wine leg: listing the tests failed (ctest -N; log: $list_log); ctest runs anyway"
fi
echo "==== leg wine: ctest"
ctest_log="$log_dir/wine.ctest.log"
# Output goes to a file, not a pipe; the preset sets the same WINE* variables.
# shellcheck disable=SC2086 # CTEST_ARGS is a list of words on purpose
ctest --preset mingw -j "$jobs" --output-junit "$PWD/$log_dir/wine.junit.xml" ${CTEST_ARGS:-} \
  </dev/null >"$ctest_log" 2>&1
ctest_rc=$?
# ctest's report: one line per test, then its summary (the skipped tests listed as "(Skipped)",
# the failed ones as "(Failed)"). Every test's output is in the log.
grep -E '^ *[0-9]+/[0-9]+ Test +#' "$ctest_log"
sed -n '/tests passed, .* failed out of/,$p' "$ctest_log"
echo "     full ctest output: $ctest_log; JUnit: $log_dir/wine.junit.xml"
if grep -qE '^ *[0-9]+/[0-9]+ Test +#.*\*\*\*(Failed|Timeout|Exception|Not Run)' "$ctest_log"; then
  echo "==== leg wine: output of the failed tests"
  # The output ctest kept for each failed test, under its result line; one longer than
  # READYPORT_FAILED_OUTPUT_LINES is cut in the middle (the first third and the end are kept);
  # at most 30 tests (ci/failed_output.awk, as in ci/test.sh).
  awk -v lines_max="${READYPORT_FAILED_OUTPUT_LINES:-400}" -v tests_max=30 \
    -v log_file="$ctest_log" -f ci/failed_output.awk "$ctest_log"
fi

summary=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$ctest_log" | tail -n 1)
if [ -n "$summary" ]; then
  failed=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$summary")
  total=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$summary")
else
  # No summary: ctest stopped before its first test (a listing that failed, a preset or
  # configuration error). What it printed is the only account of why.
  echo "wine leg: ctest printed no summary (exit $ctest_rc); the end of $ctest_log:"
  tail -n 40 "$ctest_log"
  failed=0
  total=0
fi
skipped=$(grep -cE '^[[:space:]]*[0-9]+ - .*\(Skipped\)$' "$ctest_log" || true)
# A failed test that printed no verdict at all never finished under Wine: either Wine started no
# process (nothing printed at all: ci/wine_exec.sh already ran such a launch again, up to three
# attempts, and said so in the test's log), or a process of it vanished midway (a death test's output that stops after its children's first lines, with no
# result line and no failure). Such a test, and only such a test, is launched once more, and said
# so; one that reported a failure (an assertion's text, gtest's FAILED line) is a failure as it
# stands. A crash that came back would fail the relaunch too; the native legs run the same tests.
if [ "$failed" -ne 0 ]; then
  mapfile -t silent < <(python3 - "$log_dir/wine.junit.xml" "$ctest_log" <<'PY'
import re
import sys
import xml.etree.ElementTree as ET
numbers = {}
for line in open(sys.argv[2], encoding='utf-8', errors='replace'):
    m = re.search(r'Test +#(\d+): (.*?) \.+\*\*\*Failed', line)
    if m:
        numbers[m.group(2).strip()] = m.group(1)
# What a test that reported its result prints: gtest's result lines, or an assertion's text.
verdict = re.compile(r'^\[ +(OK|FAILED|SKIPPED) +\]|Failure$|^Expected|error: |assertion failed',
                     re.M)
for case in ET.parse(sys.argv[1]).getroot().iter('testcase'):
    out = case.find('system-out')
    text = '' if out is None else (out.text or '')
    if case.get('status') == 'fail' and not verdict.search(text):
        name = case.get('name')
        if name in numbers:
            # The name as an anchored CMake regular expression, for ctest -R.
            pattern = '^' + re.sub(r'([][.*+?^$()|\\])', r'\\\1', name) + '$'
            print(numbers[name] + '\t' + name + '\t' + pattern)
PY
  )
  for entry in "${silent[@]}"; do
    IFS=$'\t' read -r number name pattern <<<"$entry"
    if ctest --preset mingw -R "$pattern" --no-tests=error --output-on-failure </dev/null \
        >>"$log_dir/wine.relaunched.log" 2>&1; then
      echo "wine leg: test #$number ($name) printed no verdict (Wine started no process, or" \
        "lost one midway); launched again, it passed (log: $log_dir/wine.relaunched.log)"
      failed=$((failed - 1))
    else
      echo "wine leg: test #$number ($name) printed no verdict, and failed again when launched" \
        "again (log: $log_dir/wine.relaunched.log)"
    fi
  done
  if [ "$failed" -eq 0 ] && [ "$total" -ne 0 ]; then ctest_rc=0; fi
fi
passed=$((total - failed - skipped))
if [ "$ctest_rc" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$total" -eq 0 ]; then failures+=("ctest"); fi

# ---- 5. the fake's trace hash: Windows build against the native build ------------------------
# ci/compare_traces.sh (the determinism tool's own comparison) runs both tools; the Windows one
# through a wrapper around ci/wine_exec.sh (output through files, CR LF turned into LF).
# The native tool: configured with the preset "default" when its tree has no cache yet, then
# only that target brought up to date (a no-op after the native leg).
native_dir="${READYPORT_NATIVE_BUILD_DIR:-build/default}"
native_log="$log_dir/wine.native_sim_trace.log"
echo "==== leg wine: the native readyport-sim-trace ($native_dir)"
: >"$native_log"
if [ ! -f "$native_dir/CMakeCache.txt" ] &&
   ! cmake --preset default -B "$native_dir" >>"$native_log" 2>&1; then
  tail -n 40 "$native_log"
  echo "wine leg: configuring $native_dir (preset default) failed (log: $native_log)"
  failures+=("native-sim-trace")
elif ! cmake --build "$native_dir" -j "$jobs" --target readyport-sim-trace >>"$native_log" 2>&1; then
  tail -n 60 "$native_log"
  echo "wine leg: building readyport-sim-trace in $native_dir failed (log: $native_log)"
  failures+=("native-sim-trace")
fi
native_tool=$(find "$native_dir" -type f -name 'readyport-sim-trace' -perm -u+x 2>/dev/null | head -n 1)
windows_tool=$(find "$build_dir" -type f -name 'readyport-sim-trace.exe' 2>/dev/null | head -n 1)
if [ -z "$windows_tool" ]; then
  echo "wine leg: trace hash comparison not run: $build_dir has no readyport-sim-trace.exe"
  failures+=("trace-hashes")
elif [ -z "$native_tool" ]; then
  echo "wine leg: trace hash comparison not run: $native_dir has no readyport-sim-trace"
  failures+=("trace-hashes")
else
  echo "==== leg wine: trace hashes, $native_tool against $windows_tool under Wine"
  wrapper="$build_dir/readyport-sim-trace-wine"
  cat >"$wrapper" <<WRAPPER
#!/usr/bin/env bash
# Generated by ci/wine_leg.sh: runs readyport-sim-trace.exe under Wine, like the native tool.
exec bash "$PWD/ci/wine_exec.sh" "$PWD/$windows_tool" "\$@"
WRAPPER
  chmod +x "$wrapper"
  if SEEDS="${WINE_TRACE_SEEDS:-100}" FULL="${WINE_TRACE_FULL:-3}" \
     bash ci/compare_traces.sh "$native_tool" "$wrapper" </dev/null >"$log_dir/wine.traces.log" 2>&1; then
    tail -n 1 "$log_dir/wine.traces.log"
  else
    tail -n 25 "$log_dir/wine.traces.log"
    failures+=("trace-hashes")
  fi
fi

if [ "${#failures[@]}" -ne 0 ]; then
  echo "wine leg failed: ${failures[*]}"
  if [ "$failed" -eq 0 ]; then failed=${#failures[@]}; fi
fi
echo "---- leg wine: $passed passed, $failed failed, $skipped skipped (build $build_seconds s," \
  "test $((SECONDS - test_start)) s)"
[ "${#failures[@]}" -eq 0 ]
