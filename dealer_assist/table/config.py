"""``table.toml``: one table's devices, rules, recording and screen, validated with messages that
name the key.

```toml
table_id = "T1"

[rules]                      # a preset and any house-option overrides
preset = "h17-ddd-6"
max_bet = "500"

[shoe]                       # omit for a hand-held game
url = "/dev/serial/by-id/usb-ShoeCo_Shoe_1234-if00"
protocol = "dealer-assist"   # or "ascii" (a plain [Game]<Card:4S> shoe; then decks is required)

[camera]                     # omit when no camera is fitted
source = 0                   # device index, stream URL or video file
calibration = "calibration/table.yaml"   # from `dealer-assist calibrate table` (holds the layout)
model = "models/cards-ourdeck.int8.onnx"          # optional: the card detector and the index
reader = "models/index-reader-ourdeck.int8.onnx"  # reader (default: the shipped models)
# wait_s = 1.5               # how long a shoe card waits to be seen landing, then is placed
#                            # by the rules or asked about; an older sighting decides nothing
# max_lag_s = 0.5            # past this lag the camera is behind: the dealer is asked more

[vision]                     # with a camera: which models it may run, and on what
runtime = "auto"             # "auto" (both measured at start, the faster kept), "openvino"
                             # or "onnxruntime"
detector_sha256 = [          # required: the SHA-256 of each detector and reader file the
  "668df9c452e1271ae5b70c732333b1a6b1450c6387298245c8e843fb85bb7bf8",  # table may run (one, or
  "5d6ca10ab9a4f56c5bdb850043a86a338cdd11477b5d99fc3468a0573a176833",  # a list: here the shipped
]                                                                      # INT8 and float files)
reader_sha256 = [
  "dc889a12ffe1eda72f1bc37faed0789c191a3f820980c6dd4693b25a997fd058",
  "f488f78996239fda3996ff7fa0cc6e49eba8aa0d8629147d6af5c39935780d40",
]
# acceptance = "models/enrol-ourdeck.acceptance.json"  # an enrolled deck's acceptance report
                             # (default: beside its detector); shipped models need none

[recording]
dir = "recordings"           # the recording store (dir/index.sqlite, always on; replay dir
                             # --verify), the round logs exported from it (rounds/*.jsonl,
                             # void/), alarms.jsonl and the table's journal
key = "T1.key"               # the store's signing key (default TABLE_ID.key beside this file;
                             # created at first start, mode 0600; its public key in T1.pub)
anchor_log = "anchors.jsonl" # chain heads, appended at every round end (default: beside this
                             # file); both outside the recording directory
# frame_quality = 85         # JPEG quality (50-100) of the camera frames a round records

[screen]
host = "127.0.0.1"           # loopback by default: the screen is for the dealer's box only
port = 8021
# secret = "table.screen-secret"  # default: beside this file, named after it; never inside
#                                 # the recording directory (created 0600 at the first start)
# name = "table7.casino.lan"      # the name browsers open the screen at (its certificate's)
# certfile = "screen.crt"         # TLS: required (or plain_http_on_network = true) when host
# keyfile = "screen.key"          # is not a loopback address
# plain_http_on_network = false
chips = ["0.50", "1", "2.50", "5", "25", "100", "500"]  # the tray's chips: each payout is
                             # shown as these (what they cannot make, as cash); this is the default
# bet_chips = ["1", "5", "25", "100", "500"]  # the bet row's chip buttons: up to 5 of the chips
                             # (default: the 5 largest)

[floor]                      # omit for a table on its own: forward the recording to the room
url = "tls://floor.casino.lan:4222"  # the floor's NATS JetStream
credentials = "T1.creds"     # this table's NATS credentials (it may publish only to its subject)
tls_ca = "floor-ca.pem"      # the CA that signed the broker's certificate (TLS where the network
# tls_cert = "T1.crt"        # is shared); a client certificate and its key where the broker
# tls_key = "T1-tls.key"     # asks for one
alarm_after_s = 300          # the dealer's screen alarms when the room is this far behind
alarm_after_records = 2000   # (seconds, or records not yet acknowledged by the broker)

[logging]
level = "info"               # debug, info (default), warning, error or critical
file = "table.log"           # optional: appended to; else everything goes to standard error
```
"""

from __future__ import annotations

import os
import re
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dealer_assist.floor.forwarder import FloorLink
from dealer_assist.logs import level_number
from dealer_assist.rules import RuleSet
from dealer_assist.shoe.reader import check_port_url
from dealer_assist.surveillance.recorder import TABLE_NAME
from dealer_assist.surveillance.store import INDEX_NAME
from dealer_assist.table.camera_source import FRAME_QUALITIES, FRAME_QUALITY
from dealer_assist.table.chips import ChipError, ChipSet
from dealer_assist.table.pairing import CAMERA_WAIT_S, MAX_CAMERA_LAG_S
from dealer_assist.table.screen_access import SecretError, read_secret
from dealer_assist.table.screen_site import TlsFiles, exposure_problem
from dealer_assist.toml_files import TomlFileError, read_toml
from dealer_assist.vision.model_control import parse_pins
from dealer_assist.vision.runtime import AUTO, RUNTIME_CHOICES


class ConfigError(ValueError):
    """A table configuration that cannot run: names the file and the key."""

    def __init__(self, path: str, key: str, why: str):
        self.path = path
        self.key = key
        self.why = why
        super().__init__(f"{path}: {key}: {why}")


@dataclass(frozen=True, slots=True)
class ShoeConfig:
    url: str
    protocol: str = "dealer-assist"
    decks: int | None = None


@dataclass(frozen=True, slots=True)
class CameraConfig:
    source: int | str
    calibration: Path | None = None
    model: Path | None = None
    reader: Path | None = None
    wait_s: float = CAMERA_WAIT_S  #: see dealer_assist.table.pairing
    max_lag_s: float = MAX_CAMERA_LAG_S
    vision: VisionConfig | None = None  # None: no [vision] (the camera then refuses to start)


@dataclass(frozen=True, slots=True)
class VisionConfig:
    """``[vision]``: the runtime (``auto``, ``openvino``, ``onnxruntime``), the SHA-256 pins of
    the detector and reader files the camera may run, and an enrolled deck's acceptance report."""

    runtime: str = "auto"
    detector_sha256: tuple[str, ...] = ()
    reader_sha256: tuple[str, ...] = ()
    acceptance: Path | None = None


@dataclass(frozen=True, slots=True)
class TableConfig:
    """A validated table configuration."""

    path: str
    table_id: str
    rules_spec: Any
    rules: RuleSet
    shoe: ShoeConfig | None
    camera: CameraConfig | None
    recording_dir: Path
    host: str
    port: int
    log_level: str = "info"
    key: Path = Path("T1.key")  # the recording store's signing key (public key: .pub)
    anchor_log: Path = Path("anchors.jsonl")
    log_file: Path | None = None
    screen_secret: Path = Path("table.screen-secret")
    screen_name: str | None = None
    tls: TlsFiles | None = None
    plain_http_on_network: bool = False
    chips: ChipSet = field(default_factory=ChipSet.default)
    frame_quality: int = FRAME_QUALITY  # JPEG quality of the recorded camera frames
    floor: FloorLink | None = None  # forwarding to the floor's room (None: a table alone)


_TOP_KEYS = {"table_id", "rules", "shoe", "camera", "vision", "recording", "screen",
             "logging", "floor"}
_SECTION_KEYS = {
    "shoe": {"url", "protocol", "decks"},
    "camera": {"source", "calibration", "model", "reader", "wait_s", "max_lag_s"},
    "vision": {"runtime", "detector_sha256", "reader_sha256", "acceptance"},
    "recording": {"dir", "surveillance", "key", "anchor_log", "frame_quality"},
    "screen": {"host", "port", "name", "secret", "certfile", "keyfile",
               "plain_http_on_network", "chips", "bet_chips"},
    "logging": {"level", "file"},
    "floor": {"url", "credentials", "tls_ca", "tls_cert", "tls_key", "alarm_after_s",
              "alarm_after_records"},
}


#: The longest wait or lag a table accepts (seconds): a dealer waits this long at most.
MAX_WAIT_S = 10.0


def _seconds(path: str, key: str, value: object) -> float:
    """A wait in seconds: a number over 0, at most :data:`MAX_WAIT_S`."""
    if isinstance(value, bool) or not isinstance(value, int | float) or \
            not 0 < value <= MAX_WAIT_S:
        raise ConfigError(path, key, f"must be seconds over 0, at most {MAX_WAIT_S:g}, "
                          f"got {value!r}")
    return float(value)


def _vision(path: str, base: Path, raw: dict[str, Any] | None) -> VisionConfig | None:
    if raw is None:
        return None
    runtime = raw.get("runtime", AUTO)
    if runtime not in RUNTIME_CHOICES:
        raise ConfigError(path, "vision.runtime",
                          f"one of {', '.join(RUNTIME_CHOICES)}, got {runtime!r}")
    pins = {}
    for key in ("detector_sha256", "reader_sha256"):
        try:
            pins[key] = parse_pins(raw[key]) if key in raw else ()
        except ValueError as error:
            raise ConfigError(path, f"vision.{key}", str(error)) from None
    acceptance = raw.get("acceptance")
    return VisionConfig(
        runtime, pins["detector_sha256"], pins["reader_sha256"],
        None if acceptance is None else _file(path, base, "vision.acceptance", acceptance))


def _section(path: str, data: dict[str, Any], name: str) -> dict[str, Any] | None:
    raw = data.get(name)
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ConfigError(path, name, f"must be a [{name}] table, got {raw!r}")
    allowed = _SECTION_KEYS[name]
    for key in raw:
        if key not in allowed:
            raise ConfigError(
                path, f"{name}.{key}", f"unknown key (known: {', '.join(sorted(allowed))})"
            )
    return raw


def _string(path: str, key: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(path, key, f"must be a non-empty string, got {value!r}")
    return value.strip()


def _text(path: str, key: str, value: object) -> str:
    """A non-empty string without control characters (a NUL cannot be in a path or a host)."""
    text = _string(path, key, value)
    if re.search(r"[\x00-\x1f\x7f-\x9f]", text):
        raise ConfigError(path, key, f"must not hold control characters, got {text!r}")
    return text


@contextmanager
def _looking_at(path: str, key: str) -> Iterator[None]:
    """An OSError while the path ``key`` names is looked at (a name too long for the
    filesystem) is a ConfigError naming the key."""
    try:
        yield
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        raise ConfigError(path, key, f"{where}{error.strerror or error}") from None


def _can_create(path: str, key: str, folder: Path) -> None:
    """Refuse ``folder`` when it could not be created and written in: its nearest existing part
    must be a folder this user may write in. Nothing is created."""
    existing = folder
    with _looking_at(path, key):
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(path, key, f"cannot create {folder}: {existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(path, key, f"cannot create {folder}: {existing} is not writable")


def _outside(path: str, base: Path, recording_dir: Path, key: str, value: object) -> Path:
    """A file (named by ``key``) that must not lie in the recording directory: whoever can
    write the recording must not reach the key or the screen's secret, nor rewrite the
    anchors."""
    resolved = Path(_text(path, key, value))
    resolved = resolved if resolved.is_absolute() else base / resolved
    with _looking_at(path, key):
        inside = resolved.resolve().is_relative_to(recording_dir.resolve())
    if inside:
        raise ConfigError(path, key, f"{resolved} lies in the recording directory "
                          f"{recording_dir}: keep it outside, where the recording's writers "
                          "cannot reach it")
    _can_create(path, key, resolved.parent)
    return resolved


def _file(path: str, base: Path, key: str, value: object) -> Path:
    name = Path(_string(path, key, value))
    resolved = name if name.is_absolute() else base / name
    with _looking_at(path, key):
        found = resolved.is_file()
    if not found:
        raise ConfigError(path, key, f"no such file: {resolved}")
    return resolved


def parse_config(
    data: dict[str, Any], path: str = "table.toml", base: Path | None = None
) -> TableConfig:
    """Validate a decoded ``table.toml``; relative paths are taken from ``base``."""
    base = base or Path(".")
    for key in data:
        if key not in _TOP_KEYS:
            raise ConfigError(path, key, f"unknown key (known: {', '.join(sorted(_TOP_KEYS))})")
    table_id = _string(path, "table_id", data.get("table_id", "T1"))
    if not TABLE_NAME.fullmatch(table_id):
        # it names the round-log files and the surveillance store's table: no '/' or '..'
        raise ConfigError(path, "table_id",
                          f"must be 1-32 letters, digits, '-' or '_', got {table_id!r}")

    raw_rules = data.get("rules", "h17-ddd-6")
    if isinstance(raw_rules, dict) and "preset" not in raw_rules:
        raise ConfigError(path, "rules.preset", "missing (a preset such as h17-ddd-6)")
    if isinstance(raw_rules, dict):
        # Try each override alone first, so a mistake is named by its own key.
        preset = raw_rules["preset"]
        for key, value in raw_rules.items():
            spec = {"preset": preset} if key == "preset" else {"preset": preset, key: value}
            try:
                RuleSet.from_spec(spec)
            except ValueError as error:
                raise ConfigError(path, f"rules.{key}", str(error)) from None
    try:
        rules = RuleSet.from_spec(raw_rules)
    except ValueError as error:
        raise ConfigError(path, "rules", str(error)) from None

    shoe = None
    raw_shoe = _section(path, data, "shoe")
    if raw_shoe is not None:
        url = _string(path, "shoe.url", raw_shoe.get("url"))
        try:
            check_port_url(url)
        except ValueError as error:
            raise ConfigError(path, "shoe.url", f"{url!r} can never open: {error}") from None
        protocol = raw_shoe.get("protocol", "dealer-assist")
        if protocol not in ("dealer-assist", "ascii"):
            raise ConfigError(
                path, "shoe.protocol", f'must be "dealer-assist" or "ascii", got {protocol!r}'
            )
        decks = raw_shoe.get("decks")
        if decks is not None and (not isinstance(decks, int) or decks not in (2, 4, 5, 6, 8)):
            raise ConfigError(path, "shoe.decks", f"must be 2, 4, 5, 6 or 8, got {decks!r}")
        if decks is not None and decks != rules.decks:
            raise ConfigError(path, "shoe.decks", f"the shoe holds {decks} decks but the rules "
                              f"are for {rules.decks} (set rules.decks to match)")
        if protocol == "ascii" and decks is None:
            decks = rules.decks
        shoe = ShoeConfig(url, protocol, decks)

    camera = None
    raw_camera = _section(path, data, "camera")
    if raw_camera is not None:
        source = raw_camera.get("source")
        if isinstance(source, bool) or not isinstance(source, (int, str)):
            raise ConfigError(
                path, "camera.source", f"must be a device index, URL or file, got {source!r}"
            )
        if isinstance(source, int) and not 0 <= source <= 2**31 - 1:  # what OpenCV takes
            raise ConfigError(path, "camera.source",
                              f"a device index is 0 to 2147483647, got {source}")
        if "calibration" not in raw_camera:
            raise ConfigError(
                path,
                "camera.calibration",
                "required: the table calibration file (dealer-assist calibrate table) that "
                "places the camera's pixels on the table and names the card zones",
            )
        model, reader = raw_camera.get("model"), raw_camera.get("reader")
        wait_s = _seconds(path, "camera.wait_s", raw_camera.get("wait_s", CAMERA_WAIT_S))
        max_lag_s = _seconds(path, "camera.max_lag_s",
                             raw_camera.get("max_lag_s", MAX_CAMERA_LAG_S))
        if max_lag_s > wait_s:
            raise ConfigError(path, "camera.max_lag_s", f"must not be over camera.wait_s "
                              f"({wait_s} s): a sighting older than the wait decides nothing, "
                              f"got {max_lag_s}")
        camera = CameraConfig(
            source,
            _file(path, base, "camera.calibration", raw_camera["calibration"]),
            None if model is None else _file(path, base, "camera.model", model),
            None if reader is None else _file(path, base, "camera.reader", reader),
            wait_s, max_lag_s,
            _vision(path, base, _section(path, data, "vision")),
        )
    elif _section(path, data, "vision") is not None:
        raise ConfigError(path, "vision", "applies to a camera: there is no [camera]")

    recording = _section(path, data, "recording") or {}
    recording_dir = Path(_text(path, "recording.dir", recording.get("dir", "recordings")))
    surveillance = recording.get("surveillance", True)
    if surveillance is not True:  # the key once turned the store on; it is always on now
        raise ConfigError(path, "recording.surveillance", (
            f"got {surveillance!r}: the recording store is always on (rounds are recorded "
            "there as they are played and their files exported from it): remove the line"))
    if not recording_dir.is_absolute():
        recording_dir = base / recording_dir
    for sub in ("rounds", "void"):  # what the recorder creates at start
        _can_create(path, "recording.dir", recording_dir / sub)
    index = recording_dir / INDEX_NAME  # the store's database, at the top of the directory
    with _looking_at(path, "recording.dir"):
        stray = index.exists() and not index.is_file()
    if stray:
        raise ConfigError(path, "recording.dir",
                          f"{index} is not a file: the recording store cannot be opened")
    key_file = _outside(path, base, recording_dir, "recording.key",
                        recording.get("key", f"{table_id}.key"))
    anchor_log = _outside(path, base, recording_dir, "recording.anchor_log",
                          recording.get("anchor_log", "anchors.jsonl"))
    frame_quality = recording.get("frame_quality", FRAME_QUALITY)
    if not isinstance(frame_quality, int) or isinstance(frame_quality, bool) or \
            frame_quality not in FRAME_QUALITIES:
        raise ConfigError(path, "recording.frame_quality", "must be a JPEG quality from "
                          f"{FRAME_QUALITIES[0]} to {FRAME_QUALITIES[-1]}, got {frame_quality!r}")

    screen = _section(path, data, "screen") or {}
    host = _text(path, "screen.host", screen.get("host", "127.0.0.1"))
    port = screen.get("port", 8021)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ConfigError(path, "screen.port", f"must be a port number 0-65535, got {port!r}")
    screen_name = None if "name" not in screen else _text(path, "screen.name", screen["name"])
    secret = _screen_secret(path, base, screen, recording_dir)
    tls = _screen_tls(path, base, screen)
    plain = screen.get("plain_http_on_network", False)
    if not isinstance(plain, bool):
        raise ConfigError(path, "screen.plain_http_on_network",
                          f"must be true or false, got {plain!r}")
    problem = exposure_problem(host, tls is not None, plain)
    if problem is not None:
        raise ConfigError(path, "screen.host", problem)
    try:
        chips = ChipSet.parse(screen["chips"]) if "chips" in screen else ChipSet.default()
    except ChipError as error:
        raise ConfigError(path, "screen.chips", str(error)) from None
    try:
        chips = chips.offering(screen["bet_chips"]) if "bet_chips" in screen else chips
    except ChipError as error:
        raise ConfigError(path, "screen.bet_chips", str(error)) from None

    log_level, log_file = _logging(path, base, _section(path, data, "logging") or {})
    floor = _floor(path, base, _section(path, data, "floor"), recording_dir)

    if shoe is None and camera is None:
        raise ConfigError(path, "shoe/camera", "a table needs a shoe, a camera or both")
    rules_spec: Any = raw_rules
    if isinstance(raw_rules, dict) and len(raw_rules) == 1:
        rules_spec = raw_rules["preset"]
    return TableConfig(
        path, table_id, rules_spec, rules, shoe, camera, recording_dir, host, port,
        log_level=log_level, log_file=log_file, key=key_file, anchor_log=anchor_log,
        screen_secret=secret, screen_name=screen_name, tls=tls, plain_http_on_network=plain,
        chips=chips, frame_quality=frame_quality,
        floor=floor,
    )


def _floor(path: str, base: Path, section: dict[str, Any] | None,
           recording_dir: Path) -> FloorLink | None:
    """``[floor]``: the broker's URL, the table's credentials and TLS files (outside the
    recording directory, existing) and the lag alarm's bounds."""
    if section is None:
        return None
    url = _text(path, "floor.url", section.get("url"))
    if not re.fullmatch(r"(nats|tls)://[^\s/]+", url):
        raise ConfigError(path, "floor.url", f"must be nats://HOST:PORT or tls://HOST:PORT, got "
                          f"{url!r}")
    files: dict[str, Path | None] = {}
    for key in ("credentials", "tls_ca", "tls_cert", "tls_key"):
        if key not in section:
            files[key] = None
            continue
        where = f"floor.{key}"
        file = _outside(path, base, recording_dir, where, section[key])
        with _looking_at(path, where):
            found = file.is_file()
        if not found:
            raise ConfigError(path, where, f"no such file: {file}")
        files[key] = file
    if (files["tls_cert"] is None) != (files["tls_key"] is None):
        raise ConfigError(path, "floor.tls_cert", "tls_cert and tls_key go together")
    bounds: dict[str, float] = {}
    for key, default in (("alarm_after_s", 300.0), ("alarm_after_records", 2000)):
        value = section.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not \
                0 < value <= 10**7:
            raise ConfigError(path, f"floor.{key}", f"must be a number above 0, got {value!r}")
        bounds[key] = value
    link = FloorLink(url, files["credentials"], files["tls_ca"], files["tls_cert"],
                     files["tls_key"], float(bounds["alarm_after_s"]),
                     int(bounds["alarm_after_records"]))
    try:
        link.tls()
    except (ssl.SSLError, OSError) as error:
        raise ConfigError(path, "floor.tls_ca", f"cannot make a TLS context: {error}") from None
    return link


def _screen_secret(path: str, base: Path, screen: dict[str, Any], recording_dir: Path) -> Path:
    """``screen.secret``: default beside the config, named after it; outside the recording
    directory (whoever may copy a recording must not be able to drive the screen); an existing
    one must be private to this user, a missing one creatable (nothing is created)."""
    default = Path(path).with_suffix(".screen-secret").name
    secret = _outside(path, base, recording_dir, "screen.secret", screen.get("secret", default))
    with _looking_at(path, "screen.secret"):
        there = secret.exists() or secret.is_symlink()
    if there:
        try:
            read_secret(secret)
        except SecretError as error:
            raise ConfigError(path, "screen.secret", str(error)) from None
    return secret


def _screen_tls(path: str, base: Path, screen: dict[str, Any]) -> TlsFiles | None:
    """``screen.certfile`` and ``screen.keyfile``: both or neither, and loadable together."""
    given = [key for key in ("certfile", "keyfile") if key in screen]
    if not given:
        return None
    if len(given) == 1:
        other = "keyfile" if given[0] == "certfile" else "certfile"
        raise ConfigError(path, f"screen.{other}", f"required with screen.{given[0]} (TLS "
                          "needs the certificate and its private key)")
    tls = TlsFiles(_file(path, base, "screen.certfile", screen["certfile"]),
                   _file(path, base, "screen.keyfile", screen["keyfile"]))
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(
            tls.certfile, tls.keyfile)
    except (ssl.SSLError, OSError) as error:
        raise ConfigError(path, "screen.certfile", f"{tls.certfile} with {tls.keyfile} cannot "
                          f"serve TLS: {error}") from None
    return tls


def _logging(path: str, base: Path, section: dict[str, Any]) -> tuple[str, Path | None]:
    """``[logging]``: its level (default info) and its file, checked writable, nothing created."""
    level = section.get("level", "info")
    try:
        level_number(level)
    except ValueError as error:
        raise ConfigError(path, "logging.level", str(error)) from None
    if "file" not in section:
        return level.strip().lower(), None
    file = Path(_text(path, "logging.file", section["file"]))
    if not file.is_absolute():
        file = base / file
    with _looking_at(path, "logging.file"):
        folder, there = file.is_dir(), file.exists()
    if folder:
        raise ConfigError(path, "logging.file", f"{file} is a folder, not a file")
    if there:
        if not os.access(file, os.W_OK):
            raise ConfigError(path, "logging.file", f"{file} is not writable")
    else:
        _can_create(path, "logging.file", file.parent)
    return level.strip().lower(), file


def load_config(path: str | Path) -> TableConfig:
    """Read and validate ``table.toml``; errors name the file, the key (or line) and why."""
    try:
        data = read_toml(path)
    except TomlFileError as error:
        raise ConfigError(error.path, error.where, error.why) from None
    return parse_config(data, str(path), Path(path).resolve().parent)
