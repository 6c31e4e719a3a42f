#!/usr/bin/env bash
# The long fuzzing run (the nightly .github/workflows/fuzz.yml; docs/fuzzing.md): every libFuzzer
# target of fuzz/ for a budget of CPU time each, keeping what it finds, then one summary table.
#
#   bash ci/fuzz.sh                          # every target, 600 CPU-seconds each
#   bash ci/fuzz.sh --seconds 60 --targets "bundle fault_plan" --jobs 2 --out build/fuzz-run
#
# Options: --seconds N  CPU seconds a target (user + system of its process; on an idle machine
#                       its wall time): at N the fuzzer is interrupted (SIGINT) and prints its final
#                       figures;
#          --wall-seconds W  a wall-clock bound a target, which stops a starved run (default
#                       10N + 60: on a machine shared with other work a target gets a fraction of
#                       a core; a run it stops says so in the table);
#          --targets L  the targets to run (names of fuzz/corpus/<name>; default: all of them);
#          --jobs J     targets run at once (default: the online CPUs);
#          --out DIR    where everything goes (default build/fuzz-run, emptied first);
#          --seed S     libFuzzer's -seed (default: 0, a new one each run, printed in the log);
#          --no-build   run the fuzz targets build/asan has (while another build runs there).
# Builds the asan preset's fuzz targets first (ci/setup.sh installs what is missing). Each
# target's run starts from a copy of its committed corpus (fuzz/corpus/<name>/ is never written)
# with its dictionary, -max_len of fuzz/CMakeLists.txt, -timeout=25 a unit, -rss_limit_mb=2048.
#
# Where things go, under DIR/<target>/: corpus/ (the corpus grown: minimise into fuzz/corpus with
# -merge=1 to keep what is worth keeping), findings/ (crash-*, leak-*, timeout-*, oom-*, slow-unit-*:
# the inputs libFuzzer kept; libFuzzer stops a target at its first crash), log.txt (its output).
# DIR/summary.md: one row a target: CPU seconds, executions, executions a second, coverage (cov:
# edges; ft: features), corpus size, peak RSS, crashes (crash, leak, timeout and oom inputs), and
# its end (the budget, or what stopped it). The table is printed too.
# Exit status: 0 no target found anything; 1 a target found a crash, leak, timeout or
# out-of-memory input (or could not run); 2 a bad command line or a build that failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

seconds=600
wall_seconds=""
targets=""
jobs=$(nproc)
out="build/fuzz-run"
seed=0
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --wall-seconds) wall_seconds="$2"; shift 2 ;;
    --targets) targets="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    *) echo "fuzz.sh: unknown argument '$1' (see the header of ci/fuzz.sh)"; exit 2 ;;
  esac
done
if [ -z "$wall_seconds" ] && [[ "$seconds" =~ ^[0-9]+$ ]]; then wall_seconds=$((10 * seconds + 60)); fi
for number in "$seconds" "$wall_seconds" "$jobs" "$seed"; do
  if ! [[ "$number" =~ ^[0-9]+$ ]]; then echo "fuzz.sh: '$number' is not a whole number"; exit 2; fi
done
if [ "$seconds" -lt 1 ] || [ "$jobs" -lt 1 ]; then echo "fuzz.sh: --seconds and --jobs are at least 1"; exit 2; fi

manifest="build/asan/fuzz/fuzz_targets.txt"
if [ "$build" -eq 1 ]; then
  bash ci/setup.sh >/dev/null || { echo "fuzz.sh: ci/setup.sh failed"; exit 2; }
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
  export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
  mkdir -p build/logs
  echo "==== fuzz: configure and build the asan preset's fuzz targets (log: build/logs/fuzz.build.log)"
  if ! cmake --preset asan >build/logs/fuzz.build.log 2>&1 || [ ! -f "$manifest" ]; then
    tail -n 40 build/logs/fuzz.build.log; echo "fuzz.sh: configuring build/asan failed, or it has no fuzz targets"; exit 2
  fi
  mapfile -t binaries < <(awk '{ n = split($2, p, "/"); print p[n] }' "$manifest")
  if ! cmake --build build/asan -j "$(nproc)" --target "${binaries[@]}" >>build/logs/fuzz.build.log 2>&1; then
    tail -n 60 build/logs/fuzz.build.log; echo "fuzz.sh: building the fuzz targets failed"; exit 2
  fi
elif [ ! -f "$manifest" ]; then
  echo "fuzz.sh: --no-build, but $manifest is missing (configure the asan preset)"; exit 2
fi

rm -rf "$out"
mkdir -p "$out"
ticks=$(getconf CLK_TCK)

# cpu_seconds PID: the user + system CPU seconds of a running process (0 once it is gone).
cpu_seconds() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
  # Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  awk -v t="$ticks" '{ print int(($12 + $13) / t) }' <<<"${stat##*) }"
}

# run_target NAME BINARY DICT CORPUS MAX_LEN: one target for $seconds CPU seconds.
run_target() {
  local name="$1" binary="$2" dict="$3" corpus="$4" max_len="$5" dir="$out/$1" pid used=0
  mkdir -p "$dir/corpus" "$dir/findings"
  cp -r "$corpus/." "$dir/corpus/"
  "$binary" -seed="$seed" -max_len="$max_len" -timeout=25 -rss_limit_mb=2048 \
    -max_total_time="$wall_seconds" -print_final_stats=1 -dict="$dict" \
    -artifact_prefix="$dir/findings/" "$dir/corpus" >"$dir/log.txt" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    used=$(cpu_seconds "$pid")
    if [ "$used" -ge "$seconds" ]; then kill -INT "$pid" 2>/dev/null; break; fi
    sleep 1
  done
  wait "$pid"
  echo "$? $used" >"$dir/exit.txt"
}

# row NAME: the target's summary row, from its log, findings and exit.
row() {
  local name="$1" dir="$out/$1" log="$out/$1/log.txt" rc used last execs rate cov ft corp rss crashes end
  read -r rc used <"$dir/exit.txt"
  last=$(grep -E '^#[0-9]+' "$log" | grep -E 'cov: ' | tail -n 1)
  execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -n 1)
  rate=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+).*/\1/p' "$log" | tail -n 1)
  rss=$(sed -nE 's/^stat::peak_rss_mb: *([0-9]+).*/\1/p' "$log" | tail -n 1)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
  corp=$(sed -nE 's/.* corp: ([0-9]+)\/.*/\1/p' <<<"$last")
  crashes=$(find "$dir/findings" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  case "$rc" in
    72) end="the budget" ;;
    0) end="the wall-clock bound ($wall_seconds s)" ;;
    *) end="exit $rc: $(grep -m 1 -E 'ERROR: |deadly signal|property broken' "$log" | cut -c1-80)" ;;
  esac
  printf '| %s | %s | %s | %s | %s | %s | %s | %s MB | %s | %s |\n' "$name" "$used" "${execs:-?}" \
    "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "${rss:-?}" "$crashes" "$end"
}

names=()
while read -r name binary dict corpus max_len; do
  if [ -n "$targets" ] && [[ " $targets " != *" $name "* ]]; then continue; fi
  names+=("$name")
  echo "==== fuzz: $name for $seconds CPU seconds ($out/$name/log.txt)"
  run_target "$name" "$binary" "$dict" "$corpus" "$max_len" &
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 1; done
done <"$manifest"
wait
if [ "${#names[@]}" -eq 0 ]; then echo "fuzz.sh: no target named in '$targets'"; exit 2; fi

{
  echo "| target | CPU s | executions | exec/s | cov (edges) | ft | corpus | peak RSS | crashes | ended by |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for name in "${names[@]}"; do row "$name"; done
} >"$out/summary.md"
cat "$out/summary.md"
found=$(find "$out" -path '*/findings/*' -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
broken=$(awk '{ if ($1 != 72 && $1 != 0) n++ } END { print n + 0 }' "$out"/*/exit.txt)
echo "fuzz: ${#names[@]} targets, $seconds CPU seconds each: $found findings, $broken stopped early (in $out/<target>/findings)"
[ "$found" -eq 0 ] && [ "$broken" -eq 0 ]
