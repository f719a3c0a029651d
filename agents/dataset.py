"""Datasets of positions labelled by the compiled search: the Parquet writer and the numpy loader.

:func:`write_dataset` plays seeded games (every seat played by one agent spec, e.g. ``heuristic``)
and, at every decision, asks the compiled search (:class:`agents.fast_search.FastSearchAgent`,
e.g. ``fsearch:worlds=16``) for the value of each legal move. Each decision is one row of a
Parquet file (pyarrow, the ``data`` extra); per-move data are list columns, in the order of
:meth:`scopa_env.engine.game.PlayerView.legal_pairs` (the search's order). ``scopa dataset``
(:mod:`scopa_app.dataset`) is the command; docs/datasets.md is the page.

==================  =================================  ==================================================
column              type                               content
==================  =================================  ==================================================
``game``            int32                              game number in the file, 0 .. games-1
``deal_seed``       uint64                             the seed that shuffles every deal of that game
                                                       (``Game(seed=deal_seed)``; :func:`agents.matches.deal_seed`)
``hand``            int16                              hand number within the game (0 first)
``ply``             int16                              decision number within the hand (0 first)
``seat``            int8                               the seat to move
``side``            int8                               its side (teams with 4 or 6 players)
``obs``             fixed_size_list<float32>[O]        that seat's observation (:mod:`scopa_env.engine.observation`,
                                                       ``ObservationLayout.for_rules``; names in the metadata)
``move_id``         list<int32>                        each legal move's "move"-mode action id
                                                       (:mod:`scopa_env.engine.actions`)
``move_card``       list<int8>                         each legal move's played card id
``move_captured``   list<int64>                        each legal move's captured-cards bitmask (0: a trail)
``move_features``   list<fixed_size_list<float32>[F]>  each legal move's features (:data:`MOVE_FEATURES`)
``search_value``    list<float32>                      each legal move's search value: the mean hand-point
                                                       margin of the mover's side after it, over the worlds
``search_exact``    bool                               the search solved the position exactly
``played``          int16                              index (in the lists) of the move played
``outcome``         float32                            the hand's outcome for the mover's side: its hand
                                                       points minus the mean of the other sides', at the
                                                       hand's end (:func:`agents.stats.hand_margin`)
==================  =================================  ==================================================

The file's schema metadata (key ``scopa``, JSON) records the format version, the rules preset,
the player count, the agent and search specs, the seed, the games, the observation layout
(field names and slices) and the move feature names: :attr:`PositionDataset.meta`.

Seeds: game ``g`` deals with :func:`agents.matches.deal_seed` ``(seed, g)``; the agent at seat
``s`` is reset with :func:`agents.matches.agent_seed` ``(seed, g, 0, s)`` and the search with
``agent_seed(seed, g, 1, 0)``, so a seed gives the same table, row for row, on any machine (the
search's budget is worlds, never seconds; a ``time_limit`` option is refused).

When the agent spec is the search spec itself, the search plays: the move of best value, ties
to the first listed (one search per decision).

:func:`load_dataset` reads a file into a :class:`PositionDataset`, whose
:meth:`~PositionDataset.batches` yields dicts of numpy arrays with the per-move lists padded to
the batch's widest position and a ``move_mask``; ``train.dataset`` gives the same as torch tensors.
:func:`load_sample` opens the small sample shipped in ``agents/data/``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agents.base import Agent
from agents.fast_search import FastSearchAgent
from agents.heuristic import HeuristicAgent
from agents.matches import MAX_HANDS, agent_seed, deal_seed
from agents.registry import make_agent
from agents.stats import hand_margin
from scopa_env.engine import house_rules
from scopa_env.engine.cards import COINS, RANK_OF, SETTEBELLO, SUIT_OF
from scopa_env.engine.game import Game, PlayerView
from scopa_env.engine.observation import write_observation
from scopa_env.engine.rules import Rules, move_of
from scopa_env.engine.setup import GameSetup

FORMAT_VERSION = 1
"""Bumped whenever a column or feature changes meaning; :func:`load_dataset` refuses other versions."""
META_KEY = b"scopa"
"""Schema metadata key of the JSON description of a file."""
SAMPLE_PATH = Path(__file__).parent / "data" / "sample_standard_2p.parquet"
"""The shipped sample (:func:`load_sample`); docs/datasets.md says how it was made."""
MAX_GAMES = 1_000_000
"""Most games one file may hold."""

MOVE_FEATURES: tuple[tuple[str, str], ...] = (
    ("rank", "the played card's rank / the deck's highest rank"),
    ("coin", "1 if the played card is a coin"),
    ("captures", "cards captured / 10 (0: a trail)"),
    ("sweep", "1 if the move empties the table (a scopa-shaped capture)"),
    ("taken_coins", "coins the move puts in the pile (the played card too, when it captures) / 10"),
    ("taken_sevens", "sevens the move puts in the pile / 4"),
    ("settebello", "1 if the move puts the Seven of coins in the pile"),
    ("table_after_sum", "sum of the ranks left on the table / 40"),
    ("table_after_n", "cards left on the table / 10"),
    ("h_score", "the heuristic baseline's score of the move / 10 (agents.heuristic.HeuristicAgent.scores)"),
    ("h_gap", "(that score - the best legal move's score) / 10"),
    ("h_top", "1 if no legal move scores higher with the heuristic"),
)
"""Name and meaning of each entry of a ``move_features`` row, in order; every one reads only the mover's view."""
NUM_MOVE_FEATURES = len(MOVE_FEATURES)

SCALAR_COLUMNS = ("game", "deal_seed", "hand", "ply", "seat", "side", "search_exact", "played", "outcome")
"""Columns with one value per position."""
MOVE_COLUMNS = ("move_id", "move_card", "move_captured", "search_value")
"""List columns with one value per legal move (``move_features`` has a row per legal move)."""


def require_pyarrow():
    """``(pyarrow, pyarrow.parquet)``; a missing pyarrow is an ``ImportError`` naming the extra."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError('datasets need pyarrow: pip install -e ".[data]"') from None
    return pa, pq


def schema(obs_size: int):
    """The Arrow schema of a dataset whose observations are ``obs_size`` wide (the module table)."""
    pa, _ = require_pyarrow()
    return pa.schema(
        [
            ("game", pa.int32()),
            ("deal_seed", pa.uint64()),
            ("hand", pa.int16()),
            ("ply", pa.int16()),
            ("seat", pa.int8()),
            ("side", pa.int8()),
            ("obs", pa.list_(pa.float32(), obs_size)),
            ("move_id", pa.list_(pa.int32())),
            ("move_card", pa.list_(pa.int8())),
            ("move_captured", pa.list_(pa.int64())),
            ("move_features", pa.list_(pa.list_(pa.float32(), NUM_MOVE_FEATURES))),
            ("search_value", pa.list_(pa.float32())),
            ("search_exact", pa.bool_()),
            ("played", pa.int16()),
            ("outcome", pa.float32()),
        ]
    )


# --- writing ----------------------------------------------------------------------------------


def move_features(view: PlayerView, pairs: list[tuple[int, int]], h_scores) -> np.ndarray:
    """float32 ``(len(pairs), NUM_MOVE_FEATURES)``: the :data:`MOVE_FEATURES` of each legal pair of ``view``."""
    rules = view.rules
    top_rank = max(rules.ranks)
    out = np.zeros((len(pairs), NUM_MOVE_FEATURES), np.float32)
    h = np.asarray(h_scores, np.float64)
    best = h.max(initial=-np.inf)
    for k, (card, captured) in enumerate(pairs):
        taken = captured | (1 << card) if captured else 0
        after = view.table & ~captured if captured else view.table | (1 << card)
        taken_cards = [c for c in range(rules.num_card_ids) if taken >> c & 1]
        after_cards = [c for c in range(rules.num_card_ids) if after >> c & 1]
        out[k] = (
            RANK_OF[card] / top_rank,
            SUIT_OF[card] == COINS,
            captured.bit_count() / 10,
            bool(captured) and after == 0,
            sum(SUIT_OF[c] == COINS for c in taken_cards) / 10,
            sum(RANK_OF[c] == 7 for c in taken_cards) / 4,
            bool(taken >> SETTEBELLO & 1),
            sum(RANK_OF[c] for c in after_cards) / 40,
            len(after_cards) / 10,
            h[k] / 10,
            (h[k] - best) / 10,
            h[k] >= best - 1e-9,
        )
    return out


def search_agent(spec: str, seed=None) -> FastSearchAgent:
    """The labelling search of ``spec`` (an ``fsearch`` spec); anything else, or a time limit, is refused."""
    agent = make_agent(spec, seed=seed)
    if not isinstance(agent, FastSearchAgent):
        raise ValueError(f"the search must be an fsearch spec (e.g. fsearch:worlds=16), got {spec!r}")
    if agent.time_limit is not None:
        raise ValueError(f"the search {spec!r} has a time_limit: its labels would depend on the machine's speed")
    return agent


def check_game(setup: GameSetup) -> None:
    """Refuse, with one line, rules the compiled search does not value in full (declarations, Chkobba's
    first card) or the compiled core does not play, before any game is played."""
    from scopa_env.fast.batch import compiled_rules
    from scopa_env.fast.search import check_searchable

    rules, num_players = setup.rules, setup.num_players
    try:
        check_searchable(rules)
        compiled_rules(rules, num_players)
        house_rules.check_backend(rules.house_rules, "search", rules.name)  # declared by each plug-in
    except NotImplementedError as exc:
        raise ValueError(f"cannot label rules {rules.name!r} with {num_players} players: {exc}") from None
    _ = setup.moves  # "move" ids: a ValueError for rules too wide for "move" mode


class _Columns:
    """Rows gathered column by column: scalars in lists, per-move data flat with their lengths."""

    def __init__(self) -> None:
        self.scalars: dict[str, list] = {name: [] for name in (*SCALAR_COLUMNS[:-1],)}
        self.outcome: list[float] = []
        self.obs: list[np.ndarray] = []
        self.counts: list[int] = []
        self.moves: dict[str, list] = {name: [] for name in MOVE_COLUMNS}
        self.features: list[np.ndarray] = []

    def table(self, obs_size: int, metadata: dict):
        pa, _ = require_pyarrow()
        offsets = pa.array(np.concatenate([[0], np.cumsum(self.counts, dtype=np.int64)]).astype(np.int32))
        sch = schema(obs_size)

        def listed(name: str, values) -> object:
            return pa.ListArray.from_arrays(offsets, pa.array(values, sch.field(name).type.value_type))

        flat_obs = np.concatenate(self.obs) if self.obs else np.zeros(0, np.float32)
        feats = np.concatenate(self.features) if self.features else np.zeros((0, NUM_MOVE_FEATURES), np.float32)
        columns = {name: pa.array(self.scalars[name], sch.field(name).type) for name in SCALAR_COLUMNS[:-1]}
        columns["obs"] = pa.FixedSizeListArray.from_arrays(pa.array(flat_obs, pa.float32()), obs_size)
        for name in MOVE_COLUMNS:
            columns[name] = listed(name, np.asarray(self.moves[name]))
        columns["move_features"] = pa.ListArray.from_arrays(
            offsets, pa.FixedSizeListArray.from_arrays(pa.array(feats.reshape(-1), pa.float32()), NUM_MOVE_FEATURES)
        )
        columns["outcome"] = pa.array(self.outcome, pa.float32())
        arrays = [columns[f.name] for f in sch]
        return pa.Table.from_arrays(arrays, schema=sch.with_metadata({META_KEY: json.dumps(metadata).encode()}))


def _play_game(
    g: int,
    seed: int,
    setup: GameSetup,
    players: list[Agent] | None,
    search: FastSearchAgent,
    scorer: HeuristicAgent,
    cols: _Columns,
) -> int:
    """Play game ``g`` and add its decisions to ``cols``; returns the number of rows added."""
    dseed = deal_seed(seed, g)
    game = Game(setup.num_players, setup.rules, seed=dseed, auto_next_hand=False)
    if players is not None:
        for s, agent in enumerate(players):
            agent.reset(agent_seed(seed, g, 0, s))
    search.reset(agent_seed(seed, g, 1, 0))
    enum, layout = setup.moves, setup.layout
    added = 0
    while True:
        start = len(cols.outcome)
        ply = 0
        while not game.hand_over:
            seat = game.current
            view = game.view(seat)
            pairs = view.legal_pairs()
            labelled = search.move_values(view)
            if labelled is None:  # check_game refuses such rules; a position the search skips is a bug
                raise RuntimeError(f"the compiled search gave no values in game {g}, hand {game.hand_number}")
            values, exact = labelled
            if players is None:
                index = int(np.argmax(values))
            else:
                move = players[seat].act(view)
                index = pairs.index((move.card, move.mask))
            obs = write_observation(game, seat, layout, np.empty(layout.size, np.float32))
            for name, value in zip(
                SCALAR_COLUMNS[:-1],
                (g, dseed, game.hand_number, ply, seat, game.side_of[seat], exact, index),
                strict=True,
            ):
                cols.scalars[name].append(value)
            cols.obs.append(obs)
            cols.counts.append(len(pairs))
            cols.moves["move_id"].extend(enum.ids(pairs, view.table))
            cols.moves["move_card"].extend(c for c, _ in pairs)
            cols.moves["move_captured"].extend(m for _, m in pairs)
            cols.moves["search_value"].extend(values.tolist())
            cols.features.append(move_features(view, pairs, scorer.scores(view, pairs)))
            cols.outcome.append(np.nan)
            game.play(move_of(*pairs[index]))
            ply += 1
        score = game.hand_result.hand_score
        for r in range(start, len(cols.outcome)):
            side = cols.scalars["side"][r]
            cols.outcome[r] = hand_margin(score, side)
        added += len(cols.outcome) - start
        if game.winner is not None or game.hand_number >= MAX_HANDS:
            return added
        game.next_hand()


def check_options(
    games: int, agent: str, search: str, rules: str | Rules, players: int, seed: int
) -> tuple[GameSetup, FastSearchAgent, list[Agent] | None]:
    """Check :func:`build_table`'s arguments before any game (one-line ``ValueError``); returns the
    game (its :class:`~scopa_env.engine.setup.GameSetup`, in "move" mode), the labelling search and the
    seats' agents (``None``: the search plays)."""
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or not 1 <= games <= MAX_GAMES:
        raise ValueError(f"games must be an int in [1, {MAX_GAMES:,}], got {games!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    if isinstance(players, bool) or not isinstance(players, int):
        raise ValueError(f"players must be an int, got {players!r}")
    setup = GameSetup.of(rules, players)
    check_game(setup)
    labeller = search_agent(search)
    seats = (
        None
        if isinstance(agent, str) and agent.strip() == search.strip()
        else [make_agent(agent) for _ in range(players)]
    )
    for s in seats or ():
        check = getattr(s, "mismatch", None)
        problem = check(players, setup.rules) if callable(check) else None
        if problem:
            raise ValueError(f"agent {agent!r} cannot play this game: {problem}")
    return setup, labeller, seats


def build_table(
    games: int,
    agent: str = "heuristic",
    search: str = "fsearch:worlds=16",
    rules: str | Rules = "standard",
    players: int = 2,
    seed: int = 0,
    on_game: Callable[[int], None] | None = None,
):
    """Play ``games`` seeded games and return the labelled positions as a ``pyarrow.Table`` (see the module).

    Args:
        games: games to play, 1 .. :data:`MAX_GAMES`.
        agent: the agent spec of every seat (:func:`agents.registry.make_agent`); the search spec
            itself: the search plays.
        search: the labelling ``fsearch`` spec.
        rules, players: the game.
        seed: the master seed of the deals, the agents and the search.
        on_game: called with the rows of each game as it ends (a progress bar).

    Raises:
        ValueError: bad games count, unknown agent or rules, rules the compiled search cannot label.
    """
    setup, labeller, seats = check_options(games, agent, search, rules, players, seed)
    layout = setup.layout
    scorer = HeuristicAgent(seed=0)  # its scores are deterministic: the seed only breaks ties in act()
    cols = _Columns()
    for g in range(games):
        rows = _play_game(g, int(seed), setup, seats, labeller, scorer, cols)
        if on_game is not None:
            on_game(rows)
    meta = {
        "format_version": FORMAT_VERSION,
        "rules": setup.rules.name,
        "players": setup.num_players,
        "agent": agent,
        "search": search,
        "seed": int(seed),
        "games": int(games),
        "obs_size": layout.size,
        "obs_layout": {name: [sl.start, sl.stop] for name, sl in layout.slices.items()},
        "move_features": [name for name, _ in MOVE_FEATURES],
    }
    return cols.table(layout.size, meta)


def write_dataset(path: str | Path, games: int, **options) -> Path:
    """Play the games of :func:`build_table` (same arguments) and write them to the Parquet file ``path``.

    The file is written whole at the end (a failed run leaves no partial file); the same
    arguments write the same table. Returns the path.
    """
    _, pq = require_pyarrow()
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder; give a file name such as {path / 'positions.parquet'}")
    if not path.parent.is_dir():
        raise ValueError(f"cannot write {path}: folder {path.parent} does not exist")
    table = build_table(games, **options)
    tmp = path.with_name(path.name + ".part")
    try:
        pq.write_table(table, tmp, compression="zstd")
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ValueError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


# --- reading ----------------------------------------------------------------------------------


def _padded(column, width: int, fill, dtype) -> tuple[np.ndarray, np.ndarray]:
    """A list column as ``(B, width, ...)`` padded with ``fill``, and the lengths ``(B,)``."""
    pa, _ = require_pyarrow()
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    offsets = column.offsets.to_numpy()
    counts = np.diff(offsets)
    values = column.flatten()
    if pa.types.is_fixed_size_list(values.type):
        inner = values.type.list_size
        flat = values.flatten().to_numpy(zero_copy_only=False).reshape(-1, inner)
    else:
        inner = None
        flat = values.to_numpy(zero_copy_only=False)
    shape = (len(counts), width) + (() if inner is None else (inner,))
    out = np.full(shape, fill, dtype)
    rows = np.repeat(np.arange(len(counts)), counts)
    cols = np.arange(len(rows)) - np.repeat(offsets[:-1] - offsets[0], counts)
    out[rows, cols] = flat
    return out, counts


@dataclass
class PositionDataset:
    """A dataset file in memory: its Arrow ``table`` and its ``meta`` (the schema's JSON description)."""

    table: object
    """The ``pyarrow.Table`` (columns of the module table)."""
    meta: dict
    """Format version, rules, players, agent, search, seed, games, observation layout, move feature names."""

    def __len__(self) -> int:
        return self.table.num_rows

    def batch(self, rows: np.ndarray | None = None, width: int | None = None) -> dict[str, np.ndarray]:
        """The positions ``rows`` (all by default) as numpy arrays.

        Scalar columns are ``(B,)``; ``obs`` is float32 ``(B, obs_size)``; the per-move columns are
        padded to ``(B, M)`` (``move_features``: ``(B, M, F)``), ``M`` the widest position of the
        batch (or ``width``), with ``move_mask`` (B, M) true on real moves and ``num_moves`` (B,).
        Padding: ``move_id`` and ``move_card`` -1, ``move_captured`` 0, ``search_value`` 0, features 0.
        """
        table = self.table if rows is None else self.table.take(np.asarray(rows, np.int64))
        counts = np.diff(table.column("move_id").combine_chunks().offsets.to_numpy())
        m = int(counts.max(initial=0)) if width is None else width
        if counts.size and counts.max() > m:
            raise ValueError(f"width {m} is narrower than a position with {counts.max()} legal moves")
        out: dict[str, np.ndarray] = {}
        for name in SCALAR_COLUMNS:
            out[name] = np.array(table.column(name).to_numpy())  # owned and writable, as the padded ones
        obs = table.column("obs").combine_chunks()
        out["obs"] = np.array(obs.flatten().to_numpy(zero_copy_only=False)).reshape(len(table), -1)
        for name, fill, dtype in (
            ("move_id", -1, np.int64),
            ("move_card", -1, np.int64),
            ("move_captured", 0, np.int64),
            ("search_value", 0.0, np.float32),
            ("move_features", 0.0, np.float32),
        ):
            out[name], _ = _padded(table.column(name), m, fill, dtype)
        out["num_moves"] = counts.astype(np.int64)
        out["move_mask"] = np.arange(m)[None, :] < counts[:, None]
        return out

    def batches(
        self, batch_size: int = 256, shuffle: bool = False, seed: int | None = None
    ) -> Iterator[dict[str, np.ndarray]]:
        """Batches of :meth:`batch` over the whole file (in file order, or shuffled with ``seed``)."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
        order = np.arange(len(self))
        if shuffle:
            np.random.default_rng(seed).shuffle(order)
        for lo in range(0, len(order), batch_size):
            yield self.batch(order[lo : lo + batch_size])


def load_dataset(path: str | Path) -> PositionDataset:
    """Read a file written by :func:`write_dataset`; refuse one that is not a dataset of this format version."""
    _, pq = require_pyarrow()
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no dataset file at {path}")
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises its own error types for a file that is not Parquet
        raise ValueError(f"{path} is not a Parquet file: {exc}") from None
    raw = (table.schema.metadata or {}).get(META_KEY)
    if raw is None:
        raise ValueError(f"{path} is not a scopa dataset (no '{META_KEY.decode()}' metadata)")
    meta = json.loads(raw)
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{path} has dataset format version {meta.get('format_version')!r}, this kit reads {FORMAT_VERSION}"
        )
    return PositionDataset(table, meta)


def load_sample() -> PositionDataset:
    """The small sample shipped with the package (:data:`SAMPLE_PATH`; docs/datasets.md)."""
    return load_dataset(SAMPLE_PATH)
