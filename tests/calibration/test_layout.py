"""The layout format and the standard 7-seat layout: geometry, zone queries, refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from dealer_assist.calibration.errors import LayoutError
from dealer_assist.calibration.layout import SEAT_ZONES, Circle, Layout, MarkerPlacement, Polygon


def test_standard_layout_has_seven_seats_with_every_zone(layout: Layout) -> None:
    assert layout.seats == (1, 2, 3, 4, 5, 6, 7)
    for seat in layout.seats:
        for name in SEAT_ZONES:
            assert layout.zone(seat, name).seat == seat
    for name in ("cards", "chip_tray", "discard"):
        assert layout.zone(None, name).seat is None
    assert [m.marker_id for m in layout.markers] == [0, 1, 2, 3, 4, 5]


def test_seat_one_is_first_base_on_the_dealers_left(layout: Layout) -> None:
    """+x is the dealer's left: seat 1 is far right, seat 7 far left, seat 4 in the middle."""
    xs = [layout.zone(seat, "bet").shape.centroid[0] for seat in layout.seats]
    assert xs == sorted(xs, reverse=True)
    assert xs[0] > 600 and xs[6] < -600 and abs(xs[3]) < 1
    # the discard rack sits on the dealer's right (-x); players are at +y
    assert layout.zone(None, "discard").shape.centroid[0] < 0
    assert layout.zone(4, "bet").shape.centroid[1] > layout.zone(None, "cards").shape.centroid[1]


def test_every_zone_is_found_at_its_own_centre(layout: Layout) -> None:
    for zone in layout.zones:
        found = layout.zone_at(*zone.shape.centroid)
        assert found == zone, (zone.seat, zone.name)


def test_zones_do_not_overlap_and_markers_sit_on_bare_felt(layout: Layout) -> None:
    for x in range(-1000, 1001, 20):
        for y in range(0, 1001, 20):
            holders = [z for z in layout.zones if z.contains(x, y)]
            assert len(holders) <= 1, (x, y, [(z.seat, z.name) for z in holders])
    for marker in layout.markers:
        for corner in marker.corners():
            assert layout.zone_at(*corner) is None, marker.marker_id
            assert layout.outline.contains(*corner), marker.marker_id


def test_points_off_every_zone_have_no_zone(layout: Layout) -> None:
    assert layout.zone_at(0, 5000) is None
    assert layout.zone_at(0, 420) is None  # bare felt between the dealer's cards and insurance


def test_shapes_contain_what_they_should() -> None:
    circle = Circle((10.0, 20.0), 5.0)
    assert circle.contains(14.9, 20) and not circle.contains(15.1, 20)
    square = Polygon(((0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)))
    assert square.contains(5, 5) and not square.contains(11, 5) and not square.contains(5, -1)
    # outlines used for drawing stay on the shape's boundary
    for x, y in circle.outline():
        assert abs(((x - 10) ** 2 + (y - 20) ** 2) ** 0.5 - 5) < 1e-9


def test_marker_corners_follow_arucos_order_and_rotation() -> None:
    upright = MarkerPlacement(7, (100.0, 50.0), 40.0)
    assert upright.corners() == [(80.0, 30.0), (120.0, 30.0), (120.0, 70.0), (80.0, 70.0)]
    turned = MarkerPlacement(7, (0.0, 0.0), 40.0, rotation_deg=90)
    assert turned.corners()[0] == pytest.approx((20.0, -20.0))  # top-left went to the right


def _standard(layout_path: Path) -> dict[str, Any]:
    return yaml.safe_load(layout_path.read_text())


BREAKAGES = [
    ("missing seats", lambda d: d.pop("seats"), "missing key 'seats'"),
    (
        "negative radius",
        lambda d: d["seats"][2]["bet"]["circle"].update(radius=-4),
        "seats[2].bet.circle.radius: must be positive",
    ),
    (
        "seat numbering",
        lambda d: d["seats"][1].update(seat=5),
        "seats[1].seat: expected seat 2, got 5",
    ),
    (
        "unknown zone",
        lambda d: d["seats"][0].update(side_bet={"circle": {"center": [0, 0], "radius": 3}}),
        "seats[0]: unknown seat zone 'side_bet'",
    ),
    ("missing card area", lambda d: d["seats"][6].pop("cards"), "seats[6]: missing key 'cards'"),
    (
        "duplicate marker",
        lambda d: d["markers"]["placed"][3].update(id=0),
        "markers.placed[3].id: marker 0 is placed twice",
    ),
    (
        "marker id too big",
        lambda d: d["markers"]["placed"][0].update(id=99),
        "markers.placed[0].id: 99 is not an id of DICT_4X4_50",
    ),
    (
        "unknown dictionary",
        lambda d: d["markers"].update(dictionary="DICT_9X9"),
        "markers.dictionary: unknown 'DICT_9X9'",
    ),
    (
        "bad point",
        lambda d: d["dealer"]["discard"]["rect"].update(center=[1, "x"]),
        "dealer.discard.rect.center[1]: expected a number",
    ),
    (
        "two shapes",
        lambda d: d["dealer"]["cards"].update(circle={"center": [0, 0], "radius": 1}),
        "dealer.cards: expected exactly one of",
    ),
    # a misspelt key was ignored and its default used: the zone unturned, the marker unturned
    (
        "misspelt angle",
        lambda d: d["dealer"]["discard"]["rect"].update(angle=30),
        "dealer.discard.rect: unknown key 'angle' (known: center, size, angle_deg)",
    ),
    (
        "misspelt rotation",
        lambda d: d["markers"]["placed"][0].update(rotation=90),
        "markers.placed[0]: unknown key 'rotation' (known: id, center, size_mm, rotation_deg)",
    ),
    (
        "misspelt marker size",
        lambda d: d["markers"].update(size=60),
        "markers: unknown key 'size' (known: dictionary, size_mm, placed)",
    ),
    (
        "unknown top-level key",
        lambda d: d.update(marker={}),
        ": unknown key 'marker' (known: name, outline, seats, dealer, markers)",
    ),
    (
        "circle with a rect's key",
        lambda d: d["seats"][2]["bet"]["circle"].update(size=[4, 4]),
        "seats[2].bet.circle: unknown key 'size' (known: center, radius)",
    ),
    # these loaded, then `calibrate markers` failed in OpenCV ("integer won't fit into a C int")
    # or ran out of memory drawing them
    (
        "marker 1e9 mm",
        lambda d: d["markers"].update(size_mm=1e9),
        "markers.size_mm: must be within 3000 mm (a table is about 2000 mm across), got"
        " 1000000000.0",
    ),
    (
        "one marker 4 m",
        lambda d: d["markers"]["placed"][2].update(size_mm=4000),
        "markers.placed[2].size_mm: must be within 3000 mm",
    ),
    (
        "radius 1e300",
        lambda d: d["seats"][0]["bet"]["circle"].update(radius=1e300),
        "seats[0].bet.circle.radius: must be within 3000 mm",
    ),
    (
        "point 1e9 mm away",
        lambda d: d["outline"][0].__setitem__(1, -1e9),
        "outline[0][1]: must be within 3000 mm",
    ),
    (
        "rect 5 m wide",
        lambda d: d["dealer"]["discard"]["rect"].update(size=[5000, 130]),
        "dealer.discard.rect.size[0]: must be within 3000 mm",
    ),
]


@pytest.mark.parametrize(("label", "breakage", "message"), BREAKAGES, ids=[b[0] for b in BREAKAGES])
def test_bad_layouts_are_refused_naming_file_and_key(
    layout_path: Path, tmp_path: Path, label: str, breakage: Any, message: str
) -> None:
    data = _standard(layout_path)
    breakage(data)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(LayoutError) as caught:
        Layout.load(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)


def test_unreadable_layout_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(LayoutError, match="cannot read layout"):
        Layout.load(tmp_path / "absent.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("seats: [unclosed\n")
    with pytest.raises(LayoutError, match=r"broken\.yaml: not valid YAML"):
        Layout.load(broken)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("name: table à droite\n".encode("latin-1"))
    with pytest.raises(LayoutError, match=r"latin\.yaml: not valid YAML: unacceptable character"):
        Layout.load(latin)
    # a layout saved as UTF-16 (with its byte-order mark) is read as what it says
    utf16 = tmp_path / "utf16.yaml"
    utf16.write_bytes(broken.read_text().encode("utf-16"))
    with pytest.raises(LayoutError, match=r"utf16\.yaml: not valid YAML: while parsing"):
        Layout.load(utf16)


def test_a_layout_nested_too_deeply_is_refused(tmp_path: Path) -> None:
    """PyYAML recursed once per level and raised RecursionError."""
    path = tmp_path / "deep.yaml"
    path.write_text("outline: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(LayoutError) as caught:
        Layout.load(path)
    assert str(caught.value) == f"{path}: not valid YAML: nested too deeply"
