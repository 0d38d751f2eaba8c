"""What a table's camera runs: the pinned models, accepted where enrolled, in the runtime chosen
for this machine at start-up.

:func:`start_detector` takes the ``[vision]`` settings. Each runtime it may use (the one named,
or with ``"auto"`` every one installed) comes with its files: those ``[camera]`` names, else
the shipped files that runtime runs best (:func:`.runtime.model_files`). A candidate is refused
whose files are not pinned by SHA-256, or, for a model that is not shipped, not accepted by a
passing acceptance report or quantised with 8-bit weights on a CPU that saturates them
(:mod:`.saturation`; every shipped file has 7-bit weights). With one runtime named, a refusal
stops the table (the :class:`~.model_control.PinError` names the file and why); with
``"auto"``, the others are measured and the refusal is logged, and only when no candidate is
left does the table not start. With two candidates left, both read the same warm-up frames, as
many at once as the camera detects, and the faster is kept (:func:`.runtime.choose_runtime`);
the choice and its figures are logged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from dealer_assist.vision import model_control, runtime, saturation
from dealer_assist.vision.detector import MODELS_DIR, CardDetector

logger = logging.getLogger(__name__)

#: Warm-up frames each candidate runtime reads at start-up before the choice.
WARMUP_FRAMES = 3


@dataclass(frozen=True)
class VisionStart:
    """The detector the table runs, in which runtime, why, its two model files, and whether
    its reading of a card may stand as the card (``names_cards`` False: an enrolled deck accepted
    only through the shoe check, whose cards it may check against the shoe's, not name)."""

    detector: CardDetector
    runtime: str
    reason: str
    models: tuple[model_control.ModelFile, model_control.ModelFile]
    names_cards: bool = True

    def to_json(self) -> dict[str, Any]:
        """What each round's ``round`` line records as ``"models"`` (docs/round-log.md)."""
        detector, reader = self.models
        return {"runtime": self.runtime, "detector": detector.to_json(),
                "reader": reader.to_json()}


def warmup_frames(size: tuple[int, int], count: int = WARMUP_FRAMES) -> list[np.ndarray]:
    """``count`` frames of ``size`` (width, height) to time the runtimes on: a mottled green
    felt with rows of white cards, each marked in its corners, so that the card regions, the
    detector and the reader all have work as on a dealt table (the same frames every start)."""
    width, height = size
    rng = np.random.default_rng(33)
    card_w = max(8, min(width // 16, 90))
    card_h = int(card_w * 1.4)
    frames = []
    for n in range(count):
        noise = rng.integers(0, 25, (height, width, 3), dtype=np.uint8)
        frame = (noise + np.array([40, 110, 30], np.uint8)).astype(np.uint8)
        for row in range(2):
            for col in range(7):
                x = int((col + 0.5) * width / 7 - card_w / 2) + 3 * n
                y = int((row + 1) * height / 3 - card_h / 2)
                cv2.rectangle(frame, (x, y), (x + card_w, y + card_h), (235, 235, 235), -1)
                for cx, cy in ((x + 4, y + card_h // 5), (x + card_w - card_w // 4,
                                                           y + card_h - 4)):
                    cv2.putText(frame, "AKQJ"[(row + col + n) % 4], (cx, cy),
                                cv2.FONT_HERSHEY_SIMPLEX, card_w / 160, (20, 20, 20), 2)
        frames.append(frame)
    return frames


def start_detector(*, runtime_choice: str = runtime.AUTO, model: Path | None = None,
                   reader: Path | None = None, detector_pins: tuple[str, ...] = (),
                   reader_pins: tuple[str, ...] = (), acceptance: Path | None = None,
                   where: str = "table.toml", frame_size: tuple[int, int] = (1280, 720),
                   threads: int | None = 1, at_once: int = 1, shoe: bool = False,
                   ) -> VisionStart:
    """The table's detector (see the module's docstring). ``where`` names the config in
    messages; ``frame_size`` is the camera's, for the warm-up frames; ``at_once``: frames the
    camera detects at once, each call with ``threads`` threads (the runtimes are timed so);
    ``shoe``: the table has a shoe, so an enrolled deck may be accepted by its figures through
    the shoe check (:func:`~.model_control.check_acceptance`). Raises
    :class:`~.model_control.PinError` (not pinned, another hash, not accepted, 8-bit weights
    on a CPU that saturates them),
    :class:`~.detector.ModelError` (a file that is not a model) or
    :class:`~.runtime.RuntimeUnavailable` (the runtime named is not installed)."""
    if runtime_choice not in runtime.RUNTIME_CHOICES:
        raise ValueError(f"unknown runtime {runtime_choice!r} "
                         f"(known: {', '.join(runtime.RUNTIME_CHOICES)})")
    names = runtime.available() if runtime_choice == runtime.AUTO else [runtime_choice]
    candidates: dict[str, tuple[CardDetector, tuple[model_control.ModelFile, ...], bool]] = {}
    refusals: list[model_control.PinError] = []
    for name in names:
        shipped_detector, shipped_reader = runtime.model_files(name, MODELS_DIR)
        files = (model or shipped_detector, reader or shipped_reader)
        try:
            identified, names_cards = _accepted(files, detector_pins, reader_pins, acceptance,
                                                where, shoe)
        except model_control.PinError as refused:
            if runtime_choice != runtime.AUTO:
                raise
            logger.warning("vision: %s not used: %s", name, refused)
            refusals.append(refused)
            continue
        candidates[name] = (CardDetector(*files, runtime=name, threads=threads), identified,
                            names_cards)
    if not candidates:
        if len(refusals) == 1:
            raise refusals[0]
        raise model_control.PinError("; ".join(str(r) for r in refusals))
    choice = runtime.choose_runtime({name: detector.detect for name, (detector, _, _) in
                                     candidates.items()}, warmup_frames(frame_size),
                                    at_once=at_once)
    detector, (detector_file, reader_file), names_cards = candidates[choice.runtime]
    why = choice.reason if runtime_choice == runtime.AUTO else "named in the config"
    logger.info("vision: runtime %s (%s); detector %s version %s sha256 %s; reader %s version "
                "%s sha256 %s", choice.runtime, why, detector_file.path, detector_file.version,
                detector_file.sha256, reader_file.path, reader_file.version, reader_file.sha256)
    return VisionStart(detector, choice.runtime, why, (detector_file, reader_file), names_cards)


def _accepted(files: tuple[Path, Path], detector_pins: tuple[str, ...],
              reader_pins: tuple[str, ...], acceptance: Path | None, where: str,
              shoe: bool) -> tuple[tuple[model_control.ModelFile, model_control.ModelFile],
                                   bool]:
    """The two files identified, and whether their reading may stand as the card (not where
    an enrolled deck is accepted only through the shoe check)."""
    detector_path, reader_path = files
    for path in files:
        if not path.is_file():
            raise model_control.PinError(f"{path}: model file not found")
    detector_sha = model_control.check_pin("detector", detector_path, detector_pins,
                                           f"{where}: vision.detector_sha256")
    reader_sha = model_control.check_pin("reader", reader_path, reader_pins,
                                         f"{where}: vision.reader_sha256")
    enrolled = [(role, path) for role, path, digest in (("detector", detector_path, detector_sha),
                                                        ("reader", reader_path, reader_sha))
                if not model_control.is_shipped(digest)]
    report = None
    if enrolled:
        report_path = acceptance or model_control.acceptance_path(detector_path)
        report = model_control.check_acceptance(report_path, detector_sha, reader_sha,
                                                shoe=shoe)
        if report.source != "independent":
            logger.warning("vision: deck %s accepted on %s figures (%s), not yet on the "
                           "independent renderer's", report.deck, report.source, report_path)
        for role, path in enrolled:
            saturation.check(role, path)
    return ((model_control.identify("detector", detector_path, detector_sha, report),
             model_control.identify("reader", reader_path, reader_sha, report)),
            report is None or report.check == "naming")
