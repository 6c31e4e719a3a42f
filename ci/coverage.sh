#!/usr/bin/env bash
# ci/coverage.sh: the engine's lines and branches (core/src) that the main job reaches. Builds
# readyport-stress with g++ --coverage at -O0 (so that lines map one to one) in build/coverage,
# runs the main job there in one process (--in-process: the sweep's child processes end with
# _exit, which writes no counts), and prints one row per file of core/src (lines executed,
# branches taken at least once), then each line never executed, grouped by why:
#   assertion  the failing arm of READYPORT_ASSERT / READYPORT_UNREACHABLE (a broken contract)
#   bad input  a Status for an invalid option or argument (the main job passes valid ones; the
#              unit tests reach them: core/test/engine_bad_input_test.cpp)
#   other      everything else: a path the main job does not reach (listed with its source text)
# windows_os.cpp is not built here (the Windows runners run its tests).
#   bash ci/coverage.sh                 # the default run: corpus, then seeds 1..300
#   bash ci/coverage.sh --seeds 2000    # arguments go to readyport-stress
# Exit status: 0 when the run passed and the report was printed; 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
bash ci/setup.sh >/dev/null || exit 1
dir=build/coverage
log_dir=build/logs
mkdir -p "$log_dir"
jobs="${READYPORT_JOBS:-$(nproc)}"
if ! { cmake --preset default -B "$dir" -DCMAKE_BUILD_TYPE=Debug \
         -DCMAKE_CXX_FLAGS="--coverage -O0" -DCMAKE_EXE_LINKER_FLAGS="--coverage" \
         -DREADYPORT_CONSUMER_TESTS=OFF >"$log_dir/coverage.configure.log" 2>&1 &&
       cmake --build "$dir" -j "$jobs" --target readyport-stress \
         >"$log_dir/coverage.build.log" 2>&1; }; then
  tail -n 40 "$log_dir/coverage.configure.log" "$log_dir/coverage.build.log"
  echo "coverage: the build failed (logs: $log_dir/coverage.*.log)"
  exit 1
fi
objects="$dir/core/CMakeFiles/readyport_core.dir/src"
find "$objects" -name '*.gcda' -delete
start=$(date +%s)
if ! "$dir/stress/readyport-stress" --in-process --jobs 1 --bundle-dir "$dir/failures" "$@" \
     >"$log_dir/coverage.run.log" 2>&1; then
  tail -n 30 "$log_dir/coverage.run.log"
  echo "coverage: the run failed (log: $log_dir/coverage.run.log)"
  exit 1
fi
echo "coverage: readyport-stress --in-process $* passed ($(($(date +%s) - start)) s; $(grep -m1 -E '^  seeds run' "$log_dir/coverage.run.log" | sed 's/  */ /g'))"
work="$dir/gcov"
rm -rf "$work"
mkdir -p "$work"
printf '%-28s %18s %26s\n' "core/src" "lines executed" "branches taken at least once"
total_lines=0 total_hit=0
uncovered="$work/uncovered.txt"
: >"$uncovered"
for source in core/src/*.cpp; do
  name=$(basename "$source")
  object="$objects/$name.gcda"
  [ -f "$object" ] || continue
  (cd "$work" && gcov -b -c -o "$OLDPWD/$objects/$name.o" "$OLDPWD/$source" >"$name.summary" 2>&1)
  gcov_file="$work/$name.gcov"
  [ -f "$gcov_file" ] || continue
  lines=$(grep -cE '^ *([0-9]+\*?|#####|=====):' "$gcov_file")
  missed=$(grep -cE '^ *(#####|=====):' "$gcov_file")
  branches=$(grep -cE '^branch ' "$gcov_file")
  taken=$(grep -E '^branch ' "$gcov_file" | grep -cE 'taken [1-9]')
  total_lines=$((total_lines + lines)); total_hit=$((total_hit + lines - missed))
  printf '%-28s %8d/%-5d %5.1f%% %15d/%-5d %5.1f%%\n' "$name" $((lines - missed)) "$lines" \
    "$(awk -v a=$((lines - missed)) -v b="$lines" 'BEGIN { print b ? 100 * a / b : 100 }')" \
    "$taken" "$branches" "$(awk -v a="$taken" -v b="$branches" 'BEGIN { print b ? 100 * a / b : 100 }')"
  # Each line never executed, with its guard: the nearest line above it indented less (the `if`
  # or `case` that leads to it), so that a rule can name a path by its condition.
  awk -v name="$name" '
    match($0, /^ *([0-9]+\*?|#####|=====|-): *[0-9]+:/) {
      head = substr($0, 1, RLENGTH); text = substr($0, RLENGTH + 1)
      split(head, f, ":"); count = f[1]; gsub(/ /, "", count); lineno = f[2] + 0
      src[lineno] = text
      if (count == "#####" || count == "=====") missed[++m] = lineno
    }
    END {
      for (i = 1; i <= m; i++) {
        n = missed[i]; t = src[n]; match(t, /^ */); indent = RLENGTH; guard = ""
        for (k = n - 1; k >= 1; k--) {
          u = src[k]; if (u ~ /^[[:space:]]*$/) continue
          match(u, /^ */); if (RLENGTH < indent) { guard = u; break }
        }
        print name ":" n ":" t "\t" guard
      }
    }' "$gcov_file" >>"$uncovered"
done
printf '%-28s %8d/%-5d %5.1f%%\n' "all" "$total_hit" "$total_lines" \
  "$(awk -v a="$total_hit" -v b="$total_lines" 'BEGIN { print b ? 100 * a / b : 100 }')"
# Each line's reason: an assertion's failing arm, else the first rule of ci/coverage_reasons.txt
# that matches it (file, then a regex on its text or its guard's), else "no reason given".
reasons=ci/coverage_reasons.txt
explained="$work/explained.txt"
awk -F'\t' -v rules="$reasons" '
  BEGIN {
    while ((getline line < rules) > 0) {
      if (line ~ /^#/ || line == "") continue
      split(line, part, "\t"); n++; file[n] = part[1]; pattern[n] = part[2]; why[n] = part[3]
    }
  }
  {
    guard = $2
    split($1, at, ":"); text = substr($1, length(at[1]) + length(at[2]) + 3)
    if (text ~ /^[[:space:]]*[{}]?[[:space:]]*$/) next          # a brace alone
    reason = "no reason given"
    if (text ~ /READYPORT_(ASSERT|UNREACHABLE)|assert_fail/) reason = "the failing arm of an assertion"
    else for (i = 1; i <= n; i++) {
      if (at[1] == file[i] && (text ~ pattern[i] || guard ~ pattern[i])) { reason = why[i]; break }
    }
    print reason "\t" $1
  }' "$uncovered" >"$explained"
echo
echo "lines never executed: $(wc -l <"$explained") (braces alone left out), by reason:"
cut -f1 "$explained" | sort | uniq -c | sort -rn | sed 's/^/  /'
unexplained=$(grep -c '^no reason given' "$explained" || true)
if [ "$unexplained" -ne 0 ]; then
  echo "lines with no reason given ($unexplained): a path the main job should reach, or a rule for $reasons:"
  grep '^no reason given' "$explained" | cut -f2 | sed 's/^/  /'
fi
echo "(every line with its reason: $explained; gcov files: $work)"
