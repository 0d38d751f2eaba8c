"""Table layouts: where each seat's zones, the dealer's zones and the ArUco markers lie, in mm.

Table coordinates (see docs/calibration.md): looking down on the table with the dealer at the top,
the origin is the middle of the dealer's straight edge of the felt, +x runs to the right (towards
the dealer's left hand, where seat 1, first base, sits) and +y runs down, away from the dealer
towards the players. This is the same handedness as an image, so a marker printed upright and laid
with its top towards the dealer appears unmirrored to a camera above the table.

This module is pure: no OpenCV, no clock; zone queries have no side effects.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dealer_assist.calibration.errors import LayoutError
from dealer_assist.small_files import read_small_file

SEAT_ZONES = ("bet", "match", "cards", "insurance")
"""Zones a seat may have: main betting spot, Match the Dealer circle, card area, insurance line."""
REQUIRED_SEAT_ZONES = ("bet", "cards")
DEALER_ZONES = ("cards", "chip_tray", "discard")
"""The dealer's zones; ``cards`` with seat ``None`` is the dealer's card area."""
#: The keys a layout file may hold at each level (any other is refused, not ignored).
LAYOUT_KEYS = ("name", "outline", "seats", "dealer", "markers")
SHAPE_KEYS = {"circle": ("center", "radius"), "rect": ("center", "size", "angle_deg")}
MARKERS_KEYS = ("dictionary", "size_mm", "placed")
PLACED_KEYS = ("id", "center", "size_mm", "rotation_deg")
ARUCO_DICTIONARIES = {
    "DICT_4X4_50": 50,
    "DICT_4X4_100": 100,
    "DICT_5X5_50": 50,
    "DICT_5X5_100": 100,
    "DICT_6X6_50": 50,
    "DICT_6X6_100": 100,
}
"""ArUco dictionaries a layout may name, with how many marker ids each holds."""
MAX_LAYOUT_MM = 3000.0
"""Furthest a layout's point lies from the origin along either axis, and its longest length or
marker side, in mm: a 7-seat table is 2000 mm across. Past it is a typo (1e9), whose drawing
OpenCV cannot hold in its integers or the memory in its pixels."""

MAX_FILE_BYTES = 1_000_000
"""Largest layout, camera or table file read: the standard table file is 8 KB."""

Point = tuple[float, float]

_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxstring = 2, 4, 4, 60


def shown(value: Any) -> str:
    """``value`` as a message quotes it: a few items and levels at most (a YAML alias bomb
    names one list a billion times over)."""
    return _SHORT.repr(value)


@dataclass(frozen=True)
class Circle:
    """A round zone (betting spot, Match the Dealer circle)."""

    center: Point
    radius: float

    def contains(self, x: float, y: float) -> bool:
        """Whether table point (x, y) mm lies inside or on the circle."""
        return math.hypot(x - self.center[0], y - self.center[1]) <= self.radius

    def outline(self, step_mm: float = 5.0) -> list[Point]:
        """Closed outline as points about ``step_mm`` apart (for drawing)."""
        count = max(16, math.ceil(2 * math.pi * self.radius / step_mm))
        return [
            (
                self.center[0] + self.radius * math.cos(2 * math.pi * i / count),
                self.center[1] + self.radius * math.sin(2 * math.pi * i / count),
            )
            for i in range(count)
        ]

    @property
    def centroid(self) -> Point:
        """Centre of the zone."""
        return self.center


@dataclass(frozen=True)
class Polygon:
    """A zone bounded by a simple polygon (card areas, insurance line, tray, rectangles)."""

    points: tuple[Point, ...]

    def contains(self, x: float, y: float) -> bool:
        """Whether table point (x, y) mm lies inside the polygon (even-odd rule)."""
        inside = False
        count = len(self.points)
        for i in range(count):
            x1, y1 = self.points[i]
            x2, y2 = self.points[(i + 1) % count]
            if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
                inside = not inside
        return inside

    def outline(self, step_mm: float = 5.0) -> list[Point]:
        """Closed outline with edges subdivided about ``step_mm`` apart (straight lines on the
        table bend in a distorted image, so drawing needs intermediate points)."""
        result: list[Point] = []
        count = len(self.points)
        for i in range(count):
            x1, y1 = self.points[i]
            x2, y2 = self.points[(i + 1) % count]
            pieces = max(1, math.ceil(math.hypot(x2 - x1, y2 - y1) / step_mm))
            result.extend(
                (x1 + (x2 - x1) * k / pieces, y1 + (y2 - y1) * k / pieces) for k in range(pieces)
            )
        return result

    @property
    def centroid(self) -> Point:
        """Mean of the vertices (good enough to place a label)."""
        xs = [p[0] for p in self.points]
        ys = [p[1] for p in self.points]
        return (sum(xs) / len(xs), sum(ys) / len(ys))


Shape = Circle | Polygon


@dataclass(frozen=True)
class Zone:
    """A named zone; ``seat`` is 1..N for a seat's zone, ``None`` for the dealer's."""

    seat: int | None
    name: str
    shape: Shape

    def contains(self, x: float, y: float) -> bool:
        """Whether table point (x, y) mm lies in this zone."""
        return self.shape.contains(x, y)


@dataclass(frozen=True)
class MarkerPlacement:
    """An ArUco marker glued to the felt: id, centre (mm), side (mm), rotation (degrees, clockwise
    as seen from above, 0 = the marker's top edge faces the dealer)."""

    marker_id: int
    center: Point
    size_mm: float
    rotation_deg: float = 0.0

    def corners(self) -> list[Point]:
        """Its four corners in table mm, in ArUco's order: top-left, top-right, bottom-right,
        bottom-left of the printed marker."""
        half = self.size_mm / 2
        angle = math.radians(self.rotation_deg)
        cos_a, sin_a = math.cos(angle), math.sin(angle)
        local = [(-half, -half), (half, -half), (half, half), (-half, half)]
        return [
            (self.center[0] + dx * cos_a - dy * sin_a, self.center[1] + dx * sin_a + dy * cos_a)
            for dx, dy in local
        ]


@dataclass(frozen=True)
class Layout:
    """A table's geometry in table millimetres: seats' and dealer's zones, outline, markers."""

    name: str
    outline: Polygon
    zones: tuple[Zone, ...]
    markers: tuple[MarkerPlacement, ...]
    aruco_dictionary: str
    source: str = "<layout>"
    data: Any = field(default=None, compare=False, repr=False)
    """The parsed YAML it came from (stored inside table calibrations so they stand alone)."""

    @property
    def seats(self) -> tuple[int, ...]:
        """Seat numbers present, ascending."""
        return tuple(sorted({z.seat for z in self.zones if z.seat is not None}))

    def zone(self, seat: int | None, name: str) -> Zone:
        """The zone ``name`` of ``seat`` (``None`` for the dealer); KeyError if absent."""
        for zone in self.zones:
            if zone.seat == seat and zone.name == name:
                return zone
        raise KeyError(f"{self.source}: no zone {name!r} for seat {seat}")

    def zone_at(self, x: float, y: float) -> Zone | None:
        """The zone containing table point (x, y) mm, or None. Zones are tried in file order."""
        for zone in self.zones:
            if zone.contains(x, y):
                return zone
        return None

    def marker(self, marker_id: int) -> MarkerPlacement:
        """The placement of marker ``marker_id``; KeyError if the layout has no such marker."""
        for marker in self.markers:
            if marker.marker_id == marker_id:
                return marker
        raise KeyError(f"{self.source}: no marker {marker_id}")

    @classmethod
    def load(cls, path: str | Path) -> Layout:
        """Read and validate a layout YAML file; raises LayoutError naming the file and key."""
        path = Path(path)
        try:
            # UTF-8, or UTF-16 with its BOM
            data = yaml.safe_load(read_small_file(path, MAX_FILE_BYTES))
        except OSError as exc:
            raise LayoutError(str(path), f"cannot read layout: {exc.strerror or exc}") from exc
        except yaml.YAMLError as exc:
            raise LayoutError(str(path), f"not valid YAML: {exc}") from exc
        except RecursionError:
            raise LayoutError(str(path), "not valid YAML: nested too deeply") from None
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: Any, source: str = "<layout>") -> Layout:
        """Build a layout from its parsed YAML form; raises LayoutError naming the key path."""
        reader = _Reader(source)
        mapping = reader.only(reader.mapping(data, ""), LAYOUT_KEYS, "")
        name = reader.text(mapping, "name", "")
        outline = reader.polygon(reader.require(mapping, "outline", ""), "outline")
        zones: list[Zone] = []
        seats = reader.sequence(reader.require(mapping, "seats", ""), "seats")
        for index, seat_data in enumerate(seats):
            where = f"seats[{index}]"
            seat_map = reader.mapping(seat_data, where)
            seat = reader.integer(seat_map, "seat", where)
            if seat != index + 1:
                raise LayoutError(source, f"{where}.seat: expected seat {index + 1}, got {seat}")
            for key in seat_map:
                if key != "seat" and key not in SEAT_ZONES:
                    raise LayoutError(
                        source,
                        f"{where}: unknown seat zone {key!r} (known: {', '.join(SEAT_ZONES)})",
                    )
            for zone_name in REQUIRED_SEAT_ZONES:
                reader.require(seat_map, zone_name, where)
            for zone_name in SEAT_ZONES:
                if zone_name in seat_map:
                    shape = reader.shape(seat_map[zone_name], f"{where}.{zone_name}")
                    zones.append(Zone(seat, zone_name, shape))
        dealer = reader.mapping(reader.require(mapping, "dealer", ""), "dealer")
        for key in dealer:
            if key not in DEALER_ZONES:
                raise LayoutError(
                    source, f"dealer: unknown zone {key!r} (known: {', '.join(DEALER_ZONES)})"
                )
        for zone_name in DEALER_ZONES:
            shape = reader.shape(reader.require(dealer, zone_name, "dealer"), f"dealer.{zone_name}")
            zones.append(Zone(None, zone_name, shape))
        dictionary, markers = reader.markers(reader.require(mapping, "markers", ""))
        return cls(name, outline, tuple(zones), markers, dictionary, source, data)


class _Reader:
    """Validating accessors that raise LayoutError naming the source and the key path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, message: str) -> LayoutError:
        return LayoutError(self.source, f"{where}: {message}" if where else message)

    def mapping(self, value: Any, where: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(where, f"expected a mapping, got {type(value).__name__}")
        return value

    def only(self, mapping: Mapping[str, Any], known: tuple[str, ...],
             where: str) -> Mapping[str, Any]:
        """``mapping``, refused where it holds a key not ``known`` (a misspelt key would
        otherwise be ignored and its default used: a zone unturned, a marker of the wrong
        size)."""
        for key in mapping:
            if key not in known:
                raise self.fail(where, f"unknown key {shown(key)} (known: {', '.join(known)})")
        return mapping

    def sequence(self, value: Any, where: str) -> Sequence[Any]:
        if not isinstance(value, list) or not value:
            raise self.fail(where, "expected a non-empty list")
        return value

    def require(self, mapping: Mapping[str, Any], key: str, where: str) -> Any:
        if key not in mapping:
            raise self.fail(where, f"missing key {key!r}")
        return mapping[key]

    def text(self, mapping: Mapping[str, Any], key: str, where: str) -> str:
        value = self.require(mapping, key, where)
        if not isinstance(value, str) or not value:
            raise self.fail(_join(where, key), "expected a non-empty string")
        return value

    def integer(self, mapping: Mapping[str, Any], key: str, where: str) -> int:
        value = self.require(mapping, key, where)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(_join(where, key), f"expected an integer, got {shown(value)}")
        return value

    def number(self, value: Any, where: str, positive: bool = False) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise self.fail(where, f"expected a number, got {shown(value)}")
        if positive and value <= 0:
            raise self.fail(where, f"must be positive, got {shown(value)}")
        return float(value)

    def length(self, value: Any, where: str, positive: bool = False) -> float:
        """A length or coordinate in mm, at most :data:`MAX_LAYOUT_MM` from 0."""
        number = self.number(value, where, positive)
        if abs(number) > MAX_LAYOUT_MM:
            raise self.fail(where, f"must be within {MAX_LAYOUT_MM:g} mm (a table is about 2000"
                            f" mm across), got {shown(value)}")
        return number

    def point(self, value: Any, where: str) -> Point:
        if not isinstance(value, list) or len(value) != 2:
            raise self.fail(where, f"expected [x, y] in mm, got {shown(value)}")
        return (self.length(value[0], f"{where}[0]"), self.length(value[1], f"{where}[1]"))

    def polygon(self, value: Any, where: str) -> Polygon:
        points = self.sequence(value, where)
        if len(points) < 3:
            raise self.fail(where, f"a polygon needs at least 3 points, got {len(points)}")
        return Polygon(tuple(self.point(p, f"{where}[{i}]") for i, p in enumerate(points)))

    def shape(self, value: Any, where: str) -> Shape:
        spec = self.mapping(value, where)
        if len(spec) != 1:
            raise self.fail(where, "expected exactly one of circle, rect, polygon")
        kind, body = next(iter(spec.items()))
        where = f"{where}.{kind}"
        if kind == "polygon":
            return self.polygon(body, where)
        if kind not in SHAPE_KEYS:
            raise self.fail(where, f"unknown shape {kind!r} (known: circle, rect, polygon)")
        body = self.only(self.mapping(body, where), SHAPE_KEYS[kind], where)
        center = self.point(self.require(body, "center", where), f"{where}.center")
        if kind == "circle":
            return Circle(
                center, self.length(self.require(body, "radius", where), f"{where}.radius", True)
            )
        size = self.point(self.require(body, "size", where), f"{where}.size")  # a rect
        if size[0] <= 0 or size[1] <= 0:
            raise self.fail(f"{where}.size", f"must be positive, got {list(size)}")
        angle = self.number(body.get("angle_deg", 0), f"{where}.angle_deg")
        return _rectangle(center, size, angle)

    def markers(self, value: Any) -> tuple[str, tuple[MarkerPlacement, ...]]:
        spec = self.only(self.mapping(value, "markers"), MARKERS_KEYS, "markers")
        dictionary = self.text(spec, "dictionary", "markers")
        if dictionary not in ARUCO_DICTIONARIES:
            known = ", ".join(ARUCO_DICTIONARIES)
            raise self.fail("markers.dictionary", f"unknown {dictionary!r} (known: {known})")
        size = self.length(self.require(spec, "size_mm", "markers"), "markers.size_mm", True)
        placements: list[MarkerPlacement] = []
        seen: set[int] = set()
        for index, item in enumerate(
            self.sequence(self.require(spec, "placed", "markers"), "markers.placed")
        ):
            where = f"markers.placed[{index}]"
            entry = self.only(self.mapping(item, where), PLACED_KEYS, where)
            marker_id = self.integer(entry, "id", where)
            if not 0 <= marker_id < ARUCO_DICTIONARIES[dictionary]:
                raise self.fail(f"{where}.id", f"{marker_id} is not an id of {dictionary}")
            if marker_id in seen:
                raise self.fail(f"{where}.id", f"marker {marker_id} is placed twice")
            seen.add(marker_id)
            center = self.point(self.require(entry, "center", where), f"{where}.center")
            marker_size = self.length(entry.get("size_mm", size), f"{where}.size_mm", True)
            rotation = self.number(entry.get("rotation_deg", 0), f"{where}.rotation_deg")
            placements.append(MarkerPlacement(marker_id, center, marker_size, rotation))
        return dictionary, tuple(placements)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _rectangle(center: Point, size: Point, angle_deg: float) -> Polygon:
    """A rectangle of ``size`` (w, h) mm centred at ``center``, turned ``angle_deg`` clockwise."""
    half_w, half_h = size[0] / 2, size[1] / 2
    angle = math.radians(angle_deg)
    cos_a, sin_a = math.cos(angle), math.sin(angle)
    corners = [(-half_w, -half_h), (half_w, -half_h), (half_w, half_h), (-half_w, half_h)]
    return Polygon(
        tuple(
            (center[0] + dx * cos_a - dy * sin_a, center[1] + dx * sin_a + dy * cos_a)
            for dx, dy in corners
        )
    )
