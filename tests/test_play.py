"""The terminal game (``scopa play``), driven by scripted input: no TTY needed."""

from __future__ import annotations

import pytest

from agents.random_agent import RandomAgent
from scopa_app.cli import build_parser, main
from scopa_app.play import TerminalGame, breakdown, explain_move, format_breakdown, new_terminal_game
from scopa_env.engine.cards import parse_card, parse_cards
from scopa_env.engine.game import Game, HandResult
from scopa_env.engine.rules import STANDARD, get_rules
from scopa_env.engine.scoring import score_hand

# A fixed position, player_0 to move: two Sevens on the table, so 7d and Kd each have
# two ways to capture, and 2d cannot capture anything.
HAND_0 = parse_cards("7d 2d Kd")
HAND_1 = parse_cards("Ac Ab 6b")
TABLE = parse_cards("7c 7s 3s 4b")


def fixed_game() -> Game:
    used = set(HAND_0 + HAND_1 + TABLE)
    stock = [c for c in STANDARD.deck if c not in used]
    return Game.from_deal([HAND_0, HAND_1], TABLE, stock, dealer=1, seed=0, auto_next_hand=False)


class Script:
    """Answers prompts from a list; raises EOFError when it runs out (the game then quits)."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.answers:
            raise EOFError
        return self.answers.pop(0)


def run_script(answers, game: Game | None = None) -> tuple[int, str, TerminalGame]:
    out: list[str] = []
    game = game or fixed_game()
    tg = TerminalGame(game, {1: RandomAgent(seed=0)}, {1: "random"}, input_fn=Script(answers), output_fn=out.append)
    code = tg.run()
    return code, "\n".join(out), tg


@pytest.mark.parametrize(
    "move, expected",
    [
        ("7d 7c", None),
        ("2d", None),
        ("Kd 7s 3s", None),
        ("5c", "is not in your hand"),
        ("7d", "cannot be trailed"),
        ("7d 3s 4b", "must take that card, not several"),
        ("Kd 7c 4b", "add up to 11, but your Kd is worth 10"),
        ("2d 3s", "cannot take anything from the table"),
        ("7d 5b", "not on the table"),
    ],
)
def test_explain_move(move, expected):
    """web-game-help.txt: "If it is possible to play your card on a single table card, you may not play
    that same card on multiple table cards"; "If you can't play a trick, you must ... trail"."""
    view = fixed_game().view(0)
    card, *captured = parse_cards(move)
    why = explain_move(view, card, captured)
    if expected is None:
        assert why is None, f"{move} is legal but was explained as: {why}"
    else:
        assert why is not None and expected in why, f"{move}: expected a reason with {expected!r}, got {why!r}"


def test_explain_move_not_your_turn():
    view = fixed_game().view(1)
    assert "player_0's turn" in explain_move(view, parse_card("Ac"), [])


def test_invalid_input_reprompts_with_reasons_then_plays():
    answers = [
        "?",  # legal moves
        "9x",  # not a card
        "5c",  # not in hand
        "7",  # out of range index
        "7d 3s 4b",  # single-card priority
        "Kd",  # two options: 7c+3s or 7s+3s
        "9",  # out of range choice
        "b",  # back to the card prompt
        "7d",  # two options: 7c or 7s
        "2",  # takes 7s
    ]
    code, text, tg = run_script(answers)
    assert code == 130, "running out of input leaves the game with 130"
    assert "Legal moves" in text and "m1) 2d" not in text, f"'?' lists the legal moves:\n{text}"
    assert "trail 2d" in text and "7d takes 7c" in text, "the listing names trails and captures"
    assert "unknown suit 'x'" in text, "a bad card name is explained"
    assert "5c is not in your hand" in text, "a card not held is explained"
    assert "you hold 3 cards: choose 1..3" in text, "a hand index out of range is explained"
    assert "must take that card, not several" in text, "single-card priority is explained"
    assert "choose a number from 1 to 2" in text, "a bad option number re-prompts"
    assert "You play 7d and take 7s" in text, f"the chosen capture is played:\n{text}"
    assert tg.game.history[0] == (0, parse_card("7d"), 1 << parse_card("7s")), "the engine got the chosen move"
    assert "Game abandoned" in text


def test_whole_move_and_move_number():
    code, text, tg = run_script(["Kd 7c 3s"])
    assert "You play Kd and take 7c 3s" in text
    code, text, tg = run_script(["m1"])
    first_legal = fixed_game().legal_moves()[0]
    assert tg.game.history[0][1] == first_legal.card, "m1 plays the first listed legal move"
    _, text, _ = run_script(["m99"])
    assert "choose m1..m" in text


def test_ctrl_c_exits_cleanly():
    def interrupt(prompt):
        raise KeyboardInterrupt

    out: list[str] = []
    tg = TerminalGame(fixed_game(), {1: RandomAgent(seed=0)}, input_fn=interrupt, output_fn=out.append)
    assert tg.run() == 130
    assert "Game abandoned" in out[-1]


def test_quit_command():
    code, text, _ = run_script(["q"])
    assert code == 0 and "Game abandoned" in text, "q is a normal exit (0), unlike Ctrl-C (130)"


def answer_first_legal(prompt: str) -> str:
    if prompt.startswith("Press Enter"):
        return ""
    if prompt.startswith("Your move"):
        return "m1"
    return "1"


@pytest.mark.parametrize("players", [2, 3, 4])
def test_full_game_to_the_end(players):
    """A whole game with scripted input: every hand ends with the breakdown and the running score."""
    out: list[str] = []
    tg = new_terminal_game(
        players=players, opponent="random", seed=7, input_fn=answer_first_legal, output_fn=out.append
    )
    code = tg.run()
    text = "\n".join(out)
    assert code == 0, f"the game ends normally:\n{text[-2000:]}"
    assert tg.game.winner is not None
    hands = tg.game.hand_number
    assert text.count("=== Hand ") == hands, "every hand end is shown"
    for label in ("Cards", "Coins", "Settebello", "Primiera", "Scope", "Hand points", "Game score"):
        assert text.count(label) >= hands, f"the breakdown has a {label} row for each hand"
    assert "wins the game" in text or "You win the game" in text


def test_breakdown_shows_each_sides_primiera_value():
    # Side 0 holds a 7 of every suit (primiera 84); side 1 lacks batons (no primiera).
    piles = [parse_cards("7d 7c 7s 7b Ad 2d"), parse_cards("6d 6c 6s Kd")]
    score = score_hand(piles, [1, 0])
    result = HandResult(score, piles, [1, 0], [], None)
    rows = {r.key: r for r in breakdown(result)}
    assert rows["primiera"].shown == ["84", "-"], rows["primiera"]
    assert rows["primiera"].points == [1, 0]
    assert rows["settebello"].shown == ["yes", ""]
    assert rows["scope"].points == [1, 0]
    assert rows["total"].points == [score[0]["total"], score[1]["total"]]
    text = format_breakdown(result, ["You", "player_1"])
    assert "84 [+1]" in text and "Primiera" in text


def test_breakdown_lists_variant_extras():
    piles = [parse_cards("7d 7c 7s 7b"), parse_cards("6d 6c")]
    score = score_hand(piles, [0, 0])
    score[0]["re_bello"] = 1  # a variant category the standard game does not have
    score[1]["re_bello"] = 0
    rows = [r.key for r in breakdown(HandResult(score, piles, [0, 0], [], None))]
    assert "re_bello" in rows and rows[-1] == "total", rows


def test_cli_registers_play(monkeypatch, capsys):
    args = build_parser().parse_args(["play", "--opponent", "greedy", "--players", "2", "--seed", "1"])
    assert args.opponent == "greedy" and args.func is not None
    answers = iter(["?", "q"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert main(["play", "--opponent", "random", "--seed", "1", "--no-color"]) == 0, "q exits with 0"
    out = capsys.readouterr().out
    assert "Legal moves" in out and "Game abandoned" in out


def test_unknown_opponent_is_a_readable_error(capsys):
    assert main(["play", "--opponent", "nobody"]) == 2
    assert "unknown agent" in capsys.readouterr().err


def test_colour_output_marks_suits_and_still_plays():
    out: list[str] = []
    tg = TerminalGame(
        fixed_game(),
        {1: RandomAgent(seed=0)},
        {1: "random"},
        input_fn=Script(["7d 7c"]),
        output_fn=out.append,
        color=True,
    )
    assert tg.run() == 130
    text = "\n".join(out)
    assert "\x1b[33m7d" in text, "coins are coloured"
    assert "You play" in text and "take" in text


def test_first_card_decision_in_the_terminal():
    """Chkobba: the drawn first card is kept or tabled; an agent's kept card is not named."""
    deck = list(get_rules("chkobba").deck)
    first, stock = deck[0], deck[1:]
    game = Game.from_deal(
        [[first], []], [], stock, dealer=1, rules="chkobba", seed=0, auto_next_hand=False, deciding=True
    )
    code, text, tg = run_script(["1", "2"], game)
    assert "You drew the first card" in text
    assert "1) put Ad on the table  2) keep Ad" in text, text
    assert "You keep the first card, Ad" in text
    assert tg.game.hands[0] >> first & 1 and tg.game.hands[0].bit_count() == 3

    game = Game.from_deal(
        [[], [first]], [], stock, dealer=0, rules="chkobba", seed=0, auto_next_hand=False, deciding=True
    )

    class Keeper(RandomAgent):
        def act(self, view):
            return view.legal_moves()[1]

    out: list[str] = []
    TerminalGame(game, {1: Keeper()}, {1: "keeper"}, input_fn=Script([]), output_fn=out.append).run()
    line = next(x for x in out if "keeps the first card" in x)
    assert "Ad" not in line, f"the kept card stays hidden: {line}"


def test_ace_takes_itself_in_the_terminal():
    rules = get_rules("scopa_d_assi_options")
    hand0, hand1, pile = parse_cards("Ad 2d 3d"), parse_cards("Ac 2c 3c"), parse_cards("Kd Kc Ks Kb")
    stock = [c for c in rules.deck if c not in hand0 + hand1 + pile]
    game = Game.from_deal(
        [hand0, hand1], [], stock, dealer=1, rules=rules, seed=0, piles=[pile, []], auto_next_hand=False
    )
    code, text, tg = run_script(["?", "Ad"], game)
    assert "Ad takes itself" in text, text
    assert "You play Ad, which takes itself" in text
    assert tg.game.piles[0] >> parse_card("Ad") & 1


@pytest.mark.parametrize(
    "rules, players",
    [("chkobba", 2), ("scopa_d_assi_options", 2), ("scopone_scientifico", 4), ("hurrikan", 2), ("booklet", 3)],
)
def test_variant_games_to_the_end(rules, players):
    out: list[str] = []
    tg = new_terminal_game(
        rules=rules, players=players, opponent="random", seed=5, input_fn=answer_first_legal, output_fn=out.append
    )
    assert tg.run() == 0, "\n".join(out)[-2000:]
    assert tg.game.winner is not None


def test_terminal_hints_and_help():
    hand0, hand1, table = parse_cards("7d 2d Kd"), parse_cards("Ac Ab 6b"), parse_cards("7c 7s 3s 4b")
    stock = [c for c in STANDARD.deck if c not in set(hand0 + hand1 + table)]
    game = Game.from_deal([hand0, hand1], table, stock, dealer=1, seed=0, auto_next_hand=False)
    answers, out = iter(["2d 3s", "h", "q"]), []
    tg = TerminalGame(game, {1: RandomAgent(seed=0)}, input_fn=lambda p: next(answers), output_fn=out.append)
    assert tg.run() == 0, "q leaves with exit status 0"
    text = "\n".join(out)
    assert "cannot take anything from the table; trail it: type the card alone" in text, text
    assert "empty slot" not in text, "the terminal has no empty slot"
    assert "J, Q, K" in text and "8, 9, 10" in text, "the help gives the figures' values"
