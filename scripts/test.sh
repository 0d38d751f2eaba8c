#!/usr/bin/env bash
# Installs everything the test suite needs (.venv with the table and test extras, and Debian's
# chromium for the browser tests) and runs the whole suite. Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh "table,test"
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing Debian's chromium for the browser tests" >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "the browser tests need Debian's chromium: sudo apt-get install chromium" >&2
  fi
fi
exec .venv/bin/python -m pytest "$@"
