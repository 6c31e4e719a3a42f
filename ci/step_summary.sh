#!/usr/bin/env bash
# Writes the Markdown the GitHub workflows show on a run's page ($GITHUB_STEP_SUMMARY; on stdout
# when that is unset, e.g. on a developer's machine). Three commands:
#
#   bash ci/step_summary.sh stress-shard --shard I/N --first-seed F --seeds N --outcome OUTCOME \
#        --bundle-dir DIR --log FILE --artifact NAME [--artifact-url URL] --row FILE
#       After one nightly shard (stress.yml): the seeds it ran, its failing seeds (read from the
#       bundle files DIR/seed-<S>.json the driver wrote), the artifact that holds them and the
#       replay command; when the step failed without any bundle (a crash, a timeout, a build
#       failure), the end of its log. Also writes the shard's row (tab-separated: shard,
#       first seed, seeds, outcome, failure count, failing seeds, artifact, artifact URL) to FILE
#       for the table below.
#   bash ci/step_summary.sh stress-table DIR N
#       The run's table over the shards 1..N from the row files found under DIR (a shard
#       without one is reported as "no result").
#   bash ci/step_summary.sh test-legs FILE...
#       From the console output of ci/test.sh (FILE): each leg's "N passed, N failed,
#       N skipped" and the names of its failed tests.
#
# Limits: at most 50 failing seeds and 50 failed tests are named per shard or leg (all of them
# are in the artifacts); 40 lines of a log. Exit status: 0, or 2 on bad arguments (the summary is
# a report: a failing shard or leg fails its own step, not this one).
set -euo pipefail

names_max=50
summary="${GITHUB_STEP_SUMMARY:-/dev/stdout}"

die() {
  echo "step_summary: $*" >&2
  exit 2
}

is_number() { [[ "$1" =~ ^[0-9]+$ ]]; }

# shard_seeds I N FIRST SEEDS: prints "first_of_shard count last_of_shard" for the interleaved
# shard I of N over the seeds FIRST .. FIRST+SEEDS-1 (readyport-stress --shard: the seeds
# FIRST + k with k % N == I - 1).
shard_seeds() {
  local index="$1" count="$2" first="$3" seeds="$4" n
  if [ "$seeds" -lt "$index" ]; then echo "- 0 -"; return; fi
  n=$(((seeds - index) / count + 1))
  echo "$((first + index - 1)) $n $((first + index - 1 + (n - 1) * count))"
}

# render_seed_list "S1,S2,...": the first names_max seeds, then how many more.
render_seed_list() {
  local list="$1" shown more
  if [ -z "$list" ]; then echo "none"; return; fi
  shown=$(tr ',' '\n' <<<"$list" | head -n "$names_max" | paste -sd, - | sed 's/,/, /g')
  more=$(($(tr ',' '\n' <<<"$list" | wc -l) - names_max))
  if [ "$more" -gt 0 ]; then shown="$shown and $more more"; fi
  echo "$shown"
}

# render_artifact NAME URL: a Markdown link to the artifact when its URL is known.
render_artifact() {
  if [ -z "$1" ]; then echo "-"; elif [ -n "$2" ]; then echo "[\`$1\`]($2)"; else echo "\`$1\`"; fi
}

# bundle_string FILE KEY: the first `"KEY": "value"` of a pretty-printed bundle, or nothing.
bundle_string() {
  [ -f "$1" ] || return 0
  sed -n "s/^ *\"$2\": *\"\\([^\"]*\\)\".*/\\1/p" "$1" | head -n 1
}

stress_shard() {
  local shard="" first="" seeds="" outcome="" bundle_dir="" log="" artifact="" url="" row=""
  while [ "$#" -gt 0 ]; do
    [ "$#" -ge 2 ] || die "$1 needs a value"
    case "$1" in
      --shard) shard="$2" ;;
      --first-seed) first="$2" ;;
      --seeds) seeds="$2" ;;
      --outcome) outcome="$2" ;;
      --bundle-dir) bundle_dir="$2" ;;
      --log) log="$2" ;;
      --artifact) artifact="$2" ;;
      --artifact-url) url="$2" ;;
      --row) row="$2" ;;
      *) die "stress-shard: unknown option $1" ;;
    esac
    shift 2
  done
  [[ "$shard" =~ ^([0-9]+)/([0-9]+)$ ]] || die "stress-shard: --shard takes I/N, not '$shard'"
  local index="${BASH_REMATCH[1]}" count="${BASH_REMATCH[2]}"
  is_number "$first" || die "stress-shard: --first-seed takes a number, not '$first'"
  is_number "$seeds" || die "stress-shard: --seeds takes a number, not '$seeds'"
  if [ -z "$bundle_dir" ] || [ -z "$row" ]; then die "stress-shard: --bundle-dir and --row are required"; fi

  local shard_first shard_count shard_last failing failures
  read -r shard_first shard_count shard_last < <(shard_seeds "$index" "$count" "$first" "$seeds")
  # The failing seeds, from the bundles' names (seed-<S>.json), in numeric order.
  failing=""
  if [ -d "$bundle_dir" ]; then
    failing=$(find "$bundle_dir" -maxdepth 1 -type f -name 'seed-*.json' |
      sed -nE 's|.*/seed-([0-9]+)\.json$|\1|p' | sort -n | paste -sd, -)
  fi
  failures=0
  if [ -n "$failing" ]; then failures=$(tr ',' '\n' <<<"$failing" | wc -l); fi
  [ "$failures" -gt 0 ] || artifact=""
  mkdir -p "$(dirname "$row")"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$shard" "$shard_first" "$shard_count" \
    "${outcome:-unknown}" "$failures" "$failing" "$artifact" "$url" >"$row"
  # One line per failing seed beside the row, for the run's grouping by signature (stress-table):
  # signature, the first fault site that fired, canary, seed, shard.
  local failures_file="${row%.row.tsv}.failures.tsv" seed bundle signature site canary
  : >"$failures_file"
  for seed in ${failing//,/ }; do
    bundle="$bundle_dir/seed-$seed.json"
    signature=$(bundle_string "$bundle" signature)
    site=$(bundle_string "$bundle" fired_hits)
    site="${site%%[@#!,]*}"
    canary=$(bundle_string "$bundle" canary)
    printf '%s\t%s\t%s\t%s\t%s\n' "${signature:-?}" "${site:-none}" "${canary:-none}" "$seed" \
      "$shard" >>"$failures_file"
  done

  local first_failing="${failing%%,*}" commit="${GITHUB_SHA:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
  {
    echo "#### stress shard $shard: ${outcome:-unknown}, $failures failing seeds"
    echo
    echo "- seeds: $shard_count, from $shard_first to $shard_last, one in $count (the run: $seeds seeds from $first)"
    echo "- failing seeds: $(render_seed_list "$failing")"
    if [ "$failures" -gt 0 ]; then
      echo "- failure bundles: \`$bundle_dir/seed-<S>.json\`, in the artifact $(render_artifact "$artifact" "$url")"
      echo "  (as \`failures/seed-<S>.json\`, beside \`logs/\`)"
      echo "- replay: unzip the artifact into \`artifact/\`, check out commit \`$commit\`, then"
      echo "  \`bash ci/replay.sh artifact/failures/seed-$first_failing.json\`"
      echo "  (Windows: \`pwsh ci/replay.ps1 artifact/failures/seed-$first_failing.json\`)"
    fi
    if [ "$outcome" != "success" ] && [ "$failures" -eq 0 ]; then
      echo "- the step failed without a failure bundle (a crash, a timeout, a build failure or a bad"
      echo "  option); the end of its log (\`$log\`):"
      echo
      echo '````text'
      if [ -n "$log" ] && [ -f "$log" ]; then tail -n 40 "$log"; else echo "(no log)"; fi
      echo '````'
    fi
    echo
  } >>"$summary"
}

stress_table() {
  [ "$#" -eq 2 ] || die "usage: stress-table DIR N"
  local dir="$1" count="$2" index file shard first n outcome failures failing artifact url
  if ! is_number "$count" || [ "$count" -lt 1 ]; then die "stress-table: N is a positive number"; fi
  local passed=0 failed=0 missing=0 failures_total=0
  {
    echo "### Nightly stress: $count shards"
    echo
    echo "| shard | first seed | seeds | result | failures | failing seeds | bundles |"
    echo "|---|---|---|---|---|---|---|"
    for ((index = 1; index <= count; index++)); do
      file=$(find "$dir" -type f -name "stress-shard-$index.row.tsv" 2>/dev/null | head -n 1 || true)
      if [ -z "$file" ]; then
        echo "| $index/$count | - | - | no result (the job ended before its summary: see its log) | - | - | - |"
        missing=$((missing + 1))
        continue
      fi
      IFS=$'\t' read -r shard first n outcome failures failing artifact url <"$file"
      if [ "$outcome" = "success" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
      is_number "$failures" && failures_total=$((failures_total + failures))
      echo "| $shard | $first | $n | $outcome | $failures | $(render_seed_list "$failing") | $(render_artifact "$artifact" "$url") |"
    done
    echo
    echo "$passed passed, $failed failed, $missing without a result; $failures_total failing seeds in all."
    # The failing seeds grouped by what failed: the signature (the rule, or the first words of the
    # message), the first fault site that fired and the canary; each group with one replay command.
    local groups
    groups=$(find "$dir" -type f -name 'stress-shard-*.failures.tsv' -exec cat {} + 2>/dev/null |
      sort -t$'\t' -k1,3 -k4,4n || true)
    if [ -n "$groups" ]; then
      echo
      echo "| signature | first fault site | canary | seeds | first seed (shard) | replay |"
      echo "|---|---|---|---|---|---|"
      awk -F'\t' '
        { key = $1 FS $2 FS $3
          if (!(key in count)) { order[++n] = key; first[key] = $4; shard[key] = $5 }
          count[key]++ }
        END { for (i = 1; i <= n; i++) { split(order[i], f, FS)
          printf "| %s | %s | %s | %d | %s (%s) | `bash ci/replay.sh artifact/failures/seed-%s.json` |\n",
                 f[1], f[2], f[3], count[order[i]], first[order[i]], shard[order[i]], first[order[i]] } }' \
        <<<"$groups"
      echo
      echo "Once fixed, keep one as a regression: \`bash ci/corpus_add.sh artifact/failures/seed-<S>.json 'why'\`."
    fi
    echo "Replay a bundle from an artifact unzipped into \`artifact/\`: \`bash ci/replay.sh artifact/failures/seed-<S>.json\`"
    echo "(Windows: \`pwsh ci/replay.ps1 artifact/failures/seed-<S>.json\`); docs/ci.md."
    echo
  } >>"$summary"
}

test_legs() {
  [ "$#" -ge 1 ] || die "usage: test-legs FILE..."
  local file
  {
    echo "| leg | passed | failed | skipped |"
    echo "|---|---|---|---|"
    for file in "$@"; do
      [ -f "$file" ] || { echo "| (no output: $file) | - | - | - |"; continue; }
      sed -nE 's/^---- leg ([^:]+): ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/| \1 | \2 | \3 | \4 |/p' "$file"
    done
    echo
    for file in "$@"; do
      [ -f "$file" ] || continue
      # ctest's closing list: "  12 - Name (Failed)"; skipped and disabled tests are left out.
      local failed_tests
      failed_tests=$(grep -E '^[[:space:]]+[0-9]+ - .* \([^)]*\)$' "$file" |
        grep -vE '\((Skipped|Disabled)\)$' | sed -E 's/^[[:space:]]+//' | sort -u || true)
      if [ -n "$failed_tests" ]; then
        echo "Failed tests ($file; their output is in the job's log and the JUnit artifact):"
        echo
        head -n "$names_max" <<<"$failed_tests" | sed -E 's/^/- /'
        echo
      fi
      grep -E '^broken legs: ' "$file" | sed -E 's/^/**/; s/$/**/' || true
    done
  } >>"$summary"
}

[ "$#" -ge 1 ] || die "usage: step_summary.sh stress-shard|stress-table|test-legs ..."
command="$1"
shift
case "$command" in
  stress-shard) stress_shard "$@" ;;
  stress-table) stress_table "$@" ;;
  test-legs) test_legs "$@" ;;
  *) die "unknown command '$command' (stress-shard, stress-table, test-legs)" ;;
esac
