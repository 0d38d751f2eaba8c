"""The reader's training crops: rendered in chunks on every core, the same crops as rendering
those chunks one after another in one process (so a model is reproducible on any machine); and
the command's defaults are the shipped reader's recipe."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dealer_assist.vision import train_reader
from dealer_assist.vision.artwork import HELD_OUT_DESIGNS, installed_designs, load_designs
from dealer_assist.vision.reader import CROP_SIZE, RANK_CLASSES

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


@pytest.mark.parametrize("flag", ["--scenes", "--epochs", "--width"])
def test_nothing_to_train_on_is_refused_before_any_work(flag, capsys) -> None:
    with pytest.raises(SystemExit) as refused:
        train_reader.main([flag, "0"])
    assert refused.value.code == 2
    assert "--scenes, --epochs and --width must be at least 1" in capsys.readouterr().err


def test_a_bad_learning_rate_or_a_missing_starting_point_is_refused_before_any_work(
        tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as refused:
        train_reader.main(["--lr", "0"])
    assert refused.value.code == 2 and "--lr must be above 0" in capsys.readouterr().err
    missing = tmp_path / "nowhere.pt"
    with pytest.raises(SystemExit) as refused:
        train_reader.main(["--init", str(missing)])
    assert refused.value.code == 2
    assert f"--init {missing}: no such file" in capsys.readouterr().err


def test_defaults_reproduce_the_shipped_reader() -> None:
    """The model card's training command is the bare command: every setting the shipped reader
    was trained with (its .train.json) is the command's default."""
    shipped = json.loads((train_reader.MODELS_DIR / "index-reader.train.json").read_text())
    defaults = train_reader.parser().parse_args([])
    assert defaults.faces == [] and shipped["enrolled"] == []
    for setting in ("drawn", "drawn_weights", "scenes", "epochs", "seed", "width", "init", "lr"):
        assert getattr(defaults, setting) == shipped[setting], setting
    assert train_reader.parser().parse_args(["--no-drawn-weights"]).drawn_weights is False
