"""A device thread's unexpected exception is logged with its traceback and becomes an alarm at a
real table (a :class:`TableRunner` folding a :class:`TableLoop`): a dead camera thread is a
camera-down alarm, a shoe event that cannot be handed on a shoe problem, an input the loop raises
on is logged and kept in the runner's errors.

The camera's stages here are plain functions (a test double: no camera or detector model exists
in this build) that raise as a broken driver or detector would."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from dealer_assist.shoe.simulator import ShoeSimulator, TcpLink
from dealer_assist.table import shoe_source
from dealer_assist.table.alarms import AlarmKind
from dealer_assist.table.camera_source import CameraSource, CameraStages
from dealer_assist.table.felt import FeltTracker
from dealer_assist.table.loop import TableLoop
from dealer_assist.table.recording import MemoryRecorder
from dealer_assist.table.runner import TableRunner
from dealer_assist.table.shoe_source import SerialShoeSource
from dealer_assist.table.sources import Source

# no thread may end on an uncaught exception here: each failure is caught, logged and alarmed
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")


class DriverFault(Exception):
    """Not one of the errors a grab is expected to raise."""


def table(source: Source, *, shoe: bool = False) -> TableRunner:
    loop = TableLoop("h17-ddd-6", MemoryRecorder(), has_shoe=shoe, has_camera=not shoe)
    loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    return TableRunner(loop, [source])


def camera(grab, detect) -> CameraSource:
    stages = CameraStages(grab=grab, detect=detect, track=lambda number, cards: [],
                          to_table=lambda x, y: (x, y))
    return CameraSource(stages, FeltTracker(lambda x, y: None), description="overhead",
                        lost_after_s=0.2, check_view_every_s=60.0)


def alarms_of(runner: TableRunner, kind: AlarmKind) -> list[str]:
    return [alarm.text for alarm in runner.loop.alarms if alarm.kind is kind]


def tracebacks(caplog, logger: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == logger and r.exc_info is not None]


def test_a_frame_reader_that_raises_is_logged_with_its_traceback_and_the_camera_is_lost(caplog):
    def grab():
        raise DriverFault("usb transfer failed")

    caplog.set_level(logging.INFO, logger="dealer_assist")
    with table(camera(grab, detect=lambda frame: [])) as runner:
        assert runner.wait_until(lambda loop: not loop.camera_up
                                 and alarms_of(runner, AlarmKind.CAMERA_LOST), 10)
    assert alarms_of(runner, AlarmKind.CAMERA_LOST) == [
        "camera feed lost (overhead: no frame for 0.2 s (DriverFault: usb transfer failed)): "
        "enter stand, double and split by touch until it returns"]
    logged = tracebacks(caplog, "dealer_assist.table.camera_source")
    assert len(logged) == 1  # the first of the run, not one every 50 ms
    assert logged[0].getMessage() == "overhead: the frame grab raised"
    assert logged[0].exc_info[0] is DriverFault


def test_a_camera_thread_that_dies_is_logged_and_raises_the_camera_lost_alarm(caplog):
    def detect(frame):
        raise ZeroDivisionError("division by zero in the detector")

    caplog.set_level(logging.INFO, logger="dealer_assist")
    frame = np.zeros((4, 4, 3), np.uint8)
    with table(camera(lambda: frame, detect)) as runner:
        assert runner.wait_until(lambda loop: alarms_of(runner, AlarmKind.CAMERA_LOST), 10)
        assert not runner.loop.camera_up
    assert alarms_of(runner, AlarmKind.CAMERA_LOST) == [
        "camera feed lost (overhead: the camera stopped on an error (ZeroDivisionError: "
        "division by zero in the detector); restart the table to bring it back): enter stand, "
        "double and split by touch until it returns"]
    logged = tracebacks(caplog, "dealer_assist.table.camera_source")
    assert [r.getMessage() for r in logged] == ["overhead: the camera thread stopped"]
    assert "in detect" in caplog.text  # the traceback reaches the frame that raised


def test_a_shoe_event_that_cannot_be_handed_on_is_logged_and_a_shoe_problem(caplog,
                                                                            monkeypatch):
    """The fault is injected into the event mapping (the real one has no bug to trigger); the
    shoe, its TCP link and the reader are real. The next card is still read."""
    real_map = shoe_source.map_shoe_event

    def faulty(event):
        if getattr(event, "card", None) is not None and event.card.code == "7C":
            raise AttributeError("'CardDrawn' object has no attribute 'origin'")
        return real_map(event)

    monkeypatch.setattr(shoe_source, "map_shoe_event", faulty)
    caplog.set_level(logging.INFO, logger="dealer_assist")
    link = TcpLink()
    simulator = ShoeSimulator(link).start()
    try:
        with table(SerialShoeSource(link.url), shoe=True) as runner:
            assert runner.wait_until(lambda loop: loop.shoe_up, 10)
            simulator.load_shoe(6)
            simulator.draw("7C")
            simulator.draw("9S")  # no bet: the loop alarms on it, so it was handed on
            assert runner.wait_until(
                lambda loop: alarms_of(runner, AlarmKind.SHOE_PROBLEM)
                and len(loop.alarms) >= 2, 10)
    finally:
        simulator.stop()
        link.close()
    assert alarms_of(runner, AlarmKind.SHOE_PROBLEM) == [
        "a shoe event was not handled (AttributeError: 'CardDrawn' object has no attribute "
        "'origin'): check the felt against the screen; call the technician"]
    assert any("9S" in alarm.text for alarm in runner.loop.alarms)
    logged = tracebacks(caplog, "dealer_assist.table.shoe_source")
    assert len(logged) == 1 and logged[0].getMessage().startswith("shoe event CardDrawn(")
    assert any(r.getMessage().startswith("shoe link up: ") for r in caplog.records)


def test_an_input_the_loop_raises_on_is_logged_with_its_traceback(caplog):
    caplog.set_level(logging.INFO, logger="dealer_assist")
    with TableRunner(TableLoop("h17-ddd-6", MemoryRecorder(), has_shoe=True)) as runner:
        runner.submit("not an input")  # type: ignore[arg-type]
        assert runner.wait_idle(5)
    assert runner.errors == ["TypeError: not a table input: 'not an input' (input 'not an input')"]
    logged = tracebacks(caplog, "dealer_assist.table.runner")
    assert [r.getMessage() for r in logged] == ["the table loop raised on 'not an input'"]
    assert logged[0].exc_info[0] is TypeError

