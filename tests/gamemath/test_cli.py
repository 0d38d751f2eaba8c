"""``dealer-assist par-sheet`` end to end, through the top-level dispatcher."""

import json

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
        (("--rules", '{"preset": "s17-6", '), "--rules: not valid JSON at character"),
        (
            ("--rules", '{"preset": "s17-6", "double_double_down": true}'),
            "double-double down is only allowed where the dealer hits soft 17",
        ),
        (("--rules", "s17-6", "--rounds", "0"), "--rounds must be positive"),
        (("--rules", "s17-6", "--workers", "0"), "--workers must be positive"),
        (("--rules", "s17-6", "--seed", "-1"), "--seed must be 0 or more, got -1"),
    ],
)
def test_bad_input_is_a_clear_message_not_a_traceback(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err
