"""table.toml validation: a good file loads; each mistake is named by its key."""

from __future__ import annotations

import pytest

from dealer_assist.table.camera_source import FRAME_QUALITY
from dealer_assist.table.config import ConfigError, load_config
from dealer_assist.table.pairing import CAMERA_WAIT_S, MAX_CAMERA_LAG_S

GOOD = """
table_id = "T4"
[rules]
preset = "s17-8"
max_bet = "500"
[shoe]
url = "/dev/serial/by-id/usb-shoe"
[recording]
dir = "rec"
[screen]
host = "0.0.0.0"
port = 9000
plain_http_on_network = true
"""


def write(tmp_path, text):
    path = tmp_path / "table.toml"
    path.write_text(text)
    return path


def test_good_config(tmp_path):
    config = load_config(write(tmp_path, GOOD))
    assert config.table_id == "T4"
    assert config.rules.decks == 8 and str(config.rules.max_bet) == "500.00"
    assert config.shoe is not None and config.shoe.url == "/dev/serial/by-id/usb-shoe"
    assert config.recording_dir == tmp_path / "rec"
    assert (config.host, config.port) == ("0.0.0.0", 9000)
    assert config.plain_http_on_network and config.tls is None
    assert config.screen_secret == tmp_path / "table.screen-secret"  # beside the config
    assert config.camera is None


def test_defaults_are_loopback_and_a_preset(tmp_path):
    config = load_config(write(tmp_path, '[shoe]\nurl = "socket://127.0.0.1:7000"\n'))
    assert config.host == "127.0.0.1" and config.rules.name == "h17-ddd-6"
    assert [str(v) for v in config.chips.values] == ["0.50", "1.00", "2.50", "5.00", "25.00",
                                                     "100.00", "500.00"]


def test_the_screen_takes_the_tables_chips_in_any_order(tmp_path):
    config = load_config(write(tmp_path, '[shoe]\nurl = "u"\n[screen]\nchips = ["25", 1, "5"]'))
    assert [str(v) for v in config.chips.values] == ["1.00", "5.00", "25.00"]


def test_the_recorded_frames_quality_is_read_and_defaults_to_the_tables(tmp_path):
    config = load_config(write(tmp_path, '[shoe]\nurl = "u"\n'))
    assert config.frame_quality == FRAME_QUALITY
    config = load_config(write(tmp_path, '[shoe]\nurl = "u"\n[recording]\nframe_quality = 90\n'))
    assert config.frame_quality == 90


def test_the_bet_row_offers_the_five_largest_chips_or_those_named(tmp_path):
    """Seven chips by default: the bet row's five are the largest; bet_chips names others."""
    config = load_config(write(tmp_path, '[shoe]\nurl = "u"\n'))
    assert [str(v) for v in config.chips.bet_row] == ["2.50", "5.00", "25.00", "100.00", "500.00"]
    config = load_config(write(tmp_path, '[shoe]\nurl = "u"\n[screen]\nchips = ["25", 1, "5"]'))
    assert [str(v) for v in config.chips.bet_row] == ["1.00", "5.00", "25.00"]
    config = load_config(write(tmp_path, '[shoe]\nurl = "u"\n[screen]\n'
                                         'bet_chips = ["500", "1", "0.50"]'))
    assert [str(v) for v in config.chips.bet_row] == ["0.50", "1.00", "500.00"]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('tabel_id = "x"\n[shoe]\nurl="u"', "tabel_id"),
        ('rules = "h17-ddd-7"\n[shoe]\nurl="u"', "rules"),
        ('[rules]\npreset = "h17-ddd-7"\n[shoe]\nurl="u"', "rules.preset"),
        ('[rules]\npreset = "s17-6"\nmax_bet = "lots"\n[shoe]\nurl="u"', "rules.max_bet"),
        ('[rules]\npreset = "s17-6"\nmin_bet = 50\nmax_bet = 10\n[shoe]\nurl="u"', "rules"),
        ('[rules]\nmax_bet = "500"\n[shoe]\nurl="u"', "rules.preset"),
        ('[rules]\npreset = "s17-6"\nmax_bett = 1\n[shoe]\nurl="u"', "rules.max_bett"),
        ('[shoe]\nurl = ""', "shoe.url"),
        ('[shoe]\nurl = "bogus://x"', "shoe.url"),
        ('[shoe]\nurl = "socket://127.0.0.1"', "shoe.url"),  # no port: could never open
        ('[shoe]\nurl = "socket://127.0.0.1:99999"', "shoe.url"),
        ('[shoe]\nurl = "u"\nprotocol = "bee"', "shoe.protocol"),
        ('[shoe]\nurl = "u"\ndecks = 7', "shoe.decks"),
        ('[rules]\npreset = "s17-6"\n[shoe]\nurl = "u"\ndecks = 8', "shoe.decks"),
        ('[shoe]\nurl = "u"\n[screen]\nport = 70000', "screen.port"),
        ('[shoe]\nurl = "u"\n[screen]\nprot = 1', "screen.prot"),
        ('[camera]\nsource = -1\ncalibration = "c.yaml"', "camera.source"),
        ('[camera]\nsource = 2147483648\ncalibration = "c.yaml"', "camera.source"),  # not a C int
        ('[camera]\nsource = 0\ncalibration = "missing.yaml"', "camera.calibration"),
        ("[camera]\nsource = 0", "camera.calibration"),
        ('[camera]\nsource = 0\nlayout = "x.yaml"', "camera.layout"),
        ('[camera]\nsource = 0\ncalibration = "c.yaml"\nwait_s = 0', "camera.wait_s"),
        ('[camera]\nsource = 0\ncalibration = "c.yaml"\nwait_s = "1.5"', "camera.wait_s"),
        ('[camera]\nsource = 0\ncalibration = "c.yaml"\nwait_s = 60', "camera.wait_s"),
        ('[camera]\nsource = 0\ncalibration = "c.yaml"\nmax_lag_s = true', "camera.max_lag_s"),
        # a camera behind for longer than the wait: the wait's rule would never apply
        ('[camera]\nsource = 0\ncalibration = "c.yaml"\nmax_lag_s = 2.0', "camera.max_lag_s"),
        ("[recording]\ndir = 'r'", "shoe/camera"),
        ('[shoe]\nurl = "u"\n[recording]\nsurveillance = "yes"', "recording.surveillance"),
        ('[shoe]\nurl = "u"\n[recording]\nsurveillance = "a\\u0000b"', "recording.surveillance"),
        ('[shoe]\nurl = "u"\n[recording]\nsurveillance = false', "recording.surveillance"),
        ('[shoe]\nurl = "u"\n[recording]\ndir = "a\\u0000b"', "recording.dir"),
        ('[shoe]\nurl = "u"\n[screen]\nhost = "127.0.0.1\\u0000"', "screen.host"),
        ('[shoe]\nurl = "u"\n[screen]\nhost = "127.0.\\u007f0.1"', "screen.host"),
        ('[shoe]\nurl = "spy:///dev/ttyUSB0?file=/no/such/dir/log"', "shoe.url"),
        ("[shoe\nurl = 1", "(syntax)"),
        ("x = " + "[" * 5000 + "]" * 5000 + '\n[shoe]\nurl = "u"', "(syntax)"),  # too deep
        ('table_id = "BJ/3"\n[shoe]\nurl = "u"', "table_id"),  # it names files: no '/'
        ('table_id = ".."\n[shoe]\nurl = "u"', "table_id"),
        ('table_id = "a table with a name far too long"\n[shoe]\nurl = "u"', "table_id"),
        ('[shoe]\nurl = "u"\n[screen]\nchips = "5"', "screen.chips"),
        ('[shoe]\nurl = "u"\n[screen]\nchips = []', "screen.chips"),
        ('[shoe]\nurl = "u"\n[screen]\nchips = ["5", "0"]', "screen.chips"),
        ('[shoe]\nurl = "u"\n[screen]\nchips = ["5", "-1"]', "screen.chips"),
        ('[shoe]\nurl = "u"\n[screen]\nchips = ["5", "5.00"]', "screen.chips"),
        ('[shoe]\nurl = "u"\n[screen]\nchips = ["0.005"]', "screen.chips"),
        ('[shoe]\nurl = "u"\n[screen]\nchips = ["lots"]', "screen.chips"),
        ('[shoe]\nurl = "u"\n[screen]\nchips = ["0.01", "100000"]', "screen.chips"),
        ('[shoe]\nurl = "u"\n[screen]\nbet_chips = ["5", "10"]', "screen.bet_chips"),  # no $10
        ('[shoe]\nurl = "u"\n[screen]\nbet_chips = []', "screen.bet_chips"),
        ('[shoe]\nurl = "u"\n[screen]\nbet_chips = ["0.50", "1", "2.50", "5", "25", "100"]',
         "screen.bet_chips"),  # six: more than the row holds
        ('[shoe]\nurl = "u"\n[screen]\nbet_chips = ["5", "5.00"]', "screen.bet_chips"),
        ('[shoe]\nurl = "u"\n[recording]\nframe_quality = 49', "recording.frame_quality"),
        ('[shoe]\nurl = "u"\n[recording]\nframe_quality = 101', "recording.frame_quality"),
        ('[shoe]\nurl = "u"\n[recording]\nframe_quality = 75.0', "recording.frame_quality"),
        ('[shoe]\nurl = "u"\n[recording]\nframe_quality = true', "recording.frame_quality"),
    ],
)
def test_mistakes_name_the_key(tmp_path, text, key):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    assert caught.value.key == key
    assert str(caught.value).startswith(f"{tmp_path / 'table.toml'}: {key}: ")


def test_missing_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "nope.toml")


def test_the_cameras_wait_and_lag_limit_are_read_and_default_to_the_tables(tmp_path):
    (tmp_path / "table.yaml").write_bytes(b"x")
    camera = '[camera]\nsource = 0\ncalibration = "table.yaml"\n'
    config = load_config(write(tmp_path, camera + "wait_s = 2.5\nmax_lag_s = 0.8\n"))
    assert config.camera is not None
    assert (config.camera.wait_s, config.camera.max_lag_s) == (2.5, 0.8)
    config = load_config(write(tmp_path, camera))
    assert config.camera is not None
    assert (config.camera.wait_s, config.camera.max_lag_s) == (CAMERA_WAIT_S, MAX_CAMERA_LAG_S)


def test_camera_models_are_files_beside_the_config(tmp_path):
    for name in ("table.yaml", "cards-ours.int8.onnx", "index-reader-ours.int8.onnx"):
        (tmp_path / name).write_bytes(b"x")
    config = load_config(write(tmp_path, (
        '[camera]\nsource = 0\ncalibration = "table.yaml"\n'
        'model = "cards-ours.int8.onnx"\nreader = "index-reader-ours.int8.onnx"\n')))
    assert config.camera is not None
    assert config.camera.model == tmp_path / "cards-ours.int8.onnx"
    assert config.camera.reader == tmp_path / "index-reader-ours.int8.onnx"
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, (
            '[camera]\nsource = 0\ncalibration = "table.yaml"\nreader = "gone.onnx"\n')))
    assert caught.value.key == "camera.reader"


def test_a_config_saved_in_another_encoding_is_named_and_a_utf8_bom_read_past(tmp_path):
    path = tmp_path / "table.toml"
    path.write_bytes('table_id = "T4"\n[shoe]\nurl = "u"\n'.encode("utf-16"))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == (f"{path}: (file): not UTF-8 text (byte 0xff at offset 0): "
                                 "save it as UTF-8")
    path.write_bytes('\ufefftable_id = "T4"\n[shoe]\nurl = "u"\n'.encode("utf-8"))
    assert load_config(path).table_id == "T4"


def test_the_recording_folder_must_be_creatable_and_checking_creates_nothing(tmp_path):
    """A recording dir that is a file, or under one, is refused (as the start would fail); a
    folder that can be made is accepted without being made; so is a spy:// shoe's log."""
    (tmp_path / "afile").write_text("x")
    shoe = f'[shoe]\nurl = "spy:///dev/ttyUSB0?file={tmp_path}/spy.log"\n'
    for folder in ("afile", "afile/sub"):
        with pytest.raises(ConfigError) as caught:
            load_config(write(tmp_path, f'{shoe}[recording]\ndir = "{folder}"\n'))
        assert caught.value.key == "recording.dir"
        assert caught.value.why == f"cannot create {tmp_path / folder / 'rounds'}: " \
                                   f"{tmp_path / 'afile'} is not a folder"
    (tmp_path / "rec").mkdir()
    (tmp_path / "rec" / "index.sqlite").mkdir()  # where the store's database goes
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, f'{shoe}[recording]\ndir = "rec"\n'))
    assert caught.value.key == "recording.dir"  # the store is always on
    config = load_config(write(tmp_path, f'{shoe}[recording]\ndir = "new/deeper"\n'))
    assert config.recording_dir == tmp_path / "new" / "deeper"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "rec", "table.toml"]


def test_logging_is_read_with_its_file_beside_the_config(tmp_path):
    shoe = '[shoe]\nurl = "socket://127.0.0.1:7000"\n'
    assert (load_config(write(tmp_path, shoe)).log_level,
            load_config(write(tmp_path, shoe)).log_file) == ("info", None)
    config = load_config(write(tmp_path, f'{shoe}[logging]\nlevel = "DEBUG"\n'
                                         'file = "logs/table.log"\n'))
    assert (config.log_level, config.log_file) == ("debug", tmp_path / "logs" / "table.log")
    assert not (tmp_path / "logs").exists()  # checked, not created


@pytest.mark.parametrize(("section", "why"), [
    ('level = "loud"', "must be one of debug, info, warning, error, critical, got 'loud'"),
    ("level = 20", "must be one of debug, info, warning, error, critical, got 20"),
    ('file = ""', "must be a non-empty string, got ''"),
    ('file = "."', "is a folder, not a file"),
    ('file = "afile/table.log"', "is not a folder"),
    ('rotate = "daily"', "unknown key (known: file, level)"),
], ids=["unknown level", "number", "empty file", "folder", "under a file", "unknown key"])
def test_bad_logging_is_refused_naming_the_key(tmp_path, section, why):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, f'[shoe]\nurl = "u"\n[logging]\n{section}\n'))
    key = "logging.rotate" if section.startswith("rotate") else f"logging.{section.split()[0]}"
    assert caught.value.key == key
    assert why in caught.value.why


def test_an_assembled_table_waits_and_judges_the_cameras_lag_as_configured(tmp_path):
    from dealer_assist.table.assembly import TableSetup, assemble

    setup = TableSetup(tmp_path / "rec", "T4", "s17-6", shoe_protocol=None, has_camera=True,
                       port=0, camera_wait_s=2.5, max_camera_lag_s=0.8)
    table = assemble(setup, lambda position: [])
    try:
        assert (table.loop.camera_wait_s, table.loop.max_camera_lag_s) == (2.5, 0.8)
        assert setup.journal_config()["camera_wait_s"] == 2.5  # a change voids a resumed round
    finally:
        table.opened.journal.close()
        table.recording.close()


def test_vision_section_pins_runtime_and_acceptance(tmp_path):
    for name in ("table.yaml", "enrol-ours.acceptance.json"):
        (tmp_path / name).write_bytes(b"x")
    config = load_config(write(tmp_path, (
        '[camera]\nsource = 0\ncalibration = "table.yaml"\n'
        '[vision]\nruntime = "openvino"\ndetector_sha256 = "' + "A" * 64 + '"\n'
        'reader_sha256 = ["' + "b" * 64 + '", "' + "c" * 64 + '"]\n'
        'acceptance = "enrol-ours.acceptance.json"\n')))
    assert config.camera is not None and config.camera.vision is not None
    vision = config.camera.vision
    assert vision.runtime == "openvino"
    assert vision.detector_sha256 == ("a" * 64,)
    assert vision.reader_sha256 == ("b" * 64, "c" * 64)
    assert vision.acceptance == tmp_path / "enrol-ours.acceptance.json"


@pytest.mark.parametrize(("section", "key"), [
    ('[vision]\nruntime = "tensorrt"', "vision.runtime"),
    ('[vision]\ndetector_sha256 = "abc"', "vision.detector_sha256"),
    ('[vision]\nreader_sha256 = []', "vision.reader_sha256"),
    ('[vision]\nacceptance = "gone.json"', "vision.acceptance"),
    ('[vision]\nsha = "x"', "vision.sha"),
])
def test_vision_mistakes_name_the_key(tmp_path, section, key):
    (tmp_path / "table.yaml").write_bytes(b"x")
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, '[camera]\nsource = 0\ncalibration = "table.yaml"\n'
                          + section + "\n"))
    assert caught.value.key == key


def test_vision_without_a_camera_is_refused(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, '[shoe]\nurl = "u"\n[vision]\nruntime = "auto"\n'))
    assert caught.value.key == "vision"


@pytest.mark.parametrize("names", [True, False])
def test_an_assembled_table_knows_whether_its_camera_may_name_cards(tmp_path, names):
    """A camera whose deck is accepted only through the shoe check (``names_cards`` False, set
    by ``dealer-assist table`` from the camera it opened) reaches the loop as set up."""
    from dealer_assist.table.assembly import TableSetup, assemble

    setup = TableSetup(tmp_path / "rec", "T4", "s17-6", shoe_protocol="dealer-assist",
                       has_camera=True, camera_names=names, port=0)
    table = assemble(setup, lambda position: [])
    try:
        assert table.loop.camera_names is names
    finally:
        table.opened.journal.close()
        table.recording.close()
