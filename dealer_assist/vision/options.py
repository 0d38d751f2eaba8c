"""What the vision commands accept: argparse types that refuse a bad value with a line saying
what it must be (argparse names the option and exits 2) before any work starts, the ranges the
commands share, and the check that a training tool runs where torch is installed."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from pathlib import Path

#: How the training environment is made (models/README.md, "Training venv").
TRAINING_INSTALL = "pip install torch==2.14.1 torchvision==0.29.1 ultralytics onnx pillow"


def integer(least: int, most: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``least`` to ``most``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if not least <= value <= most:
            raise argparse.ArgumentTypeError(f"must be from {least} to {most}, got {value}")
        return value

    return parse


def number(least: float, most: float, *, above: bool = False,
           hint: str = "") -> Callable[[str], float]:
    """An argparse type: a number from ``least`` (with ``above``, more than it) to ``most``;
    NaN and infinities are refused with the rest. ``hint`` is added to the refusal."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not ((least < value) if above else (least <= value)) or not value <= most:
            low = f"above {least:g} and at most" if above else f"from {least:g} to"
            raise argparse.ArgumentTypeError(f"must be {low} {most:g}, got {text}{hint}")
        return value

    return parse


def existing_file(text: str) -> Path:
    """An argparse type: the path of a file that exists."""
    if not Path(text).is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text}")
    return Path(text)


SCENES = integer(1, 1_000_000)
EPOCHS = integer(1, 10_000)
SEED = integer(0, 2**32 - 1)  # NumPy's legacy seed, which Ultralytics sets, stops there
LEARNING_RATE = number(0, 1, above=True)
FRACTION = number(0, 1, above=True, hint=" (a fraction: 0.7 for 70%)")
SCALE = number(0, 4, above=True)


def require_training(prog: str, *modules: str) -> None:
    """Exit 2 with one line unless ``modules`` import: a training tool run in the table's
    environment, which has no torch, is told where it runs instead of a traceback."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            print(f"{prog}: needs {name}, which only the training environment has: "
                  f"{TRAINING_INSTALL} (models/README.md)", file=sys.stderr)
            raise SystemExit(2) from None
