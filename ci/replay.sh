#!/usr/bin/env bash
# Replays one failure bundle (the JSON file readyport-stress writes for each failing seed, e.g.
# build/failures/seed-93.json from the nightly's artifact) with the driver already built: no
# package is installed, nothing but the driver is built.
#
#   bash ci/replay.sh BUNDLE [DRIVER OPTIONS...]      # e.g. bash ci/replay.sh seed-93.json
#   bash ci/replay.sh --build BUNDLE [...]            # bring the driver up to date first
#   bash ci/replay.sh seed-93.json --trace-out seed-93.trace   # options go to the driver
#
# Runs build/default/stress/readyport-stress --replay BUNDLE (READYPORT_STRESS names another
# binary). When that binary is missing, or with --build, builds only the target readyport-stress
# in build/default (configured with the preset "default" when it has no cache yet): that needs
# cmake 3.25+, ninja, g++ and the libraries the tree finds at configure time (GoogleTest, CLI11,
# nlohmann-json; ci/setup.sh installs them, this script never does). The driver warns when the
# bundle was written at another commit than the binary's: check that commit out and use --build.
# The driver runs in the caller's directory (relative paths in its options are the caller's).
# Output: the driver's replay (the failure again, or a pass). Build logs:
# build/logs/replay.{configure,build}.log.
# Exit status: the driver's: 0 the same verdict and trace hash as recorded, 3 the same verdict
# with another trace, 4 not reproduced (it passes now, or fails another way); a corpus entry: 0 it
# passes, 1 it fails; 2 a bad bundle or option, or a binary that cannot be built.
set -uo pipefail

usage() {
  echo "usage: bash ci/replay.sh [--build] BUNDLE [readyport-stress options...]" >&2
  exit 2
}

# -h / --help: the usage and the comment above, on stdout; exit 0.
help() {
  echo "usage: bash ci/replay.sh [--build] BUNDLE [readyport-stress options...]"
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
}

build=0
case "${1:-}" in -h | --help) help ;; esac
if [ "${1:-}" = "--build" ]; then build=1; shift; fi
if [ "$#" -lt 1 ]; then usage; fi
case "$1" in -h | --help) help ;; esac
bundle="$1"
shift
if [ ! -f "$bundle" ]; then
  echo "replay: no such bundle file: $bundle" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)" || exit 2
binary="${READYPORT_STRESS:-$root/build/default/stress/readyport-stress}"
log_dir="$root/build/logs"

# build_driver: configures build/default when it has no cache, then builds readyport-stress.
build_driver() {
  local tool
  for tool in cmake ninja g++; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "replay: $binary must be built, and that needs $tool, which is not on PATH." >&2
      echo "replay: install cmake (3.25 or later), ninja and g++ (on Debian 12: bash ci/setup.sh)," \
        "or point READYPORT_STRESS at a built readyport-stress" >&2
      return 1
    fi
  done
  mkdir -p "$log_dir"
  if [ ! -f "$root/build/default/CMakeCache.txt" ]; then
    echo "replay: configuring build/default (preset default)" >&2
    if ! (cd "$root" && cmake --preset default) >"$log_dir/replay.configure.log" 2>&1; then
      tail -n 40 "$log_dir/replay.configure.log" >&2
      echo "replay: configuring failed (log: $log_dir/replay.configure.log); the tree needs" \
        "GoogleTest, CLI11 and nlohmann-json (Debian 12: libgtest-dev libgmock-dev libcli11-dev" \
        "nlohmann-json3-dev)" >&2
      return 1
    fi
  fi
  echo "replay: building readyport-stress (build/default)" >&2
  if ! cmake --build "$root/build/default" -j "${READYPORT_JOBS:-$(nproc)}" --target readyport-stress \
       >"$log_dir/replay.build.log" 2>&1; then
    tail -n 60 "$log_dir/replay.build.log" >&2
    echo "replay: the build failed (log: $log_dir/replay.build.log)" >&2
    return 1
  fi
}

if [ "$build" -eq 1 ] || [ ! -x "$binary" ]; then
  if [ -n "${READYPORT_STRESS:-}" ]; then
    if [ ! -x "$binary" ]; then
      echo "replay: READYPORT_STRESS=$binary is not an executable file" >&2
      exit 2
    fi
    echo "replay: --build ignored: READYPORT_STRESS names the binary to run" >&2
  elif ! build_driver; then
    exit 2
  fi
fi
echo "replay: $binary --replay $bundle${*:+ $*}" >&2
exec "$binary" --replay "$bundle" "$@"
