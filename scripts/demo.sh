#!/usr/bin/env bash
# Installs dealer-assist into .venv and runs the main job: the demo table (a simulated shoe on a
# pseudo-terminal, simulated players, the real engine and the real dealer's screen). It prints the
# screen's URL and deals until Ctrl-C. Arguments go to `dealer-assist demo`
# (e.g. --headless --rounds 5 to print settlements without waiting).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh table
exec .venv/bin/dealer-assist demo "$@"
