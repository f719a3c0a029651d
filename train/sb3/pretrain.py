"""Warm start for PPO and DQN: behaviour cloning of a teacher, value included (``pretrain: heuristic``,
``pretrain: zoo:standard-2p``).

Before PPO (or DQN) starts, the learner's seat is played by a teacher against the run's opponents for
``pretrain_steps`` decisions; the policy is then fitted to the teacher's decisions
(cross-entropy over the legal actions, the same masks as in training) and the value head
to the returns those games earned (the run's reward, shaped when ``reward_shaping`` is on),
for ``pretrain_epochs`` passes. PPO then improves on the teacher against the opponents
instead of rediscovering from random play what a capture is worth.

The teacher is a compiled baseline (``greedy`` or ``heuristic``,
:meth:`scopa_env.fast.BatchedScopa.choose`) or a network of the zoo (``zoo:NAME``, a DMC
checkpoint of :mod:`train.zoo` trained for the same game, :class:`ZooTeacher`). A zoo network
values every "select" action from the learner's own position (its observation, the legal
moves of its hand and the table, and the compiled heuristic's score of each move when the
network takes them as features); its action is the best one, and with ``temperature`` the
policy is fitted to its whole choice, ``softmax(values / temperature)`` (distillation), which
carries more per position than its action alone. Positions with one legal action are left out.
Distilling ``zoo:standard-2p`` this way gives PPO a start that already beats the heuristic.

DQN's warm start (:func:`clone_q`) fits the Q-network instead: every legal action's value to
the zoo network's value of it (a compiled teacher: its action's value to the return that
followed), with the large-margin loss of DQfD (Hester et al. 2018) holding the teacher's
action above the others.

"select" mode only: the teacher's move ``(card, captured)`` becomes the actions the env
expects: the card, then the captured cards in ascending id order, then confirm while the
choice is still open (the env plays the move as soon as only one outcome is left).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np
import torch

from scopa_env.engine.setup import GameSetup

TEACHERS = ("greedy", "heuristic")
"""The compiled teachers; ``zoo:NAME`` names a network of the zoo."""
ZOO_PREFIX = "zoo:"

BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``policy(obs (B, size), masks (B, A) bool) -> actions (B,)``."""


@dataclass
class TeacherData:
    """Decisions of the teacher: observations, masks, actions and the returns that followed."""

    obs: np.ndarray  # float32 (T, size)
    masks: np.ndarray  # bool (T, A)
    actions: np.ndarray  # int64 (T,)
    returns: np.ndarray  # float32 (T,)
    values: np.ndarray | None = None  # float16 (T, A): a zoo teacher's value of every action, -inf: illegal


def teacher_problem(teacher: str, setup: GameSetup) -> str | None:
    """Why ``teacher`` cannot teach the game ``setup`` (``None`` when it can): an unknown name, or a zoo
    network trained for another game."""
    if teacher in TEACHERS:
        return None
    if not teacher.startswith(ZOO_PREFIX):
        return f"unknown teacher {teacher!r}: pretrain must be one of {list(TEACHERS)} or zoo:NAME (`scopa zoo` lists them)"
    from train import zoo

    name = teacher[len(ZOO_PREFIX) :]
    try:
        card = zoo.card(name)
    except ValueError as exc:
        return str(exc)
    if card.get("algo") != "dmc":
        return f"pretrain {teacher!r} is a {card.get('algo')} entry; a teacher must be a DMC network of the zoo"
    if card.get("num_players") != setup.num_players or card.get("rules") != setup.rules.name:
        return (
            f"pretrain {teacher!r} was trained for {card.get('num_players')} players with rules "
            f"{card.get('rules')!r}, not {setup.num_players} players with {setup.rules.name!r}"
        )
    return None


class _MoveBatch:
    """What :func:`scopa_env.fast.features.heuristic_move_scores` reads of a batch, with the legal
    move ids given: a "select"-mode batch has none of its own."""

    action_mode = "move"

    def __init__(self, batch, legal_ids: np.ndarray, legal_count: np.ndarray) -> None:
        self.rules, self._S, self._P, self._F = batch.rules, batch._S, batch._P, batch._F
        self.legal_ids, self.legal_count = legal_ids, legal_count


class ZooTeacher:
    """A zoo DMC network as a teacher on a "select"-mode batch of the compiled core.

    :meth:`action_values` gives, for every game, the network's value of each "select" action: the
    highest score of the legal moves that action leads to (choosing a card: the moves of that card;
    choosing captures: the moves of the pending card that extend the selection with that card, or,
    for confirm, the move captured so far). The legal moves come from the hand and table planes of
    the learner's observation, the network scores them from the observation of the card choice
    (the selection planes cleared), so it sees exactly what it would see as an agent; its move is
    the action with the highest value at every step.
    """

    def __init__(self, spec: str, num_players: int, rules) -> None:
        from scopa_env.fast.features import move_id_tables
        from train import zoo
        from train.dmc.agent import load_dmc_batch_policy

        setup = GameSetup.of(rules, num_players, "select")  # the learner's batch; the network's moves below
        problem = teacher_problem(spec, setup)
        if problem:
            raise ValueError(problem)
        self.rules = setup.rules
        self.policy, self.meta = load_dmc_batch_policy(zoo.checked_path(spec[len(ZOO_PREFIX) :]))
        self.moves = setup.with_modes(action_mode="move").moves
        self.move_cards, self.move_masks = move_id_tables(self.rules)
        self.num_actions = setup.num_actions
        self.confirm = setup.confirm
        layout = setup.layout
        self.hand, self.table = layout["hand"], layout["table"]
        self.select = [layout["select_card"], layout["select_captured"]]
        self.phase = layout["phase"].start
        self.bits = 1 << np.arange(self.rules.num_card_ids, dtype=np.int64)

    def legal_ids(self, hands: np.ndarray, tables: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
        """Padded move ids ``(N, width)`` (ascending, as the core lists them) and counts ``(N,)`` of the
        legal moves of every hand and table (bit masks)."""
        from scopa_env.engine.captures import legal_pairs

        n = len(hands)
        ids = np.full((n, width), -1, np.int64)
        count = np.zeros(n, np.int64)
        for i in range(n):
            got = sorted(self.moves.ids(legal_pairs(int(hands[i]), int(tables[i]), self.rules), int(tables[i])))
            ids[i, : len(got)] = got
            count[i] = len(got)
        return ids, count

    def action_values(self, batch, obs: np.ndarray) -> np.ndarray:
        """float32 ``(N, actions)``: the network's value of every "select" action of every game (see the
        class docstring); ``-inf`` for the actions no legal move leads to (the illegal ones)."""
        from scopa_env.fast.features import heuristic_move_scores
        from train.dmc.agent import flatten_legal

        n = len(obs)
        capture = obs[:, self.phase + 1] == 1
        hands = (obs[:, self.hand] > 0.5) @ self.bits
        tables = (obs[:, self.table] > 0.5) @ self.bits
        pending = np.argmax(obs[:, self.select[0]], axis=1)
        selected = (obs[:, self.select[1]] > 0.5) @ self.bits
        card_obs = obs.copy()
        card_obs[:, self.select[0]] = 0.0
        card_obs[:, self.select[1]] = 0.0
        card_obs[:, self.phase : self.phase + 2] = (1.0, 0.0)
        ids, count = self.legal_ids(hands, tables, batch.legal_width)
        rows, cols, mids = flatten_legal(ids, count)
        h = None
        if self.policy.features.heuristic:
            h = heuristic_move_scores(_MoveBatch(batch, ids, count))[rows, cols]
        net, features = self.policy.net, self.policy.features
        q = net.scores(card_obs, rows, features(card_obs, rows, mids, h))
        card = self.move_cards[mids]
        mask = np.where(self.move_masks[mids] < 0, tables[rows], self.move_masks[mids])  # a take-all id: the table
        sel = selected[rows]
        high = np.zeros(len(rows), np.int64)  # the cards below and at the highest selected one
        nz = sel > 0
        high[nz] = (np.int64(2) << np.floor(np.log2(sel[nz])).astype(np.int64)) - 1
        on = ~capture[rows] | ((card == pending[rows]) & ((mask & high) == sel))
        rest = mask ^ sel
        nxt = np.log2(np.maximum(rest & -rest, 1)).astype(np.int64)
        action = np.where(capture[rows], np.where(rest == 0, self.confirm, nxt), card)
        out = np.full((n, self.num_actions), -np.inf, np.float32)
        np.maximum.at(out, (rows[on], action[on]), q[on].astype(np.float32))
        return out


def collect_teacher(
    venv, teacher: str, steps: int, gamma: float, progress=None, actor: BatchPolicy | None = None
) -> TeacherData:
    """Play ``steps`` learner decisions in ``venv`` (a fast vec env, possibly wrapped, whose
    innermost env has ``.batch``), labelled with the ``teacher``'s actions.

    Without ``actor`` the teacher plays them. With ``actor`` (the clone so far: DAgger's
    later rounds) the actor plays and the teacher labels the positions the actor reaches:
    a card choice gets the teacher's card; a capture choice gets the teacher's next capture
    (a compiled teacher: only while the actor is still on the teacher's move, other capture
    choices are not kept; a zoo network values every capture choice). Returns are those of the
    games as played; a zoo teacher's data also holds its value of every action (``values``).
    """
    inner = venv
    while not hasattr(inner, "batch"):
        inner = inner.venv
    batch = inner.batch
    zoo_teacher = None
    if teacher.startswith(ZOO_PREFIX):
        zoo_teacher = ZooTeacher(teacher, batch.num_players, batch.rules)
    else:
        problem = teacher_problem(teacher, batch.setup)
        if problem:
            raise ValueError(problem)
    n = venv.num_envs
    phase = batch.layout["phase"].start + 1  # 1 while choosing captures
    obs = venv.reset()
    plans: list[list[int] | None] = [None] * n  # the teacher's remaining captures, None: off its move
    episode: list[list[tuple[int, float]]] = [[] for _ in range(n)]  # (index in data, reward) per row
    data_obs, data_masks, data_actions, data_kept, data_values = [], [], [], [], []
    returns = np.zeros(steps + n, np.float32)
    t = 0
    while t < steps:
        masks = np.asarray(venv.action_masks(), bool)
        if zoo_teacher is not None:
            values = zoo_teacher.action_values(batch, obs)
            labels = np.argmax(values, axis=1)
            data_values.append(values.astype(np.float16))
        else:
            labels = _compiled_labels(batch, teacher, obs, phase, plans)
        bad = np.flatnonzero(~masks[np.arange(n), labels] & (labels >= 0))
        if bad.size:
            raise RuntimeError(f"teacher action {labels[bad[0]]} is not legal in game {bad[0]}")
        actions = labels if actor is None else np.asarray(actor(obs.copy(), masks), np.int64)
        for i in range(n):  # follow the plan while the actions agree with it
            if plans[i] is not None and actions[i] != labels[i]:
                plans[i] = None
            elif plans[i] and obs[i, phase] == 1:
                plans[i].pop(0)
        data_obs.append(obs.copy())
        data_masks.append(masks.copy())
        data_actions.append(labels)
        data_kept.append((labels >= 0) & (masks.sum(axis=1) > 1))  # a forced action teaches nothing
        obs, rewards, dones, _ = venv.step(actions)
        for i in range(n):
            episode[i].append((t + i, float(rewards[i])))
            if dones[i]:
                _fill_returns(returns, episode[i], gamma)
                episode[i] = []
        t += n
        if progress is not None:
            progress(n)
    # Decisions of unfinished episodes keep the return so far as their target (a small bias at the end).
    for rows in episode:
        _fill_returns(returns, rows, gamma)
    keep = np.concatenate(data_kept)
    return TeacherData(
        np.concatenate(data_obs)[keep],
        np.concatenate(data_masks)[keep],
        np.concatenate(data_actions)[keep],
        returns[:t][keep],
        np.concatenate(data_values)[keep] if data_values else None,
    )


def _compiled_labels(batch, teacher: str, obs: np.ndarray, phase: int, plans: list) -> np.ndarray:
    """A compiled teacher's action in every game (-1: a capture choice off its move); starts a plan
    (its move's captures, ascending) at every card choice."""
    choices = batch.choose(teacher)
    labels = np.full(len(obs), -1, np.int64)
    for i in range(len(obs)):
        if obs[i, phase] == 0:  # choosing a card: the teacher's move from here
            card, captured = choices[i]
            plans[i] = [b for b in range(batch.rules.num_card_ids) if captured >> b & 1]
            labels[i] = card
        elif plans[i] is not None:
            labels[i] = plans[i][0] if plans[i] else batch.confirm
    return labels


def _fill_returns(returns: np.ndarray, rows: list[tuple[int, float]], gamma: float) -> None:
    g = 0.0
    for k, r in reversed(rows):
        g = r + gamma * g
        returns[k] = g


def merge(a: TeacherData, b: TeacherData) -> TeacherData:
    """Both datasets in one (DAgger's aggregation)."""
    parts = [(getattr(a, f.name), getattr(b, f.name)) for f in fields(TeacherData)]
    return TeacherData(*(None if x is None or y is None else np.concatenate([x, y]) for x, y in parts))


def clone(
    policy,
    data: TeacherData,
    epochs: int,
    batch_size: int,
    vf_coef: float,
    seed: int,
    lr: float = 1e-3,
    temperature: float = 0.0,
) -> dict[str, float]:
    """Fit an SB3 (maskable) actor-critic ``policy`` to the teacher's actions and returns.

    With ``temperature > 0`` and a zoo teacher's ``values``, the policy is fitted to the teacher's
    whole choice (distillation: cross-entropy to ``softmax(values / temperature)`` over the legal
    actions) instead of its action alone.

    Returns the last epoch's mean losses and the share of the teacher's actions the policy's
    most likely action matches.
    """
    rng = np.random.default_rng(seed)
    obs = torch.as_tensor(data.obs)
    masks = torch.as_tensor(data.masks)
    actions = torch.as_tensor(data.actions)
    returns = torch.as_tensor(data.returns)
    soft = temperature > 0 and data.values is not None
    policy.set_training_mode(True)
    for group in policy.optimizer.param_groups:  # PPO sets its own learning rate again at each update
        group["lr"] = lr
    stats: dict[str, float] = {}
    for _ in range(epochs):
        order = rng.permutation(len(actions))
        sums = {"bc_loss": 0.0, "value_loss": 0.0, "agreement": 0.0}
        for start in range(0, len(order), batch_size):
            idx = torch.as_tensor(order[start : start + batch_size])
            log_probs = policy.get_distribution(obs[idx], action_masks=masks[idx].numpy()).distribution.logits
            values = policy.predict_values(obs[idx])
            if soft:
                target = torch.softmax(torch.as_tensor(data.values[idx.numpy()], dtype=torch.float32) / temperature, 1)
                bc_loss = -(target * log_probs).sum(1).mean()
            else:
                bc_loss = -log_probs.gather(1, actions[idx].unsqueeze(1)).mean()
            value_loss = torch.nn.functional.mse_loss(values.flatten(), returns[idx])
            loss = bc_loss + vf_coef * value_loss
            policy.optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            policy.optimizer.step()
            agree = (log_probs.detach().argmax(1) == actions[idx]).float().mean()
            k = len(idx)
            sums["bc_loss"] += bc_loss.item() * k
            sums["value_loss"] += value_loss.item() * k
            sums["agreement"] += agree.item() * k
        stats = {key: v / len(order) for key, v in sums.items()}
    policy.set_training_mode(False)
    return stats


def clone_q(
    q_net,
    data: TeacherData,
    epochs: int,
    batch_size: int,
    seed: int,
    lr: float = 1e-3,
    margin: float = 0.1,
    progress=None,
) -> dict[str, float]:
    """Fit a DQN Q-network to the teacher (DQN's warm start).

    A zoo teacher's values are the returns its moves lead to, in the env's units (the hand-point
    margin), so every legal action's Q-value is regressed on the teacher's value of it; a compiled
    teacher has none, so the teacher's action's Q-value is regressed on the return that followed.
    Both add the large-margin loss of DQfD (Hester et al. 2018): ``max_a [Q(s, a) + margin * (a !=
    a_teacher)] - Q(s, a_teacher)`` over the legal actions, which holds the teacher's action on top.

    Returns the last epoch's mean losses and the share of the teacher's actions the greedy action matches.
    """
    import torch.nn.functional as F

    rng = np.random.default_rng(seed)
    obs = torch.as_tensor(data.obs)
    masks = torch.as_tensor(data.masks)
    actions = torch.as_tensor(data.actions)
    returns = torch.as_tensor(data.returns)
    optimizer = torch.optim.Adam(q_net.parameters(), lr=lr)
    q_net.train()
    stats: dict[str, float] = {}
    for _ in range(epochs):
        order = rng.permutation(len(actions))
        sums = {"q_loss": 0.0, "margin_loss": 0.0, "agreement": 0.0}
        for start in range(0, len(order), batch_size):
            idx = torch.as_tensor(order[start : start + batch_size])
            q = q_net(obs[idx])
            mask, act = masks[idx], actions[idx].unsqueeze(1)
            q_a = q.gather(1, act).squeeze(1)
            if data.values is not None:
                target = torch.as_tensor(data.values[idx.numpy()], dtype=torch.float32)
                q_loss = F.smooth_l1_loss(q[mask], target[mask])
            else:
                q_loss = F.smooth_l1_loss(q_a, returns[idx])
            bonus = torch.full_like(q, margin).scatter(1, act, 0.0)
            margin_loss = ((q + bonus).masked_fill(~mask, -torch.inf).max(1).values - q_a).mean()
            loss = q_loss + margin_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(q_net.parameters(), 10.0)
            optimizer.step()
            agree = (q.detach().masked_fill(~mask, -torch.inf).argmax(1) == act.squeeze(1)).float().mean()
            k = len(idx)
            sums["q_loss"] += q_loss.item() * k
            sums["margin_loss"] += margin_loss.item() * k
            sums["agreement"] += agree.item() * k
            if progress is not None:
                progress(k)
        stats = {key: v / len(order) for key, v in sums.items()}
    q_net.eval()
    return stats
