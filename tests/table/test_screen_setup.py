"""The screen's part of ``table.toml`` and of ``dealer-assist table``: where its secret lies and
who may read it, TLS, serving beyond this machine only when told how, what ``--check`` says
about it, and ``--touch`` sending one touch to a running table as its paired screen."""

from __future__ import annotations

import json
import signal
import socket
import stat
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from dealer_assist.shoe.simulator import ShoeSimulator, TcpLink
from dealer_assist.table.config import ConfigError, load_config
from dealer_assist.table.screen_access import ScreenAccess, read_secret
from tests.table.test_screen_trust import self_signed
from tests.table.test_table_cli import (
    DEALER,
    PIN,
    ROOT,
    get_view,
    open_screen,
    printed_screen,
    register_dealer,
    run_table,
    start_table,
    wait_for,
)

SHOE = '[shoe]\nurl = "socket://127.0.0.1:9"\n[recording]\ndir = "rec"\n'


def config_file(folder: Path, screen: str) -> Path:
    path = folder / "table.toml"
    path.write_text(f"{SHOE}[screen]\n{screen}")
    return path


@pytest.mark.parametrize(("screen", "key", "why"), [
    ('secret = "rec/screen-secret"\n', "screen.secret", "lies in the recording directory"),
    ('host = "0.0.0.0"\n', "screen.host", "'0.0.0.0' is every interface"),
    ('host = "192.0.2.7"\n', "screen.host", "'192.0.2.7' is an address other machines may"),
    ('host = "table7.example"\n', "screen.host", "Serve it over TLS (screen.certfile and "),
    ('host = "0.0.0.0"\nplain_http_on_network = "yes"\n', "screen.plain_http_on_network",
     "must be true or false"),
    ('certfile = "screen.crt"\n', "screen.keyfile", "required with screen.certfile"),
    ('certfile = "nothing.crt"\nkeyfile = "nothing.key"\n', "screen.certfile", "no such file"),
])
def test_a_screen_config_that_cannot_be_served_safely_is_refused_by_its_key(
        tmp_path, screen, key, why):
    (tmp_path / "screen.crt").write_text("not a certificate")
    with pytest.raises(ConfigError) as refused:
        load_config(config_file(tmp_path, screen))
    assert refused.value.key == key and why in refused.value.why


def test_a_secret_others_may_read_is_refused(tmp_path):
    secret = tmp_path / "table.screen-secret"
    secret.write_text("00" * 32)
    secret.chmod(0o644)
    with pytest.raises(ConfigError, match="may be read or written by others .mode 0644.: "
                                          "chmod 600 it"):
        load_config(config_file(tmp_path, ""))
    secret.chmod(0o600)
    assert load_config(config_file(tmp_path, "")).screen_secret == secret


def test_tls_beyond_loopback_is_taken_and_a_key_that_does_not_match_is_not(tmp_path):
    tls = self_signed(tmp_path)
    config = load_config(config_file(
        tmp_path, f'host = "0.0.0.0"\ncertfile = "{tls.certfile.name}"\n'
                  f'keyfile = "{tls.keyfile.name}"\nname = "localhost"\n'))
    assert config.tls == tls and config.screen_name == "localhost"
    (tmp_path / "other").mkdir()
    other = self_signed(tmp_path / "other")
    with pytest.raises(ConfigError, match="cannot serve TLS"):
        load_config(config_file(tmp_path, f'certfile = "{tls.certfile.name}"\n'
                                          f'keyfile = "other/{other.keyfile.name}"\n'))


def test_the_check_says_where_the_screen_is_served_and_refuses_what_start_refuses(tmp_path):
    loopback = run_table(config_file(tmp_path, ""), "--check")
    assert loopback.returncode == 0, loopback.stderr
    assert (f"screen http://127.0.0.1:8021/ (this machine only), paired by the secret "
            f"{tmp_path / 'table.screen-secret'}") in loopback.stdout
    plain = run_table(config_file(tmp_path, 'host = "0.0.0.0"\nplain_http_on_network = true\n'),
                      "--check")
    assert plain.returncode == 0, plain.stderr
    assert "(listening on every interface, PLAIN HTTP (plain_http_on_network))" in plain.stdout
    assert "screen http://127.0.0.1:" not in plain.stdout  # the real address, not loopback
    assert "warning: the dealer's screen listens on every interface, reachable from the " \
           "network over PLAIN HTTP" in plain.stderr
    config = config_file(tmp_path, 'host = "0.0.0.0"\n')
    started, checked = run_table(config), run_table(config, "--check")
    assert (started.returncode, checked.returncode) == (2, 2)
    assert started.stderr == checked.stderr
    assert started.stderr.startswith(f"dealer-assist table: {config}: screen.host: '0.0.0.0' "
                                     "is every interface")
    assert not (tmp_path / "table.screen-secret").exists()  # neither created it


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def touch(config: Path, text: str) -> subprocess.CompletedProcess:
    return run_table(config, "--touch", text)


@dataclass
class Running:
    """A ``dealer-assist table`` process on a simulated TCP shoe; once stopped, its exit
    status and standard error."""

    process: subprocess.Popen
    simulator: ShoeSimulator
    status: int | None = None
    errors: str = ""


@contextmanager
def running_table(folder: Path, screen: str) -> Iterator[Running]:
    """Write ``folder/table.toml`` (a TCP shoe, ``[screen]`` holding ``screen`` and a free
    port) and run the table until the block ends (then stopped with SIGINT)."""
    link = TcpLink()
    simulator = ShoeSimulator(link).start()
    config = folder / "table.toml"
    config.write_text(f'[shoe]\nurl = "{link.url}"\n[recording]\ndir = "rec"\n'
                      f"[screen]\nport = {free_port()}\n{screen}")
    register_dealer(config)
    table = Running(start_table(config), simulator)
    try:
        yield table
    finally:
        table.process.send_signal(signal.SIGINT)
        table.status = table.process.wait(10)
        table.errors = table.process.stderr.read()
        table.process.stdout.close()
        table.process.stderr.close()
        simulator.stop()
        link.close()


def test_touch_sends_one_touch_to_the_running_table_as_its_paired_screen(tmp_path):
    """A table on every interface (plain HTTP acknowledged) prints its real address and creates
    its secret 0600 beside its config; ``--touch`` places a bet through it, is refused (exit
    1) for a bad touch or a body over the limit, refuses a secret others may read (exit 2) and
    says so when no table runs (exit 1)."""
    config = tmp_path / "table.toml"
    with running_table(tmp_path, 'host = "0.0.0.0"\nplain_http_on_network = true\n') as table:
        screen = open_screen(table.process)
        assert urllib.parse.urlsplit(screen.url).hostname not in ("127.0.0.1", "0.0.0.0")
        secret = tmp_path / "table.screen-secret"
        assert stat.S_IMODE(secret.stat().st_mode) == 0o600
        assert screen.cookie == ScreenAccess(read_secret(secret)).cookie_header()
        table.simulator.load_shoe(6)
        wait_for(lambda v: v["devices"]["shoe"] == "up", screen)

        signed_in = touch(config, json.dumps({"type": "sign_in", "dealer": DEALER, "pin": PIN}))
        assert json.loads(signed_in.stdout) == {"accepted": "SignIn"}, signed_in.stderr
        done = touch(config, '{"type": "bet", "seat": 2, "amount": "10"}')
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {"accepted": "PlaceBet"}
        assert get_view(screen)["round"]["seats"][0]["wager"] == "10.00"

        refused = touch(config, '{"type": "bet", "seat": 2}')
        assert refused.returncode == 1
        assert "the table refused the touch (HTTP 400): " in refused.stderr
        assert "amount" in refused.stderr
        flood = touch(config, json.dumps({"type": "void", "reason": "x" * 20_000}))
        assert flood.returncode == 1 and "(HTTP 413)" in flood.stderr
        assert get_view(screen)["round"] is not None  # neither moved the table

        secret.chmod(0o644)
        unsafe = touch(config, '{"type": "finish"}')
        assert unsafe.returncode == 2 and "screen.secret: " in unsafe.stderr
        assert "may be read or written by others" in unsafe.stderr
        secret.chmod(0o600)
    assert table.status == 0, table.errors
    assert "warning: the dealer's screen listens on every interface" in table.errors
    gone = touch(config, '{"type": "finish"}')
    assert gone.returncode == 1 and "no screen answers at http://127.0.0.1:" in gone.stderr


def test_touch_reaches_a_table_served_over_tls_trusting_only_its_certificate(tmp_path):
    """Over TLS the table prints an https URL, and --touch trusts exactly the certificate the
    table serves (self-signed here), not the system's authorities."""
    tls = self_signed(tmp_path)
    config = tmp_path / "table.toml"
    with running_table(tmp_path, f'certfile = "{tls.certfile.name}"\n'
                                 f'keyfile = "{tls.keyfile.name}"\n') as table:
        url, _ = printed_screen(table.process)
        assert url.startswith("https://127.0.0.1:")
        done = touch(config, '{"type": "bet", "seat": 4, "amount": "25"}')
        assert done.returncode == 0, done.stderr  # taken (the loop refuses it: no dealer)
        assert json.loads(done.stdout) == {"accepted": "PlaceBet"}
        (tmp_path / "other").mkdir()
        other = self_signed(tmp_path / "other")  # the config now names another certificate
        tls.certfile.write_bytes(other.certfile.read_bytes())
        tls.keyfile.write_bytes(other.keyfile.read_bytes())
        impostor = touch(config, '{"type": "finish"}')  # than the one the table serves
        assert impostor.returncode == 1 and "CERTIFICATE_VERIFY_FAILED" in impostor.stderr
        assert f"does not serve the certificate {tls.certfile}" in impostor.stderr
    assert table.status == 0, table.errors


def test_touch_help_names_it():
    done = subprocess.run([sys.executable, "-m", "dealer_assist", "table", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert "--touch JSON" in done.stdout and "RUNNING table" in done.stdout
