#!/usr/bin/env bash
# stress/corpus/regenerate_canaries.sh: writes each canary's minimal failing case into the
# regression corpus as stress/corpus/canary-<name>.json (docs/replay.md, "The corpus").
#
# For each canary of cmake/canary.cmake (or the ones named):
#   1. configures and builds readyport-stress with that bug planted, as ci/canaries.sh does
#      (ci/canary_tree.sh <name>, then cmake --preset default -S build/canary-src-<name>
#      -DREADYPORT_CANARY=<name>, in build/canary-<name>);
#   2. finds the main job's first failing seed (--stop-on-failure, no corpus);
#   3. shrinks it: readyport-stress --seed S --shrink --corpus-entry <file>, which writes the
#      minimal case as a corpus entry with "expect_canary": "<name>" and the failure's signature;
#      a seed whose failure aborts the process (an engine assertion) cannot be shrunk: the next
#      failing seed is tried, up to READYPORT_CANARY_SEEDS_TRIED seeds (default 8); when none
#      shrinks, the first failing seed is written unshrunk (default options), with the signature
#      it aborted with;
#   4. checks the entry: in the canary's build --replay must fail (exit 1, or an abort), and in a
#      normal build (READYPORT_NORMAL_BUILD, default build/default, when it has the binary) it
#      must pass (exit 0); only then the entry replaces the corpus file.
#
#   bash stress/corpus/regenerate_canaries.sh                     # every canary
#   bash stress/corpus/regenerate_canaries.sh dispatch_after_close
# Environment: READYPORT_JOBS (build jobs, default nproc), READYPORT_CANARY_BUILD_PREFIX (default
# build/canary-: the build directory is the prefix and the name), READYPORT_NORMAL_BUILD.
# Logs: <build dir>.regenerate.log. Exit status: 0 when every canary's entry was written and
# checked, 1 otherwise (the entries that were checked are written all the same).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

canaries=("$@")
if [ "${#canaries[@]}" -eq 0 ]; then
  # The list of cmake/canary.cmake, read from it so that a new canary is not forgotten here.
  read -r -a canaries < <(awk '/^set\(READYPORT_CANARIES/ { on = 1 } on { print } on && /\)/ { exit }' \
                            cmake/canary.cmake | tr '()\n' '   ' | sed 's/set *READYPORT_CANARIES//')
fi
if [ "${#canaries[@]}" -eq 0 ]; then
  echo "regenerate_canaries: no canary list in cmake/canary.cmake" >&2
  exit 1
fi
jobs="${READYPORT_JOBS:-$(nproc)}"
prefix="${READYPORT_CANARY_BUILD_PREFIX:-build/canary-}"
tries="${READYPORT_CANARY_SEEDS_TRIED:-8}"
normal="${READYPORT_NORMAL_BUILD:-build/default}/stress/readyport-stress"
corpus=stress/corpus
failed=()

# entry_unshrunk NAME SEED SIGNATURE FILE: a corpus entry of SEED with the default options.
entry_unshrunk() {
  local name="$1" seed="$2" signature="$3" file="$4" commit
  commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  cat >"$file" <<JSON
{
  "format": "readyport-stress-corpus",
  "format_version": 1,
  "seed": $seed,
  "options": {
    "strategy": "mixed",
    "pct_depth": 3,
    "runtime": "sim",
    "steps_max": 2000000,
    "faults": "drawn",
    "actions_max": null,
    "clients_max": null,
    "peers_max": null
  },
  "expect_canary": "$name",
  "signature": "$signature",
  "why": "the first failing seed of the main job with canary $name planted (commit $commit), not shrunk: every failing seed tried aborted the process (an engine assertion), which --shrink cannot shrink"
}
JSON
}

for name in "${canaries[@]}"; do
  dir="$prefix$name"
  log="$dir.regenerate.log"
  work="$dir/regenerate"
  mkdir -p "$(dirname "$dir")"
  src="build/canary-src-$name"
  echo "==== canary $name: building $dir from $src"
  # A cache made from another source tree (cmake refuses it) is removed: the build starts afresh.
  home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$dir/CMakeCache.txt" 2>/dev/null)
  if [ -n "$home" ] && [ "$(realpath -m "$home")" != "$(realpath -m "$src")" ]; then
    rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
  fi
  if ! { bash ci/canary_tree.sh "$name" >"$log" 2>&1 &&
         cmake --preset default -S "$src" -B "$dir" -DREADYPORT_CANARY="$name" \
           -DREADYPORT_CONSUMER_TESTS=OFF >>"$log" 2>&1 &&
         cmake --build "$dir" -j "$jobs" --target readyport-stress >>"$log" 2>&1; }; then
    tail -n 40 "$log"
    echo "canary $name: BUILD FAILED (log: $log)"
    failed+=("$name(build)")
    continue
  fi
  stress="$dir/stress/readyport-stress"
  rm -rf "$work"
  mkdir -p "$work"
  candidate="$work/canary-$name.json"
  first_seed=1
  first_failing=""
  first_signature=""
  written=""
  for ((try = 1; try <= tries; try++)); do
    # The next failing seed from first_seed on (the default run's options, no corpus).
    # (In a subshell: when the run aborts, bash's "Aborted" notice goes to the log too.)
    ("$stress" --first-seed "$first_seed" --seeds 300 --stop-on-failure --corpus none \
       --bundle-dir "$work/find"; exit $?) >"$work/find.$try.log" 2>&1
    rc=$?
    seed=$(sed -n -E 's/^(FAIL seed|readyport-stress: aborted during seed) ([0-9]+).*/\2/p' \
             "$work/find.$try.log" | head -n 1)
    if [ "$rc" -eq 0 ] || [ -z "$seed" ]; then
      echo "canary $name: no failing seed from $first_seed (exit $rc): see $work/find.$try.log"
      break
    fi
    if grep -q "aborted during seed $seed" "$work/find.$try.log"; then
      signature=$(sed -n -E 's/^  the oracle had found: ([A-Z][0-9]+) .*/\1/p' "$work/find.$try.log" | head -n 1)
      signature="${signature:-abort}"
    else
      signature=""
    fi
    if [ -z "$first_failing" ]; then
      first_failing="$seed"
      first_signature="${signature:-unknown}"
    fi
    echo "canary $name: seed $seed fails${signature:+ (aborts: $signature)}; shrinking it"
    ("$stress" --seed "$seed" --shrink --bundle-dir "$work/shrink" --corpus-entry "$candidate";
     exit $?) >"$work/shrink.$seed.log" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ] && [ -f "$candidate" ]; then
      grep -E '^(failure kept|runs while shrinking|minimal trace hash)' "$work/shrink.$seed.log"
      written="shrunk seed $seed"
      break
    fi
    echo "canary $name: seed $seed did not shrink (exit $rc; $work/shrink.$seed.log)"
    first_seed=$((seed + 1))
  done
  if [ -z "$written" ] && [ -n "$first_failing" ]; then
    entry_unshrunk "$name" "$first_failing" "$first_signature" "$candidate"
    written="seed $first_failing, unshrunk"
  fi
  if [ -z "$written" ]; then
    echo "canary $name: NO ENTRY (the canary survived the default run?)"
    failed+=("$name(no failing seed)")
    continue
  fi
  # The entry must fail in the canary's build and pass in a normal one.
  ("$stress" --replay "$candidate"; exit $?) >"$work/replay.canary.log" 2>&1
  rc=$?
  if [ "$rc" -eq 0 ]; then
    echo "canary $name: the entry PASSES in the canary's build: not written ($work/replay.canary.log)"
    failed+=("$name(entry passes)")
    continue
  fi
  if [ -x "$normal" ]; then
    if ! "$normal" --replay "$candidate" >"$work/replay.normal.log" 2>&1; then
      echo "canary $name: the entry FAILS in the normal build $normal: not written ($work/replay.normal.log)"
      failed+=("$name(fails normally)")
      continue
    fi
    checked="fails with the canary (exit $rc), passes in $normal"
  else
    checked="fails with the canary (exit $rc); no normal build at $normal to check that it passes there (ctest stress.corpus does)"
  fi
  cp "$candidate" "$corpus/canary-$name.json"
  echo "canary $name: wrote $corpus/canary-$name.json ($written; $checked)"
done
if [ "${#failed[@]}" -ne 0 ]; then
  echo "regenerate_canaries: not written: ${failed[*]}"
  exit 1
fi
echo "regenerate_canaries: ${#canaries[@]} canary entries written"
