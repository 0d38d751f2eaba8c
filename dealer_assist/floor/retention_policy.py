"""The room's retention policy (``room.toml`` ``[retention]``) applied on a schedule: at start
and every ``every_s`` until stopped, each time in a thread of its own with a store of its own
(the room's ingest goes on meanwhile), recorded as ``room prune`` records it (by
:data:`RETENTION_USER`, :func:`.retention.prune_room`). A failure is logged, never raised: the
next application tries again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from dealer_assist.floor.config import RetentionPolicy
from dealer_assist.surveillance.interface import RecordStore
from dealer_assist.surveillance.store import RecordingError

logger = logging.getLogger(__name__)

#: the user the room's policy prunes as (in its ``floor-prune`` records)
RETENTION_USER = "room retention policy"
#: how often ``room serve`` applies the policy by default (seconds)
RETENTION_EVERY_S = 3600.0


class RetentionSchedule:
    """Applies ``policy`` to the store ``open_store`` opens, now and every ``every_s``;
    ``runs``: the applications that finished (failed ones not counted)."""

    def __init__(self, open_store: Callable[[], RecordStore], policy: RetentionPolicy,
                 every_s: float = RETENTION_EVERY_S):
        self.open_store = open_store
        self.policy = policy
        self.every_s = every_s
        self.runs = 0

    async def keep(self, stop: asyncio.Event) -> None:
        """Apply the policy now and every ``every_s`` until ``stop`` is set (an application
        under way finishes: its thread cannot be cut)."""
        while not stop.is_set():
            await asyncio.to_thread(self.apply)
            try:
                await asyncio.wait_for(stop.wait(), self.every_s)
            except TimeoutError:
                pass

    def apply(self) -> None:
        """One application of the policy, in its own store; failures logged, never raised."""
        from dealer_assist.floor import retention

        try:
            store = self.open_store()
            try:
                result = retention.prune_room(
                    store, self.policy.frames, RETENTION_USER,  # type: ignore[arg-type]
                    records_older_than=self.policy.records)
            finally:
                store.close()
        except (RecordingError, ValueError) as error:
            logger.error("the room's retention policy could not be applied (tried again in "
                         "%.0f s): %s", self.every_s, error)
            return
        except Exception:  # a bug: logged with its trace, ingest goes on
            logger.exception("the room's retention policy failed")
            return
        self.runs += 1
        logger.info("retention policy applied: %s records and %s frames pruned (%s bytes of "
                    "frame files)", result["records"], result["pruned"], result["bytes"])
