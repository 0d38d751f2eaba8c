"""The incident report as a PDF (ReportLab): the same round, checked as exported, for a file
that opens anywhere and prints as it shows.

It holds the round's identity, the chain head when exported, the integrity verdict with every
problem, every settlement line (re-settled, and as recorded), the events in words with their
times, the alarms, and each frame with its record, times and SHA-256. ReportLab is imported only
here, so the page starts without it and says what to install when a PDF is asked for.
"""

from __future__ import annotations

import io
from typing import Any

from dealer_assist.surveillance.report import frame_caption

#: What to install when ReportLab is missing (the ``table`` extra carries it)
MISSING = "the PDF report needs ReportLab: pip install 'dealer-assist[table]' (or reportlab)"


class PdfUnavailable(RuntimeError):
    """ReportLab is not installed."""


def _picture_size(reader: Any) -> tuple[int, int] | None:
    """The size of a picture ReportLab has decoded whole (None: no area); raises what the
    decoder raises for bytes that are not one."""
    reader.getRGBData()
    w, h = reader.getSize()
    return (w, h) if w > 0 and h > 0 else None


def incident_report_pdf(view: dict[str, Any], images: dict[int, tuple[bytes, str]], *,
                        exported_by: str, exported_at: str,
                        chain_head: tuple[int, str]) -> bytes:
    """The report for a round (a :func:`~dealer_assist.surveillance.query.round_view` dict)
    as PDF bytes; ``images``: each frame's bytes and media type by record number (a frame not
    there is listed as pruned or missing)."""
    try:
        from reportlab.lib import colors
        from reportlab.lib.pagesizes import A4
        from reportlab.lib.styles import getSampleStyleSheet
        from reportlab.lib.units import mm
        from reportlab.lib.utils import ImageReader
        from reportlab.platypus import (
            Image,
            KeepTogether,
            Paragraph,
            SimpleDocTemplate,
            Spacer,
            Table,
            TableStyle,
        )
    except ImportError:
        raise PdfUnavailable(MISSING) from None
    from xml.sax.saxutils import escape

    styles = getSampleStyleSheet()
    small = styles["BodyText"].clone("small", fontSize=8, leading=10)
    red = styles["BodyText"].clone("red", textColor=colors.white, backColor=colors.red,
                                   fontSize=14, leading=18, borderPadding=4)
    green = styles["BodyText"].clone("green", textColor=colors.darkgreen, fontSize=12,
                                     leading=16)
    width = A4[0] - 30 * mm

    def text(value: Any, style: Any = small) -> Any:
        return Paragraph(escape("" if value is None else str(value)), style)

    def table(rows: list[list[Any]], widths: list[float], bad: list[int] | None = None) -> Any:
        grid = Table(rows, colWidths=[w * width for w in widths], repeatRows=1)
        style = [("GRID", (0, 0), (-1, -1), 0.4, colors.grey),
                 ("BACKGROUND", (0, 0), (-1, 0), colors.lightgrey),
                 ("VALIGN", (0, 0), (-1, -1), "TOP")]
        style += [("BACKGROUND", (0, row), (-1, row), colors.pink) for row in bad or []]
        grid.setStyle(TableStyle(style))
        return grid

    title = f"Incident report: round {view['round']} on table {view['table']}"
    story: list[Any] = [Paragraph(escape(title), styles["Title"])]
    story.append(table([[text("Round"), text(view["round"])],
                        [text("Table"), text(view["table"])],
                        [text("Recording round key"), text(f"#{view['key']}")],
                        [text("Status"), text(view["status"])],
                        [text("Started (UTC)"), text(view["started_at"])],
                        [text("Exported by"), text(exported_by)],
                        [text("Exported at (UTC)"), text(exported_at)],
                        [text("Chain head when exported"),
                         text(f"record {chain_head[0]}, SHA-256 {chain_head[1]}")]],
                       [0.3, 0.7]))
    integrity = view["integrity"]
    story.append(Spacer(1, 4 * mm))
    story.append(Paragraph("Verdict", styles["Heading2"]))
    if integrity["intact"]:
        story.append(text(f"INTACT: {integrity['records_checked']} records, their signatures,"
                          " every frame file and the settlement check out.", green))
    else:
        story.append(text(f"INTEGRITY FAILED: {len(integrity['problems'])} problem(s)", red))
        story.append(Spacer(1, 2 * mm))
        story.extend(text(f"- {problem}") for problem in integrity["problems"])
    story.extend(text(note) for note in integrity["notes"])

    lines = view["settlement_lines"]
    story.append(Paragraph("Payouts", styles["Heading2"]))
    if not lines["seats"]:
        story.append(text("No settlement recorded."))
    else:
        dealer = lines.get("dealer") or {}
        how = ("Amounts re-settled from the recorded events; the recorded figure beside each."
               if lines["recomputed"] else "Recorded amounts (the events could not be re-settled).")
        story.append(text(f"Dealer: {' '.join(dealer.get('cards') or [])} (total"
                          f" {dealer.get('total')}). {how}"))
        rows = [[text(h) for h in ("Seat", "Hand", "Bet", "Reason", "Amount", "Recorded")]]
        bad = []
        for seat in lines["seats"]:
            for line in seat["lines"]:
                hand = "" if line["hand"] is None else line["hand"] + 1
                if line["differs"]:
                    bad.append(len(rows))
                rows.append([text(seat["seat"]), text(hand), text(line["kind"]),
                             text(line["reason"]), text(line["amount"]), text(line["recorded"])])
            if seat["net_differs"]:
                bad.append(len(rows))
            rows.append([text(f"seat {seat['seat']} net"), "", "", "", text(seat["net"]),
                         text(seat["recorded_net"])])
        rows.append([text("players' net"), "", "", "", text(lines["net"]),
                     text(lines["recorded_net"])])
        story.append(table(rows, [0.12, 0.07, 0.13, 0.38, 0.15, 0.15], bad))

    story.append(Paragraph("Events", styles["Heading2"]))
    rows = [[text(h) for h in ("#", "Happened (UTC)", "Written (UTC)", "What", "By")]]
    for event in view["events"]:
        rows.append([text(event["index"]), text(event["happened_at"] or "(not recorded)"),
                     text(event["written_at"]), text(event["text"]), text(event["by"])])
    story.append(table(rows, [0.06, 0.2, 0.2, 0.44, 0.1]))

    story.append(Paragraph("Alarms", styles["Heading2"]))
    if not view["alarms"]:
        story.append(text("None."))
    for alarm in view["alarms"]:
        story.append(text(f"{alarm.get('happened_at') or alarm.get('at')} {alarm.get('kind')}:"
                          f" {alarm.get('text')}"))

    story.append(Paragraph("Frames", styles["Heading2"]))
    if not view["frames"]:
        story.append(text("No frame recorded."))
    for frame in view["frames"]:
        caption = text(f"event {frame['event_index']}: {frame_caption(frame)}")
        data = images[frame["seq"]][0] if frame["seq"] in images else None
        try:  # decoded whole here: a file that is not a whole picture is named, not drawn
            size = None if data is None else _picture_size(ImageReader(io.BytesIO(data)))
        except Exception:  # noqa: BLE001  the file is evidence whatever it holds
            size = None
            story.append(text(f"event {frame['event_index']}: frame record {frame['seq']}: its "
                              f"file ({len(data or b'')} bytes) does not decode as a whole "
                              "picture (cut short or not an image), so it is not drawn"))
        if data is not None and size is not None:
            w, h = size
            shown = min(width, 160 * mm)
            story.append(KeepTogether([Image(io.BytesIO(data), width=shown,
                                             height=shown * h / w), caption,
                                       Spacer(1, 3 * mm)]))
        else:
            story.append(caption)
    out = io.BytesIO()
    document = SimpleDocTemplate(out, pagesize=A4, title=title, author=exported_by,
                                 leftMargin=15 * mm, rightMargin=15 * mm)
    document.build(story)
    return out.getvalue()
