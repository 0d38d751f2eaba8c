"""``dealer-assist replay RECORDING [--round ID] [--verify [--key PUB] [--anchor-log LOG]] [--json]
[--redetect] [--export-rounds OUT]``.

Re-settles every recorded round with today's engine and compares with the recorded settlement;
with ``--verify`` also checks the hash chain, every record's signature (with the table's public
key file given by ``--key``), the anchor log, the operators and every frame file; with
``--redetect`` re-runs the
vision module's detector on the frames at card events; ``--export-rounds OUT`` writes every settled
or voided round's round-log files from the store into ``OUT/rounds`` and ``OUT/void`` (the table
exports them into its recording directory as each round ends). Exit status: 0 clean, 1
discrepancies, 2 the recording cannot be read, re-detection is unavailable or OUT cannot be
written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from dealer_assist.cli import utf8_text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("recording", metavar="RECORDING", help="recording directory")
    parser.add_argument("--round", metavar="ID", type=utf8_text,
                        help="only the rounds with this id (or #KEY)")
    parser.add_argument("--verify", action="store_true",
                        help="also verify the hash chain, the signatures, the operators and the "
                        "frame files' SHA-256")
    parser.add_argument("--key", action="append", default=[], metavar="TABLE.PUB",
                        help="with --verify: the table's public key file (from its technician);"
                        " without it the key the recording names is used, which proves nothing"
                        " against someone who can replace the whole recording (repeatable)")
    parser.add_argument("--anchor-log", metavar="FILE",
                        help="with --verify: the table's anchor log ([recording] anchor_log): "
                        "finds a chain cut short, rewritten or replaced")
    parser.add_argument("--redetect", action="store_true",
                        help="re-run the card detector (dealer_assist.vision) on recorded frames")
    parser.add_argument("--model", metavar="ONNX", help="detector model for --redetect")
    parser.add_argument("--anchor", action="append", default=[], metavar="SEQ:HASH",
                        help="a chain head noted earlier (from a previous replay's last line); "
                        "with --verify, fails if it is gone or changed (repeatable)")
    parser.add_argument("--export-rounds", metavar="OUT",
                        help="also write the round-log files of every settled or voided round, "
                        "read out of the store, into OUT/rounds and OUT/void (OUT may be the "
                        "recording directory itself: files that differ are written again)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--user", default=None, type=utf8_text,
                        help="who is replaying, for the access log; the OS account running the "
                        "command is recorded beside it (default: that account alone)")


def run(args: argparse.Namespace) -> int:
    from dealer_assist.surveillance.access import log_command
    from dealer_assist.surveillance.anchors import AnchorLog, AnchorLogError
    from dealer_assist.surveillance.evidence_check import trusted_keys
    from dealer_assist.surveillance.replay import (
        Discrepancy,
        RedetectUnavailable,
        parse_anchor,
        replay,
        vision_redetector,
    )
    from dealer_assist.surveillance.store import (
        DamagedRecordingError,
        RecordingError,
        RecordingStore,
    )

    try:
        anchors = [parse_anchor(text) for text in args.anchor]
        trusted = trusted_keys(args.key)
    except ValueError as error:  # KeyFileError is one
        print(f"dealer-assist replay: {error}", file=sys.stderr)
        return 2
    for flag, given in (("--anchor", anchors), ("--key", args.key),
                        ("--anchor-log", args.anchor_log)):
        if given and not args.verify:
            print(f"dealer-assist replay: {flag} needs --verify", file=sys.stderr)
            return 2
    if args.anchor_log is not None and not os.path.isfile(args.anchor_log):
        print(f"dealer-assist replay: --anchor-log: no such file: {args.anchor_log}",
              file=sys.stderr)
        return 2
    anchor_log = None if args.anchor_log is None else AnchorLog(args.anchor_log)
    redetect = None
    if args.redetect:
        try:
            redetect = vision_redetector(args.model)
        except RedetectUnavailable as error:
            print(f"dealer-assist replay: --redetect unavailable: {error}", file=sys.stderr)
            return 2
    try:
        store = RecordingStore(args.recording)
    except RecordingError as error:
        print(f"dealer-assist replay: {error}", file=sys.stderr)
        return 2
    exported = None
    try:
        report = replay(store, round_id=args.round, verify=args.verify, redetect=redetect,
                        anchors=anchors, trusted=trusted, anchor_log=anchor_log)
        if args.export_rounds is not None:
            from dealer_assist.surveillance.export import export_rounds

            try:
                exported = export_rounds(store, Path(args.export_rounds))
            except OSError as error:
                print(f"dealer-assist replay: --export-rounds {args.export_rounds}: "
                      f"{error.strerror or error}", file=sys.stderr)
                return 2
        # every look at a recording is logged in it; one that cannot be logged is not shown,
        # unless the recording is damaged: what can still be read is shown, saying so
        try:
            log_command(store, "replay", {
                "round": args.round, "verify": args.verify, "redetect": args.redetect,
                "rounds": len(report.rounds), "discrepancies": len(report.discrepancies),
                "export_rounds": args.export_rounds},
                claimed=args.user)
        except DamagedRecordingError as error:
            report.database.append(Discrepancy(
                "database", f"this replay could not be logged in the recording: {error}"))
    except (RecordingError, AnchorLogError) as error:
        print(f"dealer-assist replay: {error}", file=sys.stderr)
        return 2
    finally:
        store.close()
    if args.round is not None and not report.rounds:
        print(f"dealer-assist replay: no round {args.round!r} in {args.recording}", file=sys.stderr)
        return 2
    if args.json:
        out = report.to_json()
        if exported is not None:
            out["exported"] = {"written": exported.written, "unchanged": exported.unchanged,
                               "skipped": exported.skipped, "refused": exported.refused}
        print(json.dumps(out, indent=1))
    else:
        _print_text(report)
        if exported is not None:
            refused = f", {len(exported.refused)} refused" if exported.refused else ""
            print(f"exported to {args.export_rounds}: {len(exported.written)} round(s) written, "
                  f"{len(exported.unchanged)} already equal, {len(exported.skipped)} not ended "
                  f"(open or cut short: no file){refused}")
    for refusal in exported.refused if exported is not None else []:
        print(f"dealer-assist replay: --export-rounds {args.export_rounds}: {refusal}",
              file=sys.stderr)
    return 1 if report.discrepancies else 0


def _print_text(report: object) -> None:
    from dealer_assist.surveillance.replay import ReplayReport

    assert isinstance(report, ReplayReport)
    settled = sum(r.status == "settled" for r in report.rounds)
    unreadable = sum(r.status == "unreadable" for r in report.rounds)
    partial = [r for r in report.rounds if r.status not in ("settled", "unreadable")]
    for discrepancy in report.discrepancies:
        print(discrepancy.text())
    for notice in report.notices:
        print(f"note: {notice}")
    if report.unrecorded_files:
        shown = ", ".join(report.unrecorded_files[:3])
        more = len(report.unrecorded_files) - 3
        print(f"note: {len(report.unrecorded_files)} frame file(s) on disk are named by no record"
              f" (a frame written as the recorder stopped, or records deleted): {shown}"
              + (f" and {more} more" if more > 0 else ""))
    for round_replay in partial:
        print(f"note: table {round_replay.table} round {round_replay.round_id} "
              f"(#{round_replay.key}) is {round_replay.status}: not settled, nothing to compare")
    frames = sum(r.frames_checked for r in report.rounds)
    verified = (f"; chain verified over {report.records_checked} records"
                if report.chain is not None else "")
    redetected = f"; {frames} frames re-detected" if frames else ""
    verdict = "CLEAN" if not report.discrepancies else f"{len(report.discrepancies)} DISCREPANCIES"
    damaged = f", {unreadable} unreadable" if unreadable else ""
    head = (f"{report.head_seq}:{report.head_hash}" if report.head_hash is not None
            else f"{report.head_seq} (unreadable)")
    print(f"{verdict}: {settled} settled rounds re-settled, {len(partial)} partial{damaged}"
          f"{verified}{redetected}; head record {head}")
