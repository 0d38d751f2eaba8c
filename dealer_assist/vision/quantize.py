"""Optional INT8 (static, QDQ) quantisation of the ONNX detector for faster CPU inference.

    python -m dealer_assist.vision.quantize models/cards.onnx models/cards-int8.onnx

Calibrates activations on rendered 1280x720 frames of the training designs (never the held-out
ones) and quantises convolutions only, so the box/score head stays in float. Needs ``onnx``
(the training extra); the quantised model then runs on plain ONNX Runtime like the float one.
Check its accuracy with ``python -m dealer_assist.vision.evaluate --model ...`` before use.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from dealer_assist.vision.artwork import HELD_OUT_DESIGNS, installed_designs, load_designs
from dealer_assist.vision.scenes import render_scene


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dealer_assist.vision.quantize",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--frames", type=int, default=24, help="calibration frames")
    parser.add_argument("--seed", type=int, default=77)
    args = parser.parse_args(argv)
    import cv2
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    designs = load_designs([d for d in installed_designs() if d not in HELD_OUT_DESIGNS])
    rng = np.random.default_rng(args.seed)
    blobs = []
    for _ in range(args.frames):
        frame = render_scene(rng, designs).image
        padded = cv2.copyMakeBorder(frame, 0, 736 - frame.shape[0], 0, 0, cv2.BORDER_CONSTANT,
                                    value=(114, 114, 114))
        blobs.append(cv2.dnn.blobFromImage(padded, 1 / 255.0, swapRB=True))

    class Frames(CalibrationDataReader):
        def __init__(self) -> None:
            self._items = iter(blobs)

        def get_next(self) -> dict[str, np.ndarray] | None:
            blob = next(self._items, None)
            return None if blob is None else {"images": blob}

    quantize_static(
        str(args.model), str(args.out), Frames(), quant_format=QuantFormat.QDQ,
        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, per_channel=True,
        op_types_to_quantize=["Conv"], calibrate_method=CalibrationMethod.MinMax,
    )
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
