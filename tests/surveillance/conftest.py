"""Shared recordings: built once per session (recording fsyncs every record), copied per test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.surveillance.factory import StepClock, build_recording, golden_logs


@pytest.fixture(scope="session")
def golden_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every golden round log recorded on table T1, with key and video frames."""
    directory = tmp_path_factory.mktemp("golden") / "recording"
    build_recording(directory, golden_logs(), clock=StepClock(), video_frames=True)
    return directory


@pytest.fixture
def recording(golden_master: Path, tmp_path: Path) -> Path:
    """A private copy of the golden recording that a test may alter."""
    copy = tmp_path / "recording"
    shutil.copytree(golden_master, copy)
    return copy
