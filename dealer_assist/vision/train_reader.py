"""Train the index reader (rank + suit CNN) on crops of rendered scenes and export it to ONNX.

    python -m dealer_assist.vision.train_reader          # the shipped models/index-reader.onnx

Needs torch (the training extra), imported only inside ``main``. Crops come from the same scene
generator as the detector's data, from the training designs only (``--faces`` adds an enrolled
deck) and from 135 drawn decks shown in half the scenes (:mod:`.procedural`: installed fonts
and parametric suits, each printing its indices lighter or bolder than its fonts draw them, so
the reader learns indices rather than seventeen fonts), with the index box jittered as a
detector would place it and turned through any angle (half of those near a quarter turn:
sideways doubles). Negative crops (pips, court pictures, chips, felt, and indices
partly covered by another card, a chip or an arm, whose hidden part may be the suit) teach the
"not an index" answer.

Scenes are rendered in chunks, each seeded from ``--seed`` and its number, on every core at
once (the crops do not depend on the core count). The network trains in bfloat16 autocast
(weights stay float32): about three times faster on a CPU with AVX-512 BF16 than float32, and
some fifteen times slower on one without AVX-512 (emulated), where ``--no-bfloat16`` trains in
float32.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import cv2
import numpy as np

from dealer_assist.cli import number_in
from dealer_assist.vision import options
from dealer_assist.vision.artwork import (
    HELD_OUT_DESIGNS,
    ArtworkError,
    Design,
    installed_designs,
    load_design,
    load_designs,
)
from dealer_assist.vision.detector import MODELS_DIR
from dealer_assist.vision.procedural import (
    drawn_designs,
    fonts_under,
    installed_fonts,
    mixed_with_drawn,
)
from dealer_assist.vision.reader import CROP_SIZE, RANK_CLASSES, SUIT_CLASSES, crop_index
from dealer_assist.vision.scenes import SceneConfig, check_card_width, render_scene

NOT_INDEX = RANK_CLASSES.index("-")
CHUNK_SCENES = 200  # scenes per rendering task; each chunk has its own seed


def _jitter(rng: np.random.Generator, box: tuple[float, ...]) -> tuple[float, ...]:
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    dx, dy = rng.normal(0, 0.08) * w, rng.normal(0, 0.08) * h
    s = rng.uniform(0.85, 1.2)
    cx, cy = (x0 + x1) / 2 + dx, (y0 + y1) / 2 + dy
    return (cx - w * s / 2, cy - h * s / 2, cx + w * s / 2, cy + h * s / 2)


def _turn(rng: np.random.Generator, crop: np.ndarray) -> np.ndarray:
    centre = (CROP_SIZE / 2 - 0.5, CROP_SIZE / 2 - 0.5)
    angle = rng.uniform(0, 360) if rng.random() < 0.5 else (
        90 * rng.integers(1, 4) + rng.normal(0, 8))
    m = cv2.getRotationMatrix2D(centre, angle, 1.0)
    return cv2.warpAffine(crop, m, (CROP_SIZE, CROP_SIZE), borderMode=cv2.BORDER_REPLICATE)


def _as_detected(rng: np.random.Generator, image: np.ndarray,
                 box: tuple[float, ...]) -> np.ndarray:
    """The crop of an index box placed as a detector would place it, turned in 60% of crops."""
    crop = crop_index(image, _jitter(rng, box))
    return _turn(rng, crop) if rng.random() < 0.6 else crop


def make_crops(
    designs: list[Design], scenes: int, seed: int | np.random.SeedSequence,
    config: SceneConfig | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Render scenes (``config``: the generator's knobs, default its own); return crops
    (N, 32, 32, 3) uint8, rank ids and suit ids."""
    rng = np.random.default_rng(seed)
    crops, ranks, suits = [], [], []
    for _ in range(scenes):
        scene = render_scene(rng, designs, config)
        h, w = scene.image.shape[:2]
        sizes = []
        for lab in scene.labels:
            crops.append(_as_detected(rng, scene.image, lab.box))
            ranks.append(RANK_CLASSES.index(lab.code[0]))
            suits.append(SUIT_CLASSES.index(lab.code[1]))
            sizes.append(max(lab.box[2] - lab.box[0], lab.box[3] - lab.box[1]))
        side = float(np.median(sizes)) if sizes else 25.0
        boxes = np.array([lab.box for lab in scene.labels]).reshape(-1, 4)
        centres = (boxes[:, :2] + boxes[:, 2:]) / 2
        for lab in scene.covered:  # partly covered: the hidden part may be the suit; not read
            x0, y0, x1, y1 = lab.box
            p = np.array([(x0 + x1) / 2, (y0 + y1) / 2])
            if len(centres) and np.min(np.hypot(*(centres - p).T)) < side * 0.6:
                continue  # another card's index lies there
            crops.append(_as_detected(rng, scene.image, lab.box))
            ranks.append(NOT_INDEX)
            suits.append(-100)
        for card in scene.cards:  # negatives: inside cards but away from any index
            t = rng.uniform(0.15, 0.85, 2)
            p = card.corners[0] + t[0] * (card.corners[1] - card.corners[0]) + \
                t[1] * (card.corners[3] - card.corners[0])
            box = (p[0] - side / 3, p[1] - side / 2, p[0] + side / 3, p[1] + side / 2)
            if not (0 <= box[0] and box[2] < w and 0 <= box[1] and box[3] < h):
                continue
            if len(centres) and np.min(np.hypot(*(centres - p).T)) < side * 0.6:
                continue
            crops.append(crop_index(scene.image, box))
            ranks.append(NOT_INDEX)
            suits.append(-100)  # ignored by the suit loss
        for _ in range(3):  # felt, chips, arms
            x, y = rng.uniform(side, w - side), rng.uniform(side, h - side)
            box = (x - side / 3, y - side / 2, x + side / 3, y + side / 2)
            if len(centres) and np.min(np.hypot(*(centres - (x, y)).T)) < side:
                continue
            crops.append(crop_index(scene.image, box))
            ranks.append(NOT_INDEX)
            suits.append(-100)
    return np.stack(crops), np.array(ranks), np.array(suits)


_WORKER_DESIGNS: list[Design] = []


def _training_designs(names: list[str], faces: list[Path], drawn: int, seed: int,
                      weights: bool, upright_share: float, extra_fonts: list[Path]
                      ) -> list[Design]:
    real = load_designs(names) + [load_design(f) for f in faces] * max(1, len(names) // 2)
    return mixed_with_drawn(real, drawn_designs(drawn, seed, installed_fonts() + extra_fonts,
                                                weights=weights, upright_share=upright_share))


def _start_worker(names: list[str], faces: list[Path], drawn: int, seed: int,
                  weights: bool, upright_share: float, extra_fonts: list[Path]) -> None:
    cv2.setNumThreads(1)  # one process per core already
    _WORKER_DESIGNS[:] = _training_designs(names, faces, drawn, seed, weights, upright_share,
                                           extra_fonts)


def _render_chunk(scenes: int, seed: np.random.SeedSequence, config: SceneConfig | None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return make_crops(_WORKER_DESIGNS, scenes, seed, config)


def render_crops(names: list[str], faces: list[Path], drawn: int, scenes: int,
                 seed: int, *, weights: bool = False, upright_share: float = 0.0,
                 extra_fonts: list[Path] | None = None, config: SceneConfig | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The training crops of ``scenes`` scenes, rendered in chunks on every core; the same
    crops whatever the core count. ``weights``, ``upright_share``: see
    :func:`.procedural.drawn_designs`; ``extra_fonts``: font files the drawn decks may print
    their ranks in besides the installed ones; ``config``: the scene generator's knobs (default its
    own)."""
    chunks = [min(CHUNK_SCENES, scenes - start) for start in range(0, scenes, CHUNK_SCENES)]
    seeds = np.random.SeedSequence(seed).spawn(len(chunks))
    workers = min(len(chunks), os.cpu_count() or 1)
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn"),
                             initializer=_start_worker,
                             initargs=(names, faces, drawn, seed, weights,
                                       upright_share, extra_fonts or [])) as pool:
        parts = list(pool.map(_render_chunk, chunks, seeds, [config] * len(chunks)))
    crops, ranks, suits = (np.concatenate([part[i] for part in parts]) for i in range(3))
    return crops, ranks, suits


def recorded_run(weights: Path) -> dict[str, object] | None:
    """The ``.train.json`` saved beside a reader's weights, if any: a fine-tuned reader's record
    carries the run it started from, so its whole chain of runs can be repeated. ValueError,
    saying why, for a record that is not a JSON object."""
    record = weights.with_suffix(".train.json")
    if not record.is_file():
        return None
    try:
        text = record.read_text()
        run = json.loads(text)
    except (OSError, ValueError, RecursionError) as error:
        raise ValueError(f"not readable JSON ({error})") from None
    if not isinstance(run, dict):
        raise ValueError(f"not a run record (not a JSON object: {text.strip()[:30]})")
    return run


def parser() -> argparse.ArgumentParser:
    """The command line; its defaults are the recipe of the shipped reader."""
    p = argparse.ArgumentParser(prog="python -m dealer_assist.vision.train_reader",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--faces", type=Path, action="append", default=[])
    p.add_argument("--drawn", type=number_in(int, 0, 10_000), default=135,
                   help="drawn decks added to the real designs (default 135; half the scenes)")
    p.add_argument("--drawn-weights", action=argparse.BooleanOptionalAction, default=True,
                   help="drawn decks print their indices lighter or bolder than their fonts "
                        "(default since 0.7; --no-drawn-weights reproduces 0.6)")
    p.add_argument("--drawn-upright", type=number_in(float, 0.0, 1.0), default=0.0,
                   metavar="SHARE",
                   help="the share of drawn decks that print their bottom-right index "
                        "upright, or its rank alone upright, rather than turned over (half each "
                        "way; default 0: every deck turns it, as 0.11's reader was trained)")
    p.add_argument("--font-dir", type=Path, action="append", default=[], metavar="DIR",
                   help="a folder of TrueType/OpenType fonts the drawn decks may also print "
                        "their ranks in (repeatable; default none: the installed fonts alone)")
    p.add_argument("--bfloat16", action=argparse.BooleanOptionalAction, default=True,
                   help="train in bfloat16 autocast (default, fast on a CPU with AVX-512 BF16); "
                        "--no-bfloat16 trains in float32, far faster where bfloat16 is emulated")
    p.add_argument("--scenes", type=options.SCENES, default=12000)
    p.add_argument("--epochs", type=options.EPOCHS, default=16)
    p.add_argument("--seed", type=options.SEED, default=14)
    p.add_argument("--width", type=number_in(int, 1, 512), default=32,
                   help="channels of the first convolutions; the later ones are 2, 4 and 6 "
                        "times as many (default 32: 0.33 M parameters)")
    p.add_argument("--init", type=options.existing_file, default=None,
                   help="start from these torch weights (a reader's .pt, e.g. the shipped "
                        "models/index-reader.pt) instead of from scratch; the record of the run "
                        "that made them (the .train.json beside them) is kept in this run's")
    p.add_argument("--lr", type=options.LEARNING_RATE, default=3e-3,
                   help="peak learning rate of the one-cycle schedule (default 3e-3; "
                        "lower when fine-tuning from --init)")
    p.add_argument("--card-width", type=float, nargs=2, metavar=("LEAST", "MOST"),
                   default=SceneConfig().card_width,
                   help="cards' width in the scenes, in pixels (default %(default)s: the "
                        "scene generator's range; a narrower one aims a fine-tune at one size)")
    p.add_argument("--out", type=Path, default=MODELS_DIR / "index-reader.onnx")
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    try:
        least, most = check_card_width(*args.card_width)
    except ValueError as bad:
        p.error(f"--card-width LEAST MOST: {bad}")
    # read now: --out may be the very file whose weights --init names
    try:
        init_run = recorded_run(args.init) if args.init is not None else None
    except ValueError as error:
        p.error(f"--init {args.init}: its record {args.init.with_suffix('.train.json')} "
                f"is {error}")
    if init_run is not None and init_run.get("width", args.width) != args.width:
        p.error(f"--init {args.init} was trained with --width {init_run['width']}: give the same "
                f"--width to fine-tune it")
    try:  # the rendering processes load them: a face that does not load is named now
        for folder in args.faces:
            load_design(folder)
    except ArtworkError as error:
        p.error(str(error))
    # torch here, before the minutes of rendering, so that weights --init cannot load are
    # refused at once (the rendering processes are spawned and import none of it)
    options.require_training(p.prog, "torch")
    import torch
    from torch import nn

    torch.manual_seed(args.seed)
    torch.set_num_threads(os.cpu_count() or 1)

    def block(cin: int, cout: int) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True))

    class Reader(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            w = args.width
            self.body = nn.Sequential(
                block(3, w), block(w, w), nn.MaxPool2d(2), block(w, 2 * w), nn.MaxPool2d(2),
                block(2 * w, 4 * w), nn.MaxPool2d(2), block(4 * w, 6 * w),
                nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.1))
            self.rank = nn.Linear(6 * w, len(RANK_CLASSES))
            self.suit = nn.Linear(6 * w, len(SUIT_CLASSES))

        def forward(self, images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            features = self.body(images)
            # float() so that under autocast the softmax (and the loss's log) is float32
            return (self.rank(features).float().softmax(1),
                    self.suit(features).float().softmax(1))

    def as_input(images: torch.Tensor) -> torch.Tensor:
        """uint8 BGR NHWC crops as the network's RGB float input, channels-last in memory."""
        rgb = images.flip(3).permute(0, 3, 1, 2).float() / 255
        return rgb.contiguous(memory_format=torch.channels_last)

    model = Reader()
    if args.init is not None:
        try:
            model.load_state_dict(torch.load(args.init, weights_only=True))
        except Exception as error:  # a torch file of anything else, or no torch file at all
            reason = str(error).strip().splitlines()[0]
            p.error(f"--init {args.init}: not the weights of a --width {args.width} reader "
                    f"({reason})")
    model = model.to(memory_format=torch.channels_last)
    names = [d for d in installed_designs() if d not in HELD_OUT_DESIGNS]
    print(f"rendering {args.scenes} scenes for the reader's crops", flush=True)
    extra_fonts = fonts_under(args.font_dir)
    started = time.time()
    crops, ranks, suits = render_crops(
        names, args.faces, args.drawn, args.scenes, args.seed, weights=args.drawn_weights,
        upright_share=args.drawn_upright, extra_fonts=extra_fonts,
        config=SceneConfig(card_width=(least, most)))
    render_s = time.time() - started
    print(f"{len(crops)} crops ({int((ranks == NOT_INDEX).sum())} negatives) "
          f"in {render_s:.0f} s", flush=True)
    x = torch.from_numpy(crops)  # uint8 BGR, NHWC; made float a batch at a time
    yr, ys = torch.from_numpy(ranks).long(), torch.from_numpy(suits).long()
    optimiser = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    steps = args.epochs * ((len(x) + 255) // 256)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, args.lr, total_steps=steps)
    nll = nn.NLLLoss(ignore_index=-100)
    started = time.time()
    for epoch in range(args.epochs):
        model.train()
        order = torch.randperm(len(x))
        total, right = 0.0, 0
        for i in range(0, len(x), 256):
            idx = order[i : i + 256]
            batch = as_input(x[idx])
            # colour and brightness jitter so lamps and white balance do not matter
            batch = (batch * torch.empty(len(idx), 3, 1, 1).uniform_(0.8, 1.2)
                     + torch.empty(len(idx), 1, 1, 1).uniform_(-0.1, 0.1)).clamp(0, 1)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.bfloat16):
                p_rank, p_suit = model(batch)
            loss = nll(p_rank.clamp_min(1e-7).log(), yr[idx]) + \
                nll(p_suit.clamp_min(1e-7).log(), ys[idx])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item() * len(idx)
            right += int((p_rank.argmax(1) == yr[idx]).sum())
        print(f"epoch {epoch + 1}/{args.epochs} loss {total / len(x):.4f} "
              f"rank accuracy {right / len(x):.4f} ({time.time() - started:.0f} s)", flush=True)
    train_s = time.time() - started
    model.eval()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    model = model.to(memory_format=torch.contiguous_format)
    # the weights as trained (batch norms unfolded), for fine-tuning this reader later
    torch.save(model.state_dict(), args.out.with_suffix(".pt"))
    torch.onnx.export(model, (as_input(x[:1]).contiguous(),), str(args.out), input_names=["crops"],
                      output_names=["rank", "suit"], dynamic_axes={"crops": {0: "n"}},
                      opset_version=17, dynamo=False)
    summary = {"designs": names, "drawn": args.drawn, "drawn_weights": args.drawn_weights,
               "drawn_upright": args.drawn_upright, "bfloat16": args.bfloat16,
               "font_files": [f.name for f in extra_fonts],
               "enrolled": [str(f) for f in args.faces],
               "scenes": args.scenes, "card_width": list(args.card_width), "crops": len(x),
               "epochs": args.epochs, "seed": args.seed,
               "width": args.width, "init": str(args.init) if args.init else None, "lr": args.lr,
               "render_seconds": round(render_s), "train_seconds": round(train_s),
               "cpu_count": os.cpu_count(), "init_run": init_run}
    args.out.with_suffix(".train.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
