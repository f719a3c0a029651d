"""Benchmark suites: frozen, versioned sets of deals, one game each, and the ladder that rates on them.

A suite (``agents/suites/NAME.json``, shipped with the package) fixes everything a result
depends on but the agent:

============  ==========================================================================
field         meaning
============  ==========================================================================
name          versioned name, ``standard-2p-v1``; a change of any field below is a new version
rules         the rules preset (``scopa presets``)
num_players   the player count; the sides follow from the preset (teams or each for themselves)
target        the preset's target: an episode is a whole game to it (checked against the preset)
seed          master seed; deal ``i`` is ``Game(seed=agents.matches.deal_seed(seed, i))``
tiers         deal pairs per tier: ``full`` (10,000) and ``quick`` (its first few hundred)
rotations     games per deal: the agent plays every side once, the reference all the others
ladder        the reference agents (specs), each with its published rating or ``null``, and a
              trained one (``zoo:NAME``) with the SHA-256 of the weights it was rated with
anchor        the reference whose rating is fixed by definition (its number never moves)
fingerprints  per tier, the SHA-256 of the deals the engine makes for the tier's seeds
core_fingerprints  per tier, the same for the deals the compiled core makes (``null``
              where the core does not play the game)
============  ==========================================================================

The fingerprint (:func:`fingerprint`) hashes, for every deal of the tier, the first hand as
the engine deals it (dealer, redeals, every seat's hand, the table, the stock in order) and
the deck orders its generator holds for the next :data:`LATER_SHUFFLES` hands. If a change to
the engine, the presets or numpy would deal the suite differently, :func:`check` says so
(tests/test_suites.py runs it), so a result on ``-v1`` always means the same cards.
The compiled core shuffles the same seeds with its own generator, so the pairs a leaderboard
plays on it (:mod:`agents.compiled`) are other cards, frozen the same way by
:func:`core_fingerprint`.

Agents of the suite's ladder are built by spec (:func:`agents.registry.make_agent`); the zoo
agent of a game is named by its ``zoo:NAME`` spec, so this module needs nothing from training.
A spec names a network, not its weights, so the ladder pins them: a trained reference carries
``weights_sha256``, and :func:`agents.leaderboard.check_agents` refuses to play a suite whose
installed reference has other weights (a retrained zoo agent makes a new suite version, or the
published ratings would describe another player).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

from agents.matches import deal_seed
from scopa_env.engine.game import Game
from scopa_env.engine.rules import Rules, get_rules

SUITES_DIR = Path(__file__).resolve().parent / "suites"
"""Where the suite files are (package data)."""

TIERS = ("full", "quick")
"""Tier names; ``quick`` is the first deals of ``full``."""

LATER_SHUFFLES = 7
"""Deck orders after the first hand's deal that a deal's fingerprint covers (a game to 11 lasts about 8 hands)."""

FORMAT = 1
"""Version of the suite file format."""


@dataclass(frozen=True)
class LadderEntry:
    """A reference agent of a suite and its published rating (Elo points, ``None`` until measured)."""

    agent: str
    rating: float | None = None
    weights_sha256: str | None = None
    """For a trained reference, the SHA-256 of the weights its rating was measured with."""


@dataclass(frozen=True)
class Suite:
    """A frozen benchmark suite (see the module docstring for every field)."""

    name: str
    title: str
    rules: Rules
    num_players: int
    target: int
    seed: int
    tiers: dict[str, int]
    ladder: tuple[LadderEntry, ...]
    anchor: str
    fingerprints: dict[str, str]
    ratings_source: dict | None = None
    """Where the published ratings come from: the command, commit, date and tier that measured them."""
    core_fingerprints: dict[str, str | None] | None = None
    """Per tier, the SHA-256 of the deals the compiled core makes from the tier's seeds (``None``
    where the core does not play the suite's game): the cards of the pairs played on the core."""

    @property
    def num_sides(self) -> int:
        return self.rules.num_sides(self.num_players)

    @property
    def ladder_specs(self) -> list[str]:
        return [e.agent for e in self.ladder]

    def rating_of(self, agent: str) -> float | None:
        """The published rating of a reference (``None`` where not measured yet)."""
        for e in self.ladder:
            if e.agent == agent:
                return e.rating
        raise ValueError(f"{agent!r} is not on the ladder of {self.name}: {', '.join(self.ladder_specs)}")

    @property
    def anchor_rating(self) -> float:
        rating = self.rating_of(self.anchor)
        if rating is None:
            raise ValueError(f"suite {self.name}: the anchor {self.anchor!r} has no rating")
        return rating

    @property
    def rated(self) -> bool:
        """Whether every reference has a published rating (the suite's scale exists)."""
        return all(e.rating is not None for e in self.ladder)

    def deals(self, tier: str) -> int:
        """Deal pairs of ``tier``; an unknown tier lists the known ones."""
        if tier not in self.tiers:
            raise ValueError(f"suite {self.name} has no tier {tier!r}; its tiers: {', '.join(self.tiers)}")
        return self.tiers[tier]

    def deal_seeds(self, tier: str) -> list[int]:
        """The shuffle seed of every deal of ``tier``, in order."""
        return [deal_seed(self.seed, i) for i in range(self.deals(tier))]


def names() -> list[str]:
    """Names of the shipped suites (sorted)."""
    return sorted(p.stem for p in SUITES_DIR.glob("*.json"))


def load_suite(name: str) -> Suite:
    """The suite ``name``; an unknown name lists the known ones in one line."""
    known = names()
    if name not in known:
        raise ValueError(f"unknown suite {name!r}; known suites: {', '.join(known)}")
    return from_dict(json.loads((SUITES_DIR / f"{name}.json").read_text()))


def from_dict(data: dict) -> Suite:
    """A :class:`Suite` from the JSON object of a suite file."""
    if data.get("format") != FORMAT:
        raise ValueError(f"suite {data.get('name')!r}: file format {data.get('format')!r}, this kit reads {FORMAT}")
    return Suite(
        name=data["name"],
        title=data["title"],
        rules=get_rules(data["rules"]),
        num_players=int(data["num_players"]),
        target=int(data["target"]),
        seed=int(data["seed"]),
        tiers={t: int(data["tiers"][t]) for t in TIERS},
        ladder=tuple(LadderEntry(e["agent"], e["rating"], e.get("weights_sha256")) for e in data["ladder"]),
        anchor=data["anchor"],
        fingerprints=dict(data["fingerprints"]),
        ratings_source=data.get("ratings_source"),
        core_fingerprints=data.get("core_fingerprints"),
    )


def to_dict(suite: Suite) -> dict:
    """The JSON object of a suite file (the inverse of :func:`from_dict`)."""
    return {
        "format": FORMAT,
        "name": suite.name,
        "title": suite.title,
        "rules": suite.rules.name,
        "num_players": suite.num_players,
        "sides": suite.num_sides,
        "target": suite.target,
        "episode": f"whole games to {suite.target}",
        "seed": suite.seed,
        "deal_seeds": "deal i of a tier (i = 0, 1, ...) is shuffled by "
        "numpy.random.SeedSequence(seed, spawn_key=(i,)).generate_state(1)[0]; the quick tier is the full tier's first deals",
        "tiers": dict(suite.tiers),
        "rotations": f"{suite.num_sides} per deal: the agent plays each side once, the reference every other side",
        "anchor": suite.anchor,
        "ladder": [
            {"agent": e.agent, "rating": e.rating, **({"weights_sha256": e.weights_sha256} if e.weights_sha256 else {})}
            for e in suite.ladder
        ],
        "ratings_source": suite.ratings_source,
        "fingerprint_method": f"sha256 over every deal of the tier: the first hand as dealt and the next "
        f"{LATER_SHUFFLES} deck orders (agents/suites.py fingerprint)",
        "fingerprints": dict(suite.fingerprints),
        "core_fingerprint_method": "sha256 over every deal of the tier as the compiled core deals it from the "
        "same seed: the first hand (dealer, redeals, hands, table, deck order) and the state of the game's "
        "generator that shuffles the later hands (agents/suites.py core_fingerprint)",
        "core_fingerprints": None if suite.core_fingerprints is None else dict(suite.core_fingerprints),
    }


def deal_record(rules: Rules, num_players: int, seed: int) -> str:
    """One deal as text: the first hand as the engine deals it and the next hands' deck orders."""
    game = Game(num_players, rules, seed=seed, auto_next_hand=False)
    later = game.clone().rng  # the generator as the game will draw its later shuffles
    orders = [later.permutation(len(rules.deck)).tolist() for _ in range(LATER_SHUFFLES)]
    return json.dumps(
        {
            "dealer": game.dealer,
            "redeals": game.redeals,
            "hands": list(game.hands),
            "table": game.table,
            "stock": list(game.stock),
            "later": orders,
        },
        separators=(",", ":"),
    )


def fingerprint(rules: Rules, num_players: int, seed: int, deals: int) -> str:
    """SHA-256 (hex) of the first ``deals`` deals of a suite (:func:`deal_record`, one line each)."""
    digest = hashlib.sha256()
    for i in range(deals):
        digest.update(deal_record(rules, num_players, deal_seed(seed, i)).encode())
        digest.update(b"\n")
    return digest.hexdigest()


CORE_BATCH = 2048
"""Deals the compiled core deals at once for :func:`core_fingerprint`."""


def core_fingerprint(rules: Rules, num_players: int, seed: int, deals: int) -> str | None:
    """SHA-256 (hex) of the first ``deals`` deals as the compiled core deals them, or ``None``
    where the core does not play ``rules``.

    The core shuffles a deal's seed with its own generator, so its cards differ from the engine's
    (:func:`fingerprint`); a pair played on the core (:mod:`agents.compiled`) is played on these.
    Every deal contributes its first hand (dealer, redeals, every seat's hand, the table, the
    deck order) and the state of its generator after the deal, which shuffles the later hands.
    """
    import numpy as np

    from scopa_env.fast import BatchedScopa, layout
    from scopa_env.fast.batch import check_supported

    try:
        check_supported(rules, num_players)
    except ValueError:
        return None
    cols = [
        *range(layout.COL_HAND, layout.COL_HAND + num_players),
        layout.COL_TABLE,
        layout.COL_DEALER,
        layout.COL_REDEALS,
        layout.COL_STOCK_POS,
        *range(layout.COL_DECK, layout.COL_DECK + len(rules.deck)),
    ]
    digest = hashlib.sha256()
    for first in range(0, deals, CORE_BATCH):
        ids = range(first, min(first + CORE_BATCH, deals))
        batch = BatchedScopa(len(ids), num_players, rules, action_mode="move", episode="game", reward="game")
        batch.reset(np.asarray([deal_seed(seed, i) for i in ids], np.int64))
        digest.update(np.ascontiguousarray(batch._S[:, cols], dtype="<i8").tobytes())
        digest.update(np.ascontiguousarray(batch._rng, dtype="<u8").tobytes())
    return digest.hexdigest()


def check(suite: Suite, tiers: tuple[str, ...] = TIERS) -> list[str]:
    """What no longer matches the suite file (empty when the engine deals it as frozen)."""
    problems = []
    if suite.target != suite.rules.target:
        problems.append(
            f"{suite.name}: target {suite.target}, but preset {suite.rules.name!r} plays to {suite.rules.target}"
        )
    suite.rules.check_players(suite.num_players)
    if suite.tiers["quick"] > suite.tiers["full"]:
        problems.append(f"{suite.name}: the quick tier is longer than the full tier")
    if suite.anchor not in suite.ladder_specs:
        problems.append(f"{suite.name}: the anchor {suite.anchor!r} is not on the ladder")
    for tier in tiers:
        got = fingerprint(suite.rules, suite.num_players, suite.seed, suite.tiers[tier])
        if got != suite.fingerprints.get(tier):
            problems.append(
                f"{suite.name}: the engine deals the {tier} tier differently (fingerprint {got[:12]}..., "
                f"the suite says {str(suite.fingerprints.get(tier))[:12]}...)"
            )
        got = core_fingerprint(suite.rules, suite.num_players, suite.seed, suite.tiers[tier])
        want = (suite.core_fingerprints or {}).get(tier)
        if got != want:
            problems.append(
                f"{suite.name}: the compiled core deals the {tier} tier differently (fingerprint "
                f"{str(got)[:12]}..., the suite says {str(want)[:12]}...)"
            )
    return problems


def with_ratings(suite: Suite, ratings: dict[str, float], source: dict, weights: dict[str, str] | None = None) -> Suite:
    """The suite with its ladder's published ratings (the anchor's must be its own number) and, for
    each trained reference in ``weights``, the SHA-256 of the weights they were measured with."""
    if not math.isclose(ratings[suite.anchor], suite.anchor_rating, abs_tol=1e-9):
        raise ValueError(f"the anchor {suite.anchor} is rated {ratings[suite.anchor]}, not {suite.anchor_rating}")
    weights = weights or {}
    ladder = tuple(
        LadderEntry(e.agent, round(float(ratings[e.agent]), 1), weights.get(e.agent, e.weights_sha256))
        for e in suite.ladder
    )
    return Suite(**{**suite.__dict__, "ladder": ladder, "ratings_source": source})


def write_suite(suite: Suite, directory: Path = SUITES_DIR) -> Path:
    """Write ``NAME.json`` (indented, one key per line, for readable diffs)."""
    path = Path(directory) / f"{suite.name}.json"
    path.write_text(json.dumps(to_dict(suite), indent=2) + "\n")
    return path
