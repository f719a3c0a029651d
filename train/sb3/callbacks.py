"""Logging helpers shared by PPO and DQN, and the SB3 callback that drives :class:`train.run.Run`.

* :class:`NamespacedTensorBoard`: SB3's TensorBoard writer with our chart names
  (``train/`` -> ``losses/``, ``rollout/`` and ``time/`` -> ``charts/``).
* :class:`HandStats`: per-hand category rates of the learner during training (from the
  env's end-of-episode infos), logged as ``charts/learner_<category>``.
* :class:`RunCallback`: SB3 callback (one hook, ``_on_step``) that calls ``Run.on_step``.
"""

from __future__ import annotations

from typing import Any

from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import KVWriter, Logger, TensorBoardOutputFormat

RENAMES = {"train/": "losses/", "rollout/": "charts/", "time/": "charts/"}


class NamespacedTensorBoard(KVWriter):
    """TensorBoard output of SB3's logger with the kit's namespaces."""

    def __init__(self, folder: str) -> None:
        self.inner = TensorBoardOutputFormat(folder)

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, Any], step: int = 0) -> None:
        def rename(k: str) -> str:
            for old, new in RENAMES.items():
                if k.startswith(old):
                    return new + k[len(old) :]
            return k

        self.inner.write(
            {rename(k): v for k, v in key_values.items()}, {rename(k): v for k, v in key_excluded.items()}, step
        )

    def close(self) -> None:
        self.inner.close()


def make_logger(folder: str) -> Logger:
    return Logger(folder=folder, output_formats=[NamespacedTensorBoard(folder)])


class HandStats:
    """Running per-hand rates of the learner's side: primiera, settebello, coins, cards, scope."""

    CATEGORIES = ("primiera", "settebello", "coins", "cards", "scope")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.hands = 0
        self.sums = dict.fromkeys(self.CATEGORIES, 0.0)
        self.margin = 0.0

    def add_info(self, info: dict) -> None:
        scores = info.get("hand_scores")
        if scores is None:
            return
        side = info["side"]
        for hand in scores:
            self.hands += 1
            row = hand[side]
            for cat in self.CATEGORIES:
                self.sums[cat] += row["num_scope"] if cat == "scope" else row[cat]
            others = [r["total"] for s, r in enumerate(hand) if s != side]
            self.margin += row["total"] - sum(others) / len(others)

    def record(self, record) -> None:
        """Log the rates with ``record(key, value)`` and start again."""
        if self.hands:
            for cat, total in self.sums.items():
                record(f"charts/learner_{cat}", total / self.hands)
            record("charts/hand_margin", self.margin / self.hands)
        self.reset()


class RunCallback(BaseCallback):
    """Drives the run folder from inside ``MaskablePPO.learn``.

    Args:
        run: the :class:`train.run.Run`.
        learner: the object :class:`~train.run.Run` sees (policy, save, env_method).
    """

    def __init__(self, run, learner) -> None:
        super().__init__()
        self.run = run
        self.learner = learner
        self.stats = HandStats()

    def _on_step(self) -> bool:
        for info in self.locals.get("infos", ()):
            self.stats.add_info(info)
        self.run.log_speed(self.num_timesteps)
        self.run.on_step(self.num_timesteps, self.learner)
        return True

    def _on_rollout_end(self) -> None:
        self.stats.record(self.logger.record)
