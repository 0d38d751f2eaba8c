"""``room.toml``: the surveillance room's services, page and the tables' verification keys,
validated with messages that name the file and the key.

```toml
[postgres]
url = "postgresql://postgres@127.0.0.1:5432/room"   # where the room keeps every table's records
# schema = "room"                  # the PostgreSQL schema that holds the room's store
# frames = "room-frames"           # the folder of the frame files the room keeps

[nats]
url = "nats://127.0.0.1:4222"      # the JetStream the tables forward to
# credentials = "room.creds"       # optional: the room's NATS credentials file
# tls_ca = "floor-ca.pem"          # optional TLS: the CA that signed the servers' certificates,
# tls_cert = "room.crt"            # and the room's own certificate and key (both or neither)
# tls_key = "room.key"

[page]
host = "127.0.0.1"                 # the floor's surveillance page
port = 8443

[tables]                           # table id -> its public key file (dealer-assist writes
T1 = "keys/T1.pub"                 # TABLE.pub beside the table's key); a table not named here
T2 = "keys/T2.pub"                 # is not trusted

[signing]                          # the room's own key: it signs the room's chain (alarms,
key = "room-signing.key"           # holds, prunes, page access); 'room keygen' makes it
# public = "room-signing.pub"      # (mode 0600) and its public key file (default: beside it)
anchor_log = "room-anchors.jsonl"  # the chain's head after each record, outside PostgreSQL:
                                   # 'room verify' finds a cut tail by it

[retention]                        # optional: what 'room serve' prunes by itself, hourly
# frames_hours = 720               # the room's frame copies older than this
# records_hours = 8760             # the tables' records older than this (holds kept)
```

Relative paths are taken from the folder of ``room.toml``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealer_assist.surveillance.query import MAX_PRUNE_HOURS
from dealer_assist.surveillance.signing import KeyFileError, PublicKey, Signer, read_public_keys
from dealer_assist.toml_files import TomlFileError, read_toml

if TYPE_CHECKING:
    from dealer_assist.floor.pgstore import PostgresStore

#: a table id (as table.toml's table_id)
TABLE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
MAX_CONFIG_BYTES = 1_000_000

_SECTIONS: dict[str, set[str] | None] = {
    "postgres": {"url", "schema", "frames"},
    "nats": {"url", "credentials", "tls_ca", "tls_cert", "tls_key"},
    "page": {"host", "port"},
    "tables": None,  # any table id
    "signing": {"key", "public", "anchor_log"},
    "retention": {"frames_hours", "records_hours"},
}
DEFAULT_ROOM_KEY = "room-signing.key"


class RoomConfigError(ValueError):
    """A room configuration that cannot run: names the file and the key."""

    def __init__(self, path: str, key: str, why: str):
        self.path, self.key, self.why = path, key, why
        super().__init__(f"{path}: {key}: {why}")


@dataclass(frozen=True, slots=True)
class NatsConfig:
    url: str
    credentials: Path | None = None
    tls_ca: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None


@dataclass(frozen=True, slots=True)
class TableKeys:
    """A table the room trusts: its id, its public key file and the keys in it."""

    table: str
    file: Path
    keys: tuple[PublicKey, ...]


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """What ``room serve`` prunes by itself: frames and/or records older than these (None:
    not that kind; both None: no policy)."""

    frames: timedelta | None = None
    records: timedelta | None = None

    def __bool__(self) -> bool:
        return self.frames is not None or self.records is not None


@dataclass(frozen=True, slots=True)
class RoomConfig:
    """A validated ``room.toml``. ``signing_key``: the room's private key (read when the room
    writes); ``signing_public``: the public key file that vouches for the room's chain;
    ``anchor_log``: the file outside the store that holds the chain's heads."""

    path: str
    postgres_url: str
    postgres_schema: str
    frames_dir: Path
    nats: NatsConfig
    page_host: str
    page_port: int
    tables: dict[str, TableKeys]
    signing_key: Path
    signing_public: Path
    retention: RetentionPolicy = RetentionPolicy()
    #: where the room writes its chain's head after each record it appends (None: nowhere)
    anchor_log: Path | None = None


def _text(path: str, key: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise RoomConfigError(path, key, f"must be a non-empty string, got {value!r}")
    if re.search(r"[\x00-\x1f\x7f-\x9f]", value):
        raise RoomConfigError(path, key, f"must not hold control characters, got {value!r}")
    return value.strip()


def _file(path: str, base: Path, key: str, value: object) -> Path:
    resolved = _path(path, base, key, value)
    if not resolved.is_file():
        raise RoomConfigError(path, key, f"no such file: {resolved}")
    return resolved


def _section(path: str, data: dict[str, Any], name: str, required: bool) -> dict[str, Any]:
    raw = data.get(name)
    if raw is None:
        if required:
            raise RoomConfigError(path, name, f"missing: the [{name}] table is required")
        return {}
    if not isinstance(raw, dict):
        raise RoomConfigError(path, name, f"must be a [{name}] table, got {raw!r}")
    allowed = _SECTIONS[name]
    for key in raw:
        if allowed is not None and key not in allowed:
            raise RoomConfigError(path, f"{name}.{key}",
                                  f"unknown key (known: {', '.join(sorted(allowed))})")
    return raw


def _url(path: str, key: str, value: object, schemes: tuple[str, ...]) -> str:
    url = _text(path, key, value)
    if not url.startswith(tuple(f"{scheme}://" for scheme in schemes)):
        raise RoomConfigError(path, key, f"must be a {' or '.join(s + '://' for s in schemes)}"
                              f" URL, got {url!r}")
    return url


def parse_room_config(data: dict[str, Any], path: str = "room.toml",
                      base: Path | None = None) -> RoomConfig:
    """Validate a decoded ``room.toml``; relative paths are taken from ``base``."""
    base = base or Path(".")
    for key in data:
        if key not in _SECTIONS:
            raise RoomConfigError(path, key,
                                  f"unknown key (known: {', '.join(sorted(_SECTIONS))})")
    postgres = _section(path, data, "postgres", True)
    postgres_url = _url(path, "postgres.url", postgres.get("url"), ("postgresql", "postgres"))
    schema = _text(path, "postgres.schema", postgres.get("schema", "room"))
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", schema):
        raise RoomConfigError(path, "postgres.schema", "a schema name is 1-63 lower-case "
                              f"letters, digits or '_', not starting with a digit, got {schema!r}")
    frames = Path(_text(path, "postgres.frames", postgres.get("frames", "room-frames")))
    frames = frames if frames.is_absolute() else base / frames

    raw_nats = _section(path, data, "nats", True)
    files = {name: None if name not in raw_nats else
             _file(path, base, f"nats.{name}", raw_nats[name])
             for name in ("credentials", "tls_ca", "tls_cert", "tls_key")}
    if (files["tls_cert"] is None) != (files["tls_key"] is None):
        given, other = ("tls_cert", "tls_key") if files["tls_cert"] else ("tls_key", "tls_cert")
        raise RoomConfigError(path, f"nats.{other}", f"required with nats.{given} (a client "
                              "certificate needs its private key)")
    nats = NatsConfig(_url(path, "nats.url", raw_nats.get("url"), ("nats", "tls")), **files)

    page = _section(path, data, "page", False)
    host = _text(path, "page.host", page.get("host", "127.0.0.1"))
    port = page.get("port", 8443)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise RoomConfigError(path, "page.port", f"must be a port number 0-65535, got {port!r}")

    tables: dict[str, TableKeys] = {}
    for table, value in _section(path, data, "tables", True).items():
        key = f"tables.{table}"
        if not TABLE_ID.fullmatch(table):
            raise RoomConfigError(path, key, "a table id is 1-32 letters, digits, '-' or '_'")
        file = _file(path, base, key, value)
        try:
            keys = tuple(read_public_keys(file))
        except KeyFileError as error:
            raise RoomConfigError(path, key, str(error)) from None
        tables[table] = TableKeys(table, file, keys)
    if not tables:
        raise RoomConfigError(path, "tables", "names no table: the room would trust none")

    signing = _section(path, data, "signing", False)
    room_key = _path(path, base, "signing.key", signing.get("key", DEFAULT_ROOM_KEY))
    public = (_path(path, base, "signing.public", signing["public"]) if "public" in signing
              else room_key.with_suffix(".pub"))
    if room_key in (nats.tls_key, nats.credentials) or public == room_key:
        raise RoomConfigError(path, "signing.key", f"{room_key} is another file's name here: "
                              "the room's signing key is a file of its own")
    anchor_log = (_path(path, base, "signing.anchor_log", signing["anchor_log"])
                  if "anchor_log" in signing else None)
    if anchor_log is not None and anchor_log in (room_key, public, nats.tls_key,
                                                 nats.credentials):
        raise RoomConfigError(path, "signing.anchor_log", f"{anchor_log} is another file's "
                              "name here: the anchor log is a file of its own")
    raw_retention = _section(path, data, "retention", False)
    retention = RetentionPolicy(*(_hours(path, f"retention.{name}", raw_retention.get(name))
                                  for name in ("frames_hours", "records_hours")))
    return RoomConfig(path, postgres_url, schema, frames, nats, host, port, tables, room_key,
                      public, retention, anchor_log)


def _path(path: str, base: Path, key: str, value: object) -> Path:
    name = Path(_text(path, key, value))
    return name if name.is_absolute() else base / name


def _hours(path: str, key: str, value: object) -> timedelta | None:
    """A retention policy in hours (as ``room prune`` bounds it), or None where not given."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value) \
            or not 0 < value <= MAX_PRUNE_HOURS:
        raise RoomConfigError(path, key, f"must be a number of hours above 0 and at most "
                              f"{MAX_PRUNE_HOURS} (100 years), got {value!r}")
    return timedelta(hours=value)


def open_room_store(config: RoomConfig, *, create: bool = False,
                    signer: Signer | None = None) -> PostgresStore:
    """The room's store as ``config`` names it (RecordingError when it cannot be opened);
    ``signer``: the room's key, signing what is appended (see :mod:`.room_signing`), each
    record's head then anchored in ``config.anchor_log`` where it names one."""
    from dealer_assist.floor.pgstore import PostgresStore
    from dealer_assist.floor.room_signing import RoomAnchors

    store = PostgresStore(config.postgres_url, config.frames_dir, schema=config.postgres_schema,
                          create=create, signer=signer)
    if signer is not None and config.anchor_log is not None:
        store.appended = RoomAnchors(store, config.anchor_log)
    return store


def load_room_config(path: str | Path) -> RoomConfig:
    """Read and validate ``room.toml``; errors name the file, the key (or line) and why."""
    try:
        data = read_toml(path, MAX_CONFIG_BYTES)
    except TomlFileError as error:
        raise RoomConfigError(error.path, error.where, error.why) from None
    return parse_room_config(data, str(path), Path(path).resolve().parent)
