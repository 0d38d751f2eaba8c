"""The camera frames a round records are JPEGs at table.toml's ``[recording] frame_quality``:
at the default (85) and at 65, the card detector and index reader still read every card they
read in the frame before it was encoded, and 65 takes fewer bytes."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from dealer_assist.rules import Card, CardTarget
from dealer_assist.table.camera_source import jpeg
from dealer_assist.table.simulation.synthetic_camera import HOUSE_DECK, SyntheticFelt
from dealer_assist.table.sources import FeltCard

artwork = pytest.importorskip("dealer_assist.vision.artwork")
if HOUSE_DECK not in artwork.installed_designs():
    pytest.skip("card artwork not installed (scripts/install-card-art.sh)", allow_module_level=True)

#: A dealt round: two cards at each of four seats (one doubled, sideways) and the dealer's.
DEALT = [("8S", 1, False), ("KH", 1, False), ("3C", 2, False), ("9D", 2, False),
         ("AS", 3, False), ("7H", 3, False), ("5C", 3, True), ("QD", 5, False), ("2H", 5, False),
         ("6S", None, False), ("JC", None, False)]


@pytest.mark.parametrize("quality", [None, 65])
def test_the_cards_read_in_a_frame_are_read_after_encoding(quality):
    from dealer_assist.vision.detector import DEFAULT_MODEL, CardDetector

    felt = SyntheticFelt(artwork.load_designs([HOUSE_DECK])[0], seed=5)
    for code, seat, sideways in DEALT:
        felt.show(FeltCard(Card.parse(code), CardTarget() if seat is None else
                           CardTarget(seat, 0), sideways))
    frame = felt.render().image
    detector = CardDetector(DEFAULT_MODEL, threads=1)
    read = sorted(o.card for o in detector.detect(frame))
    assert len(read) >= len(DEALT) - 1  # the frame itself is readable

    recorded = jpeg(frame) if quality is None else jpeg(frame, quality)
    decoded = cv2.imdecode(np.frombuffer(recorded, np.uint8), cv2.IMREAD_COLOR)
    assert decoded.shape == frame.shape
    assert sorted(o.card for o in detector.detect(decoded)) == read
    if quality is not None:
        assert len(recorded) < 0.8 * len(jpeg(frame, 85))
