"""The tables of a :class:`.pgstore.PostgresStore` (its module docstring says what each holds):
the statements that set up a store of schema :data:`SCHEMA_VERSION`, each older schema's
upgrade to the next, and the search index's tables with the columns that name a row.
"""

from __future__ import annotations

#: the schema this program sets up and reads (an older one is upgraded when opened)
SCHEMA_VERSION = 3

_SCHEMA = """
CREATE TABLE schema_version (version integer NOT NULL, applied_at text NOT NULL, note text);
CREATE TABLE records (
    chain_no integer NOT NULL, seq bigint NOT NULL, at text NOT NULL, table_id text,
    round_key bigint, round_id text, kind text NOT NULL, body text NOT NULL, file text,
    sha256 text, hash_format integer NOT NULL, prev_hash text NOT NULL, hash text NOT NULL,
    signature text, PRIMARY KEY (chain_no, seq));
CREATE INDEX records_round ON records (chain_no, round_key, seq);
CREATE INDEX records_kind ON records (chain_no, kind, seq);
CREATE TABLE chain_state (
    chain_no serial PRIMARY KEY, table_key text NOT NULL, chain text NOT NULL,
    held bigint NOT NULL DEFAULT 0, last_seq bigint NOT NULL DEFAULT 0,
    next_seq bigint NOT NULL DEFAULT 1, pruned_below bigint NOT NULL DEFAULT 1,
    pruned bigint NOT NULL DEFAULT 0, UNIQUE (table_key, chain));
CREATE TABLE chain_forks (
    chain_no integer NOT NULL, seen_at text NOT NULL, seq bigint NOT NULL, at text NOT NULL,
    table_id text, round_key bigint, round_id text, kind text NOT NULL, body text NOT NULL,
    file text, sha256 text, hash_format integer NOT NULL, prev_hash text NOT NULL,
    hash text NOT NULL, signature text);
CREATE INDEX chain_forks_key ON chain_forks (chain_no, seq);
CREATE TABLE rounds (
    chain_no integer NOT NULL, round_key bigint NOT NULL, table_id text NOT NULL,
    round_id text, dealer text, started_at text NOT NULL, ended_at text, status text NOT NULL,
    note text, net_cents bigint, max_payout_cents bigint, events bigint NOT NULL,
    frames bigint NOT NULL, alarms bigint NOT NULL, first_seq bigint NOT NULL,
    last_seq bigint NOT NULL, PRIMARY KEY (chain_no, round_key));
CREATE INDEX rounds_time ON rounds (started_at, chain_no, round_key);
CREATE INDEX rounds_table_time ON rounds (table_id, started_at);
CREATE INDEX rounds_dealer_time ON rounds (dealer, started_at);
CREATE INDEX rounds_id ON rounds (round_id);
CREATE INDEX rounds_alarmed_time ON rounds (started_at, chain_no, round_key) WHERE alarms > 0;
CREATE INDEX rounds_payout ON rounds (max_payout_cents);
CREATE INDEX rounds_open ON rounds (table_id, chain_no) WHERE status = 'open';
CREATE TABLE round_seats (
    chain_no integer NOT NULL, round_key bigint NOT NULL, seat bigint NOT NULL, player text,
    wager_cents bigint NOT NULL, net_cents bigint NOT NULL, hands bigint NOT NULL,
    PRIMARY KEY (chain_no, round_key, seat));
CREATE INDEX round_seats_seat ON round_seats (seat, chain_no, round_key);
CREATE INDEX round_seats_net ON round_seats (net_cents);
CREATE TABLE payout_lines (
    chain_no integer NOT NULL, round_key bigint NOT NULL, seat bigint NOT NULL,
    kind text NOT NULL, amount_cents bigint NOT NULL);
CREATE INDEX payout_lines_round ON payout_lines (chain_no, round_key);
CREATE TABLE round_amounts (
    chain_no integer NOT NULL, round_key bigint NOT NULL, amount_cents bigint NOT NULL,
    PRIMARY KEY (chain_no, round_key, amount_cents));
CREATE INDEX round_amounts_amount ON round_amounts (amount_cents, chain_no, round_key);
CREATE TABLE round_cards (
    chain_no integer NOT NULL, seq bigint NOT NULL, round_key bigint NOT NULL,
    card text NOT NULL, PRIMARY KEY (chain_no, seq));
CREATE INDEX round_cards_card ON round_cards (card, chain_no, round_key);
CREATE TABLE frames (
    chain_no integer NOT NULL, seq bigint NOT NULL, round_key bigint, table_id text,
    at text NOT NULL, event_index bigint, file text NOT NULL, sha256 text NOT NULL,
    size bigint NOT NULL, media_type text NOT NULL, width bigint, height bigint,
    key boolean NOT NULL, pruned_at text, PRIMARY KEY (chain_no, seq));
CREATE INDEX frames_round ON frames (chain_no, round_key, event_index);
CREATE TABLE alarms (
    chain_no integer NOT NULL, seq bigint NOT NULL, round_key bigint, table_id text,
    at text NOT NULL, kind text NOT NULL, text text NOT NULL, round_id text,
    PRIMARY KEY (chain_no, seq));
CREATE INDEX alarms_kind ON alarms (kind, chain_no, round_key);
CREATE INDEX alarms_round ON alarms (chain_no, round_key);
CREATE INDEX alarms_waiting ON alarms (chain_no, round_id) WHERE round_key IS NULL;
CREATE TABLE operators (
    name text PRIMARY KEY, role text NOT NULL, password text NOT NULL, created_at text NOT NULL);
"""

#: each schema's changes from the one before
_UPGRADES = {2: """
ALTER TABLE alarms ADD COLUMN round_id text;
CREATE INDEX alarms_waiting ON alarms (chain_no, round_id) WHERE round_key IS NULL;
CREATE TABLE round_amounts (
    chain_no integer NOT NULL, round_key bigint NOT NULL, amount_cents bigint NOT NULL,
    PRIMARY KEY (chain_no, round_key, amount_cents));
CREATE INDEX round_amounts_amount ON round_amounts (amount_cents, chain_no, round_key);
""", 3: """
ALTER TABLE chain_state ADD COLUMN pruned_below bigint NOT NULL DEFAULT 1,
    ADD COLUMN pruned bigint NOT NULL DEFAULT 0;
"""}
#: the upgrades after which the index is projected again (the others leave it as it is)
REPROJECTED = {2}

#: the search index's tables, with the columns that name a row of each
INDEX_TABLES = {"rounds": ("chain_no", "round_key"),
                "round_seats": ("chain_no", "round_key", "seat"),
                "payout_lines": ("chain_no", "round_key", "seat"),
                "round_amounts": ("chain_no", "round_key", "amount_cents"),
                "round_cards": ("chain_no", "seq"), "frames": ("chain_no", "seq"),
                "alarms": ("chain_no", "seq")}
TABLES = ("schema_version", "records", "chain_state", "chain_forks", *INDEX_TABLES, "operators")


def schema_statements() -> list[str]:
    """The statements that set up the tables of schema :data:`SCHEMA_VERSION`."""
    return _statements(_SCHEMA)


def upgrade_statements(version: int) -> list[str]:
    """The statements that bring a store of schema ``version - 1`` to ``version``."""
    return _statements(_UPGRADES[version])


def _statements(script: str) -> list[str]:
    return [part.strip() for part in script.split(";") if part.strip()]
