// The surveillance page: login, search, step through a round, replay, export. No dependencies.
// Served by the floor's room (me.floor), its search and round views are the whole floor's: a
// round is named by its table box, chain and key there, by its key alone in one recording.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
let current = null;   // the round view being shown
let step = 0;         // the event index shown
let me = null;        // who is logged in, with the session's CSRF token
let opened = null;    // the round shown: its key, or {box, chain, key} on the floor

// Every call that changes something carries the session's CSRF token and a JSON content type
// (the server refuses it otherwise); the browser adds the page's own Origin.
async function api(path, options = {}) {
  const headers = { ...(options.headers || {}) };
  if ((options.method || "GET") !== "GET") {
    headers["Content-Type"] = "application/json";
    if (me) headers["X-CSRF-Token"] = me.csrf;
  }
  const response = await fetch(path, { credentials: "same-origin", ...options, headers });
  if (response.status === 401 && path !== "/api/login") { showLogin(); throw new Error("log in"); }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.detail || response.statusText);
  return body;
}

function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = text === null || text === undefined ? "" : String(text);
  if (cls) td.className = cls;
  row.appendChild(td);
  return td;
}

function showLogin() { me = null; $("login-view").hidden = false; $("app-view").hidden = true;
  $("logout").hidden = true; $("who").textContent = ""; }

function showApp(who) {
  me = who;
  document.body.classList.toggle("floor", Boolean(me.floor));
  $("mode").textContent = me.floor ? "the floor: every table's rounds the room holds" : "";
  $("login-view").hidden = true; $("app-view").hidden = false; $("logout").hidden = false;
  $("who").textContent = `${me.name} (${me.role})`;
  search();
}

$("login-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  $("login-error").textContent = "";
  try {
    const who = await api("/api/login", { method: "POST",
      body: JSON.stringify({ name: $("login-name").value, password: $("login-password").value }) });
    $("login-password").value = "";
    showApp(who);
  } catch (err) { $("login-error").textContent = err.message; }
});

$("logout").addEventListener("click", async () => {
  try { await api("/api/logout", { method: "POST" }); } catch (err) { /* a session already ended */ }
  showLogin();
});

document.querySelectorAll(".tab").forEach((button) => button.addEventListener("click", () => {
  document.querySelectorAll(".tab-body").forEach((body) => { body.hidden = body.id !== button.dataset.tab; });
  if (button.dataset.tab === "stats-tab") loadStats();
  if (button.dataset.tab === "storage-tab") loadStorage();
  if (button.dataset.tab === "access-tab") loadAccess();
}));

function isoFromLocal(value) { return value ? value + ":00Z" : ""; }  // inputs are read as UTC

async function search() {
  const form = new FormData($("search-form"));
  const params = new URLSearchParams();
  for (const [name, value] of form.entries()) {
    if (!value) continue;
    params.set(name, name === "since" || name === "until" ? isoFromLocal(value) : value);
  }
  let body;
  try { body = await api((me && me.floor ? "/api/floor/rounds?" : "/api/rounds?") + params.toString()); }
  catch (err) { $("search-count").textContent = err.message; $("search-count").className = "error"; return; }
  fillSelect($("f-table"), body.tables);
  fillSelect($("f-alarm"), body.alarm_kinds);
  $("search-count").textContent = `${body.rounds.length} round(s)` + (body.partial ? `; ${body.damaged}` : "");
  $("search-count").className = body.partial ? "error" : "";
  const tbody = $("results").tBodies[0];
  tbody.replaceChildren();
  for (const r of body.rounds) {
    const row = tbody.insertRow();
    row.dataset.key = r.key;
    row.className = "result";
    const table = r.box && r.box !== r.table ? `${r.table} (box ${r.box})` : r.table;
    [table, r.round, r.started_at, r.dealer, r.status, r.net, r.max_payout, r.frames, r.alarms]
      .forEach((v, i) => cell(row, v, i >= 5 ? "num" : ""));
    const ref = r.box ? { box: r.box, chain: r.chain, key: r.key } : r.key;
    row.addEventListener("click", () => openRound(ref));
  }
  for (const key of body.unsearchable || []) {  // damaged in the search index: opened from the records
    const row = tbody.insertRow();
    row.dataset.key = key;
    row.className = "result";
    ["", `#${key}`, "", "", "not searchable"].forEach((v) => cell(row, v));
    row.addEventListener("click", () => openRound(key));
  }
}

function fillSelect(select, values) {
  const known = new Set([...select.options].map((o) => o.value));
  for (const value of values) {
    if (known.has(value)) continue;
    const option = document.createElement("option");
    option.value = value; option.textContent = value; select.appendChild(option);
  }
}

$("search-form").addEventListener("submit", (e) => { e.preventDefault(); search(); });

// The API path of a round: one recording's key, or a floor round's box, chain and key.
function roundPath(ref) {
  if (typeof ref !== "object") return `/api/rounds/${ref}`;
  return `/api/floor/rounds/${encodeURIComponent(ref.box)}/${encodeURIComponent(ref.chain)}/${ref.key}`;
}

async function openRound(ref) {
  try { current = await api(roundPath(ref)); }
  catch (err) {  // e.g. a round with records the damaged database cannot read
    $("round-view").hidden = true;
    $("search-count").textContent = err.message;
    $("search-count").className = "error";
    return;
  }
  opened = ref;
  $("round-view").hidden = false;
  const where = current.box ? `, box ${current.box}, chain ${current.chain}` : "";
  $("round-title").textContent = `Round ${current.round} on ${current.table} (#${current.key}${where}, ${current.status})`;
  $("round-notes").textContent = current.notes.map((n) => n.reason).join("; ");
  const hold = current.hold;
  $("round-hold").textContent = hold ? `ON LEGAL HOLD since ${hold.at} (${hold.user}): ${hold.why}; ` +
    (hold.reached ? `on the table's box since ${hold.reached.at} (${hold.reached.kept.length} frames kept there, ${hold.reached.pruned.length} pruned before)`
      : "not on the table's box yet (the room sends it until the box takes it)") : "";
  // a floor round's hold is put on and lifted by an operator (each recorded in the room's chain)
  $("hold-form").hidden = typeof ref !== "object" || !(me && me.role === "operator");
  $("hold-put").hidden = Boolean(hold); $("hold-lift").hidden = !hold;
  $("replay-result").textContent = "";
  // an incident report is exported from the table's own recording (its chain head and keys)
  $("export-link").hidden = $("export-pdf-link").hidden = typeof ref === "object";
  $("export-link").href = `${roundPath(ref)}/export`;
  $("export-pdf-link").href = `${roundPath(ref)}/export.pdf`;
  fillIntegrity(current.integrity);
  const framed = new Set(current.frames.map((f) => f.event_index));
  const log = $("event-log").tBodies[0];
  log.replaceChildren();
  current.events.forEach((e) => {
    const row = log.insertRow();
    [e.index, e.happened_at || "(not recorded)", e.written_at, e.text, e.by].forEach((v) => cell(row, v));
    row.title = JSON.stringify(e.event);
    if (framed.has(e.index)) row.classList.add("has-frame");
    // A card the dealer keyed or corrected (a hand-held game): no reader stands behind it.
    const entered = e.event && (e.event.keyed === true || typeof e.event.corrected === "string");
    if (entered) row.classList.add("entered");
    row.addEventListener("click", () => show(e.index));
  });
  const frames = $("frame-list").tBodies[0];
  frames.replaceChildren();
  current.frames.forEach((f) => {
    const row = frames.insertRow();
    row.className = `frame-row ${f.file_state || ""}`;
    [f.seq, f.event_index, f.captured_at || "(not recorded)", f.written_at, fileText(f)].forEach((v) => cell(row, v));
    if (f.event_index !== null) row.addEventListener("click", () => show(f.event_index));
  });
  const alarms = $("alarm-list");
  alarms.replaceChildren();
  current.alarms.forEach((a) => { const li = document.createElement("li");
    li.textContent = `${a.happened_at || a.at} ${a.kind}: ${a.text}`; alarms.appendChild(li); });
  fillSettlement(current.settlement_lines);
  $("step-slider").max = current.events.length - 1;
  show(0);
  $("round-view").scrollIntoView();
}

function fileText(frame) {
  if (frame.pruned) return "pruned by retention";
  if (frame.in_room === false) return "kept on the table box (the room holds key frames only)";
  if (frame.file_state === "altered") return `ALTERED: SHA-256 now ${frame.sha256_now.slice(0, 16)}…, recorded ${frame.sha256.slice(0, 16)}…`;
  if (frame.file_state === "missing") return "MISSING: no prune record accounts for it";
  if (frame.file_state === "pruned") return "pruned by retention";
  return `intact, SHA-256 ${frame.sha256.slice(0, 16)}…`;
}

// The round's integrity as the server checked it while serving this view: green, or red naming each failure.
function fillIntegrity(integrity) {
  const box = $("integrity");
  box.className = integrity.intact ? "intact" : "failed";
  $("integrity-verdict").textContent = integrity.intact
    ? `INTACT: ${integrity.records_checked} records, their signatures, every frame and the settlement check out.`
    : `INTEGRITY FAILED: ${integrity.problems.length} problem(s). Do not rely on what this round shows.`;
  const list = $("integrity-problems");
  list.replaceChildren();
  integrity.problems.forEach((p) => { const li = document.createElement("li"); li.textContent = p; list.appendChild(li); });
  $("integrity-notes").textContent = integrity.notes.join(" ");
}

// Every line of the settlement (each hand, Match, insurance, Super Bonus, Envy), re-settled from
// the recorded events; a line whose recorded figure differs shows both, in red.
function fillSettlement(lines) {
  const tbody = $("settlement").tBodies[0];
  tbody.replaceChildren();
  $("settlement-note").textContent = "";
  if (!lines || !lines.seats.length) { cell(tbody.insertRow(), "no settlement recorded"); return; }
  $("settlement-note").textContent = lines.recomputed
    ? "Amounts re-settled from the recorded events by today's engine; the recorded figure beside each."
    : "Recorded amounts (the events could not be re-settled: see the integrity box).";
  for (const seat of lines.seats) {
    for (const line of seat.lines) {
      const row = tbody.insertRow();
      row.className = "line" + (line.differs ? " differs" : "");
      [seat.seat, line.hand === null || line.hand === undefined ? "" : line.hand + 1, line.kind, line.reason,
        line.amount, line.differs ? `recorded ${line.recorded ?? "nothing"}` : line.recorded]
        .forEach((v, j) => cell(row, v, j >= 4 ? "num" : ""));
    }
    const total = tbody.insertRow();
    total.className = "seat-total" + (seat.net_differs ? " differs" : "");
    [`seat ${seat.seat} net`, "", "", "", seat.net, seat.net_differs ? `recorded ${seat.recorded_net}` : seat.recorded_net]
      .forEach((v, j) => cell(total, v, j >= 4 ? "num" : ""));
  }
  const dealer = tbody.insertRow();
  const hand = lines.dealer || {};
  const differs = lines.recomputed && lines.recorded_net !== lines.net;
  dealer.className = "seat-total" + (differs ? " differs" : "");
  [ "players' net", "", "dealer", `${(hand.cards || []).join(" ")} = ${hand.total}`, lines.net,
    differs ? `recorded ${lines.recorded_net}` : lines.recorded_net].forEach((v, j) => cell(dealer, v, j >= 4 ? "num" : ""));
}

// The frame for an event: the latest at or before it, a key frame (with detections) first.
function frameAt(index) {
  let best = null;
  for (const f of current.frames) {
    if (f.event_index === null || f.event_index > index) continue;
    if (!best || f.event_index > best.event_index || (f.event_index === best.event_index && f.key && !best.key)) best = f;
  }
  return best;
}

function show(index) {
  step = Math.max(0, Math.min(index, current.events.length - 1));
  $("step-slider").value = step;
  $("step-label").textContent = `event ${step} of ${current.events.length - 1}`;
  [...$("event-log").tBodies[0].rows].forEach((row, i) => row.classList.toggle("current", i === step));
  const frame = frameAt(step);
  const box = $("frame-box");
  box.replaceChildren();
  box.classList.remove("altered");
  if (!frame) {
    const p = document.createElement("p"); p.id = "frame-empty"; p.textContent = "No frame at this event.";
    box.appendChild(p); $("frame-caption").textContent = "";
  } else if (frame.pruned) {
    const p = document.createElement("p"); p.id = "frame-empty"; p.textContent = "Frame pruned by retention.";
    box.appendChild(p);
  } else if (frame.in_room === false) {
    const p = document.createElement("p"); p.id = "frame-empty";
    p.textContent = `Frame record ${frame.seq} is kept on the table box, not in the room.`;
    box.appendChild(p); $("frame-caption").textContent = "";
  } else {
    const img = document.createElement("img");
    img.src = typeof opened === "object"
      ? `/api/floor/frames/${encodeURIComponent(opened.box)}/${encodeURIComponent(opened.chain)}/${frame.seq}`
      : `/api/frames/${frame.seq}`; img.alt = `frame ${frame.seq}`; img.className = "frame-image";
    box.appendChild(img);
    box.appendChild(overlay(frame));
    box.classList.toggle("altered", frame.file_state !== "intact");
    $("frame-caption").textContent =
      `frame record ${frame.seq} at event ${frame.event_index}, captured ${frame.captured_at || "(not recorded)"}, written ${frame.written_at}: ${fileText(frame)}`;
    $("frame-caption").className = frame.file_state === "intact" ? "" : "error";
  }
  const screens = current.screens.filter((s) => s.event_index !== undefined && s.event_index <= step);
  $("screen-box").textContent = screens.length ? "screen: " + JSON.stringify(screens[screens.length - 1].snapshot, null, 1) : "";
}

function numbers(value, count) {
  return Array.isArray(value) && value.length === count && value.every((v) => typeof v === "number") ? value : null;
}

function overlay(frame) {
  const width = frame.width || 1280, height = frame.height || 720;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("preserveAspectRatio", "none");
  let items = frame.detections, zones = [];
  if (items && !Array.isArray(items) && typeof items === "object") { zones = items.zones || []; items = items.detections || []; }
  const add = (name, attrs, text) => {
    const el = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    if (text) el.textContent = text;
    svg.appendChild(el);
  };
  for (const zone of Array.isArray(zones) ? zones : []) {
    const pts = (zone.polygon || zone.points || []).filter((p) => numbers(p, 2));
    if (pts.length < 3) continue;
    add("polygon", { points: pts.map((p) => p.join(",")).join(" "), fill: "none", stroke: "#ff0", "stroke-width": 2, class: "zone" });
    add("text", { x: pts[0][0] + 4, y: pts[0][1] + 22, fill: "#ff0", "font-size": 22 }, zone.name || "");
  }
  for (const item of Array.isArray(items) ? items : []) {
    if (!item || typeof item !== "object") continue;
    let label = String(item.card || item.label || "?");
    if (typeof item.confidence === "number") label += " " + item.confidence.toFixed(2);
    const box = numbers(item.box || item.xyxy, 4);
    const point = numbers([item.x, item.y], 2);
    if (box) add("rect", { x: box[0], y: box[1], width: box[2] - box[0], height: box[3] - box[1], fill: "none", stroke: "#0f0", "stroke-width": 3, class: "detection" });
    if (point) add("circle", { cx: point[0], cy: point[1], r: 10, fill: "none", stroke: "#0f0", "stroke-width": 3, class: "detection" });
    const anchor = box || point;
    if (anchor) add("text", { x: anchor[0], y: anchor[1] - 6, fill: "#0f0", "font-size": 22, "font-family": "monospace" }, label);
  }
  return svg;
}

async function changeHold(action) {
  const out = $("hold-result");
  try {
    await api(`${roundPath(opened)}/${action}`, { method: "POST",
      body: JSON.stringify({ why: $("hold-why").value }) });
    $("hold-why").value = ""; out.className = "ok"; out.textContent = "";
    await openRound(opened);
  } catch (err) { out.className = "error"; out.textContent = err.message; }
}
$("hold-put").addEventListener("click", () => changeHold("hold"));
$("hold-lift").addEventListener("click", () => changeHold("release"));

$("step-first").addEventListener("click", () => show(0));
$("step-prev").addEventListener("click", () => show(step - 1));
$("step-next").addEventListener("click", () => show(step + 1));
$("step-last").addEventListener("click", () => show(current.events.length - 1));
$("step-slider").addEventListener("input", (e) => show(Number(e.target.value)));

$("replay-button").addEventListener("click", async () => {
  const result = await api(`${roundPath(opened)}/replay`);
  const out = $("replay-result");
  if (result.texts.length) { out.className = "error"; out.textContent = result.texts.join("\n"); }
  else if (!current.integrity.intact) { out.className = "error"; out.textContent = "Replay matches the recorded settlement, but this round's integrity FAILED: see the red box above."; }
  else { out.className = "ok"; out.textContent = result.replayed ? "Replay matches the recorded settlement." : "Nothing to compare: the round has no settlement."; }
});

async function loadStats() {
  // in the room: the whole floor's rounds, narrowed to one table where chosen
  const floor = Boolean(me && me.floor);
  $("stats-table-label").hidden = !floor;
  const params = new URLSearchParams({ by: $("stats-by").value });
  if (floor && $("stats-table").value) params.set("table", $("stats-table").value);
  const body = await api("/api/stats?" + params.toString());
  if (floor) fillSelect($("stats-table"), body.tables);
  const tbody = $("stats").tBodies[0];
  tbody.replaceChildren();
  const by = $("stats-by").value.split(",");
  for (const g of body.groups) {
    const row = tbody.insertRow();
    cell(row, by.map((k) => g[k]).join(" / ")); cell(row, g.rounds, "num"); cell(row, g.rounds_per_hour, "num");
    cell(row, Object.entries(g.hands_per_seat).map(([k, v]) => `${k}:${v}`).join(" "));
    cell(row, Object.entries(g.payouts).map(([k, v]) => `${k} ${v}`).join(", "));
    cell(row, Object.entries(g.alarms).map(([k, v]) => `${k} ${v}`).join(", "));
    cell(row, g.paid, "num"); cell(row, g.taken, "num"); cell(row, g.house_net, "num");
  }
}
$("stats-by").addEventListener("change", loadStats);
$("stats-table").addEventListener("change", loadStats);

$("prune-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const out = $("prune-result");
  try {
    const result = await api("/api/retention/prune", { method: "POST",
      body: JSON.stringify({ older_than_hours: Number($("prune-hours").value) }) });
    out.className = "ok";
    out.textContent = `pruned ${result.pruned} frame(s), ${result.bytes} bytes, recorded before ${result.cutoff}`;
    loadStorage();
  } catch (err) { out.className = "error"; out.textContent = err.message; }
});

async function loadStorage() {
  // the room prunes its frame copies with 'dealer-assist room prune', not from this form
  $("prune-form").hidden = !(me && me.role === "operator") || Boolean(me.floor);
  const body = await api("/api/storage");
  const where = body.bytes_in_database === undefined ? ""
    : ` (the whole floor: ${body.bytes_in_database} in the database, ${body.bytes_of_frame_files} in frame files)`;
  $("storage-summary").textContent = `${body.bytes_on_disk} bytes on disk${where}; ${body.hours_of_play} hour(s) of play; ${body.bytes_per_hour_of_play} bytes per hour of play`;
  const tbody = $("storage").tBodies[0];
  tbody.replaceChildren();
  for (const h of body.hours) {
    const row = tbody.insertRow();
    [h.table, h.hour, h.rounds, h.records, h.frames, h.record_bytes + h.frame_bytes].forEach((v, i) => cell(row, v, i > 1 ? "num" : ""));
  }
}

async function loadAccess() {
  const body = await api("/api/access");
  const tbody = $("access").tBodies[0];
  tbody.replaceChildren();
  for (const e of body.entries) {
    const row = tbody.insertRow();
    [e.seq, e.at, e.user, e.action, JSON.stringify(e.target)].forEach((v) => cell(row, v));
  }
}

api("/api/me").then(showApp).catch(() => showLogin());
