"""Models under control: the manifest is true to the shipped files, a table runs only the files
its config pins by SHA-256, and an enrolled deck only beside an acceptance report that passes."""

from __future__ import annotations

import shutil
from pathlib import Path

import onnx
import pytest

from dealer_assist.vision import model_control, runtime
from dealer_assist.vision.detector import MODELS_DIR
from dealer_assist.vision.model_control import (
    AcceptanceError,
    AcceptanceReport,
    PinError,
    sha256_of,
)
from dealer_assist.vision.startup import start_detector

SHIPPED = model_control.shipped()
INT8 = (MODELS_DIR / "cards.int8.onnx", MODELS_DIR / "index-reader.int8.onnx")


def test_the_manifest_names_every_shipped_model_by_its_hash() -> None:
    """A retrained model must come with its manifest line: a round records this version."""
    onnx_files = sorted(p.name for p in MODELS_DIR.glob("*.onnx"))
    assert sorted(SHIPPED) == onnx_files
    for name, entry in SHIPPED.items():
        assert entry["sha256"] == sha256_of(MODELS_DIR / name), name
        assert entry["version"]


@pytest.mark.parametrize(("value", "expected"), [
    ("A" * 64, ("a" * 64,)),
    (["a" * 64, "b" * 64], ("a" * 64, "b" * 64)),
])
def test_pins_are_one_hash_or_a_list(value, expected) -> None:
    assert model_control.parse_pins(value) == expected


@pytest.mark.parametrize("value", ["abc", [], ["a" * 63], 5, ["g" * 64]])
def test_a_pin_that_is_no_sha256_is_refused(value) -> None:
    with pytest.raises(ValueError, match="SHA-256"):
        model_control.parse_pins(value)


def test_a_file_whose_hash_differs_from_the_pin_is_refused_naming_file_and_hashes() -> None:
    wrong = "0" * 64
    with pytest.raises(PinError) as refused:
        start_detector(runtime_choice=runtime.ONNXRUNTIME, detector_pins=(wrong,),
                       reader_pins=(SHIPPED["index-reader.int8.onnx"]["sha256"],),
                       where="t.toml")
    message = str(refused.value)
    assert str(INT8[0]) in message
    assert SHIPPED["cards.int8.onnx"]["sha256"] in message and wrong in message
    assert "t.toml: vision.detector_sha256" in message


def test_models_not_pinned_at_all_are_refused_saying_their_hash() -> None:
    with pytest.raises(PinError, match="not pinned") as refused:
        start_detector(runtime_choice=runtime.ONNXRUNTIME)
    assert SHIPPED["cards.int8.onnx"]["sha256"] in str(refused.value)


def test_auto_with_nothing_pinned_refuses_naming_every_candidate() -> None:
    with pytest.raises(PinError) as refused:
        start_detector()
    assert "cards.int8.onnx" in str(refused.value) and "cards.onnx" in str(refused.value)


@pytest.fixture()
def enrolled(tmp_path: Path) -> tuple[Path, Path]:
    """An "enrolled deck": the shipped INT8 models re-saved with another producer name, so
    their bytes and hashes are not the shipped ones."""
    out = []
    for source, name in ((INT8[0], "cards-ourdeck.int8.onnx"),
                         (INT8[1], "index-reader-ourdeck.int8.onnx")):
        model = onnx.load(str(source))
        model.producer_name = "enrol-test"
        onnx.save(model, str(tmp_path / name))
        out.append(tmp_path / name)
    return out[0], out[1]


def report_for(files: tuple[Path, Path], precision: float, recall: float) -> AcceptanceReport:
    return AcceptanceReport(deck="ourdeck", detector_sha256=sha256_of(files[0]),
                            reader_sha256=sha256_of(files[1]),
                            figures={"precision": precision, "recall": recall},
                            cards=3000, scenes=100, source="enrol-check",
                            command="python -m dealer_assist.vision.enrol DECK --name ourdeck")


def shoe_report_for(files: tuple[Path, Path], landing: float, verification: float,
                    wrong_match: float = 0.0, false_switched: float = 0.0) -> AcceptanceReport:
    return AcceptanceReport(deck="ourdeck", detector_sha256=sha256_of(files[0]),
                            reader_sha256=sha256_of(files[1]), check="shoe",
                            figures={"landing": landing, "verification": verification,
                                     "wrong_match": wrong_match,
                                     "false_switched": false_switched},
                            cards=3368, scenes=400, source="independent",
                            command="dealer-assist evaluate --deck DECK --shoe --flight table")


def start_enrolled(files: tuple[Path, Path], acceptance: Path | None = None,
                   shoe: bool = False):
    return start_detector(runtime_choice=runtime.ONNXRUNTIME, model=files[0], reader=files[1],
                          detector_pins=(sha256_of(files[0]),),
                          reader_pins=(sha256_of(files[1]),), acceptance=acceptance, shoe=shoe)


def test_an_enrolled_deck_without_its_acceptance_report_does_not_run(enrolled) -> None:
    with pytest.raises(AcceptanceError, match="no acceptance report there") as refused:
        start_enrolled(enrolled)
    assert "enrol-ourdeck.acceptance.json" in str(refused.value)


def test_an_enrolled_deck_short_of_the_goal_does_not_go_live(enrolled) -> None:
    report_for(enrolled, 0.993, 0.979).write(model_control.acceptance_path(enrolled[0]))
    with pytest.raises(AcceptanceError, match=r"precision 0.9930, recall 0.9790 on 3000 cards "
                                              r"\(enrol-check\), short of the goal 0.995"):
        start_enrolled(enrolled)


def test_an_enrolled_deck_whose_report_passes_runs_and_is_named_by_it(enrolled, caplog) -> None:
    report_for(enrolled, 0.997, 0.996).write(model_control.acceptance_path(enrolled[0]))
    started = start_enrolled(enrolled)
    detector, reader = started.models
    assert detector.version == reader.version == "enrolled ourdeck"
    assert detector.sha256 == sha256_of(enrolled[0])
    assert "not yet on the independent renderer's" in caplog.text


def test_a_report_for_other_files_does_not_accept_these(enrolled, tmp_path) -> None:
    report = report_for(enrolled, 0.999, 0.999)
    other = AcceptanceReport(**{**report.__dict__, "reader_sha256": "1" * 64})
    path = tmp_path / "elsewhere.json"
    other.write(path)
    with pytest.raises(AcceptanceError, match="accepts a reader of SHA-256 1111"):
        start_enrolled(enrolled, acceptance=path)


@pytest.mark.parametrize(("change", "why"), [
    ({"format": 2}, "format 2"),
    ({"figures": {"precision": 1.5, "recall": 1, "cards": 1, "scenes": 1}}, "figures.precision"),
    ({"source": "hope"}, "source 'hope'"),
    ({"deck": None, "detector_sha256": "nope"}, "not a SHA-256"),
])
def test_a_damaged_report_is_refused_saying_what(enrolled, tmp_path, change, why) -> None:
    import json

    data = report_for(enrolled, 0.999, 0.999).to_json() | change
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    with pytest.raises(AcceptanceError, match=why):
        AcceptanceReport.load(path)


def test_a_report_cannot_lower_the_goal(enrolled, tmp_path) -> None:
    import json

    data = report_for(enrolled, 0.99, 0.99).to_json() | {"goal": {"precision": 0.9,
                                                                   "recall": 0.9}}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    assert not AcceptanceReport.load(path).passed


def test_a_shoe_table_runs_a_deck_accepted_by_its_figures_through_the_shoe_check(
        enrolled) -> None:
    """At a shoe table the camera checks each card against the shoe's code: a deck whose
    landing and verification reach the goal, with mistakes under 0.1%, goes live there."""
    shoe_report_for(enrolled, 0.9962, 0.9959, wrong_match=0.0003).write(
        model_control.acceptance_path(enrolled[0]))
    detector, reader = start_enrolled(enrolled, shoe=True).models
    assert detector.version == reader.version == "enrolled ourdeck"


def test_a_table_without_a_shoe_does_not_run_a_deck_accepted_only_through_the_shoe_check(
        enrolled) -> None:
    """A hand-held game names every card: figures of checking against a shoe say nothing of
    that, however good."""
    shoe_report_for(enrolled, 1.0, 1.0).write(model_control.acceptance_path(enrolled[0]))
    with pytest.raises(AcceptanceError, match="this table has no shoe: it names every card"):
        start_enrolled(enrolled, shoe=False)


def test_a_shoe_table_also_runs_a_deck_accepted_by_naming(enrolled) -> None:
    report_for(enrolled, 0.997, 0.996).write(model_control.acceptance_path(enrolled[0]))
    assert start_enrolled(enrolled, shoe=True).models[0].version == "enrolled ourdeck"


@pytest.mark.parametrize(("figures", "why"), [
    ({"landing": 0.9940, "verification": 0.9935}, r"lands 99\.400% and verifies 99\.350%"),
    ({"landing": 0.99496, "verification": 0.999}, r"lands 99\.496%"),
    ({"landing": 0.999, "verification": 0.999, "wrong_match": 0.001},
     r"takes 0\.100% for another code in flight"),
    ({"landing": 0.999, "verification": 0.999, "false_switched": 0.0012},
     r"calls 0\.120% switched"),
])
def test_a_shoe_report_short_of_the_goal_or_with_mistakes_does_not_go_live(
        enrolled, figures, why) -> None:
    shoe_report_for(enrolled, **figures).write(model_control.acceptance_path(enrolled[0]))
    with pytest.raises(AcceptanceError, match=why) as refused:
        start_enrolled(enrolled, shoe=True)
    assert "short of the goal 0.995 (mistakes under 0.001) on 3000 cards or more: it may not go" \
        " live" in str(refused.value)


def test_a_shoe_report_at_the_goal_exactly_passes_and_one_on_too_few_cards_does_not(
        enrolled) -> None:
    assert shoe_report_for(enrolled, 0.995, 0.995, wrong_match=0.00099).passed
    few = AcceptanceReport(**{**shoe_report_for(enrolled, 1.0, 1.0).__dict__, "cards": 2999})
    assert not few.passed  # under 0.1% cannot be told from none on so few
    few.write(model_control.acceptance_path(enrolled[0]))
    with pytest.raises(AcceptanceError, match="on 2999 cards"):
        start_enrolled(enrolled, shoe=True)


def test_the_table_is_told_a_deck_accepted_only_through_the_shoe_check_names_no_card(
        enrolled) -> None:
    """Its reading checks the shoe's cards; it may not stand as the card (the shoe down)."""
    shoe_report_for(enrolled, 1.0, 1.0).write(model_control.acceptance_path(enrolled[0]))
    assert start_enrolled(enrolled, shoe=True).names_cards is False
    report_for(enrolled, 0.997, 0.996).write(model_control.acceptance_path(enrolled[0]))
    assert start_enrolled(enrolled, shoe=True).names_cards is True


def test_a_shoe_report_cannot_loosen_its_bounds_and_a_stricter_one_holds(
        enrolled, tmp_path) -> None:
    import json

    data = shoe_report_for(enrolled, 0.996, 0.996, wrong_match=0.0005).to_json()
    assert data["goal"] == {"landing": 0.995, "verification": 0.995,
                            "wrong_match_below": 0.001, "false_switched_below": 0.001}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data | {"goal": {"landing": 0.9, "verification": 0.9,
                                                "wrong_match_below": 0.5,
                                                "false_switched_below": 0.5}}))
    loose = AcceptanceReport.load(path)
    assert (loose.goal, loose.mistakes_below, loose.passed) == (0.995, 0.001, True)
    path.write_text(json.dumps(data | {"goal": {**data["goal"], "wrong_match_below": 0.0001}}))
    assert not AcceptanceReport.load(path).passed


def test_a_report_without_a_check_scores_naming(enrolled, tmp_path) -> None:
    """Reports written before shoe reports existed read as they were meant."""
    import json

    data = report_for(enrolled, 0.997, 0.996).to_json()
    del data["check"]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    report = AcceptanceReport.load(path)
    assert (report.check, report.figures, report.passed) == (
        "naming", {"precision": 0.997, "recall": 0.996}, True)


def test_a_report_whose_figures_are_not_its_checks_is_refused(enrolled, tmp_path) -> None:
    import json

    data = report_for(enrolled, 0.997, 0.996).to_json() | {"check": "shoe"}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    with pytest.raises(AcceptanceError, match="missing goal.landing"):
        AcceptanceReport.load(path)
    shoe = shoe_report_for(enrolled, 1.0, 1.0).to_json()
    for figures, why in (({**shoe["figures"], "landing": float("nan")}, "figures.landing"),
                         ({**shoe["figures"], "landing": "1"}, "figures.landing"),
                         ({k: v for k, v in shoe["figures"].items() if k != "wrong_match"},
                          "missing figures.wrong_match")):
        path.write_text(json.dumps(shoe | {"figures": figures}))
        with pytest.raises(AcceptanceError, match=why):
            AcceptanceReport.load(path)
    with pytest.raises(ValueError, match="figures are precision, recall"):
        AcceptanceReport(**{**report_for(enrolled, 1, 1).__dict__,
                            "figures": {"landing": 1.0, "verification": 1.0}})


def test_a_shipped_file_copied_elsewhere_needs_no_report(tmp_path) -> None:
    """Shipped models are known by hash wherever they lie."""
    files = (tmp_path / INT8[0].name, tmp_path / INT8[1].name)
    for source, target in zip(INT8, files, strict=True):
        shutil.copy(source, target)
    started = start_enrolled(files)
    assert started.models[0].version == SHIPPED[INT8[0].name]["version"]


@pytest.mark.parametrize("doc", ["docs/table.md", "examples/table.toml",
                                 "dealer_assist/table/config.py"])
def test_the_pins_the_docs_show_are_the_shipped_models(doc) -> None:
    """A config copied from the docs runs the shipped models: every SHA-256 shown is one."""
    import re

    text = (MODELS_DIR.parent / doc).read_text(encoding="utf-8")
    shown = set(re.findall(r"\b[0-9a-f]{64}\b", text))
    assert shown == {entry["sha256"] for entry in SHIPPED.values()}
