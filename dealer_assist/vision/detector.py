"""The card detector at the table: ONNX Runtime or OpenVINO (:mod:`.runtime`), no torch.

A frame goes through card regions (where bright, unsaturated paper lies on the felt, so the
network runs only on the part of the frame that can hold a card) -> letterbox -> detector
inference -> decoding and NMS (where the corner indices are) -> the index reader (which card
each index shows, see :mod:`.reader`) -> grouping of the indices into physical cards. Each card
seen gives one :class:`CardObservation`: the two corner indices of one card (same code, about a
card's diagonal apart) become one observation placed at the card's centre; a card with one
index visible is placed on that index.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import cv2
import numpy as np

from dealer_assist.vision import runtime as runtimes
from dealer_assist.vision.artwork import CARD_CODES
from dealer_assist.vision.model_control import MODELS_DIR
from dealer_assist.vision.reader import (
    CROP_SIZE,
    DEFAULT_READING,
    RANK_CLASSES,
    READINGS,
    SUIT_CLASSES,
    agree,
    crop_index,
    crops_to_blob,
    settled,
    views,
)
from dealer_assist.vision.still_regions import StillRead

#: The shipped models as the table runs them: INT8-quantised (:mod:`.quantize`) from the float
#: exports ``cards.onnx`` and ``index-reader.onnx`` beside them.
DEFAULT_MODEL = MODELS_DIR / "cards.int8.onnx"
DEFAULT_READER = DEFAULT_MODEL.with_name("index-reader.int8.onnx")
_STRIDE = 32
#: Distance between the two index centres of one card, in units of an index box's long side
#: (measured over the installed designs' tight index boxes: 1.8 for a jumbo index, whose box
#: holds a tall rank and the suit under it, to 7.3 for a narrow ace; the detector's boxes carry
#: a margin, which brings a jumbo index's two corners closer still).
PAIR_DISTANCE = (1.4, 7.5)
#: A third or fourth index of one card (a design that prints one at every corner) lies on the
#: circle whose diameter joins the card's two paired corners (a rectangle's corners see its
#: diagonal at a right angle), to within this share of the circle's radius.
ON_THE_CARD = 0.15
#: A card's indices lie at the corners of a rectangle whose long side runs along the card's: a
#: third corner's two sides to the paired ones are within this ratio of each other (1.26 to 1.5
#: over the designs looked at), the longer running along the indices' long side, within about
#: 34 degrees (its run along it 1.5 times its run across), where they are clearly upright or
#: crosswise (:data:`CLEARLY_ORIENTED`: a card turned by up to about 30 degrees).
CARD_SIDES = (1.2, 2.2)
LONG_SIDE_ALONG = 1.5
#: A box is upright (or crosswise) where its height is this many times its width (or the reverse).
CLEARLY_ORIENTED = 1.25
#: The larger of two paired corners' boxes is less than this many times the other's long side (a
#: jumbo index boxed with its suit at one corner and by its rank alone at the other: 1.7).
PAIR_SIZE_RATIO = 2.2
#: Card regions are looked for at this fraction of the frame's size (cheap; cards stay blobs;
#: at an eighth, 3072x1728 frames lost indices at the edges of fanned cards).
_REGION_SHRINK = 4
#: Sides a card region is padded up to (right and bottom, the letterbox's grey) where the runtime
#: runs fixed input shapes faster than changing ones (OpenVINO compiles each of these 9 shapes
#: once, at start: two to three times as fast per region as its dynamic-shape model, 7-46% more
#: frames/s two at once despite the padding, the same cards read). Most regions at 1280x720 are
#: one card, 128-320 px a side; a larger region runs at its own shape.
REGION_SIDES = (128, 224, 320)
#: The reader's batches (four readings an index) are padded up to a multiple of this, up to
#: ``READER_BATCHES`` of them, where the runtime runs fixed shapes faster (OpenVINO, each batch
#: compiled at start: a quarter faster than its dynamic batch in a busy run, even in a quiet
#: one; padding rows are dropped).
READER_BATCH = 32
READER_BATCHES = 10
#: Regions adding up to this share of the frame (they may overlap) are read as one whole frame.
_REGIONS_MAX_SHARE = 1.0
#: The least reading confidence (the rank's and the suit's probabilities, each averaged over the
#: four readings, multiplied) for a found index to count: precision before recall, as the
#: tracker catches a missed card on a later frame.
DEFAULT_CONFIDENCE = 0.7
#: Whether a runtime's calls split a frame among threads by default (``CardDetector(split=...)``).
#: One frame at a time on a 2-core AMD EPYC, each way alone in its process (``bench/split.py``):
#: ONNX Runtime INT8 took 41.0 ms a frame split at 1280x720 against 73.8 on one runtime thread
#: and 97.4 on its own two (0.56 of the faster; 0.65 at 3072x1728); OpenVINO (float) 120.0 split
#: against 119.9 on its own threads: no gain.
SPLITS = {runtimes.ONNXRUNTIME: True, runtimes.OPENVINO: False}
_Item = TypeVar("_Item")
_Result = TypeVar("_Result")


class ModelError(ValueError):
    """The model file is missing, unreadable, or not a card detector; carries the path."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(f"{message}: {path}")
        self.path = path


@dataclass(frozen=True)
class Detections:
    """Corner-index detections in frame pixels (columnar, like supervision's ``Detections``).

    ``boxes`` is ``(N, 4)`` as ``x0, y0, x1, y1``; ``confidences`` ``(N,)``; ``class_ids`` ``(N,)``
    indexing :data:`CARD_CODES`.
    """

    boxes: np.ndarray
    confidences: np.ndarray
    class_ids: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.boxes)
        if self.boxes.shape != (n, 4):
            raise ValueError(f"boxes must be (N, 4), got {self.boxes.shape}")
        if self.confidences.shape != (n,) or self.class_ids.shape != (n,):
            raise ValueError(
                f"expected {n} confidences and class ids, got {self.confidences.shape} and "
                f"{self.class_ids.shape}")

    def __len__(self) -> int:
        return len(self.boxes)

    @classmethod
    def empty(cls) -> Detections:
        return cls(np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros(0, np.int64))


@dataclass(frozen=True)
class CardObservation:
    """One physical card in one frame.

    ``x, y``: a point on the card in frame pixels (the midpoint of its paired indices, its
    centre where they are opposite corners; else the centre of the visible index).
    ``sideways``: the card's long side runs nearer the frame's horizontal than its vertical (a
    doubled card, for a seat facing the camera's vertical).
    ``index_boxes``: the corner-index boxes it was built from. ``verdict``: where it was checked
    against the shoe's cards in flight (:mod:`.shoe_check`), "match", "mismatch" or "unsure",
    and ``checked`` the shoe's code it was checked against (None: named, not checked).
    ``laid_over``: an index of it lies at a corner of a card already on the felt and matched a
    shoe card in flight other than that card: a new card laid there, not that card changed.
    """

    card: str
    x: float
    y: float
    confidence: float
    sideways: bool
    index_boxes: tuple[tuple[float, float, float, float], ...] = field(compare=False)
    verdict: str | None = field(default=None, compare=False)
    checked: str | None = field(default=None, compare=False)
    laid_over: bool = field(default=False, compare=False)

    def to_json(self) -> dict[str, object]:
        """The issue's wire form: ``{"card", "x", "y", "confidence", "sideways"}``."""
        return {"card": self.card, "x": round(self.x, 1), "y": round(self.y, 1),
                "confidence": round(self.confidence, 3), "sideways": self.sideways}


@dataclass(frozen=True)
class StageTimes:
    """Milliseconds spent in each stage of the last :meth:`CardDetector.detect` call. Where a
    call split its regions among threads, the letterbox, inference and decoding stages are each
    stage's share of the time the regions took (each thread's times scaled to it)."""

    preprocess: float
    inference: float
    postprocess: float
    reading: float
    grouping: float


class CardDetector:
    """Loads the two ONNX models once; ``detect(frame)`` gives the cards in a BGR frame.

    ``runtime``: ``"onnxruntime"`` or ``"openvino"`` (:mod:`.runtime`); the files are run as
    given, whichever runtime runs them.

    ``scale`` resizes the frame before the detector (1.0 = the frame's own pixels, what it was
    trained for; 0.75 is faster but finds fewer indices). ``presence`` is the least detector
    score (its class scores summed; the shipped model has one class, "index") for a place to
    count as an index; ``confidence`` the least reading confidence (rank probability x suit
    probability, each averaged over the index's readings). ``reading``: how each found index is
    read (:data:`~.reader.READINGS`): "twice", as seen and half a turn, and at the quarter
    turns too where those are unsure; "once", as seen first; or "four", always at four quarter
    turns. ``regions``:
    run the network only on :func:`card_regions` (False: always the whole frame). ``threads``:
    the cores one call uses (default: all this process may run on; the table's camera uses one
    and detects frames at once). ``split``: a call shares its frame's card regions, and the
    found indices to read, among ``threads`` threads, each inference on one runtime thread;
    False: one inference after another, each on ``threads`` runtime threads; None (the
    default): whichever :data:`SPLITS` says is faster in the runtime. The cards found are the
    same either way.
    ``fixed_shapes``: pad each region up to one of the shapes made of :data:`REGION_SIDES` where
    the runtime runs those faster (OpenVINO; False: every region at its own shape, as ONNX
    Runtime runs them), and pad the reader's batch likewise (:data:`READER_BATCH`). Safe to call
    from several threads at once (``last_times`` then holds the stages of whichever call last
    wrote them). A split detector's threads do not survive a fork: make it in the process that
    calls it.
    """

    def __init__(
        self,
        model_path: Path | str = DEFAULT_MODEL,
        reader_path: Path | str = DEFAULT_READER,
        *,
        scale: float = 1.0,
        confidence: float = DEFAULT_CONFIDENCE,
        presence: float = 0.25,
        iou: float = 0.5,
        regions: bool = True,
        threads: int | None = None,
        split: bool | None = None,
        runtime: str = runtimes.ONNXRUNTIME,
        fixed_shapes: bool = True,
        reading: str = DEFAULT_READING,
    ) -> None:
        if not scale > 0:  # NaN too
            raise ValueError(f"scale must be above 0, got {scale}")
        if reading not in READINGS:
            raise ValueError(f"reading must be one of {', '.join(READINGS)}, got {reading!r}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be 1 or more, got {threads}")
        cores = threads or _usable_cores()
        split = SPLITS.get(runtime, False) if split is None else split
        self._pool = ThreadPoolExecutor(cores, thread_name_prefix="card-detector") \
            if split and cores > 1 else None
        threads = 1 if self._pool else threads
        path, reader = Path(model_path), Path(reader_path)
        shapes = [(1, 3, h, w) for h in REGION_SIDES for w in REGION_SIDES] \
            if fixed_shapes and regions else []
        self._session = _open_session(path, runtime, threads, shapes)
        if self._session.input_count != 1 or len(self._session.input_shape) != 4:
            raise ModelError("model input is not one NCHW image", path)
        fixed = self._session.input_shape[2:]
        self._fixed_size = tuple(fixed) if all(isinstance(v, int) for v in fixed) else None
        # dynamic exports name their output dims instead of sizing them: run once to check
        probe = np.zeros((1, 3, *(self._fixed_size or (_STRIDE, _STRIDE))), np.float32)
        outs = _probe(self._session, path, probe)
        if len(outs) != 1 or outs[0].ndim != 3 or outs[0].shape[1] < 5:
            raise ModelError(
                f"model outputs are {[o.shape for o in outs]}; a detector gives one, "
                "(1, 4 + classes, N) (is this the index reader?)", path)
        batches = [(READER_BATCH * n, 3, CROP_SIZE, CROP_SIZE)
                   for n in range(1, READER_BATCHES + 1)] if fixed_shapes else []
        self._reader = _open_session(reader, runtime, threads, batches)
        outs = _probe(self._reader, reader, np.zeros((1, 3, CROP_SIZE, CROP_SIZE), np.float32))
        if [o.shape for o in outs] != [(1, len(RANK_CLASSES)), (1, len(SUIT_CLASSES))]:
            raise ModelError(
                f"reader outputs are {[o.shape for o in outs]}; an index reader gives "
                f"(1, {len(RANK_CLASSES)}) ranks and (1, {len(SUIT_CLASSES)}) suits", reader)
        self.runtime = runtime
        self.path = path
        self.reader_path = reader
        self.scale = scale
        self.confidence = confidence
        self.presence = presence
        self.iou = iou
        self.reading = reading
        self.threads = cores
        self.split = self._pool is not None
        self.regions = regions and self._fixed_size is None
        self.last_times = StageTimes(0.0, 0.0, 0.0, 0.0, 0.0)

    @property
    def region_shapes(self) -> frozenset[tuple[int, int]]:
        """The fixed ``(height, width)`` shapes card regions are padded up to (empty: each region
        runs at its own shape)."""
        return frozenset((h, w) for _, _, h, w in self._session.static_shapes)

    def find_indices(self, frame: np.ndarray) -> np.ndarray:
        """Where the corner indices are: boxes ``(N, 4)`` in frame pixels, after NMS, unread."""
        return self.find_scored(frame)[0]

    def find_scored(self, frame: np.ndarray, presence: float | None = None,
                    still: StillRead | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`find_indices` with each box's detector score ``(N,)``, down to ``presence``
        (default: the detector's). Without ``still``, the boxes at or above the detector's
        presence are exactly :meth:`find_indices`' (a lower-scored box suppresses no higher
        one). ``still``: this frame's read of one camera's recent regions; a settled region
        unchanged since it was searched keeps what was found in it then (:mod:`.still_regions`)
        instead of being searched again."""
        least = self.presence if presence is None else presence
        h, w = frame.shape[:2]
        t0 = time.perf_counter()
        regions = card_regions(frame) if self.regions else []
        if not self.regions or sum((x1 - x0) * (y1 - y0) for x0, y0, x1, y1 in regions) > \
                _REGIONS_MAX_SHARE * w * h:
            regions = [(0, 0, w, h)]
        preprocess, inference, postprocess = time.perf_counter() - t0, 0.0, 0.0
        t1 = time.perf_counter()
        if still is not None:
            still.memory.keep_only(regions)
        found = self._share(lambda region: self._find_or_keep(frame, region, least, still),
                            regions, [(x1 - x0) * (y1 - y0) for x0, y0, x1, y1 in regions])
        spent = [sum(times[stage] for _, _, times in found) for stage in range(3)]
        # threads at once: each stage's share of the time the regions took
        share = (time.perf_counter() - t1) / sum(spent) if self._pool and sum(spent) else 1.0
        preprocess += spent[0] * share
        inference += spent[1] * share
        postprocess += spent[2] * share
        found_boxes = [boxes for boxes, _, _ in found]
        found_scores = [scores for _, scores, _ in found]
        t4 = time.perf_counter()
        boxes, scores = self._suppress(np.concatenate(found_boxes),
                                       np.concatenate(found_scores), least) \
            if found_boxes else (np.zeros((0, 4), np.float32), np.zeros(0, np.float32))
        postprocess += time.perf_counter() - t4
        self.last_times = StageTimes(preprocess * 1e3, inference * 1e3,
                                     postprocess * 1e3, 0.0, 0.0)
        return boxes, scores

    def _find_or_keep(self, frame: np.ndarray, region: tuple[int, int, int, int], least: float,
                      still: StillRead | None,
                      ) -> tuple[np.ndarray, np.ndarray, tuple[float, float, float]]:
        """:meth:`_find_in`, or what ``still`` kept of the region where it is unchanged."""
        if still is None:
            return self._find_in(frame, region, least)
        t0 = time.perf_counter()
        kept = still.boxes_at(frame, region, least)
        compared = time.perf_counter() - t0
        if kept is not None:
            return kept[0], kept[1], (compared, 0.0, 0.0)
        boxes, scores, (letterbox, inference, decoding) = self._find_in(frame, region, least)
        t1 = time.perf_counter()
        still.remember(frame, region, least, boxes, scores)
        return boxes, scores, (compared + letterbox + time.perf_counter() - t1, inference,
                               decoding)

    def _find_in(self, frame: np.ndarray, region: tuple[int, int, int, int], least: float,
                 ) -> tuple[np.ndarray, np.ndarray, tuple[float, float, float]]:
        """The boxes and scores found in one region of ``frame``, in frame pixels, and the
        seconds spent letterboxing, in inference and decoding."""
        x0, y0, x1, y1 = region
        t0 = time.perf_counter()
        blob, factor = self._letterbox(frame[y0:y1, x0:x1])
        t1 = time.perf_counter()
        (raw,) = self._session.run(blob)
        t2 = time.perf_counter()
        boxes, scores = self._candidates(raw[0], factor, least)
        boxes += np.array([x0, y0, x0, y0], np.float32)
        return boxes, scores, (t1 - t0, t2 - t1, time.perf_counter() - t2)

    def _share(self, work: Callable[[_Item], _Result], items: Sequence[_Item],
               weights: Sequence[float]) -> list[_Result]:
        """``work`` on every item, in the items' order: on the pool's threads, the heaviest
        first, where the detector splits its calls; else one after another."""
        if self._pool is None or len(items) < 2:
            return [work(item) for item in items]
        order = sorted(range(len(items)), key=lambda i: -weights[i])
        futures = {i: self._pool.submit(work, items[i]) for i in order}
        try:
            return [futures[i].result() for i in range(len(items))]
        finally:  # where one raised, the rest not begun are dropped, not left to later calls
            for future in futures.values():
                future.cancel()

    def detect_indices(self, frame: np.ndarray) -> Detections:
        """Corner-index detections in ``frame`` (BGR uint8), after NMS, each read by the reader;
        places read as "not an index" or below ``confidence`` are dropped."""
        boxes = self.find_indices(frame)
        t0 = time.perf_counter()
        detections = self.read(frame, boxes)
        times = self.last_times
        self.last_times = StageTimes(times.preprocess, times.inference, times.postprocess,
                                     (time.perf_counter() - t0) * 1e3, 0.0)
        return detections

    def detect(self, frame: np.ndarray) -> list[CardObservation]:
        """The physical cards in ``frame``, one observation per card, left to right."""
        if frame is None or frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
            shape = None if frame is None else (frame.shape, frame.dtype)
            raise ValueError(f"expected a BGR uint8 image (H, W, 3), got {shape}")
        detections = self.detect_indices(frame)
        t0 = time.perf_counter()
        cards = group_indices(detections)
        times = self.last_times
        self.last_times = StageTimes(times.preprocess, times.inference, times.postprocess,
                                     times.reading, (time.perf_counter() - t0) * 1e3)
        return cards

    def _letterbox(self, frame: np.ndarray) -> tuple[np.ndarray, float]:
        h, w = frame.shape[:2]
        if self._fixed_size is not None:
            target_h, target_w = self._fixed_size
            factor = min(target_w / w, target_h / h)
        else:
            factor = self.scale
        # a pixel each way at least: a sliver of a frame, shrunk, would round to none
        size = (max(1, round(w * factor)), max(1, round(h * factor)))
        if self._fixed_size is None:
            target_w = -(-size[0] // _STRIDE) * _STRIDE
            target_h = -(-size[1] // _STRIDE) * _STRIDE
            target_h, target_w = self._fixed_shape(target_h, target_w)
        if factor != 1.0:
            frame = cv2.resize(frame, size,
                               interpolation=cv2.INTER_AREA if factor < 1 else cv2.INTER_LINEAR)
        pad_h, pad_w = target_h - frame.shape[0], target_w - frame.shape[1]
        if pad_h or pad_w:
            frame = cv2.copyMakeBorder(frame, 0, pad_h, 0, pad_w, cv2.BORDER_CONSTANT,
                                       value=(114, 114, 114))
        blob = cv2.dnn.blobFromImage(frame, 1 / 255.0, swapRB=True)
        return blob, factor

    def _fixed_shape(self, height: int, width: int) -> tuple[int, int]:
        """The smallest of the session's fixed shapes that holds ``height`` x ``width``; the
        size itself where none does (or the session has none)."""
        holding = [(h * w, h, w) for _, _, h, w in self._session.static_shapes
                   if h >= height and w >= width]
        return min(holding)[1:] if holding else (height, width)

    @staticmethod
    def _candidates(raw: np.ndarray, factor: float, least: float,
                    ) -> tuple[np.ndarray, np.ndarray]:
        # the detector's class scores, summed, say "an index is here"; which one is the reader's
        presence = np.minimum(raw[4:].sum(axis=0), 1.0)
        keep = presence >= least
        cx, cy, bw, bh = raw[:4, keep]
        boxes = np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], axis=1) / factor
        return boxes.astype(np.float32).reshape(-1, 4), presence[keep].astype(np.float32)

    def _suppress(self, boxes: np.ndarray, scores: np.ndarray, least: float,
                  ) -> tuple[np.ndarray, np.ndarray]:
        if len(boxes) == 0:
            return np.zeros((0, 4), np.float32), np.zeros(0, np.float32)
        xywh = np.stack([boxes[:, 0], boxes[:, 1], boxes[:, 2] - boxes[:, 0],
                         boxes[:, 3] - boxes[:, 1]], axis=1)
        # class-agnostic: one place on a card holds one index
        chosen = np.asarray(cv2.dnn.NMSBoxes(xywh.tolist(), scores.tolist(), least, self.iou),
                            dtype=np.int64).reshape(-1)
        return boxes[chosen], scores[chosen]

    def read(self, frame: np.ndarray, boxes: np.ndarray, *,
             confidence: float | None = None) -> Detections:
        """The indices at ``boxes`` (``(N, 4)`` frame pixels) read; places read as "not an
        index" or below ``confidence`` (default: the detector's) are dropped."""
        least = self.confidence if confidence is None else confidence
        if len(boxes) == 0:
            return Detections.empty()
        ranks, suits = self.read_probabilities(frame, boxes)
        rank_ids, suit_ids = ranks.argmax(axis=1), suits.argmax(axis=1)
        confidences = ranks.max(axis=1) * suits.max(axis=1)
        keep = (rank_ids != RANK_CLASSES.index("-")) & (confidences >= least)
        class_ids = np.array([CARD_CODES.index(RANK_CLASSES[r] + SUIT_CLASSES[s])
                              for r, s in zip(rank_ids[keep], suit_ids[keep], strict=True)],
                             np.int64)
        return Detections(boxes[keep], confidences[keep].astype(np.float32), class_ids)


    def read_probabilities(self, frame: np.ndarray,
                           boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The reader's probabilities for the indices at ``boxes`` (``(N, 4)``, N >= 1): ranks
        ``(N, 14)`` over :data:`RANK_CLASSES` ("-": not an index) and suits ``(N, 4)`` over
        :data:`SUIT_CLASSES`: the first readings of ``reading`` averaged where they are sure,
        else the four quarter-turn readings averaged."""
        parts = np.array_split(np.arange(len(boxes)), max(1, min(len(boxes), self.threads))) \
            if self._pool else [np.arange(len(boxes))]
        read = self._share(lambda rows: self._read_part(frame, boxes[rows]), parts,
                           [len(rows) for rows in parts])
        ranks, suits = zip(*read, strict=True)
        return np.concatenate(ranks), np.concatenate(suits)

    def _read_part(self, frame: np.ndarray,
                   boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`read_probabilities` for ``boxes`` on the calling thread."""
        crops = [crop_index(frame, tuple(float(v) for v in box)) for box in boxes]
        # the reader was trained on every angle: sure first readings stand, unsure ones are
        # averaged with the index's other quarter turns ("four" reads every turn at once)
        first, rest = READINGS[self.reading]
        ranks, suits = (agree(p, len(crops))
                        for p in self._read_blob(crops_to_blob(views(crops, first))))
        unsure = np.flatnonzero(~settled(ranks, suits)) if rest else np.zeros(0, np.int64)
        if len(unsure):
            more = self._read_blob(crops_to_blob(views([crops[i] for i in unsure], rest)))
            for probs, extra in zip((ranks, suits), more, strict=True):
                probs[unsure] = (len(first) * probs[unsure]
                                 + len(rest) * agree(extra, len(unsure))) / 4
        return ranks, suits

    def _read_blob(self, blob: np.ndarray) -> list[np.ndarray]:
        """The reader's outputs for ``blob``, run padded up to a fixed batch where the session
        has one (each row is read on its own: the padding rows change no other)."""
        n = len(blob)
        padded = (-(-n // READER_BATCH) * READER_BATCH, *blob.shape[1:])
        if padded[0] != n and padded in self._reader.static_shapes:
            blob = np.concatenate([blob, np.zeros((padded[0] - n, *blob.shape[1:]), blob.dtype)])
        return [out[:n] for out in self._reader.run(blob)]


def _usable_cores() -> int:
    """The cores this process may run on (its affinity, where the OS says; else all)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


#: How much brighter than the frame's median (its V in HSV, levels of 255) a pixel must be to be
#: taken for card paper, and the least it must be. Paper under a dim lamp on a pale cloth (the
#: independent renderer's fibres, leather, paper and burlap felts) lies only 20-40 levels above
#: the felt's median: at the former 45 and 110, whole cards lay outside every region frame after
#: frame and the detector never ran on them (docs/vision.md, "Card regions"). Chosen on another
#: seed than the model card's; the regions grew by about a fifth, and a region only costs time.
PAPER_ABOVE_MEDIAN = 20.0
PAPER_LEAST = 90.0


def card_regions(frame: np.ndarray, margin: int = 16) -> list[tuple[int, int, int, int]]:
    """Rectangles ``(x0, y0, x1, y1)`` of ``frame`` that may hold cards, sides multiples of 32.

    Card paper is brighter than the felt and unsaturated: pixels of a quarter-size copy of the
    frame (sampled bilinearly: at 3K much cheaper than averaging, and found as many indices)
    brighter than the frame's median (over every fourth row and column) by
    :data:`PAPER_ABOVE_MEDIAN` levels (and at least :data:`PAPER_LEAST`) with saturation under
    100, less thin lines (the felt's printing), are grown by
    ``margin`` pixels, and each connected blob's bounding box, grown to the network's stride,
    is a region. Chips, glare and white sleeves give extra regions, which only cost time. A
    bright frame (median above 150: a light felt, a close-up of cards) cannot be told apart
    this way and is one region.
    """
    h, w = frame.shape[:2]
    k = _REGION_SHRINK
    small = cv2.resize(frame, (max(1, w // k), max(1, h // k)), interpolation=cv2.INTER_LINEAR)
    hsv = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)
    median = float(np.median(hsv[::4, ::4, 2]))
    if median > 150:
        return [(0, 0, w, h)]
    level = max(PAPER_LEAST, median + PAPER_ABOVE_MEDIAN)
    bright = ((hsv[:, :, 2] > level) & (hsv[:, :, 1] < 100)).astype(np.uint8)
    # the felt's printed lines are as pale as paper but thin: an opening removes them
    paper = cv2.morphologyEx(bright, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    grow = 2 * (margin // k) + 1
    grown = cv2.dilate(paper, cv2.getStructuringElement(cv2.MORPH_RECT, (grow, grow)))
    # each blob's outline (a blob inside another's hole lies within that one's region anyway):
    # at 3K many times cheaper than labelling every pixel
    outlines, _ = cv2.findContours(grown, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    regions = []
    for x, y, bw, bh in sorted(tuple(cv2.boundingRect(outline)) for outline in outlines):
        if bw * bh < 6:  # a speck: smaller than any index
            continue
        side_w = min(w, -(-bw * k // _STRIDE) * _STRIDE)
        side_h = min(h, -(-bh * k // _STRIDE) * _STRIDE)
        cx, cy = (x + bw / 2) * k, (y + bh / 2) * k
        x0 = int(min(max(0.0, cx - side_w / 2), w - side_w))
        y0 = int(min(max(0.0, cy - side_h / 2), h - side_h))
        regions.append((x0, y0, x0 + side_w, y0 + side_h))
    return regions


#: The share of the smaller of two boxes they must overlap by to cover one place.
SAME_PLACE = 0.5
#: The share of the smaller of two boxes they must overlap by to be one index boxed twice (a
#: second box round an index and its surround) rather than two indices half over each other
#: (a card of a cascade laid tight: about 0.5-0.6 of the smaller box).
SAME_INDEX = 0.8


def same_place(a: Sequence[float], b: Sequence[float]) -> bool:
    """Two boxes ``(x0, y0, x1, y1)`` cover one place: they overlap by half the smaller one."""
    return _overlaps_by(a, b, SAME_PLACE)


def same_index(a: Sequence[float], b: Sequence[float]) -> bool:
    """Two boxes overlap by :data:`SAME_INDEX` of the smaller one: one index boxed twice."""
    return _overlaps_by(a, b, SAME_INDEX)


def _overlaps_by(a: Sequence[float], b: Sequence[float], share: float) -> bool:
    ix = min(a[2], b[2]) - max(a[0], b[0])
    iy = min(a[3], b[3]) - max(a[1], b[1])
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return ix > 0 and iy > 0 and ix * iy >= share * smaller


@dataclass(frozen=True)
class BoxOverlaps:
    """Each box of ``a`` ``(N, 4)`` against each of ``b`` ``(M, 4)``, the intersections worked
    out once for every rule asked of them (in float64, as Python's floats): ``inter`` the
    ``(N, M)`` intersection areas, ``area_a`` and ``area_b`` each box's own area, broadcast
    alike."""

    inter: np.ndarray
    area_a: np.ndarray
    area_b: np.ndarray

    @classmethod
    def of(cls, a: np.ndarray, b: np.ndarray) -> BoxOverlaps:
        a = np.asarray(a, np.float64).reshape(-1, 1, 4)
        b = np.asarray(b, np.float64).reshape(1, -1, 4)
        ix = np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
        iy = np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None)
        return cls(ix * iy, (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1]),
                   (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1]))

    def by(self, share: float) -> np.ndarray:
        """The pairs that overlap by ``share`` of the smaller box, decided as the one-pair rule
        decides them: :func:`same_place` at :data:`SAME_PLACE`, :func:`same_index` at
        :data:`SAME_INDEX`."""
        smaller = np.minimum(self.area_a, self.area_b)
        return np.asarray((self.inter > 0) & (self.inter >= share * smaller), bool)

    def ious(self) -> np.ndarray:
        """Each pair's intersection over union ``(N, M)``."""
        union = self.area_a + self.area_b - self.inter
        return np.asarray(self.inter / np.maximum(union, 1e-9))


def _merge_overlaps(detections: Detections) -> Detections:
    boxes = detections.boxes
    order = np.argsort(-detections.confidences)
    kept: list[int] = []
    for i in order:
        for j in kept:
            if detections.class_ids[i] == detections.class_ids[j] and \
                    same_place(boxes[i], boxes[j]):
                break
        else:
            kept.append(int(i))
    keep = np.array(sorted(kept), np.int64)
    return Detections(boxes[keep], detections.confidences[keep], detections.class_ids[keep])


def _open_session(path: Path, runtime: str, threads: int | None,
                  static_shapes: Sequence[tuple[int, ...]],
                  ) -> runtimes.OrtSession | runtimes.OpenVinoSession:
    if runtime not in runtimes.RUNTIMES:
        raise ValueError(f"unknown runtime {runtime!r} (known: {', '.join(runtimes.RUNTIMES)})")
    if not path.is_file():
        raise ModelError("model file not found", path)
    try:
        return runtimes.open_session(path, runtime, threads, static_shapes=static_shapes)
    except runtimes.RuntimeUnavailable:
        raise
    except Exception as exc:  # each runtime raises its own types for every kind of bad file
        raise ModelError(f"not a readable ONNX model ({type(exc).__name__})", path) from exc


def _probe(session: runtimes.Session, path: Path, probe: np.ndarray) -> list[np.ndarray]:
    try:
        return session.run(probe)
    except Exception as exc:
        raise ModelError(f"model does not run on an image ({type(exc).__name__})", path) from exc


def pair_distance(a: Sequence[float], b: Sequence[float]) -> float | None:
    """How far apart two index boxes ``(x0, y0, x1, y1)`` lie, in index sizes, where they could
    be one card's two corners (:data:`PAIR_DISTANCE` apart, sizes within
    :data:`PAIR_SIZE_RATIO`); None where they could not."""
    a, b = [float(v) for v in a], [float(v) for v in b]
    size_a, size_b = max(a[2] - a[0], a[3] - a[1]), max(b[2] - b[0], b[3] - b[1])
    if max(size_a, size_b) / max(min(size_a, size_b), 1e-6) >= PAIR_SIZE_RATIO:
        return None
    distance = math.dist(((a[0] + a[2]) / 2, (a[1] + a[3]) / 2),
                         ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)) / ((size_a + size_b) / 2)
    return distance if PAIR_DISTANCE[0] <= distance <= PAIR_DISTANCE[1] else None


def group_indices(detections: Detections) -> list[CardObservation]:
    """Pair corner indices into cards: same code, about a card's diagonal apart, similar size.

    Pairs are taken greedily, the pair nearest the typical distance first, so two cards of the
    same code (a multi-deck shoe) each keep their own indices when they lie apart. Two boxes of
    one code that overlap (by half of the smaller) are one index seen twice (a jumbo index can
    draw one box round its rank and another round rank and suit): the surer one is kept. A
    card's other corners (a design with an index at all four) join its pair where they lie on
    the card (:data:`ON_THE_CARD`), up to four indices a card; the card's point stays its pairs'
    midpoint, so a corner seen in one frame and not the next does not move it.
    """
    detections = _merge_overlaps(detections)
    n = len(detections)
    boxes = detections.boxes
    codes = detections.class_ids
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    candidates: list[tuple[float, int, int]] = []
    typical = sum(PAIR_DISTANCE) / 2
    for i in range(n):
        for j in range(i + 1, n):
            if codes[i] != codes[j]:
                continue
            distance = pair_distance(boxes[i], boxes[j])
            if distance is not None:
                candidates.append((abs(distance - typical), i, j))
    used: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for _, i, j in sorted(candidates):
        if i not in used and j not in used:
            used |= {i, j}
            pairs.append((i, j))
    units: list[tuple[int, ...]] = [*pairs, *((i,) for i in range(n) if i not in used)]
    cards = []
    joined: set[int] = set()
    for u, unit in enumerate(units):
        if u in joined:
            continue
        members = list(unit)
        anchors: list[tuple[int, ...]] = []
        if len(unit) == 2:  # a pair takes in the card's other corners; a lone index none
            anchors.append(unit)
            for v in range(u + 1, len(units)):
                other = units[v]
                if (v not in joined and codes[other[0]] == codes[unit[0]]
                        and len(members) + len(other) <= 4
                        and _on_the_card(unit, other, boxes, centres)):
                    joined.add(v)
                    members += other
                    if len(other) == 2:
                        anchors.append(other)
        points = [centres[list(pair)].mean(axis=0) for pair in anchors] or [centres[unit[0]]]
        x, y = np.mean(points, axis=0)
        member_boxes = boxes[members]
        widths = member_boxes[:, 2] - member_boxes[:, 0]
        heights = member_boxes[:, 3] - member_boxes[:, 1]
        cards.append(CardObservation(
            card=CARD_CODES[int(codes[unit[0]])],
            x=float(x), y=float(y),
            confidence=float(detections.confidences[members].max()),
            sideways=bool(widths.sum() > heights.sum()),
            index_boxes=tuple((float(b[0]), float(b[1]), float(b[2]), float(b[3]))
                              for b in member_boxes),
        ))
    return sorted(cards, key=lambda c: (c.x, c.y))


def _on_the_card(pair: tuple[int, ...], other: tuple[int, ...], boxes: np.ndarray,
                 centres: np.ndarray) -> bool:
    """Whether every index of ``other`` is another corner of the card whose diagonal ``pair``
    spans: on the circle over that diagonal, a corner's distance from both its ends, not lying
    crosswise to them, and with the card's sides (:data:`CARD_SIDES`)."""
    middle = centres[list(pair)].mean(axis=0)
    radius = float(np.linalg.norm(centres[pair[0]] - centres[pair[1]])) / 2
    lie = {_lie(boxes[end]) for end in pair} - {0}
    for k in other:
        if abs(float(np.linalg.norm(centres[k] - middle)) - radius) > ON_THE_CARD * radius:
            return False
        if any(pair_distance(boxes[k], boxes[end]) is None for end in pair):
            return False
        if -_lie(boxes[k]) in lie:
            return False  # a crosswise index against upright ones: a card laid across
        sides = sorted((centres[end] - centres[k] for end in pair),
                       key=lambda side: float(np.hypot(*side)))
        short, long = (float(np.hypot(*side)) for side in sides)
        if not CARD_SIDES[0] <= long / max(short, 1e-6) <= CARD_SIDES[1]:
            return False
        across, down = abs(float(sides[1][0])), abs(float(sides[1][1]))
        if lie == {-1} and down < LONG_SIDE_ALONG * across or \
                lie == {1} and across < LONG_SIDE_ALONG * down:
            return False  # the long side runs across the card: corners of two cards
    return True


def _lie(box: Sequence[float]) -> int:
    """1 for a box clearly wider than tall, -1 clearly taller than wide, 0 neither."""
    width, height = float(box[2] - box[0]), float(box[3] - box[1])
    if width >= CLEARLY_ORIENTED * height:
        return 1
    if height >= CLEARLY_ORIENTED * width:
        return -1
    return 0
