#!/usr/bin/env bash
# The searches side by side, for the same CPU time each: random seeds, PCT, the portfolio (the
# main job's default) and the guided search (stress/jobs/guided_search.hpp). For each: the runs it
# made, the (slot state, event, engine context) tuples it reached of those the code allows, the
# coverage rows it reached, and its failures (there must be none with nothing planted). Then, for
# each canary whose build exists (ci/canaries.sh --build-only), the run and the CPU-seconds at
# which each search first failed. The three unguided searches are `readyport-stress
# --guided-seconds S --unguided --strategy X`: the same loop and the same accounting as the guided
# one, over seeds 1, 2, ... with no mutation.
#
#   bash ci/compare_search.sh                     # 600 CPU-seconds each; canaries 60 each
#   bash ci/compare_search.sh --seconds 60 --canary-seconds 20
#
# Two searches run at a time (each is one process on one core; the budget is its own CPU time,
# so the machine's other work does not change what each is given; a run begun within the budget
# finishes, so a slow seed can overrun it: the CPU-seconds printed are the measured ones). Uses build/default (built
# with `cmake --build --preset default --target readyport-stress` when missing). Logs:
# build/compare-search/. Exit status: 0 printed, and no search failed without a canary;
# 1 otherwise; 2 a bad command line.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

seconds=600
canary_seconds=60
while [ "$#" -gt 0 ]; do
  case "$1" in
    --seconds) seconds="${2:-}"; shift 2 ;;
    --canary-seconds) canary_seconds="${2:-}"; shift 2 ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare_search: unknown argument '$1'"; exit 2 ;;
  esac
done
if ! [[ "$seconds" =~ ^[1-9][0-9]{0,5}$ ]] || ! [[ "$canary_seconds" =~ ^[1-9][0-9]{0,4}$ ]]; then
  echo "compare_search: --seconds and --canary-seconds take whole seconds"
  exit 2
fi
driver=build/default/stress/readyport-stress
if [ ! -x "$driver" ] &&
   ! cmake --build --preset default --target readyport-stress >/dev/null 2>&1; then
  echo "compare_search: building readyport-stress failed"
  exit 1
fi
out=build/compare-search
rm -rf "$out"
mkdir -p "$out"

searches=(random pct portfolio guided)
# run_search BINARY NAME SECONDS LOG [more flags]: one search's command.
run_search() {
  local binary="$1" name="$2" budget="$3" log="$4"
  shift 4
  local flags=(--guided-seconds "$budget" --bundle-dir "$log.bundles" "$@")
  case "$name" in
    random | pct | portfolio) flags+=(--unguided --strategy "$name") ;;
  esac
  "$binary" "${flags[@]}" >"$log" 2>&1
}
# field LOG KEY: KEY's value on the log's `search:` line.
field() { sed -nE "s/^search: .*[ ]$2=([^ ]+).*/\\1/p" "$1" | tail -n 1; }

# run_all BINARY SECONDS PREFIX [more flags]: every search, two at a time; logs PREFIX<name>.log.
run_all() {
  local binary="$1" budget="$2" prefix="$3" name pids=()
  shift 3
  for name in "${searches[@]}"; do
    run_search "$binary" "$name" "$budget" "$prefix$name.log" "$@" &
    pids+=($!)
    if [ "${#pids[@]}" -eq 2 ]; then
      wait "${pids[@]}"
      pids=()
    fi
  done
  [ "${#pids[@]}" -eq 0 ] || wait "${pids[@]}"
}

run_all "$driver" "$seconds" "$out/"

status=0
echo "| search ($seconds CPU-s each) | runs | tuples reached | coverage rows reached | failures |"
echo "|---|---|---|---|---|"
for name in "${searches[@]}"; do
  log="$out/$name.log"
  if ! grep -q '^search: ' "$log"; then
    echo "| $name | (no summary: see $log) | | | |"
    status=1
    continue
  fi
  echo "| $name | $(field "$log" runs) | $(field "$log" tuples) of $(field "$log" allowed) |" \
    "$(field "$log" rows) | $(field "$log" failures) |"
  [ "$(field "$log" failures)" = 0 ] || status=1
done

canaries=()
for dir in build/canary-src-*/build/default; do
  [ -x "$dir/stress/readyport-stress" ] && canaries+=("$dir")
done
if [ "${#canaries[@]}" -eq 0 ]; then
  echo
  echo "compare_search: no canary build (bash ci/canaries.sh --build-only): the canary rows are not measured"
  exit "$status"
fi
echo
echo "| canary ($canary_seconds CPU-s each) | $(printf '%s | ' "${searches[@]}")"
echo "|---|$(printf -- '---|%.0s' "${searches[@]}")"
for dir in "${canaries[@]}"; do
  canary=$(basename "$(dirname "$(dirname "$dir")")")
  canary="${canary#canary-src-}"
  run_all "$dir/stress/readyport-stress" "$canary_seconds" "$out/canary-$canary." --stop-on-failure
  row="| $canary |"
  for name in "${searches[@]}"; do
    log="$out/canary-$canary.$name.log"
    run=$(field "$log" first_failure_run)
    bundle=$(find "$log.bundles" -name '*-guided-*.json' 2>/dev/null | sort | head -n 1)
    if [ -n "$run" ] && [ "$run" != 0 ]; then
      row+=" run $run, $(field "$log" first_failure_cpu_s) CPU-s |"
    elif [ -n "$bundle" ]; then
      # The run aborted (an engine assertion): its bundle names the run.
      row+=" run $(basename "$bundle" | sed -nE 's/.*-guided-([0-9]+)\.json$/\1/p') (aborted) |"
    else
      row+=" none |"
    fi
  done
  echo "$row"
done
exit "$status"
