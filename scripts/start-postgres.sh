#!/usr/bin/env bash
# Makes sure the PostgreSQL the room's store tests use answers on 127.0.0.1:5432 (user postgres,
# trust authentication from 127.0.0.1, database "test"). As root: installs Debian's postgresql
# where it is missing, starts its cluster where it is stopped, and, on a cluster this script
# created, lets 127.0.0.1 in without a password (a test machine's). Prints nothing when the
# server answers already; exits 1, saying why, when it cannot make it answer.
set -euo pipefail
ready() { pg_isready -q -h 127.0.0.1 -p 5432 >/dev/null 2>&1; }
if command -v pg_isready >/dev/null 2>&1 && ready; then
  psql -h 127.0.0.1 -U postgres -d postgres -Atqc "SELECT 1 FROM pg_database WHERE datname = 'test'" \
    | grep -q 1 || createdb -h 127.0.0.1 -U postgres test
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "PostgreSQL does not answer on 127.0.0.1:5432 and installing it needs root:" \
       "sudo apt-get install postgresql (then allow 127.0.0.1 in pg_hba.conf)" >&2
  exit 1
fi
installed=""
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "installing Debian's postgresql for the room's store tests" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  installed=1
fi
version="$(ls /usr/lib/postgresql | sort -V | tail -1)"
if ! pg_lsclusters -h | grep -q "^$version main"; then
  pg_createcluster "$version" main >/dev/null
  installed=1
fi
if [ -n "$installed" ]; then
  hba="/etc/postgresql/$version/main/pg_hba.conf"
  # a cluster made here for the tests: 127.0.0.1 may connect as any user without a password
  sed -i '1i host all all 127.0.0.1/32 trust' "$hba"
fi
pg_ctlcluster "$version" main start 2>/dev/null || pg_ctlcluster "$version" main reload
for _ in $(seq 30); do ready && break; sleep 1; done
if ! ready; then
  echo "PostgreSQL $version was started but does not answer on 127.0.0.1:5432" \
       "(see /var/log/postgresql/postgresql-$version-main.log)" >&2
  exit 1
fi
psql -h 127.0.0.1 -U postgres -d postgres -Atqc "SELECT 1 FROM pg_database WHERE datname = 'test'" \
  | grep -q 1 || createdb -h 127.0.0.1 -U postgres test
