"""Benchmark of the live table: shoe frame to screen update, loop throughput, idle CPU.

    python bench/table.py [--cards 300] [--idle 10] [--rounds 30] [--no-loaded]

1. Latency from a shoe frame to the screen update: the shoe simulator draws a card on a
   pseudo-terminal; the real reader decodes it, the loop records it, and the screen pushes the new
   view over its WebSocket to a client; measured from ``draw()`` to the client receiving a view
   that counts the card (p50, p99, max).
2. Inputs per second through the loop alone.
3. CPU of an idle table (runner, shoe reader with heartbeats, screen with one client connected),
   from /proc per-thread times, excluding the simulator's own thread.
4. The demo camera's grab: the felt rendered whole each frame against laid out once per change
   with fresh sensor noise each frame (what the demo does), side by side.
5. Camera frames per second in the live loop: the demo table with its synthetic camera (frames
   rendered by the scene generator, read by the trackers), once with the renderer's ground truth
   as detector (the pipeline's own cost) and once with the shipped detector models (their speed,
   how many rounds are settled exactly as dealt, and the alarms raised, by kind), each new card
   verified against the shoe's cards in flight and, side by side, named as without a shoe, for
   each deck of ``--camera-design`` (default: the demo's house deck and kennard, never trained
   on); with ``--hand-held`` also with no shoe, the camera alone (each card it cannot read keyed
   by the dealer: "card keyed by the dealer" alarms). For each: rounds settled exactly as dealt
   (dealer and every seat), and the dealer's questions per round (the demo's dealer answers each
   from what truly happened). The house deck is dealt once more with one core kept busy by
   another process (skip with ``--no-loaded``).

A shoe frame's way to disk and back to the shoe (durable, then acknowledged) is measured by
``bench/journal.py``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import cpu_model  # noqa: E402

from dealer_assist.rules import RuleSet  # noqa: E402
from dealer_assist.table.loop import TableLoop  # noqa: E402
from dealer_assist.table.recording import MemoryRecorder  # noqa: E402
from dealer_assist.table.runner import TableRunner  # noqa: E402
from dealer_assist.table.screen import ScreenServer  # noqa: E402
from dealer_assist.table.shoe_source import SerialShoeSource  # noqa: E402
from dealer_assist.table.simulation.synthetic_camera import HOUSE_DECK  # noqa: E402
from dealer_assist.table.simulation.world import Player, SimulatedTable  # noqa: E402
from dealer_assist.table.sources import NewShoe, ShoeCard, ShoeLink  # noqa: E402


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _thread_cpu_seconds(exclude: set[int]) -> float:
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for task in os.listdir("/proc/self/task"):
        if int(task) in exclude:
            continue
        try:
            fields = Path(f"/proc/self/task/{task}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime + stime
    return total / ticks


class ScreenClient:
    """A WebSocket client of the screen (as its paired page, with ``cookie``) recording when
    each view arrives."""

    def __init__(self, url: str, cookie: str):
        from websockets.sync.client import connect

        self.socket = connect(url.replace("http://", "ws://") + "ws",
                              additional_headers={"Cookie": cookie})
        self.cards_seen = 0
        self.changed = threading.Condition()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for message in self.socket:
                view = json.loads(message)
                with self.changed:
                    self.cards_seen = view["cards_committed"]
                    self.changed.notify_all()
        except Exception:  # the socket closes at the end of the benchmark
            return

    def wait_cards(self, count: int, timeout: float) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: self.cards_seen >= count, timeout)

    def close(self) -> None:
        self.socket.close()


def bench_latency(cards: int, idle_s: float) -> None:
    from dealer_assist.shoe.simulator import PtyLink, ShoeSimulator

    with tempfile.TemporaryDirectory() as folder:
        link = PtyLink(link_path=f"{folder}/shoe")
        simulator = ShoeSimulator(link).start()
        loop = TableLoop("h17-ddd-6", MemoryRecorder(), has_camera=False)
        loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
        runner = TableRunner(loop, [SerialShoeSource(link.url)]).start()
        screen = ScreenServer(runner, "127.0.0.1", 0).start()
        client = ScreenClient(screen.url, screen.access.cookie_header())
        world = SimulatedTable(
            RuleSet.preset("h17-ddd-6"), [Player(s, f"P{s}") for s in (1, 2, 3, 5)], seed=3
        )
        world.camera_sees = False
        latencies: list[float] = []
        number = 0
        while len(latencies) < cards:
            number += 1
            for _, item in world.round(number):
                if isinstance(item, NewShoe):
                    simulator.load_shoe(item.decks)
                elif isinstance(item, ShoeCard):
                    want = loop.cards_committed + 1
                    started = time.perf_counter()
                    simulator.draw(item.card)
                    if not client.wait_cards(want, 5.0):
                        raise SystemExit(f"card {item.card} never reached the screen")
                    latencies.append((time.perf_counter() - started) * 1000)
                else:
                    runner.submit(item)
                    runner.wait_idle()
        first, steady = latencies[0], latencies[1:]
        print(f"shoe frame -> screen update over a pty and a WebSocket, {len(steady)} cards")
        print(
            f"  p50 {statistics.median(steady):.2f} ms   p99 {_percentile(steady, 0.99):.2f} ms   "
            f"max {max(steady):.2f} ms   ({number} rounds; the first card after start-up, while "
            f"the link synchronises, took {first:.0f} ms and is left out)"
        )

        simulator_tid = simulator._thread.native_id
        runner.wait_idle()
        time.sleep(1.0)
        before_cpu, before = _thread_cpu_seconds({simulator_tid or -1}), time.monotonic()
        time.sleep(idle_s)
        used = _thread_cpu_seconds({simulator_tid or -1}) - before_cpu
        elapsed = time.monotonic() - before
        print(
            f"idle table (runner ticking every {runner.tick_s * 1000:.0f} ms, shoe heartbeats, "
            f"one screen client) for {elapsed:.1f} s: {100 * used / elapsed:.1f}% of one core"
        )
        client.close()
        screen.stop()
        runner.stop()
        simulator.stop()
        link.close()


def bench_loop_throughput() -> None:
    world = SimulatedTable(
        RuleSet.preset("h17-ddd-6"), [Player(s, f"P{s}") for s in (1, 2, 3, 4, 5, 6, 7)], seed=9
    )
    world.camera_sees = True
    from dealer_assist.table.sources import CameraLink

    loop = TableLoop("h17-ddd-6", MemoryRecorder())
    loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    loop.handle(ShoeLink(True), 0.0)
    loop.handle(CameraLink(True), 0.0)
    steps = [item for number in range(1, 301) for _, item in world.round(number)]
    started = time.perf_counter()
    for index, item in enumerate(steps):
        loop.handle(item, index * 0.001)
    elapsed = time.perf_counter() - started
    assert loop.rounds_played == 300, loop.alarms[:3]
    print(
        f"loop alone, shoe + camera inputs: {len(steps) / elapsed:,.0f} inputs/s "
        f"({len(steps)} inputs, 300 rounds of 7 seats, {elapsed:.2f} s)"
    )


def bench_camera(rounds: int, design_name: str = HOUSE_DECK, hand_held: bool = False,
                 loaded: bool = False) -> None:
    """The demo table with its synthetic camera: frames through the camera pipeline per second,
    with the renderer's ground truth as detector (the pipeline's own cost) and with the shipped
    detector (its speed, and how its readings fare against the rounds as dealt); ``loaded``: the
    shipped detector once more with one core kept busy by another process."""
    from dealer_assist.table.simulation.synthetic_camera import demo_camera, truth_camera
    from dealer_assist.vision.artwork import installed_designs, load_designs
    from dealer_assist.vision.detector import DEFAULT_MODEL

    if rounds < 1:
        return
    if not installed_designs():
        print("camera frames/s: card artwork not installed (scripts/install-card-art.sh)")
        return
    design = load_designs([design_name])[0]
    _camera_rounds(truth_camera(design, seed=3), "render + trackers, ground truth as detector",
                   rounds)
    if not DEFAULT_MODEL.exists():
        print(f"no detector model at {DEFAULT_MODEL}: the detector's figures are not measured")
        return
    _camera_rounds(demo_camera(design_name=design_name, seed=3),
                   f"render + shipped ONNX detector + trackers, deck {design_name}", rounds)
    _camera_rounds(demo_camera(design_name=design_name, seed=3, check_shoe=False),
                   f"the same, each card named rather than verified against the shoe, deck "
                   f"{design_name}", rounds)
    if loaded:
        busy = multiprocessing.Process(target=_spin, daemon=True)
        busy.start()
        try:
            _camera_rounds(demo_camera(design_name=design_name, seed=3),
                           f"deck {design_name}, one core kept busy by another process", rounds)
        finally:
            busy.terminate()
    if hand_held:
        _camera_rounds(demo_camera(design_name=design_name, seed=3),
                       f"hand-held, no shoe: the camera alone, deck {design_name}", rounds,
                       shoe=False)


def bench_render(frames: int = 20, design_name: str = HOUSE_DECK) -> None:
    """The demo camera's grab, side by side: a mid-round felt (twelve cards) rendered whole each
    frame against laid out and lit once, with only the sensor noise per frame (what the demo
    does); the pixels are the same."""
    import numpy as np

    from dealer_assist.rules import Card, CardTarget
    from dealer_assist.table.simulation.synthetic_camera import (
        FRAME_SIZE,
        PLAYED_SEATS,
        SyntheticFelt,
        VirtualTable,
    )
    from dealer_assist.table.sources import FeltCard
    from dealer_assist.vision.artwork import installed_designs, load_designs
    from dealer_assist.vision.scenes import render_layout

    if not installed_designs():
        return
    design = load_designs([design_name])[0]
    felt = SyntheticFelt(design, VirtualTable(PLAYED_SEATS), seed=3)
    codes = "7S KH AD 5C 9H 2D QS 3C TH 8D 4S JC".split()
    for number, code in enumerate(codes):
        seat = PLAYED_SEATS[number % len(PLAYED_SEATS)]
        felt.show(FeltCard(Card.parse(code), CardTarget() if number % 4 == 3
                           else CardTarget(seat, 0)))
    layout = felt.layout()
    timings = {}
    for what, grab in (
        ("rendered whole each frame", lambda frame: render_layout(
            np.random.default_rng(3), design, layout, FRAME_SIZE,
            sensor=np.random.default_rng([3, frame]))),
        ("laid out and lit once, noise per frame", lambda frame: felt.render()),
    ):
        grab(0)  # the first frame lays the felt out
        started = time.perf_counter()
        for frame in range(1, frames + 1):
            grab(frame)
        timings[what] = (time.perf_counter() - started) / frames
    print("demo camera's grab, 1280x720, 12 cards: " + "; ".join(
        f"{what} {1000 * seconds:.1f} ms a frame" for what, seconds in timings.items()))


def _spin() -> None:
    while True:
        pass


def _camera_rounds(camera: object, what: str, rounds: int, shoe: bool = True) -> None:
    from dealer_assist.table.simulation.demo import DemoOptions, DemoTable

    with tempfile.TemporaryDirectory() as folder:
        options = DemoOptions(port=0, recording_dir=folder, pace_s=0.0, pause_after_round_s=0.0,
                              seed=21, card_timeout_s=8.0, shoe=shoe)
        with DemoTable(options, camera=camera) as demo:  # type: ignore[arg-type]
            source = demo.camera.source  # type: ignore[union-attr]
            mode = "shoe + camera" if shoe else "camera only"
            demo.runner.wait_until(lambda loop: loop.mode.value == mode, 8)
            started = time.perf_counter()
            frames_before, busy_before = source.frames_processed, source.seconds_busy
            exact = 0
            for number in range(1, rounds + 1):
                settlement = demo.play_round(number, 0.0)
                want = demo.world.settlements[-1].to_json()
                got = None if settlement is None else settlement.to_json()
                if got is not None and (got["dealer"], got["seats"]) == (want["dealer"],
                                                                         want["seats"]):
                    exact += 1
            elapsed = time.perf_counter() - started
            frames = source.frames_processed - frames_before
            busy = source.seconds_busy - busy_before
            alarms = Counter(alarm.kind.value for alarm in demo.loop.alarms
                             if alarm.kind.value != "dealer asked")
            questions = demo.loop.questions_asked
        cards = [event for path in Path(folder, "rounds").glob("*.jsonl")
                 for event in map(json.loads, path.read_text().splitlines())
                 if event["type"] == "card"]
    placed = sum("to" in card for card in cards)
    print(
        f"camera in the live loop ({what}), 1280x720 frames, {rounds} rounds: "
        f"{frames / elapsed:.1f} frames/s, {1000 * busy / max(frames, 1):.0f} ms of pipeline a "
        f"frame, {elapsed / rounds:.1f} s a round; {exact}/{rounds} rounds settled exactly as "
        f"dealt; {questions} dealer questions ({questions / rounds:.2f} a round); "
        + (f"{placed} of {len(cards)} shoe cards placed where the camera saw them land "
           "(the rest, hole cards among them, by the rules); " if shoe else "")
        + f"{sum(alarms.values())} alarms"
        + (f" ({', '.join(f'{kind} {n}' for kind, n in alarms.most_common())})" if alarms else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=300)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=30,
                        help="camera rounds for each deck and load (default 30)")
    parser.add_argument("--no-loaded", action="store_true",
                        help="skip the house deck's rounds with one core kept busy")
    parser.add_argument("--camera-design", nargs="+", default=[HOUSE_DECK, "kennard"],
                        help=f"the demo camera's decks (default {HOUSE_DECK}, the demo's house "
                        "deck, and kennard, never trained on)")
    parser.add_argument("--camera-only", action="store_true", help="skip the shoe and loop parts")
    parser.add_argument("--hand-held", action="store_true",
                        help="also deal each deck's rounds with no shoe, read by the camera alone "
                        "(the dealer keys each card it cannot read, after the 8 s wait)")
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}, os.cpu_count() = {os.cpu_count()}")
    if not args.camera_only:
        bench_latency(args.cards, args.idle)
        bench_loop_throughput()
    bench_render()
    for design in args.camera_design:
        bench_camera(args.rounds, design, args.hand_held,
                     loaded=not args.no_loaded and design == HOUSE_DECK)


if __name__ == "__main__":
    main()
