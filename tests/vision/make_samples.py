"""Writes the committed sample frames in tests/data/vision/ and their known answers.

    PYTHONPATH=. python tests/vision/make_samples.py     (needs the installed card artwork)

Each sample is a 1280x720 frame with a few cards placed by hand, so the answer is exact:
``answers.json`` maps the image name to its design and the cards visible in it (code, centre,
sideways). Kept small and clear: these check that the shipped model works, not its limits
(the evaluation command measures those).
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from dealer_assist.vision.artwork import art_dir, load_design

OUT = Path(__file__).resolve().parents[1] / "data" / "vision"

# name -> (design, [(code, cx, cy, card width, angle)])
SAMPLES: dict[str, tuple[str, list[tuple[str, float, float, float, float]]]] = {
    # a seat's fan of three (each card up and right of the last) and the dealer's two cards
    "fan_anglo.jpg": (
        "anglo",
        [
            ("5H", 600, 480, 75, -3),
            ("KS", 625, 460, 75, 2),
            ("9C", 650, 440, 75, -1),
            ("QD", 600, 150, 75, 0),
            ("3S", 640, 150, 75, 2),
        ],
    ),
    # a doubled hand: two upright cards and the double turned sideways across them (held out)
    "double_kennard.jpg": (
        "kennard",
        [("8D", 400, 450, 80, 5), ("2S", 428, 430, 80, 8), ("6C", 470, 520, 80, 95)],
    ),
    # pip tens (an alarm on a Spanish table), each lying alone
    "tens_paris.jpg": ("paris", [("TS", 500, 360, 80, -10), ("TH", 760, 360, 80, 12)]),
    # split hands side by side on a held-out design, plus an ace and a jack
    "split_tigullio.jpg": (
        "tigullio",
        [
            ("7H", 560, 420, 70, 0),
            ("AC", 583, 402, 70, 0),
            ("7D", 700, 420, 70, 0),
            ("JH", 723, 402, 70, 0),
        ],
    ),
    # a jumbo-index deck, as casinos use
    "jumbo_kennard_bf.jpg": (
        "kennard_bf",
        [("4H", 300, 300, 85, 20), ("TC", 330, 280, 85, 22), ("AS", 900, 420, 85, -25)],
    ),
    # a doubled hand on a trained design: the double lies sideways below the two cards
    "double_bellot.jpg": (
        "bellot",
        [("9S", 800, 430, 75, -4), ("2H", 826, 410, 75, -2), ("5C", 830, 520, 75, 88)],
    ),
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    from dealer_assist.vision.scenes import render_layout

    answers = {}
    rng = np.random.default_rng(2026)
    for name, (design_name, cards) in SAMPLES.items():
        design = load_design(art_dir() / design_name)
        scene = render_layout(rng, design, cards)
        cv2.imwrite(str(OUT / name), scene.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        visible = sorted({lab.card for lab in scene.labels})
        answers[name] = {
            "design": design_name,
            "cards": [
                {
                    "card": scene.cards[k].code,
                    "x": round(scene.cards[k].center[0], 1),
                    "y": round(scene.cards[k].center[1], 1),
                    "sideways": scene.cards[k].sideways,
                }
                for k in visible
            ],
        }
    (OUT / "answers.json").write_text(json.dumps(answers, indent=1) + "\n")


if __name__ == "__main__":
    main()
