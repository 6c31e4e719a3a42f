#!/usr/bin/env bash
# Configures and builds what one leg of the test command runs, and nothing else (ci/test.sh,
# ci/flake.sh and ci/wine_leg.sh call it; so can a developer):
#
#   bash ci/build_leg.sh native      # build/default: every target (tests, benchmarks, drivers)
#   bash ci/build_leg.sh asan        # build/asan: the tests and readyport-sim-trace
#   bash ci/build_leg.sh tsan        # build/tsan: the tests
#   bash ci/build_leg.sh wine        # build/mingw: the tests that run under Wine and
#                                    # readyport-sim-trace.exe
#
# The tree is configured with its CMake preset when it has no cache yet (or the preset's cache
# is older than a CMake file: cmake reruns itself then anyway). Logs: build/logs/<leg>.configure.log
# and build/logs/<leg>.build.log; on a failure the end of the log is printed. READYPORT_JOBS sets
# the build's parallelism (default: the online CPUs). Prints one line, "build_leg: <leg> built in
# T s". Exit status: 0 built; 1 configure or build failed; 2 an unknown leg.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

leg="${1:-}"
case "$leg" in
  native) preset=default ;;
  asan | tsan) preset="$leg" ;;
  wine) preset=mingw ;;
  *) echo "build_leg: unknown leg '$leg' (legs: native asan tsan wine)"; exit 2 ;;
esac
jobs="${READYPORT_JOBS:-$(nproc)}"
log_dir="build/logs"
mkdir -p "$log_dir"
# ccache: paths under the checkout hashed as relative ones, and the build directory left out of
# the hash, so that another clone of the same commit reuses the compiled objects (ci/test.sh).
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"

start=$SECONDS
if ! cmake --preset "$preset" >"$log_dir/$leg.configure.log" 2>&1; then
  cat "$log_dir/$leg.configure.log"
  echo "build_leg: configuring $leg (preset $preset) failed (log: $log_dir/$leg.configure.log)"
  exit 1
fi
if ! cmake --build --preset "$preset" -j "$jobs" >"$log_dir/$leg.build.log" 2>&1; then
  tail -n 80 "$log_dir/$leg.build.log"
  echo "build_leg: building $leg (preset $preset) failed (log: $log_dir/$leg.build.log)"
  exit 1
fi
echo "build_leg: $leg built in $((SECONDS - start)) s"
