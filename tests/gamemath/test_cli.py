"""``dealer-assist par-sheet`` end to end, through the top-level dispatcher."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dealer_assist.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["par-sheet", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_par_sheet_has_the_issue_fields_as_fractions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(
        capsys,
        "--rules",
        "h17-ddd-6",
        "--rounds",
        "200000",
        "--seed",
        "4",
        "--json",
        "--workers",
        "1",
    )
    assert code == 0
    sheet = json.loads(out)
    assert sheet["rules"]["name"] == "h17-ddd-6" and sheet["rounds"] == 200_000
    lo, hi = sheet["house_edge_ci95"]
    assert lo < sheet["house_edge"] < hi and hi - lo < 0.02
    assert round(sheet["match_dealer"]["house_edge"], 6) == 0.030555
    assert sheet["match_dealer"]["house_edge_exact"] == "114/3731"
    assert round(sheet["insurance"]["house_edge"], 4) == 0.2474
    assert sheet["super_bonus"]["one_in"] == 668382
    assert set(sheet["bonus_21"]) >= {"five_card_21", "seven_seven_seven_spades"}
    assert 1.1 < sheet["average_total_wager"] < 1.4


def test_same_seed_same_sheet(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--rules", "s17-6", "--rounds", "50000", "--seed", "9", "--json")
    first = run(capsys, *args)[1]
    second = run(capsys, *args, "--workers", "1")[1]
    assert json.loads(first) == json.loads(second)


def test_text_report_and_custom_rules(capsys: pytest.CaptureFixture[str]) -> None:
    spec = '{"preset": "h17-ddd-8", "double_double_down": "off"}'
    code, out, _ = run(capsys, "--rules", spec, "--rounds", "20000", "--workers", "1")
    assert code == 0
    assert "PAR SHEET  h17-ddd-8+custom" in out
    assert "chart h17 " in out
    assert "MATCH THE DEALER  3:1 unsuited, 12:1 suited" in out


def test_two_decks_without_match_the_dealer(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--rules", "h17-ddd-2", "--rounds", "20000", "--json")
    assert code == 0
    sheet = json.loads(out)
    assert sheet["match_dealer"] is None
    assert sheet["super_bonus"]["one_in"] == 830490


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--rules", "no-such-preset"), "unknown rules preset 'no-such-preset'"),
        (("--rules", '{"preset": "s17-6", '), "--rules: not valid JSON (Expecting"),
        (("--rules", '{"preset": "h17-ddd-6", "preset": "s17-6"}'),
         "--rules: ambiguous JSON"),
        (
            ("--rules", '{"preset": "s17-6", "double_double_down": true}'),
            "double-double down is only allowed where the dealer hits soft 17",
        ),
        (
            ("--rules", '{"preset": "h17-ddd-6", "match_the_dealer": {"unsuited": 1'
             + "0" * 400 + ', "suited": 1}}'),
            "rule set 'h17-ddd-6+custom': match_the_dealer odds must be 0 to 1000 a match",
        ),
        (
            ("--rules", '{"preset": "h17-ddd-6", "match_the_dealer": {"unsuited": 4, '
             '"suited": 1001}}'),
            "rule set 'h17-ddd-6+custom': match_the_dealer odds must be 0 to 1000 a match",
        ),
        (
            ("--rules", '{"preset": "h17-ddd-6", "x": ' + "[" * 5000),
            "--rules: not valid JSON (nested too deeply)",
        ),
        (
            ("--rules", '{"preset": "h17-ddd-6", "decks": 1' + "0" * 5000 + "}"),
            "--rules: not valid JSON (a number with too many digits)",
        ),
    ],
)
def test_bad_input_is_a_clear_message_not_a_traceback(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err


ROUNDS_RANGE = "--rounds: a number of rounds must be from 1 to 10000000000"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--rounds", "0"), f"{ROUNDS_RANGE}, got 0"),
        (("--rounds", "1" + "0" * 18), f"{ROUNDS_RANGE}, got 1" + "0" * 18),
        (("--rounds", "1e9"), "--rounds: not a number: '1e9'"),
        (("--workers", "0"), "--workers: a number of processes must be from 1 to 256, got 0"),
        (("--workers", "4000"), "--workers: a number of processes must be from 1 to 256, got 4000"),
        (("--seed", "-1"), "--seed: a seed must be from 0 to 4294967295, got -1"),
        (("--seed", "4294967296"), "--seed: a seed must be from 0 to 4294967295, got 4294967296"),
    ],
)
def test_options_out_of_range_are_refused_before_any_work(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    with pytest.raises(SystemExit) as refused:
        main(["par-sheet", "--rules", "s17-6", *argv])
    assert refused.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and f"argument {message}" in err


def par_sheet_process(*argv: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """par-sheet as a shell runs it: its output buffered, so written when the command ends."""
    root = Path(__file__).resolve().parents[2]
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    return subprocess.run(
        [sys.executable, "-m", "dealer_assist", "par-sheet", "--rules", "s17-6", "--rounds",
         "1000", "--workers", "1", *argv],
        cwd=root, env=dict(env, PYTHONPATH=str(root)), text=True, timeout=120, **kwargs)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
def test_output_that_cannot_be_written_is_one_line_and_status_1() -> None:
    with open("/dev/full", "w") as full:
        done = par_sheet_process(stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 1
    assert done.stderr == "dealer-assist par-sheet: I/O error: No space left on device\n"


def test_a_reader_that_goes_away_ends_the_run_quietly() -> None:
    read, write = os.pipe()
    os.close(read)  # like `| head` that has already exited
    with os.fdopen(write, "w") as closed:
        done = par_sheet_process(stdout=closed, stderr=subprocess.PIPE)
    assert done.returncode == 0 and done.stderr == ""
