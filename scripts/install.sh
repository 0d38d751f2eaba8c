#!/usr/bin/env bash
# Creates .venv (if missing) and installs dealer-assist with the extras named in $1 (default: table).
# An install that is current (the same pyproject.toml, this checkout, these extras) is not done
# again: .venv/.dealer-assist-installed records what was installed.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-table}"
stamp=.venv/.dealer-assist-installed
installed="$(sha256sum pyproject.toml | cut -d' ' -f1) $(pwd)"
if [ -x .venv/bin/python ] && [ -x .venv/bin/dealer-assist ] && [ -f "$stamp" ] \
    && [ "$(head -n 1 "$stamp")" = "$installed" ] && grep -qxF "$extras" "$stamp"; then
  echo "dealer-assist[$extras] is installed in .venv and current: not installed again" >&2
  exit 0
fi
if [ ! -x .venv/bin/python ]; then
  echo "creating .venv" >&2
  python3 -m venv .venv
fi
echo "installing dealer-assist[$extras] into .venv (pip; a few minutes the first time)" >&2
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e ".[${extras}]"
if [ -f "$stamp" ] && [ "$(head -n 1 "$stamp")" = "$installed" ]; then
  echo "$extras" >> "$stamp"
else
  printf '%s\n%s\n' "$installed" "$extras" > "$stamp"
fi
echo "installed dealer-assist[$extras]" >&2
