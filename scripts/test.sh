#!/usr/bin/env bash
# Installs everything the test suite needs into .venv and runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh "table,test"
exec .venv/bin/python -m pytest "$@"
