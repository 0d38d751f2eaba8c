"""The table's key and anchor log, through ``dealer-assist table`` as a separate process: key
rotation, and a fresh chain refused where a recording was; the config keeps both outside the
recording."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dealer_assist.surveillance import Recorder
from dealer_assist.table.config import ConfigError, load_config
from dealer_assist.table.recording import EvidenceFiles
from tests.surveillance.factory import golden_logs, record_round
from tests.table.test_table_cli import register_dealer

ROOT = Path(__file__).resolve().parents[2]


def dealer_assist(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dealer_assist", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def write_config(folder: Path, recording: str = "") -> Path:
    config = folder / "table.toml"
    config.write_text('table_id = "T3"\n[shoe]\nurl = "socket://127.0.0.1:9"\n'
                      f'[recording]\ndir = "rec"\n{recording}')
    return config


def test_rotation_and_a_refused_fresh_chain_through_the_table_command(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    files = EvidenceFiles(tmp_path / "T3.key", tmp_path / "anchors.jsonl")
    recording = tmp_path / "rec"
    with Recorder.open(recording, "T3", evidence=files.open(recording)) as recorder:
        record_round(recorder, golden_logs(["blackjack-pays-3-to-2"])[0], frames=False)
    (recording / "rounds").mkdir()
    (recording / "rounds" / "bj-1.jsonl").write_text('{"type": "round", "id": "bj-1"}\n')

    key_before = (tmp_path / "T3.key").read_bytes()
    for bad, said in (("x" * 201, "got 201 characters"),
                      ("lost\nINFO forged line", "with a line break, control or format character")):
        for option in ("--rotate-key", "--new-chain"):
            refused = dealer_assist("table", "--config", str(config), option, bad)
            assert refused.returncode == 2
            assert f"dealer-assist table: {option}: a reason of 1 to 200 characters on one line" \
                in refused.stderr and said in refused.stderr
    assert (tmp_path / "T3.key").read_bytes() == key_before  # nothing rotated

    rotated = dealer_assist("table", "--config", str(config), "--rotate-key", "test rotation")
    assert rotated.returncode == 0, rotated.stderr
    assert f"hand {tmp_path / 'T3.pub'} to surveillance" in rotated.stdout
    verified = dealer_assist("replay", str(recording), "--verify", "--key",
                             str(tmp_path / "T3.pub"), "--anchor-log",
                             str(tmp_path / "anchors.jsonl"))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "note: keys rotated: " in verified.stdout

    for path in recording.glob("index.sqlite*"):
        path.unlink()
    register_dealer(config)  # a table with no dealer to sign in refuses before its recording
    refused = dealer_assist("table", "--config", str(config))
    assert refused.returncode == 2
    assert "recording.dir: recording store" in refused.stderr
    assert "start the table with --new-chain" in refused.stderr
    assert "names chain(s)" in refused.stderr and "rounds/ holds 1 round file(s)" in refused.stderr


@pytest.mark.parametrize("key", ["key", "anchor_log"])
def test_the_key_and_the_anchor_log_must_lie_outside_the_recording(tmp_path: Path,
                                                                  key: str) -> None:
    config = write_config(tmp_path, f'{key} = "rec/inside"\n')
    with pytest.raises(ConfigError, match=f"recording.{key}: .* lies in the recording directory"):
        load_config(config)


def test_the_key_and_the_anchor_log_default_beside_the_config(tmp_path: Path) -> None:
    loaded = load_config(write_config(tmp_path))
    assert (loaded.key, loaded.anchor_log) == (tmp_path / "T3.key", tmp_path / "anchors.jsonl")
