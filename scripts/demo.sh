#!/usr/bin/env bash
# Installs dealer-assist into .venv (skipped while current) and runs the main job: the demo table (a simulated shoe on a
# pseudo-terminal, a synthetic overhead camera whose frames are rendered from card artwork and
# read by the shipped card detector, simulated players, the real engine and the real dealer's
# screen). It prints the screen's URL and deals until Ctrl-C. Arguments go to
# `dealer-assist demo` (e.g. --headless --rounds 5 to print settlements without waiting).
# The card artwork comes from the package registries (apt, npm) on the first run; where it
# cannot be installed the demo runs without its camera and its screen says why.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh table
bash scripts/install-card-art.sh --if-missing .venv/bin/python >/dev/null \
  || echo "card artwork could not be installed: the demo runs without its camera" >&2
exec .venv/bin/dealer-assist demo "$@"
