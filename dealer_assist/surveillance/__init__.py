"""Surveillance: the tamper-evident recorder, replay and verification, the surveillance page."""

from dealer_assist.surveillance.recorder import Recorder, RecorderStateError
from dealer_assist.surveillance.store import (
    DamagedRecordingError,
    Record,
    RecordingError,
    RecordingStore,
)

__all__ = ["DamagedRecordingError", "Record", "Recorder", "RecorderStateError", "RecordingError",
           "RecordingStore"]
