"""``dealer-assist room serve``: the real command, as a process, keeps the floor in PostgreSQL
as room.toml names it and serves the page; stopped with SIGINT, it ends cleanly. ``room
operator`` keeps the page's logins in that store."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from dealer_assist.floor.pgstore import PostgresStore
from tests.floor.broker import Broker
from tests.floor.floor import BoxTable, RoomBackend, all_arrived, forward, wait_for
from tests.postgres import fresh_schema, server_url

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def broker(tmp_path: Path):
    running = Broker(tmp_path / "jetstream").start()
    yield running
    running.stop()


def test_room_serve_consumes_into_postgres_and_serves_the_page(tmp_path: Path, broker: Broker):
    table = BoxTable(tmp_path / "boxes", "T1")
    (tmp_path / "T1.pub").write_text(table.signer.public.text + "\n")
    with fresh_schema("serve") as schema:
        config = tmp_path / "room.toml"
        config.write_text(f'[postgres]\nurl = "{server_url()}"\nschema = "{schema}"\n'
                          f'frames = "frames"\n[nats]\nurl = "{broker.url}"\n'
                          '[page]\nport = 0\n[tables]\nT1 = "T1.pub"\n')
        made = subprocess.run(
            [sys.executable, "-m", "dealer_assist", "room", "keygen", "--config", str(config)],
            cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert made.returncode == 0, made.stderr
        added = subprocess.run(
            [sys.executable, "-m", "dealer_assist", "room", "operator", "--config", str(config),
             "add", "olga", "--role", "operator", "--password-stdin"], cwd=ROOT,
            input="correct horse battery\n", capture_output=True, text=True, timeout=120)
        assert added.returncode == 0, added.stderr
        listed = subprocess.run(
            [sys.executable, "-m", "dealer_assist", "room", "operator", "--config", str(config),
             "list"], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert listed.stdout.split() == ["olga", "operator"]
        room = subprocess.Popen(
            [sys.executable, "-m", "dealer_assist", "room", "serve", "--config", str(config)],
            cwd=ROOT, stderr=subprocess.PIPE, text=True)
        host, _ = forward([table], broker.url)
        try:
            assert room.stderr is not None
            port = None
            deadline = time.monotonic() + 60
            while port is None and time.monotonic() < deadline:
                line = room.stderr.readline()
                found = re.search(r"surveillance page on http://127\.0\.0\.1:(\d+)/", line)
                port = int(found[1]) if found else None
            assert port, "room serve printed no page address"
            # what it logs from here on is drained, so a full pipe never blocks it
            threading.Thread(target=room.stderr.read, daemon=True).start()
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as answer:
                assert answer.status == 200
            table.play(1)
            backend = RoomBackend(tmp_path / "frames", (server_url(), schema))
            assert wait_for(all_arrived(backend, [table]))
            store = backend.open()
            try:
                assert isinstance(store, PostgresStore)
                assert list(store.records(kinds=("floor-alarm",))) == []
            finally:
                store.close()
        finally:
            host.stop()
            room.send_signal(signal.SIGINT)
            assert room.wait(30) in (0, 130)
