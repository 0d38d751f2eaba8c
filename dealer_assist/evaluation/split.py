"""The design split: which card designs training may use and which only the evaluation shows.

``models/design_split.json`` lists publishers (or styles), each with its designs, under
``training`` and ``held_out``. A publisher is held out whole: a design of a publisher that is
trained on is never an evaluation design. :func:`load_split` checks the file; :meth:`DesignSplit.
check_held_out` refuses a design the evaluation must not use.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from dealer_assist.evaluation.artwork import evaluation_art_dir
from dealer_assist.vision.artwork import art_dir

#: The committed split (beside the models it governs).
SPLIT_FILE = Path(__file__).resolve().parents[2] / "models" / "design_split.json"


class DesignSplitError(ValueError):
    """A design the split forbids here, or a split file that contradicts itself."""


@dataclass(frozen=True)
class DesignSplit:
    """``training`` and ``held_out``: design -> its publisher."""

    training: dict[str, str]
    held_out: dict[str, str]

    def check_held_out(self, design: str) -> None:
        """Raise :class:`DesignSplitError` unless ``design`` is a held-out design."""
        if design in self.training:
            raise DesignSplitError(
                f"design {design!r} is in the training list ({self.training[design]}): the "
                "independent evaluation shows held-out designs only")
        if design not in self.held_out:
            raise DesignSplitError(
                f"design {design!r} is not in the design split's held-out list (held out: "
                f"{', '.join(sorted(self.held_out))})")

    def folder(self, design: str) -> Path:
        """Where the held-out ``design``'s faces are installed: the evaluation's artwork, or
        for a held-out design of the training artwork's sources, that folder."""
        self.check_held_out(design)
        own = evaluation_art_dir() / "designs" / design
        return own if own.is_dir() else art_dir() / design


def load_split(path: Path = SPLIT_FILE) -> DesignSplit:
    """Read and check the split file: every design listed once, no publisher on both sides."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DesignSplitError(f"{path}: cannot read the design split: {error}") from None
    sides: dict[str, dict[str, str]] = {"training": {}, "held_out": {}}
    seen: dict[str, str] = {}
    for side, designs in sides.items():
        groups = data.get(side) if isinstance(data, dict) else None
        if not isinstance(groups, list) or not groups:
            raise DesignSplitError(f"{path}: {side!r} must be a non-empty list of publishers")
        for group in groups:
            publisher = group.get("publisher") if isinstance(group, dict) else None
            names = group.get("designs") if isinstance(group, dict) else None
            if not isinstance(publisher, str) or not isinstance(names, list) or not names:
                raise DesignSplitError(
                    f"{path}: each {side} entry needs a publisher and a non-empty designs list")
            for name in names:
                if not isinstance(name, str) or not name:
                    raise DesignSplitError(f"{path}: a design name must be text, got {name!r}")
                if name in seen:
                    raise DesignSplitError(
                        f"{path}: design {name!r} is listed twice ({seen[name]} and {side})")
                seen[name] = side
                designs[name] = publisher
    both = set(sides["training"].values()) & set(sides["held_out"].values())
    if both:
        raise DesignSplitError(f"{path}: publishers on both sides: {', '.join(sorted(both))}")
    return DesignSplit(sides["training"], sides["held_out"])
