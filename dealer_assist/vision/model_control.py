"""Which model files a table may run: pinned by SHA-256, named by version, and for an enrolled
deck, accepted by a report.

- ``models/manifest.json`` lists every shipped model file with its version and SHA-256 (a test
  keeps it true to the files).
- A table's ``[vision] detector_sha256`` / ``reader_sha256`` pin the files it may run; a file
  whose hash is not pinned is refused (:class:`PinError`, naming the file and both hashes).
- A model that is not shipped (an enrolled deck's) runs only beside an **acceptance report**
  (:class:`AcceptanceReport`) that names both files by hash and whose figures reach the goal.
- :func:`identify` gives what a round records of each model: file, version and SHA-256.

Standard library only: the table's config reads its pins with :func:`parse_pins`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Where the shipped models, their training settings and torch weights live.
MODELS_DIR = Path(__file__).resolve().parents[2] / "models"
MANIFEST = MODELS_DIR / "manifest.json"
ACCEPTANCE_FORMAT = 1
#: An enrolled deck's goal (issue 33): precision and recall per card of at least this.
ENROLLED_GOAL = 0.995
#: Where the figures of a report come from: the training generator's own check scenes of the
#: deck (what ``enrol`` scores now; not independent of what it trained on), or scenes from the
#: independent renderer.
SOURCES = ("enrol-check", "independent")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_CHUNK = 1 << 20


class PinError(ValueError):
    """A model file the table may not run: not pinned, its hash differs from the pin, or no
    acceptance report accepts it. The message names the file and the hashes."""


class AcceptanceError(PinError):
    """An acceptance report that is missing, unreadable, for other files, or short of the
    goal; the message names the report and why."""


def sha256_of(path: Path) -> str:
    """The file's SHA-256, lowercase hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def parse_pins(value: Any) -> tuple[str, ...]:
    """A pin as ``table.toml`` gives it (one SHA-256 or a list of them, hex) as lowercase
    hashes; ValueError saying what is wrong."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise ValueError("must be a SHA-256 (64 hex digits) or a list of them")
    pins = []
    for item in items:
        if not isinstance(item, str) or not _HEX64.fullmatch(item.strip().lower()):
            raise ValueError(f"{item!r} is not a SHA-256 (64 hex digits)")
        pins.append(item.strip().lower())
    return tuple(pins)


def shipped() -> dict[str, dict[str, str]]:
    """The manifest: shipped file name -> ``{"version", "sha256"}`` (empty if it is missing)."""
    try:
        data = json.loads(MANIFEST.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files", {}) if isinstance(data, dict) else {}
    return {name: entry for name, entry in files.items()
            if isinstance(entry, dict) and isinstance(entry.get("sha256"), str)}


@dataclass(frozen=True)
class ModelFile:
    """One model file as a round records it."""

    role: str  # "detector" or "reader"
    path: Path
    version: str
    sha256: str

    def to_json(self) -> dict[str, str]:
        return {"file": self.path.name, "version": self.version, "sha256": self.sha256}


def identify(role: str, path: Path, digest: str | None = None,
             report: AcceptanceReport | None = None) -> ModelFile:
    """``path`` with its version: the manifest's for a shipped file (by hash), ``enrolled
    <deck>`` for one an acceptance report accepts, else ``unlisted``."""
    digest = digest or sha256_of(path)
    version = "unlisted"
    for entry in shipped().values():
        if entry["sha256"] == digest:
            version = str(entry.get("version", "unlisted"))
            break
    else:
        if report is not None and digest in (report.detector_sha256, report.reader_sha256):
            version = f"enrolled {report.deck}"
    return ModelFile(role, path, version, digest)


def check_pin(role: str, path: Path, pins: Sequence[str], where: str) -> str:
    """``path``'s SHA-256 if it is among ``pins``; else :class:`PinError` naming the file, its
    hash, the pins and ``where`` they are set (``"table.toml: vision.detector_sha256"``)."""
    digest = sha256_of(path)
    if not pins:
        raise PinError(f"{path}: the {role} is not pinned: {where} is not set; a table runs only "
                       f"the models its config pins (this file's SHA-256 is {digest})")
    if digest not in pins:
        raise PinError(f"{path}: the {role}'s SHA-256 is {digest}, not the pinned "
                       f"{' or '.join(pins)} ({where}); a table runs only the models its config "
                       "pins")
    return digest


@dataclass(frozen=True)
class AcceptanceReport:
    """An enrolled deck's acceptance: its two model files by hash, the figures measured on
    scenes of the deck, their source (:data:`SOURCES`) and the goal they are held against."""

    deck: str
    detector_sha256: str
    reader_sha256: str
    precision: float
    recall: float
    cards: int
    scenes: int
    source: str
    command: str
    goal: float = ENROLLED_GOAL

    @property
    def passed(self) -> bool:
        return self.precision >= self.goal and self.recall >= self.goal

    def to_json(self) -> dict[str, Any]:
        return {"format": ACCEPTANCE_FORMAT, "deck": self.deck,
                "detector_sha256": self.detector_sha256, "reader_sha256": self.reader_sha256,
                "figures": {"precision": self.precision, "recall": self.recall,
                            "cards": self.cards, "scenes": self.scenes},
                "source": self.source, "command": self.command,
                "goal": {"precision": self.goal, "recall": self.goal},
                "passed": self.passed}

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> AcceptanceReport:
        """The report at ``path``; :class:`AcceptanceError` naming it and what is wrong."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise AcceptanceError(f"{path}: no acceptance report there") from None
        except (OSError, ValueError) as error:
            raise AcceptanceError(f"{path}: not a readable acceptance report ({error})") from None
        try:
            if data["format"] != ACCEPTANCE_FORMAT:
                raise ValueError(f"format {data['format']!r}, this table reads "
                                 f"{ACCEPTANCE_FORMAT}")
            figures, goal = data["figures"], data["goal"]
            report = cls(
                deck=str(data["deck"]),
                detector_sha256=parse_pins(data["detector_sha256"])[0],
                reader_sha256=parse_pins(data["reader_sha256"])[0],
                precision=_fraction(figures["precision"], "figures.precision"),
                recall=_fraction(figures["recall"], "figures.recall"),
                cards=_count(figures["cards"], "figures.cards"),
                scenes=_count(figures["scenes"], "figures.scenes"),
                source=str(data["source"]), command=str(data.get("command", "")),
                goal=max(ENROLLED_GOAL, _fraction(goal["precision"], "goal.precision"),
                         _fraction(goal["recall"], "goal.recall")))
            if report.source not in SOURCES:
                raise ValueError(f"source {report.source!r} (known: {', '.join(SOURCES)})")
        except (KeyError, TypeError, ValueError) as error:
            what = f"missing {error}" if isinstance(error, KeyError) else str(error)
            raise AcceptanceError(f"{path}: not a valid acceptance report: {what}") from None
        return report


def check_acceptance(report_path: Path, detector_sha256: str, reader_sha256: str) -> (
        AcceptanceReport):
    """The report at ``report_path`` if it accepts these two files: it names both hashes and
    its figures reach the goal (at least :data:`ENROLLED_GOAL`); else :class:`AcceptanceError`
    saying which."""
    report = AcceptanceReport.load(report_path)
    for role, digest, accepted in (("detector", detector_sha256, report.detector_sha256),
                                   ("reader", reader_sha256, report.reader_sha256)):
        if digest != accepted:
            raise AcceptanceError(f"{report_path}: accepts a {role} of SHA-256 {accepted}, not "
                                  f"the {role} configured ({digest}): enrol and accept the deck "
                                  "again")
    if not report.passed:
        raise AcceptanceError(
            f"{report_path}: deck {report.deck} reads at precision {report.precision:.4f}, "
            f"recall {report.recall:.4f} on {report.cards} cards ({report.source}), short of the "
            f"goal {report.goal:g}: it may not go live")
    return report


def is_shipped(digest: str) -> bool:
    """``digest`` is the hash of a shipped model file (the manifest's)."""
    return any(entry["sha256"] == digest for entry in shipped().values())


def acceptance_path(detector: Path) -> Path:
    """Where ``enrol`` writes the acceptance report of a deck's detector
    ``cards-<name>.int8.onnx``: ``enrol-<name>.acceptance.json`` beside it."""
    stem = detector.name.removesuffix(".onnx").removesuffix(".int8")
    name = stem.removeprefix("cards-")
    return detector.with_name(f"enrol-{name}.acceptance.json")


def _fraction(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"{key} must be a fraction from 0 to 1, got {value!r}")
    return float(value)


def _count(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{key} must be a whole number from 0, got {value!r}")
    return value
