"""The reader's training crops: rendered in chunks on every core, the same crops as rendering
those chunks one after another in one process (so a model is reproducible on any machine); and
the command's defaults are the shipped reader's recipe."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from dealer_assist.vision import train_reader
from dealer_assist.vision.artwork import HELD_OUT_DESIGNS, installed_designs, load_designs
from dealer_assist.vision.procedural import drawn_designs, fonts_under, installed_fonts, text_fonts
from dealer_assist.vision.reader import CROP_SIZE, RANK_CLASSES
from dealer_assist.vision.scenes import SceneConfig

TRAINED = [d for d in installed_designs() if d not in HELD_OUT_DESIGNS]


@pytest.mark.skipif(len(TRAINED) < 2, reason="card artwork not installed; "
                    "run scripts/install-card-art.sh")
def test_chunks_rendered_in_worker_processes_match_serial_rendering(monkeypatch) -> None:
    monkeypatch.setattr(train_reader, "CHUNK_SCENES", 2)
    names = TRAINED[:2]
    crops, ranks, suits = train_reader.render_crops(names, [], 0, 3, seed=9)

    designs = load_designs(names)
    first, second = np.random.SeedSequence(9).spawn(2)
    serial = [train_reader.make_crops(designs, 2, first),
              train_reader.make_crops(designs, 1, second)]
    assert np.array_equal(crops, np.concatenate([part[0] for part in serial]))
    assert np.array_equal(ranks, np.concatenate([part[1] for part in serial]))
    assert np.array_equal(suits, np.concatenate([part[2] for part in serial]))
    assert crops.shape[1:] == (CROP_SIZE, CROP_SIZE, 3) and crops.dtype == np.uint8
    not_index = RANK_CLASSES.index("-")
    assert (ranks != not_index).any() and (ranks == not_index).any()  # indices and negatives
    assert (suits[ranks == not_index] == -100).all()  # a negative has no suit to learn


@pytest.mark.skipif(len(TRAINED) < 1, reason="card artwork not installed; "
                    "run scripts/install-card-art.sh")
def test_a_card_width_reaches_the_rendering_processes() -> None:
    """``--card-width`` aims a fine-tune at one size of card: every worker renders it."""
    small = SceneConfig(card_width=(40.0, 40.0))
    names = TRAINED[:1]
    crops, _, _ = train_reader.render_crops(names, [], 0, 1, seed=5, config=small)
    (chunk,) = np.random.SeedSequence(5).spawn(1)
    serial, _, _ = train_reader.make_crops(load_designs(names), 1, chunk, small)
    default, _, _ = train_reader.make_crops(load_designs(names), 1, chunk)
    assert np.array_equal(crops, serial)
    assert not (len(default) == len(serial) and np.array_equal(default, serial))


@pytest.mark.skipif(not text_fonts(installed_fonts()), reason="no fonts for drawn decks; "
                    "run scripts/install-card-art.sh")
def test_an_upright_share_reaches_the_rendering_processes() -> None:
    """``--drawn-upright``: every worker draws the decks with that share printing the bottom
    index otherwise than turned over."""
    crops, _, _ = train_reader.render_crops([], [], 2, 1, seed=3, upright_share=1.0)
    (chunk,) = np.random.SeedSequence(3).spawn(1)
    upright = drawn_designs(2, 3, weights=False, upright_share=1.0)
    serial, _, _ = train_reader.make_crops(upright, 1, chunk)
    turned, _, _ = train_reader.make_crops(drawn_designs(2, 3), 1, chunk)
    assert np.array_equal(crops, serial)
    assert not (len(turned) == len(serial) and np.array_equal(turned, serial))


@pytest.mark.skipif(not text_fonts(installed_fonts()), reason="no fonts for drawn decks; "
                    "run scripts/install-card-art.sh")
def test_a_font_folder_reaches_the_rendering_processes(tmp_path) -> None:
    """``--font-dir``: the folder's fonts are found in its subfolders too (other files left
    alone), and every worker draws the decks from the installed fonts and those."""
    font = text_fonts(installed_fonts())[0]
    (tmp_path / "family").mkdir()
    copies = [tmp_path / "family" / f"Extra{i:02d}-{font.name}" for i in range(30)]
    for copy in copies:
        copy.write_bytes(font.read_bytes())
    (tmp_path / "family" / "README").write_text("not a font")
    widened_fonts = installed_fonts() + copies

    def scene(seed: int, fonts: list) -> np.ndarray:
        (chunk,) = np.random.SeedSequence(seed).spawn(1)
        return train_reader.make_crops(drawn_designs(1, seed, fonts), 1, chunk)[0]

    def same(a: np.ndarray, b: np.ndarray) -> bool:
        return a.shape == b.shape and np.array_equal(a, b)

    # a seed whose one scene the folder's fonts change (most do; the search keeps it exact)
    seed = next(s for s in range(20) if not same(scene(s, widened_fonts), scene(s, None)))
    extra_fonts = fonts_under([tmp_path])
    assert extra_fonts == copies
    crops, _, _ = train_reader.render_crops([], [], 1, 1, seed=seed, extra_fonts=extra_fonts)
    assert same(crops, scene(seed, widened_fonts))


@pytest.mark.parametrize("widths", [["0", "80"], ["80", "58"], ["58", "inf"], ["nan", "80"]])
def test_a_card_width_that_cannot_be_rendered_is_refused(widths, capsys) -> None:
    with pytest.raises(SystemExit) as refused:
        train_reader.main(["--card-width", *widths])
    assert refused.value.code == 2
    assert "--card-width LEAST MOST: need 0 < LEAST <= MOST, finite" in capsys.readouterr().err


@pytest.mark.parametrize(("flag", "value", "rule"), [
    ("--scenes", "0", "must be from 1 to 1000000, got 0"),
    ("--epochs", "0", "must be from 1 to 10000, got 0"),
    ("--width", "0", "must be from 1 to 512, got 0"),
    ("--drawn", "-1", "must be from 0 to 10000, got -1"),
    ("--drawn-upright", "1.5", "must be from 0 to 1, got 1.5"),
    ("--seed", "-1", "a seed must be from 0 to 4294967295, got -1"),
    ("--lr", "0", "must be above 0 and at most 1, got 0"),
    ("--lr", "nan", "must be above 0 and at most 1, got nan"),
])
def test_an_option_out_of_range_is_refused_before_any_work(flag, value, rule, capsys) -> None:
    with pytest.raises(SystemExit) as refused:
        train_reader.main([flag, value])
    assert refused.value.code == 2
    assert f"argument {flag}: {rule}" in capsys.readouterr().err


def test_a_missing_starting_point_or_deck_is_refused_before_any_work(tmp_path, capsys) -> None:
    missing = tmp_path / "nowhere.pt"
    with pytest.raises(SystemExit) as refused:
        train_reader.main(["--init", str(missing)])
    assert refused.value.code == 2
    assert f"argument --init: no such file: {missing}" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        train_reader.main(["--faces", str(tmp_path / "deck")])
    assert refused.value.code == 2
    assert f"no such design folder: {tmp_path / 'deck'}" in capsys.readouterr().err


def test_without_torch_it_says_where_it_runs(monkeypatch, capsys) -> None:
    """In the table's environment (no torch): one line naming torch and the install, exit 2."""
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now raises ImportError
    with pytest.raises(SystemExit) as refused:
        train_reader.main([])
    assert refused.value.code == 2
    assert "train_reader: needs torch, which the training environment has: pip install " \
        "torch==" in capsys.readouterr().err


def test_the_shipped_readers_runs_repeat_from_the_bare_command() -> None:
    """The model card's training commands rebuild the shipped reader: its record's chain of runs
    (a fine-tune keeps the record of the run it started from) ends in a run from scratch with
    every setting the bare command's default, and each fine-tune on the way rendered fresh scenes
    (a seed of its own) of the defaults' data, or of cards of a narrower range of widths (a
    record from before ``--card-width`` rendered the default range), or with a share of the drawn
    decks printing their bottom index otherwise than turned over (none in a record from before
    ``--drawn-upright``)."""
    run = json.loads((train_reader.MODELS_DIR / "index-reader.train.json").read_text())
    defaults = train_reader.parser().parse_args([])
    assert defaults.faces == []
    seeds = []
    while True:
        assert run["enrolled"] == []
        for setting in ("drawn", "drawn_weights", "scenes", "width"):
            assert run[setting] == getattr(defaults, setting), setting
        least, most = run.get("card_width", defaults.card_width)
        assert defaults.card_width[0] <= least <= most <= defaults.card_width[1]
        seeds.append(run["seed"])
        if run["init"] is None:
            break
        assert run["init_run"] is not None, f"no record of {run['init']}, the run started from"
        run = run["init_run"]
    for setting in ("epochs", "seed", "init", "lr"):
        assert run[setting] == getattr(defaults, setting), setting
    assert run.get("drawn_upright", 0.0) == defaults.drawn_upright
    assert run.get("bfloat16", True) == defaults.bfloat16  # every run before the flag: True
    assert tuple(run.get("card_width", defaults.card_width)) == tuple(defaults.card_width)
    assert len(set(seeds)) == len(seeds)
    assert train_reader.parser().parse_args(["--no-drawn-weights"]).drawn_weights is False


def test_a_fine_tune_keeps_the_record_of_the_weights_it_starts_from(tmp_path) -> None:
    weights = tmp_path / "reader.pt"
    assert train_reader.recorded_run(weights) is None  # no record: a reader made elsewhere
    weights.with_suffix(".train.json").write_text('{"seed": 14, "init": null}')
    assert train_reader.recorded_run(weights) == {"seed": 14, "init": None}


def refusal_of_weights_with_record(weights, record: str, capsys) -> str:
    """What train_reader says refusing ``--init weights`` with ``record`` beside them."""
    weights.write_bytes(b"weights")
    weights.with_suffix(".train.json").write_text(record)
    with pytest.raises(SystemExit) as refused:
        train_reader.main(["--init", str(weights)])
    assert refused.value.code == 2
    return capsys.readouterr().err


def test_weights_of_another_width_are_refused_before_any_work(tmp_path, capsys) -> None:
    """The record beside the --init weights names their width; a run of another width could not
    load them, so it stops before the minutes of rendering (and before importing torch)."""
    weights = tmp_path / "wide.pt"
    err = refusal_of_weights_with_record(weights, '{"seed": 14, "width": 48, "init": null}',
                                         capsys)
    assert f"--init {weights} was trained with --width 48: give the same --width" in err


def test_an_unreadable_record_beside_the_weights_is_refused_before_any_work(
        tmp_path, capsys) -> None:
    weights = tmp_path / "reader.pt"
    err = refusal_of_weights_with_record(weights, '{"seed": 14, "wid', capsys)
    assert f"--init {weights}: its record {weights.with_suffix('.train.json')}" in err
    assert "is not readable JSON" in err


@pytest.mark.parametrize("record", ["[1, 2]", '"run"', "null", "14"])
def test_a_record_that_is_not_a_json_object_is_refused_before_any_work(
        tmp_path, capsys, record) -> None:
    weights = tmp_path / "reader.pt"
    err = refusal_of_weights_with_record(weights, record, capsys)
    assert f"--init {weights}: its record {weights.with_suffix('.train.json')} is not a run " \
        f"record (not a JSON object: {record})" in err


def test_weights_that_do_not_load_are_refused_before_rendering(tmp_path, capsys,
                                                               monkeypatch) -> None:
    """Needs torch (the training environment; the table's test environment has none, so this
    is skipped there): a .pt that is not a reader of this width (here a corrupt file, then the
    weights of another network) is refused before any scene is rendered."""
    torch = pytest.importorskip("torch")

    def no_rendering(*args, **kwargs):
        raise AssertionError("rendered before the weights were checked")

    monkeypatch.setattr(train_reader, "render_crops", no_rendering)
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"not a torch file")
    with pytest.raises(SystemExit) as refused:
        train_reader.main(["--init", str(corrupt)])
    assert refused.value.code == 2
    assert f"--init {corrupt}: not the weights of a --width 32 reader (" in capsys.readouterr().err

    other = tmp_path / "other.pt"
    conv = torch.nn.Conv2d(3, 8, 3, padding=1, bias=False)
    torch.save({"body.0.0.weight": conv.weight.detach()}, other)
    with pytest.raises(SystemExit) as refused:
        train_reader.main(["--init", str(other), "--width", "16"])
    assert refused.value.code == 2
    assert f"--init {other}: not the weights of a --width 16 reader (" in capsys.readouterr().err
