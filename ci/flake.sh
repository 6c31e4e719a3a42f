#!/usr/bin/env bash
# The flake check: runs one leg's whole ctest suite again and again under load and reports every
# test that failed in any run, with how often. A test whose verdict depends on how the OS
# schedules threads or processes fails here sooner or later; on an idle machine it hides.
#
#   bash ci/flake.sh native                      # 20 runs, 4 tests at once (ctest -j4)
#   bash ci/flake.sh tsan --runs 5 --at-once 4 --hogs 2
#   bash ci/flake.sh wine --runs 3 -- -R SweepSupervisor    # after --: more ctest arguments
#
# Legs: native (preset default), asan, tsan, wine (preset mingw, under Wine: the same wineserver
# set-up as ci/wine_leg.sh). The leg's tree is configured and built first, as the test command
# builds it (ci/build_leg.sh), unless --no-build. Each run is one `ctest --preset P -j K` over the
# whole suite (K = --at-once, default 4: on a 2-core machine, twice as many test processes as
# cores), with --hogs H busy processes beside it (default 0) for more load. Runs one after
# another, --runs of them (default 20).
#
# Output: one line per run ("flake: run 3/20: 642 tests, 0 failed (341 s)"), then one line per
# test that failed in any run: its failures of the runs, the runs, and the log of the first one;
# a Wine test that printed no verdict at all (Wine started no process, or lost it: what
# ci/wine_leg.sh launches once more) is counted apart, as "no verdict"; and, in one line, each
# Wine launch that printed nothing at all and that ci/wine_exec.sh ran again (not a failure:
# the test's verdict is its next launch's). Files under
# build/flake/<leg>/: run-<N>.log (ctest's output) and run-<N>.junit.xml.
# Exit status: 0 no test failed in any run; 1 a test failed (or a run printed no summary, or the
# build failed); 2 a bad command line.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

usage() {
  sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
  exit "${1:-2}"
}

leg="${1:-}"
[ -n "$leg" ] || usage
shift
runs=20
at_once=4
hogs=0
build=1
while [ "$#" -gt 0 ]; do
  case "$1" in
    --runs) runs="${2:-}"; shift 2 ;;
    --at-once) at_once="${2:-}"; shift 2 ;;
    --hogs) hogs="${2:-}"; shift 2 ;;
    --no-build) build=0; shift ;;
    --) shift; break ;;
    -h | --help) usage 0 ;;
    *) echo "flake: unknown argument '$1' (see --help)"; exit 2 ;;
  esac
done
ctest_args=("$@")
if ! [[ "$runs" =~ ^[1-9][0-9]{0,3}$ ]] || ! [[ "$at_once" =~ ^[1-9][0-9]?$ ]] ||
   ! [[ "$hogs" =~ ^[0-9]{1,2}$ ]]; then
  echo "flake: --runs must be 1..9999, --at-once 1..99 and --hogs 0..99"
  exit 2
fi
case "$leg" in
  native) preset=default ;;
  asan | tsan) preset="$leg" ;;
  wine) preset=mingw ;;
  *) echo "flake: unknown leg '$leg' (legs: native asan tsan wine)"; exit 2 ;;
esac

if [ "$build" -eq 1 ] && ! bash ci/build_leg.sh "$leg"; then
  echo "flake: building the $leg leg failed"
  exit 1
fi
out="build/flake/$leg"
rm -rf "$out"
mkdir -p "$out"
if [ "$leg" = wine ]; then
  # shellcheck source=ci/wine_env.sh
  . ci/wine_env.sh
  wine_start
fi

# The busy processes beside the runs, stopped at exit (with the wineserver, for the Wine leg).
hog_pids=()
stop_hogs() {
  local pid
  for pid in "${hog_pids[@]}"; do kill "$pid" 2>/dev/null; done
  if [ "$leg" = wine ]; then wine_stop; fi
}
trap stop_hogs EXIT
for ((h = 0; h < hogs; ++h)); do
  (while :; do :; done) &
  hog_pids+=("$!")
done

echo "flake: leg $leg, $runs runs of its whole ctest suite, ctest -j $at_once," \
  "$hogs busy processes beside it, on $(nproc) cores"
start=$SECONDS
broken=0
for ((run = 1; run <= runs; ++run)); do
  run_start=$SECONDS
  ctest --preset "$preset" -j "$at_once" --output-junit "$PWD/$out/run-$run.junit.xml" \
    "${ctest_args[@]}" </dev/null >"$out/run-$run.log" 2>&1
  summary=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$out/run-$run.log" |
    tail -n 1)
  if [ -z "$summary" ]; then
    broken=$((broken + 1))
    summary="NO SUMMARY (ctest stopped before its tests; log $out/run-$run.log)"
  fi
  echo "flake: run $run/$runs: $summary ($((SECONDS - run_start)) s)"
done

# Every test that failed in some run, from the runs' JUnit files. A failure that printed no
# verdict (no gtest result line, no assertion text) is "no verdict": under Wine, a process Wine
# never started or lost midway (ci/wine_leg.sh says more).
python3 - "$out" "$runs" <<'PY'
import glob
import re
import sys
import xml.etree.ElementTree as ET

out, runs = sys.argv[1], int(sys.argv[2])
verdict = re.compile(r'^\[ +(OK|FAILED|SKIPPED) +\]|Failure$|^Expected|error: |assertion failed|FAIL ',
                     re.M)
failed = {}   # name -> [runs]
silent = {}   # name -> [runs]
repeated = []  # (run, name): Wine launches ci/wine_exec.sh ran again after they printed nothing
again = re.compile(r'^wine_exec: .* printed nothing at all \(attempt \d+\): .*running it again$', re.M)
tests = set()
for path in sorted(glob.glob(out + '/run-*.junit.xml')):
    run = int(re.search(r'run-(\d+)\.junit\.xml$', path).group(1))
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        continue
    for case in root.iter('testcase'):
        name = case.get('name')
        tests.add(name)
        node = case.find('system-out')
        text = '' if node is None else (node.text or '')
        repeated.extend((run, name) for _ in again.findall(text))
        if case.get('status') != 'fail':
            continue
        (failed if verdict.search(text) else silent).setdefault(name, []).append(run)
print(f'flake: {len(tests)} tests, {runs} runs')
if repeated:
    # Not a verdict of the test: the launch before printed nothing at all (ci/wine_exec.sh).
    print(f'flake: {len(repeated)} Wine launch(es) printed nothing at all and were run again: ' +
          ', '.join(f'{name} (run {run})' for run, name in sorted(repeated)))
if not failed and not silent:
    print('flake: no test failed in any run')
for kind, table in (('FAILED', failed), ('no verdict', silent)):
    for name, where in sorted(table.items(), key=lambda item: (-len(item[1]), item[0])):
        print(f'flake: {kind}: {name}: {len(where)} of {runs} runs (runs '
              f'{" ".join(map(str, where))}; first log: {out}/run-{where[0]}.log)')
sys.exit(1 if failed or silent else 0)
PY
rc=$?
echo "flake: leg $leg done in $((SECONDS - start)) s"
if [ "$broken" -ne 0 ]; then
  echo "flake: $broken run(s) printed no ctest summary"
  exit 1
fi
exit "$rc"
