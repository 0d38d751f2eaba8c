"""Golden round logs: `rounds` settle to their expected subset, `refused` fail as named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
ROUNDS = sorted((DATA / "rounds").glob("*.jsonl"))
REFUSED = sorted((DATA / "refused").glob("*.jsonl"))


def expected_for(log: Path) -> dict[str, Any]:
    return json.loads(log.with_suffix(".expected.json").read_text())


def assert_subset(expected: Any, actual: Any, where: str = "$") -> None:
    """Every key in ``expected`` (except ``_why``) matches ``actual``; lists match item by item."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r}"
        for key, value in expected.items():
            if key == "_why":
                continue
            assert key in actual, f"{where}: missing key {key!r} in {actual!r}"
            assert_subset(value, actual[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list), f"{where}: expected a list, got {actual!r}"
        assert len(expected) == len(actual), f"{where}: expected {len(expected)} items: {actual!r}"
        for index, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_subset(e, a, f"{where}[{index}]")
    else:
        assert expected == actual, f"{where}: expected {expected!r}, got {actual!r}"
