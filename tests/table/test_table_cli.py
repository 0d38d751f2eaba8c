"""``dealer-assist table --config``: a separate process reading a simulated shoe over TCP, serving
the screen; it keeps running through a shoe unplug and reports it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from dealer_assist.shoe.simulator import ShoeSimulator, TcpLink
from dealer_assist.table.cli import STOP_BOUND_S
from dealer_assist.table.staff import HashCost, StaffRegistry, staff_path

ROOT = Path(__file__).resolve().parents[2]
#: The dealer the tables here register, and its PIN (hashed cheaply: tests/table/test_staff.py
#: checks the default cost).
DEALER, PIN = "D1", "2468"
CHEAP = HashCost(time_cost=1, memory_kib=8, parallelism=1)


def register_dealer(config: Path) -> None:
    """The table's staff registry, beside ``config``, with :data:`DEALER` (if it has none)."""
    registry = StaffRegistry(staff_path(config), CHEAP)
    if DEALER not in registry.members:
        registry.add(DEALER, "dealer", PIN)


@dataclass(frozen=True)
class Screen:
    """A running table's screen, as its paired browser holds it: its URL and its cookie."""

    url: str
    cookie: str


def sign_in(screen: Screen) -> None:
    """:data:`DEALER` signs in at the screen: the table takes bets once it has."""
    post(screen, {"type": "sign_in", "dealer": DEALER, "pin": PIN})
    wait_for(lambda view: view["dealer_id"] == DEALER, screen)


def get_view(screen: Screen) -> dict:
    request = urllib.request.Request(screen.url + "api/view", headers={"Cookie": screen.cookie})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


def post(screen: Screen, message: dict) -> None:
    request = urllib.request.Request(
        screen.url + "api/input",
        json.dumps(message).encode(),
        {"Content-Type": "application/json", "Cookie": screen.cookie},
        method="POST",
    )
    urllib.request.urlopen(request, timeout=5).read()


def wait_for(predicate, screen: Screen, timeout: float = 10.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        view = get_view(screen)
        if predicate(view) or time.monotonic() > deadline:
            return view
        time.sleep(0.05)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def pair(pairing_url: str) -> str:
    """Open ``pairing_url`` as the screen's browser does; the cookie it sets (name=value)."""
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        opener.open(pairing_url, timeout=5)
    except urllib.error.HTTPError as answer:  # the 303 to the page, not followed
        assert answer.code == 303, answer.read()
        return answer.headers["Set-Cookie"].split(";", 1)[0]
    raise AssertionError("pairing answered without its redirect")


def start_table(config: Path, **popen) -> subprocess.Popen:
    """``dealer-assist table --config config`` as a separate process, its output piped, with
    :data:`DEALER` registered."""
    register_dealer(config)
    return subprocess.Popen(
        [sys.executable, "-m", "dealer_assist", "table", "--config", str(config)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def printed_screen(process: subprocess.Popen) -> tuple[str, str]:
    """The screen URL and the pairing URL the table prints once it serves its screen (its
    stderr if it exits first)."""
    while True:
        line = process.stdout.readline()
        assert line, process.stderr.read()
        if line.startswith("dealer's screen: "):
            url = line.split(": ", 1)[1].strip()
            pairing = process.stdout.readline()
            assert pairing.startswith("pair the screen's browser "), pairing
            return url, pairing.rsplit(" ", 1)[1].strip()


def open_screen(process: subprocess.Popen) -> Screen:
    """The table's screen, paired as its browser pairs: with the URL the table printed."""
    url, pairing_url = printed_screen(process)
    return Screen(url, pair(pairing_url))


def test_table_command_runs_records_and_survives_an_unplug(tmp_path):
    link = TcpLink()
    simulator = ShoeSimulator(link).start()
    config = tmp_path / "table.toml"
    config.write_text(
        f'table_id = "T3"\n[rules]\npreset = "s17-6"\n[shoe]\nurl = "{link.url}"\n'
        f'[recording]\ndir = "rec"\n[screen]\nport = 0\n'
        '[logging]\nfile = "table.log"\n'
    )
    process = start_table(config)
    try:
        screen = open_screen(process)
        url = screen.url
        sign_in(screen)
        simulator.load_shoe(6)
        view = wait_for(lambda v: v["devices"]["shoe"] == "up", screen)
        assert view["mode"] == "shoe only"
        post(screen, {"type": "bet", "seat": 2, "amount": "10"})
        for code in ("9S", "6D", "8H", "KD"):  # seat 2: 17; dealer 6 + K
            simulator.draw(code)
        view = wait_for(lambda v: v["cards_committed"] == 4, screen)
        assert view["round"]["acting"] == [2, 0]

        simulator.cut_link()  # the shoe's cable comes out (until restore_link)
        view = wait_for(lambda v: v["devices"]["shoe"] == "down", screen)
        assert any(a["kind"] == "shoe_link_down" for a in view["alarms"])
        simulator.draw("7C")  # drawn while unplugged: the shoe keeps it until the link returns
        post(screen, {"type": "decide", "seat": 2, "action": "stand"})
        simulator.restore_link()
        view = wait_for(lambda v: v["rounds_played"] == 1, screen)
        assert process.poll() is None
        assert view["settlement"]["seats"][0]["net"] == "10.00"  # 17 beats 6 + K + 7 = 23
        assert not view["alarms"]  # the link alarm resolved itself when the shoe came back
        deadline = time.monotonic() + 10
        while not (rounds := list((tmp_path / "rec" / "rounds").glob("*.jsonl"))) and \
                time.monotonic() < deadline:
            time.sleep(0.01)  # exported once the store has committed the round's end
        assert len(rounds) == 1 and rounds[0].name.startswith("T3-")
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(10) == 0
        simulator.stop()
        link.close()
    replayed = subprocess.run(
        [
            sys.executable,
            "-m",
            "dealer_assist",
            "replay",
            str(tmp_path / "rec"),  # the store's database lies at the top of the directory
            "--verify",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert replayed.returncode == 0, replayed.stderr
    assert "CLEAN: 1 settled rounds re-settled" in replayed.stdout
    # the config's [logging]: the key moments, in the file beside it
    logged = (tmp_path / "table.log").read_text()
    for line in (f"INFO [MainThread] dealer_assist.table.cli: started table T3: rules s17-6, shoe "
                 f"{link.url}, camera none, recording to {tmp_path / 'rec'}; screen {url}",
                 f"INFO [shoe-source] dealer_assist.table.shoe_source: shoe link up: {link.url}",
                 "INFO [shoe-source] dealer_assist.table.shoe_source: shoe link down: ",
                 f"INFO [recording-store] dealer_assist.table.recording: round {rounds[0].stem} "
                 "settled: players' net 10.00, 1 seat(s)",
                 "INFO [MainThread] dealer_assist.table.cli: table T3 stopped"):
        assert line in logged
    assert "INFO [table-loop] dealer_assist.table.recording: alarm 2 (shoe link down)" in logged


def test_bad_config_exits_2_naming_the_key(tmp_path):
    config = tmp_path / "table.toml"
    config.write_text('[shoe]\nurl = "socket://127.0.0.1:1"\n[screen]\nport = "eighty"\n')
    done = subprocess.run(
        [sys.executable, "-m", "dealer_assist", "table", "--config", str(config)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert f"{config}: screen.port: must be a port number" in done.stderr


def run_table(config: Path, *extra: str) -> subprocess.CompletedProcess:
    """``dealer-assist table --config config *extra`` to its end."""
    return subprocess.run(
        [sys.executable, "-m", "dealer_assist", "table", "--config", str(config), *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )


@pytest.mark.parametrize(("text", "key"), [
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", "(syntax)"),  # deeper than Python recurses
    ('[shoe]\nurl = "spy:///dev/ttyUSB0?file=/no/such/dir/log"\n', "shoe.url"),
    ('[shoe]\nurl = "socket://127.0.0.1:9"\n[recording]\ndir = "afile"\n', "recording.dir"),
], ids=["nested too deep", "spy log folder missing", "recording dir a file"])
def test_a_config_unfit_to_start_fails_the_check_with_the_starts_message(tmp_path, text, key):
    """No traceback: the start and --check both exit 2 with the same message naming the key."""
    (tmp_path / "afile").write_text("x")
    config = tmp_path / "table.toml"
    config.write_text(text)
    started, checked = run_table(config), run_table(config, "--check")
    assert (started.returncode, checked.returncode) == (2, 2), started.stderr
    assert started.stderr == checked.stderr
    assert started.stderr.startswith(f"dealer-assist table: {config}: {key}: ")
    assert "Traceback" not in started.stderr


def test_the_check_creates_nothing(tmp_path):
    """--check on a fit config neither creates the recording folder nor the spy:// log."""
    config = tmp_path / "table.toml"
    config.write_text(f'[shoe]\nurl = "spy:///dev/ttyUSB0?file={tmp_path}/spy.log"\n'
                      '[recording]\ndir = "rec"\n[screen]\nport = 0\n')
    done = run_table(config, "--check")
    assert done.returncode == 0, done.stderr
    assert [path.name for path in tmp_path.iterdir()] == ["table.toml"]


def check_with_camera(folder: Path, vision: str | None = None,
                      ) -> tuple[Path, subprocess.CompletedProcess]:
    """``table --check`` on a config with an unreachable shoe and a camera calibrated by
    ``folder/table-calibration.yaml``; the config's path and the finished process."""
    # one runtime named: no start-up measurement of both (tests/vision/test_runtime.py has it)
    vision = shipped_vision("onnxruntime") if vision is None else vision
    config = folder / "table.toml"
    config.write_text(
        '[shoe]\nurl = "socket://127.0.0.1:9"\n'
        '[camera]\nsource = 0\ncalibration = "table-calibration.yaml"\n[screen]\nport = 0\n'
        + vision
    )
    return config, run_table(config, "--check")


def shipped_vision(runtime: str = "auto") -> str:
    """A ``[vision]`` section pinning the shipped models."""
    from tests.vision.test_runtime import shipped_pins

    return (f'[vision]\nruntime = "{runtime}"\ndetector_sha256 = {list(shipped_pins("detector"))}'
            f'\nreader_sha256 = {list(shipped_pins("reader"))}\n').replace("'", '"')


def test_camera_that_cannot_run_is_named_and_fails_the_check_though_the_shoe_would_run(tmp_path):
    """The table itself would run on the shoe alone ("camera none"); --check says it is not
    what was configured (exit 2), so an install script or a technician notices."""
    (tmp_path / "table-calibration.yaml").write_text("kind: something-else\n")
    config, done = check_with_camera(tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"dealer-assist table: {config}: camera: " in done.stderr
    # the missing detector model, or (with a model installed) the bad calibration file
    assert "cards.int8.onnx" in done.stderr or "table-calibration.yaml" in done.stderr
    assert "camera none" in done.stdout


def test_a_camera_that_shows_cards_too_small_is_warned_of_at_start(tmp_path):
    """A table calibrated for a camera that shows cards 32-38 px wide (the practice camera's
    view, placed from hand-given points) still runs its camera, and says at start that it will
    read cards poorly and where."""
    from dealer_assist.calibration.layout import Layout
    from tests.calibration.practice_view import fit_from_hand_points

    layout = Layout.load(ROOT / "calibration" / "layouts" / "standard-7seat.yaml")
    fit = fit_from_hand_points((1280, 720), layout)
    fit.calibration.save(tmp_path / "table-calibration.yaml")
    config, done = check_with_camera(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "camera 0" in done.stdout  # the camera runs
    assert f"dealer-assist table: {config}: camera: warning: " in done.stderr
    assert "seat 4 card area looks 32 px wide" in done.stderr


@pytest.mark.parametrize(("vision", "said"), [
    ('[vision]\ndetector_sha256 = "' + "0" * 64 + '"\nreader_sha256 = "' + "1" * 64 + '"\n',
     "not the pinned " + "0" * 64),
    ("", "the detector is not pinned"),
])
def test_models_other_than_the_pinned_ones_stop_the_table_from_starting(tmp_path, vision, said):
    """A camera whose models are not the ones the config pins does not run, and neither does
    the table (exit 2, though its shoe would run): the message names the file and the hashes."""
    from dealer_assist.calibration.layout import Layout
    from dealer_assist.vision.model_control import shipped
    from tests.calibration.practice_view import fit_from_hand_points

    layout = Layout.load(ROOT / "calibration" / "layouts" / "standard-7seat.yaml")
    fit_from_hand_points((1280, 720), layout).calibration.save(
        tmp_path / "table-calibration.yaml")
    config, done = check_with_camera(tmp_path, vision)
    assert done.returncode == 2, done.stderr
    assert f"dealer-assist table: {config}: vision: " in done.stderr
    assert said in done.stderr
    assert "cards.int8.onnx" in done.stderr or "cards.onnx" in done.stderr
    assert any(entry["sha256"] in done.stderr for entry in shipped().values())
    assert "camera 0" not in done.stdout


def test_ctrl_c_and_a_service_stop_end_the_table_even_when_started_in_the_background(tmp_path):
    """A process started in the background (``cmd &`` in a script) inherits SIGINT ignored; the
    table still stops cleanly on it, and on SIGTERM, exiting 0."""
    config = tmp_path / "table.toml"
    config.write_text('[shoe]\nurl = "socket://127.0.0.1:9"\n[screen]\nport = 0\n')
    for stopping in (signal.SIGINT, signal.SIGTERM):
        process = start_table(
            config, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        try:
            printed_screen(process)
        finally:
            process.send_signal(stopping)
            try:
                # a bound for a hang, not a speed check: past STOP_BOUND_S the table writes its
                # threads' stacks to stderr, which the failure shows
                code = process.wait(STOP_BOUND_S + 10)
            except subprocess.TimeoutExpired:
                process.kill()
                pytest.fail(f"{stopping!r} did not stop the table; its stderr:\n"
                            f"{process.communicate()[1]}")
        assert code == 0, stopping


@pytest.mark.parametrize("with_shoe", [True, False], ids=["with a shoe", "hand-held"])
def test_a_deck_accepted_through_the_shoe_check_runs_only_at_a_table_with_a_shoe(
        tmp_path, with_shoe):
    """An enrolled deck whose acceptance report scores the shoe check starts where the config
    has a ``[shoe]``, whose cards the camera checks; a hand-held table names every card, so it
    refuses that report and does not start (exit 2), saying it needs a naming one."""
    import onnx

    from dealer_assist.calibration.layout import Layout
    from dealer_assist.vision import model_control
    from dealer_assist.vision.detector import MODELS_DIR
    from tests.calibration.practice_view import fit_from_hand_points

    layout = Layout.load(ROOT / "calibration" / "layouts" / "standard-7seat.yaml")
    fit_from_hand_points((1280, 720), layout).calibration.save(
        tmp_path / "table-calibration.yaml")
    files = []  # the shipped INT8 models re-saved: not the shipped bytes, as an enrolled deck's
    for name in ("cards", "index-reader"):
        model = onnx.load(str(MODELS_DIR / f"{name}.int8.onnx"))
        model.producer_name = "enrol-test"
        onnx.save(model, str(tmp_path / f"{name}-ourdeck.int8.onnx"))
        files.append(tmp_path / f"{name}-ourdeck.int8.onnx")
    hashes = [model_control.sha256_of(path) for path in files]
    model_control.AcceptanceReport(
        deck="ourdeck", detector_sha256=hashes[0], reader_sha256=hashes[1], check="shoe",
        figures={"landing": 0.9962, "verification": 0.9959, "wrong_match": 0.0,
                 "false_switched": 0.0},
        cards=3368, scenes=400, source="independent", command="test").write(
        model_control.acceptance_path(files[0]))
    config = tmp_path / "table.toml"
    config.write_text(
        ('[shoe]\nurl = "socket://127.0.0.1:9"\n' if with_shoe else "")
        + '[camera]\nsource = 0\ncalibration = "table-calibration.yaml"\n'
        f'model = "{files[0].name}"\nreader = "{files[1].name}"\n[screen]\nport = 0\n'
        f'[vision]\nruntime = "onnxruntime"\ndetector_sha256 = "{hashes[0]}"\n'
        f'reader_sha256 = "{hashes[1]}"\n')
    done = run_table(config, "--check")
    if with_shoe:
        assert done.returncode == 0, done.stderr
        assert "camera 0" in done.stdout
    else:
        assert done.returncode == 2, done.stderr
        assert "this table has no shoe: it names every card" in done.stderr
        assert "camera 0" not in done.stdout
