#!/usr/bin/env bash
# Installs everything the test suite needs (.venv with the table and test extras, Debian's
# chromium for the browser tests, poppler-utils for the PDF report test, qemu-user to emulate a
# CPU without VNNI, the card artwork for the vision tests), runs the static checks (ruff, mypy),
# then the whole suite. Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh "table,test"
# debian_package PACKAGE FOR COMMAND...: install Debian's PACKAGE (FOR: the tests that need it)
# unless each COMMAND is on the PATH; without root, say how.
debian_package() {
  local package=$1 needed_by=$2 command
  shift 2
  for command in "$@"; do
    command -v "$command" >/dev/null 2>&1 && continue
    if [ "$(id -u)" = 0 ]; then
      echo "installing Debian's $package for $needed_by" >&2
      apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null
    else
      echo "$needed_by: sudo apt-get install $package" >&2
    fi
    return 0
  done
}
debian_package chromium "the browser tests" chromium
# The incident report's PDF test renders it with poppler's pdftoppm and reads it with pdftotext.
debian_package poppler-utils "the PDF report test" pdftoppm pdftotext
# The floor's tests start their own JetStream broker (Debian's nats-server) on free ports.
[ -x /usr/sbin/nats-server ] || debian_package nats-server "the floor's tests" nats-server
# The INT8 models are checked on an emulated CPU without VNNI (tests/vision/test_without_vnni.py).
debian_package qemu-user "the no-VNNI CPU test" qemu-x86_64
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
