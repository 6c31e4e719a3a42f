#!/usr/bin/env bash
# The bound on a real-thread seed's resources, checked against a planted livelock. A copy of the
# checkout's tracked files (as they are in the working tree) gets ci/plants/livelock.patch: a
# worker passes stop()'s exit packet on and keeps its driver, so it dequeues the packet again for
# ever, calling the seam without end while stop() waits. The copy's readyport-stress runs seeds on
# real threads (--runtime free) under /usr/bin/time -v. A seed whose world has a worker must end
# as its livelock report (signature livelock, with a bundle; the report ends the seed's process,
# so the seed counts as cut), and the sweep must go on, account for every seed, write its summary,
# and keep the process tree's peak resident memory under the child limit it prints.
#
#   bash ci/livelock_check.sh                       # seeds 1..4
#   bash ci/livelock_check.sh -- --seeds 8 --first-seed 100
#
# Arguments after `--` go to readyport-stress (after --runtime free --corpus none --seeds 4).
# Files: build/livelock-src (the copy, with its own build/default, reusing the checkout's objects
# through ccache), build/livelock/ (output, summary JSON, bundles, /usr/bin/time's report).
# Exit status: 0 every check held; 1 a check failed (each named), or the build failed; 2 a bad
# command line. Needs git, cmake, python3 and /usr/bin/time (ci/setup.sh installs them).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD

case "${1:-}" in
  --) shift ;;
  "") ;;
  -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "livelock_check: unknown argument '$1' (see --help)"; exit 2 ;;
esac
for tool in git cmake python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "livelock_check: needs $tool"; exit 1; }
done

src="$root/build/livelock-src"
out="$root/build/livelock"
rm -rf "$out"
mkdir -p "$out" "$src"
start=$SECONDS

# The copy: the tracked files, those unchanged keeping their time (so the build redoes little).
tmp="$src.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
git ls-files -z | while IFS= read -r -d '' file; do
  [ -f "$file" ] && printf '%s\0' "$file"
done | xargs -0 cp --parents -p -t "$tmp" || { echo "livelock_check: copying failed"; exit 1; }
if ! (cd "$tmp" && GIT_CEILING_DIRECTORIES="$(dirname "$tmp")" \
  git apply "$root/ci/plants/livelock.patch"); then
  echo "livelock_check: ci/plants/livelock.patch does not apply to this checkout; write it again"
  rm -rf "$tmp"
  exit 1
fi
# The copy replaces the last one; its build tree stays (the files keep the checkout's times).
find "$src" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} +
cp -a "$tmp/." "$src/"
rm -rf "$tmp"

export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
log="$out/build.log"
if ! { [ -f "$src/build/default/CMakeCache.txt" ] || cmake --preset default -S "$src" >"$log" 2>&1; } ||
   ! cmake --build "$src/build/default" --target readyport-stress >>"$log" 2>&1; then
  tail -n 40 "$log"
  echo "livelock_check: building the planted copy failed (log: $log)"
  exit 1
fi
built=$((SECONDS - start))

# The run: its own exit status is 1 (seeds failed); what matters is what it reports.
(cd "$out" && /usr/bin/time -v -o "$out/time.txt" "$src/build/default/stress/readyport-stress" \
  --runtime free --corpus none --seeds 4 --verbose --json "$out/summary.json" \
  --bundle-dir "$out/bundles" "$@" >"$out/run.log" 2>&1)
ran=$((SECONDS - start - built))
grep -E '^  (seeds run|limits) ' "$out/run.log"

python3 - "$out" <<'EOF'
import json, re, sys
out = sys.argv[1]
problems = []
try:
    s = json.load(open(f"{out}/summary.json"))
except (OSError, ValueError) as e:
    print(f"livelock_check: no summary JSON ({e})")
    sys.exit(1)
run = s["seeds_run"]
if run != s["passed"] + s["failed"] + s["cut"] or run != s["seeds_planned"]:
    problems.append(f"seeds not accounted for: planned {s['seeds_planned']}, run {run}, "
                    f"passed {s['passed']}, failed {s['failed']}, cut {s['cut']}")
# A livelock report ends its process (an assertion, as a hang report does): the seed counts as
# cut, and its failure is listed with the signature and a bundle.
ended = s["failed"] + s["cut"]
if ended == 0:
    problems.append("no seed failed: the planted livelock was not caught")
livelocks = [f for f in s["failures"] if f.get("signature") == "livelock" and f.get("bundle")]
others = [f"seed {f.get('seed')}: {f.get('signature')}" for f in s["failures"]
          if f.get("signature") != "livelock"]
if others:
    problems.append(f"failures other than a livelock: {others}")
if len(livelocks) != ended or s["failures_total"] != ended:
    problems.append(f"{ended} seeds failed or were cut but {len(livelocks)} livelock report(s) "
                    f"with a bundle are listed ({s['failures_total']} failures)")
# A seed that passed must be a world with no worker (pollers release their drivers: no livelock).
log = open(f"{out}/run.log").read()
passed_with_worker = re.findall(r"^seed (\d+) ok: .* workers=([1-9]\d*) ", log, re.M)
if passed_with_worker:
    problems.append(f"seeds with a worker passed: {passed_with_worker}")
if len(re.findall(r"^seed \d+ ok: ", log, re.M)) != s["passed"]:
    problems.append("the run printed a line for fewer passed seeds than it counted")
limit_mb = s["limits"]["memory_mb_max"]
text = open(f"{out}/time.txt").read()
m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
peak_mb = int(m.group(1)) / 1024 if m else None
if peak_mb is None:
    problems.append("/usr/bin/time printed no peak resident size")
elif peak_mb >= limit_mb:
    problems.append(f"peak resident {peak_mb:.0f} MiB is not under the limit {limit_mb} MiB")
print(f"livelock_check: {len(livelocks)} of {run} seeds reported as a livelock with a bundle "
      f"({s['failed']} failed, {s['cut']} cut: the report ends its process), {s['passed']} "
      f"passed (a world with no worker); peak resident {peak_mb:.0f} MiB of the {limit_mb} MiB "
      f"limit; steps limit {s['limits']['steps_max']} seam calls")
for p in problems:
    print(f"livelock_check: FAILED: {p}")
sys.exit(1 if problems else 0)
EOF
rc=$?
echo "livelock_check: build ${built} s, run ${ran} s"
exit "$rc"
