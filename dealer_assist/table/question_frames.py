"""The camera's view of each question the table asks the dealer, kept with the round's record.

When the screen first shows a question, the camera's latest frame is taken and handed to the
recording with the round and the question's text; the surveillance store writes it as a key frame
of the round, tied to the question's event, when it records the round. Frames are not journaled:
a table killed before its round ends resumes the round without them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from dealer_assist.table.camera_source import Snapshot

log = logging.getLogger(__name__)

#: Hands on a question's frame: the round's id, the question's text, the frame.
KeepFrame = Callable[[str, str, Snapshot], None]


@runtime_checkable
class Snapshots(Protocol):
    """A camera that can give its latest frame (None: none yet)."""

    def snapshot(self) -> Snapshot | None: ...


class QuestionFrames:
    """A view listener (``TableRunner.subscribe``): the camera's latest frame for each new
    question, handed to ``keep``."""

    def __init__(self, camera: Snapshots, keep: KeepFrame):
        self.camera = camera
        self.keep = keep
        self._last: int | None = None

    def __call__(self, view: Mapping[str, Any]) -> None:
        question = view.get("question")
        if not question or question["id"] == self._last or question["round"] is None:
            return
        self._last = question["id"]
        snapshot = self.camera.snapshot()
        if snapshot is None:
            log.info("question %d (%s): the camera has no frame to keep with it",
                     question["id"], question["text"])
            return
        self.keep(question["round"], question["text"], snapshot)
