"""A table reading a plain ASCII shoe (``protocol = "ascii"``) over ``socket://``: a real
``dealer-assist table`` process, the shoe a TCP server in this test writing the shoe's text.

Such a shoe never says it was loaded; its decoder assumes a shoe when it starts reading, at every
start of the table. That assumption is no reshuffle: the pack count the table rebuilt from its
journal stands, so a card beyond the shoe's composition is still caught after a restart.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

from tests.table.test_crash import Table, wait_view
from tests.table.test_table_cli import post, sign_in


class AsciiShoe:
    """A TCP server the table connects to as its shoe (again after a restart)."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"socket://127.0.0.1:{self.server.getsockname()[1]}"
        self.connection: socket.socket | None = None
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.connection = connection

    def send(self, text: str) -> None:
        deadline = time.monotonic() + 10
        while self.connection is None:
            assert time.monotonic() < deadline, "the table never opened the shoe"
            time.sleep(0.02)
        self.connection.sendall(text.encode("ascii"))

    def drop(self) -> None:
        """The table went away: its connection is done."""
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def close(self) -> None:
        self.drop()
        self.server.close()


def ascii_config(tmp_path: Path, url: str) -> Path:
    config = tmp_path / "table.toml"
    config.write_text(
        f'table_id = "T9"\n[rules]\npreset = "h17-ddd-2"\n'
        f'[shoe]\nurl = "{url}"\nprotocol = "ascii"\ndecks = 2\n'
        '[recording]\ndir = "rec"\n[screen]\nport = 0\n')
    return config


def test_a_restart_keeps_an_ascii_shoes_pack_count_so_a_card_beyond_it_is_caught(tmp_path):
    """Two decks hold two 9S. Round 1 deals both and settles; the table restarts; round 2 deals a
    third. Without a restart it was refused; after one, the decoder's assumed load cleared the
    pack count the journal had rebuilt, and the third 9S was recorded and paid on."""
    shoe = AsciiShoe()
    try:
        table = Table(ascii_config(tmp_path, shoe.url))
        sign_in(table.screen)
        post(table.screen, {"type": "bet", "seat": 1, "amount": "10"})
        for code in ("9S", "9S", "5D", "KH"):  # seat 1 9S 5D; the dealer 9S KH
            shoe.send(f"[Game]<Card:{code}> ")
        wait_view(table, lambda v: v["round"] is not None
                  and v["round"]["dealer"]["cards"][:1] == ["9S"]
                  and len(v["round"]["seats"][0]["hands"][0]["cards"]) == 2)
        post(table.screen, {"type": "decide", "seat": 1, "action": "stand"})
        view = wait_view(table, lambda v: v["rounds_played"] == 1)
        assert view["rounds_played"] == 1 and view["settlement"]["net"] == "-10.00"

        table.stop()
        shoe.drop()
        table.start()
        post(table.screen, {"type": "bet", "seat": 1, "amount": "10"})
        shoe.send("[Game]<Card:9S> ")  # copy 3 of two decks' two
        view = wait_view(table, lambda v: any(
            a["kind"] == "beyond_composition" for a in v["alarms"]), timeout=5)
        beyond = [a["text"] for a in view["alarms"] if a["kind"] == "beyond_composition"]
        assert beyond and beyond[0].startswith("9S is copy 3 out of this shoe")
        assert view["round"]["seats"][0]["hands"][0]["cards"] == []  # not recorded
        table.stop()
    finally:
        shoe.close()
