"""The dealer's screen under a body flood, and what its guard costs a touch.

Starts a real ``dealer-assist table`` (a simulated TCP shoe, the screen on a free loopback port),
then: the table's resident memory before and after six 100 MB posts (three announced with their
Content-Length, three streamed chunked), how many bytes each streamed one got in before the
table closed it; and the round-trip latency of paired touches (p50/p99) and of refused ones.

    python bench/screen_flood.py [--touches N]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import cpu_model  # noqa: E402
from dealer_assist.shoe.simulator import ShoeSimulator, TcpLink  # noqa: E402
from dealer_assist.table.screen_access import ScreenAccess, read_secret  # noqa: E402
from dealer_assist.table.staff import StaffRegistry, staff_path  # noqa: E402

FLOOD = 100 * 1024 * 1024
CHUNK = b" " * 65536


def rss_kb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))


def head(port: int, cookie: str, extra: str) -> bytes:
    return (f"POST /api/input HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {cookie}\r\n"
            f"Content-Type: application/json\r\n{extra}\r\n").encode()


def announced(port: int, cookie: str) -> str:
    """A 100 MB Content-Length, the body then sent: the status line answered."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        raw.sendall(head(port, cookie, f"Content-Length: {FLOOD}\r\n"))
        return raw.recv(4096).split(b"\r\n", 1)[0].decode()


def streamed(port: int, cookie: str) -> tuple[str, int]:
    """100 MB sent chunked until the table closes the connection: its answer and the bytes
    sent (what the kernel's buffers took beyond what the table read counts too)."""
    sent = 0
    answer = "(none)"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        raw.sendall(head(port, cookie, "Transfer-Encoding: chunked\r\n"))
        try:
            while sent < FLOOD:
                raw.sendall(b"%x\r\n%s\r\n" % (len(CHUNK), CHUNK))
                sent += len(CHUNK)
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            answer = raw.recv(4096).split(b"\r\n", 1)[0].decode() or answer
        except (ConnectionResetError, TimeoutError):
            pass
    return answer, sent


def timed_posts(url: str, cookie: str, body: bytes, count: int) -> list[float]:
    latencies = []
    for _ in range(count):
        request = urllib.request.Request(url + "api/input", body, method="POST", headers={
            "Content-Type": "application/json", "Cookie": cookie})
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                response.read()
        except urllib.error.HTTPError as refused:
            refused.read()
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def percentiles(values: list[float]) -> str:
    cuts = statistics.quantiles(values, n=100)
    return f"p50 {cuts[49]:.2f} ms, p99 {cuts[98]:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--touches", type=int, default=500)
    args = parser.parse_args()
    print(f"{cpu_model()}, {os.cpu_count()} cores")
    link = TcpLink()
    simulator = ShoeSimulator(link).start()
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "table.toml"
        config.write_text(f'[shoe]\nurl = "{link.url}"\n[recording]\ndir = "rec"\n'
                          '[screen]\nport = 0\n')
        StaffRegistry(staff_path(config)).add("D1", "dealer", "2468")  # a table needs a dealer
        process = subprocess.Popen(
            [sys.executable, "-m", "dealer_assist", "table", "--config", str(config)],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            assert process.stdout is not None
            line = ""
            while not line.startswith("dealer's screen: "):
                line = process.stdout.readline()
                if not line:
                    raise SystemExit("the table stopped before serving its screen")
            url = line.split(": ", 1)[1].strip()
            port = int(url.rsplit(":", 1)[1].strip("/"))
            cookie = ScreenAccess(read_secret(Path(folder) / "table.screen-secret")
                                  ).cookie_header()
            before = rss_kb(process.pid)
            for _ in range(3):
                print(f"100 MB announced: {announced(port, cookie)}")
            for _ in range(3):
                answer, sent = streamed(port, cookie)
                print(f"100 MB streamed: {answer}, {sent / 1024:.0f} KiB sent before the table "
                      "closed the connection")
            after = rss_kb(process.pid)
            print(f"table resident memory: {before / 1024:.1f} MB before, {after / 1024:.1f} MB "
                  "after the six floods")
            simulator.load_shoe(6)
            ack = json.dumps({"type": "ack", "id": 999999}).encode()  # taken, an alarm only
            print(f"{args.touches} paired touches: "
                  f"{percentiles(timed_posts(url, cookie, ack, args.touches))}")
            print(f"{args.touches} touches without the cookie (401): "
                  f"{percentiles(timed_posts(url, 'dealer_screen=x', ack, args.touches))}")
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(30)
            simulator.stop()
            link.close()


if __name__ == "__main__":
    main()
