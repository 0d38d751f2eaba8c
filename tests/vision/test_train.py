"""The detector's training command and deck enrolment refuse what they cannot use before any
work, say where they run when torch is missing, and never delete a folder they did not write.
Nothing here trains: stand-in torch and Ultralytics modules stop a run where training begins."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
import yaml

from dealer_assist.vision import enrol, options, train
from dealer_assist.vision.dataset import write_data_yaml, written_here
from tests.vision.faces import write_deck


class TrainingBegins(Exception):
    """Raised by the stand-in Ultralytics where a real run would start training."""


def no_work(*args, **kwargs):
    raise AssertionError("work started before the options were checked")


@pytest.fixture
def stand_ins(monkeypatch) -> None:
    """torch and ultralytics as modules that stop the run at ``YOLO()``."""
    torch = types.ModuleType("torch")
    torch.set_num_threads = lambda n: None  # type: ignore[attr-defined]
    ultralytics = types.ModuleType("ultralytics")

    def yolo(*args, **kwargs):
        raise TrainingBegins

    ultralytics.YOLO = yolo  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "ultralytics", ultralytics)


@pytest.mark.parametrize(("flag", "value", "rule"), [
    ("--scenes", "-1", "must be from 1 to 1000000, got -1"),
    ("--crops", "0", "must be from 1 to 100, got 0"),
    ("--drawn", "-1", "must be from 0 to 10000, got -1"),
    ("--turns", "2", "must be from 0 to 1, got 2"),
    ("--imgsz", "4096", "must be from 32 to 720, got 4096"),
    ("--epochs", "0", "must be from 1 to 10000, got 0"),
    ("--hours", "0", "must be above 0 and at most 1000, got 0"),
    ("--batch", "0", "must be from 1 to 4096, got 0"),
    ("--lr", "-1", "must be above 0 and at most 1, got -1"),
    ("--lr", "nan", "must be above 0 and at most 1, got nan"),
    ("--seed", "-1", "a seed must be from 0 to 4294967295, got -1"),
    ("--init", "/nonexistent.pt", "no such file: /nonexistent.pt"),
])
def test_train_refuses_an_option_out_of_range_before_any_work(
        flag, value, rule, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(train, "write_dataset", no_work)
    with pytest.raises(SystemExit) as refused:
        train.main(["--work", str(tmp_path), flag, value])
    assert refused.value.code == 2
    assert f"argument {flag}: {rule}" in capsys.readouterr().err


@pytest.mark.parametrize("module", ["torch", "ultralytics"])
def test_train_without_torch_says_where_it_runs(module, tmp_path, capsys, monkeypatch,
                                                stand_ins) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # importing it now raises ImportError
    with pytest.raises(SystemExit) as refused:
        train.main(["--work", str(tmp_path)])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert f"vision.train: needs {module}, which the training environment has: pip " \
        "install torch==" in err
    assert "Traceback" not in err


def test_a_work_folder_it_did_not_write_is_left_alone(tmp_path, capsys, monkeypatch) -> None:
    """Each run replaces WORK/data; a WORK/data of the user's own had been deleted unasked."""
    notes = tmp_path / "data" / "my-notes.txt"
    notes.parent.mkdir()
    notes.write_text("precious")
    monkeypatch.setattr(train, "write_dataset", no_work)
    with pytest.raises(SystemExit) as refused:
        train.main(["--work", str(tmp_path)])
    assert refused.value.code == 2
    assert f"--work {tmp_path}: {tmp_path / 'data'} is not a data set this command wrote" in \
        capsys.readouterr().err
    assert notes.read_text() == "precious"


def test_a_data_set_it_wrote_is_replaced(tmp_path, stand_ins) -> None:
    """The data.yaml a run writes first marks WORK/data as its own: the next run replaces it,
    and so a run interrupted while rendering is cleared too."""
    data = tmp_path / "work" / "data"
    data.mkdir(parents=True)
    write_data_yaml(data)
    (data / "images").mkdir()
    (data / "images" / "stale.jpg").write_bytes(b"old")
    deck = write_deck(tmp_path / "deck")
    with pytest.raises(TrainingBegins):
        train.main(["--work", str(tmp_path / "work"), "--designs", "--faces", str(deck),
                    "--drawn", "0", "--scenes", "1", "--out", str(tmp_path / "cards.onnx")])
    assert not (data / "images" / "stale.jpg").exists()
    assert written_here(data) and list((data / "images" / "train").glob("*.jpg"))


def test_only_the_data_file_it_writes_marks_a_data_set(tmp_path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    assert not written_here(data)
    write_data_yaml(data)
    assert written_here(data)
    (data / "data.yaml").write_text((data / "data.yaml").read_text() + "# mine\n")
    assert not written_here(data)
    (tmp_path / "link").symlink_to(data)
    write_data_yaml(data)
    assert not written_here(tmp_path / "link")


@pytest.mark.parametrize(("flag", "value", "rule"), [
    ("--scenes", "-1", "must be from 1 to 1000000, got -1"),
    ("--epochs", "0", "must be from 1 to 10000, got 0"),
    ("--reader-scenes", "0", "must be from 1 to 1000000, got 0"),
    ("--reader-epochs", "0", "must be from 1 to 10000, got 0"),
    ("--reader-lr", "-1", "must be above 0 and at most 1, got -1"),
    ("--check-scenes", "0", "must be from 1 to 1000000, got 0"),
])
def test_enrol_refuses_an_option_out_of_range_before_any_work(
        flag, value, rule, tmp_path, capsys, monkeypatch) -> None:
    """Each option is checked before the detector's training starts, not when the step that
    uses it comes, minutes later."""
    monkeypatch.setattr(train, "main", no_work)
    with pytest.raises(SystemExit) as refused:
        enrol.main([str(tmp_path), flag, value])
    assert refused.value.code == 2
    assert f"argument {flag}: {rule}" in capsys.readouterr().err


def test_enrol_without_torch_says_where_it_runs(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setattr(train, "main", no_work)
    with pytest.raises(SystemExit) as refused:
        enrol.main([str(write_deck(tmp_path / "deck"))])
    assert refused.value.code == 2
    assert "vision.enrol: needs torch, which the training environment has" in \
        capsys.readouterr().err


@pytest.mark.usefixtures("stand_ins")
def test_enrol_without_onnx_runtime_stops_before_the_fine_tunes(tmp_path: Path, capsys,
                                                                 monkeypatch) -> None:
    """ONNX Runtime quantises and scores the enrolled models; a training environment without it
    had fine-tuned both models for a quarter of an hour and then stopped."""
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # importing it now raises ImportError
    monkeypatch.setattr(train, "main", no_work)
    with pytest.raises(SystemExit) as refused:
        enrol.main([str(write_deck(tmp_path / "deck"))])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert "vision.enrol: needs onnxruntime, which the training environment has" in err
    assert options.TRAINING_INSTALL in err and "onnxruntime" in options.TRAINING_INSTALL.split()


@pytest.mark.parametrize(("flag", "yaml_before", "activation"), [
    ([], {}, None),  # YOLO11's own SiLU, as shipped
    (["--activation", "relu"], {}, "nn.ReLU()"),
    ([], {"activation": "nn.ReLU()"}, None),  # a ReLU checkpoint fine-tuned back to SiLU
])
def test_from_a_checkpoint_the_activation_is_in_the_model_file_the_trainer_builds_from(
        flag, yaml_before, activation, tmp_path, stand_ins) -> None:
    """With a checkpoint, Ultralytics' trainer builds its network from the loaded model's
    ``yaml``, whose "activation" replaces SiLU in every convolution block (seen with the real
    Ultralytics 8.4: a one-epoch run exported 77 Relu and no SiLU)."""
    trained_with: dict = {}

    class Model:
        def __init__(self, source: str) -> None:
            self.model = types.SimpleNamespace(yaml={"nc": 1, **yaml_before})

        def train(self, **kwargs) -> None:
            trained_with.update(self.model.yaml)
            raise TrainingBegins

    sys.modules["ultralytics"].YOLO = Model  # type: ignore[attr-defined]
    checkpoint = tmp_path / "cards.pt"
    checkpoint.write_bytes(b"stand-in")
    with pytest.raises(TrainingBegins):
        train.main([*training_run(tmp_path), "--init", str(checkpoint), *flag])
    assert trained_with["nc"] == 1
    assert trained_with.get("activation") == activation


@pytest.mark.parametrize(("flag", "source"), [
    ([], "yolo11n.yaml"),
    (["--activation", "relu"], "yolo11n-relu.yaml"),
])
def test_from_scratch_the_trainer_is_given_a_model_file_with_the_activation(
        flag, source, tmp_path, stand_ins, monkeypatch) -> None:
    """From scratch the trainer reads the model file it is given, not the loaded model."""
    sources: list[str] = []

    def yolo(path: str):
        sources.append(path)
        raise TrainingBegins

    tasks = types.ModuleType("ultralytics.nn.tasks")
    tasks.yaml_model_load = lambda name: {"nc": 80, "scale": "n"}  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ultralytics.nn", types.ModuleType("ultralytics.nn"))
    monkeypatch.setitem(sys.modules, "ultralytics.nn.tasks", tasks)
    sys.modules["ultralytics"].YOLO = yolo  # type: ignore[attr-defined]
    with pytest.raises(TrainingBegins):
        train.main([*training_run(tmp_path), *flag])
    assert Path(sources[0]).name == source
    if flag:
        assert yaml.safe_load(Path(sources[0]).read_text()) == {
            "nc": 80, "scale": "n", "activation": "nn.ReLU()"}


def training_run(tmp_path: Path) -> list[str]:
    """Options of a one-scene run on a drawn test deck, in ``tmp_path``."""
    deck = write_deck(tmp_path / "deck")
    return ["--work", str(tmp_path / "work"), "--designs", "--faces", str(deck), "--drawn", "0",
            "--scenes", "1", "--out", str(tmp_path / "cards.onnx")]


def test_an_unknown_activation_is_refused_before_any_work(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(train, "write_dataset", no_work)
    with pytest.raises(SystemExit) as refused:
        train.main(["--work", str(tmp_path), "--activation", "gelu"])
    assert refused.value.code == 2
    assert "argument --activation: invalid choice: 'gelu'" in capsys.readouterr().err
