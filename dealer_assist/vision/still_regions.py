"""Card regions a fixed camera sees unchanged: where the detector found indices in a region and
its pixels have not moved since, those boxes stand for a few frames instead of running the
detector on it again, and so do the reader's probabilities of those indices it read surely as
the cards on the felt there (:meth:`StillRead.settle`); every other index is read afresh. A card
swapped in place moves its region's pixels, so the region is searched and read again at once;
where the pixels hid a swap, its next search (at most :data:`REUSES` frames later) reads the
new card.

A region's boxes stand only while it is *settled* (:meth:`StillRead.settle`: every index found
in it is a card already on the felt, read as that card or keeping the shoe's code it appeared
as) and *still*: the same rectangle as when
it was searched, no mean of its :data:`BLOCK` x :data:`BLOCK` pixel blocks, in any colour, more
than :data:`LEVEL` from the one it had then; and only once :data:`CALM` searches after a change
found it so. A region where a landing card's index is found is searched in every frame, so that
each frame's reading of the new card comes from a box of its own (the check's sightings of it
stay independent); one whose index was missed is looked for again in the :data:`CALM` searches.
An index read as no index is not a found one (the check drops it before settling): its box may
stand, read afresh in every frame, until it reads as an index.
A settled region is searched again in one frame of every :data:`REUSES` + 1 even when still,
so that a detector miss is not kept for long; regions take those frames in turn as they are
first seen (each its own *slot*), so that a frame searches a share of the still regions rather
than all of them at once. Its boxes never stand more than :data:`REUSES` times in a row,
whichever frames it is looked up in.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import cv2
import numpy as np

#: Side in pixels of the blocks whose means are compared.
BLOCK = 4
#: The most a block's mean may move (levels of 255, any colour) for a region to count as still.
#: Measured on the independent renderer's frames (40 deals, 1,275 regions without a new card):
#: sensor noise and JPEG moved the largest block mean by at most 38 between frames without a
#: motion streak (99th percentile 35); a region a card landed in moved by 116 or more in 99%.
LEVEL = 40
#: How many frames in a row a still region's boxes may stand before it is searched again (a
#: third of a second at 30 frames/s). A search of unchanged pixels finds what the last one found
#: but for noise, so it is a safety net, not a second chance; at 9 against 3 the check took
#: 0.73-0.82 of its time on the demo's deals, at 720p and 3K, with the same events (model card,
#: "Still regions searched every tenth frame").
REUSES = 9
#: Pixels a region may lie from one searched and count as it (same size).
SHIFT = 8
#: Searches of a changed region, after the one that found it changed, that must find it settled
#: and still before its boxes stand: a card landing there whose index the detector missed in
#: one frame is looked for again in the next ones.
CALM = 2

Region = tuple[int, int, int, int]
#: The reader's probabilities of one index: ranks and suits.
Reading = tuple[np.ndarray, np.ndarray]
#: A frame's readings of its boxes: ranks ``(N, 14)``, suits ``(N, 4)``, and which of them
#: read surely as the card on the felt there ``(N,)`` (those may stand with their boxes).
Sure = tuple[np.ndarray, np.ndarray, np.ndarray]


def box_key(box: np.ndarray) -> bytes:
    """One index box ``(4,)`` as a key: a kept box is the searched one's exact copy."""
    return np.ascontiguousarray(box, np.float32).tobytes()


@dataclass
class _Searched:
    blocks: np.ndarray
    least: float
    boxes: np.ndarray
    scores: np.ndarray
    read: int  #: the latest read that searched the region or kept its boxes
    #: the reads that search it though still: those whose number is this modulo the memory's
    #: ``reuses`` + 1
    slot: int
    reused: int = 0  #: its boxes' stands since it was searched
    settled: bool = False
    #: searches in a row before this one that found the region settled, its pixels still since
    calm: int = 0
    #: the reader's probabilities (ranks, suits) of the boxes found here read surely as the
    #: cards on the felt there, by box (:func:`box_key`), as the latest settling read gave them
    readings: dict[bytes, Reading] = field(default_factory=dict)


def block_means(frame: np.ndarray, region: Region) -> np.ndarray:
    """The means of ``region``'s :data:`BLOCK`-pixel blocks of ``frame``, per colour (int16)."""
    x0, y0, x1, y1 = region
    size = (max(1, (x1 - x0) // BLOCK), max(1, (y1 - y0) // BLOCK))
    return cv2.resize(frame[y0:y1, x0:x1], size, interpolation=cv2.INTER_AREA).astype(np.int16)


class StillRegions:
    """What the detector found in each region of one camera's recent frames. Each frame's read
    goes through its own :meth:`begin` (frames read at once share the memory safely, and a
    frame's reading settles only the regions that frame searched or kept)."""

    def __init__(self, level: int = LEVEL, reuses: int = REUSES):
        self.level, self.reuses = level, reuses
        self._searched: dict[Region, _Searched] = {}
        self._lock = threading.Lock()
        self._reads = 0
        self._next_slot = 0
        #: how many times a region's boxes stood instead of a search, and how many searches
        self.kept = self.searches = 0

    def begin(self) -> StillRead:
        """A frame's read of the memory."""
        with self._lock:
            self._reads += 1
            return StillRead(self, self._reads)

    def keep_only(self, regions: list[Region]) -> None:
        """Forget the regions a frame no longer has (none of ``regions`` counts as them)."""
        with self._lock:
            kept = {found[0] for found in map(self._matching, regions) if found is not None}
            for region in set(self._searched) - kept:
                del self._searched[region]

    def _boxes_at(self, read: int, frame: np.ndarray, region: Region, least: float,
                  readings: dict[bytes, Reading]) -> tuple[np.ndarray, np.ndarray] | None:
        with self._lock:
            found = self._matching(region)
            if found is None or not self._may_stand(found[1], least, read):
                return None
            searched_at, searched = found
        if int(np.abs(block_means(frame, searched_at) - searched.blocks).max()) > self.level:
            return None
        with self._lock:
            if self._searched.get(searched_at) is not searched or \
                    not self._may_stand(searched, least, read):
                return None  # searched or unsettled meanwhile, or used up by another frame
            searched.reused += 1
            searched.read = max(searched.read, read)
            self.kept += 1
            readings.update(searched.readings)
            return searched.boxes.copy(), searched.scores.copy()

    def _may_stand(self, searched: _Searched, least: float, read: int) -> bool:
        return searched.settled and searched.calm >= CALM and searched.least == least and \
            searched.reused < self.reuses and read % (self.reuses + 1) != searched.slot

    def _remember(self, read: int, frame: np.ndarray, region: Region, least: float,
                  boxes: np.ndarray, scores: np.ndarray) -> None:
        blocks = block_means(frame, region)
        with self._lock:
            self.searches += 1
            old = self._matching(region)
            if old is None:
                slot, self._next_slot = self._next_slot, (self._next_slot + 1) % (self.reuses + 1)
            else:
                slot = old[1].slot
            searched = _Searched(blocks, least, boxes.copy(), scores.copy(), read, slot)
            if old is not None:
                del self._searched[old[0]]
                if old[1].settled and old[1].blocks.shape == searched.blocks.shape and \
                        int(np.abs(old[1].blocks - searched.blocks).max()) <= self.level:
                    searched.calm = old[1].calm + 1
            self._searched[region] = searched

    def _settle(self, read: int, boxes: np.ndarray, settled: np.ndarray,
                sure: Sure | None) -> None:
        centres = (boxes[:, :2] + boxes[:, 2:]) / 2 if len(boxes) else np.zeros((0, 2))
        rows = {} if sure is None else \
            {box_key(box): i for i, box in enumerate(boxes) if sure[2][i]}
        with self._lock:
            for (x0, y0, x1, y1), searched in self._searched.items():
                if searched.read != read:
                    continue  # searched or kept by a later frame's read: settled by its own
                inside = (centres[:, 0] >= x0) & (centres[:, 0] < x1) & \
                    (centres[:, 1] >= y0) & (centres[:, 1] < y1)
                searched.settled = bool(settled[inside].all())
                if sure is not None:
                    searched.readings = {
                        key: (sure[0][i].copy(), sure[1][i].copy())
                        for key in map(box_key, searched.boxes)
                        if (i := rows.get(key)) is not None}

    def _matching(self, region: Region) -> tuple[Region, _Searched] | None:
        """The searched region ``region`` counts as (the same one first), under the lock."""
        if region in self._searched:
            return region, self._searched[region]
        x0, y0, x1, y1 = region
        for (a0, b0, a1, b1), searched in self._searched.items():
            if a1 - a0 == x1 - x0 and b1 - b0 == y1 - y0 and \
                    abs(a0 - x0) <= SHIFT and abs(b0 - y0) <= SHIFT:
                return (a0, b0, a1, b1), searched
        return None


@dataclass(frozen=True)
class StillRead:
    """One frame's read of a :class:`StillRegions` memory."""

    memory: StillRegions
    number: int
    #: the readings of the boxes this read kept, by box (:func:`box_key`)
    kept: dict[bytes, Reading] = field(default_factory=dict, compare=False, repr=False)

    def boxes_at(self, frame: np.ndarray, region: Region, least: float,
                 ) -> tuple[np.ndarray, np.ndarray] | None:
        """The boxes and scores found in ``region`` of ``frame`` (searched down to ``least``)
        where the region searched there is settled, calm and still, this is not its slot's
        frame and they have not stood ``reuses`` times in a row; else None (search it, then
        :meth:`remember`). A region of the same size at most :data:`SHIFT` pixels from one
        searched counts as that one (the regions' edges follow the paper's, which noise moves
        by a pixel or two): its indices lie well inside both."""
        return self.memory._boxes_at(self.number, frame, region, least, self.kept)

    def readings(self, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Which of this frame's index boxes ``(N, 4)`` this read kept with their readings
        ``(N,)`` bool, and those readings: ranks ``(K, 14)`` and suits ``(K, 4)`` in the boxes'
        order (K of them, empty arrays where none; the rest are to be read)."""
        found = [self.kept.get(box_key(box)) for box in boxes]
        known = np.array([reading is not None for reading in found], bool)
        kept = [reading for reading in found if reading is not None]
        if not kept:
            return known, np.zeros((0, 0), np.float32), np.zeros((0, 0), np.float32)
        ranks, suits = zip(*kept, strict=True)
        return known, np.stack(ranks), np.stack(suits)

    def remember(self, frame: np.ndarray, region: Region, least: float, boxes: np.ndarray,
                 scores: np.ndarray) -> None:
        """``region`` of ``frame`` searched now, and what was found in it."""
        self.memory._remember(self.number, frame, region, least, boxes, scores)

    def settle(self, boxes: np.ndarray, settled: np.ndarray, sure: Sure | None = None,
               ) -> None:
        """This frame's index boxes ``(N, 4)`` and which of them are cards on the felt read as
        themselves ``(N,)``: each region this read searched or kept (and no later one has) is
        settled where every box centred in it is. ``sure``: the frame's readings of the boxes
        and which are read surely as the card on the felt there; each such region's boxes then
        stand with those readings and no others (until a later read settles it, or it is
        searched again)."""
        self.memory._settle(self.number, boxes, settled, sure)
