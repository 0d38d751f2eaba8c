"""``dealer-assist evaluate``: the shipped card models on independent scenes of held-out designs.

    dealer-assist evaluate --scenes 400 --seed 1 [--frames 8 | --per-card 4]
                           [--shoe [--flight kept|table] | --hand-held] [--json]
    dealer-assist evaluate --deck FOLDER --model M --reader R [--shoe --flight table |
                           --hand-held] --acceptance REPORT

Renders ``--scenes`` deals (:mod:`dealer_assist.evaluation.render`), one held-out design each in
turn, reads every frame with the models as the table does (ONNX Runtime, INT8 by default) and
scores per frame and per physical card through the frame tracker
(:mod:`dealer_assist.evaluation.score`). The headline counts only cards that pass the install
checks (70-95 px wide, in a camera within the sharpness bound). With ``--shoe`` the frames go
through the table's shoe check instead, each card's code in flight from the frame it lands (kept
there as ``--flight`` says), and each card is scored for landing and verification
(:mod:`dealer_assist.evaluation.verification`), and each card that never landed is put down to
what the check read at its indices. With ``--hand-held`` the frames go through that check with no
shoe code ever in flight, as a table without a shoe names cards
(:mod:`dealer_assist.evaluation.hand_held`), scored as naming is.
``--deck`` renders one deck of the caller's instead (an enrolled deck: 52 faces, ``<CODE>.png``
or ``.jpg``), and ``--acceptance`` writes that deck's acceptance report from its headline
per-card figures, marked ``"source": "independent"``
(:class:`~dealer_assist.vision.model_control.AcceptanceReport`): naming's (with
``--hand-held`` through the table's own check), or with ``--shoe --flight table`` the shoe
check's (a report only a table with a shoe accepts). Exit status: 0 scored; 1 no card to score;
2 a bad option, a design outside the split's held-out list, artwork or a model missing.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from dealer_assist.cli import number_in, rng_seed

if TYPE_CHECKING:
    from dealer_assist.vision.model_control import AcceptanceReport

log = logging.getLogger(__name__)

#: Frames a deal is rendered over unless ``--frames`` or ``--per-card`` says otherwise.
DEAL_FRAMES = 8
_GROUP_ORDER = ("headline", "all", "place:", "sideways:", "width:", "design:", "blur:")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``dealer-assist evaluate``."""
    from dealer_assist.evaluation.verification import FLIGHTS
    from dealer_assist.vision.detector import DEFAULT_MODEL, DEFAULT_READER
    from dealer_assist.vision.reader import DEFAULT_READING, READINGS

    parser.add_argument("--scenes", type=number_in(int, 1, 100_000, "--scenes"), default=40,
                        help="deals to render (default 40; the model card's run: 400)")
    parser.add_argument("--seed", type=rng_seed, default=1, help="the scenes' seed (default 1)")
    pace = parser.add_mutually_exclusive_group()
    pace.add_argument("--frames", type=number_in(int, 4, 60, "--frames"),
                      help=f"frames per deal (default {DEAL_FRAMES}; cards land over all but "
                      "the last 3, several a frame)")
    pace.add_argument("--per-card", type=number_in(int, 1, 30, "--per-card"), metavar="K",
                      help="deal at a table's pace instead: one card at a time, each lying K "
                      "frames before the next lands (the table reads up to 8 frames a second)")
    parser.add_argument("--designs", type=lambda t: [d for d in t.split(",") if d],
                        help="comma-separated held-out designs (default: every one installed)")
    parser.add_argument("--deck", type=Path,
                        help="a folder of one deck's 52 faces (an enrolled deck) to render instead "
                        "of the held-out designs; not checked against the design split")
    parser.add_argument("--acceptance", type=Path, metavar="REPORT",
                        help="with --deck: write the deck's acceptance report for --model and "
                        "--reader from the headline per-card figures (source: independent): "
                        "naming's (with --hand-held as the table names), or with --shoe "
                        "--flight table the shoe check's")
    parser.add_argument("--card-width", type=number_in(float, 20, 300, "--card-width"),
                        nargs=2, default=[60.0, 95.0], metavar=("LEAST", "MOST"),
                        help="card width range drawn, px (default 60 95)")
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--reader", type=Path, default=DEFAULT_READER)
    parser.add_argument("--reading", choices=READINGS, default=DEFAULT_READING,
                        help="how each found index is read (default %(default)s, as the "
                        "table: as seen and half a turn, the quarter turns too where unsure)")
    parser.add_argument("--workers", type=number_in(int, 1, 64, "--workers"),
                        default=min(2, os.cpu_count() or 1),
                        help="processes, each rendering and reading its own scenes with one "
                        "thread (default: 2, or the cores if fewer)")
    parser.add_argument("--shoe", action="store_true",
                        help="check each card against the shoe's code as the table does (landing "
                        "and verification) instead of naming it")
    parser.add_argument("--flight", choices=FLIGHTS, default="kept",
                        help="with --shoe: how the shoe's codes leave flight: kept (default), "
                        "each only once a card is matched to it; table, as the table's pairing "
                        "takes them out: also once a later card is matched or after the "
                        "camera's 1.5 s wait at 8 frames a second")
    parser.add_argument("--hand-held", action="store_true",
                        help="name the cards through the table's own check with no shoe code "
                        "in flight, as a table without a shoe does (still regions keep their "
                        "boxes, faint places are read), instead of the detector naming each "
                        "frame afresh")
    parser.add_argument("--json", action="store_true", help="one JSON object on standard output")


def run(args: argparse.Namespace) -> int:
    from dealer_assist.evaluation.artwork import (
        EvaluationArtError,
        felt_textures,
        installed_decks,
        load_deck,
    )
    from dealer_assist.evaluation.split import DesignSplitError, load_split

    if args.frames is None:  # not a default of the option, so that argparse refuses it with
        args.frames = DEAL_FRAMES  # --per-card whatever number it is given
    if args.card_width[0] > args.card_width[1]:
        print("dealer-assist evaluate: --card-width LEAST MOST: least is above most",
              file=sys.stderr)
        return 2
    refused = ("--shoe and --hand-held: one or the other" if args.shoe and args.hand_held else
               "--acceptance needs --deck" if args.acceptance and not args.deck else
               "--deck and --designs: one or the other" if args.deck and args.designs else
               "--acceptance with --shoe scores the table's own keeping of the shoe's codes: add"
               " --flight table" if args.acceptance and args.shoe and args.flight != "table"
               else "--flight needs --shoe" if args.flight != "kept" and not args.shoe else None)
    if refused:
        print(f"dealer-assist evaluate: {refused}", file=sys.stderr)
        return 2
    if args.deck:
        designs = installed = [args.deck.name]
        folders = {args.deck.name: args.deck}
    else:
        try:
            split = load_split()
            if args.designs:
                designs = list(dict.fromkeys(args.designs))
                for design in designs:
                    split.check_held_out(design)
            else:
                designs = sorted(split.held_out)
            folders = {d: split.folder(d) for d in designs}
            installed = [d for d in designs if _installed(folders[d])]
        except DesignSplitError as error:
            print(f"dealer-assist evaluate: {error}", file=sys.stderr)
            return 2
    missing = sorted(set(designs) - set(installed))
    if args.designs and missing or not installed:
        print(f"dealer-assist evaluate: held-out designs not installed: "
              f"{', '.join(missing)} (installed: {', '.join(installed_decks()) or 'none'}; "
              "run scripts/install-card-art.sh)", file=sys.stderr)
        return 2
    if missing:
        log.warning("held-out designs not installed, left out: %s", ", ".join(missing))
    for path in (args.model, args.reader):
        if not path.is_file():
            print(f"dealer-assist evaluate: no such model file: {path}", file=sys.stderr)
            return 2
    from dealer_assist.vision.detector import CardDetector, ModelError

    try:  # a detector given as the reader or the reverse is named here, not in a worker
        CardDetector(args.model, args.reader, threads=1)
    except ModelError as error:
        print(f"dealer-assist evaluate: {error}", file=sys.stderr)
        return 2
    try:  # every face and texture readable before any work (the workers load their own)
        for design in installed:
            load_deck(folders[design])
        felt_textures()
    except EvaluationArtError as error:
        print(f"dealer-assist evaluate: {error}", file=sys.stderr)
        return 2
    jobs = [(i, installed[i % len(installed)]) for i in range(args.scenes)]
    setup = (str(args.model), str(args.reader), args.reading, args.seed, args.frames,
             args.per_card, tuple(args.card_width), {d: str(folders[d]) for d in installed},
             args.shoe, args.flight, args.hand_held)
    from dealer_assist.evaluation.score import Report
    from dealer_assist.evaluation.verification import CheckReport

    total: Report | CheckReport = CheckReport() if args.shoe else Report()
    try:
        if args.workers == 1:
            _start(*setup)
            _gather(total, map(_one, jobs), len(jobs))
        else:
            with ProcessPoolExecutor(args.workers, initializer=_start, initargs=setup) as pool:
                _gather(total, pool.map(_one, jobs, chunksize=1), len(jobs))
    except (EvaluationArtError, ValueError) as error:
        print(f"dealer-assist evaluate: {error}", file=sys.stderr)
        return 2
    from dealer_assist.vision.model_control import sha256_of

    every = total.card.get("all")
    if every is None or not every.counted:
        print("dealer-assist evaluate: the scenes showed no card to score", file=sys.stderr)
        return 1
    hashes = (sha256_of(args.model), sha256_of(args.reader))
    result = {
        "scenes": args.scenes, "frames": None if args.per_card else args.frames,
        "frames_per_card": args.per_card, "seed": args.seed,
        "card_width": args.card_width, "designs": installed,
        "models": {str(args.model): hashes[0], str(args.reader): hashes[1]},
        "reading": args.reading, "hand_held": args.hand_held,
    }
    if isinstance(total, CheckReport):
        if args.acceptance:
            checked = total.card.get("headline")
            if checked is None or not checked.counted:
                return _no_headline()
            _acceptance(args, "shoe", {
                "landing": checked.rate(checked.landed),
                "verification": checked.rate(checked.verified),
                "wrong_match": checked.rate(checked.wrong_match),
                "false_switched": checked.rate(checked.false_switched)},
                checked.counted, *hashes).write(args.acceptance)
            result["acceptance"] = str(args.acceptance)
        result["flight"] = args.flight
        result["shoe_check"] = {g: t.to_json() for g, t in _ordered(total.card)}
        result["wrong_matches"] = [w.to_json() for w in
                                   sorted(total.wrong, key=lambda w: (w.deal, w.frame))]
        result["unlanded_cards"] = [u.to_json() for u in
                                    sorted(total.unlanded, key=lambda u: (u.deal, u.arrives))]
        if args.json:
            print(json.dumps(result))
        else:
            _print_checks(result)
        return 0
    if args.acceptance:
        headline = total.card.get("headline")
        if headline is None or not headline.counted:
            return _no_headline()
        _acceptance(args, "naming", {"precision": headline.precision,
                                     "recall": headline.recall},
                    headline.counted, *hashes).write(args.acceptance)
        result["acceptance"] = str(args.acceptance)
    result |= {
        "per_card": {g: t.to_json() for g, t in _ordered(total.card)},
        "per_frame": {g: t.to_json() for g, t in _ordered(total.frame)},
        "confusions": {f"{a}>{b}": n for (a, b), n in
                       total.card["all"].confusions.most_common(20)},
        "frame_confusions": {f"{a}>{b}": n for (a, b), n in
                             total.frame["all"].confusions.most_common(20)},
    }
    if args.json:
        print(json.dumps(result))
    else:
        _print_text(result)
    return 0


def _no_headline() -> int:
    print("dealer-assist evaluate: no card of the deck passed the install checks (70-95 px, "
          "sharp): no acceptance report written", file=sys.stderr)
    return 1


def _acceptance(args: argparse.Namespace, check: str, figures: dict[str, float], cards: int,
                detector_sha256: str, reader_sha256: str) -> AcceptanceReport:
    """The deck's acceptance report by ``check`` from its headline cards' ``figures``, for
    the model files of those hashes."""
    from dealer_assist.vision.model_control import AcceptanceReport
    from dealer_assist.vision.reader import DEFAULT_READING

    path = " --shoe --flight table" if check == "shoe" else \
        " --hand-held" if args.hand_held else ""
    reading = "" if args.reading == DEFAULT_READING else f" --reading {args.reading}"
    # unrounded: a figure rounded up to the goal would pass short of it
    return AcceptanceReport(
        deck=args.deck.name, detector_sha256=detector_sha256,
        reader_sha256=reader_sha256, figures=figures, cards=cards, scenes=args.scenes,
        source="independent", check=check,
        command=(f"dealer-assist evaluate --deck {args.deck} --model {args.model} --reader "
                 f"{args.reader} --scenes {args.scenes} {_pace_option(args)} --seed "
                 f"{args.seed} --card-width {args.card_width[0]:g} {args.card_width[1]:g}{reading}"
                 f"{path} --acceptance {args.acceptance}"))


def _pace_option(args: argparse.Namespace) -> str:
    """The command-line option that gave the run's pace."""
    return f"--per-card {args.per_card}" if args.per_card else f"--frames {args.frames}"


def _gather(total, reports, count: int) -> None:  # type: ignore[no-untyped-def]
    """Add each deal's report to ``total``, logging progress every tenth of the run."""
    step = max(1, count // 10)
    for done, report in enumerate(reports, 1):
        total.add(report)
        if done % step == 0 or done == count:
            log.info("%d of %d deals scored", done, count)


def _installed(folder: Path) -> bool:
    from dealer_assist.evaluation.artwork import CODES

    return all((folder / f"{code}.png").is_file() for code in CODES)


def _ordered(groups: dict) -> list:  # type: ignore[type-arg]
    def key(item: tuple[str, object]) -> tuple[int, str]:
        name = item[0]
        rank = next((i for i, p in enumerate(_GROUP_ORDER) if name.startswith(p)),
                    len(_GROUP_ORDER))
        return rank, name
    return sorted(groups.items(), key=key)


def _print_heading(result: dict) -> None:  # type: ignore[type-arg]
    pace = (f"{result['frames']} frames" if result.get("frames_per_card") is None else
            f"one card at a time, {result['frames_per_card']} frames each")
    print(f"independent scenes: {result['scenes']} deals x {pace}, seed "
          f"{result['seed']}, cards {result['card_width'][0]:g}-{result['card_width'][1]:g} px, "
          f"designs {', '.join(result['designs'])}")
    if result.get("hand_held"):
        print("named through the table's own check, no shoe code in flight (--hand-held)")


def _print_checks(result: dict) -> None:  # type: ignore[type-arg]
    from dealer_assist.evaluation.verification import UNLANDED

    _print_heading(result)
    print(f"\nper physical card, checked against the shoe's code as it lands (codes in flight: "
          f"{result['flight']}):")
    print(f"  {'group':<32} {'cards':>7} {'landing':>8} {'verified':>8} {'wrong':>6} "
          f"{'switched':>8} {'stray':>5}")
    for group, t in result["shoe_check"].items():
        print(f"  {group:<32} {t['cards']:>7} {t['landing']:>8.4f} {t['verification']:>8.4f} "
              f"{t['wrong_match']:>6} {t['false_switched']:>8} {t['stray']:>5}")
    print("\ncards that never landed, by what the check read at their own indices in the frames "
          "they show in\n(found: an index box centred there; as itself: read as the card's own "
          "code at 0.5 or more):")
    print(f"  {'group':<32} {'unlanded':>8} {'not found':>9} {'not as itself':>13} "
          f"{'as itself once':>14} {'twice or more':>13}")
    for group, t in result["shoe_check"].items():
        counts = [t["unlanded"][reason] for reason in UNLANDED]
        print(f"  {group:<32} {sum(counts):>8} {counts[0]:>9} {counts[1]:>13} {counts[2]:>14} "
              f"{counts[3]:>13}")
    if result["wrong_matches"]:
        print("\nwrong matches (a card taken for another code in flight; * headline):")
    for w in result["wrong_matches"]:
        print(f"  {'*' if w['headline'] else ' '} {w['design']} deal {w['deal']} frame "
              f"{w['frame']}: {w['card']} taken for {w['taken_for']} ({len(w['in_flight'])} "
              f"in flight: {' '.join(w['in_flight'])})"
              f"{'; verified as itself too' if w['verified_too'] else ''}")
    headline = [u for u in result["unlanded_cards"] if u["headline"]]
    if headline:
        print("\nheadline cards that never landed (frames found / read as itself; its own "
              "code's best probability; the reading surest there):")
    for u in headline:
        print(f"  {u['design']} deal {u['deal']} frame {u['arrives']}: {u['card']} "
              f"{u['width_px']:.0f} px, {u['place']}: {u['reason'].replace('_', ' ')} "
              f"({u['found']} / {u['as_itself']}; own {u['own']:.3f}; read "
              f"{u['read_as'] or '-'} at {u['read_at']:.3f})")


def _print_text(result: dict) -> None:  # type: ignore[type-arg]
    _print_heading(result)
    for kind, title in (("per_card", "per physical card (the tracker's verdict)"),
                        ("per_frame", "per frame")):
        print(f"\n{title}:")
        print(f"  {'group':<32} {'cards':>7} {'precision':>9} {'recall':>7} {'landing':>7} "
              f"{'misread':>7} {'dup':>5} {'stray':>5}")
        for group, t in result[kind].items():
            print(f"  {group:<32} {t['cards']:>7} {t['precision']:>9.4f} {t['recall']:>7.4f} "
                  f"{t['landing']:>7.4f} {t['misread']:>7} {t['duplicate']:>5} {t['stray']:>5}")
    if result["confusions"]:
        print("\nmisreads per card (true>read): " + ", ".join(
            f"{k} {v}" for k, v in result["confusions"].items()))


# ---------------------------------------------------------------- worker processes

_STATE: dict[str, object] = {}


def _start(model: str, reader: str, reading: str, seed: int, frames: int, per_card: int | None,
           width: tuple[float, float], folders: dict[str, str], shoe: bool,
           flight: str, hand_held: bool) -> None:
    from dealer_assist.evaluation.artwork import felt_textures, load_deck
    from dealer_assist.vision.detector import CardDetector

    _STATE.update(
        detector=CardDetector(model, reader, threads=1, reading=reading), seed=seed,
        frames=frames, per_card=per_card, width=width, shoe=shoe, flight=flight,
        hand_held=hand_held,
        decks={name: load_deck(Path(folder)) for name, folder in folders.items()},
        textures=felt_textures())


def _one(job: tuple[int, str]):  # -> Report or CheckReport
    from dealer_assist.evaluation.hand_held import hand_held_cards
    from dealer_assist.evaluation.render import render_sequence
    from dealer_assist.evaluation.score import score_sequence
    from dealer_assist.evaluation.verification import check_sequence

    number, design = job
    seed = (int(_STATE["seed"]) * 100_003 + number) % 2**32  # type: ignore[call-overload]
    seq = render_sequence(_STATE["decks"][design], seed,  # type: ignore[index]
                          frames=int(_STATE["frames"]),  # type: ignore[call-overload]
                          width=_STATE["width"],  # type: ignore[arg-type]
                          textures=_STATE["textures"],  # type: ignore[arg-type]
                          per_card=_STATE["per_card"])  # type: ignore[arg-type]
    detector = _STATE["detector"]
    if _STATE["shoe"]:
        return check_sequence(seq, detector, number,  # type: ignore[arg-type]
                              str(_STATE["flight"]))
    if _STATE["hand_held"]:
        observed, _ = hand_held_cards(seq.frames, detector)  # type: ignore[arg-type]
    else:
        observed = [detector.detect(frame) for frame in seq.frames]  # type: ignore[attr-defined]
    return score_sequence(seq, observed)
