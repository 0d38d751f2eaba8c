"""The one logging configuration: level and file from the command line (every command) or the
table's ``[logging]``; an exception that ends a thread is logged with its traceback."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from dealer_assist import logs

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def restored_logging():
    """Put the root logger and ``threading.excepthook`` back as they were after the test."""
    root, package = logging.getLogger(), logging.getLogger("dealer_assist")
    handlers, hook = list(root.handlers), threading.excepthook
    levels = root.level, package.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(levels[0])
    package.setLevel(levels[1])
    threading.excepthook = hook


def dealer_assist(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dealer_assist", *argv], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)


def test_a_file_gets_the_level_and_standard_error_keeps_the_warnings(tmp_path, capsys,
                                                                     restored_logging):
    log = tmp_path / "table.log"
    logs.configure("info", log)
    named = logging.getLogger("dealer_assist.table.example")
    named.debug("per card detail")
    named.info("round R1 settled")
    named.warning("alarm 1 (shoe link down)")
    logging.getLogger("uvicorn.error").info("Started server process")  # another library's
    written = log.read_text()
    assert "Started server process" not in written
    assert "per card detail" not in written
    assert " INFO [MainThread] dealer_assist.table.example: round R1 settled" in written
    assert "WARNING" in written and "alarm 1 (shoe link down)" in written
    err = capsys.readouterr().err
    assert "alarm 1 (shoe link down)" in err and "round R1 settled" not in err

    logs.configure("debug")  # again, without a file: all on standard error, the file let go
    named.debug("per card detail")
    assert "per card detail" in capsys.readouterr().err
    assert "per card detail" not in log.read_text()


def test_an_exception_that_ends_a_thread_is_logged_with_its_traceback(tmp_path,
                                                                      restored_logging):
    log = tmp_path / "threads.log"
    logs.configure("warning", log)

    def doomed() -> None:
        raise KeyError("a bug in a thread")

    thread = threading.Thread(target=doomed, name="doomed-thread")
    thread.start()
    thread.join()
    written = log.read_text()
    assert "CRITICAL [doomed-thread] dealer_assist.logs: thread doomed-thread stopped: " \
           "KeyError: 'a bug in a thread'" in written
    assert "Traceback (most recent call last):" in written and "in doomed" in written


def test_a_level_not_known_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match="must be one of debug, info, warning, error, "
                                         "critical, got 'loud'"):
        logs.level_number("loud")
    assert logs.level_number(" Debug ") == logging.DEBUG


def test_log_file_on_the_command_line_is_written(tmp_path):
    config = tmp_path / "table.toml"
    config.write_text('table_id = "T7"\n[shoe]\nurl = "socket://127.0.0.1:9"\n')
    log = tmp_path / "logs" / "check.log"
    log.parent.mkdir()
    done = dealer_assist("table", "--config", str(config), "--check", "--log-file", str(log))
    assert done.returncode == 0, done.stderr
    assert f"logging INFO to {log}" in done.stdout
    written = log.read_text()
    assert f"INFO [MainThread] dealer_assist.table.cli: configuration {config} checked " \
           "(its start tried): table T7: rules h17-ddd-6, shoe socket://127.0.0.1:9" in written
    assert done.stderr == ""  # nothing worse than INFO: standard error stays quiet


def test_the_command_line_overrides_the_configs_logging(tmp_path):
    config = tmp_path / "table.toml"
    config.write_text('[shoe]\nurl = "socket://127.0.0.1:9"\n'
                      '[logging]\nlevel = "info"\nfile = "from-config.log"\n')
    done = dealer_assist("table", "--config", str(config), "--check")
    assert done.returncode == 0, done.stderr
    assert "configuration" in (tmp_path / "from-config.log").read_text()
    done = dealer_assist("table", "--config", str(config), "--check",
                         "--log-level", "WARNING", "--log-file", str(tmp_path / "cli.log"))
    assert done.returncode == 0, done.stderr
    assert f"logging WARNING to {tmp_path / 'cli.log'}" in done.stdout
    assert (tmp_path / "cli.log").read_text() == ""  # the INFO line is below WARNING


def test_a_log_file_that_cannot_be_written_is_refused_naming_it(tmp_path):
    """Refused before the command runs (the round log named is never read)."""
    log = tmp_path / "no-such-folder" / "x.log"
    done = dealer_assist("settle", "round.jsonl", "--log-file", str(log))
    assert done.returncode == 2
    assert done.stderr == (f"dealer-assist settle: --log-file: cannot write the log file {log}: "
                           "No such file or directory\n")
    done = dealer_assist("settle", "x.jsonl", "--log-level", "loud")
    assert done.returncode == 2 and "--log-level: invalid choice: 'loud'" in done.stderr


def test_a_throttled_kind_says_one_line_a_minute_and_then_how_many_were_held(caplog):
    """Each kind on its own clock: a flood of one kind hides no line of another."""
    caplog.set_level(logging.WARNING, "dealer_assist.test")
    now = [100.0]
    lines = logs.Throttled(logging.getLogger("dealer_assist.test"), clock=lambda: now[0])
    for n in range(3):
        lines.warning("origin", "refused %s", n)
    lines.warning("host", "rebinding %s", 0)
    now[0] += 59.9
    lines.warning("origin", "refused %s", 3)
    now[0] += 0.1  # a minute after the first line
    lines.warning("origin", "refused %s", 4)
    lines.warning("origin", "refused %s", 5)
    lines.warning("host", "rebinding %s", 1)
    assert [r.getMessage() for r in caplog.records] == [
        "refused 0", "rebinding 0",
        "refused 4 (and 3 more of this kind held back since the last such line)", "rebinding 1"]
