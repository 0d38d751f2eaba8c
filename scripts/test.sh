#!/usr/bin/env bash
# Installs everything the test suite needs (.venv with the table and test extras, Debian's
# chromium for the browser tests, poppler-utils for the PDF report test, qemu-user to emulate a
# CPU without VNNI, the card artwork for the vision tests), runs the static checks (ruff, mypy),
# then the whole suite. Arguments go to pytest.
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
# The incident report's PDF test renders it with poppler's pdftoppm and reads it with pdftotext.
if ! command -v pdftoppm >/dev/null 2>&1 || ! command -v pdftotext >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing Debian's poppler-utils for the PDF report test" >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq poppler-utils >/dev/null
  else
    echo "the PDF report test needs Debian's poppler-utils: sudo apt-get install poppler-utils" >&2
  fi
fi
# The floor's tests start their own JetStream broker (Debian's nats-server) on free ports.
if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing Debian's nats-server for the floor's tests" >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server >/dev/null
  else
    echo "the floor's tests need Debian's nats-server: sudo apt-get install nats-server" >&2
  fi
fi
# The INT8 models are checked on a CPU without VNNI by emulating one (tests/vision/test_without_vnni.py).
if ! command -v qemu-x86_64 >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing Debian's qemu-user for the no-VNNI CPU test" >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user >/dev/null
  else
    echo "the no-VNNI CPU test needs Debian's qemu-user: sudo apt-get install qemu-user" >&2
  fi
fi
# The vision, demo and quantisation tests render scenes from the card artwork: install it (and the
# fonts of the drawn decks) from the package registries when any design is missing, so that a
# fresh machine runs those tests rather than skipping them.
if ! bash scripts/install-card-art.sh --if-missing .venv/bin/python >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    echo "the card artwork could not be installed (scripts/install-card-art.sh)" >&2
    exit 1
  fi
  echo "the vision tests need the card artwork: run scripts/install-card-art.sh as root" >&2
fi
# The room's store is tested against a real PostgreSQL (tests/postgres.py): started, or installed
# and started, here; only where that fails do those tests skip, saying why.
if ! pg_why="$(bash scripts/start-postgres.sh 2>&1)"; then
  echo "$pg_why" >&2
  export DEALER_ASSIST_POSTGRES_UNAVAILABLE="scripts/start-postgres.sh: ${pg_why//$'\n'/ }"
fi
echo "ruff: lint" >&2
.venv/bin/ruff check dealer_assist tests bench
echo "mypy: type check of the package" >&2
.venv/bin/mypy dealer_assist
exec .venv/bin/python -m pytest "$@"
