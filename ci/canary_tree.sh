#!/usr/bin/env bash
# The source tree of a canary build: a copy of this checkout's tracked files as they are in the
# working tree (uncommitted changes included; untracked files left out, git add a new one) with
# one planted engine bug applied, ci/canaries/NAME.patch (ci/canaries/README.md). The canary's
# build is configured from the copy; cmake/canary.cmake refuses -DREADYPORT_CANARY=NAME on a tree
# that does not carry that patch.
#
#   bash ci/canary_tree.sh NAME [DEST]   # the copy, in DEST (default build/canary-src-NAME)
#   cmake --preset default -S build/canary-src-NAME -DREADYPORT_CANARY=NAME
#                                        # its build: build/canary-src-NAME/build/default
#   bash ci/canary_tree.sh --check-all   # does every patch still apply to the working tree? One
#                                        # line a canary; nothing is written in the checkout
#   bash ci/canary_tree.sh --plant       # a patch whose context changed must fail that check
#
# Running it again makes the copy afresh: a file gone from the checkout goes from the copy, and a
# file whose content is unchanged keeps its time, so a build recompiles only what changed; the
# copy's build/ (its build trees, DEST/build/default from `cmake --preset default -S DEST`) is
# kept. A tree built there has the paths of build/default relative to its sources, so ccache
# (CCACHE_BASEDIR at the checkout, as ci/test.sh sets it) reuses every object of the checkout's
# own build/default whose source the patch did not change. The
# copy has no .git: DEST/.readyport-tree records the checkout's commit and whether it had
# uncommitted changes, which cmake/version.cmake and cmake/tree_state.cmake report for the copy.
# From a tree without .git (a CI checkout from a tarball) the copy holds every file that the
# .gitignore files do not exclude, commit and state "unknown" (READYPORT_GIT_COMMIT names it).
# An existing DEST must be empty or such a copy (it is replaced). A patch that does not apply is
# named, with git's reasons and the rejected hunks, and nothing is written. Needs git.
# Exit status: 0 done (with --check-all: every patch applies; with --plant: the planted change was
# caught); 1 a patch does not apply, or the copy failed; 2 a bad argument.
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)" || exit 2
me="canary_tree"

usage() {
  echo "usage: bash ci/canary_tree.sh NAME [DEST] | --check-all | --plant" >&2
  echo "$me: canaries: $(canary_names)" >&2
  exit 2
}

# canary_names: the names of ci/canaries/*.patch, on one line.
canary_names() {
  local patch names=()
  for patch in "$root"/ci/canaries/*.patch; do
    [ -f "$patch" ] && names+=("$(basename "$patch" .patch)")
  done
  echo "${names[*]}"
}

# in_dir DIR CMD...: runs CMD in DIR, with git kept from taking DIR for a part of a checkout
# above it (git apply in a checkout's subfolder would apply the paths from the checkout's top).
in_dir() {
  local dir="$1"
  shift
  (cd "$dir" && GIT_CEILING_DIRECTORIES="$(dirname "$dir")" "$@")
}

# patch_files PATCH: the paths PATCH changes, one a line.
patch_files() { in_dir "$root" git apply --numstat "$1" | cut -f3; }

# apply_in DIR PATCH: applies PATCH (an absolute path) to the files under DIR (an absolute path,
# no checkout of its own). When it does not apply, nothing is changed but the .rej files, and
# `report` holds git's reasons and the rejected hunks; returns 1.
apply_in() {
  local dir="$1" patch="$2" out rej
  report=""
  if out=$(in_dir "$dir" git apply --check -v "$patch" 2>&1); then
    in_dir "$dir" git apply "$patch"
    return
  fi
  report="  ${out//$'\n'/$'\n'  }"
  # The hunks git cannot place, as .rej files beside their files (the others are applied).
  in_dir "$dir" git apply --reject "$patch" >/dev/null 2>&1
  while IFS= read -r rej; do
    report="$report"$'\n'"  rejected, ${rej#"$dir"/}:"$'\n'"$(sed 's/^/    /' "$rej")"
  done < <(find "$dir" -name '*.rej' | sort)
  return 1
}

# check_patch NAME BASE: whether ci/canaries/NAME.patch applies to the files under BASE (an
# absolute path: the checkout, or a planted copy), tried on a copy of the files it changes; one
# line, and the report when it does not apply.
check_patch() {
  local name="$1" base="$2" patch="$root/ci/canaries/$1.patch" tmp file files=() rc=0
  mapfile -t files < <(patch_files "$patch")
  tmp=$(mktemp -d) || return 1
  for file in "${files[@]}"; do
    if [ ! -f "$base/$file" ]; then
      echo "$me: $name: ci/canaries/$name.patch changes $file, which is not in the tree"
      rm -rf "$tmp"
      return 1
    fi
    mkdir -p "$tmp/$(dirname "$file")" && cp "$base/$file" "$tmp/$file"
  done
  if in_dir "$tmp" git apply --check --reverse "$patch" >/dev/null 2>&1; then
    echo "$me: $name: ci/canaries/$name.patch is APPLIED in the tree already; the engine's" \
      "sources carry no canary (git checkout -- ${files[*]})"
    rc=1
  elif apply_in "$tmp" "$patch"; then
    echo "$me: $name: applies (${files[*]})"
  else
    echo "$me: $name: ci/canaries/$name.patch DOES NOT APPLY to ${files[*]}; regenerate it" \
      "(ci/canaries/README.md):"
    echo "$report"
    rc=1
  fi
  rm -rf "$tmp"
  return "$rc"
}

# check_all BASE: check_patch of every patch, and no canary text in BASE's engine sources.
check_all() {
  local base="$1" name names failed=0 count=0 marks
  read -r -a names <<<"$(canary_names)"
  for name in "${names[@]}"; do
    count=$((count + 1))
    check_patch "$name" "$base" || failed=$((failed + 1))
  done
  marks=$(cd "$base" && grep -rnE 'CANARY [a-z_]+:|READYPORT_CANARY_' core 2>/dev/null)
  if [ -n "$marks" ]; then
    echo "$me: canary text in the engine's sources (a canary is a patch, never in core/):"
    echo "  ${marks//$'\n'/$'\n'  }"
    failed=$((failed + 1))
  fi
  if [ "$count" -eq 0 ]; then
    echo "$me: no patch in ci/canaries"
    return 1
  fi
  if [ "$failed" -ne 0 ]; then
    echo "$me: $failed problem(s) with the $count canary patches"
    return 1
  fi
  echo "$me: all $count canary patches apply to the working tree, and core/ carries none"
}

# plant: a copy of the files the first patch changes, one of its context lines edited there, must
# fail check_patch; the checkout is not touched.
plant() {
  local name names patch tmp file line
  read -r -a names <<<"$(canary_names)"
  name="${names[0]:-}"
  [ -n "$name" ] || { echo "$me: no patch in ci/canaries to plant a change for"; return 1; }
  patch="$root/ci/canaries/$name.patch"
  tmp=$(mktemp -d) || return 1
  while IFS= read -r file; do
    mkdir -p "$tmp/$(dirname "$file")" && cp "$root/$file" "$tmp/$file"
  done < <(patch_files "$patch")
  # The first hunk's first line (a context line: git diff's hunks begin with context) is edited.
  file=$(patch_files "$patch" | head -n 1)
  line=$(sed -n -E 's/^@@ -([0-9]+).*/\1/p' "$patch" | head -n 1)
  sed -i "${line}s|.*|// planted: a context line of ci/canaries/$name.patch, changed|" "$tmp/$file"
  if check_patch "$name" "$tmp" >"$tmp/out.txt" 2>&1; then
    cat "$tmp/out.txt"
    echo "$me: the planted change of line $line of $file was NOT caught"
    rm -rf "$tmp"
    return 1
  fi
  cat "$tmp/out.txt"
  echo "$me: the planted change of line $line of $file (a context line of $name.patch) was caught"
  rm -rf "$tmp"
}

# in_checkout: whether the root is the top of a git checkout (not a tree without .git, such as a
# CI checkout from a tarball, inside another checkout's folder).
in_checkout() {
  local top
  top=$(git rev-parse --show-toplevel 2>/dev/null) && [ "$top" -ef "$root" ]
}

# source_files: the checkout's tracked files that are in the working tree, NUL-separated; in a
# tree without .git, every file its .gitignore files do not exclude (listed by git with an empty
# repository of its own).
source_files() {
  local file empty
  if in_checkout; then
    while IFS= read -r -d '' file; do
      if [ -e "$file" ] || [ -L "$file" ]; then printf '%s\0' "$file"; fi
    done < <(git ls-files -z)
    return
  fi
  empty=$(mktemp -d) || return 1
  git init -q "$empty" &&
    git --git-dir="$empty/.git" --work-tree=. ls-files -z --others --exclude-standard
  rm -rf "$empty"
}

# make_tree NAME DEST: the copy with ci/canaries/NAME.patch applied, in DEST.
make_tree() {
  local name="$1" dest="$2" patch="$root/ci/canaries/$1.patch" commit tree file count
  mkdir -p "$(dirname "$dest")" || return 1
  dest="$(cd "$(dirname "$dest")" && pwd)/$(basename "$dest")"
  case "$root/" in
    "$dest/"*) echo "$me: DEST $dest holds the checkout itself" >&2; return 2 ;;
  esac
  if [ -e "$dest" ] && [ ! -f "$dest/.readyport-tree" ] &&
     [ -n "$(ls -A "$dest" 2>/dev/null)" ]; then
    echo "$me: $dest exists and is not a copy made by ci/canary_tree.sh: not replaced" >&2
    return 2
  fi
  stage="$dest.tmp.$$"  # global: the trap removes what an interrupted run leaves
  rm -rf "$stage"
  trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage" || return 1
  # Every file is new to the copy (-m: the time of the copy, so a build of the last copy sees a
  # changed file as changed, whatever its time in the checkout); below, a file whose content is
  # what the last copy held gets that copy's time back, so an unchanged file is not rebuilt.
  if ! source_files | tar --null -T - --format=posix -cf - | tar -xmf - -C "$stage"; then
    echo "$me: copying the tracked files of $root to $stage failed" >&2
    rm -rf "$stage"
    return 1
  fi
  count=$(find "$stage" -type f | wc -l)
  if ! apply_in "$stage" "$patch"; then
    {
      echo "$me: ci/canaries/$name.patch DOES NOT APPLY to this checkout's sources; regenerate it" \
        "(ci/canaries/README.md). git says:"
      echo "$report"
      echo "$me: no canary tree written"
    } >&2
    rm -rf "$stage"
    return 1
  fi
  commit=unknown
  tree=unknown
  if in_checkout; then
    commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
    tree=clean
    if [ -n "$(GIT_OPTIONAL_LOCKS=0 git status --porcelain --untracked-files=no)" ]; then
      tree=dirty
    fi
  fi
  {
    echo "# A copy of a checkout's tracked files, made by ci/canary_tree.sh: the checkout's commit,"
    echo "# whether it had uncommitted changes, and the canary patch applied."
    echo "commit=$commit"
    echo "tree=$tree"
    echo "canary=$name"
  } >"$stage/.readyport-tree"
  # Each file (the patched ones and the record included) keeps the last copy's time when its
  # content is what it was.
  if [ -d "$dest" ]; then
    while IFS= read -r -d '' file; do
      file="${file#"$stage"/}"
      if [ -f "$dest/$file" ] && cmp -s "$dest/$file" "$stage/$file"; then
        touch -r "$dest/$file" "$stage/$file"
      fi
    done < <(find "$stage" -type f -print0)
  fi
  # The copy's own build trees (DEST/build: ci/canaries.sh builds in DEST/build/default, the
  # preset's place, so that ccache finds every object the checkout's build/default compiled from
  # the same file) are kept across copies.
  if [ -d "$dest/build" ]; then
    mv "$dest/build" "$stage/build" || return 1
  fi
  rm -rf "$dest"
  mv "$stage" "$dest" || return 1
  echo "$me: $dest: $count files of $commit (tree $tree), ci/canaries/$name.patch applied"
}

cd "$root" || exit 2
if ! command -v git >/dev/null 2>&1; then
  echo "$me: needs git (to list the files and apply the patches), which is not on PATH" >&2
  exit 2
fi
case "${1:-}" in
  --check-all) [ "$#" -eq 1 ] || usage; check_all "$root"; exit $? ;;
  --plant) [ "$#" -eq 1 ] || usage; plant; exit $? ;;
  "" | -*) usage ;;
esac
[ "$#" -le 2 ] || usage
if [ ! -f "$root/ci/canaries/$1.patch" ]; then
  echo "$me: no canary '$1' (no ci/canaries/$1.patch)" >&2
  usage
fi
make_tree "$1" "${2:-$root/build/canary-src-$1}"
