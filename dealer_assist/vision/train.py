"""Train the corner-index detector with Ultralytics and export it to ONNX.

    python -m dealer_assist.vision.train            # the shipped model (see models/README.md)
    python -m dealer_assist.vision.train --faces DECK_DIR --init models/cards.pt   # enrol a deck

Needs the training extra (torch, ultralytics, onnx); torch is imported only inside ``main`` so
the table box never needs it. No weights are downloaded: the network starts from
``yolo11n.yaml`` (or from ``--init``, a checkpoint this command wrote before).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from dealer_assist.cli import number_in
from dealer_assist.vision import options
from dealer_assist.vision.artwork import (
    HELD_OUT_DESIGNS,
    ArtworkError,
    art_dir,
    installed_designs,
    load_design,
    load_designs,
)
from dealer_assist.vision.dataset import write_data_yaml, write_dataset, written_here
from dealer_assist.vision.detector import MODELS_DIR
from dealer_assist.vision.procedural import drawn_designs, mixed_with_drawn
from dealer_assist.vision.scenes import FRAME_SIZE

#: The network's activation: Ultralytics' model-file spelling of each (``None``: YOLO11's own
#: SiLU, as shipped). ReLU folds into the quantised convolutions; SiLU is a sigmoid and a product
#: of its own in INT8, a quarter of the detector's time (models/README.md).
ACTIVATIONS = {"silu": None, "relu": "nn.ReLU()"}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m dealer_assist.vision.train", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work", type=Path, default=Path.home() / ".cache/dealer-assist/train",
                   help="folder for the rendered data set (WORK/data, replaced by each run; "
                   "a WORK/data this command did not write is refused) and Ultralytics' run")
    p.add_argument("--designs", nargs="*", default=None,
                   help="installed designs to train on (default: all but the held-out ones)")
    p.add_argument("--faces", type=Path, action="append", default=[],
                   help="a casino's own deck: a folder of 52 faces named by code (7S.png, TC.jpg)")
    p.add_argument("--init", type=options.existing_file, default=None,
                   help="fine-tune from this checkpoint (.pt) instead of starting from scratch")
    p.add_argument("--scenes", type=options.SCENES, default=900, help="rendered 1280x720 scenes")
    p.add_argument("--crops", type=number_in(int, 1, 100), default=2,
                   help="training crops per scene")
    p.add_argument("--drawn", type=number_in(int, 0, 10_000), default=45,
                   help="drawn decks (installed fonts, parametric suits) added to the designs")
    p.add_argument("--turns", type=number_in(float, 0, 1), default=0.3,
                   help="share of crops turned a quarter turn (sideways indices)")
    p.add_argument("--imgsz", type=number_in(int, 32, FRAME_SIZE[1]), default=320,
                   help="crop size = training input size")
    p.add_argument("--epochs", type=options.EPOCHS, default=15)
    p.add_argument("--hours", type=number_in(float, 0, 1000, above=True), default=None,
                   help="train for this long instead (Ultralytics fits the epochs to the time)")
    p.add_argument("--batch", type=number_in(int, 1, 4096), default=16)
    p.add_argument("--lr", type=options.LEARNING_RATE, default=0.002,
                   help="AdamW learning rate (Ultralytics' automatic choice for 52 classes, "
                   "0.00018, is far too small to learn from scratch in a few epochs)")
    p.add_argument("--seed", type=options.SEED, default=5)
    p.add_argument("--activation", choices=sorted(ACTIVATIONS), default="silu",
                   help="the network's activation (default silu, YOLO11's own; relu is faster "
                   "in INT8, and from --init a SiLU checkpoint it has to be learnt again)")
    p.add_argument("--out", type=Path, default=MODELS_DIR / "cards.onnx",
                   help="where to write the ONNX model (the .pt checkpoint goes beside it)")
    return p


def network(yolo: Any, args: argparse.Namespace) -> Any:
    """The Ultralytics model to train, with the activation asked for: from ``--init`` the
    checkpoint, whose model file the trainer builds its network from; from scratch YOLO11n's
    model file, written to ``WORK/yolo11n-<activation>.yaml`` where the activation is not its
    own (the trainer reads a model file from scratch, not the loaded model)."""
    activation = ACTIVATIONS[args.activation]
    if args.init:
        model = yolo(str(args.init))
        if activation:
            model.model.yaml["activation"] = activation
        else:
            model.model.yaml.pop("activation", None)
        return model
    if not activation:
        return yolo("yolo11n.yaml")
    import yaml
    from ultralytics.nn.tasks import yaml_model_load

    spec = {**yaml_model_load("yolo11n.yaml"), "activation": activation}
    path = args.work / f"yolo11n-{args.activation}.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return yolo(str(path))


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    data = args.work / "data"
    if (data.exists() or data.is_symlink()) and not written_here(data):
        parser.error(f"--work {args.work}: {data} is not a data set this command wrote (no "
                     "data.yaml of its own in it), and each run replaces it: move it away or "
                     "give another --work")
    options.require_training(parser.prog, "torch", "ultralytics", "onnx")
    os.environ.setdefault("YOLO_OFFLINE", "1")
    import torch
    from ultralytics import YOLO

    torch.set_num_threads(os.cpu_count() or 1)
    names = args.designs if args.designs is not None else [
        d for d in installed_designs() if d not in HELD_OUT_DESIGNS]
    try:
        designs = load_designs(names) if names else []
        enrolled = [load_design(folder) for folder in args.faces]
        # half the scenes from drawn decks: indices in fonts no real design has
        drawn = drawn_designs(args.drawn, args.seed)
    except (ArtworkError, FileNotFoundError) as error:
        parser.error(str(error))
    # an enrolled deck is the one the table deals: weight it over the generic designs
    pool = designs + enrolled * max(1, len(designs) // 2)
    if not pool:
        parser.error(f"no designs: install artwork into {art_dir()} or pass --faces")
    pool = mixed_with_drawn(pool, drawn)
    if data.exists():
        shutil.rmtree(data)
    data.mkdir(parents=True)
    data_yaml = write_data_yaml(data)  # first, so that an interrupted run's data is known too
    print(f"rendering {args.scenes} training scenes ({args.crops} crops each) and "
          f"{max(10, args.scenes // 20)} validation scenes", flush=True)
    started = time.time()
    n_train = write_dataset(data, pool, args.scenes, args.crops, args.imgsz, args.seed, "train",
                            turns=args.turns)
    n_val = write_dataset(data, pool, max(10, args.scenes // 20), 1, args.imgsz, args.seed + 1,
                          "val")
    render_s = time.time() - started
    print(f"rendered {args.scenes} scenes: {n_train} train labels, {n_val} val labels "
          f"in {render_s:.0f} s", flush=True)
    model = network(YOLO, args)
    started = time.time()
    model.train(
        data=str(data_yaml), epochs=args.epochs, imgsz=args.imgsz, batch=args.batch,
        workers=1, device="cpu", seed=args.seed, deterministic=True, plots=False, val=False,
        project=str(args.work), name="run", exist_ok=True, amp=False, cache=True,
        fliplr=0.0, degrees=0.0, scale=0.3, translate=0.1, mosaic=1.0, close_mosaic=3,
        hsv_h=0.02, hsv_s=0.5, hsv_v=0.4, patience=0, verbose=False,
        optimizer="AdamW", lr0=args.lr, lrf=0.05, warmup_epochs=1.0, time=args.hours,
        single_cls=True,  # where an index is; which card it shows is the reader's job
    )
    train_s = time.time() - started
    best = args.work / "run" / "weights" / "last.pt"
    if model.trainer is None:  # Ultralytics types it optional; train() has just set it
        raise RuntimeError("Ultralytics finished training without a trainer to read epochs from")
    trained_epochs = model.trainer.epoch + 1
    exported = Path(YOLO(str(best)).export(format="onnx", dynamic=True, simplify=False,
                                           imgsz=args.imgsz))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(exported, args.out)
    shutil.copyfile(best, args.out.with_suffix(".pt"))
    summary = {
        "designs": names, "enrolled": [str(f) for f in args.faces], "held_out": HELD_OUT_DESIGNS,
        "drawn": args.drawn, "scenes": args.scenes, "crops": args.crops, "turns": args.turns,
        "imgsz": args.imgsz, "hours": args.hours, "single_class": True,
        "epochs": args.epochs, "epochs_run": trained_epochs,
        "batch": args.batch, "lr": args.lr, "seed": args.seed, "activation": args.activation,
        "init": str(args.init) if args.init else None,
        "train_labels": n_train, "render_seconds": round(render_s),
        "train_seconds": round(train_s), "cpu_count": os.cpu_count(),
    }
    args.out.with_suffix(".train.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
