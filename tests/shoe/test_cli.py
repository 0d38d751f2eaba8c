"""`dealer-assist shoe simulate` and `listen` as separate processes, as a technician runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tty
from pathlib import Path

import pytest

from dealer_assist.shoe.simulator import PtyLink, ShoeSimulator, shuffled_spanish_shoe

ROOT = Path(__file__).parents[2]
TIMEOUT_S = 60  # generous bound so a stuck process fails the test instead of hanging it


def dealer_assist(*args: str, **kwargs) -> subprocess.Popen[str]:  # type: ignore[no-untyped-def]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-m", "dealer_assist", *args],
        cwd=ROOT,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kwargs,
    )


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "dealer_assist", *args],
        cwd=ROOT,
        env=env,
        text=True,
        capture_output=True,
        timeout=TIMEOUT_S,
    )


def listen_json(url: str, count: int, *extra: str) -> list[dict[str, object]]:
    done = run("shoe", "listen", url, "--json", "--count", str(count), *extra)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_simulated_cards_over_socket_arrive_exactly_and_the_simulator_exits() -> None:
    cards = ["7S", "KH", "AD", "2C", "9D", "QS", "5H", "JC"]
    sim = dealer_assist(
        "shoe",
        "simulate",
        "--serve",
        "127.0.0.1:0",
        "--cards",
        ",".join(cards),
        "--corrupt",
        "0.01",
        "--seed",
        "7",
    )
    try:
        assert sim.stdout is not None
        url = sim.stdout.readline().strip()
        assert url.startswith("socket://127.0.0.1:")
        lines = listen_json(url, len(cards))
        assert sim.wait(TIMEOUT_S) == 0  # it exits once every card is acknowledged
    finally:
        sim.kill()
        sim.communicate()
    card_lines = [line for line in lines if line["event"] == "card"]
    assert [line["card"] for line in card_lines] == cards
    assert [line["seq"] for line in card_lines] == list(range(2, 2 + len(cards)))
    assert lines[-1]["event"] == "card"  # exits right after the Nth card


def test_seeded_shoe_over_a_pty_with_unplugs(tmp_path: Path) -> None:
    link = tmp_path / "by-id-shoe"
    sim = dealer_assist(
        "shoe",
        "simulate",
        "--pty",
        "--link",
        str(link),
        "--decks",
        "2",
        "--seed",
        "3",
        "--corrupt",
        "0.01",
        "--cut-every",
        "0.6",
        "--cut-for",
        "0.2",
        "--rate",
        "60",  # about 1.6 s of dealing, so the link is cut at least twice whatever the load
    )
    try:
        assert sim.stdout is not None
        assert sim.stdout.readline().strip() == str(link)
        lines = listen_json(str(link), 95)  # it may leave before the shoe-empty event is sent
    finally:
        sim.kill()
        sim.communicate()
    shoe = [c.code for c in shuffled_spanish_shoe(2, 3)]
    kinds = [line["event"] for line in lines]
    assert [line["card"] for line in lines if line["event"] == "card"] == shoe[1:]
    assert [line["card"] for line in lines if line["event"] == "burn"] == shoe[:1]
    assert "cut_card" in kinds and "link_down" in kinds
    assert {"event": "integrity", "alarm": "link_down"}.items() <= next(
        line for line in lines if line.get("alarm") == "link_down"
    ).items()


def test_listen_reads_an_ascii_shoe_on_a_pty() -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    sample = (ROOT / "tests" / "data" / "shoe" / "ascii-shoe-sample.log").read_bytes()
    listener = dealer_assist("shoe", "listen", path, "--ascii", "--decks", "6", "--count", "10")
    try:
        # the listener flushes input when it opens the port: resend until it has read it all
        deadline = time.monotonic() + TIMEOUT_S
        while listener.poll() is None and time.monotonic() < deadline:
            os.write(master, sample)
            time.sleep(0.3)
        out, err = listener.communicate(timeout=TIMEOUT_S)
    finally:
        listener.kill()
        os.close(master)
        os.close(slave)
    assert listener.returncode == 0, err
    cards = [line.split()[1] for line in out.splitlines() if line.startswith("card ")]
    assert cards == ["4S", "KD", "AH", "7C", "TH", "QS", "5D", "2C", "8S", "JH"]
    assert "ALARM pip_ten: pip ten TH" in out
    assert "ALARM undecodable" in out and "Ca#d:9H" in out


def test_listen_text_escapes_shoe_text_so_one_event_is_one_line(tmp_path: Path) -> None:
    forged = "\x1b[2J\r\ncard AS seq=3 index=2 session=1"  # clears the screen, then a fake card
    with ShoeSimulator(PtyLink(str(tmp_path / "shoe"))) as sim:
        sim.load_shoe(6)
        listener = dealer_assist("shoe", "listen", sim.url, "--count", "2")
        try:
            sim.draw("7S")
            sim.alarm(7, forged)
            sim.draw("8H")  # unacknowledged frames are resent until the listener has them
            out, err = listener.communicate(timeout=TIMEOUT_S)
        finally:
            listener.kill()
    assert listener.returncode == 0, err
    assert [line.split()[1] for line in out.splitlines() if line.startswith("card ")] == [
        "7S", "8H"]
    assert "\x1b" not in out
    escaped = "\\x1b[2J\\r\\ncard AS seq=3 index=2 session=1"
    assert f"code=7 text={escaped}\n" in out
    assert f"ALARM shoe_reported: shoe alarm 7: {escaped}\n" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["listen", "nosuch://x"], "bad URL"),
        (["listen", "socket://127.0.0.1"], "socket:// needs HOST:PORT with a port from 1 to 65535"),
        (["listen", "socket://127.0.0.1:99999"], "socket:// needs HOST:PORT"),
        (["listen", "loop://", "--count", "0"], "--count"),
        (["simulate", "--pty", "--cards", "7S,XX"], "not a card code"),
        (["simulate", "--pty", "--cut-every", "1"], "--link"),
        (["simulate", "--serve", "localhost", "--cards", "7S"], "HOST:PORT"),
        (["simulate", "--serve", "127.0.0.1:99999", "--cards", "7S"], "port 0-65535"),
        (["simulate", "--pty", "--link", "/nonexistent/dir/shoe", "--cards", "7S"],
         "--link /nonexistent/dir/shoe: No such file or directory"),
        (["simulate", "--pty", "--decks", "3"], "--decks"),
        (["simulate", "--pty", "--corrupt", "2"], "corrupt_rate"),
        # a link cut every 0 s, -1 s or NaN s (or cut for NaN s) never delivers a card: refused
        *(
            (["simulate", "--serve", "127.0.0.1:0", "--cards", "7S", option, value],
             f"argument {option}: a time in seconds must be above 0 and at most 86400, got {value}")
            for option in ("--cut-every", "--cut-for")
            for value in ("0", "-1", "nan", "inf", "1e300")
        ),
        (["simulate", "--serve", "127.0.0.1:0", "--cards", "7S", "--cut-every", "0.5"],
         "--cut-every 0.5 must be longer than --cut-for 0.5, or the link is never up"),
        *(
            (["simulate", "--serve", "127.0.0.1:0", "--cards", "7S", "--rate", value],
             "argument --rate: a rate in cards per second must be from 0.001 to 10000,"
             f" got {value}")
            for value in ("0", "-1", "nan", "inf", "1e-300")
        ),
        *(
            (["listen", "loop://", "--baud", value],
             f"argument --baud: a baud rate must be from 1 to 12000000, got {value}")
            for value in ("0", "-1", "123456789012345678901")
        ),
    ],
)
def test_bad_arguments_say_what_is_wrong(args: list[str], message: str) -> None:
    done = run("shoe", *args)
    assert done.returncode == 2
    assert message in done.stderr


def test_a_file_where_the_link_would_go_is_not_replaced(tmp_path: Path) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text("the floor's notes\n")
    done = run("shoe", "simulate", "--pty", "--link", str(precious), "--cards", "7S")
    assert done.returncode == 2
    assert f"--link {precious}: a file is there; the link replaces only a link" in done.stderr
    assert not precious.is_symlink() and precious.read_text() == "the floor's notes\n"


def test_top_level_help_lists_the_shoe_command() -> None:
    assert "shoe" in run("--help").stdout
