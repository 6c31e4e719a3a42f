#!/usr/bin/env bash
# The README's first command: installs what is missing, builds the native preset and runs the
# stress/simulation driver over the fake. Arguments go to the driver (see --help), e.g.
#   bash ci/stress.sh                       # the default run (seconds once built), with a summary
#   bash ci/stress.sh --seeds 5000 --shard 2/4
#   bash ci/stress.sh --seed 1234 --trace   # replay one seed and print its trace
# (To replay a failure bundle with the binary already built, without ci/setup.sh: ci/replay.sh.)
# Configure and build are quiet when they succeed; their output is in
# build/logs/stress.{configure,build}.log, and when one fails its errors are printed (the build
# log from its first failed command, and its end) and the script stops.
# Exit status: the driver's (0 every seed passed, 1 a seed failed, 2 bad arguments); 1 when the
# configure or the build failed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh

log_dir="build/logs"
mkdir -p "$log_dir"

# show_failed_log STEP LOG: the part of LOG that says why STEP failed, on stderr. A Ninja log is
# shown from its first "FAILED:" line to its end (the first compiler errors; when that is over
# 140 lines, its first 120 and its last 20); any other log by its last 80 lines.
show_failed_log() {
  local step="$1" log="$2" first total
  first=$(grep -n -m 1 '^FAILED: ' "$log" | cut -d: -f1 || true)
  total=$(wc -l <"$log")
  {
    echo "stress: the $step failed; its log ($log):"
    if [ -n "$first" ] && [ "$((total - first + 1))" -le 140 ]; then
      tail -n "+$first" "$log"
    elif [ -n "$first" ]; then
      tail -n "+$first" "$log" | head -n 120
      echo "     [... $((total - first + 1 - 140)) lines left out ...]"
      tail -n 20 "$log"
    else
      tail -n 80 "$log"
    fi
    echo "stress: the $step failed (full log: $log)"
  } >&2
}

if ! cmake --preset default >"$log_dir/stress.configure.log" 2>&1; then
  show_failed_log "configure (cmake --preset default)" "$log_dir/stress.configure.log"
  exit 1
fi
if ! cmake --build --preset default -j "${READYPORT_JOBS:-$(nproc)}" --target readyport-stress \
     >"$log_dir/stress.build.log" 2>&1; then
  show_failed_log "build (target readyport-stress)" "$log_dir/stress.build.log"
  exit 1
fi
exec build/default/stress/readyport-stress "$@"
