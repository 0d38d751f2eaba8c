"""Surveillance: the tamper-evident recorder, replay and verification, the surveillance page."""

from dealer_assist.surveillance.recorder import Recorder, RecorderStateError
from dealer_assist.surveillance.store import Record, RecordingError, RecordingStore

__all__ = ["Record", "Recorder", "RecorderStateError", "RecordingError", "RecordingStore"]
