#!/usr/bin/env bash
# The README's first command: installs what is missing, builds the native preset and runs the
# stress/simulation driver over the fake. Arguments go to the driver (see --help), e.g.
#   bash ci/stress.sh                       # the default run (about a minute), with a summary
#   bash ci/stress.sh --seeds 5000 --shard 2/4
#   bash ci/stress.sh --seed 1234 --trace   # replay one seed and print its trace
# Exit status: the driver's (non-zero on any failing seed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default -j "${READYPORT_JOBS:-$(nproc)}" --target readyport-stress >/dev/null
exec build/default/stress/readyport-stress "$@"
