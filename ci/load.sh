#!/usr/bin/env bash
# The main job on real threads under load: several runs of `readyport-stress --runtime free` at
# once on the machine's cores, as a busy CI runner has them. Real threads interleave as the OS
# schedules them; a check that depends on how it schedules fails here (docs/faults.md, "Real
# threads"). The test command runs it as the leg "load"; the nightly job at a larger scale.
#
#   bash ci/load.sh                                   # 8 default runs, 4 at once
#   bash ci/load.sh --runs 40 --at-once 4 -- --seeds 1000 --first-seed 5000000
#
# Arguments after `--` go to every run (each run's own defaults otherwise: seeds 1..300, no
# corpus). Builds only readyport-stress in build/default (configured when it has no cache yet: the
# native leg's tree, so a no-op after it). Each run writes its output and any failure's bundle and
# trace under build/load/run-<N>/. Prints one line per failed run with its first failure, then
# "load: R runs ... P passed, F failed in T s". Exit status: non-zero when a run failed or the
# build failed; 2 on a bad command line.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

runs=8
at_once=4
while [ "$#" -gt 0 ]; do
  case "$1" in
    --runs) runs="${2:-}"; shift 2 ;;
    --at-once) at_once="${2:-}"; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "load: unknown argument '$1' (see --help)"; exit 2 ;;
  esac
done
if ! [[ "$runs" =~ ^[1-9][0-9]{0,3}$ ]] || ! [[ "$at_once" =~ ^[1-9][0-9]?$ ]]; then
  echo "load: --runs must be 1..9999 and --at-once 1..99"; exit 2
fi
run_args=("$@")

start=$SECONDS
mkdir -p build/logs
log="build/logs/load.build.log"
: >"$log"
if [ ! -f build/default/CMakeCache.txt ] && ! cmake --preset default >>"$log" 2>&1; then
  tail -n 40 "$log"; echo "load: configuring preset default failed (log: $log)"; exit 1
fi
if ! cmake --build --preset default --target readyport-stress >>"$log" 2>&1; then
  tail -n 60 "$log"; echo "load: building readyport-stress failed (log: $log)"; exit 1
fi
stress="$PWD/build/default/stress/readyport-stress"
rm -rf build/load
mkdir -p build/load

# run_one N: one run in build/load/run-N; its exit status in build/load/run-N/rc.
run_one() {
  local dir="build/load/run-$1"
  mkdir -p "$dir"
  (cd "$dir" && "$stress" --runtime free --corpus none "${run_args[@]}" >out.txt 2>&1
   echo "$?" >rc)
}

for ((first = 1; first <= runs; first += at_once)); do
  for ((n = first; n < first + at_once && n <= runs; ++n)); do run_one "$n" & done
  wait
done

passed=0 failed=0 seeds=0
for ((n = 1; n <= runs; ++n)); do
  dir="build/load/run-$n"
  seeds_run=$(sed -nE 's/^ *seeds run +([0-9]+).*/\1/p' "$dir/out.txt" | tail -n 1)
  seeds=$((seeds + ${seeds_run:-0}))
  if [ "$(cat "$dir/rc" 2>/dev/null)" = "0" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "load: run $n failed (exit $(cat "$dir/rc" 2>/dev/null || echo none)):" \
      "$(grep -m 1 -E '^FAIL|hang|assertion' "$dir/out.txt" || tail -n 1 "$dir/out.txt")"
    echo "      output, bundles and traces: $dir/"
  fi
done
echo "load: $runs runs of the main job on real threads, $at_once at once on $(nproc) cores," \
  "$seeds seeds in all: $passed passed, $failed failed in $((SECONDS - start)) s"
[ "$failed" -eq 0 ]
