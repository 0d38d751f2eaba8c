"""The table journal's codec: every :data:`~dealer_assist.table.sources.TableInput` as JSON.

Version 1. An input is ``{"type": "ShoeCard", ...its fields}``; a card is its code, money its
exact text, a place on the table ``{"seat": 2, "hand": 0}`` (the dealer's: seat null), a shoe
origin ``{"session", "seq", "index"}`` (a card the shoe could not read: ``index`` absent where
its report was undecodable), an action its word, a time (a frame's ``seen_at``) a JSON number.
:func:`decode_input` refuses (:class:`CodecError`, naming the field) anything
:func:`encode_input` would not have written.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from decimal import Decimal, InvalidOperation
from typing import Any

from dealer_assist.roundlog import ShoeOrigin, UnreadOrigin
from dealer_assist.rules import Action, Card, CardTarget
from dealer_assist.table import sources
from dealer_assist.table.sources import TableInput

CODEC_VERSION = 1


class CodecError(ValueError):
    """A journal record that is no table input this codec writes (says which field and why)."""


def _input_types() -> dict[str, type]:
    union = sources.TableInput
    found: dict[str, type] = {}

    def walk(kind: Any) -> None:
        if isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union:
            for member in typing.get_args(kind):
                walk(member)
        else:
            found[kind.__name__] = kind

    walk(union)
    return found


INPUT_TYPES: dict[str, type] = _input_types()


def _encode_value(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str | float):
        return value  # a float is a time (a frame's grab), never money
    if isinstance(value, Card):
        return value.code
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, Action):
        return value.value
    if isinstance(value, CardTarget):
        return {"seat": value.seat, "hand": value.hand}
    if isinstance(value, ShoeOrigin | UnreadOrigin):
        return value.to_json()
    raise CodecError(f"cannot journal a {type(value).__name__}: {value!r}")


def encode_input(item: TableInput) -> dict[str, Any]:
    """The JSON-ready form of one table input."""
    name = type(item).__name__
    if INPUT_TYPES.get(name) is not type(item):
        raise CodecError(f"not a table input: {item!r}")
    out: dict[str, Any] = {"type": name}
    for field in dataclasses.fields(item):
        out[field.name] = _encode_value(getattr(item, field.name))
    return out


def _int(raw: Any, where: str, optional: bool = False) -> int | None:
    if raw is None and optional:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise CodecError(f"{where}: expected a whole number, got {raw!r}")
    return raw


def _decode_value(kind: str, raw: Any, where: str) -> Any:
    optional = kind.endswith(" | None")
    base = kind.removesuffix(" | None")
    if raw is None:
        if optional:
            return None
        raise CodecError(f"{where}: missing")
    try:
        if base == "Card":
            return Card.parse(raw)
        if base == "Decimal":
            if not isinstance(raw, str):
                raise CodecError(f"{where}: money must be text, got {raw!r}")
            return Decimal(raw)
        if base == "Action":
            return Action.parse(raw)
        if base == "CardTarget":
            return CardTarget(_int(raw.get("seat"), where, True),
                              _int(raw.get("hand"), where, True))
        if base == "ShoeOrigin":
            session, seq, index = (_int(raw.get(k), where) or 0 for k in ("session", "seq",
                                                                          "index"))
            return ShoeOrigin(session, seq, index)
        if base == "UnreadOrigin":
            return UnreadOrigin(_int(raw.get("session"), where) or 0,
                                _int(raw.get("seq"), where) or 0,
                                _int(raw.get("index"), where, True))
    except (ValueError, InvalidOperation, AttributeError) as error:
        if isinstance(error, CodecError):
            raise
        raise CodecError(f"{where}: {error}") from None
    if base == "int":
        return _int(raw, where)
    if base == "float":
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise CodecError(f"{where}: expected a number, got {raw!r}")
        return float(raw)
    if base == "bool":
        if not isinstance(raw, bool):
            raise CodecError(f"{where}: expected true or false, got {raw!r}")
        return raw
    if base == "str":
        if not isinstance(raw, str):
            raise CodecError(f"{where}: expected text, got {raw!r}")
        return raw
    raise CodecError(f"{where}: the codec has no reader for {kind}")


def decode_input(raw: Any) -> TableInput:
    """The table input ``raw`` (as :func:`encode_input` wrote it) stands for."""
    if not isinstance(raw, dict):
        raise CodecError(f"an input must be a JSON object, got {raw!r}")
    name = raw.get("type")
    kind = INPUT_TYPES.get(name) if isinstance(name, str) else None
    if kind is None:
        raise CodecError(f"unknown input type {name!r}")
    values = {}
    for field in dataclasses.fields(kind):
        where = f"{name}.{field.name}"
        if field.name not in raw:
            if field.default is not dataclasses.MISSING:
                continue
            raise CodecError(f"{where}: missing")
        values[field.name] = _decode_value(str(field.type), raw[field.name], where)
    return kind(**values)  # type: ignore[no-any-return]
