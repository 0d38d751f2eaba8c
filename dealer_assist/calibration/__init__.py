"""Camera calibration: lens, table plane, layouts and zones, visual check, drift, focus.

The names below are loaded on first use, so ``dealer_assist.calibration.layout`` can be imported
without OpenCV.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "TableCalibration": "table",
    "Location": "table",
    "fit_table": "table",
    "detect_markers": "table",
    "DriftMonitor": "drift",
    "DriftReport": "drift",
    "check_drift": "drift",
    "FocusMonitor": "focus",
    "FocusReport": "focus",
    "check_focus": "focus",
    "CameraModel": "lens",
    "calibrate_lens": "lens",
    "Layout": "layout",
    "Zone": "layout",
    "CalibrationError": "errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
