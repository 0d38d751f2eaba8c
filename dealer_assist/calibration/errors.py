"""Errors of the calibration concern: each names the file or image it is about and says why."""

from __future__ import annotations


class CalibrationError(ValueError):
    """Base of every calibration error; ``source`` is the file, image or input that was refused."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.reason = message


class ImageReadError(CalibrationError):
    """An image file could not be read or decoded."""


class BoardNotFoundError(CalibrationError):
    """No calibration board (chessboard or ChArUco) was found in an image."""


class BlurredImageError(CalibrationError):
    """The board was found but its edges are too soft to locate corners precisely."""


class TooFewImagesError(CalibrationError):
    """Too few usable board images to solve the lens; lists why each rejected one was refused."""


class MarkersMissingError(CalibrationError):
    """Too few of the layout's ArUco markers (or hand-given points) to place the table."""


class LayoutError(CalibrationError):
    """A layout file is malformed; the message names the key path that is wrong."""


class CalibrationFileError(CalibrationError):
    """A stored camera or table calibration file is malformed or of the wrong kind."""
