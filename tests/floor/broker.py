"""A real ``nats-server -js`` of the test's own, on a free port with its own store directory, so
a test can stop and restart it (never the machine's broker on 4222)."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Broker:
    """``nats-server -js`` on 127.0.0.1:``port`` storing under ``store``."""

    def __init__(self, store: Path, port: int | None = None, *, config: Path | None = None):
        self.store = store
        self.port = port or free_port()
        self.config = config  # a nats-server.conf (its listen and store_dir overridden)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def url_as(self, user: str, password: str) -> str:
        return f"nats://{user}:{password}@127.0.0.1:{self.port}"

    def start(self) -> Broker:
        binary = shutil.which("nats-server") or "/usr/sbin/nats-server"
        if not Path(binary).exists():
            pytest.skip("nats-server is not installed (scripts/test.sh installs it)")
        where = ["-sd", str(self.store)]
        if self.config is not None:  # its store_dir moved to ours (nats-server refuses both)
            copy = self.store.with_name(self.store.name + ".conf")
            copy.write_text(re.sub(r'store_dir: "[^"]*"', f'store_dir: "{self.store}"',
                                   self.config.read_text()))
            where = ["-c", str(copy)]
        self.process = subprocess.Popen(
            [binary, *where, "-js", "-a", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"nats-server did not listen on {self.port}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(20)
            self.process = None
