"""The states of the OpenSpiel game ``python_scopa``: information states and observations that never
show a hidden card, perfect recall, resampling from an information state, states rebuilt from a
kit agent's view, the 52-card game's notation, and whole hands of the engine and of the AEC env
followed by the bridge move by move (the 52-card game, declarations, Cirulla's redeals and table
bonus, Chkobba's first card).

Skipped without the ``openspiel`` extra.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from openspiel_helpers import DECLARING, F52, F52_MOVE, load, play_until, sample, thrown_in_table  # noqa: E402

import scopa_env.openspiel.game as og  # noqa: E402
from scopa_env.engine.actions import confirm_action, move_enumeration  # noqa: E402
from scopa_env.engine.cards import cards_of, format_card, format_cards  # noqa: E402
from scopa_env.engine.game import Game  # noqa: E402
from scopa_env.engine.observation import ObservationLayout, write_observation  # noqa: E402
from scopa_env.engine.rules import get_rules  # noqa: E402

# --- hidden information stays hidden --------------------------------------------------------------


def swap_hidden(state, a: int, b: int):
    """The same history with cards ``a`` and ``b`` exchanged in the current hand's deal (slots re-sorted)."""
    pos = state.position
    start = pos.hand_start
    slot_actions, k = [], start
    for _, size in pos.slots:
        cards = [{a: b, b: a}.get(c, c) for c in pos.history[k : k + size]]
        slot_actions += sorted(cards)
        k += size
    history = pos.history[:start] + slot_actions + pos.history[k:]
    other = state.get_game().new_initial_state()
    for action in history:
        other.apply_action(action)
    return other


@pytest.mark.parametrize("action_mode", ["move", "select"])
def test_strings_and_tensors_do_not_see_hidden_cards(action_mode):
    """Swap a card of p1's hand with a card still in the stock: p0 sees no difference, p1 does."""
    game = load(action_mode=action_mode)
    rng = np.random.default_rng(11)
    for decisions in (0, 3, 8, 15):
        state = play_until(game.new_initial_state(), rng, decisions)
        engine = state.engine
        hidden_hand, stock = engine.hands[1], engine.stock
        if not hidden_hand or not stock:
            continue
        a = int(hidden_hand & -hidden_hand).bit_length() - 1
        other = swap_hidden(state, a, stock[0])
        assert other.engine.hands[1] != engine.hands[1], "the swap changed p1's hand"
        assert other.information_state_string(0) == state.information_state_string(0)
        assert other.information_state_tensor(0) == state.information_state_tensor(0)
        assert other.observation_string(0) == state.observation_string(0)
        assert other.observation_tensor(0) == state.observation_tensor(0)
        assert other.information_state_string(1) != state.information_state_string(1), "p1 sees its own cards"
        assert other.observation_tensor(1) != state.observation_tensor(1)


def test_information_state_has_perfect_recall():
    """Each of a player's information states extends its previous one: nothing seen is forgotten.

    (The kit's observation, built for learners, forgets the order of plays; this string must not.)
    """
    game = load(rules="small", episode="game", max_hands=3)
    state = game.new_initial_state()
    rng = np.random.default_rng(4)
    seen: dict[int, str] = {}
    while not state.is_terminal():
        if not state.is_chance_node():
            for p in range(2):
                text = state.information_state_string(p)
                assert text.startswith(seen.get(p, "")), f"p{p} forgot something:\n{seen.get(p)}\n{text}"
                seen[p] = text
        state.apply_action(sample(state, rng))
    assert seen[0].count("hand ") >= 2, "several hands were recalled"


@pytest.mark.parametrize("action_mode", ["move", "select"])
@pytest.mark.parametrize("rules", ["chkobba", "scopa_bazzica", "cirulla"])
def test_information_state_has_perfect_recall_with_decisions(rules, action_mode):
    """First cards, declarations, shown hands and redeals are remembered: each information state of a
    player extends its previous one, over two hands (a "select" choice in progress, shown last, is
    then recorded as the completed move)."""
    game = load(rules=rules, episode="game", max_hands=2, action_mode=action_mode)
    for seed in range(3):
        state = game.new_initial_state()
        rng = np.random.default_rng(seed)
        seen: dict[int, str] = {}
        while not state.is_terminal():
            if not state.is_chance_node():
                for p in range(2):
                    text = state.information_state_string(p)
                    before = seen.get(p, "").split(" | choosing ")[0]
                    assert text.startswith(before), f"p{p} forgot something:\n{before}\n{text}"
                    seen[p] = text
            state.apply_action(sample(state, rng))


@pytest.mark.parametrize("params", [{}, {"action_mode": "select"}, {"players": 4}, F52, F52_MOVE])
def test_resample_from_infostate_keeps_what_the_player_knows(params):
    game = load(**params)
    rng = np.random.default_rng(5)
    state = play_until(game.new_initial_state(), rng, 6)
    p = state.current_player()
    draws = np.random.default_rng(9)
    hands = set()
    for _ in range(8):
        other = state.resample_from_infostate(p, draws.random)
        assert other.information_state_string(p) == state.information_state_string(p)
        assert other.information_state_tensor(p) == state.information_state_tensor(p)
        assert other.legal_actions() == state.legal_actions()
        hands.add((tuple(other.engine.hands), tuple(other.engine.stock)))
    assert len(hands) > 1, "the hidden cards are dealt again"
    same = [state.resample_from_infostate(p, np.random.default_rng(1).random).history() for _ in range(2)]
    assert same[0] == same[1], "a seeded sampler gives the same world"


def test_state_from_view_is_the_same_information_state():
    game = load()
    state = play_until(game.new_initial_state(), np.random.default_rng(2), 9)
    p = state.current_player()
    rebuilt = og.state_from_view(game, state.engine.view(p), np.random.default_rng(0))
    assert rebuilt.information_state_string(p) == state.information_state_string(p)
    with pytest.raises(ValueError, match="the view is of"):
        og.state_from_view(load(rules="small"), state.engine.view(p), np.random.default_rng(0))


# --- the 52-card game for 8 players (french_52) ---------------------------------------------------


def test_french_52_strings_use_the_52_card_notation():
    """wikipedia: "Jacks are treated as value 11, Queens as 12, and Kings as 13": ids 40..51 are the
    Jacks, Queens and Kings (``J Q K``), the 40-card deck's ids 7..9 of a suit its 8, 9 and 10."""
    game = load(**F52)
    state = game.new_initial_state()
    assert [state.action_to_string(pyspiel.PlayerId.CHANCE, a) for a in (7, 9, 40, 51)] == [
        "deal 8d",
        "deal 10d",
        "deal Jd",
        "deal Kc",
    ]
    state = play_until(state, np.random.default_rng(0), 0)
    p = state.current_player()
    hand = cards_of(state.engine.hands[p])
    assert state.information_state_string(p).count(format_cards(state.engine.hands[p], 13)) == 1
    assert [state.action_to_string(p, a) for a in state.legal_actions()] == [format_card(c, 13) for c in hand]
    assert f"hand {format_cards(state.engine.hands[p], 13)}" in state.observation_string(p)


def test_french_52_tensors_and_strings_do_not_see_hidden_cards():
    """Permute cards p0 cannot see (p1's hand, p5's hand and the stock): p0's strings and tensors
    are unchanged, the owners' are not."""
    game = load(**F52)
    rng = np.random.default_rng(7)
    checked = 0
    for decisions in (0, 5, 17, 30):
        state = play_until(game.new_initial_state(), rng, decisions)
        engine = state.engine
        if state.is_terminal() or not engine.hands[1] or not engine.hands[5]:
            continue
        a, b = cards_of(engine.hands[1])[0], cards_of(engine.hands[5])[-1]
        other = swap_hidden(state, a, b)
        if engine.stock:
            other = swap_hidden(other, cards_of(other.engine.hands[1])[-1], engine.stock[-1])
        assert other.engine.hands[1] != engine.hands[1] and other.engine.hands[5] != engine.hands[5]
        for p in (0, 3):
            assert other.information_state_tensor(p) == state.information_state_tensor(p)
            assert other.information_state_string(p) == state.information_state_string(p)
            assert other.observation_tensor(p) == state.observation_tensor(p)
            assert other.observation_string(p) == state.observation_string(p)
        for p in (1, 5):
            assert other.information_state_tensor(p) != state.information_state_tensor(p), f"p{p} sees its cards"
        checked += 1
    assert checked >= 3


# --- declarations and Chkobba's first card --------------------------------------------------------


def swap_replay(state, a: int, b: int):
    """The same history with cards ``a`` and ``b`` exchanged in the current deal (chance outcomes
    re-sorted per set, actions naming them mapped), or ``None`` where that history is not legal (a
    pass names the hand's highest card) or not the same public course (another seat decides, a
    "select" move ends at another step)."""
    game = state.get_game()
    setup = game.setup
    pos = state.position
    history = pos.history
    other = game.new_initial_state()
    i = 0
    while i < len(history):
        swap = {a: b, b: a} if i >= pos.deal_start else {}
        if other.is_chance_node():
            now = other.position
            need = now.slots[now.slot][1] - len(now.dealt[now.slot])
            for card in sorted(swap.get(c, c) for c in history[i : i + need]):
                if card not in dict(other.chance_outcomes()):
                    return None
                other.apply_action(card)
            i += need
            continue
        action = history[i]
        if setup.moves is not None:
            card, mask = setup.moves.pair(action, other.engine.table)
            mask = sum(1 << swap.get(c, c) for c in cards_of(mask))
            try:
                action = setup.moves.ids([(swap.get(card, card), mask)], other.engine.table)[0]
            except (KeyError, ValueError):  # no such move id (a one-line ValueError names the move)
                return None
        elif action != setup.confirm:
            action = swap.get(action, action)
        if action not in other.legal_actions():
            return None
        other.apply_action(action)
        i += 1
    if [d[:2] for d in other.position.decisions] != [d[:2] for d in pos.decisions]:
        return None  # another seat decided: not a swap that keeps the public decisions
    if other.is_chance_node() or other.engine.declare_queue != state.engine.declare_queue:
        return None
    if other.current_player() != state.current_player() or (other.position.pending is None) != (pos.pending is None):
        return None  # "select" mode: the swapped card completed (or not) the move in another number of steps
    return other


@pytest.mark.parametrize("action_mode", ["move", "select"])
@pytest.mark.parametrize("rules", DECLARING)
def test_hidden_cards_stay_hidden_with_declarations(rules, action_mode):
    """pagat (Scopa with bazzica): "In order to score, a bazzica or a bazzicotto must be declared
    immediately after a three-card deal, before the next card is played, and the cards must be shown."

    Exchanging a card of p1's hand that is not shown with a card p0 cannot see (p1's other cards, the
    stock) leaves p0's strings and tensors as they were, when the same decisions stay legal (who
    decides on a declaration is public, as in the engine's ``PlayerView.declare_queue``); p1's
    change. A card p1 showed by declaring cannot be exchanged unseen: p0's strings and tensors change.
    """
    game = load(rules=rules, action_mode=action_mode)
    rng = np.random.default_rng(3)
    checked = shown = 0
    for decisions in itertools.cycle((0, 1, 4, 9, 14)):
        if checked >= 6 and shown >= 1 or checked > 200:
            break
        state = play_until(game.new_initial_state(), rng, decisions)
        engine = state.engine
        if state.is_terminal() or not engine.hands[1] or not engine.stock:
            continue
        hidden = engine.hands[1] & ~engine.revealed[1]
        for a in cards_of(hidden):
            other = swap_replay(state, a, engine.stock[int(rng.integers(len(engine.stock)))])
            if other is None:
                continue
            for view in (state.information_state_string, state.information_state_tensor):
                assert getattr(other, view.__name__)(0) == view(0)
            assert other.observation_string(0) == state.observation_string(0)
            assert other.observation_tensor(0) == state.observation_tensor(0)
            assert other.information_state_tensor(1) != state.information_state_tensor(1), "p1 sees its cards"
            checked += 1
            break
        for a in cards_of(engine.revealed[1]):
            other = swap_replay(state, a, engine.stock[0])
            if other is not None:
                assert other.information_state_string(0) != state.information_state_string(0), "shown to p0"
                assert other.observation_tensor(0) != state.observation_tensor(0)
                shown += 1
                break
    assert checked >= 6


@pytest.mark.parametrize("action_mode", ["move", "select"])
@pytest.mark.parametrize("rules", DECLARING)
def test_resample_with_declarations_keeps_shown_hands_and_decisions(rules, action_mode):
    """pagat: "the cards must be shown": a resampled world keeps every shown hand in place and the
    same decisions (who decided, who declared), and deals again only cards the player cannot see."""
    game = load(rules=rules, action_mode=action_mode)
    rng = np.random.default_rng(8)
    worlds = revealed = 0
    for _ in range(12):
        state = game.new_initial_state()
        while not state.is_terminal():
            if not state.is_chance_node() and rng.random() < 0.3:
                pos = state.position
                for p in range(2):
                    other = state.resample_from_infostate(p, rng.random)
                    assert other.information_state_string(p) == state.information_state_string(p)
                    assert other.information_state_tensor(p) == state.information_state_tensor(p)
                    assert other.observation_tensor(p) == state.observation_tensor(p)
                    assert other.legal_actions() == state.legal_actions() or p != state.current_player()
                    assert other.engine.revealed == state.engine.revealed, "shown hands stay put"
                    assert other.engine.hands[p] == state.engine.hands[p]
                    assert [d[:2] for d in other.position.decisions] == [d[:2] for d in pos.decisions]
                    assert [bool(d[2]) for d in other.position.decisions] == [bool(d[2]) for d in pos.decisions]
                    unseen = state.engine.view(p).unseen
                    for q in range(2):
                        moved = other.engine.hands[q] ^ state.engine.hands[q]
                        assert moved & ~unseen == 0, "only unseen cards are dealt again"
                    worlds += 1
                revealed += any(state.engine.revealed)
            state.apply_action(sample(state, rng))
    assert worlds > 20 and revealed > 0


@pytest.mark.parametrize("rules", DECLARING)
def test_state_from_view_with_declarations(rules):
    """A kit agent's view (with shown hands and a pending declaration) is rebuilt as a state whose
    engine shows the same view and observation."""
    game = load(rules=rules)
    rng = np.random.default_rng(6)
    rebuilt = 0
    for _ in range(4):
        state = game.new_initial_state()
        while not state.is_terminal():
            if not state.is_chance_node():
                p = state.current_player()
                view = state.engine.view(p)
                other = og.state_from_view(game, view, rng)
                assert other.engine.view(p) == view
                assert other.observation_tensor(p) == state.observation_tensor(p)
                assert other.legal_actions() == state.legal_actions()
                rebuilt += 1
            state.apply_action(sample(state, rng))
    assert rebuilt > 50


def test_chkobba_hidden_first_card_and_resampling():
    """A kept first card is its holder's secret: swapping it with a card p1 cannot see leaves p1's
    strings and tensors as they were (p0's change); resampling for p1 deals it again, for p0 keeps it."""
    game = load(rules="chkobba")
    rng = np.random.default_rng(2)
    checked = 0
    for _ in range(30):
        state = game.new_initial_state()
        while state.is_chance_node() or state.position.first is None:  # the first card kept (the last id)
            state.apply_action(sample(state, rng) if state.is_chance_node() else state.legal_actions()[-1])
        state = play_until(state, rng, int(rng.integers(0, 4)))
        card, keep = state.position.first
        if state.is_terminal() or not keep or not state.engine.hands[0] >> card & 1 or not state.engine.stock:
            continue
        other = swap_replay(state, card, state.engine.stock[-1])
        if other is None:
            continue
        assert other.information_state_string(1) == state.information_state_string(1)
        assert other.information_state_tensor(1) == state.information_state_tensor(1)
        assert other.observation_string(1) == state.observation_string(1)
        assert other.information_state_string(0) != state.information_state_string(0)
        firsts = set()
        for _ in range(6):
            for p in (0, 1):
                world = state.resample_from_infostate(p, rng.random)
                assert world.information_state_string(p) == state.information_state_string(p)
                assert world.information_state_tensor(p) == state.information_state_tensor(p)
                if p == 0:
                    assert world.position.first == (card, True)
                else:
                    firsts.add(world.position.first)
        assert len(firsts) > 1, "p1 does not know which card was drawn"
        checked += 1
    assert checked >= 5


def test_chkobba_state_from_view():
    """A kit agent's view is rebuilt as a state with the same view (the first card's fate, which the
    view does not hold, read as kept)."""
    game = load(rules="chkobba", action_mode="select")
    rng = np.random.default_rng(1)
    rebuilt = 0
    for _ in range(3):
        state = game.new_initial_state()
        while not state.is_terminal():
            if not state.is_chance_node() and state.position.pending is None:
                p = state.current_player()
                other = og.state_from_view(game, state.engine.view(p), rng)
                assert other.engine.view(p) == state.engine.view(p)
                assert other.observation_tensor(p) == state.observation_tensor(p)
                assert other.legal_actions() == state.legal_actions()
                rebuilt += 1
            state.apply_action(sample(state, rng))
    assert rebuilt > 30


# --- the engine's and the env's hands, followed move by move --------------------------------------


def engine_select_actions(state, card: int, captured: int) -> list[int]:
    """Play ``(card, captured)`` on ``state`` in "select" mode as a player would: the card, then
    the captured cards (ascending) while the bridge asks for them, then CONFIRM if it asks."""
    confirm = state.get_game().setup.confirm
    engine = state.engine
    plies = len(engine.history)
    actions = [card]
    state.apply_action(card)
    rest = cards_of(captured)
    while len(state.engine.history) == plies:
        legal = state.legal_actions()
        pick = next((c for c in rest if c in legal), None)
        if pick is None:
            assert confirm in legal, (legal, rest)
            pick = confirm
        else:
            rest.remove(pick)
        state.apply_action(pick)
        actions.append(pick)
    return actions


@pytest.mark.parametrize("seed", [0, 1])
def test_a_random_8_player_hand_matches_the_engine_move_by_move(seed):
    """wikipedia (French-suited cards): "it is possible to play an 8 player game of scopa using all
    52 cards. 4 cards are placed face-up on the table, and 3 cards are dealt to each player for 2
    rounds (52 = 4 + 3 * 8 * 2)."

    The engine deals and plays a random hand; the bridge is dealt the same cards through its chance
    nodes and follows the same moves: at every decision the player to move, its legal cards, its
    observation and the position agree, and the returns are the engine's hand margins.
    """
    rules = get_rules("french_52")
    engine = Game(8, rules, seed=seed, auto_next_hand=False)
    rng = np.random.default_rng(seed)
    # The engine's whole hand first: the second round's cards are known only once dealt.
    probe = engine.clone()
    first_table, first_hands, dealer = probe.table, list(probe.hands), probe.dealer
    second_hands, moves = None, []
    while not probe.hand_over:
        if len(probe.history) == 24 and second_hands is None:
            second_hands = list(probe.hands)
        pairs = probe.legal_pairs()
        move = pairs[int(rng.integers(len(pairs)))]
        moves.append(move)
        probe.play_pair(*move)
    assert second_hands is not None and all(h.bit_count() == 3 for h in second_hands), "3 cards each, 2 rounds"
    assert first_table.bit_count() == 4 and all(h.bit_count() == 3 for h in first_hands)

    game = load(**F52)
    state = game.new_initial_state()
    order = [(dealer + 1 + i) % 8 for i in range(8)]
    deal = cards_of(first_table) + [
        c for hands in (first_hands, second_hands) for s in order for c in cards_of(hands[s])
    ]
    for card in deal:
        assert state.is_chance_node() and card in dict(state.chance_outcomes())
        state.apply_action(card)
    assert not state.is_chance_node(), "52 = 4 + 3 * 8 * 2: the whole deck is dealt"
    layout = ObservationLayout.for_rules(8, rules)
    for card, captured in moves:
        seat = engine.current
        assert state.current_player() == seat
        assert state.legal_actions() == sorted({c for c, _ in engine.legal_pairs()})
        expected = write_observation(engine, seat, layout, np.zeros(layout.size, np.float32))
        assert np.array_equal(np.asarray(state.observation_tensor(seat), np.float32), expected)
        assert state.engine.table == engine.table and state.engine.hands == engine.hands
        engine_select_actions(state, card, captured)
        engine.play_pair(card, captured)
        text = format_card(card, 13) + (">" + format_cards(captured, 13) if captured else "")
        assert state.information_state_string((seat + 3) % 8).endswith(f"p{seat}:{text}") or len(engine.history) in (
            24,
            48,
        )
    assert state.is_terminal() and engine.hand_over
    totals = [row["total"] for row in engine.hand_result.hand_score]
    assert state.returns() == pytest.approx([t - (sum(totals) - t) / 7 for t in totals])
    assert sum(state.returns()) == pytest.approx(0.0)


def engine_deal_actions(engine: Game) -> list[int]:
    """The bridge's chance actions for ``engine``'s hand just dealt: the table (before Cirulla's table
    bonus took it), then per deal each seat's cards from the player after the dealer, ascending."""
    n = engine.num_players
    table = engine.table
    if any(engine.table_bonus):  # the table went to the dealer's pile
        table = engine.piles[engine.side_of[engine.dealer]]
    order = [(engine.dealer + 1 + i) % n for i in range(n)]
    actions = cards_of(table) + [c for s in order for c in cards_of(engine.hands[s])]
    stock = list(engine.stock)
    for size in engine.schedule[1:]:
        cards, stock = stock[: n * size], stock[n * size :]
        for i in range(n):
            actions += sorted(cards[i::n])
    return actions


def follow_env(
    rules: str, action_mode: str, players: int, seed: int, redeals: int | None = None, keep_first: bool | None = None
) -> dict:
    """Play a random hand in the AEC env and follow it in the bridge action by action; what happened.

    The bridge's chance nodes are fed the env's cards: the deal, Chkobba's first card and, after its
    decision, the rest (a table the env threw in first, read off the stock the env dealt it from).
    ``keep_first``: Chkobba's first card is kept (True) or tabled (False) instead of a random choice.
    """
    from scopa_env import scopa_v0

    rules_obj = get_rules(rules)
    env = scopa_v0.raw_env(num_players=players, rules=rules, episode="hand", reward="points", action_mode=action_mode)
    for s in itertools.count(seed):
        env.reset(seed=s)
        if redeals is None or env.game.redeals == redeals:
            break
    state = load(rules=rules, players=players, action_mode=action_mode).new_initial_state()

    def feed(cards) -> None:
        for card in cards:
            assert state.is_chance_node() and card in dict(state.chance_outcomes())
            state.apply_action(card)

    def deal_now() -> None:
        g = env.game
        if g.deciding and not g.declare_queue:  # Chkobba: the first card alone
            feed(cards_of(g.hands[(g.dealer + 1) % players]))
        else:
            cards = engine_deal_actions(g)
            if state.position.first is not None:
                cards.remove(state.position.first[0])  # dealt before the decision
            feed(cards)
        assert not state.is_chance_node()

    for _ in range(env.game.redeals):  # Cirulla: the engine's thrown-in tables are not recorded, any will do
        feed(thrown_in_table(rules_obj))
    deal_now()
    assert state.engine.dealer == env.game.dealer, "the dealer after the redeals"
    rng = np.random.default_rng(seed)
    seen = {"decisions": 0, "declared": 0, "table_bonus": any(env.game.table_bonus), "redeals": env.game.redeals}
    seen["first"] = []
    while not all(env.terminations.values()):
        agent = env.agent_selection
        seat = env.possible_agents.index(agent)
        assert state.current_player() == seat
        legal = np.flatnonzero(env.observe(agent)["action_mask"]).tolist()
        assert state.legal_actions() == legal
        for p, a in enumerate(env.possible_agents):
            assert np.array_equal(np.asarray(state.observation_tensor(p), np.float32), env.observe(a)["observation"])
        g = env.game
        seen["decisions"] += bool(g.declare_queue)
        action = legal[int(rng.integers(len(legal)))]
        first = g.deciding and not g.declare_queue
        if first:
            card = g.hands[seat].bit_length() - 1
            stock, before = list(g.stock), g.redeals
            if keep_first is not None:
                if action_mode == "move":
                    action = move_enumeration(rules_obj).ids([(card, (1 << card) * keep_first)], g.table)[0]
                elif env._pending_card is not None:
                    action = card if keep_first else confirm_action(rules_obj)
        env.step(action)
        state.apply_action(action)
        if state.is_chance_node():  # Chkobba's first card decided: the rest of the deal
            card, keep = state.position.first
            seen["first"].append((card, keep))
            if env.game.redeals > before:  # the env threw the table in: deal the bridge that table
                k = players * rules_obj.hand_size - keep
                feed(sorted(stock[k : k + rules_obj.table_size - (not keep)]))
                seen["redeals"] += 1
            deal_now()
        seen["declared"] = max(seen["declared"], sum(1 for r in env.game.revealed if r))
    assert state.is_terminal()
    assert state.returns() == pytest.approx([env.rewards[a] for a in env.possible_agents])
    return seen


@pytest.mark.parametrize("action_mode", ["move", "select"])
@pytest.mark.parametrize("rules", DECLARING)
def test_a_hand_of_the_env_is_followed_by_the_bridge(rules, action_mode):
    """wikipedia (Cirulla): "Such bonuses must be declared before the player holding them has played
    their first card ... and the player making the announcement must reveal their hand and leave it
    turned up."

    The AEC env deals and plays random hands; the bridge is dealt the same cards through its chance
    nodes and takes the same action ids: at every step the same player moves with the same legal
    ids, every seat's observation tensor is the env's, and the returns are the env's hand rewards
    (declarations included). Some hands must declare, so the revealed planes are compared too.
    """
    seen = [follow_env(rules, action_mode, 2, seed) for seed in range(6)]
    assert sum(s["decisions"] for s in seen) > 0, "declaration decisions were followed"
    assert any(s["declared"] for s in seen), "a hand was declared and shown"


def test_cirulla_redeal_and_table_bonus_follow_the_env():
    """wikipedia (Cirulla): "If two or more aces are dealt to the table, the cards are collected,
    re-shuffled, and dealt again by the next dealer." and "If the four cards dealt by the dealer to the
    table at the start of a round add up to 15, the dealer captures them and marks a scopa."

    Hands where the env redealt (the bridge deals a thrown-in table first, and the next dealer deals)
    and where the dealer took the table are followed action by action.
    """
    assert follow_env("cirulla", "move", 3, 0, redeals=1)["redeals"] == 1
    assert follow_env("cirulla", "select", 2, 0, redeals=1)["redeals"] == 1
    for mode, players in (("move", 2), ("select", 4)):
        for seed in itertools.count():
            from scopa_env import scopa_v0

            env = scopa_v0.raw_env(num_players=players, rules="cirulla", episode="hand", action_mode=mode)
            env.reset(seed=seed)
            if any(env.game.table_bonus) and not env.game.redeals:
                assert follow_env("cirulla", mode, players, seed, redeals=0)["table_bonus"]
                break


@pytest.mark.parametrize("action_mode", ["move", "select"])
def test_a_chkobba_hand_of_the_env_is_followed_by_the_bridge(action_mode):
    """pagat (Chkobba): "So if the first player took the drawn card as a hand card, the dealer will give
    two more cards to the first player, three to each other player and deal four face up to the table."

    The env's hands (random first-card decisions, and hands where the env threw the table in after
    keeping or after tabling) are followed action by action: same player, legal ids, observations, returns.
    """
    seen = [follow_env("chkobba", action_mode, 2, seed) for seed in range(4)]
    assert {keep for s in seen for _, keep in s["first"]} == {True, False}
    assert follow_env("chkobba", action_mode, 4, 0)["first"]
    rules = get_rules("chkobba")
    judge = Game(2, rules, seed=0)
    from scopa_env import scopa_v0

    for keep in (True, False):
        env = scopa_v0.raw_env(num_players=2, rules="chkobba", episode="hand")
        for seed in itertools.count():
            env.reset(seed=seed)
            card, stock = cards_of(env.game.hands[0])[0], env.game.stock
            k = 2 * rules.hand_size - keep
            table = stock[k : k + rules.table_size - (not keep)] + ([] if keep else [card])
            if judge.needs_redeal(sum(1 << c for c in table)):
                break
        assert follow_env("chkobba", action_mode, 2, seed, keep_first=keep)["redeals"] >= 1


def test_a_chkobba_redeal_is_dealt_again_by_the_seat_the_engine_names():
    """pagat (Chkobba): "If there are three or four equal valued cards in the initial table layout the
    cards are gathered up, shuffled and dealt again." The bridge's thrown-in table is the engine's
    deal (``Game.from_order``, then the decision), so the hand is dealt again by the seat the engine
    names, also where the option string adds Cirulla's ``redeal_next_dealer``: the env's hand is
    followed action by action, the dealer included."""
    rules = get_rules("chkobba,redeal_next_dealer=true")
    judge = Game(2, rules, seed=0)
    from scopa_env import scopa_v0

    env = scopa_v0.raw_env(num_players=2, rules=rules, episode="hand")
    for seed in itertools.count():
        env.reset(seed=seed)
        card, stock = cards_of(env.game.hands[0])[0], env.game.stock
        table = stock[2 * rules.hand_size : 2 * rules.hand_size + rules.table_size - 1] + [card]
        if judge.needs_redeal(sum(1 << c for c in table)):
            break
    seen = follow_env("chkobba,redeal_next_dealer=true", "move", 2, seed, keep_first=False)
    assert seen["redeals"] >= 1, "a tabled first card's table was thrown in"
