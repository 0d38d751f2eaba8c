#!/usr/bin/env bash
# Creates .venv (if missing) and installs dealer-assist with the extras named in $1 (default: table).
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-table}"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e ".[${extras}]"
