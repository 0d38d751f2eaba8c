"""The fast path: whole rounds of one seat playing basic strategy, compiled with numba.

It follows the rules page exactly as the round engine does (deal order, peek, splits played one
after another, doubling and rescue, Bonus 21, who wins) and is checked against the engine
round by round on identical shoes (``dealer_assist.gamemath.crosscheck``). Money is counted in
whole half-units of the original wager (3:2 is 3), so sums stay exact integers.

A card is ``rank * 4 + suit``: rank 1 (ace) to 9, 11-13 (J, Q, K); suit 0 spades, 1 hearts,
2 diamonds, 3 clubs.
"""

from __future__ import annotations

import numba
import numpy as np

from dealer_assist.gamemath import strategy as _strategy

_decide = numba.njit(cache=True)(_strategy.decide)
_draw_678 = numba.njit(cache=True)(_strategy.draw_678)
_super_bonus_draw = numba.njit(cache=True)(_strategy.super_bonus_draw)

SPANISH_RANK_NUMBERS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13)

# Counters a run returns (index into the stats array).
STAT_NAMES = (
    "rounds", "net_half_units", "net_squared", "wins", "pushes", "losses", "total_wager",
    "player_blackjacks", "dealer_blackjacks", "surrenders", "rescues", "doublings", "splits",
    "five_card_21", "six_card_21", "seven_card_21",
    "six_seven_eight_mixed", "six_seven_eight_suited", "six_seven_eight_spades",
    "seven_seven_seven_mixed", "seven_seven_seven_suited", "seven_seven_seven_spades",
    "super_bonus",
    "match_none", "match_one_unsuited", "match_one_suited", "match_two_unsuited",
    "match_suited_and_unsuited", "match_two_suited",
    "hands", "busts",
)
S = {name: i for i, name in enumerate(STAT_NAMES)}
N_STATS = len(STAT_NAMES)
_MATCH_INDEX = np.array([[S["match_none"], S["match_one_suited"], S["match_two_suited"]],
                         [S["match_one_unsuited"], S["match_suited_and_unsuited"], -1],
                         [S["match_two_unsuited"], -1, -1]], dtype=np.int64)

MAX_HANDS = 4
MAX_CARDS = 24

# Hand states.
_PLAYING, _STOOD, _BUST, _SURRENDERED, _RESCUED = range(5)
# decide() results (copied so the compiled code sees constants).
_HIT, _STAND, _DOUBLE, _SPLIT, _SURRENDER, _RESCUE = (
    _strategy.HIT, _strategy.STAND, _strategy.DOUBLE, _strategy.SPLIT, _strategy.SURRENDER,
    _strategy.RESCUE)


def spanish_shoe_codes(decks: int) -> np.ndarray:
    """Every card of a Spanish shoe as codes, in a fixed order."""
    one = [rank * 4 + suit for suit in range(4) for rank in SPANISH_RANK_NUMBERS]
    return np.array(one * decks, dtype=np.int64)


@numba.njit(cache=True, inline="always")
def _value(rank: int) -> int:
    if rank == 1:
        return 11
    return 10 if rank > 10 else rank


@numba.njit(cache=True)
def _draw(shoe: np.ndarray, state: np.ndarray, shuffle: bool) -> int:
    """Next card; with ``shuffle`` an unbiased draw from the cards left (lazy Fisher-Yates)."""
    p = state[0]
    if shuffle:
        j = p + np.random.randint(0, shoe.shape[0] - p)
        card = shoe[j]
        shoe[j] = shoe[p]
        shoe[p] = card
    state[0] = p + 1
    return int(shoe[p])


@numba.njit(cache=True)
def _total(ranks: np.ndarray, count: int) -> tuple[int, bool]:
    total = 0
    aces = 0
    for k in range(count):
        v = _value(ranks[k])
        total += v
        if v == 11:
            aces += 1
    while total > 21 and aces > 0:
        total -= 10
        aces -= 1
    return total, aces > 0


@numba.njit(cache=True)
def _bonus_half_units(
    ranks: np.ndarray, suits: np.ndarray, count: int, two_decks: bool, stats: np.ndarray
) -> int:
    """Pay of an undoubled 21 per original wager, in half-units, and count which bonus it was."""
    if count == 3:
        r0, r1, r2 = ranks[0], ranks[1], ranks[2]
        lo = min(r0, min(r1, r2))
        hi = max(r0, max(r1, r2))
        is_678 = lo == 6 and hi == 8 and r0 + r1 + r2 == 21 and r0 != r1
        is_777 = r0 == 7 and r1 == 7 and r2 == 7
        if is_678 or is_777:
            same = suits[0] == suits[1] and suits[1] == suits[2]
            base = S_678 if is_678 else S_777
            if same and suits[0] == 0:
                stats[base + 2] += 1
                return 6
            if same:
                stats[base + 1] += 1
                return 4
            stats[base] += 1
            return 4 if (is_777 and two_decks) else 3
    if count == 5:
        stats[S_FIVE] += 1
        return 3
    if count == 6:
        stats[S_FIVE + 1] += 1
        return 4
    if count >= 7:
        stats[S_FIVE + 2] += 1
        return 6
    return 2


S_678 = S["six_seven_eight_mixed"]
S_777 = S["seven_seven_seven_mixed"]
S_FIVE = S["five_card_21"]


@numba.njit(cache=True)
def play_round(
    shoe: np.ndarray, state: np.ndarray, shuffle: bool, table: np.ndarray, decks: int,
    hits_soft_17: bool, max_doublings: int, surrender: bool, max_hands: int,
    split_by_value: bool, super_bonus_eligible: bool, hr: np.ndarray, hs: np.ndarray,
    hn: np.ndarray, hw: np.ndarray, hlast: np.ndarray, hd: np.ndarray, hstate: np.ndarray,
    stats: np.ndarray,
) -> int:
    """Play one round for one seat from ``shoe`` (position in ``state[0]``); returns the net.

    The net is in half-units of the original wager; ``stats`` is updated in place.
    """
    c1 = _draw(shoe, state, shuffle)
    up = _draw(shoe, state, shuffle)
    c2 = _draw(shoe, state, shuffle)
    hole = _draw(shoe, state, shuffle)
    up_rank, up_suit = up >> 2, up & 3
    upv = _value(up_rank)
    unsuited = 0
    suited = 0
    for c in (c1, c2):
        if c >> 2 == up_rank:
            if c & 3 == up_suit:
                suited += 1
            else:
                unsuited += 1
    stats[_MATCH_INDEX[unsuited, suited]] += 1
    stats[S_ROUNDS] += 1
    holev = _value(hole >> 2)
    player_bj = _value(c1 >> 2) + _value(c2 >> 2) == 21
    if upv + holev == 21:  # the peek finds it (ace or ten-value up)
        stats[S_DEALER_BJ] += 1
        stats[S_WAGER] += 1
        stats[S_HANDS] += 1
        if player_bj:
            stats[S_PLAYER_BJ] += 1
            return _record(stats, 3)
        return _record(stats, -2)
    if player_bj:
        stats[S_PLAYER_BJ] += 1
        stats[S_WAGER] += 1
        stats[S_HANDS] += 1
        return _record(stats, 3)

    two_decks = decks == 2
    nh = 1
    hr[0, 0] = c1 >> 2
    hs[0, 0] = c1 & 3
    hr[0, 1] = c2 >> 2
    hs[0, 1] = c2 & 3
    hn[0] = 2
    hw[0] = 1
    hlast[0] = 0
    hd[0] = 0
    hstate[0] = _PLAYING
    i = 0
    while i < nh:
        if hn[i] == 1:
            c = _draw(shoe, state, shuffle)
            hr[i, 1] = c >> 2
            hs[i, 1] = c & 3
            hn[i] = 2
        while True:
            total, soft = _total(hr[i], hn[i])
            if total > 21:
                hstate[i] = _BUST
                break
            if total == 21:
                hstate[i] = _STOOD
                break
            n = hn[i]
            fresh_two = n == 2 and hd[i] == 0
            pair_value = 0
            draw678 = 0
            super_draw = False
            if fresh_two:
                v0 = _value(hr[i, 0])
                if v0 == _value(hr[i, 1]) and (split_by_value or hr[i, 0] == hr[i, 1]):
                    pair_value = v0
                draw678 = _draw_678(hr[i, 0], hs[i, 0], hr[i, 1], hs[i, 1])
                if nh == 1 and super_bonus_eligible:
                    super_draw = _super_bonus_draw(decks, up_rank, up_suit, hr[i, 0], hs[i, 0],
                                                   hr[i, 1], hs[i, 1])
            action = _decide(table, upv, total, soft, n, pair_value, nh < max_hands,
                             surrender and fresh_two and nh == 1, hd[i], max_doublings,
                             draw678, super_draw)
            if action == _HIT:
                c = _draw(shoe, state, shuffle)
                hr[i, n] = c >> 2
                hs[i, n] = c & 3
                hn[i] = n + 1
            elif action == _DOUBLE:
                hlast[i] = hw[i]
                hw[i] = 2 * hw[i]
                hd[i] += 1
                stats[S_DOUBLINGS] += 1
                c = _draw(shoe, state, shuffle)
                hr[i, n] = c >> 2
                hs[i, n] = c & 3
                hn[i] = n + 1
            elif action == _SPLIT:
                stats[S_SPLITS] += 1
                for k in range(nh, i + 1, -1):  # make room right after hand i
                    hr[k, 0] = hr[k - 1, 0]
                    hs[k, 0] = hs[k - 1, 0]
                    hr[k, 1] = hr[k - 1, 1]
                    hs[k, 1] = hs[k - 1, 1]
                    hn[k] = hn[k - 1]
                    hw[k] = hw[k - 1]
                    hlast[k] = hlast[k - 1]
                    hd[k] = hd[k - 1]
                    hstate[k] = hstate[k - 1]
                hr[i + 1, 0] = hr[i, 1]
                hs[i + 1, 0] = hs[i, 1]
                hn[i + 1] = 1
                hw[i + 1] = 1
                hlast[i + 1] = 0
                hd[i + 1] = 0
                hstate[i + 1] = _PLAYING
                nh += 1
                c = _draw(shoe, state, shuffle)
                hr[i, 1] = c >> 2
                hs[i, 1] = c & 3
            elif action == _SURRENDER:
                hstate[i] = _SURRENDERED
                break
            elif action == _RESCUE:
                hstate[i] = _RESCUED
                break
            else:
                hstate[i] = _STOOD
                break
        i += 1

    # The dealer draws only if some standing hand's result depends on the dealer's total.
    needs_dealer = False
    for k in range(nh):
        if hstate[k] == _STOOD and _total(hr[k], hn[k])[0] < 21:
            needs_dealer = True
    dealer_total = 0
    if needs_dealer:
        dr = np.empty(MAX_CARDS, dtype=np.int64)
        dr[0] = up_rank
        dr[1] = hole >> 2
        dn = 2
        while True:
            dealer_total, dealer_soft = _total(dr, dn)
            if dealer_total < 17 or (hits_soft_17 and dealer_total == 17 and dealer_soft):
                dr[dn] = _draw(shoe, state, shuffle) >> 2
                dn += 1
            else:
                break

    net = 0
    wager = 0
    super_bonus = False
    for k in range(nh):
        w = hw[k]
        wager += w
        stats[S_HANDS] += 1
        st = hstate[k]
        if st == _BUST:
            stats[S_BUSTS] += 1
            net -= 2 * w
        elif st == _SURRENDERED:
            stats[S_SURRENDERS] += 1
            net -= 1
        elif st == _RESCUED:
            stats[S_RESCUES] += 1
            net -= 2 * (w - hlast[k])
        else:
            total = _total(hr[k], hn[k])[0]
            if total == 21:
                if hd[k] == 0:
                    net += _bonus_half_units(hr[k], hs[k], hn[k], two_decks, stats)
                    if (nh == 1 and super_bonus_eligible and hn[k] == 3 and hr[k, 2] == 7
                            and _super_bonus_draw(decks, up_rank, up_suit, hr[k, 0], hs[k, 0],
                                                  hr[k, 1], hs[k, 1])
                            and (hs[k, 2] == hs[k, 0] if decks != 2 else
                                 (hs[k, 2] != 0 and hs[k, 2] != hs[k, 0]
                                  and hs[k, 2] != hs[k, 1]))):
                        super_bonus = True
                else:
                    net += 2 * w
            elif dealer_total > 21 or total > dealer_total:
                net += 2 * w
            elif total < dealer_total:
                net -= 2 * w
    if super_bonus:
        stats[S_SUPER] += 1
    stats[S_WAGER] += wager
    return _record(stats, net)


S_ROUNDS = S["rounds"]
S_DEALER_BJ = S["dealer_blackjacks"]
S_PLAYER_BJ = S["player_blackjacks"]
S_WAGER = S["total_wager"]
S_HANDS = S["hands"]
S_BUSTS = S["busts"]
S_SURRENDERS = S["surrenders"]
S_RESCUES = S["rescues"]
S_DOUBLINGS = S["doublings"]
S_SPLITS = S["splits"]
S_SUPER = S["super_bonus"]
S_NET = S["net_half_units"]
S_WINS = S["wins"]  # then pushes, losses


@numba.njit(cache=True)
def _record(stats: np.ndarray, net: int) -> int:
    stats[S_NET] += net
    stats[S_NET + 1] += net * net
    if net > 0:
        stats[S_WINS] += 1
    elif net == 0:
        stats[S_WINS + 1] += 1
    else:
        stats[S_WINS + 2] += 1
    return net


@numba.njit(cache=True)
def _work_arrays() -> tuple[np.ndarray, ...]:
    return (np.zeros((MAX_HANDS, MAX_CARDS), np.int64), np.zeros((MAX_HANDS, MAX_CARDS), np.int64),
            np.zeros(MAX_HANDS, np.int64), np.zeros(MAX_HANDS, np.int64),
            np.zeros(MAX_HANDS, np.int64), np.zeros(MAX_HANDS, np.int64),
            np.zeros(MAX_HANDS, np.int64))


@numba.njit(cache=True)
def simulate_chunk(
    rounds: int, seed: int, shoe: np.ndarray, table: np.ndarray, decks: int,
    hits_soft_17: bool, max_doublings: int, surrender: bool, max_hands: int,
    split_by_value: bool, super_bonus_eligible: bool,
) -> np.ndarray:
    """``rounds`` rounds, each from a freshly shuffled shoe, seeded; returns the stats array."""
    np.random.seed(seed)
    shoe = shoe.copy()
    stats = np.zeros(N_STATS, np.int64)
    state = np.zeros(1, np.int64)
    hr, hs, hn, hw, hlast, hd, hstate = _work_arrays()
    for _ in range(rounds):
        state[0] = 0
        play_round(shoe, state, True, table, decks, hits_soft_17, max_doublings, surrender,
                   max_hands, split_by_value, super_bonus_eligible, hr, hs, hn, hw, hlast, hd,
                   hstate, stats)
    return stats


@numba.njit(cache=True)
def replay_rounds(
    shoes: np.ndarray, table: np.ndarray, decks: int, hits_soft_17: bool, max_doublings: int,
    surrender: bool, max_hands: int, split_by_value: bool, super_bonus_eligible: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One round per row of ``shoes``, dealt in row order; returns (nets, cards used, stats)."""
    stats = np.zeros(N_STATS, np.int64)
    nets = np.zeros(shoes.shape[0], np.int64)
    used = np.zeros(shoes.shape[0], np.int64)
    state = np.zeros(1, np.int64)
    hr, hs, hn, hw, hlast, hd, hstate = _work_arrays()
    for r in range(shoes.shape[0]):
        state[0] = 0
        nets[r] = play_round(shoes[r], state, False, table, decks, hits_soft_17, max_doublings,
                             surrender, max_hands, split_by_value, super_bonus_eligible, hr, hs,
                             hn, hw, hlast, hd, hstate, stats)
        used[r] = state[0]
    return nets, used, stats
