#!/usr/bin/env bash
# The layers, checked on every #include of the tracked C++ sources: a file may include headers
# of its own layer and the layers below it, never above. Tests belong to the layer of the folder
# they are in (core/test is the engine's layer). The layers, lowest first:
#
#   core        the engine (core/)
#   fakes       the testing kit, itself in layers, one folder each: trace, oracle (traces only),
#               runtime, os, recording, faults, world, harness; then fakes/test (the kit's tests
#               and their support)
#   properties  the RapidCheck properties and their world (properties/), itself in layers, one
#               folder each: runner (a property inside a GoogleTest test), psn (the model of
#               PSN, the fake checked against it), engine (the engine as a property)
#   stress      the stress driver and the main job (stress/)
#   top         examples/, tests/ (consumers, docs programs), fuzz/ (the libFuzzer targets, which
#               drive the readers of every layer below)
#
# Tests (a file under a test/ folder, or *_test.cpp) may also use the testing kit (fakes): it
# exists for them. An include that crosses upwards today is listed in ci/layering_known.txt with why it stays;
# the check fails on any other (a new one) and on a listed one that no longer exists (so the
# list only shrinks).
#
#   bash ci/layering.sh            # the tracked sources
#   bash ci/layering.sh --plant    # a planted core -> stress include must fail the check
#
# Exit status: non-zero on a violation (or, with --plant, when the planted one is not caught).
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1

if [ "${1:-}" = "--plant" ]; then
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  printf '#include "runs/stress_run.hpp"\n' >"$dir/planted.cpp"
  # Judged as if it were core/src/zz_planted.cpp; the source tree is not touched.
  if READYPORT_LAYERING_EXTRA="core/src/zz_planted.cpp=$dir/planted.cpp" bash "$0" \
      >"$dir/out.txt" 2>&1; then
    cat "$dir/out.txt"; echo "layering: the planted include was not caught"; exit 1
  fi
  grep "zz_planted" "$dir/out.txt" || true
  echo "layering: the planted core -> stress include was caught"
  exit 0
fi

list=$(mktemp)
trap 'rm -f "$list"' EXIT
git ls-files '*.cpp' '*.hpp' >"$list"
# READYPORT_LAYERING_EXTRA=<path as judged>=<file read>: one more file (the planted check).
if [ -n "${READYPORT_LAYERING_EXTRA:-}" ]; then echo "$READYPORT_LAYERING_EXTRA" >>"$list"; fi
python3 - ci/layering_known.txt "$list" <<'PY'
import os
import re
import sys

known_path = sys.argv[1]
entries = [line.strip() for line in open(sys.argv[2], encoding='utf-8') if line.strip()]
read_from = {e.split('=')[0]: e.split('=', 1)[1] for e in entries if '=' in e}
files = [e.split('=')[0] for e in entries]
rank = {'core': 0, 'fakes': 1, 'properties': 2, 'stress': 3, 'examples': 4, 'tests': 4, 'fuzz': 4}
names = {0: 'core', 2: 'properties', 3: 'stress', 4: 'top'}
# The kit's concepts, lowest first (fakes/CMakeLists.txt links each to those before it); the
# oracle reads traces only. Anything else under fakes/ (test/) sits above them all.
kit = ['trace', 'oracle', 'runtime', 'os', 'recording', 'faults', 'world', 'harness']
kit_top = 1 + (len(kit) + 1) / 10
for i, concept in enumerate(kit):
    names[1 + (i + 1) / 10] = 'fakes/' + concept
names[kit_top] = 'fakes/test'
# The properties' concepts, lowest first (properties/CMakeLists.txt).
properties = ['runner', 'psn', 'engine']
for i, concept in enumerate(properties):
    names[2 + (i + 1) / 10] = 'properties/' + concept


def layer(path):
    parts = path.split('/')
    if parts[0] == 'properties' and len(parts) > 2 and parts[1] in properties:
        return 2 + (properties.index(parts[1]) + 1) / 10
    if parts[0] != 'fakes':
        return rank.get(parts[0])
    if len(parts) > 2 and parts[1] in kit:
        return 1 + (kit.index(parts[1]) + 1) / 10
    return kit_top


by_suffix = {}
for path in files:
    parts = path.split('/')
    for i in range(len(parts)):
        by_suffix.setdefault('/'.join(parts[i:]), []).append(path)

# Quoted or angled: an angled include of a tracked header is judged too (system headers resolve
# to no tracked file and are left alone).
include = re.compile(r'^\s*#\s*include\s+["<]([^">]+)[">]', re.M)
found = set()
checked = 0
for path in files:
    here = layer(path)
    if here is None:
        continue
    if '/test/' in path or path.endswith('_test.cpp'):
        here = max(here, kit_top)
    text = open(read_from.get(path, path), encoding='utf-8').read()
    for name in include.findall(text):
        candidates = by_suffix.get(name, [])
        local = os.path.normpath(os.path.join(os.path.dirname(path), name))
        if local in candidates:
            candidates = [local]
        layers = {layer(c) for c in candidates if layer(c) is not None}
        if not layers:
            continue  # generated, or a system or third-party header
        checked += 1
        target = min(layers)  # the lowest layer that provides it
        if target > here:
            found.add(f"{path} -> {name} ({names[here]} -> {names[target]})")

known = {}
for line in open(known_path, encoding='utf-8'):
    line = line.rstrip('\n')
    if not line or line.startswith('#'):
        continue
    edge, _, why = line.partition('  # ')
    known[edge.strip()] = why.strip()

new = sorted(found - known.keys())
gone = sorted(known.keys() - found)
for edge in new:
    print(f"layering: {edge}: includes a layer above its own")
for edge in gone:
    print(f"layering: {edge}: listed in {known_path} but gone: remove it from the list")
print(f"layering: {checked} includes checked; {len(found)} upward, {len(found) - len(new)} of "
      f"them listed ({known_path}), {len(new)} new, {len(gone)} listed but gone")
sys.exit(1 if new or gone else 0)
PY
