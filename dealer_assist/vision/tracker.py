"""Following cards across frames and turning them into events.

Rules (all counted in frames, so they hold for any frame rate):
- An observation of a track's code belongs to it when its point lies within ``match_radius`` of
  the track's, or when one of its corner indices lies where one of the track's did: a card's
  point is its centre while both corners are read and a corner while one is, so the point jumps
  by half a card as the next card of a fan covers a corner, and the corners do not move. One
  read as another code that matched a shoe card in flight belongs to it only by a corner: the
  next card of a cascade laid tight has its point a fifth of a card from the one under it. A
  card not yet confirmed, seen last by one index matched to a shoe card in flight, and then by
  one index matched to it again that could be its other corner (within the pairing's reach,
  :func:`.pair_distance`; after every other observation has found its card) is that card seen
  by its other corner: the first is covered or unread once the next card lands.
  A corner of a card already matched in this frame that reads as another card is passed over:
  it is that card's other reading, not a new card (the shoe, or a change over the whole card,
  decides). An observation of three or four indices (a design with one at every corner) is
  passed over so only where fewer than two of them lie elsewhere: a card laid over another's
  covered corner keeps a pair of its own.
  An index half over a corner the card was seen by in this frame is not one of its corners but
  another index beside it (a card of a cascade laid tight).
- A card becomes an event (``APPEARED``) only once seen at the same place in ``stable_frames``
  frames with at most one frame missed between sightings: a card sliding across the felt or a
  flicker of the detector is not a card, and a card read just above and just below the
  reader's confidence in turn still becomes one. A card checked against the shoe's cards in
  flight and matched (verdict "match") in ``matched_frames`` such sightings becomes one then:
  the shoe names it too, so a flicker would have to read as a card the shoe has just dealt, and
  a card of a cascade covered by the next one soon after it lands is still seen landing.
- A card appears "mismatch" (surely none of the shoe's cards in flight: the switched-card
  alarm) only where every sighting that made it a card said so; where an earlier one did not
  (the card it is the other corner of was still in flight then), it appears "unsure".
- A confirmed card that goes unseen (a hand passing over it) keeps its identity for
  ``grace_frames``; seen again at its place with its code, nothing new is reported.
- A confirmed card unseen for longer than ``grace_frames`` is reported ``REMOVED``.
- A confirmed card read as another code at its place for ``change_frames`` sightings in a row is
  reported ``CHANGED`` (with the previous code): a swapped card, or a misread the table must
  question. It takes longer than appearing because a card that has been read right for a while
  and then reads otherwise is more often misread (clubs for spades under glare) than swapped;
  a swapped card stays swapped, so waiting about a second loses nothing.
- An observation ``laid_over`` a confirmed card (checked: it matched a shoe card in flight that
  the card is not) continues no confirmed track of another code and is no other reading of one:
  it is a new card (a split's next card, a double laid across), and the card under it keeps its
  track until unseen for ``grace_frames``.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

import numpy as np

from dealer_assist.vision.detector import (
    SAME_INDEX,
    SAME_PLACE,
    BoxOverlaps,
    CardObservation,
    pair_distance,
    same_index,
    same_place,
)
from dealer_assist.vision.verdict import Verdict

Box = tuple[float, float, float, float]
#: Frames an unconfirmed card may go unseen between sightings and still become a card.
_MISSED_ALLOWED = 1
#: Corner boxes a track remembers (a card has two; room for a re-seated box or two).
_CORNERS_KEPT = 4


class EventKind(enum.Enum):
    APPEARED = "appeared"
    """A card is stably on the table."""
    REMOVED = "removed"
    """A confirmed card has not been seen for longer than the grace period."""
    CHANGED = "changed"
    """A confirmed card now reads as another card, stably."""


@dataclass(frozen=True)
class CardEvent:
    """Something a table must hear about: which card, where, at which frame, on which track."""

    kind: EventKind
    card: str
    x: float
    y: float
    frame: int
    track: int
    previous: str | None = None
    sideways: bool = False  #: the card lies crosswise (a double's card), as last read
    #: checked against the shoe's cards in flight when it appeared: "match", "mismatch" or
    #: "unsure", against ``checked`` (None: named, not checked)
    verdict: str | None = None
    checked: str | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"event": self.kind.value, "card": self.card,
                                  "x": round(self.x, 1), "y": round(self.y, 1),
                                  "frame": self.frame, "track": self.track}
        if self.sideways:
            out["sideways"] = True
        if self.previous is not None:
            out["previous"] = self.previous
        if self.verdict is not None:
            out["verdict"], out["checked"] = self.verdict, self.checked
        return out


@dataclass
class _Track:
    track_id: int
    card: str
    x: float
    y: float
    hits: int
    last_seen: int
    confirmed: bool = False
    matched_hits: int = 0  # sightings in a row of ``card`` matched to a shoe card in flight
    mismatched_throughout: bool = True  # every sighting of ``card`` said "mismatch"
    rival: str | None = None
    rival_hits: int = 0
    corners: list[Box] = field(default_factory=list)
    latest: tuple[Box, ...] = ()  # the index boxes of its latest sighting
    sideways: bool = False
    verdict: str | None = None
    checked: str | None = None
    confirmed_frame: int = -1  # the frame it appeared in

    def shares_corner(self, obs: CardObservation) -> bool:
        return any(same_place(a, b) for a in self.corners for b in obs.index_boxes)

    def other_corner_distance(self, obs: CardObservation) -> float | None:
        """How far ``obs`` lies from this card's index, in index sizes, where it could be this
        card's other corner (:func:`.pair_distance`): this card not confirmed, seen last by one
        index matched to a shoe card, ``obs`` one index matched to the same code. None where
        any of that does not hold."""
        if self.confirmed or not self.matched_hits or len(self.latest) != 1 \
                or len(obs.index_boxes) != 1 or obs.verdict != Verdict.MATCH.value \
                or obs.card != self.card:
            return None
        return pair_distance(self.latest[0], obs.index_boxes[0])

    def at_unseen_corners(self, obs: CardObservation) -> set[int]:
        """Which of ``obs``'s indices lie at a corner of this card other than those of its
        latest sighting, or are one of those boxed twice (an index only half over one of those
        is another index beside it)."""
        return {k for k, b in enumerate(obs.index_boxes)
                if any(same_index(a, b) if a in self.latest else same_place(a, b)
                       for a in self.corners)}

    def remember(self, obs: CardObservation) -> None:
        if not self.confirmed:  # the check its appearance carries: the latest before it
            self.verdict, self.checked = obs.verdict, obs.checked
            self.mismatched_throughout &= obs.verdict == Verdict.MISMATCH.value
        fresh = list(obs.index_boxes)
        kept = [c for c in self.corners if not any(same_place(c, b) for b in fresh)]
        self.corners = (kept + fresh)[-_CORNERS_KEPT:]
        self.latest = obs.index_boxes


class CardTracker:
    """Feed it each frame's observations in order; it returns the events that frame causes.

    ``match_radius`` (pixels) is how far a card's point may move between frames and still be the
    same card, read as the same code; keep it under the spacing of two cards in a hand's fan.
    """

    def __init__(self, stable_frames: int = 3, grace_frames: int = 45,
                 match_radius: float = 25.0, change_frames: int = 8,
                 matched_frames: int = 2) -> None:
        if stable_frames < 1 or grace_frames < 0 or match_radius <= 0 or change_frames < 1 \
                or matched_frames < 1:
            raise ValueError(
                f"need stable_frames >= 1, grace_frames >= 0, match_radius > 0, "
                f"change_frames >= 1, matched_frames >= 1; got {stable_frames}, "
                f"{grace_frames}, {match_radius}, {change_frames}, {matched_frames}")
        self.stable_frames = stable_frames
        self.matched_frames = matched_frames
        self.change_frames = change_frames
        self.grace_frames = grace_frames
        self.match_radius = match_radius
        self._tracks: list[_Track] = []
        self._next_id = 1
        self._last_frame: int | None = None

    @property
    def confirmed(self) -> list[tuple[int, str, float, float]]:
        """The cards now on the table: ``(track, card, x, y)``."""
        return [(t.track_id, t.card, t.x, t.y) for t in self._tracks if t.confirmed]

    def confirmed_at_each(self, boxes: np.ndarray
                          ) -> list[tuple[str, str | None, int] | None]:
        """For each of ``boxes`` ``(N, 4)``, the confirmed card one of whose corners lies there
        (where several of ``boxes`` lie at one corner, the one that overlaps it best, and any
        that is that index boxed twice: the others are indices beside it): its code, the verdict
        it appeared with and its track id; None where none does."""
        owners = [track for track in self._tracks if track.confirmed for _ in track.corners]
        if not owners or len(boxes) == 0:
            return [None] * len(boxes)
        corners = np.array([c for t in self._tracks if t.confirmed for c in t.corners])
        pairs = BoxOverlaps.of(boxes, corners)
        hits, overlaps = pairs.by(SAME_PLACE), pairs.ious()
        best = overlaps == np.where(hits, overlaps, -1.0).max(axis=0, keepdims=True)
        hits &= best | pairs.by(SAME_INDEX)
        first = hits.argmax(axis=1).tolist()  # corners lie in the tracks' order: the first
        return [(owners[j].card, owners[j].verdict, owners[j].track_id) if hit else None
                for j, hit in zip(first, np.any(hits, axis=1).tolist(), strict=True)]

    def confirmed_near(self, point: tuple[float, float], reach: float) -> list[str]:
        """The codes of the confirmed cards with a corner centred within ``reach`` pixels of
        ``point``."""
        return [t.card for t in self._tracks if t.confirmed and _corner_within(t, point, reach)]

    def matched_near(self, point: tuple[float, float], reach: float, since: int) -> bool:
        """Whether a card that appeared matched to a shoe card in flight, in frame ``since`` or
        later, has a corner centred within ``reach`` pixels of ``point``."""
        return any(t.confirmed and t.confirmed_frame >= since and t.verdict == Verdict.MATCH.value
                   and _corner_within(t, point, reach) for t in self._tracks)

    def update(self, frame: int, observations: list[CardObservation]) -> list[CardEvent]:
        """Advance to ``frame`` (strictly increasing) with what the detector saw in it."""
        if self._last_frame is not None and frame <= self._last_frame:
            raise ValueError(f"frame {frame} does not follow frame {self._last_frame}")
        self._last_frame = frame
        events: list[CardEvent] = []
        unmatched = list(range(len(observations)))
        # same code first, nearest first; then a different code at a track's place (a change)
        for want_same in (True, False):
            pairs = sorted(
                (math.dist((t.x, t.y), (observations[i].x, observations[i].y)), ti, i)
                for ti, t in enumerate(self._tracks) if t.last_seen != frame
                for i in unmatched
                if (observations[i].card == t.card) == want_same
                and not (observations[i].laid_over and t.confirmed and not want_same)
            )
            for distance, ti, i in pairs:
                track = self._tracks[ti]
                if track.last_seen == frame or i not in unmatched:
                    continue
                seen = observations[i]
                # by its point alone another code continues a card only where it matched no
                # shoe card in flight: the next card of a cascade laid tight is a card of its own
                near = distance <= self.match_radius and (
                    want_same or seen.verdict != Verdict.MATCH.value)
                if not (near or track.shares_corner(seen)):
                    continue
                unmatched.remove(i)
                events += self._seen(track, seen, frame)
        # then a card matched by one index and seen matched by its other, nearest first
        links = sorted((apart, ti, i) for ti, t in enumerate(self._tracks)
                       if t.last_seen != frame for i in unmatched
                       if (apart := t.other_corner_distance(observations[i])) is not None)
        for _, ti, i in links:
            track = self._tracks[ti]
            if track.last_seen != frame and i in unmatched:
                unmatched.remove(i)
                events += self._seen(track, observations[i], frame)
        for i in unmatched:
            obs = observations[i]
            if not obs.laid_over and _read_otherwise(obs, [t for t in self._tracks
                                                           if t.last_seen == frame]):
                continue  # the other corner of a card already seen, read otherwise
            track = _Track(self._next_id, obs.card, obs.x, obs.y, hits=1, last_seen=frame,
                           matched_hits=int(obs.verdict == Verdict.MATCH.value),
                           sideways=obs.sideways)
            track.remember(obs)
            self._next_id += 1
            self._tracks.append(track)
            events += self._maybe_confirm(track, frame)
        events += self._expire(frame)
        return events

    def _seen(self, track: _Track, obs: CardObservation, frame: int) -> list[CardEvent]:
        recent = frame - track.last_seen <= _MISSED_ALLOWED + 1
        track.last_seen = frame
        track.x, track.y = obs.x, obs.y
        track.sideways = obs.sideways
        track.remember(obs)
        if obs.card == track.card:
            track.rival, track.rival_hits = None, 0
            track.hits = track.hits + 1 if recent or track.confirmed else 1
            matched = obs.verdict == Verdict.MATCH.value
            track.matched_hits = track.matched_hits + 1 if matched else 0
            return self._maybe_confirm(track, frame)
        if not track.confirmed:  # an unconfirmed track simply restarts as the new reading
            track.card, track.hits = obs.card, 1
            track.matched_hits = int(obs.verdict == Verdict.MATCH.value)
            track.mismatched_throughout = obs.verdict == Verdict.MISMATCH.value
            return self._maybe_confirm(track, frame)
        if track.rival == obs.card:
            track.rival_hits += 1
        else:
            track.rival, track.rival_hits = obs.card, 1
        if track.rival_hits < self.change_frames:
            return []
        previous, track.card = track.card, obs.card
        track.rival, track.rival_hits = None, 0
        return [CardEvent(EventKind.CHANGED, track.card, track.x, track.y, frame, track.track_id,
                          previous, track.sideways)]

    def _maybe_confirm(self, track: _Track, frame: int) -> list[CardEvent]:
        if track.confirmed or (track.hits < self.stable_frames
                               and track.matched_hits < self.matched_frames):
            return []
        track.confirmed, track.confirmed_frame = True, frame
        if track.verdict == Verdict.MISMATCH.value and not track.mismatched_throughout:
            track.verdict = Verdict.UNSURE.value
        return [CardEvent(EventKind.APPEARED, track.card, track.x, track.y, frame, track.track_id,
                          sideways=track.sideways, verdict=track.verdict, checked=track.checked)]

    def _expire(self, frame: int) -> list[CardEvent]:
        events, kept = [], []
        for track in self._tracks:
            unseen = frame - track.last_seen
            if track.confirmed and unseen > self.grace_frames:
                events.append(CardEvent(EventKind.REMOVED, track.card, track.x, track.y, frame,
                                        track.track_id, sideways=track.sideways))
            elif not track.confirmed and unseen > _MISSED_ALLOWED:
                continue  # a flicker that never became a card
            else:
                kept.append(track)
        self._tracks = kept
        return events


def _read_otherwise(obs: CardObservation, seen: list[_Track]) -> bool:
    """Whether ``obs`` is no card of its own but corners of cards ``seen`` in this frame read
    as another code: one of its indices (of one or two) lies at an unseen corner of one of them;
    of three or four (a design with an index at every corner), fewer than two lie elsewhere, so
    no pair of its own is left (its other corners may lie over a covered card's)."""
    at_theirs: set[int] = set().union(*(t.at_unseen_corners(obs) for t in seen))
    boxes = len(obs.index_boxes)
    return bool(at_theirs) and boxes - len(at_theirs) < min(2, boxes)


def _corner_within(track: _Track, point: tuple[float, float], reach: float) -> bool:
    """Whether a corner of ``track`` is centred within ``reach`` pixels of ``point``."""
    return any(math.dist(point, ((c[0] + c[2]) / 2, (c[1] + c[3]) / 2)) <= reach
               for c in track.corners)
