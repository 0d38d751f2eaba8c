"""Drawn training decks: reproducible, 52 faces, the index where the box says, in both corners."""

from __future__ import annotations

import numpy as np
import pytest

from dealer_assist.vision.artwork import CARD_CODES
from dealer_assist.vision.procedural import (
    RANK_UPRIGHT,
    TURNED,
    UPRIGHT,
    _bottom_layout,
    _stroke_weight,
    _weighted,
    drawn_designs,
    installed_fonts,
    text_fonts,
)

pytest.importorskip("PIL", reason="drawn decks need Pillow (the test and train extras)")
if not text_fonts(installed_fonts()):  # Debian's fonts-dejavu-core is on every image we use
    pytest.skip("no fonts installed under /usr/share/fonts", allow_module_level=True)


@pytest.fixture(scope="module")
def decks():
    return drawn_designs(3, seed=4)


def ink(face: np.ndarray, box: tuple[float, ...]) -> float:
    h, w = face.shape[:2]
    x0, y0, x1, y1 = box
    patch = face[int(y0 * h) : int(np.ceil(y1 * h)), int(x0 * w) : int(np.ceil(x1 * w)), :3]
    return float((patch.astype(int).sum(axis=2) < 450).mean())


def test_reproducible_from_seed(decks) -> None:
    again = drawn_designs(3, seed=4)
    for a, b in zip(decks, again, strict=True):
        assert a.index_boxes == b.index_boxes
        assert all(np.array_equal(a.faces[c], b.faces[c]) for c in CARD_CODES)
    other = drawn_designs(1, seed=5)[0]
    assert not np.array_equal(other.faces["AS"], decks[0].faces["AS"])


def test_every_face_has_its_index_in_both_corners(decks) -> None:
    for deck in decks:
        assert sorted(deck.faces) == sorted(CARD_CODES)
        for code in CARD_CODES:
            face = deck.faces[code]
            assert face.shape[2] == 4 and face[face.shape[0] // 2, face.shape[1] // 2, 3] == 255
            box = deck.index_boxes[code]
            assert box[2] < 0.5 and box[3] < 0.5, "the index sits in the top-left corner"
            turned = (1 - box[2], 1 - box[3], 1 - box[0], 1 - box[1])
            assert ink(face, box) > 0.05 and ink(face, turned) > 0.05, code


def test_pips_and_pictures_keep_clear_of_the_index(decks) -> None:
    # the label box must hold the index alone: the strip beside it is bare paper on every face
    for deck in decks:
        for code in CARD_CODES:
            x0, y0, x1, y1 = deck.index_boxes[code]
            assert ink(deck.faces[code], (x1 + 0.005, y0, x1 + 0.03, y1)) == 0.0, (deck.name, code)


def index_ink(deck, code: str) -> float:
    """How much ink a face's top-left index holds, as a share of the card's area."""
    x0, y0, x1, y1 = deck.index_boxes[code]
    return ink(deck.faces[code], deck.index_boxes[code]) * (x1 - x0) * (y1 - y0)


def test_stroke_weights_make_the_same_decks_lighter_or_bolder() -> None:
    plain, weighted = drawn_designs(3, seed=2), drawn_designs(3, seed=2, weights=True)
    stream = np.random.default_rng((2, 1))  # the decks' own weight stream
    weights = [_stroke_weight(stream) for _ in weighted]
    assert weights[0] > 0.02 and weights[1] == 0 and weights[2] < -0.015  # bold, as drawn, light
    for before, after, weight in zip(plain, weighted, weights, strict=True):
        assert after.name == before.name
        for code in CARD_CODES:
            if weight == 0:
                assert np.array_equal(after.faces[code], before.faces[code]), code
            elif weight > 0:
                assert index_ink(after, code) > index_ink(before, code), (after.name, code)
            else:
                assert index_ink(after, code) < index_ink(before, code), (after.name, code)


def test_a_weighted_glyph_is_grown_whole_and_thinned_but_never_erased() -> None:
    bar = np.zeros((40, 12), np.uint8)
    bar[:, 4:8] = 255  # a stroke 4 px wide, touching the mask's top and bottom
    grown = _weighted(bar, 0.05)  # 2 px each way
    assert grown.shape == (44, 8)  # grown on every side, nothing clipped at the mask's edges
    assert (grown[2:-2] == 255).all()  # (its ends rounded by the round pen)
    thinned = _weighted(bar, -0.025)  # 1 px each way
    assert (thinned[20] == 255).sum() == 2
    assert (_weighted(bar, -0.2) == bar).all()  # would erase the stroke: left as drawn
    assert _weighted(bar, 0.01) is bar


def test_fonts_without_every_rank_are_not_rank_fonts() -> None:
    # STIX's size variants and OpenSymbol (scripts/install-card-art.sh) map few letters or none:
    # a deck drawn with one showed blank or boxed ranks
    fonts = installed_fonts()
    symbol_faces = [f for f in fonts if f.name.startswith("STIXSize") or f.name == "opens___.ttf"]
    if not symbol_faces:
        pytest.skip("no STIX size-variant or OpenSymbol font installed")
    rank_fonts = text_fonts(fonts)
    assert not set(symbol_faces) & set(rank_fonts)
    assert any(f.name == "DejaVuSans.ttf" for f in rank_fonts)


def test_an_upright_share_prints_some_decks_bottom_index_upright_and_leaves_the_rest() -> None:
    plain = drawn_designs(3, seed=3)
    mixed = drawn_designs(3, seed=3, upright_share=0.7)
    stream = np.random.default_rng((3, 2))  # the decks' own stream for it
    layouts = [_bottom_layout(stream, 0.7) for _ in mixed]
    assert layouts == [RANK_UPRIGHT, TURNED, UPRIGHT]  # this seed draws each layout once
    for before, after, layout in zip(plain, mixed, layouts, strict=True):
        for code in CARD_CODES:
            face, was = after.faces[code], before.faces[code]
            assert after.index_boxes[code] == before.index_boxes[code]
            if layout == TURNED or layout == RANK_UPRIGHT and code[0] in "69":
                # (a 6 or 9 with its rank alone upright would read, turned, as the other)
                assert np.array_equal(face, was), (after.name, code)
                continue
            assert not np.array_equal(face, was), (after.name, code)
            # the card keeps its shape: its rounded corners are the plain deck's
            assert np.array_equal(face[:, :, 3], was[:, :, 3]), (after.name, code)
            h, w = face.shape[:2]
            x0, y0, x1, y1 = (round(v * s) for v, s in zip(after.index_boxes[code],
                                                            (w, h, w, h), strict=True))
            top = face[y0 : y1 + 1, x0 : x1 + 1]
            bottom = face[h - 1 - y1 : h - y0, w - 1 - x1 : w - x0]
            turned = was[h - 1 - y1 : h - y0, w - 1 - x1 : w - x0]
            on_card = (top[:, :, 3] == 255) & (bottom[:, :, 3] == 255)
            if layout == UPRIGHT:  # the top index as printed, not turned over
                assert np.array_equal(bottom[on_card], top[on_card]), (after.name, code)
            else:  # the turned suit above stays; the rank below it is another picture
                suit_rows = slice(0, (y1 - y0) // 4)
                assert np.array_equal(bottom[suit_rows], turned[suit_rows]), (after.name, code)
                assert not np.array_equal(bottom[on_card], turned[on_card]), (after.name, code)


def test_an_upright_share_must_be_a_share() -> None:
    with pytest.raises(ValueError, match="upright_share 1.5"):
        drawn_designs(1, seed=3, upright_share=1.5)
