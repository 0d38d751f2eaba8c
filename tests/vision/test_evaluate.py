"""The evaluation's scoring rules, on hand-made scenes and observations."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from dealer_assist.vision.artwork import CARD_CODES
from dealer_assist.vision.detector import DEFAULT_READER, CardObservation, Detections
from dealer_assist.vision.evaluate import (
    MISREAD,
    NOT_AN_INDEX,
    UNFOUND,
    UNSURE,
    Score,
    miss_causes,
    score_scene,
    score_tracked,
)
from dealer_assist.vision.scenes import IndexLabel, PlacedCard, Scene
from dealer_assist.vision.tracker import CardEvent, EventKind
from tests.vision.faces import drawn_face, jumbo_face, write_deck

BOXES = {code: (0.05, 0.05, 0.2, 0.25) for code in ("7S", "KD")}


def scene() -> Scene:
    quad = np.array([[100, 100], [170, 100], [170, 198], [100, 198]], np.float32)
    cards = (PlacedCard("7S", quad, False), PlacedCard("KD", quad + [300, 0], False))
    labels = (IndexLabel(6, (103.5, 104.9, 114.0, 124.5), 0),
              IndexLabel(38, (403.5, 104.9, 414.0, 124.5), 1))
    return Scene(np.zeros((720, 1280, 3), np.uint8), cards, labels)


def seen(card: str, box: tuple[float, float, float, float]) -> CardObservation:
    return CardObservation(card, (box[0] + box[2]) / 2, (box[1] + box[3]) / 2, 0.9, False, (box,))


def test_right_wrong_duplicate_ghost_and_missed() -> None:
    score = Score()
    score_scene(scene(), BOXES, [
        seen("7S", (104, 105, 114, 124)),   # right
        seen("7S", (103, 104, 113, 125)),   # the same card again: a false positive
        seen("KH", (404, 105, 414, 124)),   # wrong suit: false positive, and KD is missed
        seen("2C", (900, 600, 910, 620)),   # nothing there: false positive
    ], score)
    assert (score.true_positives, score.false_positives, score.false_negatives) == (1, 3, 1)
    assert score.suit_confusion() == {("D", "H"): 1}
    assert score.precision == 0.25 and score.recall == 0.5


def test_each_missed_card_is_explained_index_by_index() -> None:
    """Four cards: one found right (not a miss), one whose two indices were read right but
    unsure and not found at all, one read as "not an index", one misread."""
    quad = np.array([[0, 0], [70, 0], [70, 98], [0, 98]], np.float32)
    cards = tuple(PlacedCard(code, quad + [200 * k, 0], False)
                  for k, code in enumerate(("7S", "KD", "2C", "9H")))
    index = (3.0, 5.0, 13.0, 25.0)

    def at(k: int, dy: float = 0.0) -> tuple[float, float, float, float]:
        return (index[0] + 200 * k, index[1] + dy, index[2] + 200 * k, index[3] + dy)

    labels = (IndexLabel(CARD_CODES.index("7S"), at(0), 0),
              IndexLabel(CARD_CODES.index("KD"), at(1), 1),
              IndexLabel(CARD_CODES.index("KD"), at(1, 60), 1),
              IndexLabel(CARD_CODES.index("2C"), at(2), 2),
              IndexLabel(CARD_CODES.index("9H"), at(3), 3))
    scene = Scene(np.zeros((720, 1280, 3), np.uint8), cards, labels)
    found = np.array([at(0), at(1), at(2), at(3)], np.float32)  # KD's second index: no box
    readings = Detections(np.array([at(0), at(1), at(3)], np.float32),
                          np.array([0.95, 0.4, 0.9], np.float32),
                          np.array([CARD_CODES.index(c) for c in ("7S", "KD", "9S")]))
    causes = miss_causes(scene, {0}, found, readings)
    assert causes == {(UNSURE, UNFOUND): 1, (NOT_AN_INDEX,): 1, (MISREAD,): 1}


def test_confusion_sums_every_wrong_read() -> None:
    score = Score()
    score.confusions.update({("6S", "8S"): 2, ("6H", "8H"): 1, ("6H", "6D"): 3, ("TC", "KS"): 1})
    assert score.rank_confusion() == {("6", "8"): 3, ("T", "K"): 1}
    assert score.suit_confusion() == {("H", "D"): 3, ("C", "S"): 1}


def test_each_design_keeps_its_own_tally(tmp_path) -> None:
    """``evaluate`` with the shipped models over two decks (folders of 52 faces): each deck's
    tally is kept apart and the two add up to the whole (a design read badly shows up), each
    missed card gets its causes, and the run says how far it is."""
    from dealer_assist.vision.detector import CardDetector
    from dealer_assist.vision.evaluate import evaluate

    folders = [str(write_deck(tmp_path / name, draw))
               for name, draw in (("plain", drawn_face), ("jumbo", jumbo_face))]
    said: list[str] = []
    score = evaluate(CardDetector(), folders, scenes=6, seed=3, explain_misses=True,
                     progress=said.append)
    assert [line.split(" in ")[0] for line in said] == [
        f"scored {n} of 6 scenes" for n in range(1, 7)]  # a progress line after each scene
    assert sorted(score.by_design) == ["jumbo", "plain"]
    parts = score.by_design.values()
    assert score.true_positives + score.false_negatives > 0
    for attribute in ("true_positives", "false_positives", "false_negatives", "indices",
                      "indices_found"):
        assert getattr(score, attribute) == sum(getattr(p, attribute) for p in parts), attribute
    assert score.confusions == sum((p.confusions for p in parts), Counter())
    assert all(p.indices > 0 for p in parts)
    assert sum(score.misses.values()) == score.false_negatives  # every miss explained


def test_the_trackers_cards_are_scored_by_the_card_their_point_lies_on() -> None:
    """A held card is right where its point lies on a card of its code (once per card; under
    another card too, as a fan's centre point may), false on another card, on nothing or a
    second time; a card its tracker removed is not held, a changed one is held with its new
    code; a card whose indices were all covered is ignored."""
    quad = np.array([[100, 100], [170, 100], [170, 198], [100, 198]], np.float32)
    cards = (PlacedCard("7S", quad, False), PlacedCard("KD", quad + [300, 0], False),
             PlacedCard("2H", quad + [600, 0], False), PlacedCard("9C", quad + [900, 0], False),
             PlacedCard("4D", quad + [30, 0], False))  # on the right half of 7S
    labels = tuple(IndexLabel(CARD_CODES.index(c.code), (0, 0, 1, 1), k)
                   for k, c in enumerate(cards) if c.code != "9C")  # 9C: no readable index
    held = Scene(np.zeros((720, 1280, 3), np.uint8), cards, labels)

    def event(kind: EventKind, track: int, card: str, x: float) -> CardEvent:
        return CardEvent(kind, card, x, 150.0, 0, track)

    score = Score()
    score_tracked(held, [
        event(EventKind.APPEARED, 1, "7S", 160),  # right, though 4D lies on top there
        event(EventKind.APPEARED, 2, "7S", 110),  # the same card again: false
        event(EventKind.APPEARED, 7, "4D", 165),  # right: the card on top there
        event(EventKind.APPEARED, 3, "KD", 420),
        event(EventKind.CHANGED, 3, "KS", 420),  # now read as another card: false, a confusion
        event(EventKind.APPEARED, 4, "2H", 650),
        event(EventKind.REMOVED, 4, "2H", 650),  # gone: 2H is missed
        event(EventKind.APPEARED, 5, "5D", 50),  # on the felt: false
        event(EventKind.APPEARED, 6, "9C", 1020),  # only covered indices: ignored
    ], score)
    assert (score.true_positives, score.false_positives, score.false_negatives,
            score.ignored) == (2, 3, 2, 1)
    assert score.confusions == Counter({("KD", "KS"): 1})


def test_several_frames_a_scene_score_every_frame_and_the_trackers_cards(tmp_path) -> None:
    """``frames=3``: each frame is tallied as one scene is, the indices those of the very frames
    rendered (three views of one layout a scene), and the tracker's cards once a scene (the
    shipped models read few of this drawn deck's cards: the tally, not the figure, is tested)."""
    from dealer_assist.vision.artwork import load_design
    from dealer_assist.vision.detector import CardDetector
    from dealer_assist.vision.evaluate import evaluate
    from dealer_assist.vision.scenes import render_frames

    folder = write_deck(tmp_path / "plain")
    score = evaluate(CardDetector(), [str(folder)], scenes=3, seed=11, frames=3)
    design, rng = load_design(folder), np.random.default_rng(11)
    labelled, labelled_cards = 0, 0
    for _ in range(3):
        rng.integers(1)  # the design drawn for the scene, as evaluate draws it
        shots = render_frames(rng, [design], 3)
        assert len({len(shot.labels) for shot in shots}) == 1
        labelled += len(shots[0].labels)
        labelled_cards += len({lab.card for lab in shots[0].labels})
    assert score.indices == 3 * labelled > 0
    tracked = score.tracked
    assert tracked is not None and tracked.true_positives > 0
    assert tracked.true_positives + tracked.false_negatives == labelled_cards
    assert evaluate(CardDetector(), [str(folder)], scenes=1, seed=11).tracked is None


def test_fewer_frames_than_the_tracker_confirms_a_card_in_are_refused(capsys) -> None:
    """Two frames a scene: the tracker could hold no card, and would report recall 0."""
    from dealer_assist.vision.evaluate import TRACKER_FRAMES, main

    assert TRACKER_FRAMES == 3
    with pytest.raises(SystemExit) as refused:
        main(["--scenes", "1", "--frames", "2"])
    assert refused.value.code == 2
    assert "--frames must be 1, or at least 3" in capsys.readouterr().err


def test_each_blur_band_keeps_the_tally_of_its_own_frames(tmp_path) -> None:
    """Frames are tallied by the camera blur drawn for them: each band holds the indices of the
    very scenes rendered with that blur, and the bands add up to the whole."""
    from dealer_assist.vision.artwork import load_design
    from dealer_assist.vision.detector import CardDetector
    from dealer_assist.vision.evaluate import blur_band, evaluate
    from dealer_assist.vision.scenes import render_scene

    folder = write_deck(tmp_path / "plain")
    score = evaluate(CardDetector(), [str(folder)], scenes=8, seed=11)
    design, rng = load_design(folder), np.random.default_rng(11)
    expected: Counter[str] = Counter()
    for _ in range(8):
        rng.integers(1)  # the design drawn for the scene, as evaluate draws it
        scene = render_scene(rng, [design])
        expected[blur_band(scene.blur)] += len(scene.labels)
    assert {band: tally.indices for band, tally in score.by_blur.items()} == expected
    assert len(expected) >= 2, "these seeds draw frames of more than one blur"
    for attribute in ("true_positives", "false_positives", "false_negatives"):
        assert getattr(score, attribute) == sum(getattr(p, attribute)
                                                for p in score.by_blur.values()), attribute


def test_blur_bands() -> None:
    from dealer_assist.vision.evaluate import BLUR_BANDS, blur_band
    from dealer_assist.vision.scenes import Blur

    assert [blur_band(b) for b in (Blur(), Blur("gaussian", 0.3), Blur("gaussian", 0.7),
                                   Blur("gaussian", 0.71), Blur("motion", 3), Blur("motion", 4),
                                   Blur("motion", 5))] == \
        ["none", "gaussian <= 0.7 px", "gaussian <= 0.7 px", *BLUR_BANDS[2:]]
    assert blur_band(Blur("motion", 9)) == "motion 5 px"


def test_the_cards_size_in_the_frame_is_the_evaluations_to_choose(tmp_path) -> None:
    """``config`` reaches the scene generator: the indices scored are those of scenes rendered
    from the same seed with that config, and two sizes label different indices."""
    from dealer_assist.vision.artwork import load_design
    from dealer_assist.vision.detector import CardDetector
    from dealer_assist.vision.evaluate import evaluate
    from dealer_assist.vision.scenes import SceneConfig, render_scene

    folder = write_deck(tmp_path / "plain")
    design = load_design(folder)
    labelled = {}
    for width in (60.0, 90.0):
        config = SceneConfig(card_width=(width, width))
        score = evaluate(CardDetector(), [str(folder)], scenes=2, seed=5, config=config)
        rng = np.random.default_rng(5)
        expected = 0
        for _ in range(2):
            rng.integers(1)  # the design drawn for the scene, as evaluate draws it
            expected += len(render_scene(rng, [design], config).labels)
        assert score.indices == expected > 0
        labelled[width] = expected
    assert labelled[60.0] != labelled[90.0]


def test_a_card_width_band_that_is_empty_negative_or_endless_is_refused(capsys) -> None:
    from dealer_assist.vision.evaluate import main

    for band in (["90", "60"], ["0", "60"], ["60", "inf"]):
        with pytest.raises(SystemExit) as refused:
            main(["--scenes", "1", "--card-width", *band])
        assert refused.value.code == 2
        assert "--card-width LEAST MOST: need 0 < LEAST <= MOST, finite" in \
            capsys.readouterr().err


def test_a_frame_size_that_is_not_two_integers_the_scenes_can_have_is_refused(capsys) -> None:
    from dealer_assist.vision.evaluate import main

    for size, said in (("3072", "expected WxH"), ("wide", "expected WxH"),
                       ("0x720", "width and height must be from 32 to 8192"),
                       ("1x1", "width and height must be from 32 to 8192"),
                       ("99999x99999", "width and height must be from 32 to 8192")):
        with pytest.raises(SystemExit) as refused:
            main(["--scenes", "1", "--size", size])
        assert refused.value.code == 2
        assert f"--size {size!r}: {said}" in capsys.readouterr().err


def test_the_frame_size_reaches_the_scenes_scored(tmp_path, capsys) -> None:
    """``--size`` scores scenes rendered at that size: the command's tallies are those of
    :func:`evaluate` given that size, and the detector finds the indices there (this plain
    drawn face is read poorly at any size: the reader never saw it)."""
    from dealer_assist.vision.detector import CardDetector
    from dealer_assist.vision.evaluate import evaluate, main
    from dealer_assist.vision.scenes import SceneConfig

    folder = write_deck(tmp_path / "plain")
    assert main(["--scenes", "1", "--designs", str(folder), "--size", "2560x1440",
                 "--card-width", "80", "80"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[0])
    assert summary["size"] == [2560, 1440]
    assert summary["detector_index_recall"] >= 0.9
    config = SceneConfig(size=(2560, 1440), card_width=(80.0, 80.0))
    score = evaluate(CardDetector(), [str(folder)], scenes=1, seed=1000, config=config)
    tallies = (score.true_positives, score.false_positives, score.false_negatives, score.indices)
    assert (summary["true_positives"], summary["false_positives"],
            summary["false_negatives"]) == tallies[:3]
    at_720 = evaluate(CardDetector(), [str(folder)], scenes=1, seed=1000,
                      config=SceneConfig(card_width=(80.0, 80.0)))
    assert (at_720.true_positives, at_720.false_positives, at_720.false_negatives,
            at_720.indices) != tallies


@pytest.fixture(scope="module")
def deck(tmp_path_factory) -> str:
    return str(write_deck(tmp_path_factory.mktemp("decks") / "plain"))


@pytest.mark.parametrize(("args", "said"), [
    (["--scenes", "0"], "argument --scenes: must be from 1 to 1000000, got 0"),
    (["--scenes", "-1"], "argument --scenes: must be from 1 to 1000000, got -1"),
    (["--seed", "-1"], "argument --seed: a seed must be from 0 to 4294967295, got -1"),
    (["--scale", "0"], "argument --scale: must be from 0.25 to 4, got 0"),
    (["--scale", "nan"], "argument --scale: must be from 0.25 to 4, got nan"),
    (["--presence", "-1"], "argument --presence: a fraction (0.7 for 70%) must be above 0"
                           " and at most 1, got -1"),
    (["--confidence", "70"], "argument --confidence: a fraction (0.7 for 70%) must be above 0"
                             " and at most 1, got 70"),
    (["--card-width", "1", "1e9"], "--card-width LEAST MOST: a card 1e+09 px wide (1.4 times as "
                                   "tall) does not fit in a 1280x720 frame: MOST at most 514"),
    (["--card-width", "100", "200", "--size", "640x64"], "does not fit in a 640x64 frame: MOST "
                                                         "at most 45"),
    (["--designs", "nosuch"], "design nosuch: not installed and not a folder of faces "
                              "(installed: "),
    (["--model", "/nonexistent.onnx"], "error: model file not found: /nonexistent.onnx"),
    (["--reader", "/nonexistent.onnx"], "error: model file not found: /nonexistent.onnx"),
    (["--model", str(DEFAULT_READER)], "(is this the index reader?)"),
])
def test_options_that_cannot_be_scored_are_refused_before_any_scene(
        args, said, deck, capsys, monkeypatch) -> None:
    """One line and exit 2, as ``detect`` refuses them; a scene count below 1 had scored
    "precision 1.0000 recall 1.0000 on 0 scenes"."""
    from dealer_assist.vision import evaluate

    def no_scoring(*args, **kwargs):
        raise AssertionError("scored before the options were checked")

    monkeypatch.setattr(evaluate, "evaluate", no_scoring)
    with pytest.raises(SystemExit) as refused:
        evaluate.main(args if "--designs" in args else ["--designs", deck, *args])
    assert refused.value.code == 2
    assert said in capsys.readouterr().err


def test_scenes_without_a_card_are_no_score(tmp_path, capsys) -> None:
    """Cards too small to show an index leave nothing to score: said, exit 1, never a perfect
    score over no card."""
    from dealer_assist.vision.evaluate import main

    folder = write_deck(tmp_path / "plain")
    assert main(["--scenes", "2", "--designs", str(folder),
                 "--card-width", "0.001", "0.001"]) == 1
    captured = capsys.readouterr()
    assert "no card to score: none of the 2 scenes shows a readable corner index (cards " \
        "0.001-0.001 px wide in 1280x720 frames)" in captured.err
    assert "precision" not in captured.out + captured.err


def test_a_folder_that_is_not_a_deck_is_named(tmp_path, capsys) -> None:
    from dealer_assist.vision.evaluate import main

    with pytest.raises(SystemExit) as refused:
        main(["--scenes", "1", "--designs", str(tmp_path)])
    assert refused.value.code == 2
    assert f"error: face AS: no such image file: {tmp_path / 'AS.png'}" in capsys.readouterr().err


def test_the_runtime_named_scores_the_files_it_runs_and_says_how(tmp_path, capsys) -> None:
    """``--runtime openvino`` scores the float files (what OpenVINO runs at the table), its
    regions padded to fixed shapes unless ``--own-shapes``; the summary names all three."""
    from dealer_assist.vision.evaluate import main

    folder = write_deck(tmp_path / "plain")
    for extra, fixed in (([], True), (["--own-shapes"], False)):
        assert main(["--scenes", "1", "--designs", str(folder), "--runtime", "openvino",
                     *extra]) == 0
        summary = json.loads(capsys.readouterr().out.splitlines()[0])
        assert (summary["runtime"], summary["model"], summary["reader"],
                summary["fixed_shapes"]) == ("openvino", "cards.onnx", "index-reader.onnx", fixed)
    assert main(["--scenes", "1", "--designs", str(folder)]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[0])
    assert (summary["runtime"], summary["model"]) == ("onnxruntime", "cards.int8.onnx")
