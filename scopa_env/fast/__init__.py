"""A compiled, batched Scopa core (numba) for search rollouts, evaluations and vectorized training.

The Python engine (:mod:`scopa_env.engine.game`) stays the source of truth; this package plays
the same game, checked move by move in ``tests/test_fast.py``. See ``docs/fast.md``.

* :class:`~scopa_env.fast.batch.BatchedScopa`: N games stepped together (reset, step,
  observations, masks, rewards, hand scores, compiled opponents);
* :func:`~scopa_env.fast.batch.playout`: whole games of compiled players in one call;
* :mod:`scopa_env.fast.vec_env`: a Gymnasium ``VectorEnv`` and a Stable-Baselines3
  ``VecEnv`` (with ``action_masks()``) for one learner against compiled opponents.

The names below load :mod:`~scopa_env.fast.batch` (and numba) on first use, so the ahead-of-time
observers (:mod:`~scopa_env.fast.aot`) load without them.
"""

__all__ = ["SCORE_FIELDS", "SUPPORTED_FIELDS", "BatchedScopa", "check_supported", "playout"]


def __getattr__(name: str):
    if name in __all__:
        from scopa_env.fast import batch

        return getattr(batch, name)
    raise AttributeError(f"module 'scopa_env.fast' has no attribute {name!r}")
