"""The room's retention and legal holds, as records of the room's own chain.

A hold (``floor-hold``: who, why, which round of which table's chain; the record's time is
when) keeps that round's records and frames in the room past the retention policies until it is
lifted (``floor-release``, with who and why too). A prune (``floor-prune``) applies a policy:
the frames policy deletes the room's copies of the frames of ingested chains recorded before
``now - older_than`` and lists the frames it deleted; the records policy cuts each ingested
chain (:mod:`.pgprune`) and lists each cut, so verification (:mod:`.cuts`) knows those records
are gone on purpose. Both skip every round on hold and list the holds they kept. A hold or
release counts only signed by the room's key (:mod:`.room_signing`): one that is not stops
:func:`holds` (and so retention) until ``room verify`` has been looked at.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from dealer_assist.floor.room_signing import RoomSeal
from dealer_assist.floor.wire import MAX_WHY
from dealer_assist.surveillance.interface import RecordStore, RoundQuery
from dealer_assist.surveillance.query import MAX_PRUNE_HOURS, floor_frame_path, floor_round
from dealer_assist.surveillance.signing import PublicKey
from dealer_assist.surveillance.store import RecordingError, format_time

if TYPE_CHECKING:
    from dealer_assist.floor.pgstore import PostgresStore

logger = logging.getLogger(__name__)

HOLD, RELEASE, PRUNE = "floor-hold", "floor-release", "floor-prune"
__all__ = ["MAX_PRUNE_HOURS", "FloorRoundRef", "Hold", "find_round", "holds", "lift_hold",
           "prune_records", "prune_room", "pruned_frames", "put_hold"]


@dataclass(frozen=True, slots=True)
class Hold:
    """A round on hold: table box, chain and the chain's own round key, the round id, and the
    ``floor-hold`` record that put it on hold (its seq, time, who and why)."""

    box: str
    chain: str
    round_key: int
    round: str | None
    seq: int
    at: str
    user: str
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"box": self.box, "chain": self.chain, "round_key": self.round_key,
                "round": self.round, "seq": self.seq, "at": self.at, "user": self.user,
                "why": self.why}


@dataclass(frozen=True, slots=True)
class FloorRoundRef:
    """A round of a table's chain in the room: box, chain, the chain's round key, round id."""

    box: str
    chain: str
    round_key: int
    round: str | None


def find_round(store: PostgresStore, table: str, round_text: str) -> FloorRoundRef:
    """The floor round of ``table`` that ``round_text`` names: the round id as the table wrote
    it, or ``CHAIN/KEY`` where that id names more than one (a table's chain restarted)."""
    chain, slash, key_text = round_text.partition("/")
    if slash:
        if not key_text.isascii() or not key_text.isdigit() or len(key_text) > 18:
            raise ValueError(f"round {round_text!r}: CHAIN/KEY takes a whole number as KEY")
        data = floor_round(store, table, chain, int(key_text))
        if data is None:
            raise ValueError(f"the room holds no round {round_text!r} of table {table!r}")
        return FloorRoundRef(table, chain, data.key, data.round_id)
    matches = store.find_floor_rounds(RoundQuery(table=table, round_id=round_text, limit=5000))
    if not matches:
        raise ValueError(f"the room holds no round {round_text!r} of table {table!r}")
    if len(matches) > 1:
        named = ", ".join(f"{m.chain}/{m.round.round_key}" for m in matches[:10])
        raise ValueError(f"round {round_text!r} of table {table!r} is in more than one chain:"
                         f" name it as CHAIN/KEY, one of {named}")
    found = matches[0]
    return FloorRoundRef(found.box, found.chain, found.round.round_key, found.round.round_id)


def holds(store: PostgresStore, keys: Sequence[PublicKey] | None = None
          ) -> dict[tuple[str, str, int], Hold]:
    """The rounds on hold now, by (box, chain, round key), from the room's chain: its holds
    and releases signed by the room's key, one of ``keys`` (None: the key ``store`` signs
    with); RecordingError naming a record that is not (no hold is certain then)."""
    held: dict[tuple[str, str, int], Hold] = {}
    seal: RoomSeal | None = None
    for record in store.records(kinds=(HOLD, RELEASE)):
        seal = seal or RoomSeal.of(store, keys)
        why = seal.why_untrusted(record)
        if why is not None:
            raise RecordingError(f"the room's {record.describe()} {why}: no hold is certain "
                                 "while it is in doubt (nothing is pruned); run 'dealer-assist"
                                 " room verify'", store.location)
        body = record.object_body()
        try:
            where = (str(body["box"]), str(body["chain"]), int(body["round_key"]))
        except (KeyError, TypeError, ValueError):
            raise RecordingError(f"{record.describe()} does not say which round it holds"
                                 " (altered?): run 'dealer-assist room verify'",
                                 store.location) from None
        if record.kind == HOLD:
            held[where] = Hold(*where, body.get("round"), record.seq, record.at,
                               str(body.get("user", "")), str(body.get("why", "")))
        else:
            held.pop(where, None)
    return held


def _why(why: str) -> str:
    text = why.strip()
    if not text:
        raise ValueError("say why (--why): the reason is recorded with the hold")
    if len(text) > MAX_WHY:
        raise ValueError(f"--why is over {MAX_WHY} characters")
    return text


def put_hold(store: PostgresStore, found: FloorRoundRef, why: str, user: str) -> Hold:
    """Put ``found`` on hold (recorded); a round already on hold is refused, naming its hold."""
    reason = _why(why)
    where = (found.box, found.chain, found.round_key)
    already = holds(store).get(where)
    if already is not None:
        raise ValueError(f"round {found.round} of {found.box} is already on hold since"
                         f" {already.at} ({already.user}: {already.why})")
    record = store.append(HOLD, {"user": user, "why": reason, "box": found.box,
                                 "chain": found.chain, "round_key": found.round_key,
                                 "round": found.round})
    logger.info("round %s of %s put on hold by %s", found.round, found.box, user)
    return Hold(*where, found.round, record.seq, record.at, user, reason)


def lift_hold(store: PostgresStore, found: FloorRoundRef, why: str, user: str) -> Hold:
    """Lift the hold on ``found`` (recorded); the hold it lifts is returned."""
    reason = _why(why)
    where = (found.box, found.chain, found.round_key)
    lifted = holds(store).get(where)
    if lifted is None:
        raise ValueError(f"round {found.round} of {found.box} is not on hold")
    store.append(RELEASE, {"user": user, "why": reason, "box": found.box, "chain": found.chain,
                           "round_key": found.round_key, "round": found.round,
                           "hold": lifted.seq})
    logger.info("hold on round %s of %s lifted by %s", found.round, found.box, user)
    return lifted


def pruned_frames(store: RecordStore) -> set[tuple[str, str, int]]:
    """The frames (box, chain, seq) the room's prunes deleted."""
    gone: set[tuple[str, str, int]] = set()
    for record in store.records(kinds=(PRUNE,)):
        body = record.object_body()
        for item in body.get("frames", []):
            if isinstance(item, list) and len(item) == 3 and isinstance(item[2], int):
                gone.add((str(item[0]), str(item[1]), item[2]))
    return gone


def prune_room(store: PostgresStore, older_than: timedelta | None, user: str,
               now: datetime | None = None, *,
               records_older_than: timedelta | None = None) -> dict[str, Any]:
    """Apply the room's retention: the records policy first (``records_older_than``:
    :func:`prune_records`), then the frames policy (``older_than``: the room's frame copies
    recorded before ``now - older_than`` deleted, but those of rounds on hold; recorded as one
    ``floor-prune`` record; nothing deleted: nothing recorded)."""
    if older_than is None and records_older_than is None:
        raise ValueError("say what to prune: --older-than-hours (frames) and/or"
                         " --records-older-than-hours (records)")
    for policy, option in ((older_than, "--older-than-hours"),
                           (records_older_than, "--records-older-than-hours")):
        if policy is not None and not 0 < policy.total_seconds() <= MAX_PRUNE_HOURS * 3600:
            raise ValueError(f"{option} must be above 0 and at most {MAX_PRUNE_HOURS}"
                             " (100 years)")
    store.check()
    now = now or store.clock()
    held = holds(store)
    answer: dict[str, Any] = {"pruned": 0, "bytes": 0, "cutoff": None, "held": [],
                              "records": 0, "records_cutoff": None, "refused": []}
    if records_older_than is not None:
        answer.update(prune_records(store, records_older_than, user, now, held))
    if older_than is None:
        return answer
    cutoff = format_time(now - older_than)
    gone = pruned_frames(store)
    doomed, kept = [], set()
    for box, chain, seq, round_key, file in store.floor_frames_before(cutoff):
        if (box, chain, seq) in gone:
            continue
        if round_key is not None and (box, chain, round_key) in held:
            kept.add((box, chain, round_key))
            continue
        path = floor_frame_path(store, box, chain, file)
        if path is not None and path.is_file():
            doomed.append((box, chain, seq, path))
    answer.update(pruned=len(doomed), cutoff=cutoff,
                  held=[list(where) for where in sorted(kept)])
    if not doomed:
        return answer
    store.append(PRUNE, {"user": user, "cutoff": cutoff,
                         "policy_seconds": int(older_than.total_seconds()),
                         "frames": [[box, chain, seq] for box, chain, seq, _ in doomed],
                         "held": answer["held"]})
    for *_, path in doomed:  # recorded first: a file gone unrecorded would read as tampering
        answer["bytes"] += path.stat().st_size
        path.unlink()
    return answer


def prune_records(store: PostgresStore, older_than: timedelta, user: str, now: datetime,
                  held: dict[tuple[str, str, int], Hold]) -> dict[str, Any]:
    """Delete the ingested chains' records recorded before ``now - older_than`` but those
    kept (:mod:`.pgprune`: the chains' keys, every round on hold), recorded first as one
    ``floor-prune`` record with each chain's cut (:mod:`.cuts`), committed with the deletions;
    then the deleted records' frame copies (a file left by a crash here is harmless)."""
    cutoff = format_time(now - older_than)
    keys: dict[tuple[str, str], set[int]] = {}
    for box, chain, round_key in held:
        keys.setdefault((box, chain), set()).add(round_key)
    _, cuts, refused = store.prune_records(cutoff, keys, PRUNE, {
        "user": user, "cutoff": cutoff, "policy_seconds": int(older_than.total_seconds()),
        "held": [list(where) for where in sorted(held)]})
    for why in refused:
        logger.warning("retention: %s", why)
    removed = 0
    for cut in cuts:
        for file in cut.files:
            path = floor_frame_path(store, cut.box, cut.chain, file)
            if path is not None and path.is_file():
                removed += path.stat().st_size
                path.unlink()
    return {"records": sum(cut.deleted for cut in cuts), "records_cutoff": cutoff,
            "refused": refused, "bytes": removed}
