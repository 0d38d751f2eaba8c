#!/usr/bin/env bash
# Installs dealer-assist into .venv and runs the main job: settles the bundled demo round and
# prints what the dealer pays each seat. Arguments are passed to `dealer-assist settle`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh table
example=$(.venv/bin/python -c 'from importlib.resources import files; print(files("dealer_assist.roundlog") / "examples" / "demo-round.jsonl")')
exec .venv/bin/dealer-assist settle "$example" "$@"
