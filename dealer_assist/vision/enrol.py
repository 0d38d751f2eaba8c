"""Enrol a casino's own deck: one command from 52 photographed faces to models that read it.

    python -m dealer_assist.vision.enrol /path/to/deck --name ourdeck

``/path/to/deck`` holds the 52 faces, each cropped to the card's outline and named by code
(``7S.png``, ``TC.jpg``, ...). The command renders table scenes from that deck (weighted over
the generic designs, which stay in so the models do not forget them), fine-tunes the shipped
detector (``models/cards.pt``) and the shipped reader (``models/index-reader.pt``) on them,
exports both to ``models/cards-<name>.onnx`` and ``models/index-reader-<name>.onnx``,
quantises both to INT8 (``*.int8.onnx``, what the table runs) and scores them against the
shipped models on scenes of the enrolled deck. Needs the training extra (torch). It writes the
deck's acceptance report, ``models/enrol-<name>.acceptance.json``
(:class:`~dealer_assist.vision.model_control.AcceptanceReport`): the INT8 files' SHA-256 and
the enrolled models' precision and recall on the check scenes against the goal (0.995), marked
``"source": "enrol-check"`` (scenes of the training generator, not independent ones), and prints
the ``dealer-assist evaluate`` command that writes it anew from the independent renderer's
scenes (with ``--shoe --flight table``, the figures a table with a shoe is accepted by). A table
runs the deck only if that report passes. Then, in ``table.toml``'s ``[camera]``:
``model = "models/cards-<name>.int8.onnx"`` and ``reader = "models/index-reader-<name>.int8.onnx"``,
and their SHA-256 in ``[vision]``'s ``detector_sha256`` and ``reader_sha256``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dealer_assist.vision import evaluate, model_control, options, quantize, train, train_reader
from dealer_assist.vision.artwork import ArtworkError, load_design
from dealer_assist.vision.detector import DEFAULT_MODEL, DEFAULT_READER, MODELS_DIR, CardDetector


def _step(number: int, what: str) -> None:
    """A progress line for each of enrolment's four steps (each takes minutes)."""
    print(f"enrol: step {number} of 4: {what}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m dealer_assist.vision.enrol", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("deck", type=Path, help="folder of the 52 faces, named by card code")
    p.add_argument("--name", default=None, help="model name suffix (default: the folder's name)")
    p.add_argument("--out-dir", type=Path, default=MODELS_DIR)
    p.add_argument("--scenes", type=options.SCENES, default=300, help="detector fine-tune scenes")
    p.add_argument("--epochs", type=options.EPOCHS, default=5, help="detector fine-tune epochs")
    p.add_argument("--reader-scenes", type=options.SCENES, default=2400,
                   help="reader fine-tune scenes")
    p.add_argument("--reader-epochs", type=options.EPOCHS, default=6,
                   help="reader fine-tune epochs")
    p.add_argument("--reader-lr", type=options.LEARNING_RATE, default=1e-3,
                   help="reader fine-tune peak learning rate")
    p.add_argument("--check-scenes", type=options.SCENES, default=100,
                   help="scenes of the enrolled deck to score the old and new models on")
    args = p.parse_args(argv)
    try:  # a missing or unreadable face is named before any work starts
        load_design(args.deck)
    except ArtworkError as error:
        print(f"enrol: {error}", file=sys.stderr)
        return 2
    # ONNX Runtime quantises and scores the models (steps 3 and 4): missing, it would stop
    # enrolment only after the fine-tunes' minutes
    options.require_training(p.prog, "torch", "ultralytics", "onnx", "onnxruntime")
    name = args.name or args.deck.name
    detector = args.out_dir / f"cards-{name}.onnx"
    reader = args.out_dir / f"index-reader-{name}.onnx"
    _step(1, f"fine-tuning the detector on {args.scenes} scenes, {args.epochs} epochs")
    train.main(["--faces", str(args.deck), "--init", str(MODELS_DIR / "cards.pt"),
                "--scenes", str(args.scenes), "--epochs", str(args.epochs),
                "--out", str(detector)])
    _step(2, f"fine-tuning the index reader on {args.reader_scenes} scenes, "
             f"{args.reader_epochs} epochs")
    train_reader.main(["--faces", str(args.deck), "--init", str(MODELS_DIR / "index-reader.pt"),
                       "--lr", str(args.reader_lr), "--scenes", str(args.reader_scenes),
                       "--epochs", str(args.reader_epochs), "--out", str(reader)])
    _step(3, "quantising both models to INT8")
    quantize.main(["--detector", str(detector), "--reader", str(reader), "--faces", str(args.deck)])
    results = {}
    enrolled = (quantize.quantized_path(detector), quantize.quantized_path(reader))
    for label, model, read in (("shipped", DEFAULT_MODEL, DEFAULT_READER), ("enrolled", *enrolled)):
        _step(4, f"scoring the {label} models on {args.check_scenes} scenes of {name}")
        found = evaluate.evaluate(CardDetector(model, read), [str(args.deck)],
                                  args.check_scenes, seed=2000,
                                  progress=lambda text: print(f"  {text}", file=sys.stderr,
                                                              flush=True))
        results[label] = evaluate.report(name, found)
        print(f"{label} models on {name}: precision {found.precision:.4f} "
              f"recall {found.recall:.4f}", file=sys.stderr)
    (args.out_dir / f"enrol-{name}.json").write_text(json.dumps(results, indent=2) + "\n")
    report = acceptance_report(name, *enrolled, found, args.check_scenes,
                               f"python -m dealer_assist.vision.enrol {args.deck} --name {name}")
    report.write(model_control.acceptance_path(enrolled[0]))
    print(f"acceptance: {report.summary()} against {report.goal_text()}: "
          f"{'passed' if report.passed else 'NOT passed, the table will refuse this deck'}",
          file=sys.stderr)
    print(f"enrol: the independent renderer's figures, which a table prefers: 'dealer-assist "
          f"evaluate --deck {args.deck} --model {enrolled[0]} --reader {enrolled[1]} --scenes "
          f"400 --per-card 4 --acceptance {model_control.acceptance_path(enrolled[0])}', with "
          "'--shoe --flight table' for a table with a shoe (its cards checked against the "
          "shoe's)", file=sys.stderr)
    return 0


def acceptance_report(deck: str, detector: Path, reader: Path, score: evaluate.Score,
                      scenes: int, command: str) -> model_control.AcceptanceReport:
    """The acceptance report of an enrolled deck's two files from enrol's own check scenes."""
    return model_control.AcceptanceReport(
        deck=deck, detector_sha256=model_control.sha256_of(detector),
        reader_sha256=model_control.sha256_of(reader),
        figures={"precision": score.precision, "recall": score.recall},
        cards=score.true_positives + score.false_negatives,
        scenes=scenes, source="enrol-check", command=command)


if __name__ == "__main__":
    raise SystemExit(main())
