#!/usr/bin/env bash
# Installs dealer-assist into .venv and runs the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh table
exec .venv/bin/dealer-assist demo "$@"
