"""The incident report: one self-contained HTML file (images embedded) for a disputed round."""

from __future__ import annotations

import base64
import json
from html import escape
from typing import Any

from dealer_assist.surveillance.replay import RoundReplay, entered_by_dealer
from dealer_assist.surveillance.store import RecordingError

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#111}
h1{font-size:20px}h2{font-size:16px;border-bottom:1px solid #ccc;margin-top:28px}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
.num{text-align:right;font-family:monospace}.bad{color:#b00;font-weight:bold}.ok{color:#070}
figure{display:inline-block;margin:8px;vertical-align:top}figcaption{font-size:12px}
svg{max-width:640px;height:auto;border:1px solid #999}code{font-size:12px}
"""


def incident_report_html(view: dict[str, Any], replayed: RoundReplay,
                         images: dict[int, tuple[bytes, str]], *, exported_by: str,
                         exported_at: str, chain_head: tuple[int, str]) -> str:
    """The report for a round (a :func:`~dealer_assist.surveillance.query.round_view` dict)."""
    title = f"Incident report: round {view['round']} on table {view['table']}"
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        # a self-contained file that runs nothing, wherever it is opened
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
        "img-src data:; style-src 'unsafe-inline'\">",
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        "<table>",
        _row("Recording round key", f"#{view['key']}"),
        _row("Status", view["status"]),
        _row("Started", view["started_at"]),
        _row("Exported by", exported_by),
        _row("Exported at", exported_at),
        _row("Chain head when exported", f"record {chain_head[0]}, SHA-256 {chain_head[1]}"),
        "</table>",
        _integrity_section(view["integrity"]),
        _replay_section(replayed),
        _settlement_section(view["settlement_lines"]),
        _events_section(view, images),
        _alarm_section(view),
        "</body></html>",
    ]
    return "\n".join(parts)


def _row(name: str, value: Any) -> str:
    return f"<tr><th>{escape(name)}</th><td>{escape(str(value))}</td></tr>"


def _replay_section(replayed: RoundReplay) -> str:
    if not replayed.discrepancies:
        verdict = ("<p class='ok'>Re-settled with today's engine: matches the recorded "
                   "settlement.</p>")
        if replayed.replayed is None:
            verdict = "<p>No recorded settlement to compare (round not settled).</p>"
        return "<h2>Replay</h2>" + verdict
    items = "".join(f"<li>{escape(d.text())}</li>" for d in replayed.discrepancies)
    return f"<h2>Replay</h2><p class='bad'>Discrepancies:</p><ul>{items}</ul>"


def _integrity_section(integrity: dict[str, Any]) -> str:
    """The verdict of checking the round as exported (:func:`~.round_check.check_round`)."""
    notes = "".join(f"<p>{escape(note)}</p>" for note in integrity["notes"])
    if integrity["intact"]:
        return (f"<h2>Integrity</h2><p class='ok'>INTACT: {integrity['records_checked']} records,"
                " their signatures, every frame file and the settlement check out.</p>" + notes)
    items = "".join(f"<li>{escape(problem)}</li>" for problem in integrity["problems"])
    return (f"<h2>Integrity</h2><p class='bad'>INTEGRITY FAILED: {len(integrity['problems'])}"
            f" problem(s).</p><ul class='bad'>{items}</ul>" + notes)


def _settlement_section(lines: dict[str, Any]) -> str:
    """Every line of the settlement as re-settled, with the recorded figure beside it."""
    if not lines["seats"]:
        return "<h2>Settlement</h2><p>None recorded.</p>"
    dealer = lines.get("dealer") or {}
    rows = [
        "<h2>Settlement</h2>",
        f"<p>Dealer: {escape(' '.join(dealer.get('cards') or []))} "
        f"(total {escape(str(dealer.get('total')))}). "
        + ("Amounts re-settled from the recorded events; the recorded figure beside each.</p>"
           if lines["recomputed"] else "Recorded amounts (the events could not be re-settled)."
           "</p>"),
        "<table><tr><th>Seat</th><th>Hand</th><th>Bet</th><th>Reason</th><th>Amount</th>"
        "<th>Recorded</th></tr>",
    ]
    for seat in lines["seats"]:
        for line in seat["lines"]:
            hand = "" if line["hand"] is None else str(line["hand"] + 1)
            bad = " class='bad'" if line["differs"] else ""
            rows.append(
                f"<tr{bad}><td>{escape(str(seat['seat']))}</td><td>{hand}</td>"
                f"<td>{escape(str(line['kind']))}</td><td>{escape(str(line['reason']))}</td>"
                f"<td class='num'>{escape(str(line['amount']))}</td>"
                f"<td class='num'>{escape(str(line['recorded']))}</td></tr>")
        bad = " class='bad'" if seat["net_differs"] else ""
        rows.append(f"<tr{bad}><th colspan='4'>Seat {escape(str(seat['seat']))} net</th>"
                    f"<th class='num'>{escape(str(seat['net']))}</th>"
                    f"<th class='num'>{escape(str(seat['recorded_net']))}</th></tr>")
    rows.append(f"<tr><th colspan='4'>Players' net</th>"
                f"<th class='num'>{escape(str(lines['net']))}</th>"
                f"<th class='num'>{escape(str(lines['recorded_net']))}</th></tr></table>")
    return "".join(rows)


def _events_section(view: dict[str, Any], images: dict[int, tuple[bytes, str]]) -> str:
    frames_at: dict[int, list[dict[str, Any]]] = {}
    for frame in view["frames"]:
        frames_at.setdefault(frame["event_index"], []).append(frame)
    screens_at: dict[int, list[dict[str, Any]]] = {}
    for screen in view["screens"]:
        screens_at.setdefault(screen.get("event_index"), []).append(screen)
    rows = ["<h2>Events, frames and screens</h2><table><tr><th>#</th><th>Happened (UTC)</th>"
            "<th>Written (UTC)</th><th>Event</th><th>By</th><th>Frames</th></tr>"]
    for event in view["events"]:
        index = event["index"]
        figures = "".join(_figure(frame, images) for frame in frames_at.get(index, []))
        screens = "".join(
            f"<details><summary>screen</summary><code>{escape(json.dumps(s.get('snapshot')))}"
            "</code></details>" for s in screens_at.get(index, []))
        body = event["event"]
        entered = entered_by_dealer(body) if isinstance(body, dict) else ""
        rows.append(f"<tr><td>{index}</td>"
                    f"<td>{escape(str(event['happened_at'] or '(not recorded)'))}</td>"
                    f"<td>{escape(event['written_at'])}</td><td>{escape(event['text'])}"
                    f"{f'<strong>{escape(entered)}</strong>' if entered else ''}"
                    f"<br><code>{escape(json.dumps(body))}</code>{screens}</td>"
                    f"<td>{escape(event['by'])}</td><td>{figures}</td></tr>")
    rows.append("</table>")
    loose = [f for f in view["frames"] if f["event_index"] is None]
    if loose:
        rows.append("<h3>Frames not tied to an event</h3>")
        rows.extend(_figure(frame, images) for frame in loose)
    return "".join(rows)


def _alarm_section(view: dict[str, Any]) -> str:
    alarms = view.get("alarms") or []
    notes = view.get("notes") or []
    if not alarms and not notes:
        return "<h2>Alarms</h2><p>None.</p>"
    items = [f"<li>{escape(str(a.get('at')))} {escape(str(a.get('kind')))}: "
             f"{escape(str(a.get('text')))}</li>" for a in alarms]
    items += [f"<li class='bad'>{escape(str(n.get('reason')))}</li>" for n in notes]
    return f"<h2>Alarms and notes</h2><ul>{''.join(items)}</ul>"


def _figure(frame: dict[str, Any], images: dict[int, tuple[bytes, str]]) -> str:
    caption = frame_caption(frame)
    if frame["seq"] not in images:
        why = "pruned by retention" if frame.get("pruned") else "file missing"
        return (f"<figure><p class='bad'>({why})</p>"
                f"<figcaption>{escape(caption)}</figcaption></figure>")
    data, media_type = images[frame["seq"]]
    if media_type not in ("image/jpeg", "image/png"):  # an altered record: said, not drawn
        return (f"<figure><p class='bad'>(not drawn: its record names no JPEG or PNG type)</p>"
                f"<figcaption>{escape(caption)}</figcaption></figure>")
    return (f"<figure>{annotated_svg(frame, data, media_type)}"
            f"<figcaption>{escape(caption)}</figcaption></figure>")


def frame_caption(frame: dict[str, Any]) -> str:
    """A frame's record, times, SHA-256 and the state of its file, in one line."""
    state = {"altered": "ALTERED: its SHA-256 is now " + str(frame.get("sha256_now")),
             "missing": "MISSING", "pruned": "pruned by retention"}.get(
        str(frame.get("file_state")), "intact")
    return (f"frame record {frame['seq']}, captured {frame.get('captured_at') or '(not recorded)'}"
            f", written {frame['written_at']}, SHA-256 {frame['sha256']}: {state}")


def annotated_svg(frame: dict[str, Any], data: bytes, media_type: str) -> str:
    """An inline SVG: the image (base64) with its zones and detections drawn on top. Its size
    is the record's only where that is a number (a record's text never becomes markup)."""
    if media_type not in ("image/jpeg", "image/png"):
        raise RecordingError(f"frame {frame['seq']} has unexpected media type {media_type!r}")
    size = _numbers([frame.get("width"), frame.get("height")], 2)
    width, height = (size[0], size[1]) if size and min(size) > 0 else (1280.0, 720.0)
    encoded = base64.b64encode(data).decode("ascii")
    shapes = [f"<image href='data:{media_type};base64,{encoded}' width='{width:g}' "
              f"height='{height:g}'/>"]
    zones, detections = split_detections(frame.get("detections"))
    for zone in zones:
        points = " ".join(f"{float(x):.1f},{float(y):.1f}" for x, y in zone["points"])
        shapes.append(f"<polygon points='{points}' fill='none' stroke='#ff0' stroke-width='2'/>")
        x, y = zone["points"][0]
        shapes.append(_label(x + 4, y + 22, zone["name"], "#ff0"))
    for item in detections:
        if item.get("box"):
            x1, y1, x2, y2 = item["box"]
            shapes.append(f"<rect x='{x1:.1f}' y='{y1:.1f}' width='{x2 - x1:.1f}' "
                          f"height='{y2 - y1:.1f}' fill='none' stroke='#0f0' stroke-width='3'/>")
        if item.get("point"):
            x, y = item["point"]
            shapes.append(f"<circle cx='{x:.1f}' cy='{y:.1f}' r='10' fill='none' "
                          "stroke='#0f0' stroke-width='3'/>")
        anchor = item.get("box") or item.get("point")
        if anchor:
            shapes.append(_label(anchor[0], anchor[1] - 6, item["label"], "#0f0"))
    return (f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width:g} {height:g}' "
            f"width='{width:g}' height='{height:g}'>{''.join(shapes)}</svg>")


def _label(x: float, y: float, text: str, colour: str) -> str:
    return (f"<text x='{float(x):.1f}' y='{float(y):.1f}' fill='{colour}' font-size='22' "
            f"font-family='monospace' stroke='#000' stroke-width='0.6'>{escape(text)}</text>")


def split_detections(raw: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Zones and detections from a frame's recorded detections, in any of the accepted forms.

    Accepted: a list of detections, or ``{"detections": [...], "zones": [...]}``. A detection
    has a label (``card``/``label``) and a ``box`` ``[x1, y1, x2, y2]`` and/or a point
    (``x``, ``y``, as the vision module's card observations have). A zone has a ``name`` and a
    ``polygon`` (or ``points``) of ``[x, y]`` pairs. Anything else is ignored for drawing.
    """
    items: Any = raw
    zones_raw: Any = []
    if isinstance(raw, dict):
        items, zones_raw = raw.get("detections") or [], raw.get("zones") or []
    detections: list[dict[str, Any]] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        label = str(item.get("card") or item.get("label") or "?")
        confidence = item.get("confidence")
        if isinstance(confidence, int | float):
            label += f" {confidence:.2f}"
        box = _numbers(item.get("box") or item.get("xyxy"), 4)
        point = _numbers([item.get("x"), item.get("y")], 2)
        if box or point:
            detections.append({"label": label, "box": box, "point": point})
    zones: list[dict[str, Any]] = []
    for zone in zones_raw if isinstance(zones_raw, list) else []:
        if not isinstance(zone, dict):
            continue
        points = zone.get("polygon") or zone.get("points")
        pairs = [_numbers(p, 2) for p in points] if isinstance(points, list) else []
        if len(pairs) >= 3 and all(pairs):
            zones.append({"name": str(zone.get("name", "")), "points": pairs})
    return zones, detections


def _numbers(value: Any, count: int) -> list[float] | None:
    if (isinstance(value, list) and len(value) == count
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)):
        return [float(v) for v in value]
    return None
