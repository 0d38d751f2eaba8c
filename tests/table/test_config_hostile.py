"""table.toml that is hostile or damaged: refused naming the file and the key, never a hang
nor an error the command did not expect."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from dealer_assist.table.config import ConfigError, load_config

SHOE = '[shoe]\nurl = "socket://127.0.0.1:7021"\n'


def test_a_fifo_for_a_config_is_refused_without_waiting_for_a_writer(tmp_path):
    """It used to wait for ever in open(), for a writer that never came."""
    fifo = tmp_path / "table.toml"
    os.mkfifo(fifo)
    script = ("import sys\nfrom dealer_assist.table.config import ConfigError, load_config\n"
              "try:\n    load_config(sys.argv[1])\nexcept ConfigError as error:\n"
              "    print(error)\n")
    done = subprocess.run([sys.executable, "-c", script, str(fifo)], capture_output=True,
                          text=True, timeout=30)
    assert done.stdout.strip() == f"{fifo}: (file): cannot read: a FIFO, device or socket, " \
                                  "not a file"
    with pytest.raises(ConfigError, match=r"\(file\): cannot read: a folder, not a file"):
        load_config(tmp_path)


@pytest.mark.parametrize("key, line", [
    ("recording.dir", '[recording]\ndir = "{name}"\n'),
    ("logging.file", '[logging]\nfile = "{name}"\n'),
    ("screen.secret", '[screen]\nsecret = "{name}"\n'),
    ("camera.calibration", '[camera]\nsource = 0\ncalibration = "{name}"\n'),
])
def test_a_name_too_long_for_the_filesystem_is_named_by_its_key(tmp_path, key, line):
    """It escaped as an OSError: status 1 and no key."""
    path = tmp_path / "table.toml"
    path.write_text(SHOE + line.format(name="x" * 300))
    with pytest.raises(ConfigError, match="File name too long") as caught:
        load_config(path)
    assert caught.value.key == key
