"""What the vision commands accept: the option ranges they share (``dealer_assist.cli``'s
``number_in``: argparse names the option, says what it must be and exits 2, before any work
starts), and the check that a training tool runs where torch is installed."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from dealer_assist.cli import number_in, rng_seed

#: How the training environment is made (models/README.md, "Training venv").
TRAINING_INSTALL = ("pip install torch==2.14.1 torchvision==0.29.1 ultralytics onnx onnxruntime "
                    "pillow")


def existing_file(text: str) -> Path:
    """An argparse type: the path of a file that exists."""
    if not Path(text).is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text}")
    return Path(text)


SCENES = number_in(int, 1, 1_000_000)
FRAMES = number_in(int, 1, 1000)
EPOCHS = number_in(int, 1, 10_000)
SEED = rng_seed  # NumPy's legacy seed, which Ultralytics sets, stops at 2**32 - 1
LEARNING_RATE = number_in(float, 0, 1, above=True)
FRACTION = number_in(float, 0, 1, "a fraction (0.7 for 70%)", above=True)
SCALE = number_in(float, 0.25, 4)
"""A frame resize before the detector: below a quarter a card's index (10-15 px at 1.0) is
under 4 px, nothing the detector can read."""


def require_training(prog: str, *modules: str) -> None:
    """:func:`require` ``modules``, which the training environment has (a training tool run in
    the table's environment, which has no torch, is told where it runs; ONNX and ONNX Runtime,
    which both environments have, are named the same way)."""
    require(prog, modules, f"the training environment has: {TRAINING_INSTALL} "
                           "(models/README.md)")


def require(prog: str, modules: Sequence[str], has: str) -> None:
    """Exit 2 with one line, ``PROG: needs MODULE, which HAS``, naming the first of ``modules``
    that does not import; ``has`` says where it is and how to install it."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            print(f"{prog}: needs {name}, which {has}", file=sys.stderr)
            raise SystemExit(2) from None
