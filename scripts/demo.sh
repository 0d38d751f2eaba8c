#!/usr/bin/env bash
# Installs dealer-assist into .venv and runs the main job: the demo table (a simulated shoe on a
# pseudo-terminal, a synthetic overhead camera whose frames are rendered from card artwork and
# read by the shipped card detector, simulated players, the real engine and the real dealer's
# screen). It prints the screen's URL and deals until Ctrl-C. Arguments go to
# `dealer-assist demo` (e.g. --headless --rounds 5 to print settlements without waiting).
# The card artwork comes from the package registries (apt, npm) on the first run; where it
# cannot be installed the demo runs without its camera and its screen says why.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh table
art="${DEALER_ASSIST_CARD_ART:-$HOME/.cache/dealer-assist/card-art}"
deck=$(.venv/bin/python -c 'from dealer_assist.table.synthetic_camera import HOUSE_DECK; print(HOUSE_DECK)')
if [ ! -d "$art/$deck" ]; then
  echo "installing card artwork for the demo's camera (first run only)..."
  bash scripts/install-card-art.sh .venv/bin/python >/dev/null \
    || echo "card artwork could not be installed: the demo runs without its camera" >&2
fi
exec .venv/bin/dealer-assist demo "$@"
