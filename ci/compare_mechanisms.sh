#!/usr/bin/env bash
# The main job side by side under SimScheduler's two mechanisms, in one run on this machine:
# the thread baton (kThreads, one seed at a time), user-space fibers (kFibers, one seed at a
# time), and the default run (fibers, seeds on every core: --jobs N). Prints each run's wall time
# and the speed-ups, and checks that the three runs' per-seed trace hashes are identical.
#
#   bash ci/compare_mechanisms.sh [readyport-stress options, e.g. --seeds 100]
#
# Uses build/default/stress/readyport-stress (built by `bash ci/stress.sh` or the native leg);
# builds it with the default preset when it is missing. Exit status: 1 when the hashes differ, a
# run fails, or the binary cannot be built.
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1

stress="build/default/stress/readyport-stress"
if [ ! -x "$stress" ]; then
  bash ci/setup.sh
  cmake --preset default >/dev/null
  cmake --build build/default --target readyport-stress >/dev/null
fi
out_dir="build/compare_mechanisms"
mkdir -p "$out_dir"

# run NAME ARGS...: one main-job run; its JSON summary in $out_dir/NAME.json, its wall seconds on
# stdout (measured here, around the whole process).
run() {
  local name="$1"; shift
  local start end
  start=$(date +%s.%N)
  if ! "$stress" "$@" --json "$out_dir/$name.json" >"$out_dir/$name.log" 2>&1; then
    echo "compare: the $name run failed (log: $out_dir/$name.log)" >&2
    tail -n 20 "$out_dir/$name.log" >&2
    exit 1
  fi
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f\n", b - a }'
}

threads_s=$(run threads --mechanism threads --jobs 1 "$@")
fibers_s=$(run fibers --mechanism fibers --jobs 1 "$@")
default_s=$(run default "$@")

python3 - "$out_dir" "$threads_s" "$fibers_s" "$default_s" <<'PY'
import json, sys
out, t, f, d = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
runs = {name: json.load(open(f"{out}/{name}.json")) for name in ("threads", "fibers", "default")}
hashes = {name: run["seed_hashes"] for name, run in runs.items()}
same = hashes["threads"] == hashes["fibers"] == hashes["default"]
steps = runs["threads"]["steps_all"]
print(f"main job: {runs['threads']['seeds_run']} seeds + {runs['threads']['corpus']['entries']} corpus entries, "
      f"{steps:,} scheduled calls; {len(hashes['threads'])} per-seed trace hashes "
      f"{'identical in all three runs' if same else 'DIFFER'}")
print(f"  threads (baton), 1 job        {t:8.2f} s  {steps / t:12,.0f} calls/s")
print(f"  fibers, 1 job                 {f:8.2f} s  {steps / f:12,.0f} calls/s  {t / f:5.1f}x")
print(f"  default (fibers, {runs['default']['jobs']} jobs)      {d:8.2f} s  {steps / d:12,.0f} calls/s  {t / d:5.1f}x")
sys.exit(0 if same else 1)
PY
