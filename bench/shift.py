"""Benchmark of a long shift: does a running table hold its memory, files and threads?

    python bench/shift.py [--rounds 3000] [--every 500]

The real ``dealer-assist table`` process (its own Python, as at a casino: shoe reader, loop,
dealer's screen, round-log files and the surveillance store) is dealt ``--rounds`` rounds at
full speed: its staff registry holds one dealer, its screen is paired through the URL it prints
and the dealer signs in there; a simulated shoe over TCP draws the cards, the dealer's touches
are posted to the screen as its page posts them, and after each round a touch out of turn raises
an alarm that is then acknowledged (a busy table's alarms, so that they are exercised too). Every
``--every`` rounds the table process's resident memory, open files and threads are read from
/proc, with the recording's size on disk. Growth is quoted per 1000 rounds, from the first
checkpoint (the warm-up) to the last; a table deals about 60-200 rounds an hour.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import cpu_model  # noqa: E402
from dealer_assist.rules import RuleSet  # noqa: E402
from dealer_assist.shoe.simulator import ShoeSimulator, TcpLink  # noqa: E402
from dealer_assist.table.simulation.demo import touch_json  # noqa: E402
from dealer_assist.table.simulation.world import Player, SimulatedTable  # noqa: E402
from dealer_assist.table.sources import NewShoe, ShoeCard  # noqa: E402
from dealer_assist.table.staff import StaffRegistry, staff_path  # noqa: E402

#: The dealer the table's registry holds, and its PIN.
DEALER, PIN = "D1", "2468"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        return None


def pair(pairing_url: str) -> str:
    """Open ``pairing_url`` once, as the screen's browser does; the cookie it sets."""
    try:
        urllib.request.build_opener(_NoRedirect).open(pairing_url, timeout=10)
    except urllib.error.HTTPError as answer:  # the 303 to the page, not followed
        if answer.code == 303 and answer.headers["Set-Cookie"]:
            return str(answer.headers["Set-Cookie"]).split(";", 1)[0]
        raise SystemExit(f"pairing refused ({answer.code}): {answer.read()!r}") from None
    raise SystemExit("pairing answered without its redirect")


class Table:
    """The table process and its screen's HTTP API."""

    def __init__(self, folder: Path, shoe_url: str):
        config = folder / "table.toml"
        config.write_text(
            f'table_id = "SHIFT"\n[rules]\npreset = "h17-ddd-6"\n[shoe]\nurl = "{shoe_url}"\n'
            f'[recording]\ndir = "rec"\n[screen]\nport = 0\n'
        )
        StaffRegistry(staff_path(config)).add(DEALER, "dealer", PIN)  # it refuses to start without
        self.recording = folder / "rec"
        self.output = folder / "table.out"
        with open(self.output, "w") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "dealer_assist", "table", "--config", str(config)],
                cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, text=True)
        self.url, pairing_url = self._printed_urls()
        self.cookie = pair(pairing_url)

    def _printed_urls(self) -> tuple[str, str]:
        """The screen's URL and its pairing URL, as the table prints them once it serves."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            lines = self.output.read_text().splitlines()
            for number, line in enumerate(lines[:-1]):
                if line.startswith("dealer's screen: "):
                    return line.split(": ", 1)[1].strip(), lines[number + 1].rsplit(" ", 1)[1]
            if self.process.poll() is not None:
                raise SystemExit(f"the table stopped: {self.output.read_text()}")
            time.sleep(0.1)
        raise SystemExit("the table never served its screen")

    def sign_in(self) -> None:
        """The dealer signs in at the screen: the table takes no bet before."""
        self.post({"type": "sign_in", "dealer": DEALER, "pin": PIN})
        self.wait(lambda view: view["dealer_id"] == DEALER, "the dealer signed in")

    def view(self) -> dict[str, Any]:
        request = urllib.request.Request(self.url + "api/view", headers={"Cookie": self.cookie})
        with urllib.request.urlopen(request, timeout=10) as response:
            view: dict[str, Any] = json.loads(response.read())
            return view

    def post(self, message: dict[str, object]) -> None:
        request = urllib.request.Request(
            self.url + "api/input", json.dumps(message).encode(),
            {"Content-Type": "application/json", "Cookie": self.cookie}, method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()

    def wait(self, condition: Any, what: str, timeout: float = 20.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            view = self.view()
            if condition(view):
                return view
            if time.monotonic() > deadline:
                raise SystemExit(f"the table never showed {what}: {view.get('alarms')}")
            time.sleep(0.002)

    def usage(self) -> tuple[int, int, int]:
        """Resident memory (kB), open files, threads of the table process."""
        pid = self.process.pid
        status = Path(f"/proc/{pid}/status").read_text()
        rss = int(next(line.split()[1] for line in status.splitlines()
                       if line.startswith("VmRSS:")))
        return rss, len(os.listdir(f"/proc/{pid}/fd")), len(os.listdir(f"/proc/{pid}/task"))

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        self.process.wait(30)


def _bytes_under(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def play_round(table: Table, simulator: ShoeSimulator, world: SimulatedTable, number: int,
               dealt: int) -> int:
    """One round through the table as a dealer plays it; the cards dealt so far."""
    played = table.view()["rounds_played"]
    for channel, item in world.round(number):
        if isinstance(item, NewShoe):
            simulator.load_shoe(item.decks)
        elif isinstance(item, ShoeCard):
            dealt += 1
            simulator.draw(item.card.code)
            table.wait(lambda view, want=dealt: view["cards_committed"] >= want,
                       f"card {dealt} recorded")
        elif channel == "dealer":
            table.post(touch_json(item))  # type: ignore[arg-type]
    table.wait(lambda view: view["rounds_played"] > played, f"round {number} settled")
    table.post({"type": "decide", "seat": 1, "action": "stand"})  # out of turn: an alarm
    view = table.wait(lambda view: bool(view["alarms"]), "the alarm")
    for alarm in view["alarms"]:
        table.post({"type": "ack", "id": alarm["id"]})
    return dealt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3000)
    parser.add_argument("--every", type=int, default=500)
    args = parser.parse_args()
    if not (1 <= args.every and 2 * args.every <= args.rounds):
        parser.error("need --every at least 1 and --rounds at least twice --every (two "
                     "checkpoints to measure growth between)")
    print(f"{cpu_model()}, {os.cpu_count()} cores")
    link = TcpLink()
    simulator = ShoeSimulator(link).start()
    world = SimulatedTable(RuleSet.preset("h17-ddd-6"),
                           [Player(s, f"P{s}") for s in (1, 2, 3, 5)], seed=7)
    world.camera_sees = False
    with tempfile.TemporaryDirectory() as folder:
        table = Table(Path(folder), link.url)
        try:
            table.sign_in()
            table.wait(lambda view: view["devices"]["shoe"] == "up", "the shoe linked")
            checkpoints: list[tuple[int, float, int, int, int, int]] = []
            started, dealt = time.monotonic(), 0
            print(f"{'rounds':>7} {'seconds':>8} {'RSS MB':>7} {'files':>6} {'threads':>8}"
                  f" {'recorded MB':>12}")
            for number in range(1, args.rounds + 1):
                dealt = play_round(table, simulator, world, number, dealt)
                if number % args.every == 0 or number == args.rounds:
                    rss, files, threads = table.usage()
                    recorded = _bytes_under(table.recording)
                    checkpoints.append((number, time.monotonic() - started, rss, files,
                                        threads, recorded))
                    print(f"{number:>7} {checkpoints[-1][1]:>8.0f} {rss / 1024:>7.1f}"
                          f" {files:>6} {threads:>8} {recorded / 1e6:>12.2f}", flush=True)
            alarms = table.view()["alarm_history"][-1]["id"]
        finally:
            table.stop()
            simulator.stop()
            link.close()
    first, last = checkpoints[0], checkpoints[-1]
    per_1000 = 1000 / max(last[0] - first[0], 1)
    print(f"{last[0]} rounds ({dealt} cards, {alarms} alarms raised and acknowledged) in "
          f"{last[1]:.0f} s; from round {first[0]} to {last[0]}, per 1000 rounds: resident memory "
          f"{(last[2] - first[2]) * per_1000 / 1024:+.2f} MB, open files "
          f"{(last[3] - first[3]) * per_1000:+.1f}, threads {(last[4] - first[4]) * per_1000:+.1f};"
          f" recording {(last[5] - first[5]) / (last[0] - first[0]) / 1e3:.1f} kB a round")


if __name__ == "__main__":
    main()
