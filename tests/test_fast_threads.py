"""The compiled core on several threads (issue 19): a batch's results for a seed are the
same whatever the thread count, because rows never share state."""

from __future__ import annotations

import numpy as np
import pytest

from scopa_env.fast import batch as batch_module
from scopa_env.fast.batch import BatchedScopa, check_threads, max_threads

OUTPUTS = (
    "obs",
    "action_mask",
    "legal_ids",
    "legal_count",
    "rewards",
    "terminated",
    "hand_ended",
    "hand_score",
    "winner",
    "final_scores",
    "final_obs",
    "final_obs_seat",
    "opponent_kind",
    "to_play",
)


def play(threads: int, action_mode: str, opponent, steps: int = 60, num_games: int = 37) -> list[dict]:
    """Every output after reset and each of ``steps`` random legal steps (actions drawn with a fixed seed)."""
    b = BatchedScopa(num_games, 2, action_mode=action_mode, opponent=opponent, episode="hand", threads=1)
    b.threads = threads  # also more threads than this machine has cores (the split must not matter)
    b.reset(np.arange(100, 100 + num_games))
    rng = np.random.default_rng(7)
    rows = np.arange(num_games)
    frames = []
    for _ in range(steps):
        frames.append({name: np.array(getattr(b, name)) for name in OUTPUTS})
        if action_mode == "select":
            actions = (rng.random((num_games, b.num_actions)) * b.action_mask).argmax(1)
        else:
            actions = b.legal_ids[rows, (rng.random(num_games) * b.legal_count).astype(np.int64)]
        b.step(actions)
    return frames


@pytest.mark.parametrize(
    ("action_mode", "opponent"), [("select", None), ("move", None), ("select", {"greedy": 0.5, "heuristic": 0.5})]
)
def test_same_results_whatever_the_thread_count(action_mode, opponent):
    one = play(1, action_mode, opponent)
    assert any(f["terminated"].any() for f in one), "the run should cross episode ends (auto-resets)"
    for threads in sorted({2, 3, max_threads()}):
        many = play(threads, action_mode, opponent)
        for step, (a, b) in enumerate(zip(one, many)):
            for name in OUTPUTS:
                assert np.array_equal(a[name], b[name]), f"{threads} threads: {name} differs at step {step}"


def test_a_bad_action_is_reported_for_the_first_bad_game_and_changes_nothing():
    b = BatchedScopa(9, 2, action_mode="select", threads=1)
    b.threads = 3
    b.reset(np.arange(9))
    before = np.array(b.obs)
    actions = b.action_mask.argmax(1)
    bad = actions.copy()
    bad[4] = bad[7] = np.flatnonzero(b.action_mask[4] == 0)[0]
    with pytest.raises(ValueError, match="^game 4: "):
        b.step(bad)
    assert np.array_equal(b.obs, before), "a rejected step must not move any game"
    b.step(actions)


def test_threads_setting():
    assert check_threads("all") == max_threads()
    assert check_threads(1) == 1 and check_threads("1") == 1
    for bad in (0, -1, max_threads() + 1, 1.5, True, "many"):
        with pytest.raises(ValueError, match="threads must be"):
            check_threads(bad)


def test_threads_default_from_the_environment(monkeypatch):
    monkeypatch.setenv(batch_module.THREADS_ENV, "all")
    assert BatchedScopa(4, 2).threads == max_threads()
    monkeypatch.setenv(batch_module.THREADS_ENV, "zero")
    with pytest.raises(ValueError, match="SCOPA_THREADS='zero'"):
        BatchedScopa(4, 2)
    monkeypatch.delenv(batch_module.THREADS_ENV)
    assert BatchedScopa(4, 2).threads == 1
