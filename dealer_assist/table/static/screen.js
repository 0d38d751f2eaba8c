// The dealer's screen: renders the table's view pushed over /ws and posts touches to /api/input.
// Both need the browser paired with the table (its cookie); unpaired, the page says so and shows
// nothing of the table.
"use strict";

const SEATS = 7;
// The bet being built, in whole cents (never a float of dollars: $0.10 + $0.20 is exact).
const state = { view: null, seat: null, cents: 0, socket: null, approving: null,
  payRound: null, payPage: 0, pages: [], alarmsFolded: false, alarmsOpen: false,
  key: { rank: "", suit: "", to: "next", which: "last" } };
// Ranks and suits a dealer can key (a Spanish deck has no tens).
const KEY_RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "J", "Q", "K"];
const KEY_SUITS = [["S", "\u2660"], ["H", "\u2665"], ["D", "\u2666"], ["C", "\u2663"]];
// Where a keyed card lies: the next card due (a hit for the hand in play), the dealer, a seat
// (the hands before it stood, as when the camera sees a card land there), or each hand of a
// split seat ("2h1": seat 2's second hand).
function keyTargets(view) {
  const targets = [["next", "next due"], ["dealer", "dealer"]];
  for (let number = 1; number <= SEATS; number++) {
    const seat = view && view.round ? view.round.seats.find((s) => s.seat === number) : null;
    if (seat && seat.hands.length > 1) {
      seat.hands.forEach((_, h) => targets.push([number + "h" + h, "seat " + number + " hand " + (h + 1)]));
    } else {
      targets.push([String(number), "seat " + number]);
    }
  }
  return targets;
}

function $(id) { return document.getElementById(id); }

// "2.50" (the view's money) -> 250 cents, exactly.
function centsOf(money) {
  const [whole, fraction = ""] = money.split(".");
  return Number(whole) * 100 + Number((fraction + "00").slice(0, 2));
}

// 250 -> "2.50", as the table takes an amount.
function moneyOf(cents) {
  return Math.floor(cents / 100) + "." + String(cents % 100).padStart(2, "0");
}

// 250 -> "$2.50", 2500 -> "$25", 125000 -> "$1,250": as a bet is named at the table (a chip's
// label, as narrow as it can be, leaves out the thousands' commas: "$1000").
function moneyText(cents, commas = true) {
  const whole = Math.floor(cents / 100);
  const dollars = commas ? whole.toLocaleString("en-US") : String(whole);
  return "$" + dollars + (cents % 100 ? "." + String(cents % 100).padStart(2, "0") : "");
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function cardNode(code, sideways) {
  if (code === null) return el("span", "card down", "??");
  const suit = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" }[code[1]];
  const rank = code[0] === "T" ? "10" : code[0];
  const node = el("span", "card" + ("HD".includes(code[1]) ? " red" : "") +
    (sideways ? " sideways" : ""), rank + suit);
  node.dataset.code = code;
  return node;
}

async function send(message) {
  const response = await fetch("/api/input", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(message),
  });
  const box = $("touch-error");
  if (response.status === 401) {
    showUnpaired();
  } else if (!response.ok) {
    const body = await response.json().catch(() => ({ detail: response.statusText }));
    box.textContent = body.detail;
    box.hidden = false;
  } else {
    box.hidden = true;
  }
}

function renderStatus(view) {
  $("table").textContent = "Table " + view.table + " \u00b7 " + view.rules;
  const mode = $("mode");
  mode.textContent = view.mode.toUpperCase();
  mode.className = "mode" + (view.mode === "shoe + camera" ? "" :
    view.mode === "no card reader" ? " none" : " degraded");
  const devices = Object.entries(view.devices).map(([name, status]) =>
    name + ": " + (view.notes[name] || status));
  $("devices").textContent = devices.join(" \u00b7 ");
  $("round-id").textContent = view.round ? "round " + view.round.round + " \u00b7 " + view.phase : "";
  $("pace").textContent = "pace " + (view.pace_per_hour === null || view.pace_per_hour === undefined
    ? "\u2014" : view.pace_per_hour) + " rounds/h";
  $("camera-lag").textContent = view.camera_lag_ms === null || view.camera_lag_ms === undefined
    ? "" : "camera lag " + view.camera_lag_ms + " ms";
  const floor = view.floor;
  $("floor-lag").textContent = !floor ? "" : (floor.connected ? "" : "floor offline \u00b7 ") +
    (floor.records ? "floor " + floor.records + " records, " + floor.seconds + " s behind"
      : "floor up to date");
  $("floor-lag").className = floor && floor.behind ? "behind" : "";
}

// Active alarms, newest first; the same alarm raised again and again is one row with its
// count, and its OK acknowledges them all. Each row is shown whole; the band holds as many rows
// as fit in a quarter of the screen (always the newest), the rest counted, so it never hides
// what to pay. Acknowledging a row brings up the next.
function renderAlarms(view) {
  const band = $("alarms");
  band.replaceChildren();
  const rows = new Map();
  for (const alarm of [...view.alarms].reverse()) {
    const key = alarm.kind + "\n" + alarm.text;
    if (rows.has(key)) {
      rows.get(key).ids.push(alarm.id);
      continue;
    }
    rows.set(key, { alarm, ids: [alarm.id] });
  }
  band.hidden = rows.size === 0;
  if (state.alarmsFolded && rows.size) {
    // Folded while the settlement needs the room: one whole line, the rows a touch away.
    const newest = rows.values().next().value.alarm;
    const row = el("div", "alarm folded");
    row.append(el("span", "title", rows.size + (rows.size === 1 ? " alarm" : " alarms")),
      el("span", "text", "newest: " + newest.title));
    const show = el("button", "", "Show");
    show.id = "alarms-show";
    show.addEventListener("click", () => { state.alarmsOpen = true; render(state.view); });
    row.append(show);
    band.append(row);
    return;
  }
  const nodes = [];
  for (const { alarm, ids } of rows.values()) {
    const row = el("div", "alarm");
    row.dataset.kind = alarm.kind;
    row.append(el("span", "title", alarm.title), el("span", "text", alarm.text));
    if (ids.length > 1) row.append(el("span", "count", "\u00d7" + ids.length));
    const ack = el("button", "", "OK");
    ack.addEventListener("click", () => ids.forEach((id) => send({ type: "ack", id })));
    row.append(ack);
    nodes.push(row);
  }
  const more = el("div", "alarm-more");
  band.append(...nodes, more);
  let shown = nodes.length;
  const limit = window.innerHeight / 4;
  while (shown > 1 && band.getBoundingClientRect().height > limit) {
    shown--;
    nodes[shown].remove();
    more.textContent = "+" + (nodes.length - shown) + " more alarm" +
      (nodes.length - shown === 1 ? "" : "s") + ": OK the ones above to see " +
      (nodes.length - shown === 1 ? "it" : "them");
  }
  if (shown === nodes.length) more.remove();
  if (state.alarmsOpen && state.view && state.view.settlement) {
    const hide = el("button", "", "Hide");
    hide.id = "alarms-hide";
    hide.addEventListener("click", () => { state.alarmsOpen = false; render(state.view); });
    (shown === nodes.length ? nodes[0] : more).append(hide);
  }
}

function renderDealer(view) {
  const box = $("dealer");
  box.replaceChildren(el("strong", "", "Dealer"));
  if (!view.round) return;
  const cards = el("span", "cards");
  for (const code of view.round.dealer.cards) cards.append(cardNode(code, false));
  box.append(cards);
  if (view.round.dealer.total !== null) box.append(el("span", "total", "= " + view.round.dealer.total));
  box.append(el("span", "status", view.round.state));
}

// One bet's PAY or TAKE: the amount large, the whole reason under it, and for a payout the
// chips to pay it with (what the table's chips cannot make, in cash).
function payoutNode(line, cls) {
  const node = el("div", cls + " " + line.verb.toLowerCase());
  const amount = el("span", "amount", line.verb + " ");
  amount.append(el("span", "money", line.shown));
  node.append(amount);
  if (line.text !== undefined) node.append(el("span", "reason", line.text));
  else if (line.reason !== undefined) node.append(el("span", "reason", line.reason));
  if (line.chips) node.append(el("span", "chips", "chips: " + line.chips.text));
  return node;
}

// A bet's line; under its hand's cards, a hand's line gives the engine's reason alone (the
// hand and its stake head the group).
function betLine(number, line, underHand) {
  const node = payoutNode(underHand ? { ...line, text: undefined } : line, "payout bet-line");
  node.dataset.seat = String(number);
  node.dataset.kind = line.kind;
  node.dataset.amount = line.amount;
  if (line.hand !== null) node.dataset.hand = String(line.hand + 1);
  return node;
}

function handCards(hand) {
  const cards = el("div", "cards");
  hand.cards.forEach((code, i) => cards.append(cardNode(code, i >= hand.cards.length - hand.doublings.length)));
  return cards;
}

// A seat in play: its wagers and hands (numbered from 1 once split), the hand to act lit.
function playingSeat(node, number, seat, acting) {
  let wager = "$" + seat.wager;
  if (seat.match) wager += " \u00b7 match $" + seat.match;
  if (seat.insurance) wager += " \u00b7 ins $" + seat.insurance;
  node.append(el("div", "wager", wager));
  seat.hands.forEach((hand, index) => {
    const handNode = el("div", "hand" + (acting && acting[0] === number && acting[1] === index ? " acting" : ""));
    if (seat.hands.length > 1) handNode.append(el("span", "hand-number", "Hand " + (index + 1)));
    handNode.append(handCards(hand));
    handNode.append(el("span", "total", hand.cards.length ? (hand.soft ? "soft " : "") + hand.total : ""));
    handNode.append(el("span", "status", " " + hand.status + (hand.doublings.length ? " \u00b7 doubled $" + hand.wagered : "")));
    node.append(handNode);
  });
}

// A settled seat: each hand's cards with its line, then Match, insurance, Super Bonus and Envy,
// each its own PAY or TAKE, then the seat's total. Lines flow into columns as wide as the seat
// allows; layoutSettlement() shows only as many seats at once as fit whole.
function settledSeat(node, number, seat, paid) {
  node.classList.add("settled");
  const lines = el("div", "pay-lines");
  seat.hands.forEach((hand, index) => {
    const group = el("div", "pay-hand");
    const head = el("div", "hand-head");
    const own = paid.lines.filter((l) => !l.side && l.hand === index);
    const stake = own.length && own[0].stake !== null ? " $" + own[0].stake : "";
    head.append(el("span", "hand-number", "Hand " + (index + 1) + stake), handCards(hand),
      el("span", "total", "= " + hand.total));
    group.append(head);
    for (const line of own) group.append(betLine(number, line, true));
    lines.append(group);
  });
  for (const line of paid.lines.filter((l) => l.side)) lines.append(betLine(number, line, false));
  node.append(lines);
  const total = el("div", "seat-total " + paid.verb.toLowerCase());
  total.append(el("span", "reason", "Seat " + number + " total"));
  const amount = el("span", "amount", paid.verb + " ");
  amount.append(el("span", "money", paid.shown));
  total.append(amount);
  total.dataset.net = paid.net;
  node.append(total);
}

function renderSeats(view) {
  const box = $("seats");
  box.replaceChildren();
  const round = view.round;
  const settlement = view.settlement;
  const acting = round && round.acting;
  document.body.classList.toggle("settling", Boolean(settlement));
  for (let number = 1; number <= SEATS; number++) {
    const seat = round ? round.seats.find((s) => s.seat === number) : null;
    const node = el("section", "seat" + (seat ? "" : " empty") +
      (acting && acting[0] === number ? " acting" : "") + (state.seat === number ? " chosen" : ""));
    node.id = "seat-" + number;
    const title = el("h2");
    title.append(el("span", "", "Seat " + number));
    if (seat && seat.player) title.append(el("span", "player", seat.player));
    node.append(title);
    const paid = seat && settlement ? settlement.seats.find((s) => s.seat === number) : null;
    if (paid) settledSeat(node, number, seat, paid);
    else if (seat) playingSeat(node, number, seat, acting);
    node.addEventListener("click", () => { state.seat = number; renderTouch(); });
    box.append(node);
  }
  const total = $("settlement-total");
  total.hidden = !settlement;
  // In a hand-held game (no shoe fitted) nothing has questioned the camera: the dealer checks
  // the cards on the felt against the screen (correcting a misread) before the round settles.
  const check = view.phase === "check";
  total.classList.toggle("check", check);
  if (settlement) $("settlement-text").textContent = (check
    ? "Check every card on the felt against the screen, then Finish round \u00b7 dealer "
    : (view.phase === "settled" ? "Settled" : "Payouts final") + " \u00b7 dealer ") +
    settlement.dealer.cards.join(" ") + " = " + settlement.dealer.total +
    (settlement.dealer.bust ? " BUST" : "") + " \u00b7 players' net " + settlement.net_shown +
    (check ? "" : " \u00b7 round " + settlement.round);
  return layoutSettlement(settlement);
}

// The settled seats a page shows: as many (at most one per 195 px of width) as fit whole, every
// line inside the screen; with more, one touch on the step button shows the next seats. Whether
// every seat fits whole; a seat that does not fit even alone scrolls, marked so (never a line
// silently out of sight).
function layoutSettlement(settlement) {
  const box = $("seats");
  const step = $("pay-step");
  const seats = [...box.querySelectorAll(".seat.settled")];
  box.style.removeProperty("--per-page");
  if (!settlement || seats.length === 0) {
    state.pages = [];
    step.hidden = true;
    return true;
  }
  if (state.payRound !== settlement.round) {
    state.payRound = settlement.round;
    state.payPage = 0;
  }
  const most = Math.max(1, Math.min(SEATS, Math.floor(window.innerWidth / 195)));
  step.hidden = seats.length < 2;  // measured with the step button in place when it may show
  if (!step.textContent) step.textContent = "0/0 \u00b7 next: seats 0\u20130 \u25b6";
  const pages = [];
  let fits = true;
  for (let first = 0; first < seats.length;) {
    let count = Math.min(most, seats.length - first);
    while (count > 1 && !showSeats(seats, first, count)) count--;
    if (count === 1 && !showSeats(seats, first, 1)) {
      fits = false;
      seats[first].classList.add("overflowing");
      const title = seats[first].querySelector("h2");
      if (!title.querySelector(".scroll-note")) title.append(el("span", "scroll-note", "more \u25b6 scroll"));
    }
    pages.push([first, count]);
    first += count;
  }
  state.pages = pages;
  if (state.payPage >= pages.length) state.payPage = 0;
  const [first, count] = pages[state.payPage];
  showSeats(seats, first, count);
  step.hidden = pages.length < 2;
  if (!step.hidden) {
    const [nextFirst, nextCount] = pages[(state.payPage + 1) % pages.length];
    step.textContent = (state.payPage + 1) + "/" + pages.length + " \u00b7 next: seat" +
      (nextCount > 1 ? "s " : " ") + seatRange(seats, nextFirst, nextCount) + " \u25b6";
  }
  document.body.dataset.payPage = String(state.payPage + 1) + "/" + pages.length;
  return fits;
}

function seatRange(seats, first, count) {
  const numbers = seats.slice(first, first + count).map((s) => s.id.slice(5));
  return numbers.length === 1 ? numbers[0] : numbers[0] + "\u2013" + numbers[numbers.length - 1];
}

// Show seats[first .. first+count) alone; whether each fits whole inside the seats' area.
function showSeats(seats, first, count) {
  const box = $("seats");
  box.style.setProperty("--per-page", String(count));
  seats.forEach((seat, i) => {
    seat.hidden = i < first || i >= first + count;
    seat.classList.toggle("alone", count === 1);  // its total beside its name: more room
  });
  const area = box.getBoundingClientRect();
  const bottom = Math.min(area.bottom, window.innerHeight);
  for (const seat of seats.slice(first, first + count)) {
    const lines = seat.querySelector(".pay-lines");
    if (lines.scrollWidth > lines.clientWidth + 1 || lines.scrollHeight > lines.clientHeight + 1) return false;
    for (const item of seat.querySelectorAll(".bet-line, .seat-total, .pay-hand")) {
      const r = item.getBoundingClientRect();
      if (r.bottom > bottom + 0.5 || r.right > area.right + 0.5) return false;
    }
  }
  return true;
}

function renderTouch() {
  const view = state.view;
  const seats = $("seat-buttons");
  seats.replaceChildren();
  for (let number = 1; number <= SEATS; number++) {
    const button = el("button", state.seat === number ? "selected" : "", String(number));
    button.id = "seat-button-" + number;
    button.addEventListener("click", () => { state.seat = number; renderTouch(); });
    seats.append(button);
  }
  // The table's own chips (table.toml [screen] bet_chips), as the view names them.
  const chips = $("chip-buttons");
  const offered = view && view.bet_chips ? view.bet_chips.join(" ") : "";
  if (chips.dataset.offered !== offered) {
    chips.dataset.offered = offered;
    chips.replaceChildren(...(view && view.bet_chips ? view.bet_chips : []).map((money) => {
      const cents = centsOf(money);
      const label = moneyText(cents, false);
      const button = el("button", "chip", label);
      button.id = "chip-" + label.slice(1).replace(".", "_");  // chip-5, chip-2_50, chip-1000
      button.dataset.cents = String(cents);
      button.addEventListener("click", () => { state.cents += cents; renderTouch(); });
      return button;
    }));
  }
  // Only the touches that make sense now are live: bets between rounds and while betting,
  // chips also for a double-for-less, seats also to insure, Finish round once the payouts are
  // final, Void while a round is open, New shoe between rounds.
  const phase = view ? view.phase : "idle";
  const between = !view || !view.round || phase === "settled";
  const betting = between || phase === "betting";
  const deciding = Boolean(view && view.round && view.round.acting);
  for (const button of seats.children) button.disabled = !(betting || phase === "insurance");
  for (const button of chips.children) button.disabled = !(betting || deciding);
  $("clear-bet").disabled = state.cents === 0;
  $("wager-kind").disabled = !betting;
  $("wager-kind").hidden = Boolean(view) && view.match_offered === false;
  $("bet-amount").textContent = moneyText(state.cents);
  $("place-bet").disabled = !betting || state.seat === null || state.cents === 0;
  const decisions = $("decision-buttons");
  decisions.replaceChildren();
  const round = view && view.round;
  const acting = round && round.acting;
  $("acting-label").textContent = acting ? "Seat " + acting[0] + " hand " + (acting[1] + 1) + ":" : "No hand to act";
  if (acting) {
    for (const action of round.legal_actions) {
      const button = el("button", "decision", action.toUpperCase());
      button.id = "decide-" + action;
      button.addEventListener("click", () => {
        const message = { type: "decide", seat: acting[0], hand: acting[1], action };
        // On double-for-less tables the chips entered are the double's amount.
        if (action === "double" && state.cents > 0) message.amount = moneyOf(state.cents);
        state.cents = 0;
        send(message);
      });
      decisions.append(button);
    }
  }
  if (round && round.insurance_open && state.seat !== null) {
    const seat = round.seats.find((s) => s.seat === state.seat);
    if (seat && !seat.insurance) {
      const half = (Number(seat.wager) / 2).toFixed(2);
      const button = el("button", "decision", "INSURE $" + half);
      button.addEventListener("click", () => send({ type: "insure", seat: state.seat, amount: half }));
      decisions.append(button);
    }
  }
  // An ace up at a table whose shoe has read the hole card: the dealer takes every insurance
  // bet, then closes insurance, and only then does the screen show what the peek finds.
  $("close-insurance").hidden = !view || view.phase !== "insurance";
  // A round rebuilt after a restart: nothing is paid until the dealer checks the felt.
  $("confirm-felt").hidden = !view || !view.resumed;
  $("finish").disabled = !view || !view.settlement || phase === "settled";
  $("void").disabled = between;
  $("shuffle").disabled = !between;
  renderKeying(view);
}

// With no shoe reading (a hand-held game, or the shoe's link down) the dealer keys a card the
// camera cannot read; in a hand-held game (no shoe fitted) the dealer also corrects a card at a
// place that the camera misread: the latest there, or the one picked among its face-up cards.
// A card the shoe dealt but could not read is keyed too: its question asks for it ("key").
// The table records the card as keyed or corrected and raises an alarm for surveillance.
function renderKeying(view) {
  const open = Boolean(view && view.round && view.phase !== "settled" && view.phase !== "idle" &&
    (view.mode === "camera only" || view.mode === "no card reader" ||
     (view.question && view.question.key)));
  const handHeld = Boolean(view && view.devices.shoe === "not fitted");
  $("key-card").hidden = !open;
  $("key-card").textContent = handHeld ? "Key or correct a card" : "Key a card";
  $("correct-go").hidden = !handHeld;
  if (!open) {
    $("key-row").hidden = true;
    state.key = { rank: "", suit: "", to: "next", which: "last" };
  }
  const pick = (box, values, field) => {
    box.replaceChildren();
    for (const [value, label] of values) {
      const button = el("button", state.key[field] === value ? "selected" : "", label);
      button.id = "key-" + field + "-" + value;
      button.addEventListener("click", () => {
        if (field === "to") state.key.which = "last";
        state.key[field] = value;
        renderKeying(state.view);
      });
      box.append(button);
    }
  };
  pick($("key-ranks"), KEY_RANKS.map((r) => [r, r]), "rank");
  pick($("key-suits"), KEY_SUITS, "suit");
  const targets = keyTargets(view);
  if (!targets.some(([value]) => value === state.key.to)) state.key.to = "next";
  pick($("key-targets"), targets, "to");
  const code = state.key.rank && state.key.suit ? state.key.rank + state.key.suit : "";
  $("key-go").textContent = code ? "Key " + code : "Key";
  $("key-go").disabled = !code;
  const label = (targets.find(([value]) => value === state.key.to) || [])[1];
  const place = state.key.to === "next" ? "" : (state.key.to === "dealer" ? "the dealer's" : label + "'s");
  const lying = handHeld ? faceUpCards(view, state.key.to) : [];
  if (state.key.which !== "last" && !(Number(state.key.which) < lying.length)) state.key.which = "last";
  $("key-which").hidden = lying.length < 2;
  pick($("key-which"), [["last", "last card"], ...lying.map((c, i) => [String(i), c])], "which");
  const which = state.key.which === "last" ? "last card" : lying[Number(state.key.which)];
  $("correct-go").textContent = code && place ? "Correct " + place + " " + which + " to " + code : "Correct";
  $("correct-go").disabled = !code || !place;
}

// The codes of the cards face up at a place ("dealer", "2" a seat, "2h1" a split seat's hand),
// in the order the screen shows them: the "index" a correction names.
function faceUpCards(view, to) {
  if (!view || !view.round || to === "next") return [];
  if (to === "dealer") return view.round.dealer.cards.filter((c) => c !== null);
  const [number, hand] = to.split("h").map(Number);
  const seat = view.round.seats.find((s) => s.seat === number);
  const cards = seat && seat.hands[hand || 0] ? seat.hands[hand || 0].cards : [];
  return cards.filter((c) => c !== null);
}

function closeKeying() {
  state.key = { rank: "", suit: "", to: "next", which: "last" };
  $("key-row").hidden = true;
  renderKeying(state.view);
}

// The touch's "to": the dealer, or a seat's hand (the one chosen at a split seat, else the one
// in play there, else its first); for a correction a seat alone means any of its hands.
function keyTarget(correcting) {
  const to = state.key.to;
  if (to === "next") return undefined;
  if (to === "dealer") return "dealer";
  const [seat, hand] = to.split("h").map(Number);
  if (hand !== undefined) return { seat, hand };
  if (correcting) return { seat };
  const acting = state.view && state.view.round && state.view.round.acting;
  return { seat, hand: acting && acting[0] === seat ? acting[1] : 0 };
}

// The table's one question: which play put a card where it went. One touch answers it; nothing
// else moves until it is answered.
function renderQuestion(view) {
  const box = $("question");
  const question = view.question;
  box.hidden = !question;
  if (!question) return;
  $("question-text").textContent = question.text;
  $("question-why").textContent = "(" + question.why + ")";
  const choices = $("question-choices");
  choices.replaceChildren(...question.choices.map((choice) => {
    const button = el("button", "go answer", choice.label);
    button.dataset.choice = String(choice.choice);
    button.addEventListener("click", () =>
      send({ type: "answer", question: question.id, choice: choice.choice }));
    return button;
  }));
}

// Payouts held back while the readers disagree about a card of the round.
function renderHold(view) {
  const box = $("hold");
  const held = view.hold || [];
  box.hidden = held.length === 0;
  box.textContent = held.length === 0 ? "" : "NO PAYOUTS YET: acknowledge " +
    (held.length === 1 ? "the alarm" : "the " + held.length + " alarms") +
    " about this round's cards (with the floor), then pay";
}

// No dealer signed in: the sign-in form instead of the touch rows (the table takes no bet); a
// dealer signed in is named in the header, and signs out between rounds.
function renderStaff(view) {
  const signedIn = Boolean(view.dealer_id);
  $("sign-in").hidden = signedIn;
  $("touch").hidden = !signedIn;
  $("dealer-id").textContent = signedIn ? "dealer " + view.dealer_id : "no dealer signed in";
  $("sign-out").hidden = !signedIn;
  $("sign-out").disabled = Boolean(view.round && view.phase !== "settled");
  if (!signedIn) $("approve").hidden = true;
}

// A void or a correction goes to the table with a supervisor's id and PIN, typed in the
// approval band; the PIN field is cleared as soon as it is sent or cancelled.
function approve(message, what) {
  state.approving = message;
  $("approve-what").textContent = what + ": a supervisor approves";
  $("approve").hidden = false;
  $("approve-supervisor").focus();
}

function closeApproval() {
  state.approving = null;
  $("approve-pin").value = "";
  $("approve").hidden = true;
}

function render(view) {
  state.view = view;
  renderStatus(view);
  renderStaff(view);
  if (!view.settlement) state.alarmsOpen = false;
  state.alarmsFolded = false;
  renderAlarms(view);
  renderQuestion(view);
  renderHold(view);
  renderDealer(view);
  // A seat that does not fit whole even alone: the alarm band folds to one line to make room
  // (unless the dealer opened it).
  if (!renderSeats(view) && view.alarms.length && !state.alarmsOpen) {
    state.alarmsFolded = true;
    renderAlarms(view);
    renderSeats(view);
  }
  renderTouch();
  document.body.dataset.updates = String(view.updates);
}

function showUnpaired() {
  document.body.dataset.paired = "no";
  $("unpaired").hidden = false;
  $("mode").textContent = "NOT PAIRED";
  $("link").textContent = "not paired";
  $("link").className = "link-down";
}

// Connect once the table says this browser is paired (401: it is not; asked again every few
// seconds, so a pairing done meanwhile in this browser shows the table).
async function connect() {
  let response = null;
  try {
    response = await fetch("/api/view", { cache: "no-store" });
  } catch (error) {
    response = null;
  }
  if (response !== null && response.status === 401) {
    showUnpaired();
    setTimeout(connect, 5000);
    return;
  }
  document.body.dataset.paired = "yes";
  $("unpaired").hidden = true;
  const socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
  state.socket = socket;
  socket.onopen = () => { $("link").textContent = "live"; $("link").className = "link-up"; };
  socket.onmessage = (message) => render(JSON.parse(message.data));
  socket.onclose = () => {
    $("link").textContent = "screen offline: reconnecting";
    $("link").className = "link-down";
    setTimeout(connect, 1000);
  };
}

$("place-bet").addEventListener("click", () => {
  const kind = $("wager-kind").dataset.kind;
  send({ type: "bet", seat: state.seat, amount: moneyOf(state.cents), wager: kind });
  state.cents = 0;
  renderTouch();
});
$("clear-bet").addEventListener("click", () => { state.cents = 0; renderTouch(); });
$("wager-kind").addEventListener("click", () => {
  const button = $("wager-kind");
  button.dataset.kind = button.dataset.kind === "main" ? "match" : "main";
  button.textContent = button.dataset.kind;
});
$("key-card").addEventListener("click", () => { $("key-row").hidden = false; });
$("key-go").addEventListener("click", () => {
  const message = { type: "card", card: state.key.rank + state.key.suit };
  const to = keyTarget();
  if (to !== undefined) message.to = to;
  send(message);
  closeKeying();
});
$("correct-go").addEventListener("click", () => {
  const message = { type: "correct", card: state.key.rank + state.key.suit, at: keyTarget(true) };
  if (state.key.which !== "last") message.index = Number(state.key.which);
  // the card the screen shows there: refused if the table moved on before the touch arrived
  const lying = faceUpCards(state.view, state.key.to);
  const was = state.key.which === "last" ? lying[lying.length - 1] : lying[Number(state.key.which)];
  if (was) message.was = was;
  if (state.view && state.view.round) message.round = state.view.round.round;
  approve(message, $("correct-go").textContent);
  closeKeying();
});
$("key-cancel").addEventListener("click", closeKeying);
$("finish").addEventListener("click", () => send({ type: "finish" }));
$("pay-step").addEventListener("click", () => {
  state.payPage = (state.payPage + 1) % Math.max(1, state.pages.length);
  layoutSettlement(state.view && state.view.settlement);
});
window.addEventListener("resize", () => { if (state.view) render(state.view); });
$("close-insurance").addEventListener("click", () => send({ type: "close_insurance" }));
$("confirm-felt").addEventListener("click", () => send({ type: "confirm_felt" }));
$("shuffle").addEventListener("click", () => {
  if (window.confirm("A freshly shuffled shoe is in play?")) send({ type: "shuffle" });
});
$("void").addEventListener("click", () => {
  const reason = window.prompt("Void this round (floor decision). Reason:");
  // the round shown now: refused if another is in play by the time the supervisor approves
  const round = state.view && state.view.round ? state.view.round.round : null;
  if (reason && reason.trim()) approve({ type: "void", reason: reason.trim(), round }, "Void round");
});
$("approve-go").addEventListener("click", () => {
  if (!state.approving) return;
  send({ ...state.approving, supervisor: $("approve-supervisor").value.trim(),
    pin: $("approve-pin").value });
  closeApproval();
});
$("approve-cancel").addEventListener("click", closeApproval);
$("sign-in-go").addEventListener("click", () => {
  send({ type: "sign_in", dealer: $("sign-in-dealer").value.trim(), pin: $("sign-in-pin").value });
  $("sign-in-pin").value = "";
});
$("sign-out").addEventListener("click", () => send({ type: "sign_out" }));
renderTouch();
connect();
