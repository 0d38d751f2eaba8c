"""Writing rendered scenes as an Ultralytics (YOLO format) data set of frame-scale crops.

The detector runs on frames at their own pixel scale, so training images are crops of rendered
1280x720 frames (not shrunken frames): a card keeps its 58-95 px width and its index its
10-15 px rank height. Each crop is centred near a random card so most crops are full of indices.
Some crops are turned a quarter turn (labels turned with them, exactly), because a doubled card
lies sideways and the table's fans are not all upright.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from dealer_assist.vision.artwork import CARD_CODES, Design
from dealer_assist.vision.scenes import IndexLabel, Scene, SceneConfig, render_scene

#: A label cut by the crop's edge is kept only if this much of its box stays inside.
KEEP_INSIDE = 0.85


def crop_labels(
    labels: tuple[IndexLabel, ...], x0: int, y0: int, size: int
) -> list[tuple[int, float, float, float, float]]:
    """Labels of a square crop as YOLO rows ``class cx cy w h`` (fractions of ``size``)."""
    rows = []
    for lab in labels:
        bx0, by0, bx1, by1 = lab.box
        area = (bx1 - bx0) * (by1 - by0)
        ix0, iy0 = max(bx0, x0), max(by0, y0)
        ix1, iy1 = min(bx1, x0 + size), min(by1, y0 + size)
        if ix1 <= ix0 or iy1 <= iy0 or (ix1 - ix0) * (iy1 - iy0) < KEEP_INSIDE * area:
            continue
        rows.append((lab.class_id, ((ix0 + ix1) / 2 - x0) / size, ((iy0 + iy1) / 2 - y0) / size,
                     (ix1 - ix0) / size, (iy1 - iy0) / size))
    return rows


def turn_rows(
    rows: list[tuple[int, float, float, float, float]], clockwise: bool
) -> list[tuple[int, float, float, float, float]]:
    """YOLO rows of a square crop turned a quarter turn (as ``cv2.rotate`` turns the image)."""
    if clockwise:  # (x, y) -> (1 - y, x)
        return [(c, 1 - y, x, h, w) for c, x, y, w, h in rows]
    return [(c, y, 1 - x, h, w) for c, x, y, w, h in rows]  # (x, y) -> (y, 1 - x)


def _crop_origin(rng: np.random.Generator, scene: Scene, size: int) -> tuple[int, int]:
    h, w = scene.image.shape[:2]
    if scene.cards:
        cx, cy = scene.cards[int(rng.integers(len(scene.cards)))].center
        cx += rng.normal(0, size * 0.2)
        cy += rng.normal(0, size * 0.2)
    else:
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
    x0 = int(np.clip(cx - size / 2, 0, w - size))
    y0 = int(np.clip(cy - size / 2, 0, h - size))
    return x0, y0


def write_dataset(
    out: Path,
    designs: list[Design],
    scenes: int,
    crops_per_scene: int,
    crop_size: int,
    seed: int,
    split: str,
    config: SceneConfig | None = None,
    turns: float = 0.0,
) -> int:
    """Render ``scenes`` scenes and write ``crops_per_scene`` crops of each under
    ``out/images/<split>`` and ``out/labels/<split>`` (a share ``turns`` of them turned a quarter
    turn either way); returns the number of labels written."""
    rng = np.random.default_rng(seed)
    img_dir, lab_dir = out / "images" / split, out / "labels" / split
    img_dir.mkdir(parents=True, exist_ok=True)
    lab_dir.mkdir(parents=True, exist_ok=True)
    total = 0
    for i in range(scenes):
        scene = render_scene(rng, designs, config)
        for k in range(crops_per_scene):
            x0, y0 = _crop_origin(rng, scene, crop_size)
            crop = scene.image[y0 : y0 + crop_size, x0 : x0 + crop_size]
            rows = crop_labels(scene.labels, x0, y0, crop_size)
            if rng.random() < turns:
                clockwise = bool(rng.random() < 0.5)
                crop = cv2.rotate(crop, cv2.ROTATE_90_CLOCKWISE if clockwise
                                  else cv2.ROTATE_90_COUNTERCLOCKWISE)
                rows = turn_rows(rows, clockwise)
            name = f"{split}_{i:05d}_{k}"
            cv2.imwrite(str(img_dir / f"{name}.jpg"), crop, [cv2.IMWRITE_JPEG_QUALITY, 92])
            (lab_dir / f"{name}.txt").write_text(
                "".join(f"{c} {x:.6f} {y:.6f} {w:.6f} {h:.6f}\n" for c, x, y, w, h in rows))
            total += len(rows)
    return total


def write_data_yaml(out: Path) -> Path:
    """The Ultralytics data file naming the 52 classes in ``CARD_CODES`` order."""
    path = out / "data.yaml"
    path.write_text(_data_yaml(out))
    return path


def written_here(out: Path) -> bool:
    """Whether the folder ``out`` holds the data file :func:`write_data_yaml` writes there, word
    for word: the mark of a data set written by this package, which a run may replace."""
    try:
        return not out.is_symlink() and (out / "data.yaml").read_text() == _data_yaml(out)
    except (OSError, ValueError):
        return False


def _data_yaml(out: Path) -> str:
    names = "\n".join(f"  {i}: {code}" for i, code in enumerate(CARD_CODES))
    return f"path: {out.resolve()}\ntrain: images/train\nval: images/val\nnames:\n{names}\n"
