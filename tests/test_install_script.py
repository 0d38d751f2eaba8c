"""``scripts/install.sh`` says what it installs and installs again only when something changed
(pyproject.toml, the checkout, the extras asked for).

The ``.venv`` here is a stand-in: its ``python`` records how it was called instead of running pip
(a real install needs the package registry and minutes, and must never touch the venv these tests
run in); the script under test is the real one, run by bash in a copy of the checkout."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "install.sh", root / "scripts" / "install.sh")
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.write_text(f'#!/bin/sh\necho "$*" >> {root / "pip-calls"}\n')
    entry = bin_dir / "dealer-assist"
    entry.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    entry.chmod(0o755)
    return root


def install(root: Path, extras: str) -> tuple[list[str], str]:
    """The pip calls one run of install.sh made, and what it said."""
    calls = root / "pip-calls"
    calls.unlink(missing_ok=True)
    done = subprocess.run(["bash", "scripts/install.sh", extras], cwd=root, capture_output=True,
                          text=True, check=True)
    return (calls.read_text().splitlines() if calls.exists() else []), done.stderr


def test_an_install_that_is_current_is_not_done_again(tmp_path):
    root = checkout(tmp_path)
    calls, said = install(root, "table")
    assert "-m pip install -q -e .[table]" in calls
    assert "installing dealer-assist[table] into .venv" in said
    assert install(root, "table") == ([], "dealer-assist[table] is installed in .venv and "
                                          "current: not installed again\n")
    calls, _ = install(root, "table,test")  # other extras: installed
    assert "-m pip install -q -e .[table,test]" in calls
    assert install(root, "table")[0] == [] and install(root, "table,test")[0] == []
    with (root / "pyproject.toml").open("a") as pyproject:
        pyproject.write("\n# a changed dependency\n")
    assert "-m pip install -q -e .[table]" in install(root, "table")[0]


def test_a_failed_install_is_tried_again(tmp_path):
    root = checkout(tmp_path)
    python = root / ".venv" / "bin" / "python"
    python.write_text("#!/bin/sh\nexit 1\n")
    failed = subprocess.run(["bash", "scripts/install.sh", "table"], cwd=root,
                            capture_output=True, text=True)
    assert failed.returncode != 0
    assert not (root / ".venv" / ".dealer-assist-installed").exists()
