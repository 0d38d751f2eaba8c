#!/usr/bin/env bash
# Brings up a whole casino floor on this machine, for a newcomer: a NATS JetStream broker of its
# own (Debian's nats-server, installed if missing, on 127.0.0.1:4322, storing in FLOOR_DIR), the
# surveillance room (its consumer and its page), and TABLES simulated table boxes (default 10)
# dealing one round every EVERY seconds (default 5) through the real table loop, recorder and
# forwarder. Prints the page's URL and a login, and runs until Ctrl-C.
#
#   bash scripts/floor.sh [TABLES] [EVERY]       (FLOOR_DIR: where it all lives, default floor-demo)
#
# The room keeps its store in PostgreSQL (scripts/start-postgres.sh: 127.0.0.1:5432, database
# "floor", a schema per FLOOR_DIR), or in SQLite under FLOOR_DIR/room where PostgreSQL cannot run.
set -euo pipefail
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
TABLES="${1:-10}"
EVERY="${2:-5}"
cd "$(dirname "$0")/.."
bash scripts/install.sh "table,floor"
DA=.venv/bin/dealer-assist
DIR="$(realpath -m "${FLOOR_DIR:-floor-demo}")"
mkdir -p "$DIR"
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; wait; }
trap cleanup EXIT

if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server >/dev/null
  else
    echo "the floor needs Debian's nats-server: sudo apt-get install nats-server" >&2
    exit 1
  fi
fi
PORT="${FLOOR_NATS_PORT:-4322}"
NATS_URL="nats://127.0.0.1:$PORT"
"$(command -v nats-server || echo /usr/sbin/nats-server)" -js -a 127.0.0.1 -p "$PORT" \
  -sd "$DIR/jetstream" >"$DIR/nats-server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$PORT") 2>/dev/null && break; sleep 0.1; done
echo "floor broker: $NATS_URL" >&2

# the tables first (their keys), so that room.toml can name the key of each
"$DA" floor simulate --nats "$NATS_URL" --tables "$TABLES" --rounds 0 --dir "$DIR/tables" >/dev/null
STORE=(--sqlite "$DIR/room")
POSTGRES_URL="postgresql://postgres@127.0.0.1:5432/floor"
SCHEMA="floor_$(printf '%s' "$DIR" | md5sum | cut -c1-12)"
if bash scripts/start-postgres.sh >/dev/null 2>&1; then
  psql -h 127.0.0.1 -U postgres -d postgres -Atqc "SELECT 1 FROM pg_database WHERE datname = 'floor'" \
    | grep -q 1 || createdb -h 127.0.0.1 -U postgres floor
  STORE=()
else
  echo "PostgreSQL cannot run here: the room keeps its store in SQLite under $DIR/room" >&2
fi
{
  echo "[postgres]"
  echo "url = \"$POSTGRES_URL\""
  echo "schema = \"$SCHEMA\""
  echo "frames = \"room-frames\""
  echo "[nats]"
  echo "url = \"$NATS_URL\""
  echo "[page]"
  echo "host = \"127.0.0.1\""
  echo "port = 8030"
  echo "[tables]"
  for n in $(seq -f "%03g" 1 "$TABLES"); do
    echo "SIM$n = \"tables/SIM$n.evidence/table.pub\""
  done
  echo "[signing]"
  echo "key = \"room-signing.key\""
  echo "anchor_log = \"room-anchors.jsonl\""
} >"$DIR/room.toml"
# the room's own signing key (made once, kept on later runs): it signs the room's chain
"$DA" room keygen --config "$DIR/room.toml" >/dev/null

"$DA" room serve --config "$DIR/room.toml" "${STORE[@]}" >"$DIR/room.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do grep -q "surveillance page on" "$DIR/room.log" && break; sleep 0.1; done
if [ ${#STORE[@]} = 0 ]; then
  OPERATOR=("$DA" room operator --config "$DIR/room.toml")
else
  OPERATOR=("$DA" surveillance operator "$DIR/room")
fi
if ! "${OPERATOR[@]}" list 2>/dev/null | grep -q '^floor'; then
  PASSWORD="$(head -c 12 /dev/urandom | base64 | tr -d '/+=')"
  printf '%s\n' "$PASSWORD" | "${OPERATOR[@]}" add floor --role operator --password-stdin >/dev/null
  echo "page login: floor / $PASSWORD" >&2
fi
echo "surveillance page: http://127.0.0.1:8030/ (room log: $DIR/room.log)" >&2
echo "dealing: $TABLES tables, one round every $EVERY s each; Ctrl-C stops the floor" >&2
"$DA" floor simulate --config "$DIR/room.toml" --tables "$TABLES" --rounds 1000000 \
  --every "$EVERY" --dir "$DIR/tables"
