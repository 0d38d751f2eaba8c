"""The room's verification of one table's chain as its records arrive: :class:`ChainCheck`
holds the unbroken run verified so far (from record 1, or from a recorded retention cut) and
checks the run's next record against it: that it links to the record before, that its content
matches its hash, and that it is signed by the chain's current key, the chain's first key being
one ``room.toml`` trusts for the table. Each failure is given back as (kind, why) for the room
to alarm (:class:`.room.Room`); the check itself reads nothing and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dealer_assist.surveillance.evidence_check import KEYLESS_KINDS
from dealer_assist.surveillance.signed_chain import KEY_KIND, public_key_of
from dealer_assist.surveillance.signing import PublicKey, signature_key_id
from dealer_assist.surveillance.store import GENESIS_HASH, Record, hash_holds


@dataclass
class ChainCheck:
    """One table's chain as verified so far: the unbroken run from record 1 up to ``verified``,
    its last hash, and the key that signs now."""

    table: str
    chain: str
    trusted: tuple[PublicKey, ...] | None  # None: the room does not trust this table
    verified: int = 0
    last_hash: str = GENESIS_HASH
    key: PublicKey | None = None
    gaps_alarmed: set[int] = field(default_factory=set)
    #: each key the verified run took, after the number of the key record introducing it
    keys: list[tuple[int, PublicKey]] = field(default_factory=list)
    first_key_trusted: bool = False  # the chain's first key is one room.toml trusts

    def cross(self, after: int, link: str) -> None:
        """Go on past a recorded cut: record ``after`` comes next and links to ``link``."""
        self.verified, self.last_hash = after - 1, link

    def check(self, record: Record) -> list[tuple[str, str]]:
        """Verify the next record of the run (``verified + 1``); (kind, why) for each
        failure. The run moves on past it either way (each problem is alarmed once)."""
        problems: list[tuple[str, str]] = []
        if record.prev_hash != self.last_hash:
            problems.append(("chain", f"{record.describe()} does not link to record "
                             f"{record.seq - 1} the room holds"))
        if not hash_holds(record):
            problems.append(("chain", f"{record.describe()}: its content does not match its "
                             "hash (altered)"))
        problems.extend(self._signature(record))
        self.verified, self.last_hash = record.seq, record.hash
        return problems

    def _signature(self, record: Record) -> list[tuple[str, str]]:
        if record.kind == KEY_KIND:
            new = public_key_of(record)
            signer = self.key or new
            if new is None or signer is None or record.signature is None \
                    or not signer.verifies(record.hash, record.signature):
                return [("key", f"{record.describe()} introduces a key without a valid "
                         "signature")]
            if self.key is None:
                self.first_key_trusted = self.trusted is not None and new in self.trusted
            self.keys.append((record.seq, new))
            if self.key is None and self.trusted is not None and new not in self.trusted:
                self.key = new
                return [("key", f"{record.describe()}: the chain's first key {new.key_id} is "
                         f"not one the room trusts for {self.table}")]
            self.key = new
            return []
        if record.signature is None:
            if self.key is None or record.kind in KEYLESS_KINDS:
                return []  # before signing began (covered by the first signed record)
            return [("key", f"{record.describe()} carries no signature")]
        if self.key is None:
            return [("key", f"{record.describe()} is signed, but no key record introduces a "
                     "key")]
        if signature_key_id(record.signature) != self.key.key_id \
                or not self.key.verifies(record.hash, record.signature):
            return [("key", f"{record.describe()}: its signature does not verify with key "
                     f"{self.key.key_id}")]
        return []

    def vouches(self, record: Record) -> str | None:
        """Why the room cannot take ``record`` as its table's own (None: it can): the table is
        one ``room.toml`` trusts, the chain's first key one it trusts for that table, the
        record's content matches its hash, and its signature verifies with the key that signs
        at its place in the chain (the last key introduced before it). Unlike :meth:`check`,
        this needs no unbroken run up to the record, so a record after a gap can be vouched for;
        one signed by a key introduced in the gap cannot until the gap is filled."""
        if self.trusted is None:
            return f"room.toml does not trust table {self.table}"
        if not self.keys:
            return "no key record of its chain has been verified yet"
        if not self.first_key_trusted:
            return f"its chain's first key is not one the room trusts for {self.table}"
        if not hash_holds(record):
            return "its content does not match its hash"
        signer = None
        for seq, key in self.keys:
            if seq < record.seq:
                signer = key
        if signer is None:
            return "it comes before its chain's first key"
        if record.signature is None or not signer.verifies(record.hash, record.signature):
            return f"its signature does not verify with key {signer.key_id}"
        return None
