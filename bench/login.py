"""Surveillance page login benchmark: what a login costs at the production argon2id cost, and what
it costs a real operator while an attacker hammers another name.

    .venv/bin/python bench/login.py [--logins 30] [--attack-seconds 20] [--attackers 4]

1. ``--logins`` sequential logins of a real operator over HTTP to a real uvicorn server (the
   password check at argon2id's default cost, t=3, m=64 MiB, p=4, plus the chained ``login``
   record): p50/p99.
2. The same while ``--attackers`` threads guess another name's password as fast as the rate
   limiter answers, each from its own loopback address (127.0.0.N) and changing address after
   every refusal: the operator's p50/p99, and how many guesses the attack got checked against
   how many the limiter refused unchecked.

Prints the CPU model and core count; run it on an idle machine.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import uvicorn  # noqa: E402
from machine import cpu_model  # noqa: E402

from dealer_assist.surveillance import RecordingStore  # noqa: E402
from dealer_assist.surveillance.access import add_operator  # noqa: E402
from dealer_assist.surveillance.web import create_app  # noqa: E402

PASSWORD = "correct horse battery"


def _post_login(port: int, name: str, password: str, source: str) -> tuple[int, float]:
    """One login from ``source``: its status and seconds to the answer."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120,
                                            source_address=(source, 0))
    body = json.dumps({"name": name, "password": password})
    start = time.perf_counter()
    connection.request("POST", "/api/login", body=body, headers={
        "Content-Type": "application/json", "Origin": f"http://127.0.0.1:{port}"})
    response = connection.getresponse()
    response.read()
    elapsed = time.perf_counter() - start
    connection.close()
    return response.status, elapsed


def _percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered) * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms"


def _logins(port: int, count: int) -> list[float]:
    times = []
    for _ in range(count):
        status, elapsed = _post_login(port, "olga", PASSWORD, "127.0.0.1")
        assert status == 200, status
        times.append(elapsed)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logins", type=int, default=30)
    parser.add_argument("--attack-seconds", type=float, default=20.0)
    parser.add_argument("--attackers", type=int, default=4)
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}, os.cpu_count() = {os.cpu_count()}")

    with tempfile.TemporaryDirectory() as folder:
        RecordingStore(folder, create=True).close()
        store = RecordingStore(folder)
        add_operator(store, "olga", PASSWORD, "operator")
        add_operator(store, "audrey", PASSWORD, "auditor")
        store.close()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(create_app(folder), host="127.0.0.1", port=port,
                                               log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)

        quiet = _logins(port, args.logins)
        print(f"login, argon2id default cost, no attack ({len(quiet)} logins): "
              f"{_percentiles(quiet)}")

        stop = threading.Event()
        counts = {"checked": 0, "refused": 0}
        addresses = (f"127.0.{a}.{b}" for a, b in itertools.product(range(1, 250), range(2, 250)))
        lock = threading.Lock()

        def attack() -> None:
            with lock:
                source = next(addresses)
            while not stop.is_set():
                status, _elapsed = _post_login(port, "audrey", "a wrong guess", source)
                with lock:
                    counts["checked" if status == 401 else "refused"] += 1
                    if status == 429:
                        source = next(addresses)

        attackers = [threading.Thread(target=attack) for _ in range(args.attackers)]
        started = time.perf_counter()
        for attacker in attackers:
            attacker.start()
        hammered: list[float] = []
        while time.perf_counter() - started < args.attack_seconds:
            hammered.extend(_logins(port, 1))
        stop.set()
        for attacker in attackers:
            attacker.join()
        elapsed = time.perf_counter() - started
        print(f"login while {args.attackers} attackers guess another name ({len(hammered)}"
              f" logins in {elapsed:.0f} s): {_percentiles(hammered)}")
        print(f"attack: {counts['checked']} guesses checked, {counts['refused']} refused"
              f" unchecked by the limiter")
        server.should_exit = True
        thread.join(timeout=10)


if __name__ == "__main__":
    main()
