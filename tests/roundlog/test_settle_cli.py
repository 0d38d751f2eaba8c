"""``dealer-assist settle`` as a person and a tool use it: real processes, real files, stdin."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.golden import DATA, expected_for

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = DATA / "rounds" / "super-bonus-1000-with-envy.jsonl"


def settle(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dealer_assist", "settle", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


def test_json_output_follows_the_spec() -> None:
    result = settle(str(EXAMPLE), "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["round"] == "sb-1" and out["rules"] == "h17-ddd-6"
    assert set(out) >= {"round", "rules", "dealer", "seats", "net"}
    seat = out["seats"][0]
    assert set(seat) >= {"seat", "net", "hands", "match", "insurance", "super_bonus", "envy"}
    assert set(seat["hands"][0]) >= {"cards", "total", "wagered", "outcome", "bonus", "net"}
    assert out["net"] == expected_for(EXAMPLE)["net"]


def test_standard_input() -> None:
    result = settle("-", "--json", stdin=EXAMPLE.read_text())
    assert result.returncode == 0
    assert json.loads(result.stdout)["net"] == "1215.00"


def test_human_output_one_line_per_hand_amounts_aligned() -> None:
    result = settle(str(EXAMPLE))
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[1].startswith("dealer: 7H KD = 17")
    body = lines[2:]
    assert len({len(line) for line in body}) == 1  # right-aligned amount column
    assert any("7-7-7 SUITED 2:1" in line and line.endswith("+20.00") for line in body)
    assert any("SUPER BONUS" in line and line.endswith("+1,000.00") for line in body)
    assert body[-1].startswith("players' net") and body[-1].endswith("+1,215.00")
    assert any(line.startswith("seat 1") and "hand 1: " in line for line in body)  # from 1
    assert not any("hand 0" in line for line in body)


def test_rejected_log_exits_2_with_one_message_naming_line_event_and_why() -> None:
    log = DATA / "refused" / "surrender-after-hit.jsonl"
    result = settle(str(log), "--json")
    assert result.returncode == 2
    assert result.stdout == ""
    message = result.stderr.strip()
    assert "\n" not in message
    assert "line 9" in message and '"action": "surrender"' in message
    assert "surrender is only allowed on the first two cards" in message


def test_missing_file_exits_2() -> None:
    result = settle("/no/such/round.jsonl")
    assert result.returncode == 2 and "cannot read" in result.stderr


def test_several_rounds_in_one_file_give_one_object_each(tmp_path: Path) -> None:
    logs = sorted((DATA / "rounds").glob("bonus-*.jsonl"))[:3]
    combined = tmp_path / "shift.jsonl"
    combined.write_text("".join(p.read_text() for p in logs))
    result = settle(str(combined), "--json")
    assert result.returncode == 0
    rounds = [json.loads(line)["round"] for line in result.stdout.splitlines()]
    assert rounds == [p.stem for p in logs]


def test_the_rounds_before_a_refused_line_are_still_settled(tmp_path: Path) -> None:
    good = sorted((DATA / "rounds").glob("bonus-*.jsonl"))[:2]
    bad = DATA / "refused" / "surrender-after-hit.jsonl"
    shift = tmp_path / "shift.jsonl"
    shift.write_text("".join(p.read_text() for p in [*good, bad, good[0]]))
    result = settle(str(shift), "--json")
    assert result.returncode == 2
    assert [json.loads(line)["round"] for line in result.stdout.splitlines()] == [
        p.stem for p in good]
    lines_before = sum(len(p.read_text().splitlines()) for p in good)
    message = result.stderr.strip()
    assert "\n" not in message and f"line {lines_before + 9}" in message


@pytest.mark.parametrize(("redirect", "message"), [
    ("- <&-", "dealer-assist settle: standard input: end of log: the log is empty: no 'round' "
              "line"),
    (f"{EXAMPLE} >&-", "dealer-assist: standard output is closed: nowhere to print"),
])
def test_a_closed_standard_stream_is_one_clear_line(redirect: str, message: str) -> None:
    result = subprocess.run(
        ["bash", "-c", f"{sys.executable} -m dealer_assist settle {redirect}"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert (result.returncode, result.stderr.strip()) == (2, message)


def test_with_standard_error_closed_a_refusal_never_lands_in_the_json_output() -> None:
    log = DATA / "refused" / "surrender-after-hit.jsonl"
    result = subprocess.run(
        ["bash", "-c", f"{sys.executable} -m dealer_assist settle {log} --json 2>&-"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert (result.returncode, result.stdout) == (2, "")


def test_settling_never_imports_vision_libraries() -> None:
    code = (
        "import sys; from dealer_assist.cli import main; "
        f"rc = main(['settle', {str(EXAMPLE)!r}, '--json']); "
        "heavy = [m for m in ('cv2', 'onnxruntime', 'numpy', 'torch', 'serial') "
        "if m in sys.modules]; "
        "print(heavy, file=sys.stderr); sys.exit(rc or len(heavy))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr


def test_help_lists_commands() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dealer_assist", "--help"], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 0 and "settle" in result.stdout


def test_json_numbers_in_the_round_line_echo_as_json() -> None:
    log = DATA / "rounds" / "json-numbers-in-round-line.jsonl"
    as_json = settle(str(log), "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["rules"] == {"preset": "s17-6", "max_bet": 500.5}
    as_text = settle(str(log))
    assert as_text.returncode == 0, as_text.stderr
    assert 'rules {"preset": "s17-6", "max_bet": 500.5}' in as_text.stdout


def _bet_line(**bet: object) -> bytes:
    return json.dumps({"type": "bet", "seat": 1, "amount": "10"} | bet).encode()


@pytest.mark.parametrize(("line", "why"), [
    # Decimal cannot quantise 1e40 to cents: once a traceback, now refused by its line
    (_bet_line(amount="1e40"), "amount is too large"),
    (b'{"type": "bet", "seat": 1, "amount": 1e40}', "amount is too large"),
    (b"[" * 100_000 + b"]" * 100_000, "not valid JSON (nested too deeply)"),
    (b'{"type": "bet", "seat": 1' + b"1" * 5000 + b', "amount": "10"}',
     "not valid JSON (a number with too many digits)"),
    (_bet_line(player="J\u00e9r\u00f4me").replace(b"\\u00e9", b"\xe9"),
     "not UTF-8 text (byte 0xe9"),
    # an exponent past Decimal's range: abs() overflowed there (decimal.Overflow)
    (_bet_line(amount="1e999999999"), "amount is too large"),
    # Python's json takes the last of two keys: a 10.00 wager was settled as 1000.00
    (b'{"type": "bet", "seat": 1, "amount": "10", "amount": "1000"}',
     "ambiguous JSON (key 'amount' is given twice)"),
    # not JSON numbers, and echoed into --json they made output no JSON reader takes
    (_bet_line(note=float("nan")), "ambiguous JSON (NaN is not a number)"),
    # Decimal reads other scripts' digits and underscores; a log must not
    (_bet_line(amount="\uff11\uff10"), "amount must be written with the digits 0-9"),
    (_bet_line(amount="1_000"), "amount must be written with the digits 0-9"),
])
def test_hostile_lines_are_refused_by_number_never_a_traceback(
        tmp_path: Path, line: bytes, why: str) -> None:
    first = EXAMPLE.read_bytes().splitlines()[0]
    log = tmp_path / "hostile.jsonl"
    log.write_bytes(first + b"\n" + line + b"\n")
    result = settle(str(log), "--json")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith(f"dealer-assist settle: {log}: line 2")
    assert why in result.stderr and "\n" not in result.stderr.strip()


def test_text_output_shows_control_characters_and_lone_surrogates_as_escapes(
        tmp_path: Path) -> None:
    """A round id with a terminal escape sequence or a lone surrogate (JSON allows both as
    escapes): printed as escapes, not sent to the terminal or crashing the encoder."""
    lines = EXAMPLE.read_text().splitlines()
    start = json.loads(lines[0]) | {"id": "r-\x1b[31m-\ud800"}
    log = tmp_path / "odd-id.jsonl"
    log.write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n")
    result = settle(str(log))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("round r-\\x1b[31m-\\ud800   rules ")


def test_a_byte_order_mark_before_the_log_is_read_past(tmp_path: Path) -> None:
    log = tmp_path / "notepad.jsonl"
    log.write_bytes(b"\xef\xbb\xbf" + EXAMPLE.read_bytes())
    result = settle(str(log), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["net"] == expected_for(EXAMPLE)["net"]


def test_a_house_limit_too_large_for_exact_cents_is_refused(tmp_path: Path) -> None:
    lines = EXAMPLE.read_text().splitlines()
    start = json.loads(lines[0])
    start["rules"] = {"preset": start["rules"], "max_bet": "1e30"} \
        if isinstance(start["rules"], str) else start["rules"] | {"max_bet": "1e30"}
    log = tmp_path / "limit.jsonl"
    log.write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n")
    result = settle(str(log), "--json")
    assert result.returncode == 2
    assert "line 1" in result.stderr and "'max_bet'" in result.stderr
    assert "too large" in result.stderr
