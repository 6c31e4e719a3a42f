#!/usr/bin/env bash
# Replays one failure bundle (the JSON file readyport-stress writes for each failing seed, e.g.
# build/failures/seed-93.json from the nightly's artifact) on a build that matches the one that
# wrote it: the bundle's commit and canary (its "readyport" object).
#
#   bash ci/replay.sh BUNDLE [DRIVER OPTIONS...]      # e.g. bash ci/replay.sh seed-93.json
#   bash ci/replay.sh --build BUNDLE [...]            # bring the matching driver up to date first
#   bash ci/replay.sh --print BUNDLE                  # only print how to get the matching build
#   bash ci/replay.sh seed-93.json --trace-out seed-93.trace   # options go to the driver
#
# Which driver: build/default/stress/readyport-stress when its --version names the bundle's
# commit and canary; else the matching build, made here when missing (only its target
# readyport-stress): build/canary-src-<name>/build/default for another canary at this checkout's
# commit (as ci/canaries.sh builds it, in ci/canary_tree.sh's copy build/canary-src-<name>),
# build/replay-<commit>[-<canary>] from a git worktree of the bundle's commit
# (build/replay-src-<commit>) otherwise; a canary there is built from the copy that commit's
# ci/canary_tree.sh makes of the worktree (build/replay-src-<commit>-<canary>), or, at a commit
# older than ci/canaries/<canary>.patch, from the worktree itself with -DREADYPORT_CANARY alone
# (the engine's sources held the canaries then). Each step is printed as the command it runs, so
# the same can be done by hand; --print prints them and runs nothing. A bundle whose commit is
# "unknown", or not in this clone, is replayed on this checkout with a warning (fetch the commit to
# do better). A corpus entry (no build recorded) runs on build/default. READYPORT_STRESS names the
# binary to run instead. Building needs cmake 3.25+, ninja, g++ and the libraries the tree finds
# at configure time (ci/setup.sh installs them; this script never does). Logs: build/logs/replay.*.
# Exit status: the driver's: 0 the same verdict and trace hash as recorded, 3 the same verdict with
# another trace, 4 not reproduced (it passes now, or fails another way); a corpus entry: 0 it
# passes, 1 it fails; 2 a bad bundle or option, or a build that cannot be made.
set -uo pipefail

usage() {
  echo "usage: bash ci/replay.sh [--build|--print] BUNDLE [readyport-stress options...]" >&2
  exit 2
}

# -h / --help: the usage and the comment above, on stdout; exit 0.
help() {
  echo "usage: bash ci/replay.sh [--build|--print] BUNDLE [readyport-stress options...]"
  sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
}

build=0
print_only=0
while [ "$#" -gt 0 ]; do
  case "$1" in
    -h | --help) help ;;
    --build) build=1; shift ;;
    --print) print_only=1; shift ;;
    *) break ;;
  esac
done
if [ "$#" -lt 1 ]; then usage; fi
bundle="$1"
shift
if [ ! -f "$bundle" ]; then
  echo "replay: no such bundle file: $bundle" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)" || exit 2
log_dir="$root/build/logs"
jobs="${READYPORT_JOBS:-$(nproc)}"

# json_string FILE KEY: the first `"KEY": "value"` of a pretty-printed JSON file (bundles are).
json_string() {
  sed -n "s/^ *\"$2\": *\"\\([^\"]*\\)\".*/\\1/p" "$1" | head -n 1
}

# say CMD...: prints the command (so that it can be run by hand), then runs it unless --print.
say() {
  echo "replay: \$ $*" >&2
  if [ "$print_only" -eq 1 ]; then return 0; fi
  "$@"
}

# version_of BINARY: its --version line, or nothing.
version_of() { [ -x "$1" ] && "$1" --version 2>/dev/null | head -n 1; }

# build_driver SRC DIR CANARY NAME: configures DIR from SRC with the preset "default" (and the
# canary) when it has no cache made from SRC yet, then builds readyport-stress there; logs named
# after NAME. When tree_script is set, SRC is the canary's tree that script makes, made afresh
# first.
build_driver() {
  local src="$1" dir="$2" canary="$3" name="$4" tool home configure=0
  for tool in cmake ninja g++; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "replay: building $dir needs $tool, which is not on PATH; install cmake (3.25 or" \
        "later), ninja and g++ (on Debian 12: bash ci/setup.sh), or point READYPORT_STRESS at" \
        "a built readyport-stress" >&2
      return 1
    fi
  done
  mkdir -p "$log_dir"
  if [ -n "$tree_script" ]; then
    echo "replay: \$ bash $tree_script $canary $src" >&2
    if [ "$print_only" -eq 0 ] &&
       ! bash "$tree_script" "$canary" "$src" >"$log_dir/replay.$name.tree.log" 2>&1; then
      tail -n 60 "$log_dir/replay.$name.tree.log" >&2
      echo "replay: no source tree with canary $canary's patch (log:" \
        "$log_dir/replay.$name.tree.log)" >&2
      return 1
    fi
  fi
  [ -f "$dir/CMakeCache.txt" ] || configure=1
  # A cache made from another source tree (cmake refuses it) is removed: the build starts afresh.
  home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$dir/CMakeCache.txt" 2>/dev/null)
  if [ -n "$home" ] && [ "$(realpath -m "$home")" != "$(realpath -m "$src")" ]; then
    say rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles" || return 1
    configure=1
  fi
  if [ "$configure" -eq 1 ]; then
    echo "replay: \$ (cd $src && cmake --preset default -B $dir -DREADYPORT_CANARY=$canary)" >&2
    if [ "$print_only" -eq 0 ] &&
       ! (cd "$src" && cmake --preset default -B "$dir" -DREADYPORT_CANARY="$canary" \
            -DREADYPORT_CONSUMER_TESTS=OFF) >"$log_dir/replay.$name.configure.log" 2>&1; then
      tail -n 40 "$log_dir/replay.$name.configure.log" >&2
      echo "replay: configuring $dir failed (log: $log_dir/replay.$name.configure.log); the" \
        "tree needs GoogleTest, CLI11 and nlohmann-json (Debian 12: bash ci/setup.sh)" >&2
      return 1
    fi
  fi
  echo "replay: \$ cmake --build $dir -j $jobs --target readyport-stress" >&2
  if [ "$print_only" -eq 0 ] &&
     ! cmake --build "$dir" -j "$jobs" --target readyport-stress \
       >"$log_dir/replay.$name.build.log" 2>&1; then
    tail -n 60 "$log_dir/replay.$name.build.log" >&2
    echo "replay: the build failed (log: $log_dir/replay.$name.build.log)" >&2
    return 1
  fi
}

binary="${READYPORT_STRESS:-}"
if [ -n "$binary" ]; then
  if [ ! -x "$binary" ]; then
    echo "replay: READYPORT_STRESS=$binary is not an executable file" >&2
    exit 2
  fi
  [ "$build" -eq 1 ] && echo "replay: --build ignored: READYPORT_STRESS names the binary" >&2
else
  format=$(json_string "$bundle" format)
  want_commit=$(json_string "$bundle" commit)
  want_canary=$(json_string "$bundle" canary)
  if [ "$(json_string "$bundle" tree)" = "dirty" ]; then
    echo "replay: WARNING: the bundle was written by a build with uncommitted changes to" \
      "$want_commit: the commit alone may not reproduce it" >&2
  fi
  src="$root"
  dir="$root/build/default"
  name="default"
  tree_script=""
  if [ "$format" = "readyport-stress-bundle" ]; then
    here=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
    if [ -z "$want_commit" ] || [ "$want_commit" = "unknown" ]; then
      echo "replay: WARNING: the bundle names no commit; replaying at this checkout ($here)" >&2
    elif [ "$want_commit" != "$here" ]; then
      if git -C "$root" cat-file -e "$want_commit^{commit}" 2>/dev/null; then
        src="$root/build/replay-src-$want_commit"
        dir="$root/build/replay-$want_commit${want_canary:+-$want_canary}"
        name="$want_commit${want_canary:+-$want_canary}"
        if [ ! -e "$src/.git" ]; then
          say git -C "$root" worktree add --detach "$src" "$want_commit" >&2 || exit 2
        fi
      else
        echo "replay: WARNING: the bundle's commit $want_commit is not in this clone (git fetch" \
          "it, then run this again); replaying at this checkout ($here)" >&2
      fi
    fi
    if [ "$src" = "$root" ] && [ -n "$want_canary" ]; then
      dir="$root/build/canary-src-$want_canary/build/default"
      name="canary-$want_canary"
    fi
  fi
  # What the build is configured from: the checkout (or worktree) itself; for a canary, the copy
  # with its patch applied that the same commit's ci/canary_tree.sh makes; at a commit older than
  # the patch, the worktree itself (-DREADYPORT_CANARY alone planted the canary then).
  cmake_src="$src"
  if [ -n "$want_canary" ] && [ "$src" = "$root" ]; then
    tree_script="$root/ci/canary_tree.sh"
    cmake_src="$root/build/canary-src-$want_canary"
  elif [ -n "$want_canary" ] &&
       git -C "$root" cat-file -e "$want_commit:ci/canaries/$want_canary.patch" 2>/dev/null; then
    tree_script="$src/ci/canary_tree.sh"
    cmake_src="$src-$want_canary"
  fi
  binary="$dir/stress/readyport-stress"
  if [ "$print_only" -eq 1 ]; then
    build_driver "$cmake_src" "$dir" "$want_canary" "$name"
    echo "replay: \$ $binary --replay $bundle${*:+ $*}" >&2
    exit 0
  fi
  version=$(version_of "$binary")
  matches=1
  if [ "$format" = "readyport-stress-bundle" ] && [ "$src" = "$root" ] && [ -n "$version" ]; then
    case "$version" in *"commit $want_commit"*) ;; *) [ "$want_commit" = "unknown" ] || matches=0 ;; esac
    if [ -n "$want_canary" ]; then
      case "$version" in *"canary $want_canary"*) ;; *) matches=0 ;; esac
    else
      case "$version" in *", canary "*) matches=0 ;; esac
    fi
  fi
  if [ "$build" -eq 1 ] || [ -z "$version" ] || [ "$matches" -eq 0 ]; then
    build_driver "$cmake_src" "$dir" "$want_canary" "$name" || exit 2
  fi
fi
# The configuration and sanitizer do not change a trace (the traces leg checks g++ against clang,
# and the sanitizer legs run the same seeds); a sanitizer's report would need that build.
want_build=$(json_string "$bundle" build)
if [ -n "$want_build" ]; then
  case "$(version_of "$binary")" in
    *", $want_build"*) ;;
    *) echo "replay: note: the bundle was written by a '$want_build' build; this one is not" >&2 ;;
  esac
fi
echo "replay: \$ $binary --replay $bundle${*:+ $*}" >&2
exec "$binary" --replay "$bundle" "$@"
