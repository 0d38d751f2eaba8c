"""INT8 quantisation of the two ONNX models, which is what the table runs in ONNX Runtime.

    python -m dealer_assist.vision.quantize      # models/cards.int8.onnx, index-reader.int8.onnx
    python -m dealer_assist.vision.quantize --detector X.onnx --reader Y.onnx

Static QDQ quantisation with ONNX Runtime's tools: weights per channel in 7 bits (-64..64),
activations calibrated (min/max) on rendered 1280x720 frames of the trained designs (never the
held-out ones) and on the indices the float detector finds in them. Seven bits because a CPU
without VNNI (AVX2 only) adds each pair of uint8 x int8 products into 16 bits: full 8-bit weights
overflow there (2 x 255 x 127 > 32 767) and the models miss cards they read on a VNNI CPU; at
7 bits both CPUs compute the same. The detector is quantised throughout except its decoding tail
(the last convolution of each output branch and the box/score arithmetic after them: quantised,
that arithmetic found no index at all), which stays in float. The reader's convolutions are
quantised, its two classifier layers stay float. Each output is written beside its source as
``<stem>.int8.onnx``. Needs ``onnx`` and ``onnxruntime`` (the table's or the training extra).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from dealer_assist.cli import number_in
from dealer_assist.vision import options
from dealer_assist.vision.artwork import (
    HELD_OUT_DESIGNS,
    ArtworkError,
    installed_designs,
    load_design,
    load_designs,
)
from dealer_assist.vision.detector import MODELS_DIR, CardDetector, ModelError
from dealer_assist.vision.reader import crop_index, crops_to_blob, reading_views
from dealer_assist.vision.scenes import render_scene


def quantized_path(model: Path) -> Path:
    """Where the INT8 version of ``model`` is written: ``cards.onnx`` -> ``cards.int8.onnx``."""
    return model.with_name(f"{model.stem}.int8.onnx")


def calibration_inputs(detector: Path, reader: Path, frames: int, seed: int,
                       faces: Path | None = None) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Detector blobs (whole frames padded to the stride) and reader blobs (the indices the
    float detector finds in those frames, in the views they are read in). ``faces``: an
    enrolled deck, shown in half the frames."""
    float_detector = CardDetector(detector, reader)
    designs = load_designs([d for d in installed_designs() if d not in HELD_OUT_DESIGNS])
    if faces is not None:
        designs += [load_design(faces)] * max(1, len(designs))
    if not designs:
        raise SystemExit("quantize: no card artwork installed (scripts/install-card-art.sh)")
    rng = np.random.default_rng(seed)
    frame_blobs, crop_blobs = [], []
    for _ in range(frames):
        frame = render_scene(rng, designs).image
        frame_blobs.append(float_detector._letterbox(frame)[0])  # as the detector pads it
        crops = [crop_index(frame, tuple(float(v) for v in box))
                 for box in float_detector.find_indices(frame)]
        if crops:
            crop_blobs.append(crops_to_blob(reading_views(crops)))
    return frame_blobs, crop_blobs


def detector_tail(model: Path) -> list[str]:
    """The detector's nodes left in float: in its decoding head (YOLO's last module), all but
    the box and class branches, and the last convolution of each branch."""
    import onnx

    graph = onnx.load(str(model)).graph
    head = max(int(n.name.split("/")[1].split(".")[1]) for n in graph.node
               if n.name.startswith("/model."))
    prefix = f"/model.{head}/"
    return [n.name for n in graph.node if n.name.startswith(prefix) and (
        not ("/cv2." in n.name or "/cv3." in n.name)
        or (n.op_type == "Conv" and n.name.endswith(".2/Conv")))]


def quantize(model: Path, out: Path, blobs: list[np.ndarray], *,
             op_types: list[str] | None, exclude: list[str]) -> None:
    """Statically quantise ``model`` to ``out`` with activations calibrated on ``blobs``."""
    import onnxruntime as ort
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    input_name = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"]) \
        .get_inputs()[0].name

    class Blobs(CalibrationDataReader):
        def __init__(self) -> None:
            self._items = iter(blobs)

        def get_next(self) -> dict[str, np.ndarray] | None:
            blob = next(self._items, None)
            return None if blob is None else {input_name: blob}

    quantize_static(str(model), str(out), Blobs(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    per_channel=True, reduce_range=True, op_types_to_quantize=op_types,
                    nodes_to_exclude=exclude,
                    calibrate_method=CalibrationMethod.MinMax)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dealer_assist.vision.quantize",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--detector", type=options.existing_file,
                        default=MODELS_DIR / "cards.onnx")
    parser.add_argument("--reader", type=options.existing_file,
                        default=MODELS_DIR / "index-reader.onnx")
    parser.add_argument("--frames", type=number_in(int, 1, 10_000), default=48,
                        help="calibration frames")
    parser.add_argument("--seed", type=options.SEED, default=77)
    parser.add_argument("--faces", type=Path, default=None,
                        help="an enrolled deck's faces, shown in half the calibration frames")
    args = parser.parse_args(argv)
    options.require(parser.prog, ("onnx", "onnxruntime"),
                    "the table's and the training environment have: pip install onnx onnxruntime")
    try:  # a model or deck that cannot be used is named before the frames are rendered
        frame_blobs, crop_blobs = calibration_inputs(args.detector, args.reader, args.frames,
                                                     args.seed, args.faces)
    except (ArtworkError, ModelError) as error:
        parser.error(str(error))
    if not crop_blobs:
        parser.error(f"the detector found no index in {args.frames} frames: nothing to "
                     "calibrate the reader on (give more --frames)")
    quantize(args.detector, quantized_path(args.detector), frame_blobs,
             op_types=None, exclude=detector_tail(args.detector))
    quantize(args.reader, quantized_path(args.reader), crop_blobs, op_types=["Conv"], exclude=[])
    for path in (quantized_path(args.detector), quantized_path(args.reader)):
        print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
