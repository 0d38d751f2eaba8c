"""The README's examples run as written.

Every fenced ``bash`` block of README.md runs line by line in a fresh directory holding the
repository's ``examples/`` and ``calibration/`` (as a fresh clone's root does), with a
``dealer-assist`` on PATH that runs this tree's code, and each line must exit 0. A block preceded by
``<!-- docs-test: skip (REASON) -->`` is not run (it needs a device, or runs until Ctrl-C); its
commands' ``--help`` must still work. A ``text`` block preceded by ``<!-- docs-test: output of
`COMMAND` -->`` must be exactly what COMMAND prints.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SHIPPED = ("examples", "calibration")  # what the examples read, as a clone has it
COMMAND_TIMEOUT_S = 300

_BLOCK = re.compile(
    r"(?:^<!-- docs-test: (?P<marker>.*?) -->\n)?^```(?P<lang>\w*)\n(?P<body>.*?)^```$",
    re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    line: int  # where the block starts in README.md
    lang: str
    marker: str | None
    body: str

    @property
    def commands(self) -> list[str]:
        return [line for line in self.body.splitlines() if line.strip()]


def _blocks() -> list[Block]:
    text = README.read_text(encoding="utf-8")
    return [Block(text.count("\n", 0, m.start("body")), m["lang"], m["marker"], m["body"])
            for m in _BLOCK.finditer(text)]


def _runnable() -> list[Block]:
    return [b for b in _blocks() if b.lang == "bash" and b.marker is None]


def _skipped() -> list[Block]:
    return [b for b in _blocks() if b.lang == "bash" and (b.marker or "").startswith("skip")]


def _shown_outputs() -> list[tuple[str, str]]:
    shown = []
    for block in _blocks():
        found = re.fullmatch(r"output of `(.+)`", block.marker or "")
        if found:
            shown.append((found[1], block.body))
    return shown


@pytest.fixture
def clone(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A working directory like a fresh clone's root, and an environment whose ``dealer-assist``
    runs this tree's code with the test's interpreter (the installed venv's entry point)."""
    work = tmp_path / "clone"
    work.mkdir()
    for name in SHIPPED:
        (work / name).symlink_to(ROOT / name, target_is_directory=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "dealer-assist"
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m dealer_assist "$@"\n')
    wrapper.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)
    return work, env


def _run(command: str, work: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=env,
                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)


def test_the_readme_has_examples_to_run() -> None:
    runnable = " ".join(" ".join(b.commands) for b in _runnable())
    for needed in ("dealer-assist settle", "dealer-assist calibrate", "dealer-assist par-sheet",
                   "dealer-assist replay", "dealer-assist table"):
        assert needed in runnable, f"README.md runs no `{needed}` example"
    assert _shown_outputs(), "README.md shows no command output to check"
    assert len(_skipped()) <= 5, "most README examples should run offline"


@pytest.mark.parametrize("block", _runnable(), ids=lambda b: f"README.md:{b.line}")
def test_readme_block_runs(block: Block, clone: tuple[Path, dict[str, str]]) -> None:
    work, env = clone
    for command in block.commands:
        replay = re.match(r"dealer-assist replay (\S+)", command)
        if replay and not (work / replay[1] / "index.sqlite").exists():
            pytest.skip(f"{replay[1]} holds no surveillance store: `demo --record` writing one "
                        "is issue 30 item 7")
        done = _run(command, work, env)
        assert done.returncode == 0, (
            f"README.md:{block.line}: `{command}` exited {done.returncode}\n"
            f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}")


@pytest.mark.parametrize("command, shown",
                         [pytest.param(c, s, id=c) for c, s in _shown_outputs()])
def test_readme_shows_the_real_output(command: str, shown: str,
                                      clone: tuple[Path, dict[str, str]]) -> None:
    work, env = clone
    done = _run(command, work, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == shown


def _help_commands() -> list[str]:
    """``dealer-assist SUBCOMMAND [ACTION]`` of every line the tests do not run."""
    found: list[str] = []
    for block in _skipped():
        for command in block.commands:
            words = shlex.split(command, comments=True)
            if words[:1] != ["dealer-assist"]:
                continue
            names = [w for w in words[1:3] if re.fullmatch(r"[a-z][a-z-]*", w)]
            if " ".join(names) not in found:
                found.append(" ".join(names))
    return found


def test_skipped_examples_exist() -> None:
    assert _help_commands(), "the skipped README examples name no dealer-assist command"


@pytest.mark.parametrize("subcommand", _help_commands())
def test_skipped_examples_commands_have_help(subcommand: str,
                                             clone: tuple[Path, dict[str, str]]) -> None:
    work, env = clone
    done = _run(f"dealer-assist {subcommand} --help", work, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: dealer-assist")
